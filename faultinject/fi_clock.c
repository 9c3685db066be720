/* SPDX-License-Identifier: MIT */
/*
 * The shim's clock and rank: when an event happened (CLOCK_MONOTONIC, and ms since load) and
 * which rank wrote it. Apart from the interposer (fi_shim.c) so that the evidence's writer
 * (fi_event.c), which the interposer calls, calls nothing back in it.
 */
#include "fi_shim.h"
#include "rg_parse.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t g_t0_ns;
_Atomic int g_rank = -1;
char g_rank_err[160];

uint64_t fi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double fi_elapsed_ms(void)
{
    return (double)(fi_now_ns() - g_t0_ns) / 1e6;
}

int fi_rank(void)
{
    return atomic_load_explicit(&g_rank, memory_order_relaxed);
}

/* The first rank variable that is set, as launchers and JACCL name it. */
void fi_read_rank(void)
{
    static const char *const names[] = {FI_RANK_VARS};
    int rank = -1;
    g_rank_err[0] = '\0';
    /* The first one set decides: a bad value is an error (fatal under a plan, whose rank=
     * filters it would silently mis-aim), never a reason to read the next name. */
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *v = getenv(names[i]);
        int64_t r;
        if (!v || !*v)
            continue;
        if (rg_parse_int(v, 0, 999999, &r) == 0) {
            rank = (int)r;
        } else {
            char shown[72];
            snprintf(g_rank_err, sizeof(g_rank_err), "%s='%s': not a rank number (0..999999)",
                     names[i], rg_parse_show(v, shown, sizeof(shown)));
        }
        break;
    }
    atomic_store(&g_rank, rank);
}

void fi_sleep_ms(uint64_t ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    int saved = errno;
    /* A thread held by the plan: the runner does not judge a hang while one is. */
    FI_PROG(holds, 1);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    FI_PROG(holds, -1);
    errno = saved;
}
