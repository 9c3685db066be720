/* SPDX-License-Identifier: MIT */
/* One scenario's ranks (rg_run.h): each started as a worker under the shim (or forked by a
 * fork server), its status lines followed, stopped at the deadline with a backtrace, judged. */
#include "rg_run.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- one scenario ---------------------------------------------------------------------------- */
/* Seconds from t0 (CLOCK_MONOTONIC ms) to a rank's stamp, which the worker took on that clock. */
static double since(double t0_ms, double at_ms)
{
    return (at_ms - t0_ms) / 1000.0;
}

/* One status line from a rank: "<mono ms> step ..." or "<mono ms> verdict ...". */
static void take_line(rg_rank_result *k, struct rg_proc *p, char *line, double t0_ms)
{
    int step, rep, off = 0;
    double at;
    if (sscanf(line, "%lf %n", &at, &off) != 1 || off <= 0)
        return; /* not ours */
    line += off;
    double t = since(t0_ms, at);
    if (sscanf(line, "step %d %d %n", &step, &rep, &off) == 2 && off > 0) {
        k->step = step;
        k->rep = rep;
        k->step_t_s = t;
        snprintf(k->where, sizeof(k->where), "%s", line + off);
        return;
    }
    if (!strcmp(line, "ready")) {
        p->ready = true;
        return;
    }
    if (!strncmp(line, "leak ", 5)) {
        rg_rank_find(k, RG_V_LEAK, t, "%s", line + 5);
        return;
    }
    if (!strncmp(line, "notfailstop ", 12)) {
        rg_rank_find(k, RG_V_NOT_FAIL_STOP, t, "%s", line + 12);
        return;
    }
    if (!strncmp(line, "unsupported ", 12)) {
        /* "unsupported STEP REP LABEL: why": a step skipped, the rank goes on. */
        int o2 = 0;
        const char *u = line + 12;
        if (sscanf(u, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0)
            u += o2;
        rg_rank_find(k, RG_V_UNSUPPORTED, t, "not run: %s", u);
        return;
    }
    if (!strncmp(line, "status ", 7)) {
        /* The failed call's status, before its verdict: "status -8", or "status v1". */
        long st = 0;
        char *end;
        if (!strcmp(line + 7, "v1"))
            k->status = RG_STATUS_V1;
        else if ((st = strtol(line + 7, &end, 10)) < 0 && st > -RG_SC_CLASS_BITS && !*end)
            k->status = (int)st;
        return;
    }
    if (!strncmp(line, "calls ", 6)) {
        snprintf(k->calls, sizeof(k->calls), "%s", line + 6);
        return;
    }
    if (strncmp(line, "verdict ", 8) != 0)
        return;
    const char *v = line + 8;
    p->verdict = true;
    if (!strcmp(v, "ok")) {
        rg_rank_find(k, RG_V_OK, t, "%s", "");
    } else if (!strncmp(v, "detected ", 9) || !strncmp(v, "corrupt ", 8)) {
        bool det = v[0] == 'd';
        int o2 = 0;
        v += det ? 9 : 8;
        if (sscanf(v, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0) {
            k->step = step;
            k->rep = rep;
            v += o2;
        }
        rg_rank_find(k, det ? RG_V_DETECTED : RG_V_SILENT_CORRUPTION, t, "%s", v);
    } else if (!strncmp(v, "unsupported ", 12)) {
        int o2 = 0;
        v += 12;
        if (sscanf(v, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0)
            v += o2;
        rg_rank_find(k, RG_V_UNSUPPORTED, t, "not run: %s", v);
    } else if (!strncmp(v, "error ", 6)) {
        p->said_error = true;
        rg_rank_find(k, RG_V_ERROR, t, "%s", v + 6);
    }
}

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
            take_line(k, p, start, t0_ms);
            start = nl + 1;
        }
        p->len = strlen(start);
        memmove(p->buf, start, p->len + 1);
        if (p->len == sizeof(p->buf) - 1)
            p->len = 0; /* a line this long is not ours: drop it */
    }
}

/* "rank 1 left with SILENT_CORRUPTION at 0.42 s in all_reduce ...": the first peer to end. */
static void first_to_leave(const rg_result *res, int lo, int hi, int self, char *out, size_t len)
{
    int first = -1;
    out[0] = '\0';
    for (int r = lo; r < hi; r++) {
        if (r == self || res->rank[r].left_t_s < 0)
            continue;
        if (first < 0 || res->rank[r].left_t_s < res->rank[first].left_t_s)
            first = r;
    }
    if (first >= 0)
        snprintf(out, len, "; waiting since rank %d left with %s at %.2f s in %s", first,
                 rg_verdict_name(res->rank[first].verdict), res->rank[first].left_t_s,
                 res->rank[first].where);
}

/*
 * Sends every rank its go byte once all are ready (or gone: the others then go on and fail
 * on their own), or at once with `now`. Returns whether they were released.
 */
static bool release_ranks(struct rg_proc *procs, int lo, int hi, bool now)
{
    for (int r = lo; r < hi && !now; r++)
        if (procs[r].pid > 0 && !procs[r].ready && !procs[r].exited && !procs[r].stopped)
            return false;
    /* A rank that died has no reader left: EPIPE, not a SIGPIPE that ends the supervisor. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    for (int r = lo; r < hi; r++) {
        if (procs[r].go < 0)
            continue;
        ssize_t k;
        do
            k = write(procs[r].go, "g", 1);
        while (k < 0 && errno == EINTR);
        close(procs[r].go);
        procs[r].go = -1;
    }
    sigaction(SIGPIPE, &old, NULL);
    return true;
}

/*
 * Runs ranks lo..hi-1 of a scenario here and follows them to their verdicts: all of them when
 * local, this process's one rank when launched externally.
 */
/* The worker's options for one rank, after "railguard worker": one list for both ways a rank is
 * started (exec'd, or forked by a fork server). */
#define RUN__WORKER_OPTS 20
static void worker_opts(const char *opts[RUN__WORKER_OPTS + 1], const struct run_opts *o,
                        const struct sc_entry *e, const char *rank, const char *coord,
                        const char *devfile, const char *bt, const char *seed)
{
    static char scale[16]; /* read before the next rank's: exec'd, or handed to its server */
    snprintf(scale, sizeof(scale), "%d", e->sc.time_scale > 1 ? e->sc.time_scale : 1);
    const char *v[RUN__WORKER_OPTS] = {"--scenario",    e->path,      "--rank",           rank,
                                       "--coordinator", coord,        "--devices-file",   devfile,
                                       "--transport",   o->transport, "--status-fd",      "3",
                                       "--go-fd",       "4",          "--backtrace-file", bt,
                                       "--seed",        seed,         "--time-scale",     scale};
    memcpy(opts, v, sizeof(v));
    opts[RUN__WORKER_OPTS] = NULL;
}

/* --fork-server: one server per rank slot, started at the first scenario that needs it. */
static rg_forksrv g_srv[RG_MAX_RANKS];
static bool g_srv_up[RG_MAX_RANKS];

void rg_run_servers_stop(void)
{
    for (int r = 0; r < RG_MAX_RANKS; r++)
        if (g_srv_up[r]) {
            rg_forksrv_stop(&g_srv[r]);
            g_srv_up[r] = false;
        }
}

/*
 * Rank r of this scenario through its fork server: the same worker options, environment and
 * descriptors a rank exec'd below gets. Returns whether it started; if not, the server is
 * stopped (said once) and the rank is exec'd as always.
 */
static bool served_rank(const struct run_opts *o, const struct sc_entry *e, rg_result *res, int r,
                        const char *coord, const char *devfile, const char *planfile,
                        const char *secret, const char *btsig, struct rg_proc *p)
{
    char err[512], log[1200], evp[1200], bt[1200], rank[16], seed[32], fisig[16];
    char e_plan[1300], e_log[1300], e_rank[32], e_bt[48], e_fisig[48], e_secret[160];
    if (!g_srv_up[r]) {
        if (rg_forksrv_start(&g_srv[r], o->self, o->shim, o->transport, err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard run: %s: exec'ing ranks instead\n", err);
            return false;
        }
        g_srv_up[r] = true;
    }
    snprintf(log, sizeof(log), "%s/rank%d.log", res->dir, r);
    snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", res->dir, r);
    snprintf(bt, sizeof(bt), "%s/rank%d.backtrace", res->dir, r);
    snprintf(rank, sizeof(rank), "%d", r);
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)rg_run_seed(o, &e->sc));
    snprintf(fisig, sizeof(fisig), "%d", rg_proc_snapshot_signal());
    unlink(evp);
    unlink(bt);
    snprintf(e_plan, sizeof(e_plan), "RG_FI_PLAN_FILE=%s", planfile);
    snprintf(e_log, sizeof(e_log), "RG_FI_LOG=%s", evp);
    snprintf(e_rank, sizeof(e_rank), "RG_FI_RANK=%d", r);
    snprintf(e_fisig, sizeof(e_fisig), "RG_FI_SNAPSHOT_SIGNAL=%s", fisig);
    snprintf(e_bt, sizeof(e_bt), "RG_BACKTRACE_SIGNAL=%s", btsig);
    snprintf(e_secret, sizeof(e_secret), "RG_SECRET=%s", secret);
    char e_scale[40];
    snprintf(e_scale, sizeof(e_scale), "RG_FI_TIME_SCALE=%d",
             e->sc.time_scale > 1 ? e->sc.time_scale : 1);
    /* The secret as an exec'd rank gets it: set, and no file, when the run made one (with
     * none the list ends at the NULL, leaving both as the server inherited them). */
    const char *env[] = {"RG_FI_PLAN",     e_plan, e_log,   e_rank,
                         e_fisig,          e_bt,   e_scale, secret[0] ? e_secret : NULL,
                         "RG_SECRET_FILE", NULL};
    const char *args[RUN__WORKER_OPTS + 1];
    worker_opts(args, o, e, rank, coord, devfile, bt, seed);
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
    pid_t pid = rg_forksrv_spawn(&g_srv[r], env, args, fds, 10, err, sizeof(err));
    close(lfd);
    close(sp[1]);
    close(gp[0]);
    if (pid < 0) {
        fprintf(stderr, "railguard run: %s: exec'ing ranks instead\n", err);
        rg_forksrv_stop(&g_srv[r]);
        close(sp[0]);
        close(gp[1]);
        return false;
    }
    fcntl(sp[0], F_SETFL, O_NONBLOCK);
    p->pid = pid;
    p->fd = sp[0];
    p->go = gp[1];
    return true;
}

void rg_run_ranks(const struct run_opts *o, const struct sc_entry *e, rg_result *res, int lo,
                  int hi, const char *coord, const char *devfile, const char *planfile, bool whole)
{
    const rg_scenario *sc = &e->sc;
    static struct rg_proc procs[RG_MAX_RANKS];
    static rg_evidence ev[RG_MAX_RANKS];
    double t0 = rg_now_s(), t0_ms = t0 * 1000.0;
    char btsig[16];

    snprintf(btsig, sizeof(btsig), "%d", rg_proc_backtrace_signal());
    /* A fresh secret for each run's side channel, so no stray process (nor a rank of another
     * run) can join it. External ranks keep the one their launcher gave them all. */
    char secret[RG_JOB_SECRET_HEX] = "";
    if (whole && rg_job_secret(secret) != 0) /* the ranks then say they have no secret */
        fprintf(stderr, "railguard run: no random bytes for the side channel's secret: %s\n",
                strerror(errno));
    for (int r = lo; r < hi; r++) {
        int fds[2];
        /* Until a rank says otherwise it is where it started. */
        res->rank[r] = (rg_rank_result){
            .t_s = -1, .step = -1, .step_t_s = 0, .left_t_s = -1, .start_s = -1, .cpu_wait_s = -1};
        snprintf(res->rank[r].where, sizeof(res->rank[r].where), "start");
        procs[r] = (struct rg_proc){.pid = -1, .fd = -1, .go = -1, .tl = -1};
        /* Every line the rank says, kept as it comes: its timeline (trace.json, the run page)
         * then survives a rank that is killed or hangs. */
        char tlp[1200];
        snprintf(tlp, sizeof(tlp), "%s/rank%d.status", res->dir, r);
        procs[r].tl = open(tlp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (o->fork_server &&
            served_rank(o, e, res, r, coord, devfile, planfile, secret, btsig, &procs[r]))
            continue;
        int gfds[2];
        if (pipe(fds) != 0)
            continue;
        if (pipe(gfds) != 0) {
            close(fds[0]);
            close(fds[1]);
            continue;
        }
        procs[r].spawn_s = rg_now_s();
        pid_t pid = fork();
        if (pid == 0) {
            char log[1200], evp[1200], bt[1200], rank[16], seed[32], pre[PATH_MAX + 16];
            snprintf(log, sizeof(log), "%s/rank%d.log", res->dir, r);
            snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", res->dir, r);
            snprintf(bt, sizeof(bt), "%s/rank%d.backtrace", res->dir, r);
            snprintf(rank, sizeof(rank), "%d", r);
            snprintf(seed, sizeof(seed), "%llu", (unsigned long long)rg_run_seed(o, sc));
            snprintf(pre, sizeof(pre), "%s", o->shim);
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
            rg_proc_shim_env(pre, planfile, evp, r, false, sc->time_scale);
            setenv("RG_BACKTRACE_SIGNAL", btsig, 1);
            if (secret[0]) {
                setenv("RG_SECRET", secret, 1);
                unsetenv("RG_SECRET_FILE");
            }
            const char *argv[RUN__WORKER_OPTS + 3] = {o->self, "worker"};
            worker_opts(argv + 2, o, e, rank, coord, devfile, bt, seed);
            if (o->nwrap) {
                /* The wrapper's words, then the worker's: one argv for execvp. */
                char *wargv[17 + sizeof(argv) / sizeof(argv[0])];
                int n = 0;
                for (int w = 0; w < o->nwrap; w++)
                    wargv[n++] = o->wrap[w];
                for (size_t a = 0; a < sizeof(argv) / sizeof(argv[0]); a++)
                    wargv[n++] = (char *)argv[a];
                execvp(wargv[0], wargv);
            } else {
                execv(o->self, (char *const *)argv);
            }
            _exit(127);
        }
        close(fds[1]);
        close(gfds[0]);
        if (pid < 0) {
            close(fds[0]);
            close(gfds[1]);
            continue;
        }
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        fcntl(gfds[1], F_SETFD, FD_CLOEXEC);
        procs[r].pid = pid;
        procs[r].fd = fds[0];
        procs[r].go = gfds[1];
    }
    bool released = false;

    double deadline = t0 + sc->deadline_s, sampled = 0;
    for (;;) {
        struct pollfd pfds[RG_MAX_RANKS];
        int np = 0, live = 0, leaving = 0;
        for (int r = lo; r < hi; r++) {
            bool running = procs[r].pid > 0 && !procs[r].exited && !procs[r].stopped;
            if (procs[r].fd >= 0)
                pfds[np++] = (struct pollfd){.fd = procs[r].fd, .events = POLLIN};
            /* A stopped rank waits for nobody: once only stopped ones are left, the run ends. */
            live += running;
            /* Its status pipe closed: it is exiting, and nothing left would wake the poll. */
            leaving += running && procs[r].fd < 0;
        }
        if (!live)
            break;
        double left = deadline - rg_now_s();
        if (left <= 0)
            break;
        int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
        if (leaving && ms > 2)
            ms = 2;
        double want = rg_now_s() + ms / 1000.0;
        if (poll(pfds, (nfds_t)np, ms) == 0)
            rg_slow_lag(&res->lag_s, want, rg_now_s());
        /* What the machine takes from them (launch/rg_slow_measure.c). */
        if (rg_now_s() >= sampled + 0.2) {
            rg_slow_sample(procs, res->rank, lo, hi);
            sampled = rg_now_s();
        }
        for (int r = lo; r < hi; r++) {
            drain(&res->rank[r], &procs[r], t0_ms);
            int st;
            if (procs[r].pid > 0 && !procs[r].exited && !procs[r].stopped &&
                waitpid(procs[r].pid, &st, WNOHANG | WUNTRACED) == procs[r].pid) {
                if (WIFSTOPPED(st)) {
                    procs[r].stopped = true;
                    procs[r].stop_t_s = rg_now_s() - t0;
                    continue;
                }
                procs[r].status = st;
                procs[r].exited = true;
                res->rank[r].left_t_s = rg_now_s() - t0;
                drain(&res->rank[r], &procs[r], t0_ms);
            }
        }
        if (!released)
            released = release_ranks(procs, lo, hi, false);
    }
    release_ranks(procs, lo, hi, true);
    /* Stopped ranks are ended first, so the deadline's backtraces are only the hung ones'. */
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &procs[r];
        if (p->pid > 0 && !p->exited && p->stopped) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &p->status, 0);
            p->exited = true;
            res->rank[r].left_t_s = p->stop_t_s;
            drain(&res->rank[r], p, t0_ms);
        }
    }
    rg_proc_stop_hung(procs, lo, hi, res->dir, true);
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &procs[r];
        rg_rank_result *k = &res->rank[r];
        char logp[1200], tail[400];
        snprintf(logp, sizeof(logp), "%s/rank%d.log", res->dir, r);
        if (p->pid > 0 && !p->exited) {
            p->exited = true;
            drain(k, p, t0_ms);
            p->hung = true; /* judged below, once the evidence says what its queues held */
        } else if (p->pid < 0) {
            rg_rank_find(k, RG_V_ERROR, 0, "could not start the rank");
        } else if (rg_proc_ended_early(p)) {
            /* judged below: the rank's own kill, stop or exit fault, or a crash */
        } else if (WIFSIGNALED(p->status)) {
            rg_log_tail(logp, tail, sizeof(tail));
            rg_rank_find(k, RG_V_CRASH, k->left_t_s,
                         "killed by signal %d (%s); backtrace in %s/rank%d.backtrace%s%s",
                         WTERMSIG(p->status), strsignal(WTERMSIG(p->status)), res->dir, r,
                         tail[0] ? "; last output: " : "", tail);
        } else if (WEXITSTATUS(p->status) != (p->said_error ? 3 : 0)) {
            /* After its verdict the worker only exits: a status there is a crash at exit (a
             * destructor, a sanitizer's report), which the verdict cannot have seen. */
            rg_log_tail(logp, tail, sizeof(tail));
            rg_rank_find(k, RG_V_CRASH, k->left_t_s, "exited with status %d after its verdict%s%s",
                         WEXITSTATUS(p->status), tail[0] ? "; last output: " : "", tail);
        }
        if (p->fd >= 0)
            close(p->fd);
        if (p->tl >= 0)
            close(p->tl);
        p->tl = -1;
    }
    res->seconds = rg_now_s() - t0;

    /* The shim's evidence, now that every rank has ended: what it saw, what fired and when. */
    for (int r = lo; r < hi; r++) {
        char evp[1200], err[512];
        snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", res->dir, r);
        if (rg_evidence_read(evp, &ev[r], err, sizeof(err)) != 0)
            rg_rank_find(&res->rank[r], RG_V_ERROR, -1, "%s", err);
        rg_slow_started(&res->rank[r], &procs[r], &ev[r], deadline);
        rg_slow_check_scale(&res->rank[r], sc, &ev[r]);
    }
    for (int r = lo; r < hi; r++)
        if (procs[r].pid > 0 && !procs[r].hung && rg_proc_ended_early(&procs[r]))
            rg_proc_judge_ended(&res->rank[r], &procs[r], sc, &ev[r], res->dir, r);
    rg_evidence_apply(res, sc, ev, lo, hi, t0_ms, whole ? RG_EV_RANK | RG_EV_CROSS : RG_EV_RANK);
    res->t0_mono_ms = t0_ms;
    gethostname(res->host, sizeof(res->host) - 1);

    /* A hang is explained by who left first, and by the work its queues still held. */
    for (int r = lo; r < hi; r++) {
        rg_rank_result *k = &res->rank[r];
        if (!procs[r].hung)
            continue;
        char peer[400], text[sizeof(k->detail)];
        first_to_leave(res, lo, hi, r, peer, sizeof(peer));
        rg_run_fmt(text, sizeof(text),
                   "still running after the %.0f s deadline, in %s since %.2f s%s%s%s; backtrace "
                   "in %s/rank%d.backtrace",
                   sc->deadline_s, k->where, k->step_t_s, peer, ev[r].queues[0] ? "; " : "",
                   ev[r].queues, res->dir, r);
        rg_rank_find(k, RG_V_DEADLOCK, sc->deadline_s, "%s", text);
    }
}

void rg_run_scenario(const struct run_opts *o, const struct sc_entry *e, rg_result *res)
{
    const rg_scenario *sc = &e->sc;
    char devfile[1200], coord[64], plan[1200];

    if (sc->exec.on) {
        rg_exec_scenario(sc, o->shim, o->wrap, o->nwrap, res);
        rg_judge(res);
        return;
    }
    rg_run_fmt(devfile, sizeof(devfile), "%s/devices.json", res->dir);
    int port = rg_free_port();
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", port);
    if (port < 0 || rg_devices_write(devfile, sc->ranks, sc->rails, o->devices) != 0 ||
        rg_proc_write_plan(res->dir, sc, plan, sizeof(plan)) != 0) {
        for (int r = 0; r < sc->ranks; r++) {
            res->rank[r] = (rg_rank_result){
                .t_s = -1, .step = -1, .left_t_s = -1, .start_s = -1, .cpu_wait_s = -1};
            snprintf(res->rank[r].where, sizeof(res->rank[r].where), "start");
            rg_rank_find(&res->rank[r], RG_V_ERROR, 0, "could not set up (port %d, %s, %s): %s",
                         port, devfile, plan, strerror(errno));
        }
    } else {
        rg_run_ranks(o, e, res, 0, sc->ranks, coord, devfile, plan, true);
    }
    rg_judge(res);
}
