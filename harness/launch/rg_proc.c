/* SPDX-License-Identifier: MIT */
/*
 * The processes of a run, whatever they run (a worker of `railguard run`, a program under
 * `railguard exec`): the signals that ask a hung one for the shim's summary and a backtrace,
 * gdb when it gives none, how one that ended early is judged (its own kill, stop or exit
 * fault, or a crash), and the tail of its log for a finding.
 */
#include "launch/rg_launch.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* gdb needs ~20 s per process under emulation; all hung ranks get theirs at once. */
#define RG_BACKTRACE_S 60.0
/* How long the ranks get to answer the snapshot and backtrace signals themselves. */
#define RG_INPROC_WAIT_S 3.0

/* The signals a rank still running at the deadline is sent before it is killed: the shim
 * writes its summary, the worker its backtrace. Real-time ones, which no verbs stack uses. */
int rg_proc_snapshot_signal(void)
{
    return SIGRTMIN + 2;
}

int rg_proc_backtrace_signal(void)
{
    return SIGRTMIN + 3;
}

/* gdb in batch mode on one process, in the background: the fallback when the rank gave no
 * backtrace of its own (a stopped process, a handler replaced by the transport). */
static pid_t gdb_start(const char *dir, int rank, pid_t pid)
{
    char out[1200], pidstr[32];
    snprintf(out, sizeof(out), "%s/rank%d.backtrace", dir, rank);
    snprintf(pidstr, sizeof(pidstr), "%ld", (long)pid);
    pid_t g = fork();
    if (g == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execlp("gdb", "gdb", "-batch", "-nx", "-p", pidstr, "-ex", "thread apply all bt",
               (char *)NULL);
        _exit(127);
    }
    return g;
}

/*
 * Every rank still running at the deadline is asked, all at once, for the shim's summary and
 * its own backtrace (`inproc`: a worker, which writes one; a program under exec is asked for
 * none, since a real-time signal it does not handle would end it); those that gave no
 * backtrace within a few seconds get gdb, all in parallel. Then they are killed. A hang's report so
 * comes seconds after the deadline, however many ranks hang.
 */
void rg_proc_stop_hung(rg_launched *l, int lo, int hi, const char *dir, bool inproc)
{
    char path[1200], evp[1200], err[256];
    static rg_evidence ev;
    bool asked[RG_MAX_RANKS] = {false}, unloaded[RG_MAX_RANKS] = {false};
    int hung = 0;
    for (int r = lo; r < hi; r++) {
        if (l->rank[r].proc.pid <= 0 || l->rank[r].proc.exited)
            continue;
        hung++;
        if (inproc)
            kill(l->rank[r].proc.pid, rg_proc_backtrace_signal());
        /* Only a shim that said it handles the snapshot signal is sent it: to any other
         * process a real-time signal is fatal, and the backtrace would be lost with it. */
        snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", dir, r);
        bool read = rg_evidence_read(evp, &ev, err, sizeof(err)) == 0;
        /* No load event: the shim (preloaded into every rank) never ran in it, so the rank's
         * program had not started -- held by its wrapper, or a machine too slow to start it. */
        unloaded[r] = !read || !ev.nprocs || ev.proc[0].load_mono_ms < 0;
        if (read && ev.snapshot_signal == rg_proc_snapshot_signal()) {
            kill(l->rank[r].proc.pid, rg_proc_snapshot_signal());
            asked[r] = true;
        }
        /* A rank is a process tree: each other process of it that said it handles the signal
         * and is still in the rank's own process group (a program under exec leads one) is
         * asked too, so a hung child's queues are in the evidence. The group check keeps a
         * pid reused by a stranger out of reach. */
        for (int k = 1; asked[r] && k < ev.nprocs && k < RG_EV_PROCS - 1; k++)
            if (ev.proc[k].snapshot_signal == rg_proc_snapshot_signal() &&
                getpgid((pid_t)ev.proc[k].pid) == l->rank[r].proc.pid)
                kill((pid_t)ev.proc[k].pid, rg_proc_snapshot_signal());
    }
    if (!hung)
        return;
    double until = rg_now_s() + RG_INPROC_WAIT_S;
    for (bool all = false; !all && rg_now_s() < until;) {
        usleep(50000);
        all = true;
        for (int r = lo; r < hi; r++) {
            if (l->rank[r].proc.pid <= 0 || l->rank[r].proc.exited)
                continue;
            snprintf(path, sizeof(path), "%s/rank%d.backtrace", dir, r);
            snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", dir, r);
            all = all && (!inproc || rg_file_has(path, NULL)) &&
                  (!asked[r] || rg_file_has(evp, "\"why\":\"snapshot\""));
        }
    }
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        p->gdb = -1;
        if (p->pid <= 0 || p->exited)
            continue;
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", dir, r);
        if (rg_file_has(path, NULL))
            continue;
        /* gdb would show the wrapper or the loader, not the program, and costs 10-20 s a
         * process under emulation: the second attempt a slow machine needs would wait for it. */
        FILE *f = unloaded[r] ? fopen(path, "a") : NULL;
        if (f) {
            fprintf(f,
                    "no backtrace: rank %d's program had not started (the shim never loaded "
                    "in it) when it was stopped\n",
                    r);
            fclose(f);
        } else {
            p->gdb = gdb_start(dir, r, p->pid);
        }
    }
    until = rg_now_s() + RG_BACKTRACE_S;
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        while (p->gdb > 0) {
            int st;
            if (waitpid(p->gdb, &st, WNOHANG) == p->gdb)
                break;
            if (rg_now_s() > until) {
                kill(p->gdb, SIGKILL);
                waitpid(p->gdb, &st, 0);
                break;
            }
            usleep(50000);
        }
    }
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &l->rank[r].proc;
        if (p->pid <= 0 || p->exited)
            continue;
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &p->status, 0);
        /* Named once the rank is gone: addr2line reads the objects, not the process. */
        char why[700];
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", dir, r);
        if (rg_bt_symbolize(path, why, sizeof(why)) != 0)
            fprintf(stderr, "railguard: rank %d's backtrace (%s): not every frame named: %s\n", r,
                    path, why[0] ? why : "cannot append to it");
    }
}

/* The plan every process reads (RG_FI_PLAN_FILE): the scenario's rules one a line, as checked,
 * and after them the sanitizer's and the trace's (rule numbers in the events stay the
 * scenario's). */
int rg_proc_write_plan(const char *dir, const rg_scenario *sc, char *path, size_t len)
{
    if ((size_t)snprintf(path, len, "%s/plan", dir) >= len)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "%s\n%s%s%s", sc->faults[0] ? sc->faults : "count",
            sc->ownership ? "ownership\n" : "", sc->trace ? "trace\n" : "",
            sc->uc_as_rc ? "uc_as_rc\n" : "");
    return fclose(f);
}

void rg_proc_shim_env(const char *shim, const char *planfile, const char *events, int rank,
                      bool keep_preload, int time_scale)
{
    char buf[8192], num[16];
    const char *old = getenv("LD_PRELOAD");
    if (keep_preload && old && *old &&
        (size_t)snprintf(buf, sizeof(buf), "%s:%s", shim, old) < sizeof(buf))
        setenv("LD_PRELOAD", buf, 1);
    else
        setenv("LD_PRELOAD", shim, 1);
    /* The plan as the runner checked it, from one file: no faults still counts, and the events
     * then say what each process did. */
    unsetenv("RG_FI_PLAN");
    setenv("RG_FI_PLAN_FILE", planfile, 1);
    setenv("RG_FI_LOG", events, 1);
    snprintf(num, sizeof(num), "%d", rank);
    setenv("RG_FI_RANK", num, 1);
    snprintf(num, sizeof(num), "%d", rg_proc_snapshot_signal());
    setenv("RG_FI_SNAPSHOT_SIGNAL", num, 1);
    /* Always said, so a scale in the caller's environment never reaches a rank by accident. */
    snprintf(num, sizeof(num), "%d", time_scale > 1 ? time_scale : 1);
    setenv("RG_FI_TIME_SCALE", num, 1);
}

void rg_launched_evidence(rg_launched *l, int lo, int hi, const char *dir, double ended_s)
{
    for (int r = lo; r < hi; r++) {
        rg_launched_rank *lr = &l->rank[r];
        lr->ev_err[0] = '\0';
        /* The shim's evidence, and the runner's own of the wire faults it did for the rank. */
        if (rg_evidence_read_rank(dir, r, &lr->ev, lr->ev_err, sizeof(lr->ev_err)) != 0 &&
            !lr->ev_err[0])
            snprintf(lr->ev_err, sizeof(lr->ev_err), "%.400s: rank %d's evidence cannot be read",
                     dir, r);
        rg_slow_started(&lr->said, &lr->proc, &lr->ev, ended_s);
    }
    l->host[0] = '\0';
    gethostname(l->host, sizeof(l->host) - 1);
}

bool rg_proc_end_stopped(struct rg_proc *p, rg_rank_result *said)
{
    if (p->pid <= 0 || p->exited || !p->stopped)
        return false;
    kill(p->pid, SIGKILL);
    waitpid(p->pid, &p->status, 0);
    p->exited = true;
    said->left_t_s = p->stop_t_s;
    return true;
}

void rg_launched_phases(const rg_launched *l, double judge_s, rg_phases *p)
{
    rg_phases_unknown(p);
    if (l->ended_s < 0 || l->stopped_s < l->ended_s || l->read_s < l->stopped_s)
        return; /* a launch that does not mark them (a launcher's job) */
    /* Programs say no "ready": their start-up is each one's fork to its shim's load, the
     * longest of them (rg_slow_started), not known when one never loaded. */
    double ready = l->ready_s >= 0 ? l->ready_s : l->programs ? 0 : l->ended_s;
    if (l->programs) {
        double most = 0;
        for (int r = l->lo; r < l->hi && most >= 0; r++)
            most = l->rank[r].said.start_s < 0      ? -1
                   : l->rank[r].said.start_s > most ? l->rank[r].said.start_s
                                                    : most;
        p->s[RG_PH_START] = most;
        ready = most > 0 && most < l->ended_s ? most : 0;
    } else {
        p->s[RG_PH_START] = ready;
    }
    double hang = 0;
    bool hung = false;
    for (int r = l->lo; r < l->hi; r++)
        hung |= l->rank[r].proc.hung;
    if (hung)
        hang = l->hang.judged       ? l->hang.quiet_s
               : l->hang_since >= 0 ? l->ended_s - l->hang_since
                                    : -1;
    if (hang > l->ended_s - ready)
        hang = l->ended_s - ready; /* quiet since before the go: the wait counts from it */
    p->s[RG_PH_HANG] = hang;
    p->s[RG_PH_WORK] = l->ended_s - ready - (hang > 0 ? hang : 0);
    p->s[RG_PH_STOP] = l->stopped_s - l->ended_s;
    p->s[RG_PH_JUDGE] = l->read_s - l->stopped_s + (judge_s > 0 ? judge_s : 0);
    p->s[RG_PH_AGAIN] = 0;
}
