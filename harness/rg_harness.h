/* SPDX-License-Identifier: MIT */
/*
 * rg_harness.h - the `railguard` command's one header: the runner, the worker it starts for each
 * rank, verdicts and reports. The harness sees transports only through the plugin ABI
 * (railguard.h's "plugin ABI" section, loaded with dlopen) and the shim only through its plan
 * grammar and environment: it links neither.
 */
#ifndef RG_HARNESS_H
#define RG_HARNESS_H

#include "railguard/plugin.h"
#include "rg_data.h"
#include "rg_scenario.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* --- verdicts (ULFM/Jepsen style), per rank -------------------------------------------------- */
/*
 * The one verdict table, lowest precedence first. A rank can have several findings (it reported
 * corruption, then crashed in finalize); its verdict is the finding of highest precedence, and
 * every finding is kept beside it. Later verdicts join this table, never one beside it.
 */
#define RG_VERDICTS(X)                                                                             \
    X(OK, "ok", "returned success; every output, guard band and send buffer was right")            \
    X(UNSUPPORTED, "unsupported",                                                                  \
      "the transport declared it lacks what a step needs, or returned RG_ERR_UNSUPPORTED: the "    \
      "step did not run, which is neither a pass nor a failure (reported as skipped)")             \
    X(DETECTED, "detected", "returned an error after a planned fault had fired on some rank")      \
    X(KILLED, "killed", "ended by its own kill, stop or exit fault, as planned")                   \
    X(NOT_EXERCISED, "NOT_EXERCISED", "a planned fault fired on no rank: the run proves nothing")  \
    X(LEAK, "LEAK",                                                                                \
      "ended normally, but verbs objects (QPs, CQs, MRs, PDs, channels, contexts) or file "        \
      "descriptors the transport made were never freed")                                           \
    X(SLOW_DETECTION, "SLOW_DETECTION",                                                            \
      "failed, but more than half the timeout after a peer's failure it could have been told "     \
      "of at once")                                                                                \
    X(NOT_FAIL_STOP, "NOT_FAIL_STOP",                                                              \
      "after a call returned an error, the same call again returned success, or outlived the "     \
      "timeout before failing: the transport carries on after a failure")                          \
    X(BUFFER_REWRITTEN_IN_FLIGHT, "BUFFER_REWRITTEN_IN_FLIGHT",                                    \
      "the program wrote memory the NIC owned: a send buffer before its completion, or a "         \
      "posted receive buffer past what arrived")                                                   \
    X(ERROR_SWALLOWED, "ERROR_SWALLOWED",                                                          \
      "every call returned success though the shim handed the rank an error completion or a "      \
      "negative poll")                                                                             \
    X(ERROR_WITHOUT_FAULT, "ERROR_WITHOUT_FAULT",                                                  \
      "returned an error though no planned fault had fired before it")                             \
    X(ERROR, "ERROR", "the harness could not run the rank, or the shim did not instrument it")     \
    X(CRASH, "CRASH", "died by a signal, exited without a verdict, or non-zero after it")          \
    X(DEADLOCK, "DEADLOCK", "still running at the deadline; backtrace taken, then killed")         \
    X(SILENT_CORRUPTION, "SILENT_CORRUPTION",                                                      \
      "returned success with wrong data, a broken guard band or a changed send buffer")

#define RG__VERDICT_ENUM(id, name, what) RG_V_##id,
typedef enum { RG_VERDICTS(RG__VERDICT_ENUM) RG_V_COUNT } rg_verdict;
#undef RG__VERDICT_ENUM

const char *rg_verdict_name(rg_verdict v);
/* What the verdict means, one line (docs and --help use it). */
const char *rg_verdict_meaning(rg_verdict v);
/* The verdict named (as rg_verdict_name spells it), or -1. */
int rg_verdict_of(const char *name);

#define RG_MAX_FINDINGS 4

typedef struct rg_finding {
    rg_verdict verdict;
    double t_s; /* seconds from the scenario's start; -1 when unknown */
    char text[320];
} rg_finding;

#define RG_STATUS_V1 1

#define RG_CLOCK_ROUNDS 16
/* What a measurement can be: beyond a year of offset or an hour of doubt it is not one of ours.
 * The rank receiving its offset and `railguard report` reading it back hold the same bounds. */
#define RG_CLOCK_OFFSET_MAX_MS 3.2e10
#define RG_CLOCK_ERR_MAX_MS 3.6e6

/* A rank's CLOCK_MONOTONIC against rank 0's, measured by the runners before the workers start. */
typedef struct rg_clock {
    bool measured;    /* offset_ms holds a measurement (rank 0 and a lone rank: 0, exactly) */
    double offset_ms; /* this rank's clock minus rank 0's at one instant */
    double err_ms;    /* the offset is within +-err_ms: half the least round trip's delay */
    int rounds;       /* round trips taken (the least delayed one counts) */
    char why[200];    /* not measured: why; rank 0: which ranks it never met, if any */
} rg_clock;

typedef struct rg_rank_result {
    rg_verdict verdict; /* the finding of highest precedence */
    double t_s;         /* when it was found, seconds from the scenario's start; -1 unknown */
    int step;           /* the program step it ended in (-1: init), or nops when it finished */
    int rep;            /* the repetition of that step */
    double step_t_s;    /* when that step began */
    double left_t_s;    /* when the process ended (-1: still running at the deadline) */
    char where[160];    /* that step's description, e.g. "all_reduce float32 sum count 1021" */
    /* The status of the call it failed in (RG_ERR_*); RG_STATUS_V1 when the transport's ABI
     * carries none; 0 when no call failed (a check of ours found the error) or none was said. */
    int status;
    char detail[1024]; /* the verdict's finding, whole */
    int nfindings;
    rg_finding finding[RG_MAX_FINDINGS];
    /* The ownership sanitizer's word on this rank: "" (off), "checked S sends, R receives", or
     * "not sanitized: ..." when some requests went where the shim cannot follow. */
    char ownership[128];
    /* What the transport said its calls ran ("ring/2:3 mesh/1:2"), "" when it cannot say. */
    char calls[160];
    /* An external launch's rank: its clock against rank 0's (rg_clock.c); zero elsewhere. */
    rg_clock clock;
    /* A service the runner stopped once the other ranks had ended (exec: service): it reports
     * through its clients, not an exit status, so an error handed to it is not "swallowed". */
    bool service;
    /* What the machine took from it (rg_slow.c), -1 when not measured: seconds from its fork
     * to its shim's load event, and seconds its threads were runnable but waiting for a CPU.
     * start_unseen: it never loaded, and start_s is when the runner stopped waiting for it. */
    double start_s, cpu_wait_s;
    bool start_unseen;
} rg_rank_result;

/*
 * Adds a finding to a rank and makes the one of highest precedence its verdict (the first of
 * equal ones stays). When the list is full the lowest finding gives way.
 */
void rg_rank_find(rg_rank_result *k, rg_verdict v, double t_s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Turns the rank's `from` findings into `to` (e.g. detected with no fault before it). */
void rg_rank_recast(rg_rank_result *k, rg_verdict from, rg_verdict to, const char *prefix);

/* One fault rule's evidence across the ranks. */
typedef struct rg_rule_result {
    char rule[RG_SC_RULE_MAX];
    int line;
    bool optional;
    bool counting; /* "count": injects nothing, never fires */
    uint64_t fired;
    int64_t matched;                 /* summed over the ranks that summarised; -1 when none did */
    uint32_t fired_by[RG_MAX_RANKS]; /* per rank */
} rg_rule_result;

typedef struct rg_result {
    char name[RG_SC_NAME_MAX];
    char path[1024];
    char dir[1024]; /* this scenario's logs, events and backtraces */
    int ranks;
    rg_sc_expect expect[RG_MAX_RANKS];
    int expect_at[RG_MAX_RANKS];       /* where a detected must come from (rg_scenario.h) */
    uint32_t expect_cls[RG_MAX_RANKS]; /* the classes it may carry, 0: any (rg_scenario.h) */
    rg_rank_result rank[RG_MAX_RANKS];
    int nrules;
    rg_rule_result rule[FI_MAX_RULES];
    bool passed;
    char why[1200];   /* the first failure in time, named */
    int first_rank;   /* whose failure that is (rg_judge), -1 when none failed */
    char first[1200]; /* the first failing rank's line, "" when none failed */
    char repro[4096];
    double seconds;
    /* Where the times count from, for merging the ranks of an external launch. */
    double t0_mono_ms;
    char host[64];
    /* A merge across hosts: each rank's times were placed on rank 0's clock by its measured
     * offset (rank[r].clock), all within +-clock_err_ms. t0_mono_ms is then on rank 0's clock. */
    bool clock_placed;
    double clock_err_ms;
    int self_rank; /* an external launch's one rank: which it is (its result holds rank 0) */
    /* LEAK is a finding, not a failure: a rank is judged by its findings below it (railguard
     * exec without --leaks: many programs leave cleanup to exit). */
    bool leak_ok;
    /* The scenario's known failure (a failure verdict per rank; 0, ok, for none) and why; rg_judge
     * sets known_state: a run that failed exactly so passes as xfail, one whose known failure did
     * not happen passes as xpass (and says so). */
    int known[RG_MAX_RANKS];
    char known_why[256];
    enum { RG_KNOWN_NONE, RG_KNOWN_XFAIL, RG_KNOWN_XPASS } known_state;
    /* Passed, but some rank skipped steps its transport lacks: neither a pass nor a failure. */
    bool skipped;
    /* Too slow to judge (rg_slow.c). lag_s: the runner's timed waits woke up at most this late;
     * time_scale: every time of this attempt was the scenario's times this (1: as written);
     * attempts: this is the scenario's attempt number; slow_note: why it was run again (the
     * first attempt's files are in DIR/attempt-1); too_slow: this attempt too ran out of time
     * on a machine that took a large share of it, so the result says nothing of the transport
     * (not passed, and not its failure: "SLOW"). */
    double lag_s;
    int time_scale, attempts;
    char slow_note[700];
    bool too_slow;
} rg_result;
/*
 * Too slow to judge (rg_slow.c). rg_slow_cpu_wait: seconds the threads of process pid were
 * runnable but waiting for a CPU, -1 when /proc cannot say. rg_slow_lag: *lag_s raised to how
 * late a wait meant to end at want_s ended (now_s). rg_slow_held_back: whether a judged
 * result's first failure ran out of time (the timeout, the deadline, the slow-detection bound)
 * while the machine held the ranks back by a share of it -- a late start, a wait for a CPU or
 * the runner's stalls, or with `strong` a late start or the runner's stalls alone -- with the
 * measurement in why. rg_slow_scale: every time of a scenario multiplied by f.
 */
double rg_slow_cpu_wait(long pid);
void rg_slow_lag(double *lag_s, double want_s, double now_s);
bool rg_slow_held_back(const rg_result *r, const rg_scenario *sc, bool strong, char *why,
                       size_t len);
void rg_slow_scale(rg_scenario *sc, int f);
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

/* "PASS", "FAIL", "XFAIL", "XPASS", "SKIP" or "SLOW" for a judged result. */
const char *rg_result_word(const rg_result *r);

/* Decides passed/why from the ranks' verdicts and the expectations. Returns passed. */
bool rg_judge(rg_result *r);

/* --- evidence: what the shim saw in one rank (rankN.events.jsonl) ------------------------- */
#define RG_EV_PHASES_MAX 256
#define RG_EV_PROCS 32
typedef struct rg_evidence {
    bool present;  /* the events file was there */
    bool loaded;   /* the shim said it loaded */
    bool totals;   /* it summarised (at exit, on a snapshot, or on request) */
    bool snapshot; /* that summary came from a snapshot (a rank killed at the deadline) */
    uint64_t contexts, qps, cqs, posts_send, posts_recv, polls, cqe, cqe_err;
    double first_fault_mono_ms; /* CLOCK_MONOTONIC of its first fired fault; -1 none */
    int first_fault_rule;
    uint64_t fired[FI_MAX_RULES];
    int64_t matched[FI_MAX_RULES]; /* -1: no summary of that rule */
    char queues[512];    /* QPs with work outstanding at the last summary, for a hang's detail */
    char verbs[256];     /* the libibverbs the shim wrapped, as it reported at load */
    int snapshot_signal; /* the signal its snapshot handler took, as it said at load; 0 none */
    /* Lines that are not events as the shim writes them (not JSON, a field of the wrong type,
     * a value out of range, cut short), and the first of them: "line N: why: 'the line'". Each
     * is a finding of the rank (rg_evidence_apply), never a silent skip. */
    int bad_lines;
    char unreadable[300];
    /* The ownership sanitizer: its last "owned" summary, and its first finding in full. */
    bool owned;
    uint64_t own_sends, own_recvs, own_rewritten, own_unsanitized;
    char own_first[200];
    /*
     * A rank is a process tree: each process's evidence apart, by the pid on its lines, in the
     * order each first wrote (proc[0] the rank's own process). The rank's counts above are
     * their sums; leaks are judged per process. Past RG_EV_PROCS the rest share the last slot
     * (folded counts them).
     */
    int nprocs, folded;
    struct rg_ev_proc {
        long pid, ppid; /* ppid from its load event; 0 when it said none */
        bool loaded;    /* it wrote a load event */
        bool forked;    /* its parent is another process of this rank */
        bool totals;    /* it summarised */
        bool snapshot;  /* its last summary came from a snapshot */
        int snapshot_signal;
        double load_mono_ms; /* CLOCK_MONOTONIC of its load event; -1 when it said none */
        uint64_t time_scale; /* its plan's times were scaled by this (0: it said nothing) */
        char exe[96];        /* its executable's file name */
        uint64_t contexts, qps, cqs, posts_send, posts_recv, polls, cqe, cqe_err;
        /* Verbs objects still alive when it exited (its "alive" event at exit; none when it
         * was killed): contexts, pds, mrs, cqs, qps, channels. */
        bool alive_at_exit;
        int64_t alive[6];
        uint64_t fired_ev[FI_MAX_RULES]; /* fault events it wrote */
        uint64_t fired[FI_MAX_RULES];    /* its last rule summary's counts */
        int64_t matched[FI_MAX_RULES];   /* -1: it summarised no such rule */
        bool owned;
        uint64_t own_sends, own_recvs, own_rewritten, own_unsanitized;
    } proc[RG_EV_PROCS];
    /* The events an op= filter counts (enum fi_op), summed over every QP's last summary (at its
     * destroy, or at exit): what a sweep plans its points from. */
    uint64_t op_posts[FI_OP_ATOMIC + 1], op_cqe[FI_OP_ATOMIC + 1];
    /* The same per phase of the program (the shim's "phase" events, when the program marks its
     * steps): what a sweep anchors its points to. Past RG_EV_PHASES_MAX, phases_lost counts. */
    int nphases, phases_lost;
    struct rg_ev_phase {
        int step, rep; /* step -1: init */
        uint64_t posts[FI_OP_ATOMIC + 1], cqe[FI_OP_ATOMIC + 1], polls;
    } phase[RG_EV_PHASES_MAX];
} rg_evidence;

/* Reads one rank's events. A missing file is not an error (present stays false). */
int rg_evidence_read(const char *path, rg_evidence *ev, char *err, size_t errlen);

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
void rg_evidence_apply(rg_result *r, const rg_scenario *sc, const rg_evidence *ev, int lo, int hi,
                       double t0_mono_ms, int rules);

/*
 * Merges the views an external launch's ranks left (each holds its rank as rank 0, self_rank
 * naming it) into one result, applies the cross-rank rules with ev[r] for rank r, and judges
 * it. `ordered` says whether all ran on one host (one clock). Returns 0, or -1 with a line.
 */
int rg_merge(rg_result *out, const rg_scenario *sc, const rg_result *views, int nviews,
             rg_evidence *ev, bool *ordered, char *err, size_t errlen);

/* `railguard report DIR`: rg_merge over DIR's rankR.result.json and events, with reports. */
int rg_report_main(int argc, char **argv);

/* --- preflight, and what ran ---------------------------------------------------------------- */
#define RG_RUN_GIDS 4

typedef struct rg_run_device {
    char name[64];
    char state[32];
    int ngids;
    char gids[RG_RUN_GIDS][48];
} rg_run_device;

/* Enough to rerun the same thing elsewhere; report.json and JUnit's properties carry it. */
typedef struct rg_run_info {
    char railguard[64];
    char kernel[256];
    char verbs[1024]; /* the libibverbs object the shim wraps (its file name has the version) */
    char shim[4096];
    char shim_build_id[48];
    char transport[4096];
    char transport_build_id[48];
    char transport_name[64]; /* the plugin's own name, version and ABI: "jaccl 0.1 (ABI 2)" */
    char transport_says[128];
    int ndevices;
    rg_run_device dev[RG_MAX_RAILS];
    char seed[32]; /* --seed, or "per scenario" */
} rg_run_info;

/*
 * Checks that every device exists with an ACTIVE port 1, that the shim loads and has its
 * control table, and that the transport loads and has a plugin table; fills `info`. Returns
 * 0, or -1 with one line in err.
 */
int rg_preflight(const char *shim, const char *transport, char (*devices)[64], int ndevices,
                 rg_run_info *info, char *err, size_t errlen);
/* Whether the locked-memory limit allows `need` bytes registered per rank; -1 with a line. */
int rg_preflight_memlock(uint64_t need, char *err, size_t errlen);

/* --- reports ----------------------------------------------------------------------------- */
/* One result as JSON (the supervisor hands results to the runner this way, too). */
int rg_result_save(const rg_result *r, const char *path, char *err, size_t errlen);
int rg_result_read(rg_result *r, const char *path, char *err, size_t errlen);
/* `info` (what ran) may be NULL. */
int rg_report_json(const rg_result *res, int n, double total_s, const rg_run_info *info,
                   const char *path, char *err, size_t errlen);
int rg_report_junit(const rg_result *res, int n, double total_s, const rg_run_info *info,
                    const char *path, char *err, size_t errlen);
/* The summary table and the last line, "N passed, M failed". */
void rg_report_table(FILE *f, const rg_result *res, int n, double total_s);
/* The live line for one finished scenario. */
void rg_report_line(FILE *f, const rg_result *r);

/*
 * Appends " WORD" to the command line in buf (len bytes), quoted for a POSIX shell when it
 * holds anything but letters, digits and _-./,:=+@% ('a b' -> 'a b', it's -> 'it'\''s'), so a
 * printed reproduce line pastes back as the same command. Returns -1 (buf cut) when it does
 * not fit.
 */
int rg_shell_word(char *buf, size_t len, const char *word);

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
 * Shrinking a failing point, one candidate at a time; the driver keeps a candidate only if it
 * still fails the same way with its fault fired. Both are pure, for the unit tests.
 *
 * rg_sweep_shrink_step: the program cut to the point's anchored step alone, run once, with
 * the rule re-anchored there (step=0 rep=0; init keeps the first step and step=init; finalize
 * keeps the last step and is step=1). -1 for a whole-run point (its n depends on every step
 * before it), or a step that cannot stand alone (create, destroy), or nothing to cut.
 *
 * rg_sweep_shrink_count: every step's count halved (at least 1; a step that has no count, or
 * already 1, stays). -1 when no count changed.
 *
 * out gets the candidate with the point's one rule as its faults and `expect: any` everywhere.
 */
int rg_sweep_shrink_step(const rg_scenario *sc, const rg_sweep_point *p, rg_scenario *out);
int rg_sweep_shrink_count(const rg_scenario *in, rg_scenario *out);
int rg_sweep_main(int argc, char **argv);

/* --- the timeline (rg_timeline.c): trace.json, and the run page's picture --------------- */
/* One program step of a rank, from its status lines: [t0, t1] seconds from the scenario's
 * start, and how it ended ("ok" when the next step began, else the verdict's word). */
#define RG_TL_MAX_SPANS 1024
#define RG_TL_MAX_MARKS 128
#define RG_TL_MAX_QPS 64
typedef struct rg_tl_span {
    double t0_s, t1_s;
    int step, rep;
    char label[160];
    char result[32];
} rg_tl_span;
typedef struct rg_tl_mark { /* a fired fault */
    double t_s;
    char text[RG_SC_RULE_MAX + 64];
} rg_tl_mark;
/* A QP's summary from the shim: at exit, at destroy, or at the deadline ("snapshot"). */
typedef struct rg_tl_qp {
    double t_s;
    int ord;
    unsigned qpn;
    char dev[32], why[16];
    long long posts_send, posts_recv, cqe_send, cqe_recv, out_send, out_recv;
    char oldest[400]; /* at the deadline: its oldest requests still posted ("" none said) */
} rg_tl_qp;
typedef struct rg_tl_rank {
    bool have_status, have_events;
    double verdict_t_s; /* when it said its verdict; -1: never */
    char status[32];    /* the failed call's status, as the rank said it */
    int nspans, nmarks, nqps;
    rg_tl_span span[RG_TL_MAX_SPANS];
    rg_tl_mark mark[RG_TL_MAX_MARKS];
    rg_tl_qp qp[RG_TL_MAX_QPS];
} rg_tl_rank;
/* Rank `rank`'s timeline from r->dir (rankR.status, rankR.events.jsonl) and r's verdicts: 0,
 * or -1 when neither file is there. Lines it cannot read are skipped. */
int rg_timeline_load(const rg_result *r, int rank, rg_tl_rank *t);
/* The rank whose failure the judge named first (rg_result.first_rank) when its time is known,
 * else -1: the one the trace and the page mark, so they and the report agree. */
int rg_first_failure(const rg_result *r);
/* trace.json (Chrome Trace Event format): a process per rank with its calls, fired faults,
 * verdict and QP counters; the first failure marked. 0, or -1 with err. */
int rg_trace_write(const rg_result *r, const char *path, char *err, size_t errlen);

/* --- the run page (rg_html.c) ------------------------------------------------------------ */
/* index.html: every scenario (failures first) with its ranks' verdicts, first failure, fault
 * rules' fired counts, files, and a timeline picture of each failing one. info may be NULL. */
int rg_html_write(const rg_result *res, int n, double total_s, const rg_run_info *info,
                  const char *path, char *err, size_t errlen);
/* `railguard report DIR` on a run's directory: every scenario's trace.json and the run's
 * index.html written again from the result.json files and evidence there. Exit status. */
int rg_report_run_dir(const char *dir);

/* --- railguard bench (rg_bench_spec.c pure, rg_bench.c the command, rg_bench_rank.c a rank) -- */
/*
 * nccl-tests' conventions: sizes from -b to -e, times -f (or plus -i); -n timed iterations
 * per round after -w warmup ones; -d dtype, -o redop, -r root, -c check, -a how the ranks'
 * times combine (0 rank 0, 1 mean, 2 min, 3 max). A size is the bytes of the larger buffer
 * (all_gather's output, reduce_scatter's input), so busbw compares across operations.
 */
#define RG_BENCH_MAX_SIZES 64
#define RG_BENCH_MAX_ROUNDS 1000
typedef struct rg_bench_spec {
    uint32_t ops; /* RG_BIT(rg_plugin_op) among all_reduce..sendrecv */
    uint64_t min_bytes, max_bytes;
    int factor;          /* -f: the next size is this times the last (0 with -i) */
    uint64_t step_bytes; /* -i: the next size is the last plus this */
    int iters, warmup, rounds;
    rg_dtype dtype;
    rg_redop redop;
    int root;
    bool check;
    bool reg;    /* -R 1: the buffers registered with the transport (mem_register) */
    int average; /* -a */
    int ranks, rails;
    rg_qp_type qp;
    rg_algo algo;
    double timeout_s; /* the transport's deadline for every wait; the bench's is a bit longer */
} rg_bench_spec;

/* The operations a bench runs, by rg_plugin_op (barrier none). */
#define RG_BENCH_OPS                                                                               \
    (RG_BIT(RG_OP_ALL_REDUCE) | RG_BIT(RG_OP_ALL_GATHER) | RG_BIT(RG_OP_REDUCE_SCATTER) |          \
     RG_BIT(RG_OP_BROADCAST) | RG_BIT(RG_OP_SENDRECV))

void rg_bench_defaults(rg_bench_spec *s);
/*
 * One option shared by `railguard bench` and its ranks (long option name without "--", or a
 * one-letter nccl-tests flag): 0 taken, 1 not a bench option, -1 after one line on stderr
 * naming the flag and its value. rg_bench_args writes the spec back as such options.
 */
int rg_bench_option(rg_bench_spec *s, const char *name, const char *val);
int rg_bench_args(const rg_bench_spec *s, char *buf, size_t len, char **argv, int max);
/* The sizes -b..-e make; their number (at most max). */
int rg_bench_sizes(const rg_bench_spec *s, uint64_t *sizes, int max);
/* Elements per rank's call for `bytes` of op at n ranks (0: too small to run), and the bytes
 * that count really moves (the size column). */
size_t rg_bench_count(rg_plugin_op op, uint64_t bytes, size_t esz, int n);
uint64_t rg_bench_bytes(rg_plugin_op op, size_t count, size_t esz, int n);
/* nccl-tests' bus bandwidth factor: all_reduce 2(n-1)/n, all_gather and reduce_scatter
 * (n-1)/n, broadcast and sendrecv 1. */
double rg_bench_bus_factor(rg_plugin_op op, int n);
const char *rg_bench_op_name(rg_plugin_op op);
int rg_bench_op_of(const char *name);
/* The median of v[0..n) (sorts v); the ranks' times combined as -a says. */
double rg_bench_median(double *v, int n);
double rg_bench_combine(const double *t, int n, int average);
int rg_bench_main(int argc, char **argv);
/* One rank: `railguard worker --bench ...` (argv[0] "worker"). */
int rg_bench_rank_main(int argc, char **argv);

/* --- a transport, through the plugin ABI (rg_transport.c) ------------------------------------ */
/*
 * One loaded plugin: a version 2 table, or a version 1 table seen through the same calls (its
 * capabilities are the operations it has; its errors carry RG_TP_V1_ERROR, no status).
 */
#define RG_TP_V1_ERROR 1
typedef struct rg_tp {
    void *so;
    int abi; /* 1 or 2 */
    const rg_plugin *v2;
    const rg_plugin_ops *v1;
    const char *name, *version; /* version NULL when the plugin gives none */
    rg_plugin_caps caps;
    bool has_mem, has_last_call;
} rg_tp;

/* Loads the plugin and checks its table; -1 with one line in err. */
int rg_tp_open(rg_tp *tp, const char *path, char *err, size_t len);
/* 1 with the reason in why when the transport declares it cannot run the scenario at all (its
 * QP type, algorithm, ranks, rails, zero_copy), or this step (operation, dtype, redop,
 * in-place); else 0. */
int rg_tp_lacks_scenario(const rg_tp *tp, const rg_scenario *sc, char *why, size_t len);
int rg_tp_lacks_step(const rg_tp *tp, const rg_sc_op *op, char *why, size_t len);
/* The operations: a status of the one table, or RG_TP_V1_ERROR from a v1 plugin. */
int rg_tp_init(rg_tp *tp, const rg_plugin_args *a, void **h, char *err, size_t len);
int rg_tp_all_reduce(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt,
                     rg_redop op);
int rg_tp_all_gather(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt);
int rg_tp_reduce_scatter(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt,
                         rg_redop op);
int rg_tp_broadcast(const rg_tp *tp, void *h, void *b, size_t n, rg_dtype dt, int root);
int rg_tp_send(const rg_tp *tp, void *h, const void *b, size_t n, rg_dtype dt, int peer);
int rg_tp_recv(const rg_tp *tp, void *h, void *b, size_t n, rg_dtype dt, int peer);
int rg_tp_barrier(const rg_tp *tp, void *h);
int rg_tp_finalize(const rg_tp *tp, void *h);
const char *rg_tp_last_error(const rg_tp *tp, void *h);
int rg_tp_mem_register(const rg_tp *tp, void *h, void *buf, size_t len, void **mem);
int rg_tp_mem_deregister(const rg_tp *tp, void *h, void *mem);
/* What the last call ran (AUTO and 0 when the plugin cannot say: RG_ERR_UNSUPPORTED then). */
int rg_tp_last_call(const rg_tp *tp, void *h, rg_algo *algo, int *rails);
/* "RG_ERR_TIMEOUT", or "status N (...)" outside the table (a v1 plugin's error is worded by
 * the worker, which knows the plugin's ABI). */
const char *rg_tp_status(int st, char *buf, size_t len);

/* --- the worker (one rank) ------------------------------------------------------------------ */
typedef struct rg_worker_args {
    const char *scenario;
    int rank;
    const char *coordinator;
    const char *devices_file;
    const char *transport;
    int status_fd;
    int go_fd; /* -1, or where the runner's go byte comes once every rank is ready (loaded) */
    const char *backtrace_file; /* where a crash or RG_BACKTRACE_SIGNAL writes a backtrace */
    bool seed_set;
    uint64_t seed;
    int time_scale; /* --time-scale: the scenario's times multiplied by this (rg_slow.c) */
} rg_worker_args;

int rg_worker_main(const rg_worker_args *a);
/* The worker's command line (argv[0] and argv[1] "worker" first); returns its exit status. */
int rg_worker_cli(int argc, char **argv);

/* --- the fork server (rg_forksrv.c): ranks forked from a process started once ------------- */
typedef struct rg_forksrv {
    pid_t pid;
    int sock;
} rg_forksrv;
/* Starts a server for one rank slot: `self worker --serve 3 --transport SO` under shim. */
int rg_forksrv_start(rg_forksrv *s, const char *self, const char *shim, const char *transport,
                     char *err, size_t errlen);
/*
 * Starts one rank through s: env as "KEY=VALUE" (set) or "KEY" (unset), args the worker's
 * options, fds its log, status pipe and go pipe. Returns its pid -- a child of this process,
 * which must be a child subreaper -- or -1 with err (the server may then be stopped).
 */
pid_t rg_forksrv_spawn(rg_forksrv *s, const char *const *env, const char *const *args,
                       const int fds[3], double timeout_s, char *err, size_t errlen);
void rg_forksrv_stop(rg_forksrv *s);
/* The server's loop, in `railguard worker --serve`: until the runner closes the socket. */
int rg_worker_serve(int sock, const char *transport);

/* --- the processes of a run (rg_proc.c): workers under `run`, programs under `exec` -------- */
struct rg_proc {
    pid_t pid;
    int fd;
    char buf[4096];
    size_t len;
    bool exited;
    bool verdict;
    bool said_error; /* its verdict was "error": the worker then exits 3 */
    int status;
    bool hung;       /* still running at the deadline: its DEADLOCK is written with the evidence */
    int go;          /* the write end of its go pipe, until every rank is ready */
    bool ready;      /* said "ready": loaded, waiting for go */
    bool stopped;    /* stopped by a signal (the shim's stop fault, or not): ended by the runner */
    double stop_t_s; /* when the runner saw it stop, from the scenario's start */
    pid_t gdb;
    int tl; /* run: its status lines as they came (rankR.status, the timeline's source), or -1 */
    bool termed;    /* a service sent SIGTERM once the other ranks had ended */
    double spawn_s; /* CLOCK_MONOTONIC when it was forked: its start-up is counted from here */
};

/*
 * rg_slow.c, for the runners' loops: rg_slow_sample raises each running rank's cpu_wait_s to
 * what /proc says now; rg_slow_started sets a rank's start_s from its first process's load
 * event; one still running when the runner stopped waiting at ended_s (CLOCK_MONOTONIC) that
 * never loaded had not started by then; else it stays -1.
 */
void rg_slow_sample(const struct rg_proc *procs, rg_rank_result *ranks, int lo, int hi);
void rg_slow_started(rg_rank_result *k, const struct rg_proc *p, const rg_evidence *ev,
                     double ended_s);
/* An ERROR finding when a scaled attempt's shim said it ran its plan at another scale. */
void rg_slow_check_scale(rg_rank_result *k, const rg_scenario *sc, const rg_evidence *ev);

/* CLOCK_MONOTONIC in seconds: every deadline of the runner is read on it. */
double rg_now_s(void);
/* The real-time signals a process still running at the deadline is sent: the shim writes its
 * summary on the first, a worker its backtrace on the second. No verbs stack uses them. */
int rg_proc_snapshot_signal(void);
int rg_proc_backtrace_signal(void);
/* Whether the file's last 64 KiB hold needle (with NULL: whether it has any byte). */
bool rg_file_has(const char *path, const char *needle);
/* The last `max` bytes of a log, cut at a line start, made one line for a finding. */
void rg_log_tail(const char *path, char *out, size_t max);
/* Every process lo..hi-1 still running: summary, backtrace (gdb where it gave none), killed.
 * `inproc`: the process writes its own backtrace on rg_proc_backtrace_signal (a worker). */
void rg_proc_stop_hung(struct rg_proc *procs, int lo, int hi, const char *dir, bool inproc);
/* Ended without a verdict of its own in a way a fault can cause (stopped, SIGKILL, an exit
 * before its verdict); rg_proc_judge_ended says whether its own fault did it (KILLED) or not
 * (CRASH), from its evidence e. Its log is DIR/rankR.log. */
bool rg_proc_ended_early(const struct rg_proc *p);
void rg_proc_judge_ended(rg_rank_result *k, const struct rg_proc *p, const rg_scenario *sc,
                         const rg_evidence *e, const char *dir, int r);

/* Writes DIR/plan, the fault plan every process of sc reads (the sanitizer's rule last when
 * sc->ownership); its path to `path`. 0, or -1. */
int rg_proc_write_plan(const char *dir, const rg_scenario *sc, char *path, size_t len);
/* In a child about to exec: the shim preloaded (before any LD_PRELOAD already there with
 * `keep_preload`), its plan file, events file, rank, snapshot signal and the scale of the
 * plan's times (rg_scenario.time_scale; 0 or 1: as written). */
void rg_proc_shim_env(const char *shim, const char *planfile, const char *events, int rank,
                      bool keep_preload, int time_scale);

/*
 * A command given as one argument ('valgrind --error-exitcode=99'): blank-separated words (no
 * quoting) copied into buf, at most `max` of them in words[] (NULL after the last), the first
 * an executable file or a program on PATH now, so a typo is one line before anything runs.
 * Returns the number of words, or -1 with what is wrong in err.
 */
int rg_command_words(const char *arg, char *buf, size_t buflen, char **words, int max, char *err,
                     size_t errlen);
/* Whether `name` (a path, or a word looked up on PATH) is an executable file. */
bool rg_proc_executable(const char *name);
/* A path-like option's value into dst: not empty and shorter than len, else one line
 * "railguard CMD: FLAG: bad or too long value '...'" and -1. */
int rg_opt_path(const char *cmd, const char *flag, const char *v, char *dst, size_t len);
/* NAME in the lib directory beside the railguard executable SELF: ../lib/railguard/ (an
 * install) when it is there, else ../lib/ (the build tree); "" when the path does not fit. */
void rg_beside(char *out, size_t len, const char *self, const char *name);
/* The stock scenarios' directory beside SELF: ../share/railguard/scenarios (an install) or the
 * source tree's scenarios/ (SELF in build/FLAVOUR/bin); -1 and "" when neither is there. */
int rg_stock_scenarios(char *out, size_t len, const char *self);
/* One status line on fd, whole: prefix (or NULL), then fmt; at most 1 KiB, any CR or LF in
 * it made a blank, so a message cannot forge a line of its own. Retries EINTR. */
void rg_say_line(int fd, const char *prefix, const char *fmt, va_list ap);
/* Text for HTML or XML (element content and double-quoted attributes): & < > " ' escaped,
 * control characters but tab and newline as '?' (XML 1.0 forbids them even escaped). */
void rg_markup_text(FILE *f, const char *s);
/* A new job secret: 32 random bytes as 64 hex digits and a NUL into hex (65 bytes), what
 * RG_SECRET carries to the ranks. 0, or -1 when the kernel gives no randomness. */
#define RG_JOB_SECRET_HEX 65
int rg_job_secret(char *hex);
/* A device list ("rxe0,rxe1" or blank-separated) into devices[], at most RG_MAX_RAILS;
 * -1 after one line "railguard CMD: FROM: ..." on stderr. */
int rg_devices_parse(const char *cmd, const char *list, const char *from, char (*devices)[64],
                     int *n);
/* A JACCL devices file: every pair of the `ranks` ranks joined by devices[0..rails). 0, or
 * -1 with errno. */
int rg_devices_write(const char *path, int ranks, int rails, const char (*devices)[64]);
/* mkdir -p: --out's parents are made too. -1 with errno when a part cannot be. */
int rg_mkdirs(const char *path);
/* "0.3 (git 968ae2c)": the release and the commit it was built from. */
const char *rg_version(void);
/* A TCP port on loopback free a moment ago, or -1; whether something listens on one now. */
int rg_proc_free_port(void);
bool rg_proc_listening(int port);

/* --- one clock for an external launch (rg_clock.c) ----------------------------------------- */

/*
 * Measures this rank's clock against rank 0's over a connection to `coordinator` (rank 0's
 * runner listens there until every rank was measured or the deadline passed, then closes the
 * port before it releases any rank, so the transport finds it free). Both ends prove the job
 * secret first (docs/security.md). Never fails a run: out->measured says, out->why says why
 * not. Every wait ends by the deadline (a rank other than 0 waits a few seconds longer, for
 * rank 0 to measure the others).
 */
void rg_clock_sync(const char *coordinator, const char *secret, int rank, int size, double deadline,
                   rg_clock *out);

/* --- the runner --------------------------------------------------------------------------- */
int rg_run_main(int argc, char **argv);
void rg_run_usage(FILE *f);

/* --- railguard exec: any verbs program, judged (rg_exec.c) ------------------------------- */
int rg_exec_main(int argc, char **argv);
void rg_exec_usage(FILE *f);
/* A scenario file's exec: under railguard run: its programs checked at load (0, or -1 with one
 * line in err), then run and judged as railguard exec judges them (LEAK a finding only), each
 * under run's --rank-wrapper when it has one (wrap: nwrap words). */
int rg_exec_check(const rg_scenario *sc, char *err, size_t errlen);
void rg_exec_scenario(const rg_scenario *sc, const char *shim, char *const *wrap, int nwrap,
                      rg_result *res);

#endif
