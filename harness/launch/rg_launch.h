/* SPDX-License-Identifier: MIT */
/*
 * rg_launch.h - starting a scenario's processes and watching them: each process's state
 * (rg_proc.c: the shim's environment and plan, a hung one's summary and backtrace, one that
 * ended early), ranks forked from a server (rg_forksrv.c), the checks before anything runs
 * (rg_preflight.c), one clock for an external launch (rg_clock.c), what the machine takes
 * from the ranks while they run (rg_slow_measure.c), and a hung rank's frames named from debug
 * information (rg_symbolize.c).
 */
#ifndef RG_LAUNCH_H
#define RG_LAUNCH_H

#include "base/rg_base.h"
#include "evidence/rg_evidence.h"
#include "rank/rg_rank.h"
#include "result/rg_result.h"
#include "scenario/rg_scenario.h"
#include "wire/rg_wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* --- the fork server (rg_forksrv.c): ranks forked from a process started once ------------- */
typedef struct rg_forksrv {
    pid_t pid;
    int sock;
} rg_forksrv;
/* Starts a server for one rank slot: `self worker --serve 3 --transport SO` under shim. */
int rg_forksrv_start(rg_forksrv *s, const char *self, const char *shim, const char *transport,
                     char *err, size_t errlen);
/*
 * Asks s for one rank: env as "KEY=VALUE" (set) or "KEY" (unset), args the worker's options,
 * fds its log, status pipe and go pipe (the server holds copies once this returns). 0, or -1
 * with err. Every rank of a scenario is asked for before any is taken, so that the servers
 * fork them side by side: one after another, a 4-rank point's last rank was ready some 60 ms
 * after its first, which waited for it.
 */
int rg_forksrv_send(rg_forksrv *s, const char *const *env, const char *const *args,
                    const int fds[3], char *err, size_t errlen);
/* The rank asked for last: its pid -- a child of this process, which must be a child
 * subreaper -- or -1 with err (the server may then be stopped). */
pid_t rg_forksrv_take(rg_forksrv *s, double timeout_s, char *err, size_t errlen);
void rg_forksrv_stop(rg_forksrv *s);

/* --- the processes of a run (rg_proc.c): workers under `run`, programs under `exec` -------- */
struct rg_proc {
    pid_t pid;
    int fd;
    char buf[4096];
    size_t len;
    bool exited;
    rg_status_said said; /* a worker: what its status lines said of it (a program: verdict only) */
    int status;
    bool hung;       /* still running at the deadline: its DEADLOCK is written with the evidence */
    int go;          /* the write end of its go pipe, until every rank is ready */
    bool stopped;    /* stopped by a signal (the shim's stop fault, or not): ended by the runner */
    double stop_t_s; /* when the runner saw it stop, from the scenario's start */
    pid_t gdb;
    int tl; /* run: its status lines as they came (rankR.status, the timeline's source), or -1 */
    bool termed;    /* a service sent SIGTERM once the other ranks had ended */
    double spawn_s; /* CLOCK_MONOTONIC when it was forked: its start-up is counted from here */
    /* A launcher's rank (rg_job.c): not the runner's child, so status is what its shim's exit
     * event said (a wait's form), or, job_unseen, it ended with none (a signal, or _exit: which
     * is not known) and status reads as a SIGKILL's. */
    bool job, job_unseen;
};

/* --- a hang judged when it is one (rg_progress.c) ------------------------------------------ */
/* What one progress page (rankR.progress) held, summed over its processes' slots. */
typedef struct rg_progress_counts {
    int procs;      /* slots taken */
    unsigned full;  /* processes that found none */
    bool has_pid;   /* one slot is the rank's own process's */
    uint64_t moves; /* posts + completions + other verbs calls (not polls) */
    uint64_t polls;
    bool holding; /* the shim holds a thread (delay, stall) or a send (late) of it now */
} rg_progress_counts;
/* Makes rank r's page, every slot free, in shared memory (path: its name, which the runner
 * unlinks once the run has ended). 0, or -1. */
int rg_progress_make(int r, char *path, size_t len);
/* Reads a page; pid the rank's process. 0, or -1 when it is missing or not of this version. */
int rg_progress_read(const char *path, long pid, rg_progress_counts *c);
/* The packets the devices sent and received (rxe's hw_counters, else the port counters),
 * summed: 0, or -1 when one device has neither. */
int rg_progress_packets(const char (*devices)[64], int ndev, uint64_t *pkts);
/* How long every rank must be quiet for a hang: the timeout the transport was told (scaled on a
 * second attempt) and the margin a call's timeout is given (1 s, a tenth of it, the runner's
 * lag, the CPU wait); -1 with no timeout. */
double rg_hang_window(double timeout_s, double lag_s, double cpu_wait_s);

/* What the runner saw of one rank at one look. */
typedef struct rg_hang_seen {
    bool known;   /* its page read and every process of it in a slot */
    bool in_call; /* inside a call of the transport's: a step said, no verdict yet */
    bool holding;
    uint64_t moves, polls;
    double cpu_s;       /* its threads' time on a CPU; -1: not known */
    unsigned step_mark; /* changes whenever the rank says a status line (a step begun) */
} rg_hang_seen;
typedef struct rg_hang_rank {
    char page[1100]; /* its progress page, "" when it has none */
    bool seen, known, in_call;
    uint64_t moves, polls;
    unsigned step_mark;
    double cpu_s, at;
    double quiet_since; /* s from t0: when it was last seen to move */
} rg_hang_rank;
typedef struct rg_hang {
    bool track;      /* the runner looks at what moves (every rank here, a timeout, steps) */
    bool on;         /* ... and judges a hang when it is one (not run --hang-at-deadline) */
    double window_s; /* rg_hang_window's; <= 0: at the deadline only */
    bool dev_seen, dev_known;
    uint64_t pkts;
    double dev_quiet_since; /* the devices' last packet, or a wire fault still to come */
    rg_hang_rank rank[RG_MAX_RANKS];
    bool judged;    /* the run was ended as a hang before its deadline */
    double at_s;    /* when, from t0 */
    double quiet_s; /* how long every rank had been quiet then */
} rg_hang;
/* One look at rank r (now: s from t0): it moved, or it stays quiet since it last did. */
void rg_hang_look(rg_hang *h, int r, const rg_hang_seen *s, double now);
/* One look at the devices (known: rg_progress_packets' return) and the wire faults. */
void rg_hang_look_devices(rg_hang *h, int known, uint64_t pkts, bool wire_pending, double now);
/* Since when nothing moved among the live ranks and the devices (s from t0), -1 when one of
 * them is not known: the wait a hang at the deadline spent, for the run's phases. */
double rg_hang_since(const rg_hang *h, const bool *live, int lo, int hi);
/* Whether the run is a hang now: every live rank (live[r]) known and inside a call, none moved
 * (nor the devices) for longer than the window. Sets judged, at_s and quiet_s when it is. */
bool rg_hang_judge(rg_hang *h, const bool *live, int lo, int hi, double now);

/*
 * What launching a scenario's processes left for the judge (rg_workers.c, rg_programs.c): plain
 * data, every process ended and its descriptors closed. Nothing in it is a verdict yet.
 */
typedef struct rg_launched_rank {
    struct rg_proc proc; /* how its process ended */
    /* What it said (a worker's status lines: its step, status, calls, findings), when it left
     * (left_t_s), and what the machine took from it (start_s, cpu_wait_s). */
    rg_rank_result said;
    rg_evidence ev;   /* what its shim saw */
    double cpu_s;     /* its threads' time on a CPU at the last sample (rg_slow_sample), -1 */
    char ev_err[512]; /* why its events could not be read; "" when they could */
} rg_launched_rank;

typedef struct rg_launched {
    int lo, hi;     /* the ranks started here */
    double t0;      /* CLOCK_MONOTONIC s when they were started: times count from here */
    double seconds; /* from t0 until the last had ended */
    double lag_s;   /* the runner's timed waits woke up at most this late */
    char host[64];
    rg_launched_rank rank[RG_MAX_RANKS];
    rg_wire wire;       /* the scenario's wire faults, done on the ranks' clock */
    char wire_err[600]; /* why they could not be planned ("" when they were, or none) */
    /* A launcher's job (rg_job.c): the launcher's own process (stop_t_s: when it ended; hung:
     * still running at the deadline), and the first rank it gave a process past the
     * scenario's (-1: none). */
    bool job;
    struct rg_proc launcher;
    int job_extra;
    rg_hang hang; /* workers: the run judged a hang before its deadline (rg_progress.c) */
    /* Workers: when (s from t0) every rank was ready (-1: never), the watch ended, hung ranks
     * were stopped and the evidence read; hang_since: since when nothing moved among the ranks
     * still running when the watch ended (-1: not known, or none was). For the phases. */
    double ready_s, ended_s, stopped_s, read_s, hang_since;
    bool programs; /* exec'd programs: no "ready", start-up from their shims' load events */
} rg_launched;
/*
 * Where a scenario's time went (rg_result.h's phases), from a launch's marks (rg_proc.c):
 * start-up until every rank was ready (all of the watch if they never were; a program's, the
 * longest fork-to-load), the transport's work until the watch ended less the wait of a hang
 * (since nothing moved: judged, or at the deadline; not known for programs), stopping the hung
 * ranks (and services), reading the evidence with judging it (judge_s, the judge's own).
 */
void rg_launched_phases(const rg_launched *l, double judge_s, rg_phases *p);

/* A scenario's ranks as workers (rg_workers.c), as `railguard run` starts them. */
typedef struct rg_worker_launch {
    const char *self, *shim, *transport;
    const char *path; /* the scenario file the workers read */
    const rg_scenario *sc;
    const char *dir; /* rankR.log, .status, .events.jsonl and .backtrace go here */
    int lo, hi;      /* the ranks to start here (an external launch: one) */
    const char *coord, *devfile, *planfile;
    bool whole; /* every rank is here: a fresh job secret for them */
    uint64_t seed;
    bool fork_server;  /* ranks forked from a server per slot, started at first need */
    char *const *wrap; /* a command each rank runs under, nwrap words */
    int nwrap;
    const char (*devices)[64]; /* the ranks' rails, for wire faults; ndev 0: none known */
    int ndev;
    bool hang_at_deadline; /* a hang waits for the deadline (run --hang-at deadline) */
} rg_worker_launch;
/* Starts ranks lo..hi-1, follows their status lines and ends (released together once all are
 * ready), stops them at the deadline, and reads their evidence into l. */
void rg_launch_workers(const rg_worker_launch *w, rg_launched *l);
/* A scenario's ranks as programs (rg_programs.c), as `railguard exec` and exec: start them. */
typedef struct rg_program_launch {
    const rg_scenario *sc; /* its ranks, deadline, services and their grace, time scale */
    const char *shim, *dir, *planfile;
    char *const *argv[RG_MAX_RANKS];    /* rank r's command, a wrapper's words first */
    const char *argv_err[RG_MAX_RANKS]; /* why rank r cannot start when argv[r] is NULL */
    bool pair;           /* rank 0 a server, rank 1 its client, started once the server is ready */
    bool launcher;       /* argv[0] a launcher that starts every rank itself (rg_job.c) */
    double client_after; /* ... that many seconds after it started; -1: once port listens */
    int port;
} rg_program_launch;
/* Starts the programs, watches them until none but services runs or the deadline passes, stops
 * services and hung ones, and reads their evidence into l. */
void rg_launch_programs(const rg_program_launch *pl, rg_launched *l);
/* The same for a launcher (pl->launcher): argv[0] started once, its ranks told apart by the
 * launcher's rank in their shims' evidence, each one's end from its shim's exit event. */
void rg_launch_job(const rg_program_launch *pl, rg_launched *l);
/* The fork servers started for earlier scenarios, stopped (a run's end). */
void rg_launch_servers_stop(void);
/* Each rank's events read into l->rank[r].ev (a file that cannot be read: ev_err says why),
 * its start measured by its load event (ended_s: when the runner stopped waiting), and the host
 * named. */
void rg_launched_evidence(rg_launched *l, int lo, int hi, const char *dir, double ended_s);

/*
 * What the machine takes (rg_slow_measure.c), for the runners' loops: rg_slow_cpu_wait:
 * seconds the threads of process pid were runnable but waiting for a CPU, -1 when /proc cannot
 * say, and (on_cpu_s, unless NULL) the seconds they ran, -1 likewise; rg_slow_lag: *lag_s raised to
 * how late a wait meant to end at want_s ended (now_s); rg_slow_sample raises each running rank's
 * said.cpu_wait_s to what /proc says now and sets its cpu_s; rg_slow_started sets a rank's start_s
 * from its first process's load event; one still running when the runner stopped waiting at ended_s
 * (CLOCK_MONOTONIC) that never loaded had not started by then; else it stays -1.
 */
double rg_slow_cpu_wait(long pid, double *on_cpu_s);
void rg_slow_lag(double *lag_s, double want_s, double now_s);
void rg_slow_sample(rg_launched *l);
void rg_slow_started(rg_rank_result *k, const struct rg_proc *p, const rg_evidence *ev,
                     double ended_s);

/* The real-time signals a process still running at the deadline is sent: the shim writes its
 * summary on the first, a worker its backtrace on the second. No verbs stack uses them. */
int rg_proc_snapshot_signal(void);
int rg_proc_backtrace_signal(void);
/* Every process lo..hi-1 still running: summary, backtrace (gdb where it gave none), killed.
 * `inproc`: the process writes its own backtrace on rg_proc_backtrace_signal (a worker). */
void rg_proc_stop_hung(rg_launched *l, int lo, int hi, const char *dir, bool inproc);

/* --- a hung rank's backtrace named (rg_symbolize.c) ---------------------------------------- */
/* The line that starts each dump's named frames, appended below the raw ones. */
#define RG_BT_NAMED_MARK "--- named by addr2line"
/*
 * Appends to the backtrace file at path its dumps' frames named by addr2line from each object's
 * debug information (once: a file that has the marker is left alone; gdb's dumps, already
 * named, too). 0, or -1 with why when an object could not be named (the frames it could name
 * are written all the same, the marker line saying why).
 */
int rg_bt_symbolize(const char *path, char *why, size_t whylen);
/*
 * Verbs call sites named (a sweep's site table): each of n return-address offsets in one object
 * (obj, as the shim named it) as the function that made the call and its FILE:LINE, from the
 * object's debug information. The verbs are inline functions of <infiniband/verbs.h>, so the
 * innermost frame that is not in that header is the caller's. A site addr2line cannot name is
 * left "" (no debug information there). Without debug information addr2line still names the
 * nearest symbol of the object's symbol table: the function itself where the object kept its
 * full table, any exported function before the code where only the dynamic one is left
 * (rsockets' rsend reads as rdma_get_remote_ece). Such a name has no FILE:LINE, and `nearest`
 * says so, for the reader to say "nearest symbol", never the function.
 * 0, or -1 with why when addr2line could not be run.
 */
typedef struct rg_sym_site {
    char func[160]; /* rg_sym_norm's form */
    char where[320];
    bool nearest; /* func is only the nearest symbol before the code: no debug information */
} rg_sym_site;
/* A site as a person reads it: "FUNC at FILE:LINE (OBJ+0xOFF)" from debug information, else
 * "OBJ+0xOFF (no debug info; nearest symbol: NAME)", else "OBJ+0xOFF (no debug info,
 * no symbol)"; OBJ is the path's last part. */
void rg_sym_site_text(const rg_sym_site *s, const char *obj, uint64_t off, char *out, size_t len);
int rg_sym_sites(const char *obj, const uint64_t *off, int n, rg_sym_site *out, char *why,
                 size_t whylen);
#define RG_SYM_BATCH 256 /* offsets rg_sym_sites names in one call, at most */
/*
 * The code of the object at path, as 16 hex digits (rg_objcode.c): a digest of its executable
 * sections' addresses, sizes and bytes, nothing else, so that a plan's call sites (offsets into
 * it) can be told to still aim at the same instructions. 0, or -1 with err (one line naming
 * the file) when it is no 64-bit ELF object or cannot be read.
 */
int rg_obj_code(const char *path, char out[17], char *err, size_t errlen);
/* A demangled C++ name as a frame's name: "void ns::C::f<int>(int*) const" is "ns::C::f". */
void rg_sym_norm(const char *full, char *out, size_t len);
/* A process stopped (by its stop fault, or not) is ended by the runner: killed, reaped, and
 * its end (said->left_t_s) the moment it stopped. Whether p was such a process. */
bool rg_proc_end_stopped(struct rg_proc *p, rg_rank_result *said);
/* Writes DIR/plan, the fault plan every process of sc reads (the sanitizer's rule last when
 * sc->ownership); its path to `path`. 0, or -1. */
int rg_proc_write_plan(const char *dir, const rg_scenario *sc, char *path, size_t len);
/* In a child about to exec: the shim preloaded (before any LD_PRELOAD already there with
 * `keep_preload`), its plan file, events file, rank, snapshot signal and the scale of the
 * plan's times (rg_scenario.time_scale; 0 or 1: as written). */
void rg_proc_shim_env(const char *shim, const char *planfile, const char *events, int rank,
                      bool keep_preload, int time_scale);

/* --- preflight (rg_preflight.c) ------------------------------------------------------------- */
/*
 * Checks that every device exists with an ACTIVE port 1, that the shim loads and has its
 * control table, and that the transport loads and has a plugin table; fills `info`. Returns
 * 0, or -1 with one line in err.
 */
int rg_preflight(const char *shim, const char *transport, char (*devices)[64], int ndevices,
                 rg_run_info *info, char *err, size_t errlen);
/* Whether the locked-memory limit allows `need` bytes registered per rank; -1 with a line. */
int rg_preflight_memlock(uint64_t need, char *err, size_t errlen);

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

#endif
