/* SPDX-License-Identifier: MIT */
/*
 * A group's rate (rg_triage.h): its representative run again N times by the very command
 * that reproduces it, each in a directory of its own, and each re-run's failure compared by
 * signature. A bug that shows 5 times in 5 is deterministic; 2 in 5 is flaky, and the rate
 * is what a fix must bring to 0; 0 in 5 did not recur.
 */
#include "triage/rg_triage.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int rg_tri_words(const char *line, char **argv, int max, char *buf, size_t len)
{
    int n = 0;
    size_t k = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        if (n + 1 >= max)
            return -1;
        argv[n++] = buf + k;
        while (*p && *p != ' ' && *p != '\t') {
            if (*p == '\'') { /* to the closing quote, as is */
                const char *q = strchr(p + 1, '\'');
                if (!q)
                    return -1;
                for (p++; p < q; p++) {
                    if (k + 1 >= len)
                        return -1;
                    buf[k++] = *p;
                }
                p++;
                continue;
            }
            if (*p == '\\' && p[1])
                p++;
            else if (strchr("\"`$|&;<>(){}*?[~#", *p))
                return -1; /* not a line railguard writes: no shell is run to read it */
            if (k + 1 >= len)
                return -1;
            buf[k++] = *p++;
        }
        if (k + 1 >= len)
            return -1;
        buf[k++] = '\0';
    }
    argv[n] = NULL;
    return n;
}

/* Sets option opt (its value val) in argv[0..n): in place of its value when it is there, else
 * before the last word, the scenario. The new argc, or -1 when argv is full. */
static int set_opt(char **argv, int n, int max, const char *opt, char *val)
{
    for (int i = 2; i + 2 < n; i++)
        if (!strcmp(argv[i], opt)) {
            argv[i + 1] = val;
            return n;
        }
    if (n + 3 > max)
        return -1;
    argv[n + 1] = argv[n - 1];
    argv[n - 1] = (char *)opt;
    argv[n] = val;
    argv[n + 2] = NULL;
    return n + 2;
}

/* The command of a reproduce line, its --out set to out, given one its scenario (the line's
 * last word) to scenario, and what `with` sets set (their texts in vals): argc, or -1 when it
 * is not a railguard run. */
static int rerun_argv(const char *repro, const char *out, const char *scenario,
                      const rg_tri_with *with, char vals[2][32], char **argv, int max, char *buf,
                      size_t len)
{
    int n = rg_tri_words(repro, argv, max, buf, len), at_out = -1;
    if (n < 4 || strcmp(argv[1], "run") != 0)
        return -1;
    if (scenario)
        argv[n - 1] = (char *)scenario;
    for (int i = 2; i + 2 < n && at_out < 0; i++)
        if (!strcmp(argv[i], "--out"))
            at_out = i;
    if (at_out < 0)
        return -1;
    argv[at_out + 1] = (char *)out;
    /* A run gated by a known-failures file (run --known) would read the failure it reruns as
     * XFAIL, a pass: triage measures the failure itself. */
    for (int i = 2; i + 2 < n; i++)
        if (!strcmp(argv[i], "--known")) {
            memmove(&argv[i], &argv[i + 2], sizeof(argv[0]) * (size_t)(n - i - 1));
            n -= 2;
            break;
        }
    if (with && with->deadline_s > 0) {
        snprintf(vals[0], 32, "%.17g", with->deadline_s);
        n = set_opt(argv, n, max, "--deadline", vals[0]);
    }
    if (n > 0 && with && with->slow_scale > 0) {
        snprintf(vals[1], 32, "%d", with->slow_scale);
        n = set_opt(argv, n, max, "--slow-scale", vals[1]);
    }
    return n;
}

/* Runs argv with its output into log, for at most limit_s: its exit status, or -1 when it
 * could not start or ran past the limit (then it is killed). */
static int run_bounded(char **argv, const char *log, double limit_s)
{
    /* What this process has buffered is its own: a child must not write it out again (its
     * freopen flushes the stdout it inherited). */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0); /* its own group: a run killed at the limit takes its ranks with it */
        FILE *f = freopen(log, "w", stdout);
        if (f && dup2(fileno(stdout), 2) >= 0)
            execv(argv[0], argv);
        _exit(127);
    }
    struct timespec tick = {0, 50 * 1000 * 1000};
    for (double waited = 0; waited < limit_s; waited += 0.05) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (w < 0 && errno != EINTR)
            return -1;
        nanosleep(&tick, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

void rg_tri_rate_said(const rg_tri_rate *r, char *out, size_t len)
{
    if (!r->n)
        snprintf(out, len, "not measured: each scenario of the run ran once");
    else if (r->same == r->n)
        snprintf(out, len, "deterministic: %d of %d re-runs", r->same, r->n);
    else if (r->same)
        snprintf(out, len, "flaky: %d of %d re-runs", r->same, r->n);
    else
        snprintf(out, len, "did not recur in %d re-runs", r->n);
    size_t used = strlen(out);
    if (r->same < r->n && used < len)
        snprintf(out + used, len - used, " (%d passed, %d failed otherwise, %d not judged)",
                 r->passed, r->other, r->unjudged);
}

int rg_tri_run_once(const char *repro, const char *scenario, const char *out, double limit_s,
                    const rg_tri_with *with, rg_tri_run *again, char *err, size_t errlen)
{
    char log[1400], buf[4200], *argv[64], why[1400], vals[2][32];
    if (rerun_argv(repro, out, scenario, with, vals, argv, 64, buf, sizeof(buf)) < 0) {
        snprintf(err, errlen, "its reproduce line is not one railguard run: %.200s", repro);
        return -1;
    }
    if (rg_mkdirs(out) != 0) {
        snprintf(err, errlen, "%s: cannot make it", out);
        return -1;
    }
    snprintf(log, sizeof(log), "%s.log", out);
    int st = run_bounded(argv, log, limit_s);
    memset(again, 0, sizeof(*again));
    if (st < 0 || rg_tri_load(out, again, why, sizeof(why)) != 0 || again->nresults != 1) {
        rg_tri_free(again);
        return 1; /* killed at the limit, or no result to read: see its log */
    }
    return 0;
}

int rg_tri_rerun(const rg_tri_run *run, int g, int n, double limit_s, rg_tri_rate *rate, char *err,
                 size_t errlen)
{
    const rg_tri_group *gr = &run->groups[g];
    const rg_result *rep = run->cases[gr->rep].res;
    memset(rate, 0, sizeof(*rate));
    for (int k = 1; k <= n; k++) {
        static rg_tri_run again;
        char out[1300], why[1400];
        snprintf(out, sizeof(out), "%s/triage/rerun/%02d-%s/%d", run->dir, g + 1, gr->slug, k);
        int st =
            rg_tri_run_once(rep->repro, NULL, out, limit_s, &run->with, &again, why, sizeof(why));
        if (st < 0) {
            snprintf(err, errlen, "%s: %s", rep->name, why);
            return -1;
        }
        rate->n++;
        if (st > 0)
            rate->unjudged++;
        else if (again.nslow)
            rate->unjudged++; /* too slow to judge: says nothing of the bug */
        else if (again.nfail == 0)
            rate->passed++;
        else if (!strcmp(again.cases[0].sig.key, gr->sig.key))
            rate->same++;
        else {
            rate->other++;
            rg_cut(rate->other_key, sizeof(rate->other_key), again.cases[0].sig.key);
        }
        rg_tri_free(&again);
    }
    return 0;
}
