/* SPDX-License-Identifier: MIT */
/* A hang judged when it is one (harness/launch/rg_progress.c): the progress page as the runner
 * makes and reads it, and when a run's quiet makes it a hang -- and each thing that keeps it
 * from being one. */
#include "common/rg_check.h"
#include "launch/rg_launch.h"
#include "rg_faultinject.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* The page made, then written as a shim would: a slot by pid, its counts. */
START_TEST(test_page)
{
    char path[1200], again[1200];
    rg_progress_counts c;
    ck_assert_int_eq(rg_progress_read("/nonexistent/rg-progress", 1, &c), -1); /* no page */
    ck_assert_int_eq(rg_progress_make(3, path, sizeof(path)), 0);
    ck_assert_msg(strstr(path, "railguard-progress.") && path[strlen(path) - 1] == '3', "%s", path);
    ck_assert_int_eq(rg_progress_read(path, 77, &c), 0);
    ck_assert(c.procs == 0 && !c.has_pid && c.moves == 0 && !c.holding && c.full == 0);

    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    struct rg_fi_progress_v1 *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    ck_assert(p != MAP_FAILED);
    p->slot[0].pid = 77;
    p->slot[0].posts = 5;
    p->slot[0].cqes = 4;
    p->slot[0].polls = 100;
    p->slot[0].calls = 3; /* a create, a register, a modify: moves too */
    p->slot[7].pid = 78;  /* its child */
    p->slot[7].cqes = 1;
    ck_assert_int_eq(rg_progress_read(path, 77, &c), 0);
    ck_assert(c.procs == 2 && c.has_pid && c.moves == 13 && c.polls == 100 && !c.holding);
    p->slot[7].holds = 1; /* a stall fault holds a thread of the child */
    ck_assert_int_eq(rg_progress_read(path, 77, &c), 0);
    ck_assert(c.holding);
    p->slot[7].holds = 0;
    p->slot[0].late = 2; /* a late fault holds two sends */
    ck_assert_int_eq(rg_progress_read(path, 77, &c), 0);
    ck_assert(c.holding);
    p->full = 1;
    ck_assert_int_eq(rg_progress_read(path, 77, &c), 0);
    ck_assert(c.full == 1);
    p->version = RG_FI_PROGRESS_VERSION + 1; /* another shim's page: not read */
    ck_assert_int_eq(rg_progress_read(path, 77, &c), -1);
    munmap(p, sizeof(*p));
    /* A rerun's page is another, and starts afresh. */
    ck_assert_int_eq(rg_progress_make(3, again, sizeof(again)), 0);
    ck_assert_str_ne(path, again);
    ck_assert_int_eq(rg_progress_read(again, 77, &c), 0);
    ck_assert(c.procs == 0);
    unlink(path);
    unlink(again);
}
END_TEST

START_TEST(test_measures)
{
    /* A process's time on a CPU, read with its wait for one (rg_slow_measure.c). */
    double cpu = -2;
    ck_assert(rg_slow_cpu_wait((long)getpid(), &cpu) >= 0 && cpu >= 0);
    pid_t gone = fork();
    if (!gone)
        _exit(0);
    waitpid(gone, NULL, 0);
    ck_assert(rg_slow_cpu_wait((long)gone, &cpu) == -1 && cpu == -1);
    uint64_t pkts = 7;
    ck_assert_int_eq(rg_progress_packets(NULL, 0, &pkts), -1);
    const char devs[][64] = {"rg-no-such-device"};
    ck_assert_int_eq(rg_progress_packets(devs, 1, &pkts), -1);
    /* The timeout and the margin SLOW_DETECTION gives a call: 1 s, a tenth, lag, CPU wait. */
    ck_assert(rg_hang_window(3, 0, -1) > 4.29 && rg_hang_window(3, 0, -1) < 4.31);
    ck_assert(rg_hang_window(3, 0.5, 0.25) > 5.04 && rg_hang_window(3, 0.5, 0.25) < 5.06);
    ck_assert(rg_hang_window(0, 0, 0) < 0);
}
END_TEST

static rg_hang g_h;
static bool g_live[RG_MAX_RANKS];
static uint64_t g_pkts;

/* Two ranks inside a call, waiting (polling, no CPU of their own), window 4.3 s. */
static void start(void)
{
    memset(&g_h, 0, sizeof(g_h));
    memset(g_live, 0, sizeof(g_live));
    g_h.on = true;
    g_h.window_s = rg_hang_window(3, 0, 0);
    g_live[0] = g_live[1] = true;
    g_pkts = 1000;
}

static rg_hang_seen waiting(uint64_t moves, uint64_t polls, double cpu)
{
    return (rg_hang_seen){.known = true,
                          .in_call = true,
                          .moves = moves,
                          .polls = polls,
                          .cpu_s = cpu,
                          .step_mark = 1};
}

/* Looks at both ranks and the devices at time t; whether that made it a hang. */
static bool look_wire(double t, rg_hang_seen a, rg_hang_seen b, bool wire)
{
    rg_hang_look(&g_h, 0, &a, t);
    rg_hang_look(&g_h, 1, &b, t);
    rg_hang_look_devices(&g_h, 0, g_pkts, wire, t);
    return rg_hang_judge(&g_h, g_live, 0, 2, t);
}

static bool look(double t, rg_hang_seen a, rg_hang_seen b)
{
    return look_wire(t, a, b, false);
}

START_TEST(test_quiet_is_a_hang)
{
    start();
    ck_assert(!look(0.2, waiting(10, 100, 1.0), waiting(12, 50, 1.0)));
    ck_assert(!look(4.4, waiting(10, 900, 1.0), waiting(12, 800, 1.0))); /* 4.2 s quiet */
    ck_assert(look(4.6, waiting(10, 950, 1.0), waiting(12, 850, 1.0)));
    ck_assert(g_h.judged && g_h.at_s == 4.6);
    ck_assert(g_h.quiet_s > 4.39 && g_h.quiet_s < 4.41);
}
END_TEST

/* A move on one rank at 3 s -- a post or completion, a step begun, a fault's hold, CPU of its
 * own without a poll, a packet, a wire fault still to come -- starts the quiet afresh: no hang
 * at 4.6 s, one at 7.4 s. With none (case 6) it is one at 4.6 s. */
START_TEST(test_moves)
{
    for (int what = 0; what < 7; what++) {
        start();
        rg_hang_seen a = waiting(10, 100, 1.0), b = waiting(12, 50, 1.0);
        ck_assert(!look(0.2, a, b));
        rg_hang_seen m = b;
        if (what == 0)
            m.moves = 13;
        if (what == 1)
            m.step_mark = 2;
        if (what == 2)
            m.holding = true;
        if (what == 3)
            m.cpu_s = 3.0; /* 2 s of CPU in 2.8 s, no poll: work the shim cannot see */
        if (what == 4)
            g_pkts = 1001;
        ck_assert(!look_wire(3.0, a, m, what == 5));
        m.holding = false;
        bool judged = look(4.6, a, m);
        ck_assert_msg(judged == (what == 6), "move %d: judged %d at 4.6 s", what, judged);
        if (what != 6)
            ck_assert_msg(look(7.4, a, m), "move %d: no hang 4.4 s after it", what);
    }
}
END_TEST

/* CPU time while polling is a wait for a completion, not work: quiet. */
START_TEST(test_spinning_poll_is_quiet)
{
    start();
    ck_assert(!look(0.2, waiting(10, 100, 1.0), waiting(12, 50, 1.0)));
    ck_assert(look(4.6, waiting(10, 90000, 5.0), waiting(12, 80000, 5.2)));
}
END_TEST

/* What leaves the hang to the deadline: a rank not known, one not inside a call (before its
 * first step, past its verdict), the judge off or with no window. Ended ranks are not looked
 * at; with none running there is nothing to judge. */
START_TEST(test_not_judged)
{
    for (int what = 0; what < 5; what++) {
        start();
        rg_hang_seen a = waiting(10, 100, 1.0), b = waiting(12, 50, 1.0);
        if (what == 0)
            b.known = false;
        if (what == 1)
            b.in_call = false;
        if (what == 2)
            g_h.on = false;
        if (what == 3)
            g_h.window_s = -1;
        if (what == 4)
            g_live[0] = g_live[1] = false;
        ck_assert(!look(0.2, a, b));
        ck_assert_msg(!look(20, a, b), "case %d judged", what);
        ck_assert(!g_h.judged);
    }
    /* One rank ended, the other quiet in its call: a hang of that one. */
    start();
    g_live[1] = false;
    rg_hang_seen a = waiting(10, 100, 1.0), gone = {.cpu_s = -1};
    ck_assert(!look(0.2, a, gone));
    ck_assert(look(4.6, a, gone));
    /* Devices whose counts cannot be read: judged on the rest (the detail says so). */
    start();
    rg_hang_look(&g_h, 0, &a, 0.2);
    rg_hang_look_devices(&g_h, -1, 0, false, 0.2);
    rg_hang_look(&g_h, 0, &a, 4.6);
    rg_hang_look_devices(&g_h, -1, 0, false, 4.6);
    g_live[1] = false;
    ck_assert(rg_hang_judge(&g_h, g_live, 0, 2, 4.6) && !g_h.dev_known);
}
END_TEST

/* A scenario's phases from its launch's marks (rg_launched_phases). */
START_TEST(test_phases)
{
    static rg_launched l;
    rg_phases p;
    memset(&l, 0, sizeof(l));
    l.lo = 0;
    l.hi = 2;
    l.ready_s = l.ended_s = l.stopped_s = l.read_s = l.hang_since = -1;
    rg_launched_phases(&l, 0.1, &p); /* no marks (a launcher's job): nothing measured */
    for (int i = 0; i < RG_PHASES; i++)
        ck_assert(p.s[i] == -1);
    /* Ready at 0.5 s, a hang judged at 5 s after 4.3 s of quiet, stopped by 7 s, read by 7.2. */
    l.ready_s = 0.5;
    l.ended_s = 5.0;
    l.stopped_s = 7.0;
    l.read_s = 7.2;
    l.rank[1].proc.hung = true;
    l.hang.judged = true;
    l.hang.quiet_s = 4.3;
    rg_launched_phases(&l, 0.1, &p);
    ck_assert(p.s[RG_PH_START] == 0.5 && p.s[RG_PH_HANG] == 4.3 && p.s[RG_PH_STOP] == 2.0);
    ck_assert(p.s[RG_PH_WORK] > 0.199 && p.s[RG_PH_WORK] < 0.201);
    ck_assert(p.s[RG_PH_JUDGE] > 0.299 && p.s[RG_PH_JUDGE] < 0.301 && p.s[RG_PH_AGAIN] == 0);
    /* At the deadline: quiet since 1.5 s; and not known when a rank was not known. */
    l.hang.judged = false;
    l.hang_since = 1.5;
    rg_launched_phases(&l, 0.1, &p);
    ck_assert(p.s[RG_PH_HANG] == 3.5 && p.s[RG_PH_WORK] == 1.0);
    l.hang_since = -1;
    rg_launched_phases(&l, 0.1, &p);
    ck_assert(p.s[RG_PH_HANG] == -1 && p.s[RG_PH_WORK] == 4.5);
    /* None hung: no hang's wait. Never ready: all of the watch was start-up. */
    l.rank[1].proc.hung = false;
    l.ready_s = -1;
    rg_launched_phases(&l, 0.1, &p);
    ck_assert(p.s[RG_PH_HANG] == 0 && p.s[RG_PH_START] == 5.0 && p.s[RG_PH_WORK] == 0);
    /* Programs: start-up is the longest fork-to-load, not known when one never loaded. */
    l.programs = true;
    l.rank[0].said.start_s = 0.3;
    l.rank[1].said.start_s = 0.8;
    rg_launched_phases(&l, 0.1, &p);
    ck_assert(p.s[RG_PH_START] == 0.8 && p.s[RG_PH_WORK] > 4.199 && p.s[RG_PH_WORK] < 4.201);
    l.rank[1].said.start_s = -1;
    rg_launched_phases(&l, 0.1, &p);
    ck_assert(p.s[RG_PH_START] == -1 && p.s[RG_PH_WORK] == 5.0);
}
END_TEST

Suite *rg_suite_progress(void)
{
    Suite *s = suite_create("progress");
    TCase *t = tcase_create("progress");
    tcase_add_test(t, test_page);
    tcase_add_test(t, test_measures);
    tcase_add_test(t, test_quiet_is_a_hang);
    tcase_add_test(t, test_moves);
    tcase_add_test(t, test_spinning_poll_is_quiet);
    tcase_add_test(t, test_not_judged);
    tcase_add_test(t, test_phases);
    suite_add_tcase(s, t);
    return s;
}
