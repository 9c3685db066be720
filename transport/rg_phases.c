/* SPDX-License-Identifier: MIT */
/*
 * RG_PHASES=1: where an all_reduce's time goes (rg_comm.h). A measurement tool for the
 * benchmark (ci/bench's phases part, docs/bench.md), not a mode anyone runs in production: every
 * phase boundary reads the clock, and in a TCG guest, where the TSC is not trusted, a read is
 * a system call. So the cost of one read is measured at create and said beside the figures,
 * with how many reads were made, and the reader can weigh them.
 */
#include "rg_comm.h"

#include <stdio.h>
#include <time.h>

uint64_t rg__ph_clock(struct rg_comm *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    c->ph.reads++;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rg__ph_init(struct rg_comm *c)
{
    if (!c->phases)
        return;
    enum { READS = 1000 };
    uint64_t t0 = rg__ph_clock(c);
    for (int i = 0; i < READS; i++)
        (void)rg__ph_clock(c);
    c->ph.clock_ns = (rg__ph_clock(c) - t0) / (READS + 1);
    c->ph.reads = 0;
}

static const char *const ph_names[RG_PH_N] = {
    [RG_PH_COPY] = "copy",
    [RG_PH_SLOT_IN] = "slot_in",
    [RG_PH_SLOT_OUT] = "slot_out",
    [RG_PH_REDUCE] = "reduce",
    [RG_PH_POST] = "post",
    [RG_PH_POLL] = "poll",
    [RG_PH_WAIT_DATA] = "wait_data",
    [RG_PH_WAIT_CREDIT] = "wait_credit",
    [RG_PH_WAIT_SENDS] = "wait_sends",
    [RG_PH_WAIT_OTHER] = "wait_other",
};

/*
 * One line, words KEY=VALUE after the prefix, nanoseconds a call (rounded to whole ns):
 * "railguard phases: rank=0 calls=245 total=1234 copy=... other=... reads=... clock=..."
 * other is the call's time no phase measured (the plan, the loop's own work, malloc).
 */
void rg__ph_report(const struct rg_comm *c)
{
    if (!c->phases || !c->ph.calls)
        return;
    char line[512];
    size_t o = 0;
    uint64_t n = c->ph.calls, sum = 0;
    int w = snprintf(line, sizeof(line), "railguard phases: rank=%d calls=%llu total=%llu", c->rank,
                     (unsigned long long)n, (unsigned long long)(c->ph.total_ns / n));
    o = w > 0 ? (size_t)w : 0;
    for (int p = 0; p < RG_PH_N && o < sizeof(line); p++) {
        sum += c->ph.ns[p];
        w = snprintf(line + o, sizeof(line) - o, " %s=%llu", ph_names[p],
                     (unsigned long long)(c->ph.ns[p] / n));
        o += w > 0 ? (size_t)w : 0;
    }
    /* Waits measured by the progress loop can end after the call's own clock stopped only
     * by a read's cost; other is never below 0. */
    uint64_t other = c->ph.total_ns > sum ? c->ph.total_ns - sum : 0;
    if (o < sizeof(line))
        snprintf(line + o, sizeof(line) - o, " other=%llu reads=%llu clock=%llu",
                 (unsigned long long)(other / n), (unsigned long long)(c->ph.reads / n),
                 (unsigned long long)c->ph.clock_ns);
    fprintf(stderr, "%s\n", line);
}
