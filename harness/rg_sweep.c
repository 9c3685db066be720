/* SPDX-License-Identifier: MIT */
/*
 * `railguard sweep`: every fault point of a scenario, not one lucky one. A counting run (the
 * scenario without its faults) says how many completions, posts and polls each rank saw, by
 * operation; then the scenario runs once per point with one fault injected exactly there, and
 * each point gets the per-rank verdicts. A point passes when no rank returned wrong data, hung,
 * crashed or erred without cause (ok and detected are both fine); a point whose fault did not
 * fire proves nothing and is counted apart. Every failing point is run again in a fresh
 * process before it is reported, with the command that reproduces it.
 *
 * This first slice runs each point as its own `railguard run`: correct, and about one point a
 * second in the guest. Points are numbered by the rank's n-th matching event over the whole
 * run (the plan grammar's nth); anchoring them to a step is for a later slice.
 */
#include "rg_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SW__POINTS_MAX 4096

static const char *const kind_names[RG_SW_KINDS] = {
    [RG_SW_ERROR] = "error", [RG_SW_NEGPOLL] = "negpoll", [RG_SW_LOSE] = "lose",
    [RG_SW_NOMEM] = "nomem", [RG_SW_DELAY] = "delay",
};

const char *rg_sweep_kind_name(rg_sw_kind k)
{
    return (unsigned)k < RG_SW_KINDS ? kind_names[k] : "?";
}

int rg_sweep_kind_of(const char *name)
{
    for (int k = 0; k < RG_SW_KINDS; k++)
        if (name && !strcmp(name, kind_names[k]))
            return k;
    return -1;
}

/* How many events rule kind/op would count on a rank, from its counting run. */
static uint64_t events_of(const rg_sweep_spec *sp, enum fi_op op, const rg_evidence *e)
{
    switch (sp->kind) {
    case RG_SW_ERROR:
        return e->op_cqe[op];
    case RG_SW_NEGPOLL:
        return e->polls;
    case RG_SW_NOMEM: {
        uint64_t n = 0;
        for (int o = FI_OP_SEND; o <= FI_OP_ATOMIC; o++)
            n += o == FI_OP_RECV ? 0 : e->op_posts[o];
        return n;
    }
    case RG_SW_LOSE:
    case RG_SW_DELAY:
        return e->op_posts[op];
    case RG_SW_KINDS:
        break;
    }
    return 0;
}

/* The ops a kind is swept over: the one asked for, or the kind's own. */
static int ops_of(const rg_sweep_spec *sp, enum fi_op *ops)
{
    if (sp->kind == RG_SW_NEGPOLL || sp->kind == RG_SW_NOMEM) {
        ops[0] = FI_OP_ANY;
        return 1;
    }
    if (sp->op != FI_OP_ANY) {
        ops[0] = sp->op;
        return 1;
    }
    switch (sp->kind) {
    case RG_SW_ERROR:
        ops[0] = FI_OP_RECV;
        ops[1] = FI_OP_SEND;
        return 2;
    case RG_SW_LOSE:
        ops[0] = FI_OP_SEND;
        return 1;
    default:
        ops[0] = FI_OP_RECV;
        return 1;
    }
}

static void point_rule(const rg_sweep_spec *sp, rg_sweep_point *p)
{
    char *r = p->rule;
    size_t n = sizeof(p->rule);
    switch (sp->kind) {
    case RG_SW_ERROR:
        snprintf(r, n, "error status=%s op=%s rank=%d nth=%llu", sp->status, fi_op_name(p->op),
                 p->rank, (unsigned long long)p->nth);
        break;
    case RG_SW_NEGPOLL:
        snprintf(r, n, "negpoll rank=%d nth=%llu", p->rank, (unsigned long long)p->nth);
        break;
    case RG_SW_LOSE:
        snprintf(r, n, "lose op=%s rank=%d nth=%llu", fi_op_name(p->op), p->rank,
                 (unsigned long long)p->nth);
        break;
    case RG_SW_NOMEM:
        snprintf(r, n, "nomem verb=post_send rank=%d nth=%llu", p->rank,
                 (unsigned long long)p->nth);
        break;
    case RG_SW_DELAY:
        snprintf(r, n, "delay ms=%llu op=%s rank=%d nth=%llu", (unsigned long long)sp->ms,
                 fi_op_name(p->op), p->rank, (unsigned long long)p->nth);
        break;
    case RG_SW_KINDS:
        r[0] = '\0';
        break;
    }
}

int rg_sweep_plan(const rg_sweep_spec *sp, const rg_evidence *ev, int ranks, rg_sweep_point *pts,
                  int cap, char *err, size_t errlen)
{
    enum fi_op ops[2];
    int nops = ops_of(sp, ops), n = 0;
    for (int r = 0; r < ranks; r++) {
        if (sp->rank >= 0 && r != sp->rank)
            continue;
        for (int o = 0; o < nops; o++) {
            uint64_t events = events_of(sp, ops[o], &ev[r]);
            uint64_t stride = sp->stride ? sp->stride : 1;
            /* At most `max` points a series, spread evenly over it. */
            if (sp->max && events / stride > sp->max)
                stride = (events + sp->max - 1) / sp->max;
            for (uint64_t k = 1; k <= events; k += stride) {
                if (n == cap) {
                    snprintf(err, errlen,
                             "more than %d points: raise --stride or lower --max (%llu events "
                             "on rank %d)",
                             cap, (unsigned long long)events, r);
                    return -1;
                }
                pts[n] = (rg_sweep_point){.rank = r, .op = ops[o], .nth = k};
                point_rule(sp, &pts[n]);
                n++;
            }
        }
    }
    return n;
}

/* --- the driver ---------------------------------------------------------------------------- */

struct sweep_opts {
    char self[PATH_MAX];
    const char *pass[16]; /* run options passed through: --transport X, --shim X, ... */
    int npass;
    char out[PATH_MAX];
    rg_sweep_spec spec;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: railguard sweep --fault error|negpoll|lose|nomem|delay [--op send|recv|write]\n"
            "                       [--status NAME] [--ms D] [--rank R] [--stride K] [--max N]\n"
            "                       [--transport SO] [--shim SO] [--devices a,b] [--seed N]\n"
            "                       [--out DIR] SCENARIO\n");
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "railguard sweep: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

static int parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || !*v || *end || *v == '-' || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int parse_sweep(int argc, char **argv, struct sweep_opts *o, int *first)
{
    static const struct option longs[] = {{"fault", required_argument, NULL, 'f'},
                                          {"op", required_argument, NULL, 'p'},
                                          {"status", required_argument, NULL, 'S'},
                                          {"ms", required_argument, NULL, 'm'},
                                          {"rank", required_argument, NULL, 'r'},
                                          {"stride", required_argument, NULL, 'k'},
                                          {"max", required_argument, NULL, 'M'},
                                          {"transport", required_argument, NULL, 't'},
                                          {"shim", required_argument, NULL, 's'},
                                          {"devices", required_argument, NULL, 'd'},
                                          {"seed", required_argument, NULL, 'e'},
                                          {"out", required_argument, NULL, 'o'},
                                          {NULL, 0, NULL, 0}};
    uint64_t x;
    int c;
    o->spec =
        (rg_sweep_spec){.kind = RG_SW_KINDS, .rank = -1, .op = FI_OP_ANY, .max = 100, .ms = 50};
    snprintf(o->spec.status, sizeof(o->spec.status), "WR_FLUSH_ERR");
    snprintf(o->out, sizeof(o->out), "railguard-sweep");
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'f': {
            int k = rg_sweep_kind_of(optarg);
            if (k < 0)
                return bad("--fault: one of error, negpoll, lose, nomem, delay, not '%s'", optarg);
            o->spec.kind = (rg_sw_kind)k;
            break;
        }
        case 'p':
            if (!strcmp(optarg, "send"))
                o->spec.op = FI_OP_SEND;
            else if (!strcmp(optarg, "recv"))
                o->spec.op = FI_OP_RECV;
            else if (!strcmp(optarg, "write"))
                o->spec.op = FI_OP_WRITE;
            else
                return bad("--op: send, recv or write, not '%s'", optarg);
            break;
        case 'S':
            if (strlen(optarg) >= sizeof(o->spec.status))
                return bad("--status: too long '%s'", optarg);
            snprintf(o->spec.status, sizeof(o->spec.status), "%s", optarg);
            break;
        case 'm':
            if (parse_u64(optarg, 1, 3600000, &o->spec.ms))
                return bad("--ms: 1..3600000, not '%s'", optarg);
            break;
        case 'r':
            if (parse_u64(optarg, 0, RG_MAX_RANKS - 1, &x))
                return bad("--rank: 0..63, not '%s'", optarg);
            o->spec.rank = (int)x;
            break;
        case 'k':
            if (parse_u64(optarg, 1, UINT32_MAX, &o->spec.stride))
                return bad("--stride: a positive number, not '%s'", optarg);
            break;
        case 'M':
            if (parse_u64(optarg, 1, SW__POINTS_MAX, &o->spec.max))
                return bad("--max: 1..4096 points a series, not '%s'", optarg);
            break;
        case 't':
        case 's':
        case 'd':
        case 'e':
            if (o->npass + 2 > (int)(sizeof(o->pass) / sizeof(o->pass[0])))
                return bad("too many options '%s'", optarg);
            o->pass[o->npass++] = c == 't'   ? "--transport"
                                  : c == 's' ? "--shim"
                                  : c == 'd' ? "--devices"
                                             : "--seed";
            o->pass[o->npass++] = optarg;
            break;
        case 'o':
            if (strlen(optarg) + 64 >= sizeof(o->out))
                return bad("--out: too long '%s'", optarg);
            snprintf(o->out, sizeof(o->out), "%s", optarg);
            break;
        default:
            usage(stderr);
            return bad("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (o->spec.kind == RG_SW_KINDS)
        return bad("%s", "--fault KIND is required");
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    /* The status is the plan library's to check: one rule, parsed as a run would. */
    char rule[96], err[256];
    struct fi_plan plan;
    snprintf(rule, sizeof(rule), "error status=%s", o->spec.status);
    if (fi_plan_parse(rule, "--status", &plan, err, sizeof(err)) != 0)
        return bad("%s", err);
    *first = optind;
    return 0;
}

/* Runs `railguard run` on one scenario file; its output to log. Returns its exit status. */
static int run_one(const struct sweep_opts *o, const char *scenario, const char *out,
                   const char *log, double limit_s)
{
    const char *argv[32];
    int a = 0;
    argv[a++] = o->self;
    argv[a++] = "run";
    for (int i = 0; i < o->npass; i++)
        argv[a++] = o->pass[i];
    argv[a++] = "--out";
    argv[a++] = out;
    argv[a++] = scenario;
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(o->self, (char *const *)argv);
        _exit(127);
    }
    double end = now_s() + limit_s;
    int st;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (now_s() > end) {
            /* The run has deadlines of its own; this one only guards against the harness. */
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        usleep(20000);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_scenario(const char *path, const rg_scenario *sc, const char *comment)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = rg_scenario_write(f, sc, comment);
    return fclose(f) != 0 || rc ? -1 : 0;
}

/* The verdicts of a run's one scenario, "ok,detected", and whether it fired / failed. */
struct outcome {
    bool ran, passed, fired;
    char verdicts[256];
    char first[1200];
};

static void read_outcome(const char *out, const char *name, struct outcome *oc)
{
    static rg_result r;
    char path[PATH_MAX + 256], err[256];
    memset(oc, 0, sizeof(*oc));
    snprintf(path, sizeof(path), "%s/000-%s/result.json", out, name);
    if (rg_result_read(&r, path, err, sizeof(err)) != 0) {
        snprintf(oc->first, sizeof(oc->first), "no result: %s", err);
        return;
    }
    oc->ran = true;
    /* A point whose fault did not fire reads NOT_EXERCISED: not fired, not a failure (how often
     * a rank polls depends on how long it waits, so a poll point may not be reached). */
    oc->passed = true;
    for (int k = 0; k < r.ranks; k++)
        oc->passed = oc->passed &&
                     (r.rank[k].verdict <= RG_V_KILLED || r.rank[k].verdict == RG_V_NOT_EXERCISED);
    for (int i = 0; i < r.nrules; i++)
        oc->fired = oc->fired || r.rule[i].fired > 0;
    size_t n = 0;
    for (int k = 0; k < r.ranks && n < sizeof(oc->verdicts); k++)
        n += (size_t)snprintf(oc->verdicts + n, sizeof(oc->verdicts) - n, "%s%s", k ? "," : "",
                              rg_verdict_name(r.rank[k].verdict));
    snprintf(oc->first, sizeof(oc->first), "%s", r.first);
}

int rg_sweep_main(int argc, char **argv)
{
    static struct sweep_opts o;
    static rg_scenario sc, pt;
    static rg_evidence ev[RG_MAX_RANKS];
    static rg_sweep_point pts[SW__POINTS_MAX];
    char err[1024], path[2 * PATH_MAX], out[PATH_MAX + 128], log[PATH_MAX + 128];
    int first = 0;

    int rc = parse_sweep(argc, argv, &o, &first);
    if (rc)
        return rc;
    ssize_t sl = readlink("/proc/self/exe", o.self, sizeof(o.self) - 1);
    if (sl <= 0)
        return bad("%s", "cannot find my own executable");
    o.self[sl] = '\0';
    const char *file = argv[first];
    if (rg_scenario_load(file, &sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (mkdir(o.out, 0755) != 0 && errno != EEXIST)
        return bad("--out: cannot create '%s'", o.out);
    snprintf(path, sizeof(path), "%s/points", o.out);
    mkdir(path, 0755);
    double limit = sc.deadline_s + 120;

    /* Counting run: the program alone, every rank expected ok. */
    pt = sc;
    pt.nfaults = 0;
    pt.faults[0] = '\0';
    for (int r = 0; r < pt.ranks; r++) {
        pt.expect[r] = RG_SC_EXPECT_OK;
        pt.expect_at[r] = RG_SC_AT_ANY;
    }
    snprintf(path, sizeof(path), "%s/count.yaml", o.out);
    snprintf(out, sizeof(out), "%s/count", o.out);
    snprintf(log, sizeof(log), "%s/count.log", o.out);
    if (write_scenario(path, &pt, "railguard sweep: the counting run") != 0)
        return bad("cannot write '%s'", path);
    int st = run_one(&o, path, out, log, limit);
    if (st != 0) {
        struct outcome oc;
        read_outcome(out, pt.name, &oc);
        fprintf(stderr,
                "railguard sweep: %s must pass without faults before it is swept; the counting "
                "run exited %d: %s (log %s)\n",
                file, st, oc.first[0] ? oc.first : "see the log", log);
        return 2;
    }
    for (int r = 0; r < sc.ranks; r++) {
        snprintf(path, sizeof(path), "%s/000-%s/rank%d.events.jsonl", out, pt.name, r);
        if (rg_evidence_read(path, &ev[r], err, sizeof(err)) != 0 || !ev[r].totals)
            return bad("the counting run left no summary in %s", path);
    }
    int n = rg_sweep_plan(&o.spec, ev, sc.ranks, pts, SW__POINTS_MAX, err, sizeof(err));
    if (n < 0)
        return bad("%s", err);
    printf("railguard sweep: %s, %d point(s) of %s; counting run:", file, n,
           rg_sweep_kind_name(o.spec.kind));
    for (int r = 0; r < sc.ranks; r++)
        printf(" rank %d %llu/%llu recv/send completions, %llu polls;", r,
               (unsigned long long)ev[r].op_cqe[FI_OP_RECV],
               (unsigned long long)ev[r].op_cqe[FI_OP_SEND], (unsigned long long)ev[r].polls);
    printf("\n");
    fflush(stdout);

    int failed = 0, fired = 0, flaky = 0, passed = 0;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        rg_sweep_point *p = &pts[i];
        pt = sc;
        pt.nfaults = 1;
        snprintf(pt.fault[0].rule, sizeof(pt.fault[0].rule), "%s", p->rule);
        pt.fault[0].line = 0;
        pt.fault[0].optional = false;
        snprintf(pt.faults, sizeof(pt.faults), "%s", p->rule);
        /* The sweep's oracle: wrong data, a hang, a crash or an error with no cause fail a
         * point; ok and detected are both a transport's right answer to a fault. */
        for (int r = 0; r < pt.ranks; r++) {
            pt.expect[r] = RG_SC_EXPECT_ANY;
            pt.expect_at[r] = RG_SC_AT_ANY;
        }
        char comment[256];
        snprintf(comment, sizeof(comment), "railguard sweep point %d of %s: %s", i + 1, file,
                 p->rule);
        snprintf(path, sizeof(path), "%s/points/%04d.yaml", o.out, i + 1);
        snprintf(out, sizeof(out), "%s/points/%04d", o.out, i + 1);
        snprintf(log, sizeof(log), "%s/points/%04d.log", o.out, i + 1);
        if (write_scenario(path, &pt, comment) != 0)
            return bad("cannot write '%s'", path);
        struct outcome oc;
        run_one(&o, path, out, log, limit);
        read_outcome(out, pt.name, &oc);
        if (oc.ran && !oc.passed) {
            /* Rechecked in a fresh process before it is reported. */
            struct outcome again;
            char out2[PATH_MAX + 160];
            snprintf(out2, sizeof(out2), "%s-recheck", out);
            snprintf(log, sizeof(log), "%s/points/%04d-recheck.log", o.out, i + 1);
            run_one(&o, path, out2, log, limit);
            read_outcome(out2, pt.name, &again);
            p->flaky = again.ran && again.passed;
        }
        p->fired = oc.fired;
        p->failed = !oc.ran || (!oc.passed && !p->flaky);
        fired += oc.fired;
        failed += p->failed;
        flaky += p->flaky;
        passed += oc.fired && !p->failed;
        printf("  %4d  %-48s %-40s %s\n", i + 1, p->rule, oc.ran ? oc.verdicts : "no result",
               p->failed  ? "FAIL"
               : p->flaky ? "flaky (passed when rechecked)"
               : oc.fired ? "pass"
                          : "not fired");
        if (p->failed)
            printf("        %s\n        reproduce: %s run --out %s/repro %s\n", oc.first, o.self,
                   o.out, path);
        double dt = now_s() - t0;
        if ((i + 1) % 10 == 0 || i + 1 == n)
            printf("sweep: %d/%d points, %d failing, %.2f points/s, ETA %.0f s\n", i + 1, n, failed,
                   (i + 1) / dt, (n - i - 1) * dt / (i + 1));
        fflush(stdout);
    }
    double dt = now_s() - t0;
    printf("sweep: %s %s: %d points in %.1f s (%.2f points/s): %d fired, %d not fired, %d "
           "failing, %d flaky\n",
           file, rg_sweep_kind_name(o.spec.kind), n, dt, n / (dt > 0 ? dt : 1), fired, n - fired,
           failed, flaky);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, n - passed - failed);
    return failed ? 1 : 0;
}
