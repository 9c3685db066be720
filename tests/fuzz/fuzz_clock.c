/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the runners' clock exchange (harness/rg_clock.c), fed the bytes a hostile
 * process could put on the wire. The first byte picks who sends:
 *   0  a stranger, to rank 0's port, before it proved the job secret;
 *   1  the same, but the hello's proof is made right over whatever fields the bytes hold, as
 *      from a process that knows the secret and lies about its rank or size;
 *   2  a proven rank 2 of 3 answering rank 0's pings;
 *   3  a process on rank 0's port, to a rank dialling it (the challenge and the welcome);
 *   4  a proven rank 0, to a rank, after its welcome (pings and the result).
 * Every refusal must be one printable line; no crash, no leak, no read past a frame, no wait.
 *
 * The file under test is included, not linked, to reach its static functions; a socketpair
 * holds the bytes, its writer shut behind them, so each input ends in EOF and what the code
 * under test writes back still has somewhere to go.
 */
#include <stdio.h>
#undef stderr
#define stderr rg_fuzz_quiet /* a stranger's refusal is logged: not to the fuzzer's log */
static FILE *rg_fuzz_quiet;

#include "../../harness/launch/rg_clock.c"

double rg_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_secret[] = "fuzz-secret-0123456789";

static void one_line(const char *s)
{
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            abort();
}

/* sv[1] reads the bytes and then EOF; sv[0] stays open to take what it writes. */
static int feed(const uint8_t *data, size_t size, int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return -1;
    int buf = 1 << 20;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    if (size && io_full(sv[0], (void *)data, size, rg_now_s() + 1.0, true)) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    shutdown(sv[0], SHUT_WR);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char log[8192];
    int sv[2];
    if (!size)
        return 0;
    if (!rg_fuzz_quiet && !(rg_fuzz_quiet = fmemopen(log, sizeof(log), "w")))
        abort();
    rewind(rg_fuzz_quiet);
    memset(log, 0, sizeof(log)); /* this input's lines only */
    int mode = data[0] % 5;
    uint8_t in[65536 + 128];
    size_t n = size - 1 < 65536 ? size - 1 : 65536;
    memcpy(in, data + 1, n);
    struct ck_root k = {.coord = "fuzz:1", .secret = fuzz_secret, .size = 3};
    for (int r = 0; r < RG_MAX_RANKS; r++)
        k.fd[r] = -1;
    if (mode == 1 && n >= sizeof(struct ck_hdr) + sizeof(struct ck_hello)) {
        /* Proven: the MAC right over the claimed rank and size, against a zero challenge. */
        struct ck_hello h;
        memcpy(&h, in + sizeof(struct ck_hdr), sizeof(h));
        uint8_t zero[CK_NONCE] = {0};
        ck_mac(fuzz_secret, "railguard-clock hello", zero, h.nonce, (int)ntohl((uint32_t)h.rank),
               (int)ntohl((uint32_t)h.size), h.mac);
        memcpy(in + sizeof(struct ck_hdr), &h, sizeof(h));
    }
    if (feed(in, n, sv))
        return 0;
    rg_clock c = {0};
    if (mode <= 1) {
        struct ck_pending p[1] = {{.fd = sv[1], .until = rg_now_s() + 1}};
        int np = 1, rc = 0;
        while (np && rc == 0)
            rc = take_pending(&k, p, &np, 0);
        if (rc == 1)
            close(k.fd[k.fd[1] >= 0 ? 1 : 2]);
        fflush(rg_fuzz_quiet);
        size_t len = strnlen(log, sizeof(log));
        /* A refusal says so on exactly one line; a pass or a wait for more says nothing. */
        if (rc < 0 && (len == 0 || memchr(log, '\n', len) != log + len - 1))
            abort();
        if (rc >= 0 && len)
            abort();
    } else if (mode == 2) {
        struct ck_result res = {0};
        char why[200] = "";
        if (measure(sv[1], 2, &res, why, sizeof(why)))
            one_line(why);
        else if (res.rounds != RG_CLOCK_ROUNDS || res.err_ns < 0)
            abort();
        close(sv[1]);
    } else if (mode == 3) {
        peer_exchange(sv[1], "fuzz:1", fuzz_secret, 1, 3, rg_now_s() + 1, &c);
        /* No input can forge the welcome's proof: a measurement here is a bug. */
        if (c.measured || !c.why[0])
            abort();
        one_line(c.why);
        close(sv[1]);
    } else {
        peer_pings(sv[1], 1, rg_now_s() + 1, &c);
        if (!c.measured && !c.why[0])
            abort();
        if (c.measured && (c.err_ms < 0 || c.rounds < 1 || c.rounds > RG_CLOCK_ROUNDS))
            abort();
        one_line(c.why);
        close(sv[1]);
    }
    close(sv[0]);
    return 0;
}
