/* SPDX-License-Identifier: MIT */
/*
 * rg_compare.h - two sides of one suite, each one or more run directories (`railguard run`'s
 * --out), set against each other failure by failure (`railguard compare`): which failures the
 * head no longer has (fixed), which it has that the base did not (introduced), which both have
 * (still failing), and which the runs made so far cannot decide (not settled), with the rates
 * behind each.
 *   rg_cmp_load.c   a side's run directories read: every scenario's runs, every failure's
 *                   proven cause (triage/rg_tri_why.c) or else its signature
 *                   (judge/rg_signature.c)
 *   rg_cmp_judge.c  each failure decided from the two sides' counts, by the 95 % rule below
 *   rg_cmp_write.c  the table, JSON and Markdown (a PR comment, a job summary)
 *
 * The rule. A failure seen in k of the n runs of its scenarios on one side has a rate there
 * that those runs measure, not know: 1 of 1 is as much a bug that fails every time as one that
 * fails every other time. Its absence from m runs on the other side is evidence only if,
 * over every rate k of n runs leave possible (uniform prior: the rate's posterior is
 * Beta(k+1, n-k+1)), the chance it would have shown in m runs is >= the confidence (default
 * 0.95): 1 - prod_{i<m} (n-k+1+i)/(n+2+i) >= 0.95. Seen 1 time in 1 that is 5 runs; 2 in 2,
 * 3; 5 in 5, 2; 1 in 10, 36. Then the head's absence is "fixed", the base's "introduced"; else
 * "not settled", with the runs that would settle it (the least m for which the rule holds, less
 * those made). Only runs where it could have shown count: its own, and those that no other
 * failure came before (a run that hung in a step says nothing of a leak at finalize). A failure
 * whose scenarios did not run on the other side, or never without another failure first, is
 * not settled either.
 */
#ifndef RG_COMPARE_H
#define RG_COMPARE_H

#include "base/rg_base.h"
#include "result/rg_result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { RG_CMP_BASE, RG_CMP_HEAD, RG_CMP_SIDES };

typedef enum {
    RG_CMP_FIXED,       /* in the base, and absent from enough head runs */
    RG_CMP_INTRODUCED,  /* in the head, and absent from enough base runs */
    RG_CMP_STILL,       /* in both */
    RG_CMP_NOT_SETTLED, /* absent from one side, but from too few of its runs to say */
    RG_CMP_STATES
} rg_cmp_state;
const char *rg_cmp_state_name(rg_cmp_state s); /* "fixed", "introduced", ... */

#define RG_CMP_CONFIDENCE 0.95
/*
 * The rule, pure: a failure in k[s] of n[s] runs of side s. Its state; *more the runs of the
 * side that has not shown it that would settle it (0 when settled), *more_side that side.
 * k[s] > n[s] or negatives are the caller's bug: NOT_SETTLED, more 0.
 */
rg_cmp_state rg_cmp_decide(const int k[RG_CMP_SIDES], const int n[RG_CMP_SIDES], double confidence,
                           int *more, int *more_side);
/* The least m >= 1 with 1 - (1-p)^m >= confidence, for a rate p known (0 < p <= 1), -1 for
 * none; and the rule's m for a rate seen as k of n runs (1 <= k <= n), -1 for none. */
int rg_cmp_runs_needed(double p, double confidence);
int rg_cmp_runs_needed_seen(int k, int n, double confidence);

/* A scenario as the runs of both sides saw it. */
#define RG_CMP_NAME_MAX 128
typedef struct rg_cmp_scenario {
    char name[RG_CMP_NAME_MAX];
    char path[1024];                 /* its scenario file, as the run was given it (a re-run's) */
    int runs[RG_CMP_SIDES];          /* judged runs: neither skipped nor too slow to judge */
    int failed[RG_CMP_SIDES];        /* of them, those that failed (or failed as known: xfail) */
    int failed_at_end[RG_CMP_SIDES]; /* of those, the ones that failed only at the end (a LEAK
                                      * at finalize): every step ran, so no step's failure was
                                      * hidden by it */
    int skipped[RG_CMP_SIDES];       /* skipped (unsupported) or too slow: they prove nothing */
    /* Its failed runs whose evidence proves a cause absent from all that ran (triage's
     * rg_tri_ruled_out: a UC drop, from every rank's whole verbs trace), allocated: a run
     * that failed otherwise is still one in which that cause could have shown, up to where
     * it stopped, and did not. */
    int nruled, capruled;
    struct rg_cmp_ruled {
        int side;
        unsigned causes; /* 1 << rg_cause, each proven absent */
        int reach;       /* the step every rank got to (-1 init; the step count: all done) */
        bool at_end;     /* it failed only at the end: counted already for a step's failure */
    } * ruled;
} rg_cmp_scenario;

/* One failure over both sides: by the cause its own files prove at a place (triage's
 * rg_tri_cause_place_key, "uc-send-without-receive at a UC send on the QP to the next rank",
 * "error-ignored at the poll in jaccl::RingImpl::recv": a poll site by its function, which a
 * base and a head built apart name alike, not its offset, which they do not), so one
 * bug under several signatures is one item and a scenario failing for another reason at the
 * head does not hide that the base's cause is gone; else by its signature
 * (judge/rg_signature.c's key). A failure whose evidence proves several causes counts under
 * each: one hang can be a UC drop and a wait with no deadline, and a head that fixes one of
 * them still fails the scenario. */
typedef struct rg_cmp_item {
    char key[1024];        /* the signature's key (the first failure's, for an item by cause) */
    char cause[400];       /* the proven cause and place it is matched by, "" by signature */
    rg_cause kind;         /* that cause, RG_C_NONE by signature */
    char verdict[32];      /* the signature's first verdict, "DEADLOCK" */
    char op[48];           /* and the operation it came in */
    int k[RG_CMP_SIDES];   /* runs that failed with it */
    int n[RG_CMP_SIDES];   /* runs of the scenarios it failed in (on either side) where it could
                            * have shown: its own, those no other failure came first in (a
                            * hang before finalize hides a leak at finalize; a leak at finalize
                            * hides no step's failure), and those failed otherwise whose
                            * evidence proves its cause absent from every step up to and past
                            * the one it fails in (ruled) */
    int ran[RG_CMP_SIDES]; /* every judged run of those scenarios, hidden or not */
    bool at_end;           /* it fails at the end (finalize), after every step */
    int nseen, capseen;    /* those scenarios, by index into the comparison's (allocated) */
    int *seen;
    int *seen_step; /* in each, the earliest step it failed in: a run failed otherwise
                     * rules it out only past that step */
    char example[RG_CMP_SIDES][1200]; /* a failure's first line on each side, "" none */
    rg_cmp_state state;
    int more, more_side;
} rg_cmp_item;

typedef struct rg_compare {
    int ndirs[RG_CMP_SIDES];
    char **dirs[RG_CMP_SIDES]; /* as given */
    int nsc, capsc;            /* allocated */
    rg_cmp_scenario *sc;
    int nitems, capitems; /* allocated */
    rg_cmp_item *items;
    double confidence;
    int by[RG_CMP_STATES];
    /* Where each side's runs spent their time (rg_result.h's phases), summed over every
     * result read, and in how many results each phase was not measured. */
    rg_phases phases[RG_CMP_SIDES];
    int results[RG_CMP_SIDES], unmeasured[RG_CMP_SIDES][RG_PHASES];
} rg_compare;

/* Side s's run directory dir read into c (rg_cmp_load.c): every result.json under it, each
 * scenario's run counted, each failure's signature added to its item. 0, or -1 with err
 * naming the file that is not a run's. */
int rg_cmp_add_dir(rg_compare *c, int side, const char *dir, char *err, size_t errlen);
/* Every item's runs counted over the scenarios it failed in, and decided (rg_cmp_judge.c);
 * the items then in state order, then by the head's and base's counts. */
void rg_cmp_decide_all(rg_compare *c);
void rg_cmp_free(rg_compare *c);

/* Written (rg_cmp_write.c): the table, one row an item and a closing count; JSON; Markdown. 0,
 * or -1 with err naming the file. */
void rg_cmp_table(FILE *f, const rg_compare *c);
int rg_cmp_json(const rg_compare *c, const char *path, char *err, size_t errlen);
int rg_cmp_markdown(const rg_compare *c, const char *path, char *err, size_t errlen);

/*
 * Re-runs until every claim settles (`compare --base-transport ... --head-transport ...`): for
 * each item not settled that more runs could settle (its scenarios ran on the quiet side, and
 * fewer than max_runs times), those scenarios' indices on that side, each once, in *idx (caller
 * frees); their count, 0 when nothing more would help, -1 out of memory.
 */
int rg_cmp_rerun_list(const rg_compare *c, int side, int max_runs, int **idx);

/*
 * One commit judged for `git bisect run` (rg_cmp_bisect.c), from its runs read as the head
 * side of c. The bug: failures whose proven cause or signature key is `bug` ("" any failure
 * but NOT_EXERCISED, which proves nothing). Bad as soon as one run shows it. Good when every
 * scenario that ran has, without it and without any other failure (which could hide it), m
 * clean runs that at the bug's rate on a bad commit it would have shown (the rule above for a
 * rate seen as k of n, 1 - (1-p)^m >= confidence for one known). Else more runs (*more of them),
 * or, when nothing was judged, cannot tell.
 */
typedef enum { RG_BISECT_GOOD, RG_BISECT_BAD, RG_BISECT_MORE, RG_BISECT_CANNOT } rg_bisect_state;
typedef struct rg_bisect_says {
    rg_bisect_state state;
    int clean;        /* the fewest clean runs of a scenario that ran */
    int need;         /* clean runs the rate asks for */
    int more;         /* need - clean, when MORE */
    int other;        /* runs that failed otherwise than by the bug */
    int shown;        /* runs the bug showed in */
    char first[1200]; /* the bug's first line, or else another failure's */
} rg_bisect_says;
/* The bug's rate on a bad commit: k of n runs (n > 0, the rule above), else p, known. */
typedef struct rg_bisect_rate {
    int k, n;
    double p;
} rg_bisect_rate;
void rg_cmp_bisect(const rg_compare *c, const char *bug, const rg_bisect_rate *rate,
                   double confidence, rg_bisect_says *says);

#endif
