/* SPDX-License-Identifier: MIT */
/*
 * rg_sweep.h - a sweep's pure half, above triage and below the commands: which points a
 * counting run gives, how they split into shards, and the candidates a failing point is shrunk
 * through. No process, no file beyond what a function says: the unit tests
 * (tests/harness/sweep/) drive it from made-up evidence; `railguard sweep` (cmd/) runs it.
 *   rg_sw_plan.c    the points, their expected costs, the shards, the shrinking candidates
 *   rg_sw_sites.c   the verbs call sites a kind can reach, and the points that reach each once
 *   rg_sw_result.c  what became of each point: sweep.json and back, shards merged
 *   rg_sw_write.c   the table, JUnit and the page, from that alone
 */
#ifndef RG_SWEEP_H
#define RG_SWEEP_H

#include "evidence/rg_evidence.h"
#include "scenario/rg_scenario.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
    int site_depth;  /* the frames naming a call site (--site-depth; 0 taken as 1) */
} rg_sweep_spec;

typedef struct rg_sweep_point {
    int rank;
    enum fi_op op;
    int step, rep;  /* the phase it is anchored to (step -1: init), or FI_PHASE_ANY: whole run */
    uint64_t nth;   /* within the phase, or the whole run */
    char rule[448]; /* a site= key makes it long */
    double cost;    /* expected, in runs of the program: 1 + how far into its rank's events of
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
/* The ops a kind is swept over (ops[0..2)): the one asked for, or the kind's own; FI_OP_ANY for
 * nomem and swap_rails. Their number. */
int rg_sweep_ops(const rg_sweep_spec *sp, enum fi_op *ops);

/* --- call sites (rg_sw_sites.c) --------------------------------------------------------------
 * Where in the program a sweep's faults land: the verbs call sites the counting run's `sites`
 * rule listed (each rank's evidence), those a kind applies to -- poll sites for the kinds that
 * act on completions or polls, post sites for the kinds that act on posts -- and, per point,
 * the site its fault landed in (the fault event's caller). A site is named by the object's
 * file name and the offset ("librailguard.so.1+0x1a2b"): the same on every machine that has
 * the same build, so shards agree; its function and FILE:LINE are the runner's to add.
 */
#define RG_SW_SITES_MAX 256
#define RG_SW_SITE_MAX FI_SITE_MAX
typedef struct rg_sw_site {
    char site[RG_SW_SITE_MAX]; /* OBJECT-FILE-NAME+0xOFF, with --site-depth its callers after
                                  it: "<OBJECT-FILE-NAME+0xOFF..." */
    char verb[16];             /* poll, post_send, post_recv */
    char func[240];            /* the calling function, "" when there is no debug information;
                                  with callers, each frame's, " < " between them */
    char where[480];           /* its FILE:LINE, "" likewise */
    int nframes;               /* the frames of site (not saved: they are in site) */
    rg_ev_frame frame[FI_SITE_DEPTH]; /* each frame's object as the counting run loaded it
                                         and its offset (not saved) */
    int rank;                         /* the lowest rank that called from it */
    uint32_t ops;                     /* 1 << op for each of the kind's ops that happened there */
    int op_rank[FI_OP_ATOMIC + 1];    /* for each, the lowest rank it happened on (not saved) */
} rg_sw_site;
/* A call path's text ("OBJ+0xOFF<OBJ+0xOFF...", objects' paths or file names) as a site's
 * key: its first depth frames, file names alone, as many whole ones as fit in len. The frames
 * written, or -1 (and "") when the text is not a path or not even its first frame fits. */
int rg_sweep_site_key(const char *text, int depth, char *out, size_t len);
/* The sites kind sp applies to, from the counting run's evidence (every rank's, once each, in
 * the order first seen). Their number; -1 with err when a rank listed no sites (its shim ran
 * no sites rule) or more than cap. */
int rg_sweep_sites(const rg_sweep_spec *sp, const rg_evidence *ev, int ranks, rg_sw_site *out,
                   int cap, char *err, size_t errlen);
/* Sites in their one order, by key: a merge's union is then the unsharded list. */
void rg_sweep_sites_sort(rg_sw_site *s, int n);
/* --by-site: one point for each site and each of its ops (negpoll: each poll site once), at
 * the site's first event there on its lowest rank (site=... nth=1). The number of points, or
 * -1 with err past cap. */
int rg_sweep_plan_sites(const rg_sweep_spec *sp, const rg_sw_site *s, int n, rg_sweep_point *pts,
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
/* --- a sweep's result (rg_sw_result.c): OUT/sweep.json, written by a sweep or its shard ------ */
/*
 * What became of each point a sweep (or a shard of it) ran: the same record whether the points
 * ran in one process, in N shards on N machines, or were merged back (rg_sw_merge), so a
 * merged result is the unsharded one. Times are kept apart (seconds, per shard) and are not
 * its content; every other value round-trips exactly.
 */
typedef enum {
    RG_SW_PASSED,    /* the fault fired and every rank answered right (ok, detected, killed) */
    RG_SW_NOT_FIRED, /* the fault never fired: proves nothing, counted apart */
    RG_SW_FLAKY,     /* failed in its batch, passed when run again alone */
    RG_SW_FAILED,    /* failed, and again alone (or left no result) */
    RG_SW_STATES
} rg_sw_state;
const char *rg_sw_state_name(rg_sw_state s);

typedef struct rg_sw_row {
    int n; /* the point's number in the plan, 1-based */
    rg_sweep_point p;
    rg_sw_state state;
    char verdicts[256]; /* per rank, "ok,detected"; "" when it left no result */
    char first[1200];   /* a failure's first line, "" */
    char shrunk[64];    /* a failure's smallest program, "points/NNNN-shrunk.yaml", "" none */
    char site[RG_SW_SITE_MAX]; /* where its fault landed (rg_sw_site's key), "" not in a call */
} rg_sw_row;

/* An object a plan's call sites are in: its file name (the sites' keys use it), where the
 * counting run loaded it, its code's digest (rg_obj_code; "" when it could not be read), and
 * whether it was the sweep's transport (found by a later sweep wherever that one keeps its
 * transport). */
#define RG_SW_OBJS_MAX 8
typedef struct rg_sw_obj {
    char name[128];
    char path[RG_EV_OBJ_MAX];
    char code[17];
    bool transport;
} rg_sw_obj;

typedef struct rg_sw_result {
    char scenario[1024];       /* the scenario file, as the sweep was given it */
    char name[RG_SC_NAME_MAX]; /* its name */
    rg_sw_kind kind;
    int npoints;          /* the plan's, all shards together */
    char digest[17];      /* of the plan: every point's rule, in order (rg_sweep_digest) */
    int shard_k, shard_n; /* which shard this is; 0 and 0: the whole plan */
    double seconds;       /* wall time (a merge: the longest shard's) */
    int nrows;            /* the points run here, by n */
    rg_sw_row *rows;
    /* The call sites the kind applies to (rg_sweep_sites), by first seen; nsites -1: the
     * counting run listed none (sites_why says why). */
    int nsites;
    rg_sw_site *sites;
    char sites_why[300];
    /* The counting run's verdicts, rank by rank ("LEAK,ok"; plan.json's "baseline"): what the
     * program does without a fault, against which --known failures at a point are weighed. ""
     * when not known (a plan written before it was kept). */
    char baseline[256];
    int site_depth; /* the frames naming a site (sweep --site-depth), 1.. */
    /* plan.json's "objects": what the sites' offsets point into, checked by a sweep given the
     * plan. nobjs -1: a plan written before they were kept. */
    int nobjs;
    rg_sw_obj objs[RG_SW_OBJS_MAX];
} rg_sw_result;

/* The plan's digest: FNV-1a 64 over every point's rule and a newline, as 16 hex digits. */
void rg_sweep_digest(const rg_sweep_point *pts, int n, char out[17]);
/* OUT/sweep.json, written whole or not at all. 0, or -1 with err. */
int rg_sw_save(const rg_sw_result *r, const char *path, char *err, size_t errlen);
/* A sweep.json back (rows allocated: rg_sw_free). 0, or -1 with one line naming the file and
 * the field that is not what rg_sw_save writes. */
int rg_sw_read(rg_sw_result *r, const char *path, char *err, size_t errlen);
void rg_sw_free(rg_sw_result *r);
/*
 * Shards joined into one result (out's rows allocated): every part of one plan (scenario
 * name, kind, point count and digest equal), shards k of one n, each once and all of them,
 * every point in exactly one. 0, or -1 with err naming the part that does not fit.
 */
int rg_sw_merge(const rg_sw_result *parts, int n, rg_sw_result *out, char *err, size_t errlen);

/*
 * A plan for shards to share: OUT/plan.json, every point (rule, rank, op, step, rep, n, cost)
 * and the call sites, with the scenario, kind and digest (r's; rows are not part of a plan).
 * Each shard's own counting run can differ at a step's edge -- a send completion polled in the
 * next step, seen on a 4-rank program -- and then the shards' plans differ and no merge is
 * possible; shards given one plan (railguard sweep --plan) cannot differ. Read back into r
 * (its sites allocated: rg_sw_free) and pts[0..cap); the digest is checked against the points.
 */
int rg_sw_plan_save(const rg_sw_result *r, const rg_sweep_point *pts, const char *path, char *err,
                    size_t errlen);
int rg_sw_plan_read(rg_sw_result *r, rg_sweep_point *pts, int cap, const char *path, char *err,
                    size_t errlen);

/* --- written (rg_sw_write.c): from the content alone, so a merge writes the unsharded files -- */
/* The table: a summary line, then every failing and flaky point with its first failure, how to
 * reproduce it (points/NNNN.yaml in the sweep's directory) and its shrunk program. */
void rg_sw_table(FILE *f, const rg_sw_result *r);
/* The call sites' table: which of the sites the kind applies to a fired point's fault landed
 * in, and how many points did; those never reached; faults that landed elsewhere. */
void rg_sw_sites_table(FILE *f, const rg_sw_result *r);
/* A site's names, frame by frame: "f at a.c:1 < g at b.c:2" from func "f < g" and where
 * "a.c:1 < b.c:2" (a call path's, innermost first); out. */
const char *rg_sw_site_names(const rg_sw_site *s, char *out, size_t len);
/* DIR/sweep.json, sweep.txt (the table), junit.xml (one test case a point) and index.html. 0,
 * or -1 with err naming the file. */
int rg_sw_write(const rg_sw_result *r, const char *dir, char *err, size_t errlen);

#endif
