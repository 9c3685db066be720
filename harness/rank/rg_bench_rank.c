/* SPDX-License-Identifier: MIT */
/*
 * One rank of `railguard bench`: `railguard worker --bench --status-fd FD --rank R
 * --coordinator HOST:PORT --devices-file F --transport SO [bench options]`. It loads the
 * transport through the plugin ABI, and for each operation and size fills its inputs from
 * rg_data (so every rank knows every other's contribution), runs the warmup calls, then each
 * round -- a barrier, one call to bring the ranks back in step, then the timed calls -- and
 * checks the last call's output bit-exact against the reference. It tells the runner, one
 * line each on the status descriptor:
 *
 *   init <seconds>                          joined the others
 *   skip <op> <why>                         the transport declares it lacks what op needs
 *   time <op> <bytes> <round> <seconds>     one round: seconds per call on this rank's clock
 *   wrong <op> <bytes> <elements>           the check's count of wrong elements (-c 1)
 *   mem <peak RSS KiB> <pinned KiB>         before finalize: VmHWM, and VmPin (registered)
 *   error <op|init|finalize> <bytes> <text> a call failed: the rank stops there
 *   done
 */
#include "rank/rg_rank.h"
#include "rg_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct brank {
    rg_bench_spec s;
    rg_tp tp;
    void *h;
    int fd, rank;
    const char *coordinator, *devices_file, *transport; /* as given */
    bool bench;                                         /* --bench, as railguard bench says */
    uint8_t *send, *recv, *want;
    size_t cap; /* bytes of each buffer */
    void *mem[2];
};

static void say(const struct brank *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct brank *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rg_say_line(b->fd, NULL, fmt, ap);
    va_end(ap);
}

/* A status and the transport's own words, for an error line. */
static void say_failed(struct brank *b, const char *what, uint64_t bytes, int st)
{
    char sbuf[64];
    const char *why = b->h ? rg_tp_last_error(&b->tp, b->h) : "";
    say(b, "error %s %llu %s: %.600s", what, (unsigned long long)bytes,
        st == RG_TP_V1_ERROR && b->tp.abi == 1 ? "failed (v1)"
                                               : rg_tp_status(st, sbuf, sizeof(sbuf)),
        why && *why ? why : "(no message)");
}

/* The transport's caps against this operation; NULL when it declares all the bench needs. */
static const char *lacks(const struct brank *b, rg_plugin_op op)
{
    const rg_plugin_caps *c = &b->tp.caps;
    if (!(c->ops & RG_BIT(op)))
        return "the operation is not declared";
    if (!(c->dtypes & RG_BIT(b->s.dtype)))
        return "the dtype is not declared";
    if ((op == RG_OP_ALL_REDUCE || op == RG_OP_REDUCE_SCATTER) &&
        !(c->redops[op] & RG_BIT(b->s.redop)))
        return "the redop is not declared for it";
    if (op == RG_OP_BROADCAST && b->s.root >= b->s.ranks)
        return "the root is not a rank";
    return NULL;
}

static int call(struct brank *b, rg_plugin_op op, size_t cnt)
{
    const rg_bench_spec *s = &b->s;
    int n = s->ranks, r = b->rank;
    switch (op) {
    case RG_OP_ALL_REDUCE:
        return rg_tp_all_reduce(&b->tp, b->h, b->send, b->recv, cnt, s->dtype, s->redop);
    case RG_OP_ALL_GATHER:
        return rg_tp_all_gather(&b->tp, b->h, b->send, b->recv, cnt, s->dtype);
    case RG_OP_REDUCE_SCATTER:
        return rg_tp_reduce_scatter(&b->tp, b->h, b->send, b->recv, cnt, s->dtype, s->redop);
    case RG_OP_BROADCAST:
        return rg_tp_broadcast(&b->tp, b->h, b->recv, cnt, s->dtype, s->root);
    case RG_OP_SENDRECV: {
        /* Each rank sends to the next and receives from the one before. The ABI's calls
         * block, so the order must not close a cycle of senders: with an even count of ranks
         * even ones send first; with an odd count rank 0 starts a chain. */
        int next = (r + 1) % n, prev = (r + n - 1) % n;
        bool send_first = n % 2 ? r == 0 : r % 2 == 0;
        int st = send_first ? rg_tp_send(&b->tp, b->h, b->send, cnt, s->dtype, next)
                            : rg_tp_recv(&b->tp, b->h, b->recv, cnt, s->dtype, prev);
        if (st)
            return st;
        return send_first ? rg_tp_recv(&b->tp, b->h, b->recv, cnt, s->dtype, prev)
                          : rg_tp_send(&b->tp, b->h, b->send, cnt, s->dtype, next);
    }
    default:
        return RG_ERR_INVALID;
    }
}

/* Inputs from rg_data, and (into want) what the output must be; *out_n elements of it. */
static void fill(struct brank *b, rg_plugin_op op, size_t cnt, const rg_data_key *k, size_t *out_n)
{
    const rg_bench_spec *s = &b->s;
    size_t esz = rg_data_size(s->dtype);
    int n = s->ranks, r = b->rank;
    memset(b->recv, 0, b->cap);
    switch (op) {
    case RG_OP_ALL_REDUCE:
        rg_data_fill(b->send, cnt, s->dtype, (int)s->redop, k, r, 0);
        rg_data_expect_reduce(b->want, cnt, s->dtype, s->redop, k, n, 0);
        *out_n = cnt;
        break;
    case RG_OP_ALL_GATHER:
        rg_data_fill(b->send, cnt, s->dtype, -1, k, r, 0);
        for (int j = 0; j < n; j++)
            rg_data_fill(b->want + (size_t)j * cnt * esz, cnt, s->dtype, -1, k, j, 0);
        *out_n = cnt * (size_t)n;
        break;
    case RG_OP_REDUCE_SCATTER:
        rg_data_fill(b->send, cnt * (size_t)n, s->dtype, (int)s->redop, k, r, 0);
        rg_data_expect_reduce(b->want, cnt, s->dtype, s->redop, k, n, (size_t)r * cnt);
        *out_n = cnt;
        break;
    case RG_OP_BROADCAST:
        rg_data_fill(b->want, cnt, s->dtype, -1, k, s->root, 0);
        if (r == s->root)
            memcpy(b->recv, b->want, cnt * esz);
        *out_n = cnt;
        break;
    default: /* sendrecv */
        rg_data_fill(b->send, cnt, s->dtype, -1, k, r, 0);
        rg_data_fill(b->want, cnt, s->dtype, -1, k, (r + n - 1) % n, 0);
        *out_n = cnt;
        break;
    }
}

/* Elements of the output that differ from the reference. */
static size_t count_wrong(const struct brank *b, rg_plugin_op op, size_t n)
{
    size_t esz = rg_data_size(b->s.dtype), wrong = 0;
    bool reduced = op == RG_OP_ALL_REDUCE || op == RG_OP_REDUCE_SCATTER;
    for (size_t i = 0; i < n;) {
        size_t k =
            rg_data_compare(b->recv + i * esz, b->want + i * esz, n - i, b->s.dtype, reduced);
        if (k >= n - i)
            break;
        wrong++;
        i += k + 1;
    }
    return wrong;
}

static int sync_ranks(struct brank *b)
{
    if (b->tp.caps.ops & RG_BIT(RG_OP_BARRIER))
        return rg_tp_barrier(&b->tp, b->h);
    return 0; /* no barrier declared: rounds start as each rank gets there */
}

/* kB figures of /proc/self/status ("VmHWM:", "VmPin:"); -1 when absent. */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t klen = strlen(key);
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, klen) && sscanf(line + klen, "%ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

static int bench_op(struct brank *b, rg_plugin_op op, const uint64_t *sizes, int nsizes)
{
    const rg_bench_spec *s = &b->s;
    size_t esz = rg_data_size(s->dtype);
    for (int si = 0; si < nsizes; si++) {
        size_t cnt = rg_bench_count(op, sizes[si], esz, s->ranks), outn = 0;
        if (!cnt)
            continue;
        uint64_t bytes = rg_bench_bytes(op, cnt, esz, s->ranks);
        rg_data_key k = {.seed = 0x5eedULL,
                         .step = (uint32_t)si,
                         .rep = (uint32_t)op,
                         .values = RG_VALUES_EXACT,
                         .nranks = s->ranks};
        fill(b, op, cnt, &k, &outn);
        int st = sync_ranks(b);
        for (int i = 0; !st && i < s->warmup; i++)
            st = call(b, op, cnt);
        for (int round = 0; !st && round < s->rounds; round++) {
            st = sync_ranks(b);
            /* One call untimed after the barrier: the barrier lets ranks go one after another
             * (a woken rank can take milliseconds in an emulated guest), and the first call
             * waits for the last; over 30 calls of 45 us that doubled the 8-byte figure. */
            if (!st)
                st = call(b, op, cnt);
            double t0 = rg_now_s();
            for (int i = 0; !st && i < s->iters; i++)
                st = call(b, op, cnt);
            if (!st)
                say(b, "time %s %llu %d %.9f", rg_bench_op_name(op), (unsigned long long)bytes,
                    round, (rg_now_s() - t0) / s->iters);
        }
        if (st) {
            say_failed(b, rg_bench_op_name(op), bytes, st);
            return -1;
        }
        /* Every timed call wrote the same output from the same inputs: the last one's is
         * checked, so a wrong result cannot hide behind a fast one. */
        if (s->check)
            say(b, "wrong %s %llu %zu", rg_bench_op_name(op), (unsigned long long)bytes,
                count_wrong(b, op, outn));
    }
    return 0;
}

#define BR(f) offsetof(struct brank, f)
static const rg_opt brank_table[] = {
    {.name = "bench",
     .kind = RG_OPT_FLAG,
     .help = "A bench rank (railguard bench starts it so).",
     .off = BR(bench)},
    {.name = "status-fd",
     .kind = RG_OPT_INT,
     .arg = "FD",
     .help = "Where its lines go.",
     .off = BR(fd),
     .hi = 1023},
    {.name = "rank",
     .kind = RG_OPT_INT,
     .arg = "R",
     .help = "Its rank, below --ranks.",
     .off = BR(rank),
     .hi = RG_MAX_RANKS - 1},
    {.name = "coordinator",
     .kind = RG_OPT_TEXT,
     .arg = "HOST:PORT",
     .help = "Rank 0's side channel.",
     .off = BR(coordinator)},
    {.name = "devices-file",
     .kind = RG_OPT_TEXT,
     .arg = "FILE",
     .help = "The JACCL devices file.",
     .off = BR(devices_file)},
    {.name = "transport",
     .kind = RG_OPT_TEXT,
     .arg = "SO",
     .help = "The transport's plugin.",
     .off = BR(transport)},
};
#undef BR

const rg_cli rg_bench_rank_cli = {
    .cmd = "worker",
    .synopsis = "--bench --status-fd FD --rank R --coordinator HOST:PORT --devices-file FILE "
                "--transport SO "
                "[bench flags]",
    .about = "One rank of railguard bench: it times the calls the flags name and says each round's "
             "times "
             "and checks on FD.",
    .opts = brank_table,
    .nopts = (int)(sizeof(brank_table) / sizeof(brank_table[0])),
    .shared = rg_bench_spec_opts,
    .nshared = RG_BENCH_SPEC_NOPTS,
};

static int parse(struct brank *b, int argc, char **argv)
{
    int first, rc = rg_cli_parse(&rg_bench_rank_cli, argc, argv, b, &first);
    if (rc)
        return -1;
    if (first < argc || b->fd < 0 || !b->transport || !b->coordinator || !b->devices_file ||
        b->rank >= b->s.ranks) {
        fprintf(stderr, "railguard worker --bench: needs --status-fd, --rank below --ranks, "
                        "--coordinator, --devices-file and --transport, and nothing else\n");
        return -1;
    }
    return 0;
}

int rg_bench_rank_main(int argc, char **argv)
{
    static struct brank b;
    b = (struct brank){.fd = -1};
    rg_plugin_args a = {.size = sizeof(a)};
    char err[512];
    uint64_t sizes[RG_BENCH_MAX_SIZES];
    int rc = 1;
    rg_bench_defaults(&b.s);
    if (parse(&b, argc, argv))
        return 2;
    a.coordinator = b.coordinator;
    a.devices_file = b.devices_file;
    if (rg_tp_open(&b.tp, b.transport, err, sizeof(err))) {
        say(&b, "error init 0 %s", err);
        return 1;
    }
    a.rank = b.rank;
    a.nranks = b.s.ranks;
    a.qp_type = b.s.qp;
    a.algo = b.s.algo;
    a.timeout_s = b.s.timeout_s;
    int nsizes = rg_bench_sizes(&b.s, sizes, RG_BENCH_MAX_SIZES);
    if (nsizes < 1) {
        say(&b, "error init 0 no sizes from -b to -e");
        return 1;
    }
    size_t esz = rg_data_size(b.s.dtype);
    /* One set of buffers for the largest size, as nccl-tests allocates. */
    b.cap = (size_t)sizes[nsizes - 1] + esz * (size_t)b.s.ranks;
    if (posix_memalign((void **)&b.send, 4096, b.cap) ||
        posix_memalign((void **)&b.recv, 4096, b.cap) ||
        posix_memalign((void **)&b.want, 4096, b.cap)) {
        say(&b, "error init 0 cannot allocate 3 x %zu bytes", b.cap);
        goto out;
    }
    memset(b.send, 0, b.cap);
    memset(b.want, 0, b.cap);
    double t0 = rg_now_s();
    int st = rg_tp_init(&b.tp, &a, &b.h, err, sizeof(err));
    if (st) {
        char sbuf[64];
        say(&b, "error init 0 %s: %s", rg_tp_status(st, sbuf, sizeof(sbuf)), err);
        b.h = NULL;
        goto out;
    }
    say(&b, "init %.6f", rg_now_s() - t0);
    if (b.s.reg && b.tp.has_mem) {
        if ((st = rg_tp_mem_register(&b.tp, b.h, b.send, b.cap, &b.mem[0])) ||
            (st = rg_tp_mem_register(&b.tp, b.h, b.recv, b.cap, &b.mem[1]))) {
            say_failed(&b, "register", b.cap, st);
            goto fin;
        }
    }
    rc = 0;
    for (int op = 0; op < RG_OP_COUNT && !rc; op++) {
        if (!(b.s.ops & RG_BIT(op)))
            continue;
        const char *why = lacks(&b, (rg_plugin_op)op);
        if (why)
            say(&b, "skip %s %s", rg_bench_op_name((rg_plugin_op)op), why);
        else if (bench_op(&b, (rg_plugin_op)op, sizes, nsizes))
            rc = 1;
    }
    say(&b, "mem %ld %ld", status_kb("VmHWM:"), status_kb("VmPin:"));
fin:
    for (int i = 1; i >= 0; i--)
        if (b.mem[i])
            rg_tp_mem_deregister(&b.tp, b.h, b.mem[i]);
    st = rg_tp_finalize(&b.tp, b.h);
    b.h = NULL; /* freed, also after an error: its last_error is gone with it */
    if (st && !rc) {
        say_failed(&b, "finalize", 0, st);
        rc = 1;
    }
out:
    if (!rc)
        say(&b, "done");
    free(b.send);
    free(b.recv);
    free(b.want);
    return rc;
}
