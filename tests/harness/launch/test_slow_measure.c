/* SPDX-License-Identifier: MIT */
/* What the machine takes from a run, as the runners measure it (harness/launch/rg_slow_measure.c):
 * a process's wait for a CPU, a rank's start from its load event, the runner's own lag. */
#include "common/rg_check.h"
#include "launch/rg_launch.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The measurements: this process's wait for a CPU, a start from the load event, the lag. */
START_TEST(test_measured)
{
    ck_assert(rg_slow_cpu_wait((long)getpid(), NULL) >= 0);
    pid_t gone = fork();
    if (!gone)
        _exit(0);
    waitpid(gone, NULL, 0);
    ck_assert(rg_slow_cpu_wait((long)gone, NULL) == -1);

    rg_rank_result k = {.start_s = -1, .cpu_wait_s = -1};
    struct rg_proc p = {.pid = 1234, .spawn_s = 100.0};
    static rg_evidence ev;
    memset(&ev, 0, sizeof(ev));
    rg_slow_started(&k, &p, &ev, 110.0); /* no process wrote, and it ended: unknown */
    ck_assert(k.start_s == -1);
    ev.nprocs = 1;
    ev.proc[0].load_mono_ms = -1;
    rg_slow_started(&k, &p, &ev, 110.0); /* its first process never said it loaded */
    ck_assert(k.start_s == -1);
    p.hung = true; /* ... and was still running at 110 s: it had not started 10 s in */
    rg_slow_started(&k, &p, &ev, 110.0);
    ck_assert(k.start_s == 10.0 && k.start_unseen);
    k.start_unseen = false;
    ev.proc[0].load_mono_ms = 102500.0;
    rg_slow_started(&k, &p, &ev, 110.0);
    ck_assert(k.start_s == 2.5 && !k.start_unseen);

    double lag = 0;
    rg_slow_lag(&lag, 10.0, 10.25);
    rg_slow_lag(&lag, 11.0, 11.1);
    rg_slow_lag(&lag, 12.0, 11.9); /* woke early: no lag */
    ck_assert(lag == 0.25);
}
END_TEST

Suite *rg_suite_measure(void)
{
    Suite *s = suite_create("measure");
    TCase *t = tcase_create("measure");
    tcase_add_test(t, test_measured);
    suite_add_tcase(s, t);
    return s;
}
