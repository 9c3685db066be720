/* SPDX-License-Identifier: MIT */
/*
 * rg_cmd.h - the commands on top of every other sub-part: `railguard run` (rg_run*.c),
 * `exec` (rg_exec.c), `sweep` (rg_sweep.c, its points planned in rg_sweep_plan.c), `bench`
 * (rg_bench.c), `report` (rg_report_cmd.c) and `triage` (rg_triage_cmd.c); main.c picks one.
 */
#ifndef RG_CMD_H
#define RG_CMD_H

#include "evidence/rg_evidence.h"
#include "judge/rg_judge.h"
#include "launch/rg_launch.h"
#include "rank/rg_rank.h"
#include "report/rg_report.h"
#include "result/rg_result.h"
#include "scenario/rg_scenario.h"
#include "triage/rg_triage.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* --- the sweep ----------------------------------------------------------------------------- */
typedef enum {
    RG_SW_ERROR,
    RG_SW_NEGPOLL,
    RG_SW_LOSE,
    RG_SW_NOMEM,
    RG_SW_DELAY,
    RG_SW_KILL,
    RG_SW_STOP,
    RG_SW_LATE,
    RG_SW_SWAP,
    RG_SW_KINDS
} rg_sw_kind;

typedef struct rg_sweep_spec {
    rg_sw_kind kind;
    int rank;        /* -1: every rank */
    enum fi_op op;   /* FI_OP_ANY: the kind's own (error: recv and send; lose: send; delay: recv) */
    uint64_t stride; /* every stride-th event (0: 1) */
    uint64_t max;    /* at most this many points a (rank, op) series, spread out; 0 no limit */
    char status[32]; /* error's status */
    uint64_t ms;     /* delay's and late's */
    bool whole;      /* n over the whole run, even where the counting run has phases */
} rg_sweep_spec;

typedef struct rg_sweep_point {
    int rank;
    enum fi_op op;
    int step, rep; /* the phase it is anchored to (step -1: init), or FI_PHASE_ANY: whole run */
    uint64_t nth;  /* within the phase, or the whole run */
    char rule[160];
    double cost; /* expected, in runs of the program: 1 + how far into its rank's events of
                    the kind the point's event lies (0..1); what shards balance */
    bool fired, failed, flaky;
} rg_sweep_point;

const char *rg_sweep_kind_name(rg_sw_kind k);
int rg_sweep_kind_of(const char *name);
/*
 * The points of a sweep from each rank's counting-run evidence: for every rank (or the one
 * named), op and phase, the rule that fires at its 1st, 1+stride-th, ... matching event of the
 * phase (step=S rep=P nth=n). A rank whose counting run marked no phases (a program that never
 * calls set_phase), or a spec with `whole`, gets points over the whole run instead. Returns
 * the number of points, or -1 with a line in err when there would be more than cap.
 */
int rg_sweep_plan(const rg_sweep_spec *sp, const rg_evidence *ev, int ranks, rg_sweep_point *pts,
                  int cap, char *err, size_t errlen);
/*
 * Shard k of nshards (1-based) of a plan's n points: mine[i] says whether point i is this
 * shard's. Balanced by expected cost (longest first, to the least loaded shard), the same on
 * every machine for the same plan; every point is in exactly one shard. The number of this
 * shard's points, or -1 when k/nshards or n is out of range.
 */
#define RG_SW_POINTS_MAX 4096
#define RG_SW_SHARDS_MAX 256
int rg_sweep_shard(const rg_sweep_point *pts, int n, int k, int nshards, bool *mine);
/*
 * Shrinking a failing point, one candidate at a time; the driver keeps a candidate only if it
 * still fails the same way with its fault fired. Both are pure, for the unit tests.
 *
 * rg_sweep_shrink_step: the program cut to the point's anchored step alone, run once, with
 * the rule re-anchored there (step=0 rep=0; init keeps the first step and step=init; finalize
 * keeps the last step and is step=1). -1 for a whole-run point (its n depends on every step
 * before it), or a step that cannot stand alone (create, destroy), or nothing to cut.
 *
 * Then counts are halved by rg_sc_halve_counts (scenario/), as triage's minimising does.
 *
 * out gets the candidate with the point's one rule as its faults and `expect: any` everywhere.
 */
int rg_sweep_shrink_step(const rg_scenario *sc, const rg_sweep_point *p, rg_scenario *out);
int rg_sweep_main(int argc, char **argv);

/* --- the runner --------------------------------------------------------------------------- */
int rg_run_main(int argc, char **argv);
/* Its option table (--help, the man page and completion come from it). */
extern const rg_cli rg_run_cli;

/* --- railguard exec: any verbs program, judged (rg_exec.c) ------------------------------- */
int rg_exec_main(int argc, char **argv);
/* Its option table (--help, the man page and completion come from it). */
extern const rg_cli rg_exec_cli;
/* A scenario file's exec: under railguard run: its programs checked at load (0, or -1 with one
 * line in err), then run and judged as railguard exec judges them (LEAK a finding only), each
 * under run's --rank-wrapper when it has one (wrap: nwrap words). */
int rg_exec_check(const rg_scenario *sc, char *err, size_t errlen);
void rg_exec_scenario(const rg_scenario *sc, const char *shim, char *const *wrap, int nwrap,
                      rg_result *res);

/* --- railguard bench (rg_bench.c) and report (rg_report_cmd.c) -------------------------- */
int rg_bench_main(int argc, char **argv);
extern const rg_cli rg_bench_cli, rg_sweep_cli, rg_report_cli;
/* `railguard report DIR`: rg_merge over DIR's rankR.result.json and events, with reports. */
int rg_report_main(int argc, char **argv);
/* The same on one launch's directory (run --hosts): its line and table on stdout; 0 passed, 1
 * failed, 2 when its rank results cannot be read or merged (said on stderr). */
int rg_report_launch(const char *dir);

/* --- railguard triage (rg_triage_cmd.c) ----------------------------------------------------- */
extern const rg_cli rg_triage_cli;
/* `railguard triage RUN_DIR`: the run's failures grouped (triage/), reports in RUN_DIR/triage. */
int rg_triage_main(int argc, char **argv);
/* The same on dir with `rerun` re-runs and at most `minimise` minimising candidates per group
 * (run --triage): its exit status. */
struct rg_tri_with;
int rg_triage_dir(const char *dir, int rerun, int minimise, const struct rg_tri_with *with);

#endif
