/* SPDX-License-Identifier: MIT */
/*
 * `railguard run --fork-server` (rg_run.h): ranks forked by fork servers (launch/rg_forksrv.c)
 * instead of exec'd, for the sweep's batches of one program. A forked rank is orphaned to the
 * nearest child subreaper above its server, which must be the process that waits for it: so
 * with -j 1 this process runs every scenario itself, and with -j N it starts N slots, each a
 * child subreaper with fork servers of its own, each running the scenarios it is handed one at
 * a time while this process hands them out (an exclusive resource never twice at once) and
 * reads each result as its slot reports it done. Every point is still its own processes: a
 * slot shares its servers across scenarios, never its ranks.
 */
#include "rg_run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Any rank a server handed over and a scenario left behind, after the servers stop. */
static void servers_down(void)
{
    rg_launch_servers_stop();
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

static int subreaper(void)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        fprintf(stderr, "railguard run: --fork-server: cannot become a child subreaper: %s\n",
                strerror(errno));
        return -1;
    }
    return 0;
}

struct slot {
    pid_t pid;
    int to, from; /* scenario indexes to it, and back when done */
    int running;  /* the scenario it runs, -1 idle */
};

/* A slot's life: a subreaper running the scenarios it reads, each written back when done. */
static void slot_main(const struct run_opts *o, const struct sc_entry *e, int to, int from)
{
    int idx;
    if (subreaper() != 0)
        _exit(1);
    while (read(to, &idx, sizeof(idx)) == (ssize_t)sizeof(idx) && idx >= 0) {
        rg_run_scenario_once(o, &e[idx], idx);
        if (write(from, &idx, sizeof(idx)) != (ssize_t)sizeof(idx))
            break;
    }
    servers_down();
    _exit(0);
}

static int slot_start(struct slot *s, const struct run_opts *o, const struct sc_entry *e)
{
    int to[2], from[2];
    if (pipe(to) != 0)
        return -1;
    if (pipe(from) != 0) {
        close(to[0]);
        close(to[1]);
        return -1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        return -1;
    }
    if (pid == 0) {
        close(to[1]);
        close(from[0]);
        slot_main(o, e, to[0], from[1]);
    }
    close(to[0]);
    close(from[1]);
    *s = (struct slot){.pid = pid, .to = to[1], .from = from[0], .running = -1};
    return 0;
}

static void slot_close(struct slot *s)
{
    close(s->to);
    close(s->from);
    s->to = s->from = -1;
}

/* A slot that died (its pipe broken or closed) reaped and started afresh; pid -1 when it
 * cannot be. */
static void slot_replace(struct slot *s, const struct run_opts *o, const struct sc_entry *e)
{
    waitpid(s->pid, NULL, 0);
    slot_close(s);
    if (slot_start(s, o, e) != 0)
        s->pid = -1;
}

/* -j N: the pool. 0, or -1 after one line. */
static int run_pool(const struct run_opts *o, struct sc_entry *e, int n, rg_result *results,
                    bool *started)
{
    struct slot s[64];
    int nslots = o->jobs < 64 ? o->jobs : 64, done = 0, rc = 0;
    /* A slot that dies mid-scenario has its pipe read as closed: not a signal to us. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    for (int j = 0; j < nslots; j++)
        if (slot_start(&s[j], o, e) != 0) {
            fprintf(stderr, "railguard run: --fork-server -j: cannot start slot %d: %s\n", j + 1,
                    strerror(errno));
            nslots = j;
            rc = -1;
            goto out;
        }
    while (done < n) {
        int running[64], inflight = 0;
        for (int j = 0; j < nslots; j++)
            if (s[j].running >= 0)
                running[inflight++] = s[j].running;
        for (int j = 0; j < nslots; j++) {
            int pick;
            if (s[j].running >= 0 || s[j].pid < 0 ||
                (pick = rg_run_next_startable(e, n, started, running, inflight)) < 0)
                continue;
            if (write(s[j].to, &pick, sizeof(pick)) != (ssize_t)sizeof(pick)) {
                slot_replace(&s[j], o, e); /* died idle: its scenario goes to the next slot */
                continue;
            }
            started[pick] = true;
            s[j].running = pick;
            running[inflight++] = pick;
        }
        if (!inflight) { /* nothing running and nothing started: no slot left to wait for */
            fprintf(stderr, "railguard run: --fork-server -j: no slot could take a scenario\n");
            rc = -1;
            break;
        }
        struct pollfd pf[64];
        for (int j = 0; j < nslots; j++)
            pf[j] = (struct pollfd){.fd = s[j].running >= 0 ? s[j].from : -1, .events = POLLIN};
        if (poll(pf, (nfds_t)nslots, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        for (int j = 0; j < nslots; j++) {
            if (!pf[j].revents)
                continue;
            int idx = -1, got = (int)read(s[j].from, &idx, sizeof(idx));
            int was = s[j].running;
            s[j].running = -1;
            if (got != (int)sizeof(idx) || idx != was) {
                /* The slot died with a scenario: its result says so (none saved); a new slot
                 * takes its place. */
                slot_replace(&s[j], o, e);
            }
            rg_run_take_result(o, &e[was], was, &results[was]);
            done++;
        }
        bool any = false;
        for (int j = 0; j < nslots; j++)
            any |= s[j].pid > 0;
        if (!any) {
            fprintf(stderr, "railguard run: --fork-server -j: every slot died\n");
            rc = -1;
            break;
        }
    }
out:
    for (int j = 0; j < nslots; j++) {
        if (s[j].pid < 0)
            continue;
        int stop = -1;
        (void)!write(s[j].to, &stop, sizeof(stop));
        slot_close(&s[j]);
        waitpid(s[j].pid, NULL, 0);
    }
    sigaction(SIGPIPE, &old, NULL);
    return rc;
}

int rg_run_served(const struct run_opts *o, struct sc_entry *e, int n, rg_result *results,
                  bool *started)
{
    if (o->jobs > 1)
        return run_pool(o, e, n, results, started);
    if (subreaper() != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        rg_run_scenario_once(o, &e[i], i);
        rg_run_take_result(o, &e[i], i, &results[i]);
    }
    servers_down();
    return 0;
}
