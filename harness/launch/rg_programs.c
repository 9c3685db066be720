/* SPDX-License-Identifier: MIT */
/*
 * A scenario's ranks as programs, for `railguard exec` and a scenario's exec: (any verbs
 * program, unmodified): each forked under the shim in a process group of its own, with its rank
 * and size in the environment; a client started once its server is ready; watched until none
 * but services runs or the deadline passes; services stopped (the shim's summary, SIGTERM, a
 * grace, then the hang's path); hung ones summarised, backtraced by gdb and killed with their
 * groups; the evidence read. What is left is plain data (rg_launched) for
 * judge/rg_judge_procs.c: nothing here decides a verdict.
 */
#include "launch/rg_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: the process's log, the shim, its rank; then the command. Never returns. */
static void start_child(const rg_program_launch *pl, int rank)
{
    char log[1200], evp[1200], bt[1200], num[16];
    snprintf(log, sizeof(log), "%s/rank%d.log", pl->dir, rank);
    snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", pl->dir, rank);
    snprintf(bt, sizeof(bt), "%s/rank%d.backtrace", pl->dir, rank);
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), nfd = open("/dev/null", O_RDONLY);
    if (lfd < 0 || nfd < 0 || dup2(nfd, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0)
        _exit(126);
    close(lfd);
    close(nfd);
    unlink(evp); /* a rerun into the same directory must not read old evidence */
    unlink(bt);
    /* Its own process group, so what it forks goes with it at the end. */
    setpgid(0, 0);
    for (int i = 0; i < pl->sc->nenv; i++)
        setenv(pl->sc->env[i].name, pl->sc->env[i].value, 1);
    rg_proc_shim_env(pl->shim, pl->planfile, evp, rank, true, pl->sc->time_scale);
    snprintf(num, sizeof(num), "%d", rank);
    setenv("RG_RANK", num, 1);
    snprintf(num, sizeof(num), "%d", pl->sc->ranks);
    setenv("RG_SIZE", num, 1);
    char *const *argv = pl->argv[rank];
    if (!argv) {
        fprintf(stderr, "railguard exec: cannot start: %s\n", pl->argv_err[rank]);
        _exit(127);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "railguard exec: cannot start '%s': %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Whether p ended (or stopped) since last looked at: its status recorded. */
static bool reaped(struct rg_proc *p, rg_rank_result *k, double t0)
{
    int st;
    if (p->pid <= 0 || p->exited || p->stopped ||
        waitpid(p->pid, &st, WNOHANG | WUNTRACED) != p->pid)
        return false;
    if (WIFSTOPPED(st)) {
        p->stopped = true;
        p->stop_t_s = rg_now_s() - t0;
    } else {
        p->status = st;
        p->exited = true;
        k->left_t_s = rg_now_s() - t0;
    }
    return true;
}

/* The processes' ends, as they come, until none but services is running (`serving`: bit r,
 * rank r serves until stopped), or the deadline passes. */
static void watch(rg_launched *l, int ranks, uint64_t serving, double deadline)
{
    for (unsigned n = 0;; n++) {
        int live = 0;
        for (int r = 0; r < ranks; r++) {
            struct rg_proc *p = &l->rank[r].proc;
            reaped(p, &l->rank[r].said, l->t0);
            live += p->pid > 0 && !p->exited && !p->stopped && !(serving & (UINT64_C(1) << r));
        }
        /* A stopped process waits for nobody: once only stopped ones are left, it is over. */
        if (!live || rg_now_s() >= deadline)
            return;
        /* What the machine takes from them, every 0.2 s (launch/rg_slow_measure.c). */
        if (n % 10 == 0)
            rg_slow_sample(l);
        double want = rg_now_s() + 0.02;
        usleep(20000);
        rg_slow_lag(&l->lag_s, want, rg_now_s());
    }
}

/*
 * The client starts once the server is ready to take it: listening on {port} (seen in
 * /proc/net, never by connecting), or --client-after seconds after it started, or gone. At
 * most half the deadline: a server that never listens is judged, and its client with it.
 */
static void await_server(const rg_program_launch *pl, rg_launched *l)
{
    struct rg_proc *server = &l->rank[0].proc;
    double after = pl->client_after;
    bool by_port = after < 0;
    double until = l->t0 + (by_port ? pl->sc->deadline_s / 2 : after);
    while (rg_now_s() < until && !reaped(server, &l->rank[0].said, l->t0) && !server->exited &&
           !server->stopped && !(by_port && rg_port_listening(pl->port)))
        usleep(20000);
}

/*
 * Services still running once every other rank has ended. First the shim's summary (a process
 * that SIGTERM ends by its default action never runs the shim's exit summary, and what it did
 * would be lost), then SIGTERM to its process group; one still running after the grace is left
 * to the hang's path (summary, backtrace, SIGKILL) and judged DEADLOCK. Every wait is bounded.
 */
static void stop_services(rg_launched *l, const rg_scenario *sc, const char *dir)
{
    static rg_evidence ev;
    char evp[1200], err[256];
    bool asked[RG_MAX_RANKS] = {false};
    int n = 0;
    for (int r = 0; r < sc->ranks; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        if (!(sc->exec.services & (UINT64_C(1) << r)) || p->pid <= 0 || p->exited || p->stopped)
            continue;
        n++;
        snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", dir, r);
        if (rg_evidence_read(evp, &ev, err, sizeof(err)) != 0 ||
            ev.snapshot_signal != rg_proc_snapshot_signal())
            continue;
        for (int k = 0; k < ev.nprocs && k < RG_EV_PROCS - 1; k++)
            if (ev.proc[k].snapshot_signal == rg_proc_snapshot_signal() &&
                (k == 0 || getpgid((pid_t)ev.proc[k].pid) == p->pid))
                kill(k == 0 ? p->pid : (pid_t)ev.proc[k].pid, rg_proc_snapshot_signal());
        asked[r] = true;
    }
    if (!n)
        return;
    double until = rg_now_s() + 2.0;
    for (int r = 0; r < sc->ranks; r++) {
        snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", dir, r);
        while (asked[r] && rg_now_s() < until && !rg_file_has(evp, "\"why\":\"snapshot\""))
            usleep(20000);
    }
    for (int r = 0; r < sc->ranks; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        if (!(sc->exec.services & (UINT64_C(1) << r)) || p->pid <= 0 || p->exited || p->stopped)
            continue;
        kill(-p->pid, SIGTERM);
        p->termed = true;
    }
    until = rg_now_s() + sc->exec.service_grace;
    for (bool left = true; left && rg_now_s() < until;) {
        left = false;
        for (int r = 0; r < sc->ranks; r++) {
            reaped(&l->rank[r].proc, &l->rank[r].said, l->t0);
            left |= l->rank[r].proc.termed && !l->rank[r].proc.exited && !l->rank[r].proc.stopped;
        }
        if (left)
            usleep(20000);
    }
}

void rg_launch_programs(const rg_program_launch *pl, rg_launched *l)
{
    const rg_scenario *sc = pl->sc;
    /* The phases' marks: none yet (a launcher's job sets none, and its phases are not known). */
    l->ready_s = l->ended_s = l->stopped_s = l->read_s = l->hang_since = -1;
    l->programs = true;
    memset(&l->hang, 0, sizeof(l->hang));
    if (pl->launcher) {
        rg_launch_job(pl, l);
        return;
    }
    l->lo = 0;
    l->hi = sc->ranks;
    l->lag_s = 0;
    l->job = false;
    l->t0 = rg_now_s();
    fflush(NULL);
    for (int r = 0; r < sc->ranks; r++) {
        rg_launched_rank *lr = &l->rank[r];
        lr->said =
            (rg_rank_result){.t_s = -1, .step = 0, .left_t_s = -1, .start_s = -1, .cpu_wait_s = -1};
        lr->proc = (struct rg_proc){.pid = -1, .fd = -1, .go = -1, .tl = -1};
        if (r == 1 && pl->pair)
            await_server(pl, l);
        snprintf(lr->said.where, sizeof(lr->said.where), "%s",
                 !pl->pair ? sc->name
                 : r       ? "client"
                           : "server");
        lr->proc.spawn_s = rg_now_s();
        pid_t pid = fork();
        if (pid == 0)
            start_child(pl, r);
        lr->proc.pid = pid;
    }
    double deadline = l->t0 + sc->deadline_s;
    watch(l, sc->ranks, sc->exec.services, deadline);
    l->ended_s = rg_now_s() - l->t0;
    if (rg_now_s() < deadline)
        stop_services(l, sc, pl->dir);
    for (int r = 0; r < sc->ranks; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        rg_proc_end_stopped(p, &l->rank[r].said);
        p->hung = p->pid > 0 && !p->exited;
    }
    rg_proc_stop_hung(l, 0, sc->ranks, pl->dir, false);
    for (int r = 0; r < sc->ranks; r++)
        if (l->rank[r].proc.pid > 0)
            kill(-l->rank[r].proc.pid, SIGKILL); /* what it left running in its group */
    l->seconds = rg_now_s() - l->t0;
    l->stopped_s = l->seconds;
    rg_launched_evidence(l, 0, sc->ranks, pl->dir, deadline);
    l->read_s = rg_now_s() - l->t0;
}
