/* SPDX-License-Identifier: MIT */
/*
 * rg_cmd.h - the commands on top of every other sub-part: `railguard run` (rg_run*.c),
 * `exec` (rg_exec.c), `sweep` (rg_sweep.c, its points planned in sweep/), `bench`
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
#include "sweep/rg_sweep.h"
#include "triage/rg_triage.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* --- the sweep (its points, shards and results: sweep/rg_sweep.h) ----------------------- */
int rg_sweep_main(int argc, char **argv);
/* `railguard merge`: a sweep's shards joined (rg_merge_cmd.c). */
int rg_merge_main(int argc, char **argv);
extern const rg_cli rg_merge_cli;

/* `railguard compare`: two sides' run directories, failure by failure (rg_compare_cmd.c). */
int rg_compare_main(int argc, char **argv);
extern const rg_cli rg_compare_cli;

/* `railguard bisect`: one commit of a transport's history judged for git bisect run
 * (rg_bisect_cmd.c): 0 good, 1 bad, 125 cannot tell, 128 bad input. */
int rg_bisect_main(int argc, char **argv);
extern const rg_cli rg_bisect_cli;

/* --- railguard run started by compare and bisect (rg_sides.c) ------------------------------ */
/* run's own words (what follows "--"), split by run's option table into its options (each with
 * its value) and its scenarios, so that a re-run can name only some scenarios and keep every
 * option. The words are argv's, not copied. */
#define RG_RUNARGS_MAX 256
typedef struct rg_runargs {
    const char *opts[RG_RUNARGS_MAX];
    int nopts;
    const char *files[RG_RUNARGS_MAX]; /* scenarios and directories; none: the stock suite */
    int nfiles;
} rg_runargs;
/* 0, or -1 with err (a word that is no option of run's, a value missing, or an option the
 * caller sets itself: --transport, --out, --tally, --triage, --hosts, --trace). */
int rg_runargs_split(int argc, char **argv, rg_runargs *ra, char *err, size_t errlen);
/* `self run [--transport T] --out OUT OPTS... FILES...`, FILES being `only` (nonly of them)
 * when only is not NULL, else ra's; its output in log, stopped (its process group) after
 * limit_s. Its exit status (0 passed, 1 failed, 2 refused), or -1 with why. */
int rg_side_run(const char *self, const char *transport, const char *out, const rg_runargs *ra,
                const char *const *only, int nonly, const char *log, double limit_s, char *why,
                size_t whylen);
/* The last non-empty line of a log, "" when there is none. */
void rg_log_last_line(const char *log, char *out, size_t len);
/* This executable's path (to start its own commands), 0; -1 when it cannot be read. */
int rg_self_exe(char *buf, size_t len);

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
/* The same over several runs of one suite (rg_tri_load_runs): the first's triage/ written. */
int rg_triage_runs(const char *const *dirs, int ndirs, int rerun, int minimise,
                   const struct rg_tri_with *with);

#endif
