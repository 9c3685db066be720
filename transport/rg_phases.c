/* SPDX-License-Identifier: MIT */
/*
 * RG_PHASES=1: where an all_reduce's time goes (rg_comm.h). A measurement tool for the
 * benchmark (ci/bench's phases part, docs/bench.md), not a mode anyone runs in production:
 * every phase edge reads a clock. On x86 that is the TSC (rdtsc: tens of ns, where
 * clock_gettime in a TCG guest, which does not trust the TSC, is a system call of 1.5-1.9 us:
 * 4,000 of them in a 1 MiB call made it half as slow again); its ticks become ns by the ratio
 * of both clocks over the communicator's life. The cost of one read is measured at create and
 * said beside the figures with how many reads a call made, so the reader can weigh them.
 */
#include "rg_comm.h"

#include <stdio.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define RG_PH_TSC 1
#endif

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rg__ph_clock(struct rg_comm *c)
{
    c->ph.reads++;
#ifdef RG_PH_TSC
    return __rdtsc();
#else
    return mono_ns();
#endif
}

void rg__ph_init(struct rg_comm *c)
{
    if (!c->phases)
        return;
    enum { READS = 1000 };
    c->ph.mono0 = mono_ns();
    c->ph.tick0 = rg__ph_clock(c);
    uint64_t t0 = mono_ns();
    for (int i = 0; i < READS; i++)
        (void)rg__ph_clock(c);
    c->ph.clock_ns = (mono_ns() - t0) / READS;
    c->ph.reads = 0;
}

/* Ticks to ns: 1 where the clock is CLOCK_MONOTONIC itself. */
static double ns_per_tick(const struct rg_comm *c)
{
#ifdef RG_PH_TSC
    uint64_t ticks = __rdtsc() - c->ph.tick0, ns = mono_ns() - c->ph.mono0;
    return ticks ? (double)ns / (double)ticks : 0;
#else
    (void)c;
    return 1;
#endif
}

static const char *const ph_names[RG_PH_N] = {
    [RG_PH_COPY] = "copy",
    [RG_PH_REG] = "reg",
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
 * One line, words KEY=VALUE after the prefix, nanoseconds a call (rounded down to whole ns):
 * "railguard phases: rank=0 calls=245 total=1234 copy=... other=... reads=... clock=..."
 * other is the call's time no phase measured (the plan, the loop's own work, malloc); reads
 * is clock reads a call, clock what one costs (ns).
 */
void rg__ph_report(const struct rg_comm *c)
{
    if (!c->phases || !c->ph.calls)
        return;
    char line[512];
    size_t o = 0;
    uint64_t n = c->ph.calls, sum = 0;
    double k = ns_per_tick(c) / (double)n; /* ticks summed over the calls -> ns a call */
    int w = snprintf(line, sizeof(line), "railguard phases: rank=%d calls=%llu total=%llu", c->rank,
                     (unsigned long long)n, (unsigned long long)((double)c->ph.total * k));
    o = w > 0 ? (size_t)w : 0;
    for (int p = 0; p < RG_PH_N && o < sizeof(line); p++) {
        sum += c->ph.ns[p];
        w = snprintf(line + o, sizeof(line) - o, " %s=%llu", ph_names[p],
                     (unsigned long long)((double)c->ph.ns[p] * k));
        o += w > 0 ? (size_t)w : 0;
    }
    /* The phases are disjoint parts of the calls: other is never below 0. */
    uint64_t other = c->ph.total > sum ? c->ph.total - sum : 0;
    if (o < sizeof(line))
        snprintf(line + o, sizeof(line) - o, " other=%llu reads=%llu clock=%llu",
                 (unsigned long long)((double)other * k), (unsigned long long)(c->ph.reads / n),
                 (unsigned long long)c->ph.clock_ns);
    fprintf(stderr, "%s\n", line);
}
