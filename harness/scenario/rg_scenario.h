/* SPDX-License-Identifier: MIT */
/*
 * Scenario files: what one run of N ranks does and what each rank must end with. YAML, read
 * with libyaml's document API so every value keeps its line: a bad file gets one line naming
 * the file, the line and the field. docs/scenarios.md is the user's description of the format.
 *
 *   name: flush-on-recv                # optional; default: the file name without .yaml
 *   ranks: 2                           # 2..RG_MAX_RANKS (required)
 *   rails: 1                           # 1..RG_MAX_RAILS, default 1; "up to 2": as many as
 *                                      #   the transport declares, at most 2 (rg_sc_fit)
 *   qp: uc                             # uc | rc; unstated: uc, or rc for a transport that
 *                                      #   declares no uc (rg_sc_fit)
 *   algorithm: ring                    # ring | mesh | auto, default auto
 *   timeout: 10                        # the transport's deadline per wait, seconds, default 10
 *   deadline: 60                       # the runner's for the whole scenario, default 60
 *   seed: 7                            # inputs and probabilistic faults, default 1
 *   zero_copy: true                    # register each call's buffers with the transport
 *                                      #   (mem_register) so it may send in place; default false
 *   ownership: false                   # the shim's buffer-ownership sanitizer; default true
 *   trace: true                        # the shim's verbs trace (every QP's peer, post and
 *                                      #   completion, for triage's causes); default false
 *   faults:                            # the shim's plan, one rule per item (optional)
 *     - error status=WR_FLUSH_ERR op=recv rank=1 nth=3
 *     - {rule: "delay ms=50 rank=0", optional: true}   # may fire nowhere without failing
 *   exec:                              # instead of program: a verbs program, unmodified
 *     command: "rg-fi-probe --msgs 3"  #   every rank runs it (ranks may be 1), or
 *     server: "ibv_rc_pingpong -p {port}"   #   rank 0, and
 *     client: "ibv_rc_pingpong -p {port} {host}"   # rank 1 (ranks: 2)
 *     launcher: "mpirun -np 2 ./prog"  #   or a launcher, run once, that starts every rank
 *     client_after: 1                  #   start the client then, not when {port} listens
 *     service: [0]                     #   ranks that serve until stopped (SIGTERM once the
 *     service_grace: 5                 #   others end, SIGKILL this many seconds later)
 *   program:                           # at least one step
 *     - op: all_reduce                 # all_reduce | all_gather | reduce_scatter | broadcast |
 *       dtype: float32                 #   sendrecv | barrier | create | destroy
 *       count: 1021                    # elements (per rank for all_gather/reduce_scatter)
 *       redop: sum                     # all_reduce, reduce_scatter: sum | prod | max | min
 *       root: 0                        # broadcast
 *       from: 0                        # sendrecv: one rank sends count elements to another
 *       to: 1
 *       repeat: 3                      # default 1
 *       inplace: true                  # default false
 *       values: rounding               # all_reduce, reduce_scatter: exact (default) |
 *                                      #   rounding | special (rg_data.h, rg_values)
 *   known:                             # a known failure: reported xfail, not failed
 *     why: "ucmatose never checks a completion's status"   # required
 *     all: ERROR_SWALLOWED             #   per rank, or all: a failure verdict's name
 *   expect:                            # default: rg_sc_expect_default, below
 *     all: ok                          # ok | detected | killed | any (ok, detected or killed);
 *                                      #   killed: ended by its own kill or stop fault
 *     1: detected@init                 # per rank, overriding all; detected@init or detected@N:
 *                                      #   the error must come from init or program step N
 *     2: detected@3:completion|timeout #   and :CLASS[|CLASS] the status it must carry, named
 *                                      #   as the status table's without RG_ERR_, lower case
 */
#ifndef RG_SCENARIO_H
#define RG_SCENARIO_H

#include "base/rg_base.h"
#include "fi_plan.h"
#include "railguard/plugin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RG_SC_NAME_MAX 128
#define RG_SC_RULE_MAX 512
#define RG_SC_FAULTS_MAX (FI_MAX_RULES * RG_SC_RULE_MAX)
#define RG_SC_OPS_MAX 256
/* env: variables every rank starts with (rg_sc_env.c). */
#define RG_SC_ENV_MAX 16
#define RG_SC_ENV_NAME_MAX 64
#define RG_SC_ENV_VALUE_MAX 256
typedef struct rg_sc_env {
    char name[RG_SC_ENV_NAME_MAX];
    char value[RG_SC_ENV_VALUE_MAX];
} rg_sc_env;
/* Why an exec program takes no wire fault (a scenario's exec, railguard exec --faults). */
#define RG_SC_EXEC_NO_WIRE                                                                         \
    "a wire fault acts on the rails of railguard's own ranks (a program of steps, or run "         \
    "--external under mpirun across nodes); an exec program chooses its own devices, so it would " \
    "act on nothing"
#define RG_SC_COUNT_MAX (64u << 20) /* elements */

typedef enum {
    RG_SC_ALL_REDUCE,
    RG_SC_ALL_GATHER,
    RG_SC_REDUCE_SCATTER,
    RG_SC_BROADCAST,
    RG_SC_SENDRECV,
    RG_SC_BARRIER,
    RG_SC_CREATE,  /* create the communicator again (after destroy) */
    RG_SC_DESTROY, /* destroy it; the program starts with one created */
    RG_SC_KIND_COUNT
} rg_sc_kind;

typedef enum {
    RG_SC_EXPECT_OK,
    RG_SC_EXPECT_DETECTED,
    RG_SC_EXPECT_ANY,
    RG_SC_EXPECT_KILLED,
    /* ok, or detected where and as it says: a rank the fault need not reach (its part of the
     * collective may be done before the fault lands) is right either way */
    RG_SC_EXPECT_OK_OR_DETECTED
} rg_sc_expect;

/* Where a `detected` must come from: anywhere, init (the communicator's creation), or step N. */
#define RG_SC_AT_ANY (-2)
#define RG_SC_AT_INIT (-1)
/* Classes: a bit per status, bit -st for RG_ERR_* st; 0 is any class. */
#define RG_SC_CLASS_BITS 32
/* What an expectation may be, for the parser's error. */
#define RG_SC_EXPECT_FORMS                                                                         \
    "ok, [ok|]detected[@init|@STEP][:CLASS[|CLASS]], killed or any (CLASS: timeout, completion, "  \
    "...)"
/* Room for the longest expectation rg_sc_expect_str spells. */
#define RG_SC_EXPECT_STR_MAX 192

typedef struct rg_sc_op {
    rg_sc_kind kind;
    rg_dtype dtype; /* default float32 */
    rg_redop redop; /* default sum */
    size_t count;   /* default 1 (unused by barrier, create, destroy) */
    int root;       /* broadcast, default 0 */
    int from, to;   /* sendrecv (required there) */
    int repeat;     /* >= 1 */
    bool inplace;
    int values; /* rg_values (rg_data.h): all_reduce, reduce_scatter; default exact */
    int line;   /* the line of the step's "op:" in the file */
} rg_sc_op;

/*
 * exec: a program run unmodified under the shim instead of program steps (railguard exec's
 * scenario form): `command` run by every rank, or `server` (rank 0) and `client` (rank 1),
 * the client started once the server listens on {port} or client_after seconds after it.
 * Words as a shell splits them, quotes and all, without expansions (rg_split_words); whether
 * the program exists is the runner's
 * check, at load.
 */
#define RG_SC_EXEC_MAX 4096
typedef struct rg_sc_exec {
    bool on;
    char command[RG_SC_EXEC_MAX];
    char server[RG_SC_EXEC_MAX];
    char client[RG_SC_EXEC_MAX];
    /* A launcher (mpirun, srun) run once, that starts the ranks itself: each process it starts
     * with a launcher's rank (FI_RANK_VARS) is judged as that rank (docs/exec.md). */
    char launcher[RG_SC_EXEC_MAX];
    double client_after; /* -1: when the server listens */
    int line;            /* the line of "exec:" */
    /* Ranks that serve until stopped (bit r: rank r): once every other rank has ended, each
     * still running is asked for the shim's summary, sent SIGTERM, and SIGKILL after
     * service_grace seconds; it is judged on what it did before (docs/exec.md). */
    uint64_t services;
    double service_grace; /* default 5 */
} rg_sc_exec;

/* One rule of the fault plan, as the file wrote it. */
typedef struct rg_sc_fault {
    char rule[RG_SC_RULE_MAX];
    int line;      /* its line in the file */
    int kind;      /* enum fi_kind, as the plan library read it */
    bool optional; /* may fire on no rank without the scenario failing NOT_EXERCISED */
} rg_sc_fault;

/*
 * A failure's signature (judge/rg_signature.c): what a bug decides and nothing a run decides.
 * Failures with equal keys are one defect to railguard triage.
 */
#define RG_SIG_FRAMES 4
typedef struct rg_sig {
    int origin;       /* the rank whose failure came first (the judge's), or the first failed */
    char first[32];   /* its verdict, e.g. "DEADLOCK" */
    char cls[32];     /* its error class ("timeout", "completion"), "" none */
    char op[48];      /* the operation it failed in ("all_reduce"), "init", or "end" */
    char algo[48];    /* the algorithms its transport said it ran ("mesh+ring"), "" unknown */
    char others[160]; /* the other failed ranks' verdicts, distinct and sorted, '+'-joined */
    char frames[RG_SIG_FRAMES][96]; /* where hung ranks wait: their first own frame, sorted */
    int nframes;
    char faults[96]; /* the kinds of the faults that fired, distinct and sorted, "" none */
    char key[1024];  /* all of the above on one line */
} rg_sig;

/* A known-failures file's signature entry: the fields it names must equal a failure's. */
#define RG_SC_KSIG_MAX 32
#define RG_SC_KSIG_SEEN 8
enum {
    RG_SIG_HAS_CLS = 1,
    RG_SIG_HAS_OP = 2,
    RG_SIG_HAS_ALGO = 4,
    RG_SIG_HAS_OTHERS = 8,
    RG_SIG_HAS_FAULTS = 16,
    RG_SIG_HAS_FRAMES = 32,
};
typedef struct rg_sc_ksig {
    rg_sig sig;   /* first always (but "" in an entry by cause); the rest as `has` says */
    unsigned has; /* RG_SIG_HAS_* */
    /* A cause the failure's own evidence must prove (rg_result's cause), RG_C_NONE for none:
     * an entry by cause matches a failure of that cause whatever its signature fields but the
     * ones it names -- the same bug met through another verdict, step or frame. */
    rg_cause cause;
    char why[256]; /* what it is, for the xfail line */
    char rate[32]; /* how often triage saw it ("2 of 5"), "" unsaid */
    int nseen;     /* the scenarios triage saw it in: one of them passing says so (xpass) */
    char seen[RG_SC_KSIG_SEEN][RG_SC_NAME_MAX];
    int line; /* its line in the file */
} rg_sc_ksig;

typedef enum {
    RG_SC_EACH_NONE,
    RG_SC_EACH_ERROR,   /* an error completion at each poll site, per op it hands out */
    RG_SC_EACH_NEGPOLL, /* a negative ibv_poll_cq return at each poll site */
    RG_SC_EACH_COUNT
} rg_sc_each;
extern const char *const rg_sc_each_names[RG_SC_EACH_COUNT]; /* "", "error", "negpoll" */
#define RG_SC_EACH_SITE_DEPTH 3 /* frames a site is named by: the reference's wrappers are 2 */

typedef struct rg_scenario {
    char name[RG_SC_NAME_MAX];
    int ranks;
    int rails;
    rg_qp_type qp;
    /* The shape the scenario is not about: an unstated qp and "rails: up to N" take what the
     * transport declares (rg_sc_fit), so a scenario states them only when they are its
     * subject (UC's drops, crossed rails). fit_note says what changed, "" for nothing. */
    bool qp_fit;
    bool rails_fit;
    int rails_asked; /* "up to N": N, kept when rails is cut (a written copy says it again) */
    char fit_note[96];
    rg_algo algo;
    double timeout_s;
    double deadline_s;
    /* Every time above, in exec: and in the faults, multiplied by this (rg_scenario_scale: a second
     * attempt on a machine too slow for the first); 0 or 1: as written. */
    int time_scale;
    uint64_t seed;
    bool zero_copy;
    bool ownership; /* the plan the ranks get holds the sanitizer's rule */
    bool uc_as_rc;  /* ... and uc_as_rc (the run's --uc-as-rc; never read from a file) */
    bool trace;     /* ... and the verbs trace's */
    char faults[RG_SC_FAULTS_MAX]; /* the rules one per line (rule i on line i+1), "" when none */
    int nfaults;
    rg_sc_fault fault[FI_MAX_RULES];
    int nops;
    rg_sc_op ops[RG_SC_OPS_MAX];
    rg_sc_exec exec; /* instead of ops */
    rg_sc_expect expect[RG_MAX_RANKS];
    int expect_at[RG_MAX_RANKS];       /* RG_SC_AT_ANY, RG_SC_AT_INIT or a step, for detected */
    uint32_t expect_cls[RG_MAX_RANKS]; /* the classes a detected may carry, 0: any */
    bool expect_named[RG_MAX_RANKS];   /* the file said it (by rank or all), not the default */
    int expect_at_max;                 /* the highest step named, and its line, for the check */
    int expect_at_line;
    int expect_cls_line; /* the first class named, for the check that a program can carry it */
    /* known: a failure the program or transport is known to have (a failure verdict per rank,
     * rg_verdict's values; 0 -- ok, never a failure -- for none),
     * and why: the run reports it as xfail instead of failing, and says xpass when it stops
     * happening. */
    int known[RG_MAX_RANKS];
    char known_why[256];
    /* A known-failures file's signatures (rg_known_load), the same for every scenario of the
     * run: a failure with one of them is xfail whatever its scenario (judge/rg_signature.c). */
    int nksig;
    rg_sc_ksig ksig[RG_SC_KSIG_MAX];
    /* exclusive: scenarios naming the same resource never run at once under -j (a program's
     * fixed port, a device it must have alone); "" for none. */
    char exclusive[RG_SC_NAME_MAX];
    /* env: what every rank starts with besides railguard's own, in file order -- the
     * transport's tuning (RG_IB_TIMEOUT: 16 for a cut the default retry window is too short
     * for); a name railguard sets itself is refused. */
    int nenv;
    rg_sc_env env[RG_SC_ENV_MAX];
    /* each_site: not one run but one point at each verbs call site of the program that the
     * kind applies to, found by a counting run (railguard sweep --by-site at depth
     * RG_SC_EACH_SITE_DEPTH): the error completion or negative poll every poll site must
     * report, whichever of several a transport has. A directive of the run, never written back
     * (rg_sc_write): the sweep's counting run and its points are plain scenarios. */
    rg_sc_each each_site;
    int each_site_line;
} rg_scenario;

/*
 * Parses a scenario from `text` (`len` bytes); `path` names it in errors and gives the default
 * name. Returns 0, or -1 with one line "PATH:LINE: <what> '<value or key>'" in err.
 */
int rg_scenario_parse(const char *text, size_t len, const char *path, rg_scenario *sc, char *err,
                      size_t errlen);

/* Reads and parses a file (at most 1 MiB). Errors as above ("PATH: cannot open: ..."). */
int rg_scenario_load(const char *path, rg_scenario *sc, char *err, size_t errlen);

/*
 * The scenario fitted to what a transport declares (its caps' qp_types and max_rails): an
 * unstated qp becomes rc when uc is not declared and rc is; "rails: up to N" becomes the
 * declared maximum when that is fewer. What the file states is never changed, so a scenario
 * about UC or about two rails is still skipped by a transport without them. The runner and
 * every rank call it with the same caps, so all agree. Returns 1 when it changed something
 * (fit_note says what, for the reports), else 0.
 */
int rg_sc_fit(rg_scenario *sc, uint32_t qp_types, int max_rails);

/*
 * A transport's known-failures file (railguard run --known FILE):
 *
 *   transport: jaccl                     # optional: refused for a transport of another name
 *   known:
 *     ring-3r-all-ops:                   # a scenario's name, then its known: block
 *       why: "ring all_gather wrong on 3 ranks (mlx#4193)"
 *       all: SILENT_CORRUPTION
 *   signatures:                          # optional: failures known by signature (triage)
 *     - why: "one rank waits forever in all_reduce"
 *       first: DEADLOCK                  # required; the rest, each optional, must be equal
 *       class: timeout
 *       op: all_reduce
 *       algo: ring
 *       others: DEADLOCK
 *       faults: ""
 *       frames: [jaccl::RingGroup::recv]
 *       rate: 2 of 5                     # how often triage saw it: said, not checked
 *       seen: [ring-2r-small]            # one of these passing is xpass ("not this time")
 *
 * Each entry replaces that scenario's own known failure. An entry naming a scenario not among
 * scs is a line in notes ("FILE:LINE: no scenario 'x' in this run"), not an error. A bad file
 * is -1 with one line in err naming the file and line, and no scenario changed by the entries
 * before it... except those already applied: the caller stops the run on -1.
 */
int rg_known_load(const char *path, const char *transport, rg_scenario *const *scs, int n,
                  char *notes, size_t noteslen, char *err, size_t errlen);

/*
 * Writes sc as a scenario file that parses back to the same scenario (every key spelled out,
 * rules quoted); `comment`, when given, becomes its first line. Returns 0, or -1 on a write
 * error.
 */
int rg_scenario_write(FILE *f, const rg_scenario *sc, const char *comment);
/* rg_scenario_write into the file at path (made or emptied). 0, or -1. */
int rg_scenario_save(const char *path, const rg_scenario *sc, const char *comment);

/* --- smaller scenarios (rg_sc_shrink.c): what a failure is minimised through -------------- */
/* Every step's count halved (at least 1; barrier, create and destroy have none): 0, or -1 when
 * no count could be halved. */
int rg_sc_halve_counts(const rg_scenario *in, rg_scenario *out);
/*
 * The next smaller candidate after *cursor (start at 0; after taking a candidate, start again
 * at 0 from it): every fault cut, one rank fewer, one rail fewer, counts halved, a step cut
 * (its faults and expectations renumbered), one fault cut -- each only where the scenario stays one
 * the runner takes (it is written and parsed back). 0 with out and what ("2 ranks", "without step 1
 * (broadcast)"), or -1 when there are no more.
 */
int rg_sc_shrink_next(const rg_scenario *cur, int *cursor, rg_scenario *out, char *what,
                      size_t len);

const char *rg_sc_kind_name(rg_sc_kind k);
const char *rg_sc_expect_name(rg_sc_expect e);
/*
 * The one default expectation, for every rank a scenario file's `expect` does not name and for
 * `railguard exec` without --expect: ok when every fault is one a correct program rides out
 * (delay, delay_first, stall, late, count: it must still deliver), any when some fault is one
 * it may rightly report (error, negpoll, lose, nomem, corrupt, swap_rails, kill, stop, exit).
 * Under any, the oracles still fail a rank (ERROR_SWALLOWED, DEADLOCK, NOT_EXERCISED, ...).
 */
rg_sc_expect rg_sc_expect_default(const rg_scenario *sc);
/* Every rank whose expectation sc->expect_named does not mark gets that default. */
void rg_sc_expect_defaults(rg_scenario *sc);
/* "ok", "detected", "detected@init", "detected@3:timeout|peer_abort", as a scenario spells
 * it; returns buf. */
const char *rg_sc_expect_str(rg_sc_expect e, int at, uint32_t cls, char *buf, size_t len);
/* The reverse, for s[0..len): 0, or -1 when it is no expectation. */
int rg_sc_expect_parse(const char *s, size_t len, rg_sc_expect *e, int *at, uint32_t *cls);
/* A status's class, "timeout" for RG_ERR_TIMEOUT ("?" outside the table); returns buf. */
const char *rg_sc_class_name(int st, char *buf, size_t len);
/* The reverse, for s[0..len): the status, or 0 when it names none. */
int rg_sc_class_of(const char *s, size_t len);

/* Every time of a scenario multiplied by f -- the timeout, the deadline, an exec client's head
 * start and a service's grace -- and the shim told to scale its plan's (time_scale): a second
 * attempt on a machine too slow to judge the first (judge/rg_slow.c). */
void rg_scenario_scale(rg_scenario *sc, int f);
/*
 * The runner's deadline cut to s seconds, or to twice the timeout when that is more, never
 * lengthened (`run --deadline`, for triage's re-runs): a transport given T s to report a
 * failure has had 2T, so a rank still in its call then hangs, and costs s seconds rather than
 * the whole deadline. An exec scenario without a timeout keeps its deadline. The deadline as
 * cut, or 0 when it was not.
 */
double rg_scenario_cut_deadline(rg_scenario *sc, double s);

#endif
