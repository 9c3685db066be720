/* SPDX-License-Identifier: MIT */
/*
 * `railguard run`'s own declarations, shared by its files (internal to harness/):
 *   rg_run.c           the command: scenarios collected, one supervisor process each, reports
 *   rg_run_opts.c      its options, the reproduce line and the seed
 *   rg_run_ranks.c     one scenario's ranks: started, followed, stopped at the deadline, judged
 *   rg_run_external.c  --external: this process is one rank of a launcher's job
 */
#ifndef RG_RUN_H
#define RG_RUN_H

#include "cmd/rg_cmd.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define RG_RUN_MAX_SCENARIOS 512
#define RG_RUN_SLOW_SCALE 4 /* --slow-scale by default */

struct run_opts {
    char self[PATH_MAX];
    char transport[PATH_MAX];
    char shim[PATH_MAX];
    char out[PATH_MAX];
    char junit[PATH_MAX];
    char json[PATH_MAX];
    char tally[PATH_MAX]; /* --tally: append "conformance P F" for make check's summary */
    char known[PATH_MAX]; /* --known: the transport's known-failures file */
    bool triage;          /* --triage N: the failures grouped after the run (triage/) ... */
    int triage_rerun;     /* ... with N re-runs of each group's smallest case */
    char devices[RG_MAX_RAILS][64];
    int ndevices;
    char devlist[RG_MAX_RAILS * 65];
    const char *devices_arg; /* --devices, as given */
    int jobs;
    bool seed_set;
    uint64_t seed;
    /* external launch: one rank per process, started by mpirun/srun */
    bool external;
    char coordinator[256];
    char devices_file[PATH_MAX];
    /* --hosts: this process launches the ranks itself, rank r on host[r % nhosts] over ssh,
     * each an --external run (rg_run_hosts.c) */
    char hosts_arg[1024];
    char host[RG_MAX_RANKS][128];
    int nhosts;
    bool no_ownership;     /* --no-ownership: the sanitizer off in every scenario */
    bool trace;            /* --trace: the verbs trace on in every fault-free scenario */
    bool uc_as_rc;         /* --uc-as-rc: the shim makes every UC QP an RC one, in every scenario */
    bool fork_server;      /* --fork-server: ranks forked from a server per slot (rg_forksrv.c) */
    bool hang_at_deadline; /* --hang-at-deadline: no hang judged before it (rg_progress.c) */
    bool fail_fast;        /* --fail-fast: no scenario started after one failed */
    /* --slow-scale: a scenario that ran out of time on a machine that held it back is run
     * again with every time multiplied by this (judge/rg_slow.c); 1: never */
    int slow_scale;
    /* --deadline: every scenario's deadline cut to this, or to twice its timeout when that is
     * more (rg_scenario_cut_deadline); 0: their own */
    double deadline_cut;
    /* --rank-wrapper: a command each rank runs under (valgrind, strace, numactl ...) */
    char wrap_arg[1024]; /* as given, for the reproduce line */
    char wrap_buf[1024];
    char *wrap[RG_CMD_WORDS + 1];
    int nwrap;
};

/* A scenario as loaded, with the path it was named by. */
struct sc_entry {
    char path[1024];
    rg_scenario sc;
    double deadline_cut; /* what --deadline cut its deadline to, 0: its own */
};

/* The supervisor's pieces (rg_run.c), shared with the fork-server runs: one scenario run and
 * judged into DIR/NNN-NAME/result.json (0, or 1 when it could not be saved); its result read
 * back and its line printed; the first scenario not started whose exclusive resource none of
 * the running ones (running[0..inflight)) holds, or -1. */
int rg_run_scenario_once(const struct run_opts *o, const struct sc_entry *e, int index);
void rg_run_take_result(const struct run_opts *o, const struct sc_entry *e, int idx, rg_result *r);
int rg_run_next_startable(const struct sc_entry *e, int n, const bool *started, const int *running,
                          int inflight);
/* --fork-server (rg_run_served.c): every scenario with ranks forked by fork servers, -j of them
 * at once in slots of their own. 0, or -1 after one line. */
int rg_run_served(const struct run_opts *o, struct sc_entry *e, int n, rg_result *results,
                  bool *started);

/* Known failures by cause (rg_run_known.c): the verbs trace turned on in every fault-free
 * scenario whose known-failures file names a cause only a trace proves, when the run launches
 * its ranks here (`here`; what was done said on out); and a judged failure no signature
 * matched given the cause its files prove, if any, and judged again. */
void rg_run_trace_for_causes(struct sc_entry *e, int n, bool here, FILE *out);
void rg_run_prove_cause(rg_result *res);

/* run --hosts: every scenario in turn, its ranks started over ssh on the hosts, their results
 * brought together and judged as railguard report does. The run's exit status. */
int rg_run_hosts(const struct run_opts *o, const struct sc_entry *e, int n);

/* What one file calls in another. */
/* rg_run_opts.c */
void rg_run_fmt(char *dst, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));
char *rg_run_abs_path(const char *p);
uint64_t rg_run_seed(const struct run_opts *o, const rg_scenario *sc);
void rg_run_repro_line(char *buf, size_t len, const struct run_opts *o, const char *const *where,
                       const char *out, const rg_scenario *sc, const char *path);
int rg_run_parse_opts(int argc, char **argv, struct run_opts *o, int *first);

/* rg_run_ranks.c */
void rg_run_ranks(const struct run_opts *o, const struct sc_entry *e, rg_result *res, int lo,
                  int hi, const char *coord, const char *devfile, const char *planfile, bool whole);
void rg_run_scenario(const struct run_opts *o, const struct sc_entry *e, rg_result *res);

/* rg_run_sites.c: an each_site scenario run as `railguard sweep --by-site` and judged from
 * the sweep's record into res (result_init's): a failing point's result, or the counting
 * run's, with what became of every point in res->sites_note. */
void rg_run_sites(const struct run_opts *o, const struct sc_entry *e, rg_result *res);

/* rg_run_external.c */
int rg_run_external(const struct run_opts *o, const struct sc_entry *e);

#endif
