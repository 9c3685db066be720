/* SPDX-License-Identifier: MIT */
/*
 * The runs a sweep drives: `railguard run` on one point or a batch of them (read live, each
 * point's outcome as its result.json appears), a failing point run again alone, and a
 * confirmed failure shrunk to the smallest program that still fails the same way.
 */
#include "rg_sweep_cmd.h"

#include <errno.h>
#include <fcntl.h>
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

int sweep_bad(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "railguard sweep: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

/* "railguard run [passed options] --out OUT" into argv; returns how many words. */
static int run_args(const struct sweep_opts *o, const char *out, const char **argv)
{
    int a = 0;
    argv[a++] = o->self;
    argv[a++] = "run";
    for (int i = 0; i < o->npass; i++)
        if (o->pass[i])
            argv[a++] = o->pass[i];
    argv[a++] = "--out";
    argv[a++] = out;
    return a;
}

/* Runs `railguard run` on one scenario file; its output to log. Returns its exit status. */
int run_one(const struct sweep_opts *o, const char *scenario, const char *out, const char *log,
            double limit_s)
{
    const char *argv[32];
    int a = run_args(o, out, argv);
    argv[a++] = scenario;
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        rg_child_output(log);
        execv(o->self, (char *const *)argv);
        _exit(127);
    }
    /* The run has deadlines of its own; this one only guards against the harness. */
    int st;
    if (rg_child_wait(pid, limit_s, false, &st) != 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The batch's `railguard run` started, its stdout on *rfd, its stderr in log. Its pid, or -1. */
static pid_t start_batch(const struct batch *b, const char *out, const char *log, int *rfd)
{
    const struct sweep_opts *o = b->o;
    const char *argv[SW__BATCH + 40];
    if (b->n > SW__BATCH)
        return -1;
    /* The points' file names, 2 MB: the heap's, until the child has them (a leak check reads
     * .bss whole at every exit). */
    char(*files)[PATH_MAX + 32] = calloc(SW__BATCH, sizeof(*files));
    if (!files)
        return -1;
    int fds[2];
    int a = run_args(o, out, argv);
    /* A batch's points share one program: ranks forked from a server started once per batch
     * (per -j slot), not exec'd per point. A failing point is rechecked and shrunk by run_one,
     * fresh. */
    if (!o->exec_ranks)
        argv[a++] = "--fork-server";
    for (int j = 0; j < b->n; j++) {
        snprintf(files[j], sizeof(files[0]), "%.4030s/points/%04d.yaml", o->out, b->idx[j] + 1);
        argv[a++] = files[j];
    }
    argv[a] = NULL;
    if (pipe(fds) != 0) {
        free(files);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(files);
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
    free(files);
    close(fds[1]);
    *rfd = fds[0];
    return pid;
}

/* One line of the batch's run: "PASS  point-0007   2 ranks ..." names a point that ended; its
 * directory is numbered by its place in the batch. */
static void batch_line(const struct batch *b, const char *out, const char *line)
{
    int point;
    if ((strncmp(line, "PASS  ", 6) && strncmp(line, "FAIL  ", 6)) ||
        sscanf(line + 6, "point-%d", &point) != 1)
        return;
    for (int j = 0; j < b->n; j++)
        if (b->idx[j] == point - 1) {
            char dir[PATH_MAX + 128];
            snprintf(dir, sizeof(dir), "%s/%03d-point-%04d", out, j, point);
            b->done(b->arg, point - 1, dir);
            return;
        }
}

int run_batch(const struct batch *b)
{
    char out[PATH_MAX + 64], log[PATH_MAX + 64], buf[8192];
    int fd;
    /* parse_sweep keeps --out 64 bytes short of PATH_MAX: the precisions never cut. */
    snprintf(out, sizeof(out), "%.4030s/run-%04d", b->o->work, b->idx[0] + 1);
    snprintf(log, sizeof(log), "%.4030s/run-%04d.log", b->o->work, b->idx[0] + 1);
    pid_t pid = start_batch(b, out, log, &fd);
    if (pid < 0)
        return -1;
    FILE *lf = fopen(log, "a");
    size_t len = 0;
    double end = rg_now_s() + b->limit_s;
    int rc = 0;
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (rg_now_s() > end) {
            /* The run has deadlines of its own; this one only guards against the harness. */
            kill(pid, SIGKILL);
            rc = -1;
            break;
        }
        if (poll(&pf, 1, 1000) <= 0)
            continue;
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
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
            batch_line(b, out, start);
            start = nl + 1;
        }
        len = strlen(start);
        memmove(buf, start, len + 1);
        if (len == sizeof(buf) - 1)
            len = 0;
    }
    close(fd);
    if (lf)
        fclose(lf);
    int st;
    waitpid(pid, &st, 0);
    return rc;
}

static char g_baseline[RG_MAX_RANKS][32]; /* rank k's verdict in the counting run, "" none */

void sweep_baseline_set(const char *verdicts)
{
    memset(g_baseline, 0, sizeof(g_baseline));
    for (int k = 0; k < RG_MAX_RANKS && verdicts && *verdicts; k++) {
        size_t len = strcspn(verdicts, ",");
        snprintf(g_baseline[k], sizeof(g_baseline[k]), "%.*s", (int)len, verdicts);
        verdicts += len + (verdicts[len] == ',');
    }
}

/* Whether rank k's verdict v is one the run may end with. */
static bool acceptable(rg_verdict v)
{
    return v <= RG_V_KILLED || v == RG_V_NOT_EXERCISED;
}

/*
 * The outcome of the run in scenario directory dir. With init_only (swap_rails points), a rank
 * that detected the fault must have done so in init: crossed rails found by a later timeout
 * are a broken check with a lucky fallback (exo#2160), not a right answer.
 */
void read_outcome(const char *dir, struct outcome *oc, bool init_only)
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
    /* Failing only as --known says the transport fails (the judge's XFAIL) is the sweep's pass
     * when every failing rank failed the same way without the fault (the counting run): the
     * fault found nothing new. The judge matches the first failure's signature only, so a
     * second rank's new failure beside a known one is weighed here, rank by rank. */
    bool known = r.known_state == RG_KNOWN_XFAIL;
    oc->passed = true;
    for (int k = 0; k < r.ranks; k++) {
        rg_verdict v = r.rank[k].verdict;
        bool as_before = known && k < RG_MAX_RANKS && g_baseline[k][0] &&
                         !strcmp(g_baseline[k], rg_verdict_name(v));
        oc->passed = oc->passed && (acceptable(v) || as_before) &&
                     !(init_only && v == RG_V_DETECTED && r.rank[k].step >= 0);
    }
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
    /* Where its fault landed: the judge kept each rule's site in result.json, from the
     * evidence it read already. */
    for (int i = 0; i < r.nrules && !oc->site[0]; i++)
        if (r.rule[i].site[0])
            rg_sweep_site_key(r.rule[i].site, FI_SITE_DEPTH, oc->site, sizeof(oc->site));
}

/* A point's outcome (or a shrinking candidate's), judged as the sweep's kind asks. */
static void point_outcome(const struct sweep_state *ss, const char *dir, struct outcome *oc)
{
    read_outcome(dir, oc, ss->o->spec.kind == RG_SW_SWAP);
    /* Its landing site as deep as the sweep names sites. */
    char all[sizeof(oc->site)];
    snprintf(all, sizeof(all), "%s", oc->site);
    if (all[0])
        rg_sweep_site_key(all, ss->o->spec.site_depth, oc->site, sizeof(oc->site));
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

/* Point i's row as it stands: its plan entry, state and what its run said. */
static void keep_row(struct sweep_state *ss, int i, const struct outcome *oc, rg_sw_state st)
{
    rg_sw_row *w = &ss->rows[i];
    w->n = i + 1;
    w->p = ss->pts[i];
    w->state = st;
    snprintf(w->verdicts, sizeof(w->verdicts), "%s", oc->ran ? oc->verdicts : "");
    snprintf(w->first, sizeof(w->first), "%s",
             st == RG_SW_FAILED || st == RG_SW_FLAKY ? oc->first : "");
    snprintf(w->site, sizeof(w->site), "%s", st == RG_SW_NOT_FIRED ? "" : oc->site);
}

static void point_line(const rg_sweep_point *p, int i, const struct outcome *oc, const char *what)
{
    printf("  %4d  %-48s %-40s %s\n", i + 1, p->rule, oc->ran ? oc->verdicts : "no result", what);
}

/* A point the batch's run finished: passing and not-fired ones are final, failures wait. */
void point_done(void *arg, int i, const char *dir)
{
    struct sweep_state *ss = arg;
    rg_sweep_point *p = &ss->pts[i];
    struct outcome oc;
    point_outcome(ss, dir, &oc);
    ss->seen[i] = true;
    p->fired = oc.fired;
    if (oc.ran && !oc.passed) {
        ss->suspect[i] = true;
        snprintf(ss->rows[i].first, sizeof(ss->rows[i].first), "%s", oc.first);
        point_line(p, i, &oc, "failed: rechecked after this batch");
        fflush(stdout);
        return;
    }
    ss->fired += oc.fired;
    ss->passed += oc.ran && oc.fired;
    p->failed = !oc.ran;
    ss->failed += p->failed;
    point_line(p, i, &oc, !oc.ran ? "FAIL" : oc.fired ? "pass" : "not fired");
    keep_row(ss, i, &oc, !oc.ran ? RG_SW_FAILED : oc.fired ? RG_SW_PASSED : RG_SW_NOT_FIRED);
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
    snprintf(out, sizeof(out), "%.4030s/points/%04d-shrink-%d", o->work, i + 1, k);
    snprintf(log, sizeof(log), "%.4030s/points/%04d-shrink-%d.log", o->work, i + 1, k);
    if (rg_scenario_save(path, cand, "railguard sweep: a shrinking candidate") != 0)
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
    while (k < o->shrink_tries && rg_sc_halve_counts(&cur, &cand) == 0 &&
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
    if (rg_scenario_save(path, &cur, "railguard sweep: the smallest program found that fails") != 0)
        return;
    snprintf(ss->rows[i].shrunk, sizeof(ss->rows[i].shrunk), "points/%04d-shrunk.yaml", i + 1);
    size_t most = 0;
    for (int s = 0; s < cur.nops; s++)
        most = cur.ops[s].count > most ? cur.ops[s].count : most;
    printf("        shrunk (%d of %d candidate(s) kept): %d step(s), count <= %zu, '%s': %s\n",
           kept, k, cur.nops, most, cur.fault[0].rule, path);
}

/* A failing (or unreported) point, run again alone in a fresh process before it is reported. */
void recheck(struct sweep_state *ss, int i, double limit)
{
    const struct sweep_opts *o = ss->o;
    rg_sweep_point *p = &ss->pts[i];
    char path[PATH_MAX + 64], out[PATH_MAX + 64], log[PATH_MAX + 64], dir[PATH_MAX + 128];
    struct outcome oc;
    snprintf(path, sizeof(path), "%s/points/%04d.yaml", o->out, i + 1);
    snprintf(out, sizeof(out), "%.4030s/points/%04d-recheck", o->work, i + 1);
    snprintf(log, sizeof(log), "%.4030s/points/%04d-recheck.log", o->work, i + 1);
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
    static char batch_first[sizeof(ss->rows[0].first)];
    memcpy(batch_first, ss->rows[i].first, sizeof(batch_first));
    point_line(p, i, &oc,
               p->failed  ? "FAIL"
               : p->flaky ? "flaky (passed when rechecked)"
               : p->fired ? "pass"
                          : "not fired");
    keep_row(ss, i, &oc,
             p->failed  ? RG_SW_FAILED
             : p->flaky ? RG_SW_FLAKY
             : p->fired ? RG_SW_PASSED
                        : RG_SW_NOT_FIRED);
    if (p->flaky) /* the batch's failure, which the run alone did not repeat */
        snprintf(ss->rows[i].first, sizeof(ss->rows[i].first), "%s", batch_first);
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
