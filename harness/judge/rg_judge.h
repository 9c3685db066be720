/* SPDX-License-Identifier: MIT */
/*
 * rg_judge.h - judging: a rank's evidence applied to its findings, the scenario's pass or fail
 * with its first failure named (rg_judge.c), an external launch's ranks merged and judged as a
 * whole (rg_merge.c), and "too slow to judge" (rg_slow.c: what the machine took weighed
 * against the bound a failure ran out of, and the second attempt settled).
 */
#ifndef RG_JUDGE_H
#define RG_JUDGE_H

#include "evidence/rg_evidence.h"
#include "launch/rg_launch.h"
#include "result/rg_result.h"
#include "scenario/rg_scenario.h"

#include <stdbool.h>
#include <stddef.h>

/* Decides passed/why from the ranks' verdicts and the expectations. Returns passed. */
bool rg_judge(rg_result *r);
/* Whether rank i's verdict meets its expectation (a skipped step's unsupported does), and the
 * verdict it is judged by (below a LEAK when leaks are allowed). */
bool rg_rank_acceptable(const rg_result *r, int i);
rg_verdict rg_rank_judged(const rg_result *r, int i);

/*
 * r's signature (rg_signature.c, rg_sig in scenario/rg_scenario.h): what went wrong first and
 * where, how the other ranks took it, the faults that fired, and where hung ranks wait (their
 * backtraces in r->dir). Like fuzzers' crash de-duplication it keeps what a bug decides and
 * drops what a run decides: times, counts, sizes, rank numbers, addresses.
 */
void rg_signature(const rg_result *r, rg_sig *s);
/*
 * The first frame per thread of a backtrace (gdb's or backtrace_symbols') that is the
 * program's own: not the shim, libc, the threading library, libibverbs or its providers, the
 * loader, nor the runner's worker around the transport. A frame with no symbol is its
 * object's name and "?" ("libfoo.so+?"). Distinct, at most max: their number.
 */
int rg_sig_frames(const char *text, char frames[][96], int max);
/* The known-failures entry k matches s: every field k names is equal (frames as sets); an
 * entry's cause is the judge's to compare (rg_result's cause). */
bool rg_sig_matches(const rg_sc_ksig *k, const rg_sig *s);

/*
 * Applies the evidence of ranks lo..hi-1 (ev[i] for rank i) to their results: a rank the shim
 * did not instrument gets ERROR; detected with no fault fired before it (on any rank, by
 * CLOCK_MONOTONIC) becomes ERROR_WITHOUT_FAULT; a rule that fired on no rank makes every rank
 * NOT_EXERCISED unless the scenario marks it optional. t0_mono_ms is the scenario's start.
 * `rules` picks which: RG_EV_RANK (instrumentation, each rank alone) and RG_EV_CROSS (the two
 * that look across ranks). One rank of an external launch applies RG_EV_RANK; `railguard
 * report`, which sees every rank, applies RG_EV_CROSS; a local run both.
 */
#define RG_EV_RANK 1
#define RG_EV_CROSS 2
/* How the detail of a DEADLOCK judged before the deadline begins (launch/rg_progress.c). */
#define RG_HANG_EARLY "no rank moved for"
void rg_evidence_apply(rg_result *r, const rg_scenario *sc, const rg_evidence *ev, int lo, int hi,
                       double t0_mono_ms, int rules);

/*
 * Merges the views an external launch's ranks left (each holds its rank as rank 0, self_rank
 * naming it) into one result, applies the cross-rank rules with ev[r] for rank r, and judges
 * it. `ordered` says whether all ran on one host (one clock). Returns 0, or -1 with a line.
 */
int rg_merge(rg_result *out, const rg_scenario *sc, const rg_result *views, int nviews,
             rg_evidence *ev, bool *ordered, char *err, size_t errlen);

/*
 * Too slow to judge (rg_slow.c). rg_slow_held_back: whether a judged result's first failure
 * ran out of time (the timeout, the deadline, the slow-detection bound) while the machine held
 * the ranks back by a share of it -- a late start, a wait for a CPU or the runner's stalls, or
 * with `strong` a late start or the runner's stalls alone -- with the measurement in why.
 */
bool rg_slow_held_back(const rg_result *r, const rg_scenario *sc, bool strong, char *why,
                       size_t len);
/*
 * A second attempt, judged, settled: SLOW (too_slow, why naming both attempts' measurements)
 * when it too ran out of time while the machine took half of it (`strong`); a pass whose rank
 * ended past the deadline as written (`orig`), even with what the machine took on this
 * attempt given back, becomes that rank's DEADLOCK. first_why: why it was run again.
 */
void rg_slow_settle(rg_result *r, const rg_scenario *orig, const rg_scenario *scaled,
                    const char *first_why);
/* The first attempt's files moved out of the second's way, into DIR/attempt-1. -1 with err. */
int rg_slow_keep_attempt(const char *dir, char *err, size_t errlen);
/* The first attempt set aside for a second, as run and exec both do it: its judged result
 * saved as DIR/result.json, then kept (rg_slow_keep_attempt), and the note the second attempt
 * carries (slow_note) written. 0, or -1 with err. */
int rg_slow_set_aside(const rg_result *first, int scale, const char *why, char *note,
                      size_t notelen, char *err, size_t errlen);
/* An ERROR finding when a scaled attempt's shim said it ran its plan at another scale. */
void rg_slow_check_scale(rg_rank_result *k, const rg_scenario *sc, const rg_evidence *ev);

/* --- how a scenario's processes ended (rg_judge_procs.c) ----------------------------------- */
/* Ended without a verdict of its own in a way a fault can cause (stopped, SIGKILL, an exit
 * before its verdict); rg_proc_judge_ended says whether its own fault did it (KILLED) or not
 * (CRASH), from its evidence e. Its log is DIR/rankR.log. */
bool rg_proc_ended_early(const struct rg_proc *p);
void rg_proc_judge_ended(rg_rank_result *k, const struct rg_proc *p, const rg_scenario *sc,
                         const rg_evidence *e, const char *dir, int r);

/*
 * Ranks l->lo..hi-1 of a run, as launch/rg_workers.c left them, into res->rank[]: what each
 * said, how its process ended, its evidence (`rules`: RG_EV_RANK, and RG_EV_CROSS when every
 * rank is here), a hang explained by who left first and what its queues held.
 */
void rg_judge_workers(rg_result *res, const rg_scenario *sc, const rg_launched *l, int rules);
/*
 * A scenario's programs (launch/rg_programs.c) into res->rank[]: each one's exit status or
 * signal, a service judged on what it did before it was stopped, a hang, and the evidence's
 * rules across them all.
 */
void rg_judge_programs(rg_result *res, const rg_scenario *sc, const rg_launched *l);

#endif
