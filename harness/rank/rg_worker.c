/* SPDX-License-Identifier: MIT */
/*
 * One rank of a scenario: `railguard worker ...`, started by the runner (with the shim
 * preloaded). It loads the transport through the plugin ABI, runs the scenario's program,
 * checks every output bit-exact against rg_data's reference, every guard band and every send
 * buffer, holds each call's buffers scribbled for one more step once it returned (struct held),
 * and tells the runner where it is and how it ended, one line at a time on the status
 * descriptor, each line led by the CLOCK_MONOTONIC time in milliseconds (the clock the shim's
 * events carry, so the runner can tell whether a fault fired before an error):
 *
 *   <ms> ready                            loaded; with --go-fd, waits for the runner's go
 *   <ms> step <i> <rep> <op>              about to run program step i, repetition rep
 *   verdict ok
 *   status <st>                              the failed call's RG_ERR_* value, before a
 *   status v1                                detected verdict (v1: the ABI carries none)
 *   verdict detected <i> <rep> <message>     the transport returned an error
 *   verdict corrupt <i> <rep> <detail>       it returned success with wrong data
 *   verdict error <message>                  the harness itself could not run the rank
 *
 * A rank that is killed, or exits without a verdict line, is judged by the runner. A crash
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) writes this process's backtrace to the backtrace
 * file before the signal takes its course; so does RG_BACKTRACE_SIGNAL, which the runner sends
 * to a rank still running at the deadline before it kills it.
 */
#include "rg_worker.h"
#include "rg_faultinject.h"
#include "rg_parse.h"

#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- backtraces: in process, so a hang's report comes within seconds, not gdb's minute --- */
static char g_bt_path[1024];
static char g_altstack[64 * 1024];

/* Async-signal-safe: open, write and backtrace_symbols_fd (primed at start, so it loads
 * nothing here). */
static void bt_write(const char *why, int sig)
{
    void *frames[64];
    char head[96];
    int fd = open(g_bt_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    int n = snprintf(head, sizeof(head), "railguard worker pid %ld: %s (signal %d)\n",
                     (long)getpid(), why, sig);
    if (n > 0 && write(fd, head, (size_t)n) < 0)
        n = 0;
    int depth = backtrace(frames, 64);
    backtrace_symbols_fd(frames, depth, fd);
    close(fd);
}

static void on_crash(int sig)
{
    bt_write("crashed", sig);
    /* SA_RESETHAND put the default back: the signal ends the process as it would have. */
    raise(sig);
}

static void on_backtrace(int sig)
{
    int saved = errno;
    bt_write("asked for a backtrace (the runner judged it hung)", sig);
    errno = saved;
}

static void bt_install(const char *path)
{
    static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    void *prime[2];
    struct sigaction sa;

    if (!path || !*path)
        return;
    snprintf(g_bt_path, sizeof(g_bt_path), "%s", path);
    backtrace(prime, 2); /* loads libgcc's unwinder now, outside any handler */
    stack_t st = {.ss_sp = g_altstack, .ss_size = sizeof(g_altstack)};
    sigaltstack(&st, NULL);
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
    for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
        sigaction(crash[i], &sa, NULL);
    const char *bs = getenv("RG_BACKTRACE_SIGNAL");
    char *end = NULL;
    long sig = bs ? strtol(bs, &end, 10) : 0;
    if (bs && *end == '\0' && sig >= SIGRTMIN && sig <= SIGRTMAX) {
        sa.sa_handler = on_backtrace;
        sa.sa_flags = SA_ONSTACK | SA_RESTART;
        sigaction((int)sig, &sa, NULL);
    }
}

/* Counts what the call that just returned ran, when the transport can say. */
static void note_call(struct worker *w)
{
    rg_algo a;
    int rails;
    if (w->h && w->tp.has_last_call && rg_tp_last_call(&w->tp, w->h, &a, &rails) == RG_OK)
        w->calls[a][rails]++;
}

/* "calls ring/2:3 mesh/1:2": the report's word on what really ran (nothing when unknown). */
static void say_calls(struct worker *w)
{
    static const char *const names[RG_ALGO_COUNT] = {"auto", "ring", "mesh"};
    char buf[512];
    size_t n = 0;
    for (int a = 0; a < RG_ALGO_COUNT; a++)
        for (int r = 0; r <= RG_MAX_RAILS; r++)
            if (w->calls[a][r] && n + 32 < sizeof(buf))
                n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %s/%d:%u", names[a], r,
                                      w->calls[a][r]);
    if (n)
        worker_say(w, "calls%s", buf);
}

/* Tells the shim (when it is there) which step the program is in. */
static void phase(struct worker *w, int step, int rep)
{
    if (w->set_phase)
        w->set_phase(step, rep);
}

/* Waits for the runner's go byte: 0, or -1 at the deadline or when the runner went away. */
static int wait_go(int fd, double deadline_s)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        double left =
            deadline_s - (double)(t.tv_sec - t0.tv_sec) - (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        char g;
        ssize_t k = read(fd, &g, 1);
        if (k < 0 && errno == EINTR)
            continue;
        close(fd);
        return k == 1 && g == 'g' ? 0 : -1;
    }
}

/*
 * Fail-stop: once a call has returned an error, the same call again must fail too, and within
 * the timeout. A transport that carries on after a failure (its communicator not poisoned)
 * either returns success here, with whatever data, or keeps the caller waiting; a "notfailstop"
 * line says which. create and destroy are not repeated: a second init is a new communicator.
 * The repeat runs in a thread of its own, so a call that never returns is named as such at
 * the bound instead of running into the runner's deadline.
 */
struct repeat {
    struct worker *w;
    const rg_sc_op *op;
    const rg_data_key *k;
    int rc;
    char err[512];
};

static void *repeat_step(void *arg)
{
    struct repeat *r = arg;
    r->rc = worker_run_step(r->w, r->op, r->k, r->err, sizeof(r->err));
    return NULL;
}

static void fail_stop(struct worker *w, const rg_sc_op *op, const rg_data_key *k)
{
    static struct repeat r;
    struct timespec t0, t1, until;
    pthread_t t;
    if (op->kind == RG_SC_CREATE || op->kind == RG_SC_DESTROY || !w->h)
        return;
    /* The transport's own deadline, with room for a slow machine; no timed test hides here:
     * only a wait that plainly outlives the deadline is called slow. */
    double bound = w->sc->timeout_s * 1.5 + 1.0;
    r = (struct repeat){.w = w, .op = op, .k = k, .rc = 1};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)bound;
    until.tv_nsec += (long)((bound - (double)(time_t)bound) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    if (pthread_create(&t, NULL, repeat_step, &r) != 0)
        return;
    if (pthread_timedjoin_np(t, NULL, &until) != 0) {
        worker_say(w,
                   "notfailstop the step, repeated after its error, had not returned after %.1f s "
                   "(timeout %.1f s)",
                   bound, w->sc->timeout_s);
        /* The transport is still inside the call: neither finalize nor exit's destructors
         * may run beside it. The shim writes its counts now, then the rank ends here. */
        const struct rg_fi_control_v1 *fi = rg_fi_control();
        if (fi && fi->summary)
            fi->summary();
        _exit(0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    worker_release(w, &w->fresh, false, NULL, 0);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (r.rc == 0 || r.rc == 2)
        worker_say(w,
                   "notfailstop the step, repeated after its error, returned success in %.3f s%s",
                   dt, r.rc == 2 ? " (with wrong data)" : "");
}

/* The scenario loaded (scaled for a second attempt), the transport loaded, the plugin's
 * arguments, then "ready" and the runner's go. 0, or the exit status after a verdict error. */
static int worker_setup(struct worker *w, const rg_worker_args *wa, rg_scenario *sc, char *err,
                        size_t errlen)
{
    if (rg_scenario_load(wa->scenario, sc, err, errlen) != 0) {
        worker_say(w, "verdict error %s", err);
        return 3;
    }
    if (wa->time_scale > 1) /* a second attempt on a machine too slow for the first */
        rg_scenario_scale(sc, wa->time_scale);
    if (wa->rank < 0 || wa->rank >= sc->ranks) {
        worker_say(w, "verdict error rank %d outside 0..%d", wa->rank, sc->ranks - 1);
        return 3;
    }
    if (rg_tp_open(&w->tp, wa->transport, err, errlen) != 0) {
        worker_say(w, "verdict error %s", err);
        return 3;
    }
    /* The shape the runner fitted it to, from the same caps (its devices file has as many
     * rails). */
    rg_sc_fit(sc, w->tp.caps.qp_types, w->tp.caps.max_rails);
    w->args = (rg_plugin_args){.size = sizeof(rg_plugin_args),
                               .rank = wa->rank,
                               .nranks = sc->ranks,
                               .coordinator = wa->coordinator,
                               .devices_file = wa->devices_file,
                               .qp_type = sc->qp,
                               .algo = sc->algo,
                               .timeout_s = sc->timeout_s};
    /* Ranks start as fast as exec and the loader let them, which on a loaded host or in an
     * emulator can differ by seconds: the runner releases them together, so the transport's
     * own timeout measures the transport, not the launch. */
    worker_say(w, "ready");
    if (wa->go_fd >= 0 && wait_go(wa->go_fd, sc->deadline_s) != 0) {
        worker_say(w, "verdict error the runner never said go (within the %.0f s deadline)",
                   sc->deadline_s);
        return 3;
    }
    /* The shim's phases follow the program, so step= rules (and the sweep's anchored points)
     * count within a step; finalize is the step after the last. */
    const struct rg_fi_control_v1 *fi = rg_fi_control();
    if (fi && fi->size >= offsetof(struct rg_fi_control_v1, set_phase) + sizeof(fi->set_phase))
        w->set_phase = fi->set_phase;
    return 0;
}

/* The communicator made: 0 to run the program, 1 when the rank's verdict is said already
 * (what the transport declares it cannot do is skipped and reported, never run). */
static int worker_init(struct worker *w, char *err, size_t errlen)
{
    phase(w, FI_PHASE_INIT, 0);
    worker_say(w, "step -1 0 init");
    if (rg_tp_lacks_scenario(&w->tp, w->sc, err, errlen)) {
        worker_say(w, "verdict unsupported -1 0 %s: %s", w->tp.name, err);
        return 1;
    }
    worker_fds_open(&w->fds);
    int ist = rg_tp_init(&w->tp, &w->args, &w->h, err, errlen);
    if (!ist) {
        worker_say(w, "sockets %d", worker_fds_sockets(w));
        return 0;
    }
    char detail[1088];
    worker_say_error(w, detail, sizeof(detail), ist, err);
    if (ist != RG_ERR_UNSUPPORTED)
        worker_say_status(w);
    worker_say(w, "verdict %s -1 0 init: %s",
               ist == RG_ERR_UNSUPPORTED ? "unsupported" : "detected", detail);
    worker_fds_leaked(w); /* a failed init frees what it made, too */
    return 1;
}

/* A step that failed fail-stop: its verdict said (the runner already knows the step from its
 * "step" line), the transport finalized. The worker's exit status. */
static int step_failed(struct worker *w, const rg_sc_op *op, const rg_data_key *k, int rc,
                       const char *label, const char *err)
{
    worker_release(w, &w->fresh, false, NULL, 0);
    worker_release(w, &w->held, false, NULL, 0);
    if (rc == 1) {
        worker_say_status(w);
        worker_say(w, "verdict detected %d %d %s", w->step, w->rep, err);
        fail_stop(w, op, k);
    } else if (rc == 2) {
        worker_say(w, "verdict corrupt %d %d %s", w->step, w->rep, err);
    } else {
        worker_say(w, "verdict error %s: %s", label, err);
    }
    say_calls(w);
    if (w->h) {
        rg_tp_finalize(&w->tp, w->h);
        worker_fds_leaked(w);
    }
    return rc < 0 ? 3 : 0;
}

/* A recovering transport's first error, kept while the program goes on. */
struct first_error {
    char text[1088];
    int status;
};

/* The program's steps, each repetition checked. -1 when every step ran (finalize next), else
 * the exit status once the rank's verdict is said. */
static int run_program(struct worker *w, const rg_worker_args *wa, struct first_error *fe,
                       char *err, size_t errlen)
{
    const rg_scenario *sc = w->sc;
    for (int i = 0; i < sc->nops; i++) {
        const rg_sc_op *op = &sc->ops[i];
        char label[160];
        worker_op_label(op, label, sizeof(label));
        if (rg_tp_lacks_step(&w->tp, op, err, errlen)) {
            worker_say(w, "unsupported %d 0 %s: %s", i, label, err);
            continue;
        }
        for (int rep = 0; rep < op->repeat; rep++) {
            rg_data_key k = {.seed = wa->seed_set ? wa->seed : sc->seed,
                             .step = (uint32_t)i,
                             .rep = (uint32_t)rep,
                             .values = (rg_values)op->values,
                             .nranks = sc->ranks,
                             .nan_minmax = (int)w->tp.caps.nan_minmax};
            phase(w, i, rep);
            worker_say(w, "step %d %d %s", i, rep, label);
            w->step = i;
            w->rep = rep;
            w->status = 0;
            int rc = worker_run_step(w, op, &k, err, errlen);
            if (rc == 3) {
                /* The transport said so at the call: the step's other repetitions go too. */
                worker_say(w, "unsupported %d %d %s: %s", i, rep, label, err);
                if (op->kind == RG_SC_CREATE)
                    i = worker_skip_rest(w, i);
                break;
            }
            /* A call that returned wrong data still ran: its algorithm is the signature's. */
            if (rc == 0 || rc == 2)
                note_call(w);
            if (rc == 0) {
                /* The step before this one had a whole step to show a late read or write. */
                rc = worker_release(w, &w->held, true, err, errlen);
                w->held = w->fresh;
                memset(&w->fresh, 0, sizeof(w->fresh));
            }
            if (rc == 0)
                continue;
            if (rc == 1 && (w->tp.caps.flags & RG_CAP_RECOVERS)) {
                /* A transport that declares it recovers is judged on what it does next: its
                 * first error is kept, the program goes on, and every later result is still
                 * checked (no fail-stop repeat: carrying on is what it promised). */
                if (!fe->text[0]) {
                    fe->status = w->status;
                    snprintf(fe->text, sizeof(fe->text), "%d %d %s", i, rep, err);
                    fprintf(stderr,
                            "railguard worker: the transport declares RG_CAP_RECOVERS: going on "
                            "after step %d's error: %s\n",
                            i, err);
                }
                continue;
            }
            return step_failed(w, op, &k, rc, label, err);
        }
    }
    return -1;
}

/* Finalize, the last held buffers checked, the fds the transport left, and the verdict. */
static int worker_finish(struct worker *w, const struct first_error *fe, char *err, size_t errlen)
{
    int nops = w->sc->nops;
    phase(w, nops, 0);
    worker_say(w, "step %d 0 finalize", nops);
    w->status = 0;
    int rc = worker_release(w, &w->held, true, err, errlen);
    /* A transport that recovered from an earlier error is detected at that error's call: what
     * finalize then says is its consequence, and the judge reads the step as the one that
     * failed (an error told late is judged from it). */
    if (rc == 1 && fe->text[0]) {
        w->status = fe->status;
        worker_say_status(w);
        worker_say(w, "verdict detected %s", fe->text);
        if (w->h) {
            rg_tp_finalize(&w->tp, w->h);
            worker_fds_leaked(w);
        }
        return 0;
    }
    if (rc) {
        worker_say(w, "verdict %s %d 0 %s", rc == 2 ? "corrupt" : "detected", nops, err);
        if (w->h) {
            rg_tp_finalize(&w->tp, w->h);
            worker_fds_leaked(w);
        }
        return 0;
    }
    say_calls(w);
    int fst = w->h ? rg_tp_finalize(&w->tp, w->h) : 0;
    if (fst && fe->text[0]) {
        w->status = fe->status;
        worker_say_status(w);
        worker_say(w, "verdict detected %s", fe->text);
        worker_fds_leaked(w);
        return 0;
    }
    if (fst) {
        worker_say_error(w, err, errlen, fst, "finalize failed");
        worker_say_status(w);
        worker_say(w, "verdict detected %d 0 %s", nops, err);
        worker_fds_leaked(w);
        return 0;
    }
    phase(w, FI_PHASE_ANY, 0); /* finalize's phase ends: the shim writes its counts */
    worker_fds_leaked(w);
    if (fe->text[0]) {
        w->status = fe->status;
        worker_say_status(w);
        worker_say(w, "verdict detected %s", fe->text);
    } else {
        worker_say(w, "verdict ok");
    }
    return 0;
}

int rg_worker_main(const rg_worker_args *wa)
{
    static rg_scenario sc;
    static struct first_error fe;
    struct worker w = {.sc = &sc, .fd = wa->status_fd, .rank = wa->rank};
    char err[1024] = "";
    bt_install(wa->backtrace_file);
    int st = worker_setup(&w, wa, &sc, err, sizeof(err));
    if (st)
        return st;
    if (worker_init(&w, err, sizeof(err)))
        return 0;
    memset(&fe, 0, sizeof(fe));
    st = run_program(&w, wa, &fe, err, sizeof(err));
    return st >= 0 ? st : worker_finish(&w, &fe, err, sizeof(err));
}

/* `railguard worker OPTIONS`, as run starts it (or as its fork server hands a rank over). */
static int take_seed(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    rg_worker_args *a = opts;
    char shown[72];
    (void)opt;
    if (rg_parse_uint(val, true, 0, UINT64_MAX, &a->seed) != 0)
        return snprintf(why, len, "not a number '%s'", rg_parse_show(val, shown, sizeof(shown))),
               -1;
    return 0;
}

#define WA(f) offsetof(rg_worker_args, f)
static const rg_opt worker_table[] = {
    {.name = "scenario",
     .kind = RG_OPT_TEXT,
     .arg = "FILE",
     .help = "The scenario file.",
     .off = WA(scenario)},
    {.name = "rank",
     .kind = RG_OPT_INT,
     .arg = "R",
     .help = "This rank.",
     .off = WA(rank),
     .hi = RG_MAX_RANKS - 1},
    {.name = "coordinator",
     .kind = RG_OPT_TEXT,
     .arg = "HOST:PORT",
     .help = "Rank 0's side channel.",
     .off = WA(coordinator)},
    {.name = "devices-file",
     .kind = RG_OPT_TEXT,
     .arg = "FILE",
     .help = "The JACCL devices file.",
     .off = WA(devices_file)},
    {.name = "transport",
     .kind = RG_OPT_TEXT,
     .arg = "SO",
     .help = "The transport's plugin.",
     .off = WA(transport)},
    {.name = "backtrace-file",
     .kind = RG_OPT_TEXT,
     .arg = "FILE",
     .help = "Where a crash or RG_BACKTRACE_SIGNAL writes.",
     .off = WA(backtrace_file)},
    {.name = "status-fd",
     .kind = RG_OPT_INT,
     .arg = "FD",
     .help = "Where its status lines go.",
     .off = WA(status_fd),
     .hi = 1023},
    {.name = "go-fd",
     .kind = RG_OPT_INT,
     .arg = "FD",
     .help = "Where the runner's go byte comes once every rank is ready.",
     .off = WA(go_fd),
     .hi = 1023},
    {.name = "seed",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "The inputs' seed.",
     .call = take_seed,
     .given = WA(seed_set) + 1},
    {.name = "time-scale",
     .kind = RG_OPT_INT,
     .arg = "F",
     .help = "The scenario's times multiplied by F.",
     .off = WA(time_scale),
     .lo = 1,
     .hi = 100},
};
#undef WA

const rg_cli rg_worker_cli_table = {
    .cmd = "worker",
    .synopsis =
        "--scenario FILE --rank R --coordinator HOST:PORT --devices-file FILE --transport SO "
        "--status-fd FD [options]",
    .about =
        "One rank of a scenario, as railguard run starts it: it runs the scenario's program on the "
        "transport, checks every output, and says its steps and verdict on FD.",
    .opts = worker_table,
    .nopts = (int)(sizeof(worker_table) / sizeof(worker_table[0])),
};

int rg_worker_cli(int argc, char **argv)
{
    rg_worker_args a = {.rank = -1, .status_fd = -1, .go_fd = -1};
    /* argv[0] "railguard", argv[1] "worker": the options start after them. */
    int first, rc = rg_cli_parse(&rg_worker_cli_table, argc - 1, argv + 1, &a, &first);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (first < argc - 1 || !a.scenario || a.rank < 0 || !a.coordinator || !a.devices_file ||
        !a.transport || a.status_fd < 0) {
        fprintf(stderr, "railguard worker: needs --scenario --rank --coordinator --devices-file "
                        "--transport --status-fd (it is started by 'railguard run')\n");
        return 2;
    }
    return rg_worker_main(&a);
}
