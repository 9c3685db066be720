/* SPDX-License-Identifier: MIT */
/*
 * What the machine takes from a run, measured while it runs (judge/rg_slow.c weighs it): a
 * rank's start-up, from its fork to its shim's load event; the time its threads were runnable
 * but waiting for a CPU (each thread's schedstat in /proc); and how late the runner's own timed
 * waits woke up (a machine that stalls whole).
 */
#include "launch/rg_launch.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

double rg_slow_cpu_wait(long pid, double *on_cpu_s)
{
    if (on_cpu_s)
        *on_cpu_s = -1;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    unsigned long long sum = 0, ran = 0;
    bool any = false;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char p[128];
        snprintf(p, sizeof(p), "/proc/%ld/task/%.32s/schedstat", pid, de->d_name);
        FILE *f = fopen(p, "r");
        unsigned long long run, wait;
        /* "on-cpu ns, waiting-on-a-runqueue ns, timeslices" */
        if (f && fscanf(f, "%llu %llu", &run, &wait) == 2) {
            sum += wait;
            ran += run;
            any = true;
        }
        if (f)
            fclose(f);
    }
    closedir(d);
    if (any && on_cpu_s)
        *on_cpu_s = (double)ran / 1e9;
    return any ? (double)sum / 1e9 : -1;
}

void rg_slow_lag(double *lag_s, double want_s, double now_s)
{
    if (now_s - want_s > *lag_s)
        *lag_s = now_s - want_s;
}

void rg_slow_sample(rg_launched *l)
{
    for (int r = l->lo; r < l->hi; r++) {
        const struct rg_proc *p = &l->rank[r].proc;
        if (p->pid <= 0 || p->exited)
            continue;
        double w = rg_slow_cpu_wait((long)p->pid, &l->rank[r].cpu_s);
        if (w > l->rank[r].said.cpu_wait_s)
            l->rank[r].said.cpu_wait_s = w;
    }
}

void rg_slow_started(rg_rank_result *k, const struct rg_proc *p, const rg_evidence *ev,
                     double ended_s)
{
    if (p->pid <= 0 || p->spawn_s <= 0)
        return;
    double s;
    if (ev->nprocs && ev->proc[0].load_mono_ms >= 0)
        s = ev->proc[0].load_mono_ms / 1000.0 - p->spawn_s;
    else if (p->hung && ended_s > p->spawn_s)
        s = ended_s - p->spawn_s, k->start_unseen = true; /* not started when the runner gave up */
    else
        return;
    k->start_s = s > 0 ? s : 0;
}
