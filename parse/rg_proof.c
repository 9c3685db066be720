/* SPDX-License-Identifier: MIT */
/*
 * The job secret's proofs (rg_parse.h), for every handshake that proves it: the reference
 * transport's side channel and the runners' clock exchange. One layout, so the two cannot
 * drift apart in what they bind; each passes labels of its own, so a proof made for one
 * handshake (or one direction) is no proof in another. Linked by the transport and the
 * runner, never by the shim, which proves nothing and links no libcrypto.
 */
#include "rg_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>
#include <sys/random.h>

void rg_proof_mac(const char *secret, const char *label, const uint8_t *a, const uint8_t *b,
                  int rank, int size, int version, uint8_t *mac)
{
    uint8_t msg[RG_PROOF_LABEL_MAX + 2 * RG_PROOF_NONCE + 10];
    size_t n = strnlen(label, RG_PROOF_LABEL_MAX);
    uint32_t r = htonl((uint32_t)rank), z = htonl((uint32_t)size);
    uint16_t v = htons((uint16_t)version);
    memcpy(msg, label, n);
    memcpy(msg + n, a, RG_PROOF_NONCE);
    memcpy(msg + n + RG_PROOF_NONCE, b, RG_PROOF_NONCE);
    memcpy(msg + n + 2 * RG_PROOF_NONCE, &r, 4);
    memcpy(msg + n + 2 * RG_PROOF_NONCE + 4, &z, 4);
    memcpy(msg + n + 2 * RG_PROOF_NONCE + 8, &v, 2);
    unsigned int len = RG_PROOF_MAC;
    HMAC(EVP_sha256(), secret, (int)strlen(secret), msg, n + 2 * RG_PROOF_NONCE + 10, mac, &len);
}

int rg_proof_random(uint8_t *p, size_t n)
{
    while (n) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}
