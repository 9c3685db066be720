/* SPDX-License-Identifier: MIT */
/*
 * A launcher's job (exec: launcher, railguard exec --launcher): one command the runner starts
 * (mpirun, srun), which starts the scenario's ranks itself. The ranks are its children, not
 * the runner's: the runner cannot wait for them, so each is told apart by the rank its
 * launcher gave it (the shim takes it from OMPI_COMM_WORLD_RANK and the others, FI_RANK_VARS,
 * and writes rank R's evidence to rankR.events.jsonl by RG_FI_LOG's %r), followed through
 * /proc while it runs (ended, stopped), and its way of ending read from its shim's "exit"
 * event afterwards. A rank still running at the deadline takes the hang's path (its shim's
 * summary, gdb, SIGKILL) as any program does. What is left is plain data (rg_launched) for
 * judge/rg_judge_procs.c: nothing here decides a verdict.
 */
#include "fi_plan.h"
#include "launch/rg_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: the launcher's log (every rank's output comes through it), the shim with no
 * rank of its own, and none of the rank variables the runner itself was given (under a
 * launcher of its own, srun say): its processes must take the ranks their launcher gives. */
static void start_launcher(const rg_program_launch *pl)
{
    static const char *const vars[] = {FI_RANK_VARS};
    char log[1200], evp[1200];
    snprintf(log, sizeof(log), "%s/launcher.log", pl->dir);
    snprintf(evp, sizeof(evp), "%s/rank%%r.events.jsonl", pl->dir);
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), nfd = open("/dev/null", O_RDONLY);
    if (lfd < 0 || nfd < 0 || dup2(nfd, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0)
        _exit(126);
    close(lfd);
    close(nfd);
    setpgid(0, 0);
    for (int i = 0; i < pl->sc->nenv; i++)
        setenv(pl->sc->env[i].name, pl->sc->env[i].value, 1);
    rg_proc_shim_env(pl->shim, pl->planfile, evp, 0, true, pl->sc->time_scale);
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
    unsetenv("RG_SIZE");
    char *const *argv = pl->argv[0];
    if (!argv) {
        fprintf(stderr, "railguard exec: cannot start: %s\n", pl->argv_err[0]);
        _exit(127);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "railguard exec: cannot start '%s': %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* A process's state letter from /proc (R, S, D, T, t, Z, X), and its parent; 0 when gone. */
static char proc_state(long pid, long *ppid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "PID (COMM) S PPID ...": COMM may hold spaces and parentheses, so from the last ')'. */
    char *e = strrchr(buf, ')');
    if (!e || e[1] != ' ' || !e[2] || e[3] != ' ')
        return 0;
    if (ppid)
        *ppid = strtol(e + 4, NULL, 10);
    return e[2];
}

/* Whether pid is the launcher's descendant: a pid in an events file is only acted on (a
 * signal, gdb) while it is, so a stranger that took a dead rank's pid is never touched. */
static bool descends(long pid, long launcher)
{
    for (int d = 0; d < 16 && pid > 1; d++) {
        long pp = 0;
        if (!proc_state(pid, &pp))
            return false;
        if (pp == launcher)
            return true;
        pid = pp;
    }
    return false;
}

/* The pid of the first line of rank r's events (the first process with that rank to load the
 * shim), 0 while there is none. */
static long first_pid(const char *dir, int r)
{
    char evp[1200], buf[1024];
    snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", dir, r);
    int fd = open(evp, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    const char *p = strstr(buf, "\"pid\":");
    long pid = p ? strtol(p + 6, NULL, 10) : 0;
    return pid > 1 ? pid : 0;
}

/* Each rank's process found and followed: when it ended (gone, or a zombie its launcher has
 * not reaped yet) or stopped (its stop fault), from the scenario's start. */
static void follow(rg_launched *l, int ranks, const char *dir, long launcher)
{
    for (int r = 0; r < ranks; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        if (p->pid <= 0) {
            long pid = first_pid(dir, r);
            if (pid)
                p->pid = (pid_t)pid;
            continue;
        }
        if (p->exited || p->stopped)
            continue;
        char st = descends(p->pid, launcher) ? proc_state(p->pid, NULL) : 0;
        if (!st || st == 'Z' || st == 'X') {
            p->exited = true;
            l->rank[r].said.left_t_s = rg_now_s() - l->t0;
        } else if (st == 'T' || st == 't') {
            p->stopped = true;
            p->stop_t_s = rg_now_s() - l->t0;
        }
    }
}

/* Whether every rank has a process and each has ended or stopped, one at least stopped: a
 * stopped rank waits for nobody, and its launcher would wait for it forever. */
static bool only_stopped_left(const rg_launched *l, int ranks)
{
    int stopped = 0;
    for (int r = 0; r < ranks; r++) {
        const struct rg_proc *p = &l->rank[r].proc;
        if (p->pid <= 0 || (!p->exited && !p->stopped))
            return false;
        stopped += p->stopped;
    }
    return stopped > 0;
}

/* How each rank that ended by itself ended, from its shim's exit event: the status its
 * launcher's wait saw, and when. One without (a signal, or _exit) is marked job_unseen, its
 * status a SIGKILL's so that an own kill fault is found as under any runner. */
static void job_ends(rg_launched *l, int ranks)
{
    for (int r = 0; r < ranks; r++) {
        rg_launched_rank *lr = &l->rank[r];
        struct rg_proc *p = &lr->proc;
        if (p->pid <= 0 || p->hung || p->stopped)
            continue;
        const struct rg_ev_proc *e = NULL;
        for (int k = 0; k < lr->ev.nprocs && !e; k++)
            if (lr->ev.proc[k].pid == (long)p->pid)
                e = &lr->ev.proc[k];
        p->exited = true;
        if (e && e->exit_seen) {
            p->status = (e->exit_status & 0xff) << 8;
            if (e->exit_mono_ms >= 0)
                lr->said.left_t_s = e->exit_mono_ms / 1000.0 - l->t0;
        } else {
            p->status = SIGKILL;
            p->job_unseen = true;
        }
    }
}

void rg_launch_job(const rg_program_launch *pl, rg_launched *l)
{
    const rg_scenario *sc = pl->sc;
    char path[1200];
    l->lo = 0;
    l->hi = sc->ranks;
    l->lag_s = 0;
    l->job = true;
    l->job_extra = -1;
    /* A rerun into the same directory must not read old evidence; each rank's log is the
     * launcher's, which carries every rank's output. */
    for (int r = 0; r < RG_MAX_RANKS; r++) {
        snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", pl->dir, r);
        unlink(path);
        if (r >= sc->ranks)
            continue;
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", pl->dir, r);
        unlink(path);
        snprintf(path, sizeof(path), "%s/rank%d.log", pl->dir, r);
        unlink(path);
        if (symlink("launcher.log", path) != 0)
            fprintf(stderr, "railguard: %s: cannot link it to launcher.log: %s\n", path,
                    strerror(errno));
    }
    snprintf(path, sizeof(path), "%s/ranknone.events.jsonl", pl->dir);
    unlink(path);
    fflush(NULL);
    l->t0 = rg_now_s();
    struct rg_proc *lp = &l->launcher;
    *lp = (struct rg_proc){.pid = -1, .fd = -1, .go = -1, .tl = -1, .spawn_s = rg_now_s()};
    for (int r = 0; r < sc->ranks; r++) {
        rg_launched_rank *lr = &l->rank[r];
        lr->said =
            (rg_rank_result){.t_s = -1, .step = 0, .left_t_s = -1, .start_s = -1, .cpu_wait_s = -1};
        snprintf(lr->said.where, sizeof(lr->said.where), "%s", sc->name);
        lr->proc = (struct rg_proc){
            .pid = -1, .fd = -1, .go = -1, .tl = -1, .spawn_s = lp->spawn_s, .job = true};
    }
    pid_t pid = fork();
    if (pid == 0)
        start_launcher(pl);
    lp->pid = pid;
    double deadline = l->t0 + sc->deadline_s;
    for (unsigned n = 0; pid > 0; n++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            lp->exited = true;
            lp->status = st;
            lp->stop_t_s = rg_now_s() - l->t0; /* when it ended */
        }
        if (lp->exited || n % 10 == 0)
            follow(l, sc->ranks, pl->dir, pid);
        if (n % 10 == 0)
            rg_slow_sample(l);
        if (lp->exited || only_stopped_left(l, sc->ranks) || rg_now_s() >= deadline)
            break;
        double want = rg_now_s() + 0.02;
        usleep(20000);
        rg_slow_lag(&l->lag_s, want, rg_now_s());
    }
    /* A rank's last processes are gone once its launcher is: one still found (a daemon it
     * left) or still running at the deadline is a hang, stopped ones are ended. */
    for (int r = 0; r < sc->ranks; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        if (p->pid > 0 && p->stopped) {
            if (descends(p->pid, pid))
                kill(p->pid, SIGKILL);
            p->exited = true;
            l->rank[r].said.left_t_s = p->stop_t_s;
        }
        p->hung = p->pid > 0 && !p->exited && !p->stopped && descends(p->pid, pid);
        if (p->pid > 0 && !p->exited && !p->stopped && !p->hung)
            p->exited = true; /* gone between the last look and now */
    }
    /* The hang's path: summaries, backtraces, SIGKILL (a wait for a process not ours returns
     * at once). */
    rg_proc_stop_hung(l, 0, sc->ranks, pl->dir, false);
    if (pid > 0) {
        lp->hung = !lp->exited;
        kill(-pid, SIGKILL);
        if (!lp->exited && waitpid(pid, &lp->status, 0) == pid) {
            lp->exited = true;
            lp->stop_t_s = rg_now_s() - l->t0;
        }
    }
    l->seconds = rg_now_s() - l->t0;
    rg_launched_evidence(l, 0, sc->ranks, pl->dir, deadline);
    job_ends(l, sc->ranks);
    /* A process its launcher gave a rank past the scenario's: the job is not the one planned. */
    for (int r = sc->ranks; r < RG_MAX_RANKS && l->job_extra < 0; r++) {
        snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", pl->dir, r);
        if (access(path, F_OK) == 0)
            l->job_extra = r;
    }
}
