/* SPDX-License-Identifier: MIT */
/*
 * Too slow to judge. A slow machine is not a failing transport: a scenario whose first failure
 * is one of time (the transport's timeout, the runner's deadline, slow detection) on a machine
 * that measurably held its ranks back is run once more with every time in it scaled -- the
 * timeout, the deadline, the faults' durations and windows (RG_FI_TIME_SCALE) -- and judged by
 * that attempt: a transport that was only held back then passes, a real hang fails again.
 * Only when that attempt too runs out of time while the machine took a large share of its
 * budget from it is the outcome SLOW, "too slow to judge": never a pass, never a transport's
 * failure, always with what was measured.
 *
 * What is measured, never guessed (docs/scenarios.md, "Too slow to judge"):
 *   start     a rank's start-up: from its fork to its shim's load event (exec, the dynamic
 *             loader, the shim's own set-up), on the one CLOCK_MONOTONIC
 *   cpu wait  the time its threads were runnable but waiting for a CPU (the schedstat of
 *             each of its threads in /proc), sampled while it runs
 *   lag       how late the runner's own timed waits woke up (a machine that stalls whole)
 * A program that spins while it waits for its peer is runnable all along, so its wait for a
 * CPU on a busy machine says little of a hang: it may open a second attempt, which costs only
 * time, but the last word (SLOW) rests on a late start or the runner's stalls alone.
 */
#include "judge/rg_judge.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A measured delay of this share of the bound a failure ran out of opens a second attempt. */
#define SLOW_SHARE_RETRY 0.1
/* ... and of this share of the scaled bound makes that attempt's failure SLOW. */
#define SLOW_SHARE_JUDGE 0.5

/* The bound the result's first failure ran out of, in seconds, and its name; 0 when that
 * failure is not one of time. */
static double bound_of(const rg_result *r, const rg_scenario *sc, const char **name)
{
    if (r->passed || r->first_rank < 0 || r->first_rank >= r->ranks)
        return 0;
    const rg_rank_result *k = &r->rank[r->first_rank];
    switch (k->verdict) {
    case RG_V_DEADLOCK:
        /* A hang judged before the deadline waited the timeout and a margin that already
         * gave back what the machine measurably took (the runner's lag, the ranks' wait for
         * a CPU, launch/rg_progress.c); and a rank's start-up came before its first step,
         * where the quiet is counted from. Nothing measured is left to explain it. */
        if (!strncmp(k->detail, RG_HANG_EARLY, strlen(RG_HANG_EARLY)))
            return 0;
        *name = "deadline";
        return sc->deadline_s;
    case RG_V_SLOW_DETECTION:
        /* A call that outlived its own timeout (rg_evidence_rules.c, timeout_on_time). */
        if (!strncmp(k->detail, "the call returned its timeout", 29)) {
            *name = "timeout";
            return sc->timeout_s;
        }
        *name = "slow-detection bound (half the timeout)";
        return sc->timeout_s / 2;
    case RG_V_DETECTED:
    case RG_V_ERROR_WITHOUT_FAULT:
        if (k->status == RG_ERR_TIMEOUT) {
            *name = "timeout";
            return sc->timeout_s;
        }
        /* A client started a fixed time after its server (whose port railguard cannot see)
         * fails when the server was not up by then: that head start is the bound. */
        if (sc->exec.client_after > 0 && r->first_rank == 1) {
            *name = "client's head start";
            return sc->exec.client_after;
        }
        return 0;
    default:
        return 0;
    }
}

/* The largest delay the machine put on one of the ranks (or on the runner), and what it was. */
static double delay_of(const rg_result *r, bool strong, char *what, size_t len)
{
    double most = r->lag_s > 0 ? r->lag_s : 0;
    snprintf(what, len, "the runner woke up to %.2f s late", most);
    for (int i = 0; i < r->ranks; i++) {
        const rg_rank_result *k = &r->rank[i];
        double start = k->start_s > 0 ? k->start_s : 0;
        double wait = !strong && k->cpu_wait_s > 0 ? k->cpu_wait_s : 0;
        if (start + wait <= most)
            continue;
        most = start + wait;
        int n = snprintf(what, len, "rank %d %s %.2f s after it was spawned", i,
                         k->start_unseen ? "had not started" : "started", start);
        if (wait >= 0.005 && n > 0 && (size_t)n < len)
            snprintf(what + n, len - (size_t)n, " and waited %.2f s for a CPU", wait);
    }
    return most;
}

bool rg_slow_held_back(const rg_result *r, const rg_scenario *sc, bool strong, char *why,
                       size_t len)
{
    const char *name = "";
    double bound = bound_of(r, sc, &name), share = strong ? SLOW_SHARE_JUDGE : SLOW_SHARE_RETRY;
    char what[200];
    double delay = delay_of(r, strong, what, sizeof(what));
    if (bound <= 0 || delay < share * bound)
        return false;
    snprintf(why, len, "rank %d ran out of the %.3g s %s while %s (%.0f%% of it)", r->first_rank,
             bound, name, what, 100 * delay / bound);
    return true;
}

void rg_slow_check_scale(rg_rank_result *k, const rg_scenario *sc, const rg_evidence *ev)
{
    if (sc->time_scale < 2)
        return;
    for (int i = 0; i < ev->nprocs; i++)
        if (ev->proc[i].loaded && ev->proc[i].time_scale != (uint64_t)sc->time_scale) {
            /* Its faults then ran at the old times against scaled deadlines: not this run. */
            rg_rank_find(k, RG_V_ERROR, -1,
                         "the shim in pid %ld ran the plan's times x%llu, not x%d as asked "
                         "(RG_FI_TIME_SCALE): a shim older than this runner?",
                         ev->proc[i].pid, (unsigned long long)ev->proc[i].time_scale,
                         sc->time_scale);
            return;
        }
}

int rg_slow_keep_attempt(const char *dir, char *err, size_t errlen)
{
    char to[1100], a[1400], b[1400];
    snprintf(to, sizeof(to), "%.1080s/attempt-1", dir);
    DIR *d = opendir(dir);
    if (!d || mkdir(to, 0755) != 0) {
        snprintf(err, errlen, "%.1100s: cannot keep the first attempt: %s", to, strerror(errno));
        if (d)
            closedir(d);
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) && !rc) {
        if (de->d_name[0] == '.' || !strcmp(de->d_name, "attempt-1"))
            continue;
        snprintf(a, sizeof(a), "%.1100s/%.255s", dir, de->d_name);
        snprintf(b, sizeof(b), "%.1100s/%.255s", to, de->d_name);
        if (rename(a, b) != 0) {
            snprintf(err, errlen, "%.1380s: cannot keep the first attempt: %s", a, strerror(errno));
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

int rg_slow_set_aside(const rg_result *first, int scale, const char *why, char *note,
                      size_t notelen, char *err, size_t errlen)
{
    char path[1200];
    snprintf(path, sizeof(path), "%.1100s/result.json", first->dir);
    if (rg_result_save(first, path, err, errlen) != 0 ||
        rg_slow_keep_attempt(first->dir, err, errlen) != 0)
        return -1;
    snprintf(note, notelen,
             "judged on a second attempt with every time x%d: the first (in attempt-1/) failed "
             "when %s",
             scale, why);
    return 0;
}

void rg_slow_settle(rg_result *r, const rg_scenario *orig, const rg_scenario *scaled,
                    const char *first_why)
{
    char still[400], what[200];
    if (!r->passed) {
        if (rg_slow_held_back(r, scaled, true, still, sizeof(still))) {
            r->too_slow = true;
            snprintf(r->why, sizeof(r->why), "too slow to judge: %s; and with every time x%d %s",
                     first_why, scaled->time_scale, still);
            snprintf(r->first, sizeof(r->first), "%s", r->why);
        }
        return;
    }
    /* A pass at scaled times is a pass only if the program kept to the deadline as written,
     * once what the machine took on this attempt is given back: a program too slow for its
     * deadline is not made right by a slow machine on its first attempt. */
    double delay = delay_of(r, false, what, sizeof(what));
    for (int i = 0; i < r->ranks; i++) {
        rg_rank_result *k = &r->rank[i];
        if (k->service || k->left_t_s < 0 || k->left_t_s - delay <= orig->deadline_s)
            continue;
        rg_rank_find(k, RG_V_DEADLOCK, k->left_t_s,
                     "ended %.2f s after the start on a second attempt with every time x%d, "
                     "past the %.3g s deadline as written even with the %.2f s the machine took "
                     "given back (%s)",
                     k->left_t_s, scaled->time_scale, orig->deadline_s, delay, what);
    }
    rg_judge(r);
}
