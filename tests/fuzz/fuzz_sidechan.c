/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the side channel's frame decoder and handshake (transport/rg_sc_wire.c,
 * rg_sc_join.c, rg_sidechan.c), fed the bytes a hostile process could put on the wire. The
 * first byte picks who sends:
 *   0  a stranger, to rank 0, before it proved the job secret (raw bytes);
 *   1  the same, but the hello's proof is made right over whatever fields the bytes hold, as
 *      from a process that knows the secret and lies about its rank or size;
 *   2  ranks 1 and 2 (secret proven) to rank 0 of 3, in its progress check and an allgather;
 *   3  rank 0 (secret proven) to rank 1 of 3, the same;
 *   4  rank 0 to a rank still proving itself (the challenge and the welcome).
 * Every error must be one printable line; no crash, no leak, no read past a frame.
 *
 * The files under test are included, not linked, to reach their static parts; a socketpair
 * holds the bytes, closed behind them, so each input ends in EOF and never waits.
 */
#include <stdio.h>
#undef stderr
#define stderr rg_fuzz_quiet /* a stranger's refusal is logged: not to the fuzzer's log */
static FILE *rg_fuzz_quiet;

#include "../../transport/rg_sc_wire.c"
#include "../../transport/rg_sc_join.c"
#include "../../transport/rg_sidechan.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_secret[] = "fuzz-secret";

static void check_msg(const struct rg_err *e)
{
    if (!e->msg[0])
        abort();
    for (const char *p = e->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            abort();
}

/* One end holding the bytes, the writer closed behind them. Returns the reader, or -1. */
static int feed(const uint8_t *data, size_t size)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return -1;
    int buf = 1 << 20;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    if (size && write_full(sv[0], data, size, rg__now() + 1.0)) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    close(sv[0]);
    return sv[1];
}

static struct rg_sc *new_sc(int rank, int size)
{
    struct rg_sc *sc = calloc(1, sizeof(*sc));
    if (!sc)
        abort();
    sc->rank = rank;
    sc->size = size;
    sc->secret = fuzz_secret;
    for (int i = 0; i < RG_MAX_RANKS; i++)
        sc->fd[i] = -1;
    return sc;
}

static void stranger(const uint8_t *data, size_t size, int fix_proof)
{
    uint8_t buf[sizeof(struct sc_hdr) + sizeof(struct sc_hello)];
    struct rg_sc *sc = new_sc(0, 3);
    struct sc_pending p[1];
    int n = 1;
    uint8_t *copy = malloc(size + 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    p[0] = (struct sc_pending){.until = rg__now() + 1.0};
    memset(p[0].nonce, 0x5a, SC_NONCE);
    snprintf(p[0].addr, sizeof(p[0].addr), "fuzz");
    if (fix_proof && size >= sizeof(buf)) {
        struct sc_hello hl;
        memcpy(&hl, copy + sizeof(struct sc_hdr), sizeof(hl));
        sc_mac(fuzz_secret, "railguard-sc hello", p[0].nonce, hl.nonce,
               (int)ntohl((uint32_t)hl.rank), (int)ntohl((uint32_t)hl.size), hl.mac);
        memcpy(copy + sizeof(struct sc_hdr), &hl, sizeof(hl));
    }
    p[0].fd = feed(copy, size);
    free(copy);
    if (p[0].fd < 0) {
        rg__sc_close(sc);
        return;
    }
    int r;
    while ((r = take_pending(sc, p, &n, 0, "fuzz:1")) == -1)
        ;
    if (r >= 0 && (r < 1 || r >= sc->size || sc->fd[r] != p[0].fd))
        abort(); /* a rank counted that is not one of the job's */
    if (r < 0 && n != 0)
        abort(); /* refused, yet still held */
    rg__sc_close(sc);
}

/* Rank `self` of 3 with its proven peers' bytes; two rounds of check, then an allgather. */
static void member(int self, const uint8_t *data, size_t size)
{
    struct rg_sc *sc = new_sc(self, 3);
    struct rg_err e = {0};
    if (self == 0) {
        /* The first byte says where rank 1's bytes end and rank 2's begin. Both peers get a
         * socket, empty ones too: a rank with none would be waited on until the deadline. */
        size_t skip = size ? 1 : 0, cut = size ? data[0] % size : 0;
        sc->fd[1] = feed(data + skip, cut);
        sc->fd[2] = feed(data + skip + cut, size - skip - cut);
    } else {
        sc->fd[0] = feed(data, size);
    }
    for (int round = 0; round < 2; round++) {
        rg_status st = rg__sc_check(sc, &e);
        if (st) {
            check_msg(&e);
            rg__err_clear(&e);
        }
    }
    uint64_t mine = 0x1122334455667788ull, all[3];
    rg_status st = rg__sc_allgather(sc, &mine, sizeof(mine), all, rg__now() + 0.2, &e);
    if (st)
        check_msg(&e);
    else if (all[self] != mine)
        abort();
    rg__sc_close(sc);
}

static void joining(const uint8_t *data, size_t size)
{
    struct rg_sc *sc = new_sc(1, 3);
    struct rg_err e = {0};
    bool dropped; /* whether rank 0 hung up before its challenge: a re-dial, not a fuzz case */
    sc->fd[0] = feed(data, size);
    if (sc->fd[0] >= 0 &&
        prove_to_root(sc, sc->fd[0], "fuzz:1", rg__now() + 0.2, &dropped, &e) != RG_OK)
        check_msg(&e);
    else if (sc->fd[0] >= 0)
        abort(); /* nobody without the secret can welcome a rank */
    rg__sc_close(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!rg_fuzz_quiet) {
        rg_fuzz_quiet = fopen("/dev/null", "w");
        if (!rg_fuzz_quiet)
            abort();
    }
    if (size < 1)
        return 0;
    switch (data[0] % 5) {
    case 0:
        stranger(data + 1, size - 1, 0);
        break;
    case 1:
        stranger(data + 1, size - 1, 1);
        break;
    case 2:
        member(0, data + 1, size - 1);
        break;
    case 3:
        member(1, data + 1, size - 1);
        break;
    default:
        joining(data + 1, size - 1);
        break;
    }
    return 0;
}
