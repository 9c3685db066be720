/* SPDX-License-Identifier: MIT */
/*
 * railguard bench: nccl-tests' table for any transport, through the plugin ABI. It starts one
 * `railguard worker --bench` per rank (rg_bench_rank.c), optionally under the shim (its
 * pass-through, or run's counting plan), reads their per-round times and checks, and prints per
 * operation and size the median, min and max over rounds of the ranks' combined time per call,
 * algbw, busbw and the count of wrong elements over every rank; JSON with --json.
 */
#include "cmd/rg_cmd.h"
#include "rg_parse.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct bopts {
    rg_bench_spec s;
    char secret[RG_JOB_SECRET_HEX];
    char self[PATH_MAX], transport[PATH_MAX], shim[PATH_MAX], out[PATH_MAX], json[PATH_MAX];
    bool use_shim, keep_out;
    bool counting; /* --with-shim-counting: run's counting plan; else the plain pass-through */
    char devices[RG_MAX_RAILS][64];
    int ndevices;
    char label[64];
    double deadline_s;
    bool deadline_set;
    const char *devices_arg; /* --devices, as given */
    char wrap_buf[1024];
    char *wrap[17]; /* --rank-wrapper's words */
    int nwrap;
};

struct bproc {
    pid_t pid;
    int fd;
    char buf[2048];
    size_t len;
    bool done;
    int status;
    char error[700];
    long rss_kb, pin_kb;
    double init_s;
};

/* What the ranks said, by operation, size, round and rank. */
struct btab {
    int nsizes, rounds, ranks;
    uint64_t sizes[RG_BENCH_MAX_SIZES];
    double *t;   /* [op][size][round][rank]: seconds per call, NAN until said */
    long *wrong; /* [op][size][rank]: -1 until said */
    char skip[RG_OP_COUNT][160];
};

static double *tcell(struct btab *b, int op, int si, int round, int rank)
{
    return &b->t[(((size_t)op * b->nsizes + si) * b->rounds + round) * b->ranks + rank];
}

static long *wcell(struct btab *b, int op, int si, int rank)
{
    return &b->wrong[((size_t)op * b->nsizes + si) * b->ranks + rank];
}

static int take_shim_mode(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct bopts *o = opts;
    (void)val, (void)why, (void)len;
    o->use_shim = true;
    o->counting = !strcmp(opt->name, "with-shim-counting");
    return 0;
}

static int take_label(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct bopts *o = opts;
    (void)opt;
    if (!*val || strlen(val) >= sizeof(o->label))
        return snprintf(why, len, "1 to %zu characters", sizeof(o->label) - 1), -1;
    snprintf(o->label, sizeof(o->label), "%s", val);
    return 0;
}

static int take_wrapper(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct bopts *o = opts;
    (void)opt;
    o->nwrap = rg_command_words(val, o->wrap_buf, sizeof(o->wrap_buf), o->wrap, 16, why, len);
    return o->nwrap < 1 ? -1 : 0;
}

#define BO(f) offsetof(struct bopts, f)
#define BL(f) sizeof(((struct bopts *)0)->f)
static const rg_opt bench_table[] = {
    {.name = "transport",
     .kind = RG_OPT_PATH,
     .arg = "SO",
     .help = "The transport's plugin (default: the reference transport installed beside).",
     .off = BO(transport),
     .len = BL(transport)},
    {.name = "with-shim",
     .kind = RG_OPT_CALL,
     .help = "Every rank under the shim's pass-through (what the shim itself costs).",
     .call = take_shim_mode},
    {.name = "with-shim-counting",
     .kind = RG_OPT_CALL,
     .help = "Every rank under the shim with railguard run's counting plan.",
     .call = take_shim_mode},
    {.name = "shim",
     .kind = RG_OPT_PATH,
     .arg = "SO",
     .help = "The shim (implies --with-shim).",
     .off = BO(shim),
     .len = BL(shim),
     .given = BO(use_shim) + 1},
    {.name = "devices",
     .kind = RG_OPT_TEXT,
     .arg = "DEV,...",
     .help = "RDMA devices, one a rail (default $RG_SOFTROCE_DEVICES).",
     .off = BO(devices_arg)},
    {.name = "rank-wrapper",
     .kind = RG_OPT_CALL,
     .arg = "'CMD ARG...'",
     .help = "Every rank runs under this command.",
     .call = take_wrapper},
    {.name = "json",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "The table as JSON too.",
     .off = BO(json),
     .len = BL(json)},
    {.name = "out",
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "The ranks' logs kept here (default: a directory removed after).",
     .off = BO(out),
     .len = BL(out),
     .given = BO(keep_out) + 1},
    {.name = "label",
     .kind = RG_OPT_CALL,
     .arg = "TEXT",
     .help = "A name for this bench in the JSON.",
     .call = take_label},
    {.name = "deadline",
     .kind = RG_OPT_SECONDS,
     .arg = "S",
     .help = "The whole bench's deadline (default: four times --timeout, at least 120).",
     .off = BO(deadline_s),
     .lo = 1,
     .hi = 86400,
     .given = BO(deadline_set) + 1},
};
#undef BO
#undef BL

const rg_cli rg_bench_cli = {
    .cmd = "bench",
    .synopsis = "[options] [nccl-tests flags]",
    .about =
        "nccl-tests' table for any transport, through the plugin ABI: per operation and size the "
        "median, min and max over rounds of the ranks' time per call, algbw, busbw, and the count "
        "of "
        "wrong elements (every output checked bit-exact). The one-letter flags are nccl-tests'.",
    .opts = bench_table,
    .nopts = (int)(sizeof(bench_table) / sizeof(bench_table[0])),
    .shared = rg_bench_spec_opts,
    .nshared = RG_BENCH_SPEC_NOPTS,
};

static int parse(struct bopts *o, int argc, char **argv)
{
    const char *devs = getenv("RG_SOFTROCE_DEVICES"), *devs_from = "RG_SOFTROCE_DEVICES";
    rg_bench_defaults(&o->s);
    ssize_t n = readlink("/proc/self/exe", o->self, sizeof(o->self) - 1);
    if (n <= 0) {
        fprintf(stderr, "railguard bench: cannot find my own executable\n");
        return 2;
    }
    o->self[n] = '\0';
    rg_beside(o->transport, sizeof(o->transport), o->self, "railguard-transport.so");
    rg_beside(o->shim, sizeof(o->shim), o->self, "railguard-fi.so");
    int first, rc = rg_cli_parse(&rg_bench_cli, argc, argv, o, &first);
    if (rc)
        return rc;
    if (first < argc) {
        char shown[72];
        fprintf(stderr, "railguard bench: unexpected argument '%s'\n",
                rg_parse_show(argv[first], shown, sizeof(shown)));
        return 2;
    }
    if (o->devices_arg) {
        devs = o->devices_arg;
        devs_from = "--devices";
    }
    if (o->s.min_bytes > o->s.max_bytes) {
        fprintf(stderr, "railguard bench: -b %llu is above -e %llu\n",
                (unsigned long long)o->s.min_bytes, (unsigned long long)o->s.max_bytes);
        return 2;
    }
    if (o->s.root >= o->s.ranks) {
        fprintf(stderr, "railguard bench: -r %d is not a rank of %d\n", o->s.root, o->s.ranks);
        return 2;
    }
    if (!devs || !*devs) {
        fprintf(stderr, "railguard bench: no devices: pass --devices rxe0,rxe1 or set "
                        "RG_SOFTROCE_DEVICES (ci/softroce exec does)\n");
        return 2;
    }
    if (rg_devices_parse("bench", devs, devs_from, o->devices, &o->ndevices))
        return 2;
    if (o->ndevices < o->s.rails) {
        fprintf(stderr, "railguard bench: --rails %d but %s names %d device(s)\n", o->s.rails,
                devs_from, o->ndevices);
        return 2;
    }
    if (!o->deadline_set)
        o->deadline_s = o->s.timeout_s * 4 > 120 ? o->s.timeout_s * 4 : 120;
    return 0;
}

static void start_rank(const struct bopts *o, int r, const char *devfile, const char *coord,
                       int wfd)
{
    char log[PATH_MAX + 32], plan[PATH_MAX + 8], events[PATH_MAX + 32], rank[16], argbuf[1024];
    char *spec[48], *args[100];
    int na = 0;
    snprintf(log, sizeof(log), "%s/rank%d.log", o->out, r);
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (lfd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0)
        _exit(127);
    if (wfd == 3)
        fcntl(3, F_SETFD, 0);
    else if (dup2(wfd, 3) < 0)
        _exit(127);
    if (o->use_shim) {
        snprintf(plan, sizeof(plan), "%s/plan", o->out);
        snprintf(events, sizeof(events), "%s/rank%d.events.jsonl", o->out, r);
        rg_proc_shim_env(o->shim, plan, events, r, false, 1);
        /* No plan at all is the shim's pass-through: a load, a test and a tail call a verb. */
        if (!o->counting)
            unsetenv("RG_FI_PLAN_FILE");
    }
    /* The side channel's job secret, as run hands it to the ranks it starts. */
    setenv("RG_SECRET", o->secret, 1);
    unsetenv("RG_SECRET_FILE");
    snprintf(rank, sizeof(rank), "%d", r);
    int ns = rg_bench_args(&o->s, argbuf, sizeof(argbuf), spec, 48);
    if (ns < 0)
        _exit(127);
    const char *fixed[] = {
        o->self,  "worker",      "--bench",       "--status-fd", "3",
        "--rank", rank,          "--coordinator", coord,         "--devices-file",
        devfile,  "--transport", o->transport,
    };
    for (int i = 0; i < o->nwrap; i++)
        args[na++] = o->wrap[i];
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        args[na++] = (char *)fixed[i];
    for (int i = 0; i < ns; i++)
        args[na++] = spec[i];
    args[na] = NULL;
    if (o->nwrap)
        execvp(args[0], args);
    else
        execv(o->self, args);
    fprintf(stderr, "railguard bench: cannot run %s: %s\n", args[0], strerror(errno));
    _exit(127);
}

/* Which size index `bytes` of op came from; -1 when none. */
static int size_index(const struct btab *b, const rg_bench_spec *s, int op, uint64_t bytes)
{
    size_t esz = rg_data_size(s->dtype);
    for (int i = 0; i < b->nsizes; i++) {
        size_t c = rg_bench_count((rg_plugin_op)op, b->sizes[i], esz, s->ranks);
        if (c && rg_bench_bytes((rg_plugin_op)op, c, esz, s->ranks) == bytes)
            return i;
    }
    return -1;
}

/* One line from rank r. What does not parse is an error of the rank's: the bench says it and
 * stops trusting that rank's figures. */
static void take(struct btab *b, const rg_bench_spec *s, struct bproc *p, int r, char *line)
{
    char opn[32], shown[72];
    unsigned long long bytes;
    int round, off = 0, op, si;
    double sec;
    long a, c;
    if (sscanf(line, "time %31s %llu %d %lf%n", opn, &bytes, &round, &sec, &off) == 4 &&
        !line[off] && (op = rg_bench_op_of(opn)) >= 0 && (si = size_index(b, s, op, bytes)) >= 0 &&
        round >= 0 && round < b->rounds && isfinite(sec) && sec >= 0) {
        *tcell(b, op, si, round, r) = sec;
        return;
    }
    if (sscanf(line, "wrong %31s %llu %ld%n", opn, &bytes, &a, &off) == 3 && !line[off] &&
        (op = rg_bench_op_of(opn)) >= 0 && (si = size_index(b, s, op, bytes)) >= 0 && a >= 0) {
        *wcell(b, op, si, r) = a;
        return;
    }
    if (sscanf(line, "mem %ld %ld%n", &a, &c, &off) == 2 && !line[off]) {
        p->rss_kb = a;
        p->pin_kb = c;
        return;
    }
    if (sscanf(line, "init %lf%n", &sec, &off) == 1 && !line[off] && isfinite(sec)) {
        p->init_s = sec;
        return;
    }
    if (!strncmp(line, "skip ", 5) && sscanf(line + 5, "%31s %n", opn, &off) == 1 &&
        (op = rg_bench_op_of(opn)) >= 0) {
        snprintf(b->skip[op], sizeof(b->skip[op]), "%s",
                 rg_parse_show(line + 5 + off, shown, sizeof(shown)));
        return;
    }
    if (!strcmp(line, "done")) {
        p->done = true;
        return;
    }
    if (!strncmp(line, "error ", 6)) {
        if (!p->error[0])
            snprintf(p->error, sizeof(p->error), "%s", line + 6);
        return;
    }
    if (!p->error[0])
        snprintf(p->error, sizeof(p->error), "said something unreadable: '%s'",
                 rg_parse_show(line, shown, sizeof(shown)));
}

static void drain(struct btab *b, const rg_bench_spec *s, struct bproc *p, int r)
{
    ssize_t n = read(p->fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
    if (n <= 0) {
        if (n < 0 && errno == EINTR)
            return;
        close(p->fd);
        p->fd = -1;
        return;
    }
    p->len += (size_t)n;
    p->buf[p->len] = '\0';
    char *line = p->buf, *nl;
    while ((nl = strchr(line, '\n'))) {
        *nl = '\0';
        take(b, s, p, r, line);
        line = nl + 1;
    }
    p->len = strlen(line);
    memmove(p->buf, line, p->len);
    if (p->len == sizeof(p->buf) - 1) { /* a line longer than any the rank writes */
        if (!p->error[0])
            snprintf(p->error, sizeof(p->error), "said a line over %zu bytes", p->len);
        p->len = 0;
    }
}

/* Reads every rank until all have closed their status descriptor, or none said anything for
 * the deadline: then every rank still running is killed. 0, or -1 on the deadline. */
static int collect(struct btab *b, const struct bopts *o, struct bproc *ps, int n)
{
    double last = rg_now_s();
    for (;;) {
        struct pollfd pf[RG_MAX_RANKS];
        int idx[RG_MAX_RANKS], k = 0;
        for (int r = 0; r < n; r++)
            if (ps[r].fd >= 0) {
                pf[k] = (struct pollfd){.fd = ps[r].fd, .events = POLLIN};
                idx[k++] = r;
            }
        if (!k)
            return 0;
        double left = o->deadline_s - (rg_now_s() - last);
        if (left <= 0) {
            for (int r = 0; r < n; r++)
                if (ps[r].fd >= 0 && !ps[r].error[0])
                    snprintf(ps[r].error, sizeof(ps[r].error),
                             "said nothing for %.0f s (--deadline): killed", o->deadline_s);
            for (int r = 0; r < n; r++)
                if (ps[r].pid > 0)
                    kill(ps[r].pid, SIGKILL);
            return -1;
        }
        int rc = poll(pf, (nfds_t)k, (int)(left * 1000) + 1);
        if (rc < 0 && errno != EINTR)
            return -1;
        for (int i = 0; rc > 0 && i < k; i++)
            if (pf[i].revents) {
                drain(b, &o->s, &ps[idx[i]], idx[i]);
                last = rg_now_s();
            }
    }
}

static const char *average_name(int a)
{
    static const char *const n[] = {"rank 0's", "the mean over ranks of their",
                                    "the least over ranks of their",
                                    "the most over ranks of their"};
    return n[a & 3];
}

struct row {
    uint64_t bytes;
    size_t count;
    double med, min, max, algbw, busbw;
    long wrong;
    double rounds[RG_BENCH_MAX_ROUNDS];
};

/* One row from every rank's figures: 0, 1 when the size is too small for op, -1 when some
 * rank did not give every round and its check. */
static int make_row(struct btab *b, const rg_bench_spec *s, int op, int si, struct row *w)
{
    size_t esz = rg_data_size(s->dtype);
    double per[RG_MAX_RANKS], sorted[RG_BENCH_MAX_ROUNDS];
    w->count = rg_bench_count((rg_plugin_op)op, b->sizes[si], esz, s->ranks);
    if (!w->count)
        return 1;
    w->bytes = rg_bench_bytes((rg_plugin_op)op, w->count, esz, s->ranks);
    for (int round = 0; round < b->rounds; round++) {
        for (int r = 0; r < b->ranks; r++)
            if (isnan(per[r] = *tcell(b, op, si, round, r)))
                return -1;
        w->rounds[round] = rg_bench_combine(per, b->ranks, s->average);
        sorted[round] = w->rounds[round];
    }
    w->med = rg_bench_median(sorted, b->rounds);
    w->min = sorted[0];
    w->max = sorted[b->rounds - 1];
    w->algbw = w->med > 0 ? (double)w->bytes / w->med / 1e9 : 0;
    w->busbw = w->algbw * rg_bench_bus_factor((rg_plugin_op)op, s->ranks);
    w->wrong = 0;
    for (int r = 0; s->check && r < b->ranks; r++) {
        long x = *wcell(b, op, si, r);
        if (x < 0)
            return -1;
        w->wrong += x;
    }
    return 0;
}

static int report(struct btab *b, const struct bopts *o, const rg_tp *tp, struct bproc *ps,
                  double wall_s, bool failed)
{
    const rg_bench_spec *s = &o->s;
    static const char *const algos[] = {"auto", "ring", "mesh"};
    json_t *rows = json_array(), *skips = json_array(), *mem = json_array();
    long wrong_total = 0;
    double bus_sum = 0;
    int bus_n = 0, incomplete = 0;
    printf("# railguard bench %s: %s%s%s, %d ranks, %d rail(s), %s, algo %s%s%s\n", rg_version(),
           tp->name, tp->version ? " " : "", tp->version ? tp->version : "", s->ranks, s->rails,
           s->qp == RG_QPT_RC ? "RC" : "UC", algos[s->algo],
           o->use_shim ? (o->counting ? ", under the shim (counting plan)"
                                      : ", under the shim (pass-through)")
                       : "",
           s->reg ? ", buffers registered (-R 1)" : "");
    printf("# %d timed calls a round after %d warmup, %d rounds; a round's time is %s "
           "time per call; median, min and max over rounds; check %s\n",
           s->iters, s->warmup, s->rounds, average_name(s->average), s->check ? "on" : "off");
    printf("#\n# %-14s %12s %10s %9s %6s %4s %10s %10s %10s %11s %11s %7s\n", "op", "size", "count",
           "type", "redop", "root", "time(us)", "min(us)", "max(us)", "algbw(GB/s)", "busbw(GB/s)",
           "#wrong");
    static struct row w;
    for (int op = 0; op < RG_OP_COUNT; op++) {
        if (!(s->ops & RG_BIT(op)))
            continue;
        if (b->skip[op][0]) {
            printf("# %-14s skipped: %s\n", rg_bench_op_name((rg_plugin_op)op), b->skip[op]);
            json_array_append_new(skips,
                                  json_pack("{s:s,s:s}", "op", rg_bench_op_name((rg_plugin_op)op),
                                            "why", b->skip[op]));
            continue;
        }
        for (int si = 0; si < b->nsizes; si++) {
            int rc = make_row(b, s, op, si, &w);
            if (rc > 0)
                continue;
            if (rc < 0) {
                incomplete++;
                continue;
            }
            bool red = op == RG_OP_ALL_REDUCE || op == RG_OP_REDUCE_SCATTER;
            char wr[24], root[16] = "-";
            snprintf(wr, sizeof(wr), s->check ? "%ld" : "N/A", w.wrong);
            if (op == RG_OP_BROADCAST)
                snprintf(root, sizeof(root), "%d", s->root);
            printf("  %-14s %12llu %10zu %9s %6s %4s %10.1f %10.1f %10.1f %11.4f %11.4f %7s\n",
                   rg_bench_op_name((rg_plugin_op)op), (unsigned long long)w.bytes, w.count,
                   rg_data_dtype_name(s->dtype), red ? rg_data_redop_name(s->redop) : "none", root,
                   w.med * 1e6, w.min * 1e6, w.max * 1e6, w.algbw, w.busbw, wr);
            wrong_total += w.wrong;
            bus_sum += w.busbw;
            bus_n++;
            json_t *rj = json_array(), *wj = json_array();
            for (int i = 0; i < b->rounds; i++)
                json_array_append_new(rj, json_real(w.rounds[i] * 1e6));
            for (int r = 0; r < b->ranks; r++)
                json_array_append_new(wj, json_integer(s->check ? *wcell(b, op, si, r) : -1));
            json_array_append_new(
                rows,
                json_pack("{s:s,s:I,s:I,s:s,s:s,s:i,s:{s:f,s:f,s:f,s:o},s:f,s:f,s:f,s:I,"
                          "s:o}",
                          "op", rg_bench_op_name((rg_plugin_op)op), "size", (json_int_t)w.bytes,
                          "count", (json_int_t)w.count, "type", rg_data_dtype_name(s->dtype),
                          "redop", red ? rg_data_redop_name(s->redop) : "none", "root",
                          op == RG_OP_BROADCAST ? s->root : -1, "time_us", "median", w.med * 1e6,
                          "min", w.min * 1e6, "max", w.max * 1e6, "rounds", rj, "algbw_gbs",
                          w.algbw, "busbw_gbs", w.busbw, "bus_factor",
                          rg_bench_bus_factor((rg_plugin_op)op, s->ranks), "wrong",
                          (json_int_t)(s->check ? w.wrong : -1), "wrong_per_rank", wj));
        }
    }
    printf("# wrong elements: %ld%s\n", wrong_total,
           s->check ? (wrong_total ? " FAILED" : " OK") : " (not checked: -c 0)");
    if (bus_n)
        printf("# average bus bandwidth: %.4f GB/s\n", bus_sum / bus_n);
    for (int r = 0; r < s->ranks; r++) {
        if (ps[r].rss_kb > 0)
            printf("# rank %d: peak RSS %.1f MiB, pinned (registered) %.1f MiB, init %.3f s\n", r,
                   ps[r].rss_kb / 1024.0, ps[r].pin_kb / 1024.0, ps[r].init_s);
        if (ps[r].error[0])
            printf("# rank %d: FAILED: %s\n", r, ps[r].error);
        json_array_append_new(mem, json_pack("{s:i,s:I,s:I,s:f,s:s}", "rank", r, "peak_rss_kib",
                                             (json_int_t)ps[r].rss_kb, "pinned_kib",
                                             (json_int_t)ps[r].pin_kb, "init_s", ps[r].init_s,
                                             "error", ps[r].error));
    }
    if (incomplete && !failed)
        printf("# %d row(s) left out: some rank did not give every round%s\n", incomplete,
               s->check ? " and its check" : "");
    printf("# %.1f s in all\n", wall_s);
    int rc = failed || incomplete || wrong_total ? 1 : 0;
    if (o->json[0]) {
        json_t *top = json_pack(
            "{s:s,s:s,s:{s:s,s:s?,s:s},s:s,s:i,s:i,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:b,s:s,s:b,"
            "s:o,s:o,s:o,s:f,s:b}",
            "railguard", rg_version(), "label", o->label, "transport", "name", tp->name, "version",
            tp->version, "path", o->transport, "devices", o->devices[0], "ranks", s->ranks, "rails",
            s->rails, "qp", s->qp == RG_QPT_RC ? "rc" : "uc", "algo", algos[s->algo], "dtype",
            rg_data_dtype_name(s->dtype), "redop", rg_data_redop_name(s->redop), "iters", s->iters,
            "warmup", s->warmup, "rounds", s->rounds, "average",
            (const char *[]){"rank0", "mean", "min", "max"}[s->average & 3], "check", s->check,
            "shim", o->use_shim ? (o->counting ? "counting" : "pass-through") : "off", "registered",
            s->reg, "results", rows, "skipped", skips, "ranks_memory", mem, "seconds", wall_s, "ok",
            !rc);
        if (!top || json_dump_file(top, o->json, JSON_INDENT(1)) != 0) {
            fprintf(stderr, "railguard bench: --json: cannot write '%s'\n", o->json);
            rc = 1;
        }
        json_decref(top);
    } else {
        json_decref(rows);
        json_decref(skips);
        json_decref(mem);
    }
    return rc;
}

int rg_bench_main(int argc, char **argv)
{
    static struct bopts o;
    struct btab b = {0};
    struct bproc ps[RG_MAX_RANKS];
    rg_tp tp;
    char err[512], devfile[PATH_MAX + 16], coord[64];
    int rc = parse(&o, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    /* What the transport declares is read here once, so a bench it cannot run at all is one
     * line before any rank starts. */
    if (rg_tp_open(&tp, o.transport, err, sizeof(err))) {
        fprintf(stderr, "railguard bench: %s\n", err);
        return 2;
    }
    const rg_plugin_caps *c = &tp.caps;
    const char *why = o.s.ranks > c->max_ranks                     ? "more ranks than it declares"
                      : o.s.rails > c->max_rails                   ? "more rails than it declares"
                      : !(c->qp_types & RG_BIT(o.s.qp))            ? "the QP type is not declared"
                      : o.s.algo && !(c->algos & RG_BIT(o.s.algo)) ? "the algo is not declared"
                      : o.s.reg && !tp.has_mem ? "-R 1, but it has no mem_register"
                                               : NULL;
    if (why) {
        fprintf(stderr, "railguard bench: %s cannot run this bench: %s\n", tp.name, why);
        return 2;
    }
    if (o.keep_out) {
        if (rg_mkdirs(o.out)) {
            fprintf(stderr, "railguard bench: --out: cannot make '%s': %s\n", o.out,
                    strerror(errno));
            return 2;
        }
    } else {
        snprintf(o.out, sizeof(o.out), "%s/railguard-bench.XXXXXX",
                 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(o.out)) {
            fprintf(stderr, "railguard bench: cannot make a directory in /tmp: %s\n",
                    strerror(errno));
            return 2;
        }
    }
    snprintf(devfile, sizeof(devfile), "%s/devices.json", o.out);
    int port = rg_free_port();
    if (port < 0 || rg_devices_write(devfile, o.s.ranks, o.s.rails, (const char(*)[64])o.devices)) {
        fprintf(stderr, "railguard bench: %s\n",
                port < 0 ? "no free TCP port on loopback" : strerror(errno));
        return 2;
    }
    if (o.use_shim && o.counting) {
        /* run's counting plan: the shim as every scenario runs under it, with no fault. */
        char plan[PATH_MAX + 8];
        snprintf(plan, sizeof(plan), "%s/plan", o.out);
        FILE *f = fopen(plan, "w");
        if (!f || fputs("count\n", f) < 0 || fclose(f)) {
            fprintf(stderr, "railguard bench: cannot write '%s'\n", plan);
            return 2;
        }
    }
    if (rg_job_secret(o.secret)) {
        fprintf(stderr, "railguard bench: no randomness for the job secret\n");
        return 2;
    }
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", port);
    b.nsizes = rg_bench_sizes(&o.s, b.sizes, RG_BENCH_MAX_SIZES);
    b.rounds = o.s.rounds;
    b.ranks = o.s.ranks;
    size_t cells = (size_t)RG_OP_COUNT * b.nsizes * b.rounds * b.ranks;
    b.t = malloc(cells * sizeof(*b.t));
    b.wrong = malloc((size_t)RG_OP_COUNT * b.nsizes * b.ranks * sizeof(*b.wrong));
    if (!b.t || !b.wrong) {
        fprintf(stderr, "railguard bench: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < cells; i++)
        b.t[i] = NAN;
    for (size_t i = 0; i < (size_t)RG_OP_COUNT * b.nsizes * b.ranks; i++)
        b.wrong[i] = -1;
    fflush(NULL);
    double t0 = rg_now_s();
    bool failed = false;
    memset(ps, 0, sizeof(ps));
    for (int r = 0; r < o.s.ranks; r++) {
        int fds[2];
        ps[r].fd = -1;
        if (pipe2(fds, O_CLOEXEC)) {
            snprintf(ps[r].error, sizeof(ps[r].error), "pipe: %s", strerror(errno));
            failed = true;
            break;
        }
        ps[r].pid = fork();
        if (ps[r].pid == 0)
            start_rank(&o, r, devfile, coord, fds[1]);
        close(fds[1]);
        ps[r].fd = fds[0];
        if (ps[r].pid < 0) {
            snprintf(ps[r].error, sizeof(ps[r].error), "fork: %s", strerror(errno));
            close(fds[0]);
            ps[r].fd = -1;
            failed = true;
            break;
        }
    }
    if (collect(&b, &o, ps, o.s.ranks))
        failed = true;
    /* Every status descriptor is closed: a rank that lingers past the deadline is killed. */
    double until = rg_now_s() + o.s.timeout_s + 10;
    for (int r = 0; r < o.s.ranks; r++) {
        if (ps[r].pid <= 0)
            continue;
        while (waitpid(ps[r].pid, &ps[r].status, WNOHANG) == 0) {
            if (rg_now_s() > until) {
                kill(ps[r].pid, SIGKILL);
                waitpid(ps[r].pid, &ps[r].status, 0);
                snprintf(ps[r].error, sizeof(ps[r].error), "did not exit: killed");
                break;
            }
            usleep(10000);
        }
        if (!ps[r].done || !WIFEXITED(ps[r].status) || WEXITSTATUS(ps[r].status)) {
            failed = true;
            if (!ps[r].error[0])
                snprintf(ps[r].error, sizeof(ps[r].error), "ended (%s %d) without finishing",
                         WIFSIGNALED(ps[r].status) ? "signal" : "exit",
                         WIFSIGNALED(ps[r].status) ? WTERMSIG(ps[r].status)
                                                   : WEXITSTATUS(ps[r].status));
        }
    }
    if (o.use_shim)
        for (int r = 0; r < o.s.ranks; r++) {
            /* The shim must have been there: its events are the evidence. */
            char ev[PATH_MAX + 32];
            snprintf(ev, sizeof(ev), "%s/rank%d.events.jsonl", o.out, r);
            if (!rg_file_has(ev, NULL)) {
                failed = true;
                if (!ps[r].error[0])
                    snprintf(ps[r].error, sizeof(ps[r].error),
                             "the shim wrote no events: it was not preloaded");
            }
        }
    rc = report(&b, &o, &tp, ps, rg_now_s() - t0, failed);
    for (int r = 0; r < o.s.ranks; r++)
        if (ps[r].error[0])
            fprintf(stderr, "railguard bench: rank %d: %s (log: %s/rank%d.log)\n", r, ps[r].error,
                    o.out, r);
    if (!rc && !o.keep_out) {
        /* Our own mkdtemp directory, nothing in it but what this bench and its ranks wrote. */
        char f[PATH_MAX + 32];
        for (int r = 0; r < o.s.ranks; r++) {
            snprintf(f, sizeof(f), "%s/rank%d.log", o.out, r);
            unlink(f);
            snprintf(f, sizeof(f), "%s/rank%d.events.jsonl", o.out, r);
            unlink(f);
        }
        unlink(devfile);
        snprintf(f, sizeof(f), "%s/plan", o.out);
        unlink(f);
        rmdir(o.out);
    }
    free(b.t);
    free(b.wrong);
    return rc;
}
