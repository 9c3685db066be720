/* SPDX-License-Identifier: MIT */
/*
 * rg_result.h - a scenario's result as every later step hands it on: each rank's verdict and
 * findings, each fault rule's fired counts, the first failure, what the machine took, what
 * ran; findings added by precedence (rg_result.c), the whole as JSON and back
 * (rg_result_json.c, its known signatures in rg_result_ksig.c).
 */
#ifndef RG_RESULT_H
#define RG_RESULT_H

#include "base/rg_base.h"
#include "scenario/rg_scenario.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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
    char ownership[256];
    /* What the transport said its calls ran ("ring/2:3 mesh/1:2"), "" when it cannot say. */
    char calls[160];
    /* An external launch's rank: its clock against rank 0's (rg_clock.c); zero elsewhere. */
    rg_clock clock;
    /* A service the runner stopped once the other ranks had ended (exec: service): it reports
     * through its clients, not an exit status, so an error handed to it is not "swallowed". */
    bool service;
    /* What the machine took from it (launch/rg_slow_measure.c), -1 when not measured: seconds from
     * its fork to its shim's load event, and seconds its threads were runnable but waiting for a
     * CPU. start_unseen: it never loaded, and start_s is when the runner stopped waiting for it. */
    double start_s, cpu_wait_s;
    bool start_unseen;
    /* Sockets the transport held once its communicator was made (rg_worker.c counts the
     * descriptors init opened that are sockets): a channel a peer's end can close on it. A
     * transport with none after init (Gloo: its store is gone) cannot be told of a dead peer
     * but by its own timeout, so slow detection is not judged of it. sockets_known false: not
     * counted (exec programs, a rank that never made one). */
    bool sockets_known;
    int sockets;
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
    /* Where in the program it first fired, on the lowest rank it fired on: the call site as the
     * shim named it, "OBJECT-PATH+0xOFF", then as many of its callers as fit ("<OBJ+0xOFF..."):
     * its call path; "" when it fired in no verbs call, or never. */
    char site[1024]; /* four frames of objects' paths, ~250 characters each */
    /* A wire rule: what the receiving devices took in while it was on, by their own counters,
     * summed over the ranks -- packets, duplicates discarded, requests out of sequence. -1: no
     * device said (not a wire rule, or counters the NIC does not keep). */
    int64_t rx_pkts, rx_dup, rx_oos;
} rg_rule_result;

/*
 * Where a scenario's time went (rg_result_phases.c), so that what makes a run slow is chosen by
 * numbers: seconds per phase, -1 where it was not measured (an exec scenario's ranks, a result
 * from before it was kept); result.json and report.json write that as null.
 */
enum {
    RG_PH_START, /* the spawn until every rank was ready: exec, the loader, the transport's load */
    RG_PH_WORK,  /* the go until the last rank ended (or the hang was judged), the hang's wait
                    aside: the transport's own time */
    RG_PH_HANG,  /* a hang's wait: from when no rank moved until it was judged, or the deadline */
    RG_PH_STOP,  /* stopping hung ranks: the shim's summaries, backtraces (gdb), the kill */
    RG_PH_JUDGE, /* reading the ranks' evidence and judging it */
    RG_PH_AGAIN, /* the attempt before this one (a slow machine's first), all of it */
    RG_PHASES
};
typedef struct rg_phases {
    double s[RG_PHASES];
} rg_phases;
struct rg_result;
/* "start", "work", "hang", "stop", "judge", "again": report.json's keys, with "_s". */
extern const char *const rg_phase_names[RG_PHASES];
/* Every phase not measured. */
void rg_phases_unknown(rg_phases *p);
/* The summary line of n results' phases: each summed (sum), and in how many it was not
 * measured (unknown); rg_phases_line sums them itself. */
void rg_phases_said(FILE *f, const rg_phases *sum, const int *unknown, int n);
void rg_phases_line(FILE *f, const struct rg_result *res, int n);
struct json_t;
/* The phases as {"start_s": x, ...}, null for one not measured; and back: a missing object is
 * every phase not measured, a value not null nor 0..1e9 is -1 with err naming the field. */
struct json_t *rg_phases_json(const rg_phases *p);
int rg_phases_read(struct json_t *o, rg_phases *p, const char *path, char *err, size_t errlen);
/* The phases summed over n results (sum), and in how many each was not measured (unknown). */
void rg_phases_sum(const struct rg_result *res, int n, rg_phases *sum, int *unknown);

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
    /* The known-failures file's signatures (scenario/rg_scenario.h): a failure with one of them
     * is xfail too, and a scenario one of them was seen in passing is xpass (rg_judge). */
    int nksig;
    rg_sc_ksig ksig[RG_SC_KSIG_MAX];
    /* The cause the failure's own files proved (triage's diagnosis, made by `run` when the
     * known-failures file names causes), and its sentence; RG_C_NONE when none was sought or
     * proven. Kept so a judge from the files alone matches an entry by cause alike. */
    rg_cause cause;
    char cause_text[1000];
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
    /* `run --deadline`: the deadline the scenario's was cut to (before time_scale), 0: its own */
    double deadline_cut_s;
    char slow_note[700];
    bool too_slow;
    /* An each_site scenario's (rg_run_sites.c): its points and sites, what became of them and
     * where the sweep is; "" for any other scenario. */
    char sites_note[700];
    /* Run with --uc-as-rc: the shim made the program's UC QPs RC ones, so a send before its
     * receive was retried, not dropped (as_rc_qps of them, summed over the ranks): what still
     * fails is not that race. Every report of it says so. */
    bool uc_as_rc;
    int64_t as_rc_qps;
    /* The scenario ran in the transport's shape, not as its file's default said (rg_sc_fit):
     * "ran as rc (the transport declares no uc)"; "" when as written. */
    char fit_note[96];
    rg_phases phases; /* where its time went */
} rg_result;

/* What --uc-as-rc did, for every report of such a run: "UC QPs created as RC (--uc-as-rc): 4
 * QP(s) ...", or that it changed none. */
const char *rg_result_as_rc_said(const rg_result *r, char *out, size_t len);
/* "PASS", "FAIL", "XFAIL", "XPASS", "SKIP" or "SLOW" for a judged result. */
const char *rg_result_word(const rg_result *r);

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
    /* What the transport declares of its shape, for rg_sc_fit (the ranks read the same caps);
     * caps_known false: a preflight that could not say (then nothing is fitted). */
    bool caps_known;
    uint32_t qp_types;
    int max_rails;
    int ndevices;
    rg_run_device dev[RG_MAX_RAILS];
    char seed[32]; /* --seed, or "per scenario" */
} rg_run_info;

/* One result as JSON (the supervisor hands results to the runner this way, too), and back:
 * a value no writer wrote is refused with one line naming the file and field. */
int rg_result_save(const rg_result *r, const char *path, char *err, size_t errlen);
int rg_result_read(rg_result *r, const char *path, char *err, size_t errlen);
struct json_t;
/* A result as the JSON object result.json and report.json's entries hold (NULL: bad UTF-8). */
struct json_t *rg_result_json(const rg_result *r);
/* The known signatures as result.json's known_signatures list, and back (rg_result_ksig.c): a
 * missing list is none, one that is not as written is -1 with err naming path. */
struct json_t *rg_ksig_json(const rg_sc_ksig *k, int n);
int rg_ksig_read(struct json_t *a, rg_sc_ksig *k, int *n, const char *path, char *err,
                 size_t errlen);
/* The entries of a run's directory that hold a result.json, sorted (each strdup'd, the array
 * malloc'd; the caller frees both): their number, or -1 when dir cannot be opened. */
int rg_result_dir_names(const char *dir, char ***names_p);
/* A rank's class as the report spells it: "timeout", "v1" (its ABI carries none), "" none. */
const char *rg_rank_class(const rg_rank_result *k, char *buf, size_t len);
/* Writes j (and frees it) to path through a file beside it renamed over, so a reader sees the
 * whole file or none. A NULL j is a report that could not be built. 0, or -1 with err. */
int rg_json_write(struct json_t *j, const char *path, char *err, size_t errlen);

#endif
