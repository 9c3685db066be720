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
 * Points are planned (rg_sweep_plan.c) per step the worker marked, so a point means the same
 * thing when the program is cut. They run in batches of up to 500, each batch one `railguard
 * run` over the points' files (its preflight and start-up paid once), read live; a failing
 * point is then run again alone, and a confirmed one shrunk to the smallest program that
 * still fails the same way.
 */
#include "cmd/rg_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
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
#define RG_SW_SHRINK_TRIES 10

/* --- the driver ---------------------------------------------------------------------------- */

struct sweep_opts {
    char self[PATH_MAX];
    const char *pass[16]; /* run options passed through: --transport X, --shim X, ... */
    int npass;
    char out[PATH_MAX];
    rg_sweep_spec spec;
    int shrink_tries; /* candidates a failing point's shrinking may try (--shrink) */
    bool list;        /* --list: print the planned points after the counting run, run none */
    bool jobs;        /* -j above 1 or --exec-ranks: every rank exec'd, not forked from a server */
};

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

static int take_kind(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    int k = rg_sweep_kind_of(val);
    (void)opt;
    if (k < 0) {
        snprintf(
            why, len,
            "one of error, negpoll, lose, nomem, delay, kill, stop, late, swap_rails, not '%s'",
            val);
        return -1;
    }
    o->spec.kind = (rg_sw_kind)k;
    return 0;
}

static int take_op(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    (void)opt;
    if (!strcmp(val, "send"))
        o->spec.op = FI_OP_SEND;
    else if (!strcmp(val, "recv"))
        o->spec.op = FI_OP_RECV;
    else if (!strcmp(val, "write"))
        o->spec.op = FI_OP_WRITE;
    else
        return snprintf(why, len, "send, recv or write, not '%s'", val), -1;
    return 0;
}

static int take_status(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    (void)opt;
    if (strlen(val) >= sizeof(o->spec.status))
        return snprintf(why, len, "too long '%s'", val), -1;
    snprintf(o->spec.status, sizeof(o->spec.status), "%s", val);
    return 0;
}

/* A whole number lo..hi into the field the option names (spec.ms, spec.stride, spec.max, the
 * rank and the shrink tries). */
static int take_number(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    uint64_t x;
    if (parse_u64(val, (uint64_t)opt->lo, (uint64_t)opt->hi, &x)) {
        snprintf(why, len, "%.0f..%.0f, not '%s'", opt->lo, opt->hi, val);
        return -1;
    }
    if (!strcmp(opt->name, "ms"))
        o->spec.ms = x;
    else if (!strcmp(opt->name, "stride"))
        o->spec.stride = x;
    else if (!strcmp(opt->name, "max"))
        o->spec.max = x;
    else if (!strcmp(opt->name, "rank"))
        o->spec.rank = (int)x;
    else
        o->shrink_tries = (int)x;
    return 0;
}

/* An option railguard run takes as it is: passed through to every run of the sweep. */
static int take_pass(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    uint64_t x;
    if (opt->letter == 'j') {
        if (parse_u64(val, 1, 64, &x))
            return snprintf(why, len, "1..64 points at once, not '%s'", val), -1;
        o->jobs |= x > 1;
    }
    if (o->npass + 2 > (int)(sizeof(o->pass) / sizeof(o->pass[0])))
        return snprintf(why, len, "too many options '%s'", val), -1;
    static char flags[8][24]; /* pass holds 8 pairs */
    int slot = o->npass / 2;
    snprintf(flags[slot], sizeof(flags[slot]), "--%s", opt->name);
    o->pass[o->npass] = flags[slot];
    o->pass[o->npass + 1] = val;
    o->npass += 2;
    return 0;
}

#define SO(f) offsetof(struct sweep_opts, f)
static const rg_opt sweep_table[] = {
    {.name = "fault",
     .kind = RG_OPT_CALL,
     .arg = "KIND",
     .help =
         "The fault every point injects: error, negpoll, lose, nomem, delay, kill, stop, late or "
         "swap_rails (required).",
     .call = take_kind},
    {.name = "op",
     .kind = RG_OPT_CALL,
     .arg = "send|recv|write",
     .help = "Only events of this operation (default: the kind's own).",
     .call = take_op},
    {.name = "status",
     .kind = RG_OPT_CALL,
     .arg = "NAME",
     .help = "error's completion status (default WR_FLUSH_ERR).",
     .call = take_status},
    {.name = "ms",
     .kind = RG_OPT_CALL,
     .arg = "D",
     .help = "delay's and late's milliseconds (default 50).",
     .lo = 1,
     .hi = 3600000,
     .call = take_number},
    {.name = "rank",
     .kind = RG_OPT_CALL,
     .arg = "R",
     .help = "Only rank R's events (default: every rank).",
     .hi = RG_MAX_RANKS - 1,
     .call = take_number},
    {.name = "stride",
     .kind = RG_OPT_CALL,
     .arg = "K",
     .help = "Every K-th event (default 1).",
     .lo = 1,
     .hi = UINT32_MAX,
     .call = take_number},
    {.name = "max",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "At most N points a (rank, op) series, spread out (default 100).",
     .lo = 1,
     .hi = SW__POINTS_MAX,
     .call = take_number},
    {.name = "whole",
     .kind = RG_OPT_FLAG,
     .help = "Points counted over the whole run, even where the program marks its steps.",
     .off = SO(spec.whole)},
    {.name = "shrink",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Candidates a failing point's shrinking may try (default 10; 0: none).",
     .hi = 100,
     .call = take_number},
    {.name = "jobs",
     .letter = 'j',
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Points at once (default 1); passed to railguard run.",
     .call = take_pass},
    {.name = "list",
     .kind = RG_OPT_FLAG,
     .help = "Print the planned points after the counting run; run none.",
     .off = SO(list)},
    {.name = "exec-ranks",
     .kind = RG_OPT_FLAG,
     .help = "Every rank exec'd, as railguard run does, not forked from a server.",
     .off = SO(jobs)},
    {.name = "transport",
     .kind = RG_OPT_CALL,
     .arg = "SO",
     .help = "Passed to railguard run.",
     .call = take_pass},
    {.name = "shim",
     .kind = RG_OPT_CALL,
     .arg = "SO",
     .help = "Passed to railguard run.",
     .call = take_pass},
    {.name = "devices",
     .kind = RG_OPT_CALL,
     .arg = "DEV,...",
     .help = "Passed to railguard run.",
     .call = take_pass},
    {.name = "seed",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Passed to railguard run.",
     .call = take_pass},
    {.name = "out",
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "The counting run, every point's run and the shrunk reproducers (default "
             "railguard-sweep).",
     .off = SO(out),
     .len = sizeof(((struct sweep_opts *)0)->out) - 64},
};
#undef SO

const rg_cli rg_sweep_cli = {
    .cmd = "sweep",
    .synopsis = "--fault KIND [options] SCENARIO",
    .about = "Every fault point of a scenario: a counting run finds each rank's events per step, "
             "then one "
             "run per point injects the fault at exactly that event, and each failing point is "
             "shrunk to "
             "the smallest scenario that still fails the same way.",
    .opts = sweep_table,
    .nopts = (int)(sizeof(sweep_table) / sizeof(sweep_table[0])),
};

static int parse_sweep(int argc, char **argv, struct sweep_opts *o, int *first)
{
    o->spec =
        (rg_sweep_spec){.kind = RG_SW_KINDS, .rank = -1, .op = FI_OP_ANY, .max = 100, .ms = 50};
    snprintf(o->spec.status, sizeof(o->spec.status), "WR_FLUSH_ERR");
    snprintf(o->out, sizeof(o->out), "railguard-sweep");
    o->shrink_tries = RG_SW_SHRINK_TRIES;
    int rc = rg_cli_parse(&rg_sweep_cli, argc, argv, o, first);
    if (rc)
        return rc == 1 ? -1 : rc;
    if (o->spec.kind == RG_SW_KINDS)
        return bad("%s", "--fault KIND is required");
    if (*first != argc - 1)
        return bad("%s", *first >= argc ? "no SCENARIO: name one file after the options"
                                        : "one SCENARIO file, after the options");
    /* The status is the plan library's to check: one rule, parsed as a run would. */
    char rule[96], err[256];
    struct fi_plan plan;
    snprintf(rule, sizeof(rule), "error status=%s", o->spec.status);
    if (fi_plan_parse(rule, "--status", &plan, err, sizeof(err)) != 0)
        return bad("%s", err);
    return 0;
}

/* "railguard run [passed options] --out OUT" into argv; returns how many words. */
static int run_args(const struct sweep_opts *o, const char *out, const char **argv)
{
    int a = 0;
    argv[a++] = o->self;
    argv[a++] = "run";
    for (int i = 0; i < o->npass; i++)
        argv[a++] = o->pass[i];
    argv[a++] = "--out";
    argv[a++] = out;
    return a;
}

/* Runs `railguard run` on one scenario file; its output to log. Returns its exit status. */
static int run_one(const struct sweep_opts *o, const char *scenario, const char *out,
                   const char *log, double limit_s)
{
    const char *argv[32];
    int a = run_args(o, out, argv);
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
    double end = rg_now_s() + limit_s;
    int st;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (rg_now_s() > end) {
            /* The run has deadlines of its own; this one only guards against the harness. */
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        usleep(20000);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * The points of one batch, [lo, hi), run by one `railguard run` over their files: its
 * preflight and start-up are paid once a batch, not once a point. Its live lines (one per
 * scenario as it ends) are read as they come, so each point is judged and printed at once.
 * Returns 0, or -1 when the run could not be started or outlived every deadline it had.
 */
#define SW__BATCH 500
struct batch {
    const struct sweep_opts *o;
    int lo, hi;
    double limit_s;
    void (*done)(void *arg, int point, const char *result_dir);
    void *arg;
};

static int run_batch(const struct batch *b)
{
    const struct sweep_opts *o = b->o;
    static char files[SW__BATCH][PATH_MAX + 32];
    const char *argv[SW__BATCH + 40];
    char out[PATH_MAX + 64], log[PATH_MAX + 64];
    int fds[2];

    /* parse_sweep keeps --out 64 bytes short of PATH_MAX: the precisions never cut. */
    snprintf(out, sizeof(out), "%.4030s/run-%04d", o->out, b->lo + 1);
    snprintf(log, sizeof(log), "%.4030s/run-%04d.log", o->out, b->lo + 1);
    int a = run_args(o, out, argv);
    /* A batch's points share one program: ranks forked from a server started once per batch,
     * not exec'd per point. A failing point is rechecked and shrunk by run_one, fresh. */
    if (!o->jobs)
        argv[a++] = "--fork-server";
    for (int i = b->lo; i < b->hi; i++) {
        snprintf(files[i - b->lo], sizeof(files[0]), "%.4030s/points/%04d.yaml", o->out, i + 1);
        argv[a++] = files[i - b->lo];
    }
    argv[a] = NULL;
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            dup2(fd, 2);
        dup2(fds[1], 1);
        close(fds[0]);
        execv(o->self, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    FILE *lf = fopen(log, "a");
    char buf[8192];
    size_t len = 0;
    double end = rg_now_s() + b->limit_s;
    int rc = 0;
    for (;;) {
        struct pollfd pf = {.fd = fds[0], .events = POLLIN};
        if (rg_now_s() > end) {
            /* The run has deadlines of its own; this one only guards against the harness. */
            kill(pid, SIGKILL);
            rc = -1;
            break;
        }
        if (poll(&pf, 1, 1000) <= 0)
            continue;
        ssize_t n = read(fds[0], buf + len, sizeof(buf) - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *start = buf, *nl;
        while ((nl = strchr(start, '\n'))) {
            *nl = '\0';
            if (lf)
                fprintf(lf, "%s\n", start);
            int point;
            /* "PASS  point-0007   2 ranks ...": the scenario's name is the point's. */
            if ((!strncmp(start, "PASS  ", 6) || !strncmp(start, "FAIL  ", 6)) &&
                sscanf(start + 6, "point-%d", &point) == 1 && point > b->lo && point <= b->hi) {
                char dir[PATH_MAX + 128];
                snprintf(dir, sizeof(dir), "%s/%03d-point-%04d", out, point - 1 - b->lo, point);
                b->done(b->arg, point - 1, dir);
            }
            start = nl + 1;
        }
        len = strlen(start);
        memmove(buf, start, len + 1);
        if (len == sizeof(buf) - 1)
            len = 0;
    }
    close(fds[0]);
    if (lf)
        fclose(lf);
    int st;
    waitpid(pid, &st, 0);
    return rc;
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
    rg_verdict worst; /* the highest verdict of any rank */
    char verdicts[256];
    char first[1200];
};

/*
 * The outcome of the run in scenario directory dir. With init_only (swap_rails points), a rank
 * that detected the fault must have done so in init: crossed rails found by a later timeout
 * are a broken check with a lucky fallback (exo#2160), not a right answer.
 */
static void read_outcome(const char *dir, struct outcome *oc, bool init_only)
{
    static rg_result r;
    char path[PATH_MAX + 256], err[256];
    memset(oc, 0, sizeof(*oc));
    snprintf(path, sizeof(path), "%s/result.json", dir);
    if (rg_result_read(&r, path, err, sizeof(err)) != 0) {
        snprintf(oc->first, sizeof(oc->first), "no result: %s", err);
        return;
    }
    oc->ran = true;
    /* A point whose fault did not fire reads NOT_EXERCISED: not fired, not a failure (how often
     * a rank polls depends on how long it waits, so a poll point may not be reached). */
    oc->passed = true;
    for (int k = 0; k < r.ranks; k++)
        oc->passed =
            oc->passed &&
            (r.rank[k].verdict <= RG_V_KILLED || r.rank[k].verdict == RG_V_NOT_EXERCISED) &&
            !(init_only && r.rank[k].verdict == RG_V_DETECTED && r.rank[k].step >= 0);
    for (int i = 0; i < r.nrules; i++)
        oc->fired = oc->fired || r.rule[i].fired > 0;
    for (int k = 0; k < r.ranks; k++)
        if (r.rank[k].verdict > oc->worst)
            oc->worst = r.rank[k].verdict;
    size_t n = 0;
    for (int k = 0; k < r.ranks && n < sizeof(oc->verdicts); k++)
        n += (size_t)snprintf(oc->verdicts + n, sizeof(oc->verdicts) - n, "%s%s", k ? "," : "",
                              rg_verdict_name(r.rank[k].verdict));
    snprintf(oc->first, sizeof(oc->first), "%s", r.first);
}

/* The sweep's progress, shared by the batch's callback and the rechecks. */
struct sweep_state {
    const struct sweep_opts *o;
    rg_sweep_point *pts;
    int n, done, failed, fired, flaky, passed;
    double t0;
    bool seen[SW__POINTS_MAX];    /* the batch's run reported it */
    bool suspect[SW__POINTS_MAX]; /* it failed there: rechecked after the batch */
};

/* A point's outcome (or a shrinking candidate's), judged as the sweep's kind asks. */
static void point_outcome(const struct sweep_state *ss, const char *dir, struct outcome *oc)
{
    read_outcome(dir, oc, ss->o->spec.kind == RG_SW_SWAP);
}

static void progress(struct sweep_state *ss)
{
    ss->done++;
    double dt = rg_now_s() - ss->t0;
    if (ss->done % 10 == 0 || ss->done == ss->n)
        printf("sweep: %d/%d points, %d failing, %.2f points/s, ETA %.0f s\n", ss->done, ss->n,
               ss->failed, ss->done / dt, (ss->n - ss->done) * dt / ss->done);
    fflush(stdout);
}

static void point_line(const rg_sweep_point *p, int i, const struct outcome *oc, const char *what)
{
    printf("  %4d  %-48s %-40s %s\n", i + 1, p->rule, oc->ran ? oc->verdicts : "no result", what);
}

/* A point the batch's run finished: passing and not-fired ones are final, failures wait. */
static void point_done(void *arg, int i, const char *dir)
{
    struct sweep_state *ss = arg;
    rg_sweep_point *p = &ss->pts[i];
    struct outcome oc;
    point_outcome(ss, dir, &oc);
    ss->seen[i] = true;
    p->fired = oc.fired;
    if (oc.ran && !oc.passed) {
        ss->suspect[i] = true;
        point_line(p, i, &oc, "failed: rechecked after this batch");
        fflush(stdout);
        return;
    }
    ss->fired += oc.fired;
    ss->passed += oc.ran && oc.fired;
    p->failed = !oc.ran;
    ss->failed += p->failed;
    point_line(p, i, &oc, !oc.ran ? "FAIL" : oc.fired ? "pass" : "not fired");
    if (!oc.ran)
        printf("        %s\n", oc.first);
    progress(ss);
}

/* Runs candidate k of point i's shrinking; true when it fails as the point did, fault fired. */
static bool try_candidate(struct sweep_state *ss, int i, int k, rg_scenario *cand, rg_verdict worst,
                          double limit)
{
    const struct sweep_opts *o = ss->o;
    char path[PATH_MAX + 64], out[PATH_MAX + 64], log[PATH_MAX + 64], dir[2 * PATH_MAX];
    struct outcome oc;
    snprintf(cand->name, sizeof(cand->name), "point-%04d-shrink-%d", i + 1, k);
    snprintf(path, sizeof(path), "%.4030s/points/%04d-shrink-%d.yaml", o->out, i + 1, k);
    snprintf(out, sizeof(out), "%.4030s/points/%04d-shrink-%d", o->out, i + 1, k);
    snprintf(log, sizeof(log), "%.4030s/points/%04d-shrink-%d.log", o->out, i + 1, k);
    if (write_scenario(path, cand, "railguard sweep: a shrinking candidate") != 0)
        return false;
    run_one(o, path, out, log, limit);
    snprintf(dir, sizeof(dir), "%s/000-%s", out, cand->name);
    point_outcome(ss, dir, &oc);
    return oc.ran && !oc.passed && oc.fired && oc.worst == worst;
}

/*
 * A confirmed failure, shrunk: first to its anchored step alone, then by halving counts, each
 * candidate kept only if it still fails with the same worst verdict and its fault fired. The
 * smallest is written as points/NNNN-shrunk.yaml.
 */
static void shrink(struct sweep_state *ss, int i, rg_verdict worst, double limit)
{
    static rg_scenario cur, cand;
    const struct sweep_opts *o = ss->o;
    char err[512], path[PATH_MAX + 64];
    rg_sweep_point *p = &ss->pts[i];
    snprintf(path, sizeof(path), "%.4030s/points/%04d.yaml", o->out, i + 1);
    if (rg_scenario_load(path, &cur, err, sizeof(err)) != 0) {
        printf("        not shrunk: %s\n", err);
        return;
    }
    int k = 0, kept = 0;
    if (rg_sweep_shrink_step(&cur, p, &cand) == 0 &&
        try_candidate(ss, i, ++k, &cand, worst, limit)) {
        cur = cand;
        kept++;
    }
    while (k < o->shrink_tries && rg_sweep_shrink_count(&cur, &cand) == 0 &&
           try_candidate(ss, i, ++k, &cand, worst, limit)) {
        cur = cand;
        kept++;
    }
    if (!kept) {
        printf("        no smaller program fails the same way (%d candidate(s) tried)\n", k);
        return;
    }
    snprintf(cur.name, sizeof(cur.name), "point-%04d-shrunk", i + 1);
    snprintf(path, sizeof(path), "%.4030s/points/%04d-shrunk.yaml", o->out, i + 1);
    if (write_scenario(path, &cur, "railguard sweep: the smallest program found that fails") != 0)
        return;
    size_t most = 0;
    for (int s = 0; s < cur.nops; s++)
        most = cur.ops[s].count > most ? cur.ops[s].count : most;
    printf("        shrunk (%d of %d candidate(s) kept): %d step(s), count <= %zu, '%s': %s\n",
           kept, k, cur.nops, most, cur.fault[0].rule, path);
}

/* A failing (or unreported) point, run again alone in a fresh process before it is reported. */
static void recheck(struct sweep_state *ss, int i, double limit)
{
    const struct sweep_opts *o = ss->o;
    rg_sweep_point *p = &ss->pts[i];
    char path[PATH_MAX + 64], out[PATH_MAX + 64], log[PATH_MAX + 64], dir[PATH_MAX + 128];
    struct outcome oc;
    snprintf(path, sizeof(path), "%s/points/%04d.yaml", o->out, i + 1);
    snprintf(out, sizeof(out), "%s/points/%04d-recheck", o->out, i + 1);
    snprintf(log, sizeof(log), "%s/points/%04d-recheck.log", o->out, i + 1);
    snprintf(dir, sizeof(dir), "%s/000-point-%04d", out, i + 1);
    run_one(o, path, out, log, limit);
    point_outcome(ss, dir, &oc);
    bool was_seen = ss->seen[i];
    p->fired = p->fired || oc.fired;
    /* Failed in the batch and passes alone: flaky. Unreported by the batch: this run decides. */
    p->flaky = was_seen && oc.ran && oc.passed;
    p->failed = !p->flaky && !(oc.ran && oc.passed);
    ss->fired += p->fired;
    ss->failed += p->failed;
    ss->flaky += p->flaky;
    ss->passed += p->fired && !p->failed;
    point_line(p, i, &oc,
               p->failed  ? "FAIL"
               : p->flaky ? "flaky (passed when rechecked)"
               : p->fired ? "pass"
                          : "not fired");
    if (p->failed) {
        char cmd[3 * PATH_MAX], repro[PATH_MAX + 8];
        snprintf(repro, sizeof(repro), "%s/repro", o->out);
        cmd[0] = '\0';
        const char *const words[] = {o->self, "run", "--out", repro, path};
        for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
            rg_shell_word(cmd, sizeof(cmd), words[w]);
        printf("        %s\n        reproduce:%s\n", oc.first, cmd);
        if (oc.ran)
            shrink(ss, i, oc.worst, limit);
    }
    progress(ss);
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
        return rc < 0 ? 0 : rc; /* -1: --help */
    ssize_t sl = readlink("/proc/self/exe", o.self, sizeof(o.self) - 1);
    if (sl <= 0)
        return bad("%s", "cannot find my own executable");
    o.self[sl] = '\0';
    const char *file = argv[first];
    if (rg_scenario_load(file, &sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (o.spec.kind == RG_SW_SWAP && sc.rails < 2)
        return bad("%s: swap_rails needs a scenario with 2 or more rails (it has %d)", file,
                   sc.rails);
    if (rg_mkdirs(o.out) != 0)
        return bad("--out: cannot create '%s': %s", o.out, strerror(errno));
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
        pt.expect_cls[r] = 0;
    }
    snprintf(path, sizeof(path), "%s/count.yaml", o.out);
    snprintf(out, sizeof(out), "%s/count", o.out);
    snprintf(log, sizeof(log), "%s/count.log", o.out);
    if (write_scenario(path, &pt, "railguard sweep: the counting run") != 0)
        return bad("cannot write '%s'", path);
    int st = run_one(&o, path, out, log, limit);
    if (st != 0) {
        /* Like a failing point, a failing counting run is run again before it counts: once
         * in a while (in the guest, every few dozen runs) a rank stalls for seconds. */
        struct outcome oc;
        char dir[2 * PATH_MAX];
        snprintf(dir, sizeof(dir), "%s/000-%s", out, pt.name);
        read_outcome(dir, &oc, false);
        snprintf(out, sizeof(out), "%.4030s/count-again", o.out);
        snprintf(log, sizeof(log), "%.4030s/count-again.log", o.out);
        int again = run_one(&o, path, out, log, limit);
        if (again != 0) {
            fprintf(stderr,
                    "railguard sweep: %s must pass without faults before it is swept; the "
                    "counting run exited %d twice: %s (log %s)\n",
                    file, again, oc.first[0] ? oc.first : "see the log", log);
            return 2;
        }
        printf("railguard sweep: note: the counting run failed once and passed when run again "
               "(flaky): %s\n",
               oc.first[0] ? oc.first : "see count.log");
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
    if (o.list) {
        /* How big a sweep is, before it is paid for: one line a point, the rule it arms. */
        for (int i = 0; i < n; i++)
            printf("%5d  %s\n", i + 1, pts[i].rule);
        printf("sweep: %s %s: %d points planned, none run (--list)\n", file,
               rg_sweep_kind_name(o.spec.kind), n);
        return 0;
    }
    fflush(stdout);

    /* Every point's file first: a batch's `railguard run` takes them all at once. */
    for (int i = 0; i < n; i++) {
        rg_sweep_point *p = &pts[i];
        pt = sc;
        snprintf(pt.name, sizeof(pt.name), "point-%04d", i + 1);
        pt.nfaults = 1;
        snprintf(pt.fault[0].rule, sizeof(pt.fault[0].rule), "%s", p->rule);
        pt.fault[0].line = 0;
        pt.fault[0].optional = false;
        snprintf(pt.faults, sizeof(pt.faults), "%s", p->rule);
        /* The sweep's oracle: wrong data, a hang, a crash or an error with no cause fail a
         * point; ok, detected and (for kill and stop) killed are all right answers. */
        for (int r = 0; r < pt.ranks; r++) {
            pt.expect[r] = RG_SC_EXPECT_ANY;
            pt.expect_at[r] = RG_SC_AT_ANY;
            pt.expect_cls[r] = 0;
        }
        char comment[256];
        snprintf(comment, sizeof(comment), "railguard sweep point %d of %s: %s", i + 1, file,
                 p->rule);
        snprintf(path, sizeof(path), "%s/points/%04d.yaml", o.out, i + 1);
        if (write_scenario(path, &pt, comment) != 0)
            return bad("cannot write '%s'", path);
    }

    static struct sweep_state ss;
    ss = (struct sweep_state){.o = &o, .pts = pts, .n = n, .t0 = rg_now_s()};
    for (int lo = 0; lo < n; lo += SW__BATCH) {
        int hi = lo + SW__BATCH < n ? lo + SW__BATCH : n;
        struct batch b = {&o, lo, hi, (hi - lo) * (sc.deadline_s + 30) + 120, point_done, &ss};
        if (run_batch(&b) != 0)
            fprintf(stderr, "railguard sweep: the run of points %d..%d did not end by itself\n",
                    lo + 1, hi);
        /* Failures are rechecked once the batch is over, each alone in a fresh run. */
        for (int i = lo; i < hi; i++)
            if (!ss.seen[i] || ss.suspect[i])
                recheck(&ss, i, limit);
    }
    int failed = ss.failed, fired = ss.fired, flaky = ss.flaky, passed = ss.passed;
    double t0 = ss.t0;
    double dt = rg_now_s() - t0;
    printf("sweep: %s %s: %d points in %.1f s (%.2f points/s): %d fired, %d not fired, %d "
           "failing, %d flaky\n",
           file, rg_sweep_kind_name(o.spec.kind), n, dt, n / (dt > 0 ? dt : 1), fired, n - fired,
           failed, flaky);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, n - passed - failed);
    return failed ? 1 : 0;
}
