/* SPDX-License-Identifier: MIT */
/*
 * rg_triage.h - a run's failures as a short list of defects (`railguard triage RUN_DIR`).
 *
 * Each failed scenario gets a signature: what went wrong first and where, and how the rest of
 * the job took it. Failures with one signature are one group, one likely bug, shown by its
 * smallest scenario. Like fuzzers' crash de-duplication, the signature keeps what a bug
 * decides (verdicts, error class, the operation, the algorithm, the frames where hung ranks
 * wait, the faults that fired) and drops what a run decides (times, counts, rank numbers,
 * addresses).
 *   rg_tri_group.c  a run directory's results read, and its failures grouped
 *   rg_tri_rate.c   each group's smallest case run again: how often it comes back
 *   rg_tri_min.c    each group's case minimised, keeping its signature (and rate)
 *   rg_tri_merge.c  groups whose minimal cases fail alike merged
 *   rg_tri_bugs.c   groups whose proven causes are one defect merged: bugs, not groups
 *   rg_tri_why.c    the cause the evidence proves, with the lines it rests on, or none
 *   rg_tri_site.c   the call site an ignored error was handed at, named as its function
 *   rg_tri_qp.c     the causes the ranks' verbs traces prove, QPs paired end to end
 *   rg_tri_trace.c  each group's smallest case run again with the verbs trace on
 *   rg_tri_write.c  the groups written: triage/NN-title.md for an issue tracker, triage.json
 */
#ifndef RG_TRIAGE_H
#define RG_TRIAGE_H

#include "judge/rg_judge.h"
#include "result/rg_result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A failure as triage keeps it: its result and signature. */
typedef struct rg_tri_case {
    rg_result *res;
    rg_sig sig;
} rg_tri_case;

/* A group's representative run again (rg_tri_rate.c): how often its signature came back. */
typedef struct rg_tri_rate {
    int n;        /* re-runs made; 0: not measured */
    int same;     /* failed with the group's signature */
    int passed;   /* passed */
    int other;    /* failed with another signature (the last one in other_key) */
    int unjudged; /* killed at the limit, too slow to judge, or left no result */
    char other_key[256];
} rg_tri_rate;

/* What the evidence proves caused a group's failure (rg_tri_why.c), with the lines it rests
 * on; proven false: none, and text says so. */
#define RG_TRI_CITES 4
typedef struct rg_tri_cause {
    bool proven;
    rg_cause kind;   /* which one (base/rg_base.h), RG_C_NONE when none is proven */
    char from[1024]; /* the run directory the cited files are in */
    char text[1000];
    int nlines;
    char line[RG_TRI_CITES][400];
    /* Where the defect is, as the evidence names it, so that two groups proven the same cause
     * can be told one bug or two: the call site an error was handed at ("librailguard.so.1+
     * 0x1a2b"), the frame a wait hangs in, the role of the QP a message was lost on ("the QP to
     * the next rank"), the kind of buffer rewritten. "" when the evidence names none. */
    char site[256];
    /* The part of the site that another build of the same code names alike (rg_tri_site.c):
     * a poll site's function ("the poll in jaccl::RingImpl::recv"), not its line or offset.
     * "" when the site has none (an offset without debug information): then only site
     * matches, and only within one build. */
    char place[200];
} rg_tri_cause;

/* A group's case minimised (rg_tri_min.c). */
typedef struct rg_tri_min {
    int tried, kept;  /* candidates run, and kept */
    char path[1200];  /* RUN_DIR/triage/NN-SLUG.min.yaml, "" when nothing smaller failed alike */
    char steps[600];  /* what was cut, in order ("2 ranks, counts halved, ...") */
    char repro[4400]; /* the group's reproduce line with the minimal scenario */
    char note[700];   /* how it went, or why it was not minimised */
    rg_sig sig;       /* the minimal case's signature: the group's, or with fewer faults fired
                         when it failed alike without them (rg_tri_alike) */
} rg_tri_min;

typedef struct rg_tri_group {
    rg_sig sig;
    rg_tri_rate rate;
    rg_tri_min min;
    rg_tri_cause cause;
    char traced[800]; /* how the traced re-run went (rg_tri_trace.c), "" when none was made */
    /* The causes its representative's evidence proves besides cause, "" none ("a wait with
     * no deadline (the wait in F)"): one failure can show several defects. */
    char also_causes[600];
    char merged[800]; /* the groups merged into this one (rg_tri_merge.c), "" none */
    /* One bug (rg_tri_bugs.c): the groups of the same proven cause merged into it and on what
     * ground, or why it stands apart (its cause unproven, or naming no site). */
    char bug[800];
    bool is_bug; /* its cause proven with a site: a bug, not only a group */
    /* The signatures of the groups merged into it, by minimal case or by cause (its own is
     * sig): a failure with any of them is this bug. Past RG_TRI_SIGS, counted in also_over. */
#define RG_TRI_SIGS 8
    int nalso, also_over;
    rg_sig also[RG_TRI_SIGS];
    int ncases;
    int *cases; /* indexes into the run's cases */
    int rep;    /* the representative: the fewest ranks, then the fewest seconds */
    char title[200];
    char slug[64];
} rg_tri_group;

/* What triage sets in every reproduce line it runs again (triage --deadline, --slow-scale),
 * in place of the line's own; 0 keeps the line's. */
typedef struct rg_tri_with {
    double deadline_s;
    int slow_scale;
    /* And how the known-failures file is written: by_fault, a failure under faults as one
     * entry a fault kind and first verdict (rg_tri_write_known). */
    bool by_fault;
} rg_tri_with;

enum {
    RG_TRI_T_READ,
    RG_TRI_T_RERUN,
    RG_TRI_T_MIN,
    RG_TRI_T_TRACED,
    RG_TRI_T_WRITE,
    RG_TRI_STAGES
};
/* "read", "reruns", "minimise", "traced", "write": triage.json's time_s keys. */
extern const char *const rg_tri_stage_names[RG_TRI_STAGES];
typedef struct rg_tri_run {
    char dir[1024];   /* the (first) run's directory: its triage/ is written there */
    int nruns;        /* the runs whose failures were read (rg_tri_load_runs) */
    rg_tri_with with; /* the re-runs' run options */
    int nresults;     /* every scenario read */
    rg_result *results;
    int nfail, nxpass, nslow, nunread;
    char unread[8][600]; /* the first results that could not be read, each one line */
    rg_tri_case *cases;  /* the failures */
    int ngroups;
    rg_tri_group *groups; /* most cases first, then by key */
    /* Where the triage's time went, seconds (rg_triage_cmd.c): reading and grouping, each
     * group's re-runs, its minimising, the traced runs, the writing; -1: not run. */
    double time_s[RG_TRI_STAGES];
} rg_tri_run;

/* Reads every DIR/NAME/result.json (in name order) and groups the failures. 0, or -1 with err
 * when DIR itself cannot be read; results that cannot be read are counted and named. */
int rg_tri_load(const char *dir, rg_tri_run *run, char *err, size_t errlen);
/* The same over several runs of one suite, the first's directory the run's: a flaky transport
 * shows another face of one bug in each run, and the groups (and the known-failures file) of
 * them all hold every face seen. A failure known (XFAIL) in a later run is not read again. */
#define RG_TRI_RUNS_MAX 16
int rg_tri_load_runs(const char *const *dirs, int ndirs, rg_tri_run *run, char *err, size_t errlen);
/* Groups run->cases by signature key; the groups' titles, slugs and representatives. */
int rg_tri_group_cases(rg_tri_run *run);
void rg_tri_free(rg_tri_run *run);
/* Group g out of run->groups (its cases array freed), the later ones moved up. */
void rg_tri_group_drop(rg_tri_run *run, int g);

/*
 * Runs group g's representative n times by its reproduce line (a `railguard run`), each into
 * RUN_DIR/triage/rerun/NN-SLUG/K with its output in K.log, each for at most limit_s; counts
 * into rate. 0, or -1 with err when the line is not one it can run.
 */
int rg_tri_rerun(const rg_tri_run *run, int g, int n, double limit_s, rg_tri_rate *rate, char *err,
                 size_t errlen);
/*
 * One run of a reproduce line (a `railguard run`) into out, its scenario replaced by
 * `scenario` unless NULL, with what `with` sets (the line's own --deadline or --slow-scale
 * replaced), its output in out.log, for at most limit_s; its one result loaded
 * into again (rg_tri_free it). 0; 1 when it left no result (killed at the limit, or failed to
 * start: see the log); -1 with err when the line is not one it can run.
 */
int rg_tri_run_once(const char *repro, const char *scenario, const char *out, double limit_s,
                    const rg_tri_with *with, rg_tri_run *again, char *err, size_t errlen);
/*
 * Minimises group g's smallest scenario: at most `budget` candidates (rg_sc_shrink_next), each
 * run by the group's reproduce line (into RUN_DIR/triage/min/NN-SLUG/K-T) and kept when it
 * fails with the group's signature -- for a flaky group in at least half as many of up to 5
 * runs as its rate says. The smallest is written as RUN_DIR/triage/NN-SLUG.min.yaml. 0 (what
 * happened in the group's min), or -1 with err when a file cannot be written or the line run.
 */
int rg_tri_minimise(rg_tri_run *run, int g, int budget, double limit_s, char *err, size_t errlen);
#define RG_TRI_MIN_BUDGET 20
/* A group's reproduce line with its scenario (the last word) replaced by path, into out. */
void rg_tri_min_repro(const char *repro, const char *path, char *out, size_t len);
/*
 * Whether got is the failure want is: the same signature, or the same but for fewer of want's
 * faults having fired -- a failure that shows without a fault is the same bug, not the
 * fault's. (Every other field equal; got's faults a proper subset of want's.)
 */
bool rg_tri_alike(const rg_sig *want, const rg_sig *got);
/*
 * Merges the groups whose minimal cases have one signature (after rg_tri_minimise: a fault
 * cut can make two groups' failures one): the later into the earlier, its scenarios added and
 * said in the earlier's merged note; the minimal scenarios' files renamed to the groups' new
 * numbers. The number of groups merged away, or -1 with err when a file cannot be renamed.
 */
int rg_tri_merge(rg_tri_run *run, char *err, size_t errlen);
/* Group b merged into group a (b's cases, signatures and minimal file kept with a; b gone),
 * with "\"b's title\" (N scenario(s)...)" added to note (a's merged or bug). 0, or -1 with err
 * when b's minimal file cannot be moved. */
int rg_tri_absorb(rg_tri_run *run, int a, int b, char *note, size_t notelen, char *err,
                  size_t errlen);
/* Every group's minimal file under its number now (after merges), its reproduce line with it.
 * 0, or -1 with err. */
int rg_tri_renumber(rg_tri_run *run, char *err, size_t errlen);
/* "WHAT the next rank" (to == from + 1 around the ring of n), "... the previous rank", "... its
 * peer" (2 ranks), "... another rank": a QP's role, which stays one across scenarios of other
 * sizes, where rank numbers do not. */
void rg_tri_role(int n, int from, int to, const char *what, char *out, size_t len);
/* The defect a proven cause names, "CAUSE-NAME at SITE"; "" when it is unproven or names no
 * site (then it cannot be told the same as another). */
void rg_tri_cause_key(const rg_tri_cause *c, char *out, size_t len);
/* The defect as another build names it too, "CAUSE-NAME at PLACE" (compare's key across a base
 * and a head); rg_tri_cause_key's where the cause has no place. */
void rg_tri_cause_place_key(const rg_tri_cause *c, char *out, size_t len);
/* c's site and place from a fault event's "caller" (OBJ+0xOFF<...): its first frame named from
 * the object's debug information, "the poll in FUNC (FILE:LINE)" and place "the poll in FUNC";
 * without it "the poll at OBJ+0xOFF" and no place (rg_tri_site.c). */
void rg_tri_poll_site(const char *caller, rg_tri_cause *c);
/*
 * Bugs, not groups: the groups whose causes are proven the same defect (the same cause at the
 * same site: rg_tri_cause_key) merged into one, titled by that cause; every group's bug note
 * says what it was merged with, or why it stands apart. The number merged away, or -1 with
 * err when a file cannot be moved.
 */
int rg_tri_bugs(rg_tri_run *run, char *err, size_t errlen);
/*
 * Runs group g's minimal scenario, then (if that never fails alike) its representative, with
 * the verbs trace on (`trace: true`, written as RUN_DIR/triage/trace/NN-SLUG-WHICH.yaml), into
 * RUN_DIR/triage/trace/NN-SLUG-WHICH/K -- each up to 3 times, 5 for a flaky group, until it
 * fails alike -- and takes the cause that run proves when it proves one. What happened goes
 * into the group's traced note. 0, or -1 with err when a file cannot be written or the line
 * run.
 */
int rg_tri_traced(rg_tri_run *run, int g, double limit_s, char *err, size_t errlen);
/* The cause r's evidence proves for its failure s, with the lines it rests on, or "none
 * proven": an error polled then ignored, a buffer reused in flight, a UC send dropped for want
 * of a receive, a wait for a message never sent, a wait with no deadline. The first of
 * rg_tri_diagnose_all's, in that order. */
void rg_tri_diagnose(const rg_result *r, const rg_sig *s, rg_tri_cause *c);
/* Every cause r's evidence proves for its failure s, in that order, up to max (a hang can be
 * a UC drop on one wire, a wait for what no rank sent on another, and a wait with no deadline
 * at once: one failure, several defects): how many, c[0] saying "none proven" when 0. */
#define RG_TRI_CAUSES_MAX 4
int rg_tri_diagnose_all(const rg_result *r, const rg_sig *s, rg_tri_cause *c, int max);
/* rg_tri_diagnose_all, and rg_tri_ruled_out's mask into *ruled, the traces read once. */
int rg_tri_diagnose_ruled(const rg_result *r, const rg_sig *s, rg_tri_cause *c, int max,
                          unsigned *ruled);
/* The causes r's evidence proves absent from all of the run that ran, failed or not, as a
 * mask of 1 << rg_cause: a UC drop when every rank has a verbs trace and each is whole, no
 * fault fired, and every message each UC QP put on the wire arrived (its peer took as many
 * receive completions). A run failing otherwise is then still evidence that no UC message was
 * dropped in it (compare). */
unsigned rg_tri_ruled_out(const rg_result *r);
/* rg_tri_diagnose's cause into c, and every further cause rg_tri_diagnose_all proves into also,
 * "; " between them ("" none): a group's causes. */
void rg_tri_diagnose_also(const rg_result *r, const rg_sig *s, rg_tri_cause *c, char *also,
                          size_t len);
/* The causes r's verbs traces prove (rg_tri_qp.c), up to max: their count, with c filled, else
 * 0 with why the traces prove nothing ("the run has no verbs trace", a line that cannot be
 * read, ...); with ruled, also rg_tri_ruled_out's mask from the same read of the traces.
 * rg_tri_qp_cause the first of them. */
int rg_tri_qp_causes(const rg_result *r, const rg_sig *s, rg_tri_cause *c, int max, char *why,
                     size_t len, unsigned *ruled);
bool rg_tri_qp_cause(const rg_result *r, const rg_sig *s, rg_tri_cause *c, char *why, size_t len);
/* "deterministic: 5 of 5 re-runs", "flaky: 2 of 5 re-runs (3 passed, ...)", ... */
void rg_tri_rate_said(const rg_tri_rate *r, char *out, size_t len);
/* A line as rg_shell_word writes words, back into words (no shell is run): argc, or -1 for
 * what it does not write (an unclosed quote, a shell operator, too many words). */
int rg_tri_words(const char *line, char **argv, int max, char *buf, size_t len);

/* One group as a report a maintainer can paste into an issue tracker. */
void rg_tri_write_md(FILE *f, const rg_tri_run *run, int g);
/* A known-failures file (railguard run --known) with one signature entry per group, the
 * largest first, then one entry by cause per cause proven (room kept for those): how many
 * groups were left out (a file holds RG_SC_KSIG_MAX). With run->with.by_fault, the signatures
 * under faults folded one entry a fault kind and first verdict: how many signatures were. */
int rg_tri_write_known(const rg_tri_run *run, FILE *f);
/* run->dir/triage/NN-SLUG.md for every group, triage.json and known-failures.yaml beside
 * them. 0, or -1 with err. */
int rg_tri_write(const rg_tri_run *run, char *err, size_t errlen);

#endif
