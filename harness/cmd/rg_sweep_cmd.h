/* SPDX-License-Identifier: MIT */
/*
 * rg_sweep_cmd.h - railguard sweep's own insides (cmd/ only): its options, and the runs it
 * drives. rg_sweep.c is the command (its options, the counting run, the points' files, the
 * batches); rg_sweep_run.c runs `railguard run` on points, reads their outcomes, rechecks
 * failures and shrinks them; sweep/ (pure) plans the points.
 */
#ifndef RG_SWEEP_CMD_H
#define RG_SWEEP_CMD_H

#include "cmd/rg_cmd.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define SW__POINTS_MAX RG_SW_POINTS_MAX
#define RG_SW_SHRINK_TRIES 10

struct sweep_opts {
    char self[PATH_MAX];
    const char *pass[16]; /* run options passed through: --transport X, --shim X, ... */
    int npass;
    char out[PATH_MAX];
    char work[PATH_MAX]; /* --work DIR: where the runs write their evidence (default: out) */
    char plan[PATH_MAX]; /* --plan FILE: the points and sites of another sweep's plan.json */
    rg_sweep_spec spec;
    int shrink_tries;     /* candidates a failing point's shrinking may try (--shrink) */
    bool list;            /* --list: print the planned points after the counting run, run none */
    bool exec_ranks;      /* --exec-ranks: every rank exec'd, not forked from a server */
    bool by_site;         /* --by-site: one point per call site and op, not per event */
    bool events_only;     /* --events-only: no site points added to the per-event ones */
    int shard_k, shard_n; /* --shard K/N; 0 and 0: every point */
};

/* The objects the frames of sites[0..nsites) are in (at most RG_SW_OBJS_MAX, a line said of
 * each past them), each with its code's digest (a line said of one that cannot be read) and
 * whether it is the sweep's transport: a plan's "objects". */
int sweep_objs_of(const struct sweep_opts *o, const rg_sw_site *sites, int nsites, rg_sw_obj *objs);
/* --plan: each of the plan's objects compared with the one this sweep will load (the transport
 * wherever this sweep takes it from, railguard itself where it runs, others where they were
 * loaded), one line said of each that differs, cannot be compared, or is another file than the
 * plan's transport, and of each object a site names that the plan keeps no code of. How many
 * such lines. */
int sweep_objs_check(const struct sweep_opts *o, const rg_sw_result *p);

/* One line "railguard sweep: ..." on stderr; 2. */
int sweep_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The points of one batch (idx[0..n), the plan's indexes), run by one `railguard run` over
 * their files: its preflight and start-up are paid once a batch, not once a point. Its live
 * lines (one per scenario as it ends) are read as they come, so each point is judged and
 * printed at once. Returns 0, or -1 when the run could not be started or outlived every
 * deadline it had.
 */
#define SW__BATCH 500
struct batch {
    const struct sweep_opts *o;
    const int *idx;
    int n;
    double limit_s;
    void (*done)(void *arg, int point, const char *result_dir);
    void *arg;
};
int run_batch(const struct batch *b);

/* The verdicts of a run's one scenario, "ok,detected", and whether it fired / failed. */
struct outcome {
    bool ran, passed, fired;
    rg_verdict worst; /* the highest verdict of any rank */
    char verdicts[256];
    char first[1200];
    char site[RG_SW_SITE_MAX]; /* where the first fault that landed in a call did, "" */
};

/* The sweep's progress, shared by the batch's callback and the rechecks. rows[i] is what
 * became of point i (sweep.json's row), for the points this sweep (or shard) runs. */
struct sweep_state {
    const struct sweep_opts *o;
    rg_sweep_point *pts;
    rg_sw_row *rows;
    int n, done, failed, fired, flaky, passed;
    double t0;
    bool seen[SW__POINTS_MAX];    /* the batch's run reported it */
    bool suspect[SW__POINTS_MAX]; /* it failed there: rechecked after the batch */
};

/* railguard run on one scenario file into out, its output to log: its exit status. */
int run_one(const struct sweep_opts *o, const char *scenario, const char *out, const char *log,
            double limit_s);
/* The outcome of the run in scenario directory dir (init_only: swap_rails points). */
void read_outcome(const char *dir, struct outcome *oc, bool init_only);
/* The counting run's verdicts ("LEAK,ok", rank by rank; "" none): a point that fails only as
 * --known says the transport fails (the judge's XFAIL) passes when each failing rank failed
 * so without the fault too; a failure the fault added still fails. */
void sweep_baseline_set(const char *verdicts);
/* A point the batch's run finished (the batch's callback); a failing one rechecked alone,
 * and shrunk when it fails again. */
void point_done(void *arg, int i, const char *dir);
void recheck(struct sweep_state *ss, int i, double limit);

#endif
