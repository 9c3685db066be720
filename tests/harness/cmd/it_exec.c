/* SPDX-License-Identifier: MIT */
/*
 * `railguard exec` end to end, on rxe, with a program railguard does not drive: rg-fi-probe (a
 * loopback pair of QPs) and its built-in bugs. A clean run passes; a flushed receive the
 * program reports is `detected`; the same error ignored (exit 0) is ERROR_SWALLOWED; a rule
 * that never fires is NOT_EXERCISED; a poll loop with no deadline is DEADLOCK with a backtrace
 * naming the loop; objects never destroyed are listed as LEAK and fail only with --leaks; each
 * copy gets its rank and size. Bad flags stop it at once with one line.
 */
#include "common/rg_check.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_bin[PATH_MAX], g_probe[PATH_MAX], g_tmp[PATH_MAX];
static char g_out[65536];
static int g_n;

static void setup(void)
{
    rg_check_build_file(g_bin, sizeof(g_bin), "bin/railguard");
    rg_check_build_file(g_probe, sizeof(g_probe), "bin/rg-fi-probe");
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/rg-it-exec.%ld", (long)getpid());
    mkdir(g_tmp, 0755);
}

/*
 * Runs "railguard SUB --out DIR ARGS" (a shell line, KILLed after 150 s), its output in g_out;
 * DIR, a fresh directory per call, goes to dir. Returns the exit status.
 */
static int railguard(const char *sub, char *dir, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int railguard(const char *sub, char *dir, size_t len, const char *fmt, ...)
{
    char args[2048], cmd[3 * PATH_MAX + 2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    /* Each test is a process of its own (Check forks): the pid keeps their directories apart. */
    ck_assert((size_t)snprintf(dir, len, "%s/x%ld-%d", g_tmp, (long)getpid(), g_n++) < len);
    snprintf(cmd, sizeof(cmd), "timeout -s KILL 150 %s %s --out %s %s 2>&1", g_bin, sub, dir, args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(g_out, 1, sizeof(g_out) - 1, p);
    g_out[n] = '\0';
    int st = pclose(p);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 137, "railguard %s killed:\n%s", sub, g_out);
    return WEXITSTATUS(st);
}

static void expect_in(const char *needle)
{
    ck_assert_msg(strstr(g_out, needle), "'%s' not in:\n%s", needle, g_out);
}

static bool file_holds(const char *path, const char *needle)
{
    static char buf[256 * 1024];
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, needle) != NULL;
}

/*
 * Too slow to judge. A static busybox as the rank wrapper (no shim in it) holds the program's
 * start back on the first attempt only (RG_FI_TIME_SCALE=1): that attempt runs out of its 3 s
 * deadline before the program started, which the runner measures, so it runs again with every
 * time x4 and the program, no longer held, passes on the second attempt. Held back on every
 * attempt, the second runs out too while the machine took all of it: SLOW, exit 3, never a
 * pass and never the program's failure. With --slow-scale 1, or with a program that hangs by
 * itself on a machine that held nothing back, the DEADLOCK stands after one attempt.
 * The hold is far longer than the x4 attempt's 12 s deadline, which kills it: a hold of 16 s
 * ended inside the runner's reaction time in a slow guest, and rank 0 then "started 16.18 s
 * after" instead of never.
 */
START_TEST(test_too_slow)
{
    char dir[PATH_MAX], hold[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(hold, sizeof(hold), "%s/hold.sh", g_tmp);
    FILE *f = fopen(hold, "w");
    ck_assert_ptr_nonnull(f);
    fputs("[ \"$RG_FI_TIME_SCALE\" = 1 ] || [ -n \"$HOLD_ALWAYS\" ] && sleep 60\nexec \"$@\"\n", f);
    fclose(f);
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--deadline 3 --rank-wrapper 'busybox sh %s' -- %s --msgs 3", hold,
                               g_probe),
                     0);
    expect_in("PASS  rg-fi-probe");
    expect_in("judged on a second attempt with every time x4: the first (in attempt-1/) failed "
              "when rank 0 ran out of the 3 s deadline while rank 0 had not started ");
    snprintf(path, sizeof(path), "%s/000-rg-fi-probe/result.json", dir);
    ck_assert(file_holds(path, "\"attempts\": 2"));
    ck_assert(file_holds(path, "\"time_scale\": 4"));
    snprintf(path, sizeof(path), "%s/000-rg-fi-probe/attempt-1/rank0.log", dir);
    ck_assert_msg(access(path, F_OK) == 0, "no %s", path);
    snprintf(path, sizeof(path), "%s/000-rg-fi-probe/attempt-1/rank0.backtrace", dir);
    ck_assert(file_holds(path, "no backtrace: rank 0's program had not started"));

    setenv("HOLD_ALWAYS", "1", 1);
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--deadline 3 --rank-wrapper 'busybox sh %s' -- %s --msgs 3", hold,
                               g_probe),
                     3);
    unsetenv("HOLD_ALWAYS");
    expect_in("SLOW  rg-fi-probe");
    expect_in(
        "too slow to judge: rank 0 ran out of the 3 s deadline while rank 0 had not started ");
    expect_in("; and with every time x4 rank 0 ran out of the 12 s deadline while rank 0 had not");
    expect_in("0 passed, 0 failed, 1 too slow to judge");
    snprintf(path, sizeof(path), "%s/junit.xml", dir);
    ck_assert(file_holds(path, "<error message=\"too slow to judge"));

    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--deadline 3 --slow-scale 1 --rank-wrapper 'busybox sh %s' -- %s "
                               "--msgs 3",
                               hold, g_probe),
                     1);
    expect_in("FAIL  rg-fi-probe");
    expect_in(" DEADLOCK  fired -");
    snprintf(path, sizeof(path), "%s/000-rg-fi-probe/attempt-1", dir);
    ck_assert_msg(access(path, F_OK) != 0, "%s: a second attempt under --slow-scale 1", path);
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "--deadline 4 -- sleep 30"), 1);
    expect_in(" DEADLOCK  fired -");
    ck_assert_msg(!strstr(g_out, "second attempt"), "%s", g_out);
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "--slow-scale 0 -- true"), 2);
    expect_in("railguard exec: --slow-scale: must be 1..100 '0'");
}
END_TEST

START_TEST(test_clean_and_detected)
{
    char dir[PATH_MAX];
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "-- %s --msgs 3", g_probe), 0);
    expect_in("PASS  rg-fi-probe");
    expect_in(" ok  fired -");
    expect_in("1 passed, 0 failed");
    /* The program reports the flushed receive (exit 1) after the fault fired: detected. */
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--faults 'error op=recv nth=2' -- %s --msgs 3", g_probe),
                     0);
    expect_in(" detected  fired 1");
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/report.json", dir);
    ck_assert(file_holds(path, "\"verdict\": \"detected\""));
    snprintf(path, sizeof(path), "%s/junit.xml", dir);
    ck_assert(file_holds(path, "rg-fi-probe"));
    /* wr_ids with the top bit set (pointers, tagged values): the fault's evidence is read
     * back whole, so the same error is detected, not ERROR_WITHOUT_FAULT. */
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--faults 'error op=recv nth=2' -- %s --msgs 3 --tag-ids", g_probe),
                     0);
    expect_in(" detected  fired 1");
    snprintf(path, sizeof(path), "%s/000-rg-fi-probe/rank0.events.jsonl", dir);
    ck_assert(file_holds(path, "\"wr_id\":\"0x80000000000003e9\""));
    /* Expected ok, it failed: the run fails. */
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--expect ok --faults 'error op=recv nth=2' -- %s --msgs 3",
                               g_probe),
                     1);
}
END_TEST

START_TEST(test_swallowed_and_not_exercised)
{
    char dir[PATH_MAX];
    /* The same error, but the program exits 0 whatever its completions said. */
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--faults 'error op=recv nth=2' -- %s --msgs 3 --ignore-errors",
                               g_probe),
                     1);
    expect_in("ERROR_SWALLOWED");
    expect_in("handed this rank 1 injected error completion(s), yet every call it made returned "
              "success");
    /* A rule that matches nothing the program does proves nothing. */
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--faults 'error op=recv nth=99' -- %s --msgs 3", g_probe),
                     1);
    expect_in("NOT_EXERCISED");
    expect_in("fired 0 times on every rank");
}
END_TEST

/* A poll loop with no deadline: DEADLOCK at the deadline, gdb's backtrace names the loop. */
START_TEST(test_deadlock_backtrace)
{
    char dir[PATH_MAX], bt[PATH_MAX + 64];
    ck_assert_int_eq(
        railguard("exec", dir, sizeof(dir), "--deadline 3 -- %s --msgs 1 --spin", g_probe), 1);
    expect_in("DEADLOCK");
    expect_in("still running after the 3 s deadline");
    snprintf(bt, sizeof(bt), "%s/000-rg-fi-probe/rank0.backtrace", dir);
    ck_assert_msg(file_holds(bt, "spin_on_empty_cq"), "no spin_on_empty_cq in %s", bt);
}
END_TEST

/* Objects left for exit to clean up: listed, failing only with --leaks. */
START_TEST(test_leaks)
{
    char dir[PATH_MAX];
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "-- %s --msgs 1 --leak", g_probe), 0);
    expect_in("LEAK");
    expect_in("1 passed, 0 failed");
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/000-rg-fi-probe/result.json", dir);
    ck_assert(file_holds(path, "QP(s) alive: never destroyed"));
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "--leaks -- %s --msgs 1 --leak", g_probe),
                     1);
    expect_in("0 passed, 1 failed");
}
END_TEST

/*
 * A rank is a process tree: rg-fi-probe --fork is a daemon's shape (the parent does no verbs
 * and waits; its child does the work). Clean it passes, with a fault it is detected, and a
 * QP its child leaves is the child's leak, named by pid -- not "no verbs calls" from the
 * parent's summary beside a LEAK, as one shared view of the events file made it.
 */
START_TEST(test_forking_program)
{
    char dir[PATH_MAX], path[PATH_MAX + 64];
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "-- %s --msgs 3 --fork", g_probe), 0);
    expect_in("PASS  rg-fi-probe");
    ck_assert_msg(!strstr(g_out, "not instrumented"), "%s", g_out);
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--faults 'error op=recv nth=2' -- %s --msgs 3 --fork", g_probe),
                     0);
    expect_in(" detected  fired 1");
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "-- %s --msgs 1 --leak --fork", g_probe),
                     0);
    snprintf(path, sizeof(path), "%s/000-rg-fi-probe/result.json", dir);
    ck_assert_msg(file_holds(path, "QP(s) alive in pid "), "no per-process leak in %s", path);
    ck_assert_msg(file_holds(path, "(rg-fi-probe, forked by pid "), "no parent in %s", path);
    ck_assert(!file_holds(path, "not instrumented"));
}
END_TEST

/*
 * A server that runs until stopped (rping -P): without --service it can only end as DEADLOCK;
 * as a service it is stopped with SIGTERM once its client has ended and passes, its evidence
 * taken first. A service named past --ranks is a usage error.
 */
START_TEST(test_service)
{
    static const char pp[] = "--server 'rping -s -P -a 10.9.0.1 -C 5' "
                             "--client 'rping -c -a 10.9.0.1 -C 5' --client-after 1";
    char dir[PATH_MAX], path[PATH_MAX + 64];
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "--deadline 6 %s", pp), 1);
    expect_in("first failure: rank 0: DEADLOCK");
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "--deadline 30 --service 0 %s", pp), 0);
    expect_in("PASS  rping");
    snprintf(path, sizeof(path), "%s/000-rping/result.json", dir);
    ck_assert(file_holds(path, "a service: sent SIGTERM once every other rank had ended"));
    ck_assert(file_holds(path, "\"service\": true"));
    snprintf(path, sizeof(path), "%s/000-rping/rank0.events.jsonl", dir);
    ck_assert_msg(file_holds(path, "\"why\":\"snapshot\""), "no summary taken first: %s", path);
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "--service 2 %s", pp), 2);
    expect_in("--service names a rank past --ranks");
}
END_TEST

/* Each copy's rank and size, in its environment and in {rank}/{size}; its own log. */
START_TEST(test_ranks)
{
    char dir[PATH_MAX], log[PATH_MAX + 64];
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--ranks 2 --name ranks -- sh -c 'echo r=$RG_RANK s=$RG_SIZE a=$0' "
                               "'{rank}of{size}'"),
                     1); /* sh leaves without the shim's summary: not instrumented, ERROR */
    expect_in("not instrumented: exited with status 0 but the shim wrote no summary");
    for (int r = 0; r < 2; r++) {
        char want[64];
        snprintf(log, sizeof(log), "%s/000-ranks/rank%d.log", dir, r);
        snprintf(want, sizeof(want), "r=%d s=2 a=%dof2", r, r);
        ck_assert_msg(file_holds(log, want), "no '%s' in %s", want, log);
    }
}
END_TEST

/*
 * A client/server program nobody here wrote: rdma-core's ibv_rc_pingpong. The client starts once
 * the server listens on {port}; clean, both pass. A receive flushed on the client: it reports
 * the error and exits 1 (detected), and the server, whose wait for the next message has no
 * deadline, is still waiting at ours: DEADLOCK, with gdb's backtrace of where.
 */
START_TEST(test_pingpong)
{
    static const char pp[] = "--server 'ibv_rc_pingpong -d rxe0 -g 1 -p {port} -n 20' "
                             "--client 'ibv_rc_pingpong -d rxe0 -g 1 -p {port} -n 20 {host}'";
    char dir[PATH_MAX], path[PATH_MAX + 64];
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "--deadline 30 %s", pp), 0);
    expect_in("PASS  ibv_rc_pingpong");
    expect_in(" ok,ok  fired -");
    snprintf(path, sizeof(path), "%s/000-ibv_rc_pingpong/rank1.log", dir);
    ck_assert(file_holds(path, "20 iters in"));
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--deadline 8 --faults 'error op=recv rank=1 nth=5' %s", pp),
                     1);
    expect_in("first failure: rank 0: DEADLOCK at 8.00 s in server: still running after the 8 s "
              "deadline");
    snprintf(path, sizeof(path), "%s/000-ibv_rc_pingpong/result.json", dir);
    ck_assert(file_holds(path, "exited with status 1"));
    ck_assert(file_holds(path, "\"verdict\": \"DEADLOCK\""));
    snprintf(path, sizeof(path), "%s/000-ibv_rc_pingpong/rank0.backtrace", dir);
    ck_assert_msg(file_holds(path, "main"), "no backtrace in %s", path);
}
END_TEST

/*
 * rdma-core's ucmatose (RDMA CM) under a flush on every side: the shim hands each process an
 * error completion, and each exits 0 all the same -- a real unchecked status, ERROR_SWALLOWED.
 * The server is not told {port}, so the client starts 1 s after it.
 */
START_TEST(test_ucmatose_swallows)
{
    char dir[PATH_MAX];
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--deadline 30 --faults 'error status=WR_FLUSH_ERR' "
                               "--server 'ucmatose -b 10.9.0.1' --client 'ucmatose -s 10.9.0.1'"),
                     1);
    expect_in("ERROR_SWALLOWED,ERROR_SWALLOWED");
    expect_in("injected error completion(s), yet every call it made returned success");
}
END_TEST

/*
 * Scenario files with an exec: program run under railguard run beside collective scenarios:
 * the stock ones pass (and each client really ran), one with faults is judged like exec's, and
 * a program that is not there stops the run at load with one line naming the file and line.
 */
START_TEST(test_run_exec_scenarios)
{
    char dir[PATH_MAX], path[PATH_MAX + 64], stock[PATH_MAX], *sc;
    rg_check_build_file(stock, sizeof(stock), "../../scenarios/exec");
    /* A slice of the stock ones (make run, and make check's conformance run, have them all):
     * plain verbs, the CM, a known failure. */
    int st = railguard("run", dir, sizeof(dir),
                       "%s/ibv-rc-pingpong.yaml %s/ucmatose.yaml %s/ibv-rc-pingpong-flush.yaml",
                       stock, stock, stock);
    ck_assert_msg(st == 0, "status %d:\n%s", st, g_out);
    expect_in("PASS  ibv-rc-pingpong");
    expect_in("PASS  ucmatose");
    /* The clean pingpong's client really ran its 50 round trips (its index is its place). */
    bool ran = false;
    for (int i = 0; i < 20 && !ran; i++) {
        snprintf(path, sizeof(path), "%s/%03d-ibv-rc-pingpong/rank1.log", dir, i);
        ran = file_holds(path, "50 iters in");
    }
    ck_assert_msg(ran, "no '50 iters in' in any %s/NNN-ibv-rc-pingpong/rank1.log", dir);
    /* A program's real bug, recorded as a known failure: xfail, not a failed run. */
    expect_in("XFAIL  ibv-rc-pingpong-flush");
    expect_in("known failures: 1 xfail, 0 xpass (counted as passed)");

    char text[PATH_MAX + 256];
    snprintf(text, sizeof(text),
             "ranks: 1\ndeadline: 30\nfaults: [error op=recv nth=2]\n"
             "exec: {command: '%s --msgs 3 --ignore-errors'}\n",
             g_probe);
    sc = malloc(PATH_MAX);
    rg_check_write_temp(sc, text, strlen(text));
    ck_assert_int_eq(railguard("run", dir, sizeof(dir), "%s", sc), 1);
    expect_in("ERROR_SWALLOWED");
    /* Known by cause: the run proves the cause from its own files (the shim's fault events),
     * keeps it in result.json, and railguard report judges the same from the files. */
    char *kf = malloc(PATH_MAX);
    static const char by_cause[] = "signatures:\n  - {why: the probe ignores errors, "
                                   "cause: error-ignored}\n";
    rg_check_write_temp(kf, by_cause, strlen(by_cause));
    ck_assert_int_eq(railguard("run", dir, sizeof(dir), "--known %s %s", kf, sc), 0);
    expect_in("XFAIL  ");
    expect_in("known failure (cause, line 2): the probe ignores errors; proven: an error polled, "
              "then ignored; rank 0: ERROR_SWALLOWED");
    char cmd[2 * PATH_MAX + 64];
    snprintf(cmd, sizeof(cmd), "grep -q '\"name\": \"error-ignored\"' %s/000-*/result.json", dir);
    ck_assert_msg(system(cmd) == 0, "no cause in %s/000-*/result.json", dir);
    snprintf(cmd, sizeof(cmd), "%s report %s >/dev/null 2>&1", g_bin, dir);
    ck_assert_int_eq(system(cmd), 0);
    /* A cause its files do not prove: still a failure. One only a trace proves turns the trace
     * on, in the fault-free scenario only (a trace proves nothing where a fault fired). */
    static const char other[] = "signatures:\n  - {why: x, cause: wait-never-sent}\n";
    rg_check_write_temp(kf, other, strlen(other));
    char *clean = malloc(PATH_MAX);
    snprintf(text, sizeof(text), "ranks: 1\ndeadline: 30\nexec: {command: '%s --msgs 3'}\n",
             g_probe);
    rg_check_write_temp(clean, text, strlen(text));
    ck_assert_int_eq(railguard("run", dir, sizeof(dir), "--known %s %s %s", kf, sc, clean), 1);
    expect_in("known failures by cause: the verbs trace is on in 1 fault-free scenario(s)");
    expect_in("ERROR_SWALLOWED");
    snprintf(cmd, sizeof(cmd), "grep -q trace_post %s/001-*/rank0.events.jsonl", dir);
    ck_assert_msg(system(cmd) == 0, "no trace in the fault-free scenario's events (%s)", dir);
    snprintf(cmd, sizeof(cmd), "grep -q trace_post %s/000-*/rank0.events.jsonl", dir);
    ck_assert_msg(system(cmd) != 0, "a trace in the faulted scenario's events (%s)", dir);
    free(clean);
    free(kf);

    /* No expect, an error fault: the one default (any) holds for a scenario file as for
     * railguard exec, so the client that reports the flush is right and the first failure
     * named is the server that hangs. */
    static const char hang[] = "ranks: 2\ndeadline: 8\nfaults: [error op=recv rank=1 nth=5]\n"
                               "exec:\n  server: 'ibv_rc_pingpong -d rxe0 -g 1 -p {port} -n 50'\n"
                               "  client: 'ibv_rc_pingpong -d rxe0 -g 1 -p {port} -n 50 {host}'\n";
    rg_check_write_temp(sc, hang, strlen(hang));
    ck_assert_int_eq(railguard("run", dir, sizeof(dir), "%s", sc), 1);
    expect_in("first failure: rank 0: DEADLOCK");
    /* the client: detected, and its objects left to exit (a finding, not a failure) */
    expect_in(" DEADLOCK,LEAK ");

    static const char missing[] = "ranks: 2\n# a comment\nexec:\n  command: no-such-tool -x\n";
    rg_check_write_temp(sc, missing, strlen(missing));
    ck_assert_int_eq(railguard("run", dir, sizeof(dir), "%s", sc), 2);
    char want[PATH_MAX + 128];
    snprintf(want, sizeof(want), "%s:3: exec: command: 'no-such-tool' not found on PATH\n", sc);
    ck_assert_msg(!strcmp(g_out, want), "want '%s', got:\n%s", want, g_out);
    free(sc);
}
END_TEST

/*
 * railguard sweep over an exec scenario: the program marks no steps, so its points span the
 * whole run (n over every receive or send of a rank). A probe that reports its errors passes
 * every point; the same probe exiting 0 regardless fails them, ERROR_SWALLOWED.
 */
START_TEST(test_sweep_exec_scenario)
{
    char dir[PATH_MAX], text[PATH_MAX + 256], sc[PATH_MAX];
    snprintf(text, sizeof(text), "ranks: 1\ndeadline: 30\nexec: {command: '%s --msgs 3'}\n",
             g_probe);
    rg_check_write_temp(sc, text, strlen(text));
    int st = railguard("sweep", dir, sizeof(dir), "--fault error --op recv --max 2 %s", sc);
    ck_assert_msg(st == 0, "status %d:\n%s", st, g_out);
    /* Two per event, and one at the probe's one poll site that hands out receives. */
    expect_in("3 points in");
    expect_in("3 fired, 0 not fired, 0 failing");
    st = railguard("sweep", dir, sizeof(dir), "--fault error --op recv --max 2 --events-only %s",
                   sc);
    ck_assert_msg(st == 0, "status %d:\n%s", st, g_out);
    expect_in("2 points in");
    snprintf(text, sizeof(text),
             "ranks: 1\ndeadline: 30\nexec: {command: '%s --msgs 3 --ignore-errors'}\n", g_probe);
    rg_check_write_temp(sc, text, strlen(text));
    /* The runs in --work, everything else in --out: the counting run, the batch's run and the
     * rechecks of its failures there (and shrinking candidates: a program with no steps has
     * none); plan, points and reports here. */
    char work[PATH_MAX + 32], path[2 * PATH_MAX + 64];
    snprintf(work, sizeof(work), "%s/work-%ld", g_tmp, (long)getpid());
    st = railguard("sweep", dir, sizeof(dir), "--work %s --fault error --op recv --max 2 %s", work,
                   sc);
    ck_assert_msg(st == 1, "status %d:\n%s", st, g_out);
    expect_in("ERROR_SWALLOWED");
    expect_in("3 fired, 0 not fired, 3 failing");
    snprintf(path, sizeof(path), "railguard sweep: the runs' evidence: %s\n", work);
    expect_in(path);
    const char *in_work[] = {"count", "count.log", "run-0001/000-point-0001/rank0.events.jsonl",
                             "run-0001.log", "points/0001-recheck/000-point-0001/result.json"};
    const char *in_out[] = {"plan.json", "sweep.json", "index.html", "points/0001.yaml",
                            "points/0003.yaml"};
    for (size_t i = 0; i < sizeof(in_work) / sizeof(in_work[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", work, in_work[i]);
        ck_assert_msg(access(path, F_OK) == 0, "no %s:\n%s", path, g_out);
        snprintf(path, sizeof(path), "%s/%s", dir, in_work[i]);
        ck_assert_msg(access(path, F_OK) != 0, "%s is not in --work", path);
    }
    for (size_t i = 0; i < sizeof(in_out) / sizeof(in_out[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, in_out[i]);
        ck_assert_msg(access(path, F_OK) == 0, "no %s:\n%s", path, g_out);
    }
    /* A --work that cannot be made: one line, 2, and no --out made. */
    st = railguard("sweep", dir, sizeof(dir), "--work /dev/null/x --fault error %s", sc);
    ck_assert_msg(st == 2, "status %d:\n%s", st, g_out);
    ck_assert_str_eq(g_out, "railguard sweep: --work: cannot create '/dev/null/x': Not a "
                            "directory\n");
    ck_assert_int_ne(access(dir, F_OK), 0);
}
END_TEST

/* Every process under a wrapper: valgrind's memcheck here, with the shim still inside. */
/*
 * A launcher that starts the ranks itself, as mpirun does: a shell that gives each rg-fi-probe
 * OMPI_COMM_WORLD_RANK. Each is judged as its rank from its own events file and the exit its
 * shim saw; a fault aimed at rank 1 lands there alone; a rank that hangs is backtraced; one
 * its launcher ends after the other failed (mpirun's abort) is killed, with why; a rank the
 * launcher never starts is an error naming it.
 */
START_TEST(test_launcher)
{
    char dir[PATH_MAX], path[PATH_MAX + 64];
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--launcher --ranks 2 -- sh -c 'OMPI_COMM_WORLD_RANK=0 %s --msgs 3 "
                               "& OMPI_COMM_WORLD_RANK=1 %s --msgs 3 & wait'",
                               g_probe, g_probe),
                     0);
    expect_in("PASS  sh");
    expect_in("ok,ok");
    snprintf(path, sizeof(path), "%s/000-sh/rank1.events.jsonl", dir);
    ck_assert(file_holds(path, "\"event\":\"exit\",\"rank\":1,"));
    ck_assert_int_eq(
        railguard("exec", dir, sizeof(dir),
                  "--launcher --ranks 2 --faults 'error op=recv nth=2 rank=1' -- sh -c "
                  "'OMPI_COMM_WORLD_RANK=0 %s --msgs 3 & OMPI_COMM_WORLD_RANK=1 %s "
                  "--msgs 3 & wait'",
                  g_probe, g_probe),
        0);
    expect_in("ok,detected");
    /* Rank 1 fails, the launcher then ends rank 0 and exits with rank 1's status. */
    ck_assert_int_eq(
        railguard("exec", dir, sizeof(dir),
                  "--launcher --ranks 2 --faults 'error op=recv nth=2 rank=1' -- sh -c "
                  "'OMPI_COMM_WORLD_RANK=0 %s --msgs 1 --spin & a=$!; "
                  "OMPI_COMM_WORLD_RANK=1 %s --msgs 3; s=$?; kill $a; wait $a; exit $s'",
                  g_probe, g_probe),
        0);
    expect_in("killed,detected");
    snprintf(path, sizeof(path), "%s/000-sh/result.json", dir);
    ck_assert(file_holds(path, "after rank 1 left with detected"));
    /* Rank 1 spins past the deadline: a hang, backtraced by gdb though not the runner's child. */
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--launcher --ranks 2 --deadline 4 -- sh -c 'OMPI_COMM_WORLD_RANK=0 "
                               "%s --msgs 3 & OMPI_COMM_WORLD_RANK=1 %s --msgs 1 --spin & wait'",
                               g_probe, g_probe),
                     1);
    expect_in("ok,DEADLOCK");
    snprintf(path, sizeof(path), "%s/000-sh/rank1.backtrace", dir);
    ck_assert_msg(file_holds(path, "spin_on_empty_cq"), "no spin_on_empty_cq in %s", path);
    /* Three ranks planned, two started. */
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir),
                               "--launcher --ranks 3 -- sh -c 'OMPI_COMM_WORLD_RANK=0 %s --msgs 3 "
                               "& OMPI_COMM_WORLD_RANK=1 %s --msgs 3 & wait'",
                               g_probe, g_probe),
                     1);
    expect_in("ok,ok,ERROR");
    snprintf(path, sizeof(path), "%s/000-sh/result.json", dir);
    ck_assert(file_holds(path, "its launcher started no process with rank 2"));
    ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "--launcher --server a --client b"), 2);
    expect_in("--launcher starts every rank");
}
END_TEST

START_TEST(test_rank_wrapper)
{
    char dir[PATH_MAX], path[PATH_MAX + 64];
    int st = railguard("exec", dir, sizeof(dir),
                       "--deadline 120 --rank-wrapper 'valgrind --error-exitcode=99' "
                       "--faults 'error op=recv nth=2' -- %s --msgs 3",
                       g_probe);
    ck_assert_msg(st == 0, "status %d:\n%s", st, g_out);
    expect_in(" detected  fired 1");
    snprintf(path, sizeof(path), "%s/000-rg-fi-probe/rank0.log", dir);
    ck_assert_msg(file_holds(path, "Memcheck, a memory error detector"), "no valgrind in %s", path);
    ck_assert_msg(file_holds(path, "ERROR SUMMARY: 0 errors"), "valgrind found errors: %s", path);
}
END_TEST

/* Bad flags: one line naming the flag, status 2, nothing run. */
START_TEST(test_bad_flags)
{
    static const char *const cases[][2] = {
        {"--ranks 0 -- true", "railguard exec: --ranks: must be 1..64 '0'"},
        {"--faults 'error nht=2' -- true", "railguard exec: --faults:1: unknown key 'nht'"},
        {"--faults 'count' --plan /dev/null -- true",
         "railguard exec: --faults and --plan: one plan, not two"},
        {"--expect killed -- true", "railguard exec: --expect: ok, detected or any, not 'killed'"},
        {"--deadline -1 -- true", "railguard exec: --deadline: not seconds in 0.1..86400 '-1'"},
        {"--plan /nonexistent -- true",
         "railguard exec: /nonexistent: cannot open: No such file or directory"},
        {"--bogus -- true", "railguard exec: unknown option '--bogus'"},
        {"--ranks 2", "railguard exec: no command: give it after '--'"},
        {"--server true -- true", "railguard exec: --server and --client go together"},
        {"--server true --client true -- true",
         "railguard exec: --server/--client or a command after '--', not both"},
        {"--ranks 2 --server true --client true",
         "railguard exec: --ranks: a server and a client are 2 ranks"},
        {"--server 'nosuch-server x' --client true",
         "railguard exec: --server: 'nosuch-server' not found on PATH"},
        {"--rank-wrapper 'nosuch-wrap -q' -- true",
         "railguard exec: --rank-wrapper: 'nosuch-wrap' not found on PATH"},
        {"--faults \"$(for i in $(seq 32); do printf 'count;'; done)\" -- true",
         "railguard exec: --faults: 32 rules and the ownership sanitizer's make more than 32 "
         "(--no-ownership frees one)"},
        {"--uc-as-rc --faults \"$(for i in $(seq 31); do printf 'count;'; done)\" -- true",
         "railguard exec: --faults: 31 rules and the ownership sanitizer's and --uc-as-rc's make "
         "more than 32 (--no-ownership frees one)"},
        {"-- no-such-program-anywhere",
         "railguard exec: 'no-such-program-anywhere' not found on PATH"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char dir[PATH_MAX];
        ck_assert_int_eq(railguard("exec", dir, sizeof(dir), "%s", cases[i][0]), 2);
        ck_assert_msg(!strncmp(g_out, cases[i][1], strlen(cases[i][1])) &&
                          g_out[strlen(cases[i][1])] == '\n',
                      "%s: want first line '%s', got:\n%s", cases[i][0], cases[i][1], g_out);
        ck_assert_msg(!g_out[strlen(cases[i][1]) + 1], "%s: more than one line:\n%s", cases[i][0],
                      g_out);
        ck_assert_int_ne(access(dir, F_OK), 0); /* nothing made */
    }
}
END_TEST

Suite *rg_suite_it_exec(void)
{
    Suite *s = suite_create("it_exec");
    TCase *t = tcase_create("exec");
    tcase_add_unchecked_fixture(t, setup, NULL);
    tcase_set_timeout(t, 600);
    tcase_add_test(t, test_clean_and_detected);
    tcase_add_test(t, test_too_slow);
    tcase_add_test(t, test_swallowed_and_not_exercised);
    tcase_add_test(t, test_deadlock_backtrace);
    tcase_add_test(t, test_leaks);
    tcase_add_test(t, test_forking_program);
    tcase_add_test(t, test_service);
    tcase_add_test(t, test_ranks);
    tcase_add_test(t, test_pingpong);
    tcase_add_test(t, test_ucmatose_swallows);
    tcase_add_test(t, test_run_exec_scenarios);
    tcase_add_test(t, test_sweep_exec_scenario);
    tcase_add_test(t, test_launcher);
    tcase_add_test(t, test_rank_wrapper);
    tcase_add_test(t, test_bad_flags);
    suite_add_tcase(s, t);
    return s;
}
