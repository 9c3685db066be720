/* SPDX-License-Identifier: MIT */
/*
 * A scenario's ranks as workers: each started under the shim (exec'd, or forked by a fork
 * server), its status lines followed as they come (rank/rg_status.c reads them), released
 * together once every rank is ready, stopped at the deadline with the shim's summary and a
 * backtrace, and its evidence read once it has ended. What is left is plain data
 * (rg_launched) for judge/rg_judge_procs.c: nothing here decides a verdict.
 */
#include "launch/rg_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every status line of a rank, kept as it comes in DIR/rankR.status (the timeline's source, so
 * it survives a rank that is killed or hangs), and folded into what the rank said. */
static void drain(rg_rank_result *k, struct rg_proc *p, double t0_ms)
{
    for (;;) {
        if (p->fd < 0)
            return;
        ssize_t n = read(p->fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            close(p->fd);
            p->fd = -1;
            return;
        }
        p->len += (size_t)n;
        p->buf[p->len] = '\0';
        char *start = p->buf, *nl;
        while ((nl = strchr(start, '\n'))) {
            if (p->tl >= 0 && write(p->tl, start, (size_t)(nl + 1 - start)) < 0) {
                close(p->tl); /* the timeline is evidence, not the verdict: go on without */
                p->tl = -1;
            }
            *nl = '\0';
            rg_status_take(k, &p->said, start, t0_ms);
            start = nl + 1;
        }
        p->len = strlen(start);
        memmove(p->buf, start, p->len + 1);
        if (p->len == sizeof(p->buf) - 1)
            p->len = 0; /* a line this long is not ours: drop it */
    }
}

/*
 * Sends every rank its go byte once all are ready (or gone: the others then go on and fail
 * on their own), or at once with `now`. Returns whether they were released.
 */
static bool release_ranks(rg_launched *l, int lo, int hi, bool now)
{
    for (int r = lo; r < hi && !now; r++)
        if (l->rank[r].proc.pid > 0 && !l->rank[r].proc.said.ready && !l->rank[r].proc.exited &&
            !l->rank[r].proc.stopped)
            return false;
    /* A rank that died has no reader left: EPIPE, not a SIGPIPE that ends the supervisor. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    for (int r = lo; r < hi; r++) {
        if (l->rank[r].proc.go < 0)
            continue;
        ssize_t k;
        do
            k = write(l->rank[r].proc.go, "g", 1);
        while (k < 0 && errno == EINTR);
        close(l->rank[r].proc.go);
        l->rank[r].proc.go = -1;
    }
    sigaction(SIGPIPE, &old, NULL);
    return true;
}

/* The worker's options for one rank, after "railguard worker": one list for both ways a rank is
 * started (exec'd, or forked by a fork server). */
#define RUN__WORKER_OPTS 20
static void worker_opts(const char *opts[RUN__WORKER_OPTS + 1], const rg_worker_launch *w,
                        const char *rank, const char *bt, const char *seed)
{
    static char scale[16]; /* read before the next rank's: exec'd, or handed to its server */
    snprintf(scale, sizeof(scale), "%d", w->sc->time_scale > 1 ? w->sc->time_scale : 1);
    const char *v[RUN__WORKER_OPTS] = {
        "--scenario",     w->path,    "--rank",           rank,         "--coordinator", w->coord,
        "--devices-file", w->devfile, "--transport",      w->transport, "--status-fd",   "3",
        "--go-fd",        "4",        "--backtrace-file", bt,           "--seed",        seed,
        "--time-scale",   scale};
    memcpy(opts, v, sizeof(v));
    opts[RUN__WORKER_OPTS] = NULL;
}

/* --fork-server: one server per rank slot, started at the first scenario that needs it. */
static rg_forksrv g_srv[RG_MAX_RANKS];
static bool g_srv_up[RG_MAX_RANKS];

void rg_launch_servers_stop(void)
{
    for (int r = 0; r < RG_MAX_RANKS; r++)
        if (g_srv_up[r]) {
            rg_forksrv_stop(&g_srv[r]);
            g_srv_up[r] = false;
        }
}

/*
 * Rank r of this scenario asked of its fork server: the same worker options, environment and
 * descriptors a rank exec'd below gets. Returns whether it was asked (served_take then takes
 * it); if not, the server is stopped (said once) and the rank is exec'd as always.
 */
static bool served_ask(const rg_worker_launch *w, int r, const char *secret, const char *btsig,
                       const char *prog, struct rg_proc *p)
{
    char err[512], log[1200], evp[1200], bt[1200], rank[16], seed[32], fisig[16];
    char e_plan[1300], e_log[1300], e_rank[32], e_bt[48], e_fisig[48], e_secret[160];
    if (!g_srv_up[r]) {
        if (rg_forksrv_start(&g_srv[r], w->self, w->shim, w->transport, err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard run: %s: exec'ing ranks instead\n", err);
            return false;
        }
        g_srv_up[r] = true;
    }
    snprintf(log, sizeof(log), "%s/rank%d.log", w->dir, r);
    snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", w->dir, r);
    snprintf(bt, sizeof(bt), "%s/rank%d.backtrace", w->dir, r);
    snprintf(rank, sizeof(rank), "%d", r);
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)w->seed);
    snprintf(fisig, sizeof(fisig), "%d", rg_proc_snapshot_signal());
    unlink(evp);
    unlink(bt);
    snprintf(e_plan, sizeof(e_plan), "RG_FI_PLAN_FILE=%s", w->planfile);
    snprintf(e_log, sizeof(e_log), "RG_FI_LOG=%s", evp);
    snprintf(e_rank, sizeof(e_rank), "RG_FI_RANK=%d", r);
    snprintf(e_fisig, sizeof(e_fisig), "RG_FI_SNAPSHOT_SIGNAL=%s", fisig);
    snprintf(e_bt, sizeof(e_bt), "RG_BACKTRACE_SIGNAL=%s", btsig);
    snprintf(e_secret, sizeof(e_secret), "RG_SECRET=%s", secret);
    char e_scale[40], e_prog[1300];
    snprintf(e_scale, sizeof(e_scale), "RG_FI_TIME_SCALE=%d",
             w->sc->time_scale > 1 ? w->sc->time_scale : 1);
    snprintf(e_prog, sizeof(e_prog), "RG_FI_PROGRESS=%s", prog ? prog : "");
    /* The secret as an exec'd rank gets it: set, and no file, when the run made one (with
     * none the list ends at the NULL, leaving both as the server inherited them). A scenario
     * with env: never comes here (start_ranks). */
    const char *env[] = {"RG_FI_PLAN",
                         e_plan,
                         e_log,
                         e_rank,
                         e_fisig,
                         e_bt,
                         e_scale,
                         prog ? e_prog : "RG_FI_PROGRESS",
                         secret[0] ? e_secret : NULL,
                         "RG_SECRET_FILE",
                         NULL};
    const char *args[RUN__WORKER_OPTS + 1];
    worker_opts(args, w, rank, bt, seed);
    int sp[2], gp[2];
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (lfd < 0)
        return false;
    if (pipe2(sp, O_CLOEXEC) != 0) {
        close(lfd);
        return false;
    }
    if (pipe2(gp, O_CLOEXEC) != 0) {
        close(lfd);
        close(sp[0]);
        close(sp[1]);
        return false;
    }
    const int fds[3] = {lfd, sp[1], gp[0]};
    p->spawn_s = rg_now_s();
    int st = rg_forksrv_send(&g_srv[r], env, args, fds, err, sizeof(err));
    close(lfd);
    close(sp[1]);
    close(gp[0]);
    if (st != 0) {
        fprintf(stderr, "railguard run: %s: exec'ing ranks instead\n", err);
        rg_forksrv_stop(&g_srv[r]);
        close(sp[0]);
        close(gp[1]);
        return false;
    }
    fcntl(sp[0], F_SETFL, O_NONBLOCK);
    p->fd = sp[0];
    p->go = gp[1];
    return true;
}

/* The rank served_ask asked for: whether it came; if not, its pipes are closed and the server
 * stopped (said once), for the rank to be exec'd. */
static bool served_take(int r, struct rg_proc *p)
{
    char err[512];
    pid_t pid = rg_forksrv_take(&g_srv[r], 10, err, sizeof(err));
    if (pid > 0) {
        p->pid = pid;
        return true;
    }
    fprintf(stderr, "railguard run: %s: exec'ing ranks instead\n", err);
    rg_forksrv_stop(&g_srv[r]);
    close(p->fd);
    close(p->go);
    p->fd = p->go = -1;
    return false;
}

/* Rank r exec'd as `railguard worker` (under the wrapper, if any): its log, the status pipe at
 * 3 and the go pipe at 4, the shim's environment. Returns its pid, or -1. */
static pid_t exec_rank(const rg_worker_launch *w, int r, const char *secret, const char *btsig,
                       const char *prog, struct rg_proc *p)
{
    int fds[2], gfds[2];
    if (pipe(fds) != 0)
        return -1;
    if (pipe(gfds) != 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    p->spawn_s = rg_now_s();
    pid_t pid = fork();
    if (pid == 0) {
        char log[1200], evp[1200], bt[1200], rank[16], seed[32], pre[PATH_MAX + 16];
        snprintf(log, sizeof(log), "%s/rank%d.log", w->dir, r);
        snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", w->dir, r);
        snprintf(bt, sizeof(bt), "%s/rank%d.backtrace", w->dir, r);
        snprintf(rank, sizeof(rank), "%d", r);
        snprintf(seed, sizeof(seed), "%llu", (unsigned long long)w->seed);
        snprintf(pre, sizeof(pre), "%s", w->shim);
        int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (lfd >= 0) {
            dup2(lfd, 1);
            dup2(lfd, 2);
        }
        close(fds[0]);
        close(gfds[1]);
        /* The status pipe at 3, the go pipe at 4: out of each other's way first. */
        int sfd = fcntl(fds[1], F_DUPFD, 10), gfd = fcntl(gfds[0], F_DUPFD, 10);
        if (sfd < 0 || gfd < 0 || dup2(sfd, 3) < 0 || dup2(gfd, 4) < 0)
            _exit(127);
        close(sfd);
        close(gfd);
        if (fds[1] != 3 && fds[1] != 4)
            close(fds[1]);
        if (gfds[0] != 3 && gfds[0] != 4)
            close(gfds[0]);
        unlink(evp); /* a rerun into the same directory must not read old evidence */
        unlink(bt);
        for (int i = 0; i < w->sc->nenv; i++)
            setenv(w->sc->env[i].name, w->sc->env[i].value, 1);
        rg_proc_shim_env(pre, w->planfile, evp, r, false, w->sc->time_scale);
        setenv("RG_BACKTRACE_SIGNAL", btsig, 1);
        if (prog)
            setenv("RG_FI_PROGRESS", prog, 1);
        else
            unsetenv("RG_FI_PROGRESS");
        if (secret[0]) {
            setenv("RG_SECRET", secret, 1);
            unsetenv("RG_SECRET_FILE");
        }
        const char *argv[RUN__WORKER_OPTS + 3] = {w->self, "worker"};
        worker_opts(argv + 2, w, rank, bt, seed);
        if (w->nwrap) {
            /* The wrapper's words, then the worker's: one argv for execvp. */
            char *wargv[RG_CMD_WORDS + sizeof(argv) / sizeof(argv[0])];
            int n = 0;
            for (int k = 0; k < w->nwrap && k < RG_CMD_WORDS; k++)
                wargv[n++] = w->wrap[k];
            for (size_t a = 0; a < sizeof(argv) / sizeof(argv[0]); a++)
                wargv[n++] = (char *)argv[a];
            execvp(wargv[0], wargv);
        } else {
            execv(w->self, (char *const *)argv);
        }
        _exit(127);
    }
    close(fds[1]);
    close(gfds[0]);
    if (pid < 0) {
        close(fds[0]);
        close(gfds[1]);
        return -1;
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    fcntl(gfds[1], F_SETFD, FD_CLOEXEC);
    p->pid = pid;
    p->fd = fds[0];
    p->go = gfds[1];
    return pid;
}

/* Every rank lo..hi-1 started, each with what it says kept from the first line: forked ones
 * asked of every server first, then taken, so that the servers fork them side by side. */
static const char *page(const rg_launched *l, int r)
{
    return l->hang.rank[r].page[0] ? l->hang.rank[r].page : NULL;
}

static void start_ranks(const rg_worker_launch *w, rg_launched *l, const char *secret,
                        const char *btsig)
{
    bool asked[RG_MAX_RANKS] = {false};
    for (int r = w->lo; r < w->hi; r++) {
        rg_launched_rank *lr = &l->rank[r];
        /* Until a rank says otherwise it is where it started. */
        lr->said = (rg_rank_result){
            .t_s = -1, .step = -1, .step_t_s = 0, .left_t_s = -1, .start_s = -1, .cpu_wait_s = -1};
        snprintf(lr->said.where, sizeof(lr->said.where), "start");
        lr->cpu_s = -1;
        lr->proc = (struct rg_proc){.pid = -1, .fd = -1, .go = -1, .tl = -1};
        char tlp[1200];
        snprintf(tlp, sizeof(tlp), "%s/rank%d.status", w->dir, r);
        lr->proc.tl = open(tlp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        /* A scenario with env: is exec'd: the fork server has set libibverbs up before it
         * forks, so a variable read once at that set-up (or at a process's start) would reach
         * an exec'd rank and not a forked one. */
        /* Its progress page, for a hang judged when it is one: none, and it waits for the
         * deadline. */
        l->hang.rank[r] = (rg_hang_rank){.quiet_since = 0};
        if (l->hang.track &&
            rg_progress_make(r, l->hang.rank[r].page, sizeof(l->hang.rank[r].page)) != 0)
            l->hang.rank[r].page[0] = '\0';
        if (w->fork_server && !w->sc->nenv &&
            served_ask(w, r, secret, btsig, page(l, r), &lr->proc)) {
            asked[r] = true;
            continue;
        }
        exec_rank(w, r, secret, btsig, page(l, r), &lr->proc);
    }
    for (int r = w->lo; r < w->hi; r++)
        if (asked[r] && !served_take(r, &l->rank[r].proc))
            exec_rank(w, r, secret, btsig, page(l, r), &l->rank[r].proc);
}

/* Whether rank r ended or stopped since last looked at: its status, and when, recorded. */
static void reap(rg_launched_rank *lr, double t0_ms)
{
    struct rg_proc *p = &lr->proc;
    int st;
    if (p->pid <= 0 || p->exited || p->stopped ||
        waitpid(p->pid, &st, WNOHANG | WUNTRACED) != p->pid)
        return;
    if (WIFSTOPPED(st)) {
        p->stopped = true;
        p->stop_t_s = rg_now_s() - t0_ms / 1000.0;
        return;
    }
    p->status = st;
    p->exited = true;
    lr->said.left_t_s = rg_now_s() - t0_ms / 1000.0;
    drain(&lr->said, p, t0_ms);
}

/* One look at what moves (rg_progress.c): whether the run is a hang now. */
static bool hang_look(const rg_worker_launch *w, rg_launched *l, bool wire_pending)
{
    double now = rg_now_s() - l->t0, wait = 0;
    bool live[RG_MAX_RANKS] = {false};
    for (int r = w->lo; r < w->hi; r++) {
        rg_launched_rank *lr = &l->rank[r];
        const struct rg_proc *p = &lr->proc;
        live[r] = p->pid > 0 && !p->exited && !p->stopped;
        if (!live[r])
            continue;
        /* Known: its page read, its process in a slot, none of its processes without one. */
        rg_hang_seen s = {0};
        rg_progress_counts c = {0};
        const char *pg = page(l, r);
        s.known = pg && rg_progress_read(pg, (long)p->pid, &c) == 0 && c.has_pid && !c.full;
        s.moves = c.moves;
        s.polls = c.polls;
        s.holding = c.holding;
        s.in_call = p->said.steps > 0 && !p->said.verdict;
        s.step_mark = p->said.lines;
        s.cpu_s = lr->cpu_s; /* rg_slow_sample's, taken in the same loop */
        if (lr->said.cpu_wait_s > wait)
            wait = lr->said.cpu_wait_s;
        rg_hang_look(&l->hang, r, &s, now);
    }
    uint64_t pkts = 0;
    int known = rg_progress_packets(w->devices, w->ndev, &pkts);
    rg_hang_look_devices(&l->hang, known, pkts, wire_pending, now);
    l->hang.window_s = rg_hang_window(w->sc->timeout_s, l->lag_s, wait);
    return rg_hang_judge(&l->hang, live, w->lo, w->hi, now);
}

/* The ranks' lines and ends as they come, until none is running, the deadline passes or the
 * run is a hang; every rank released once all are ready. */
static void follow(const rg_worker_launch *w, rg_launched *l, double deadline)
{
    double t0_ms = l->t0 * 1000.0, sampled = 0, looked = 0;
    bool released = false;
    struct rg_proc *procs[RG_MAX_RANKS];
    /* Each rank's step for the wire (-1: init, or none yet), and its next timed action. */
    int steps[RG_MAX_RANKS];
    for (int r = 0; r < RG_MAX_RANKS; r++)
        steps[r] = -1;
    double wire_next = l->wire.n ? rg_wire_tick(&l->wire, rg_now_s() - l->t0, steps) : -1;
    for (int r = w->lo; r < w->hi; r++)
        procs[r] = &l->rank[r].proc;
    for (;;) {
        struct pollfd pfds[RG_MAX_RANKS];
        int np = 0, live = 0, leaving = 0;
        for (int r = w->lo; r < w->hi; r++) {
            const struct rg_proc *p = procs[r];
            bool running = p->pid > 0 && !p->exited && !p->stopped;
            if (p->fd >= 0)
                pfds[np++] = (struct pollfd){.fd = p->fd, .events = POLLIN};
            /* A stopped rank waits for nobody: once only stopped ones are left, the run ends. */
            live += running;
            /* Its status pipe closed: it is exiting, and nothing left would wake the poll. */
            leaving += running && p->fd < 0;
        }
        double left = deadline - rg_now_s();
        if (!live || left <= 0)
            break;
        int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
        if (leaving && ms > 2)
            ms = 2;
        /* A wire fault due sooner wakes the loop for it. */
        if (wire_next >= 0 && wire_next * 1000 < ms)
            ms = (int)(wire_next * 1000) + 1;
        double want = rg_now_s() + ms / 1000.0;
        if (poll(pfds, (nfds_t)np, ms) == 0)
            rg_slow_lag(&l->lag_s, want, rg_now_s());
        /* What the machine takes from them (rg_slow_measure.c). */
        if (rg_now_s() >= sampled + 0.2) {
            rg_slow_sample(l);
            sampled = rg_now_s();
        }
        for (int r = w->lo; r < w->hi; r++) {
            drain(&l->rank[r].said, procs[r], t0_ms);
            reap(&l->rank[r], t0_ms);
            steps[r] = l->rank[r].said.step;
        }
        /* Once a wake: what is due by now, and one due at a step as soon as its line is read. */
        if (l->wire.n)
            wire_next = rg_wire_tick(&l->wire, rg_now_s() - l->t0, steps);
        if (!released && (released = release_ranks(l, w->lo, w->hi, false)))
            l->ready_s = rg_now_s() - l->t0;
        if (l->hang.track && released && rg_now_s() >= looked + 0.2) {
            looked = rg_now_s();
            if (hang_look(w, l, wire_next >= 0))
                break;
        }
    }
    l->ended_s = rg_now_s() - l->t0;
    /* The ranks still running now are the hung ones: since when none of them moved. */
    bool live[RG_MAX_RANKS] = {false};
    int nlive = 0;
    for (int r = w->lo; r < w->hi; r++) {
        const struct rg_proc *p = procs[r];
        live[r] = p->pid > 0 && !p->exited && !p->stopped;
        nlive += live[r];
    }
    l->hang_since = nlive ? rg_hang_since(&l->hang, live, w->lo, w->hi) : -1;
    release_ranks(l, w->lo, w->hi, true);
}

/* Every rank ended: stopped ones killed first (so the deadline's backtraces are only the hung
 * ones'), hung ones with the shim's summary and a backtrace; their evidence read. */
static void end_ranks(const rg_worker_launch *w, rg_launched *l, double deadline)
{
    double t0_ms = l->t0 * 1000.0;
    for (int r = w->lo; r < w->hi; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        if (rg_proc_end_stopped(p, &l->rank[r].said))
            drain(&l->rank[r].said, p, t0_ms);
    }
    rg_proc_stop_hung(l, w->lo, w->hi, w->dir, true);
    l->stopped_s = rg_now_s() - l->t0;
    for (int r = w->lo; r < w->hi; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        if (p->pid > 0 && !p->exited) {
            p->exited = true;
            drain(&l->rank[r].said, p, t0_ms);
            p->hung = true; /* judged once the evidence says what its queues held */
        }
        if (p->fd >= 0)
            close(p->fd);
        p->fd = -1;
        if (p->tl >= 0)
            close(p->tl);
        p->tl = -1;
    }
    l->seconds = rg_now_s() - l->t0;
    for (int r = w->lo; r < w->hi; r++)
        if (page(l, r))
            unlink(page(l, r));
    /* The wire made whole before anything else runs on it, its counters read. */
    rg_wire_end(&l->wire, rg_now_s() - l->t0);
    rg_launched_evidence(l, w->lo, w->hi, w->dir, deadline);
    l->read_s = rg_now_s() - l->t0;
}

void rg_launch_workers(const rg_worker_launch *w, rg_launched *l)
{
    char btsig[16];
    l->lo = w->lo;
    l->hi = w->hi;
    l->lag_s = 0;
    l->t0 = rg_now_s();
    snprintf(btsig, sizeof(btsig), "%d", rg_proc_backtrace_signal());
    /* A fresh secret for each run's side channel, so no stray process (nor a rank of another
     * run) can join it. External ranks keep the one their launcher gave them all. */
    char secret[RG_JOB_SECRET_HEX] = "";
    if (w->whole && rg_job_secret(secret) != 0) /* the ranks then say they have no secret */
        fprintf(stderr, "railguard run: no random bytes for the side channel's secret: %s\n",
                strerror(errno));
    /* Wire faults from the start (after=0) are in place before any rank opens a device. */
    l->wire_err[0] = '\0';
    if (rg_wire_plan(&l->wire, &rg_wire_sys_linux, w->sc, w->lo, w->hi, w->devices, w->ndev, w->dir,
                     l->wire_err, sizeof(l->wire_err)) != 0)
        l->wire.n = 0;
    l->wire.t0 = l->t0;
    rg_wire_tick(&l->wire, 0, NULL);
    /* A hang judged when it is one; on a second attempt too (its times are scaled). */
    memset(&l->hang, 0, sizeof(l->hang));
    l->ready_s = l->ended_s = l->stopped_s = l->read_s = l->hang_since = -1;
    l->programs = false;
    /* Only where every rank is: one rank of a launch cannot see whether the others move. With
     * --hang-at-deadline it still looks, for the phases: how long a hang waited. */
    l->hang.track = w->whole && w->sc->timeout_s > 0 && w->sc->nops > 0;
    l->hang.on = l->hang.track && !w->hang_at_deadline;
    start_ranks(w, l, secret, btsig);
    double deadline = l->t0 + w->sc->deadline_s;
    follow(w, l, deadline);
    end_ranks(w, l, deadline);
    explicit_bzero(secret, sizeof(secret));
}
