/* SPDX-License-Identifier: MIT */
/*
 * `railguard run` end to end. Against tests/harness/bad_plugin.c, a transport built to fail in
 * each way, every verdict must come out as designed (detected, SILENT_CORRUPTION by data, by
 * guard band and by a changed send buffer, DEADLOCK with a backtrace, CRASH, ERROR for a
 * missing operation), the exit status must be 1 and the reports must say the same. Against
 * the reference transport on rxe, a clean scenario and a flushed one must pass. Bad scenario
 * files and bad fault rules must stop the run at once with one line.
 */
#include "common/rg_check.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_bin[PATH_MAX], g_bad[PATH_MAX], g_tmp[PATH_MAX], g_devs[256];
static char g_out[65536];

static void setup(void)
{
    rg_check_build_file(g_bin, sizeof(g_bin), "bin/railguard");
    rg_check_build_file(g_bad, sizeof(g_bad), "lib/rg-test-bad-plugin.so");
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/rg-it-run.%ld", (long)getpid());
    mkdir(g_tmp, 0755);
    const char *d = getenv("RG_SOFTROCE_DEVICES");
    ck_assert_msg(d && *d, "RG_SOFTROCE_DEVICES is empty");
    snprintf(g_devs, sizeof(g_devs), "%s", d);
    for (char *p = g_devs; *p; p++)
        if (*p == ' ')
            *p = ',';
}

/* Writes a file in the test's directory; returns its path (the caller frees it). */
static char *write_file(const char *name, const char *text)
{
    char *path = malloc(PATH_MAX + 64);
    ck_assert_ptr_nonnull(path);
    snprintf(path, PATH_MAX + 64, "%s/%s", g_tmp, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Runs railguard with argv (NULL-terminated, after the program name), output into g_out. */
static int railguard(const char *mode, const char *const *args, double timeout_s)
{
    const char *env[] = {"RG_BAD_MODE", mode, NULL};
    return rg_check_cmd(g_bin, mode ? env : NULL, args, timeout_s, g_out, sizeof(g_out));
}

static const char *last_line(void)
{
    size_t n = strlen(g_out);
    while (n && g_out[n - 1] == '\n')
        n--;
    g_out[n] = '\0';
    const char *p = strrchr(g_out, '\n');
    return p ? p + 1 : g_out;
}

/* The end of the last run's output, for a failure's message: what it said when it failed. */
static const char *out_tail(void)
{
    size_t n = strlen(g_out);
    return n > 4000 ? g_out + n - 4000 : g_out;
}

/* A whole file (at most 256 KiB) named by a format, in a static buffer; fails when missing. */
static const char *slurp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *slurp(const char *fmt, ...)
{
    static char buf[256 * 1024];
    char path[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f, "no %s", path);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void expect_in(const char *needle)
{
    ck_assert_msg(strstr(g_out, needle), "'%s' not in:\n%s", needle, g_out);
}

/* The verdicts of scenario 0 in <out>/report.json, comma-joined. */
static const char *json_verdicts(const char *out)
{
    static char v[256];
    char path[PATH_MAX + 200];
    json_error_t je;
    snprintf(path, sizeof(path), "%s/report.json", out);
    json_t *j = json_load_file(path, 0, &je);
    ck_assert_msg(j, "%s: %s", path, je.text);
    json_t *ranks = json_object_get(json_array_get(json_object_get(j, "scenarios"), 0), "ranks");
    v[0] = '\0';
    for (size_t i = 0; i < json_array_size(ranks); i++) {
        strcat(v, i ? "," : "");
        strcat(v, json_string_value(json_object_get(json_array_get(ranks, i), "verdict")));
    }
    json_decref(j);
    return v;
}

/* The real libibverbs' file, found from a symbol of it, and a symlink to it by another name. */
static void verbs_symlink(char *link, size_t len)
{
    Dl_info info;
    char *real;
    ck_assert(dladdr((void *)&ibv_get_device_list, &info) && info.dli_fname);
    real = realpath(info.dli_fname, NULL);
    ck_assert_ptr_nonnull(real);
    snprintf(link, len, "%s/libnot-verbs.so", g_tmp);
    unlink(link);
    ck_assert_int_eq(symlink(real, link), 0);
    free(real);
}

static const struct {
    const char *mode;
    const char *verbs; /* RG_BAD_VERBS: NULL default, "none", "symlink" or a bare name */
    const char *faults;
    const char *program;
    const char *verdicts;
    const char *detail;
} bad_cases[] = {
    /* An error with no fault fired is the transport's own failure, not a detection. */
    {"error", NULL, NULL, "  - {op: all_reduce, count: 10}\n",
     "ERROR_WITHOUT_FAULT,ERROR_WITHOUT_FAULT",
     "no planned fault fired on any rank: bad plugin: injected error on rank 0"},
    {"stale", NULL, NULL, "  - {op: all_reduce, count: 10}\n",
     "SILENT_CORRUPTION,SILENT_CORRUPTION", "result element 0 is 0x5a5a5a5a"},
    {"overrun", NULL, NULL, "  - {op: broadcast, dtype: int32, count: 10, root: 0}\n",
     "SILENT_CORRUPTION,SILENT_CORRUPTION", "the guard band after it was overwritten"},
    {"clobber", NULL, NULL, "  - {op: sendrecv, dtype: uint8, count: 10, from: 0, to: 1}\n",
     "SILENT_CORRUPTION,SILENT_CORRUPTION", "the send buffer changed"},
    {"crash", NULL, NULL, "  - {op: all_reduce, count: 10}\n", "CRASH,CRASH",
     "killed by signal 11"},
    /* Judged when it is one (no rank moved past the 1 s timeout), or at the 3 s deadline on
     * a machine slow enough to stretch its margin: either way in that call. */
    {"hang", NULL, NULL, "  - {op: all_reduce, count: 10}\n", "DEADLOCK,DEADLOCK",
     " in all_reduce float32 sum count 10 since "},
    /* What a v1 table lacks (a NULL operation, no mem_register) is skipped, never run. */
    {"stale", NULL, NULL, "  - {op: all_gather, count: 10}\n", "unsupported,unsupported",
     "not run: all_gather float32 count 10: all_gather not declared"},
    {"error", NULL, NULL, "  - {op: all_reduce, count: 10}\nzero_copy: true\n",
     "unsupported,unsupported", "not run: bad: zero_copy needs mem_register and mem_deregister"},
    /* A poll failure the fault caused, reported: detected, with the fault's evidence. */
    {"poll", NULL, "[negpoll nth=2]", "  - {op: barrier, repeat: 3}\nexpect: {all: detected}\n",
     "detected,detected", "bad plugin: ibv_poll_cq returned -1"},
    /* A fault that never fires makes the run prove nothing, whatever the ranks returned. */
    {"poll", NULL, "[count, negpoll nth=50, {rule: 'negpoll nth=60', optional: true}]",
     "  - {op: barrier, repeat: 3}\n", "NOT_EXERCISED,NOT_EXERCISED",
     "faults item 2 'negpoll nth=50' (line 4) matched 8 times, fired 0 times on every rank"},
    /* Verbs the shim never saw: the rank is not instrumented, so its ok means nothing. */
    {"poll", "none", "[negpoll nth=2]", "  - {op: barrier, repeat: 3}\n", "ERROR,ERROR",
     "not instrumented: the shim saw no verbs calls"},
    /* A transport that carries on after its error: the repeated step returns success. */
    {"carryon", NULL, "[negpoll nth=2]", "  - {op: barrier, repeat: 3}\nexpect: {all: detected}\n",
     "NOT_FAIL_STOP,NOT_FAIL_STOP", "the step, repeated after its error, returned success"},
    /* A rank that gave its verdict and then exited non-zero crashed at exit: not ok. */
    {"atexit", NULL, NULL, "", "CRASH,CRASH", "exited with status 7 after its verdict"},
    /* libibverbs dlopen-ed under another name is still libibverbs: the fault fires. */
    {"poll", "symlink", "[negpoll nth=2]",
     "  - {op: barrier, repeat: 3}\nexpect: {all: detected}\n", "detected,detected",
     "bad plugin: ibv_poll_cq returned -1"},
    /* A bare name found only through the plugin's own DT_RPATH ($ORIGIN), as JACCL finds
     * its librdma.dylib: the shim's dlopen must search as the plugin would, then wrap it. */
    {"poll", "librg-test-verbs-beside.so", "[negpoll nth=2]",
     "  - {op: barrier, repeat: 3}\nexpect: {all: detected}\n", "detected,detected",
     "bad plugin: ibv_poll_cq returned -1"},
};

START_TEST(test_bad_transport_verdicts)
{
    char sc[1024], out[PATH_MAX + 32], name[32], link[PATH_MAX + 64];
    snprintf(sc, sizeof(sc),
             "ranks: 2\ntimeout: 1\ndeadline: 3\n%s%s%sprogram:\n"
             "  - {op: barrier}\n%s",
             bad_cases[_i].faults ? "faults: " : "",
             bad_cases[_i].faults ? bad_cases[_i].faults : "", bad_cases[_i].faults ? "\n" : "",
             bad_cases[_i].program);
    snprintf(name, sizeof(name), "bad%d.yaml", _i);
    char *path = write_file(name, sc);
    snprintf(out, sizeof(out), "%s/out%d", g_tmp, _i);
    if (bad_cases[_i].verbs && !strcmp(bad_cases[_i].verbs, "symlink")) {
        verbs_symlink(link, sizeof(link));
        setenv("RG_BAD_VERBS", link, 1);
    } else if (bad_cases[_i].verbs) {
        setenv("RG_BAD_VERBS", bad_cases[_i].verbs, 1);
    }
    /* --json and --junit are extra copies: DIR's own report.json and junit.xml stay. */
    char json_copy[PATH_MAX + 32], junit_copy[PATH_MAX + 32], own[PATH_MAX + 64];
    snprintf(json_copy, sizeof(json_copy), "%s/copy%d.json", g_tmp, _i);
    snprintf(junit_copy, sizeof(junit_copy), "%s/copy%d.xml", g_tmp, _i);
    /* One attempt: these are the transport's verdicts, whatever the machine's speed (a build
     * under --coverage starts its ranks slowly enough to earn a second, scaled attempt). */
    const char *args[] = {"run", "--transport", g_bad,     "--devices", g_devs,     "--out",
                          out,   "--json",      json_copy, "--junit",   junit_copy, "--slow-scale",
                          "1",   path,          NULL};
    bool pass = strstr(bad_cases[_i].verdicts, "detected") != NULL;
    bool skip = strstr(bad_cases[_i].verdicts, "unsupported") != NULL;
    ck_assert_int_eq(railguard(bad_cases[_i].mode, args, 120), (pass || skip) ? 0 : 1);
    ck_assert_str_eq(last_line(), skip   ? "0 passed, 0 failed, 1 skipped (unsupported by the "
                                           "transport)"
                                  : pass ? "1 passed, 0 failed"
                                         : "0 passed, 1 failed");
    ck_assert_str_eq(json_verdicts(out), bad_cases[_i].verdicts);
    ck_assert_int_eq(access(json_copy, R_OK), 0);
    ck_assert_int_eq(access(junit_copy, R_OK), 0);
    snprintf(own, sizeof(own), "%s/junit.xml", out);
    ck_assert_int_eq(access(own, R_OK), 0);
    if (skip) {
        expect_in("SKIP  bad");
    } else if (!pass) {
        expect_in("reproduce: ");
        expect_in("first failure: rank ");
    } else {
        /* The live line says how often each rule fired: negpoll nth=2, once on each rank. */
        expect_in("fired 2");
    }
    /* Each rank's detail is in the result, whichever rank the first-failure line names. */
    const char *res = slurp("%s/000-bad%d/result.json", out, _i);
    ck_assert_msg(strstr(res, bad_cases[_i].detail), "%s not in %s", bad_cases[_i].detail, res);
    if (!strcmp(bad_cases[_i].mode, "hang")) {
        /* The rank wrote it itself, inside the transport's call, called from the worker. */
        const char *bt = slurp("%s/000-bad%d/rank0.backtrace", out, _i);
        ck_assert_msg(strstr(bt, "asked for a backtrace (the runner judged it hung)") &&
                          strstr(bt, "rg-test-bad-plugin.so(") && strstr(bt, "rg_worker_main"),
                      "backtrace:\n%s", bt);
        /* The rank was killed, yet its shim's summary is there: it was asked for one first. */
        const char *ev = slurp("%s/000-bad%d/rank0.events.jsonl", out, _i);
        ck_assert_msg(strstr(ev, "\"event\":\"totals\"") && strstr(ev, "\"why\":\"snapshot\"") &&
                          strstr(ev, "\"event\":\"cq\""),
                      "no snapshot summary in the events:\n%s", ev);
    }
    if (!strcmp(bad_cases[_i].mode, "crash")) {
        const char *bt = slurp("%s/000-bad%d/rank1.backtrace", out, _i);
        ck_assert_msg(strstr(bt, "crashed (signal 11)") && strstr(bt, "rg-test-bad-plugin.so("),
                      "backtrace:\n%s", bt);
    }
    char junit[PATH_MAX + 200];
    snprintf(junit, sizeof(junit), "%s/junit.xml", out);
    ck_assert_int_eq(access(junit, R_OK), 0);
    free(path);
}
END_TEST

/*
 * --deadline: a hang judged at the cut deadline, not the scenario's 60 s; the cut kept in the
 * result and in the reproduce line; a scenario whose timeout leaves no room (2 x 20 s is more
 * than its 30 s) keeps its own.
 */
START_TEST(test_deadline_cut)
{
    char *path = write_file("cut.yaml", "ranks: 2\ntimeout: 1\nprogram:\n"
                                        "  - {op: all_reduce, count: 10}\n");
    char out[PATH_MAX + 32];
    snprintf(out, sizeof(out), "%s/cut", g_tmp);
    const char *args[] = {"run",
                          "--transport",
                          g_bad,
                          "--devices",
                          g_devs,
                          "--out",
                          out,
                          "--deadline",
                          "4",
                          "--slow-scale",
                          "1",
                          path,
                          "--hang-at-deadline",
                          NULL};
    ck_assert_int_eq(railguard("hang", args, 120), 1);
    ck_assert_str_eq(json_verdicts(out), "DEADLOCK,DEADLOCK");
    expect_in("still running after the 4 s deadline");
    expect_in(" --deadline 4 ");
    expect_in(" --hang-at-deadline ");
    const char *res = slurp("%s/000-cut/result.json", out);
    ck_assert_msg(strstr(res, "\"deadline_cut_s\": 4"), "%s", res);
    free(path);
    path = write_file("nocut.yaml", "ranks: 2\ntimeout: 20\ndeadline: 30\nprogram:\n"
                                    "  - {op: barrier}\n");
    snprintf(out, sizeof(out), "%s/nocut", g_tmp);
    args[6] = out;
    args[11] = path;
    ck_assert_int_eq(railguard(NULL, args, 120), 0);
    res = slurp("%s/000-nocut/result.json", out);
    ck_assert_msg(!strstr(res, "deadline_cut_s"), "%s", res);
    free(path);
}
END_TEST

/*
 * run --hosts: railguard as its own launcher. A stand-in ssh on PATH runs each command here and
 * logs it; host "far" writes into a tree of its own (its --out rewritten), so it does not see
 * the token and its rank's files must be brought back; host "down" cannot be reached. Both
 * scenarios judged as report judges; the secret travels on stdin, never on a command line, and
 * reaches both ranks (their clocks are measured through it); an earlier launch's rank result
 * is never judged as a later one's.
 */
START_TEST(test_hosts_launch)
{
    char bin[PATH_MAX + 32], sshlog[PATH_MAX + 32], path[PATH_MAX * 2], coord[64];
    char out[PATH_MAX + 32];
    snprintf(bin, sizeof(bin), "%s/fakebin", g_tmp);
    snprintf(sshlog, sizeof(sshlog), "%s/ssh.log", g_tmp);
    snprintf(out, sizeof(out), "%s/hosts", g_tmp);
    ck_assert_int_eq(mkdir(bin, 0755) == 0 || errno == EEXIST, 1);
    static char script[PATH_MAX * 8];
    snprintf(script, sizeof(script),
             "#!/bin/sh\n"
             "for a; do case $a in ControlMaster=yes) m=1;; ControlPath=*) p=${a#*=};; esac; "
             "done\n"
             "while [ $# -gt 2 ]; do shift; done\n"
             "if [ -n \"$m\" ]; then\n"
             "  [ \"$2\" = down ] && exit 255\n"
             "  echo \"master $2: $p\" >> %s; : > \"$p\"\n"
             "  trap 'echo \"master $2 stopped\" >> %s; rm -f \"$p\"; exit 0' TERM\n"
             "  while :; do sleep 1 & wait $!; done\n"
             "fi\n"
             "echo \"$1 via $p\" >> %s\n"
             "c=$2\n"
             "[ \"$1\" = far ] && c=$(printf '%%s' \"$2\" | sed \"s|%s\\([/ ']\\)|%s-far\\1|g\")\n"
             "echo \"$1: $c\" >> %s\n"
             "case \"$1\" in down) exit 255;; esac\n"
             "exec sh -c \"$c\"\n",
             sshlog, sshlog, sshlog, out, out, sshlog);
    snprintf(path, sizeof(path), "%s/ssh", bin);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(script, f);
    fclose(f);
    ck_assert_int_eq(chmod(path, 0755), 0);
    char *devs = write_file("hosts-devices.json", "[[null, \"rxe0\"], [\"rxe0\", null]]\n");
    char *clean = write_file("hosts-clean.yaml", "ranks: 2\nprogram:\n"
                                                 "  - {op: all_reduce, count: 1021}\n");
    char *flush =
        write_file("hosts-flush.yaml", "ranks: 2\ntimeout: 3\nfaults:\n"
                                       "  - error status=WR_FLUSH_ERR op=recv rank=1 nth=2\n"
                                       "program:\n  - {op: all_reduce, count: 20000, repeat: 3}\n"
                                       "expect:\n  all: any\n  1: detected\n");
    const char *old_path = getenv("PATH");
    char *saved = strdup(old_path ? old_path : "/usr/bin:/bin");
    snprintf(path, sizeof(path), "%s:%s", bin, saved);
    setenv("PATH", path, 1);
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", rg_check_free_port());
    const char *args[] = {"run", "--hosts", "near,far", "--coordinator", coord, "--devices-file",
                          devs,  "--out",   out,        clean,           flush, NULL};
    int st = railguard(NULL, args, 300);
    ck_assert_msg(st == 0, "exit %d:\n%s", st, g_out);
    expect_in("PASS  hosts-clean");
    expect_in("PASS  hosts-flush");
    ck_assert_str_eq(last_line(), "2 passed, 0 failed");
    const char *log = slurp("%s", sshlog);
    ck_assert_msg(strstr(log, "near: sh -c 'rm -f ") &&
                      strstr(log, "read -r RG_SECRET && export RG_SECRET RG_RANK=0 RG_SIZE=2 && "
                                  "exec ") &&
                      strstr(log, "read -r RG_SECRET && export RG_SECRET RG_RANK=1 RG_SIZE=2 && "
                                  "exec ") &&
                      strstr(log, " run --external --coordinator ") &&
                      strstr(log, "near: sh -c 'test -e ") && strstr(log, "far: sh -c 'cd ") &&
                      strstr(log, " && tar -cf - rank1.*'"),
                  "%s", log);
    ck_assert_msg(!strstr(log, "RG_SECRET="), "the secret on a command line:\n%s", log);
    /* One shared connection a host, up before the ranks' calls, which go through it, and
     * stopped at the end with its directory. */
    const char *mnear = strstr(log, "master near: /tmp/rg-ssh."),
               *mfar = strstr(log, "master far: ");
    ck_assert_msg(mnear && mfar && strstr(log, "master near stopped") &&
                      strstr(log, "master far stopped"),
                  "%s", log);
    char mux[64] = "";
    sscanf(mnear + strlen("master near: "), "%40[^ \n]", mux);
    char *slash = strrchr(mux, '/');
    ck_assert_msg(slash && !strcmp(slash, "/0"), "%s", log);
    *slash = '\0';
    char via[96];
    snprintf(via, sizeof(via), "near via %s/0\n", mux);
    ck_assert_msg(strstr(log, via) && strstr(log, via) > mnear, "no '%s' after the master:\n%s",
                  via, log);
    snprintf(via, sizeof(via), "far via %s/1\n", mux);
    ck_assert_msg(strstr(log, via), "no '%s':\n%s", via, log);
    ck_assert_msg(access(mux, F_OK) != 0, "%s still there after the run", mux);
    /* Rank 1's files came back from far's own tree; its clock was measured with the secret. */
    slurp("%s-far/hosts-flush/rank1.result.json", out);
    slurp("%s/hosts-flush/rank1.result.json", out);
    const char *res = slurp("%s/hosts-flush/result.json", out);
    ck_assert_msg(strstr(res, "\"passed\": true"), "%s", res);
    res = slurp("%s/hosts-flush/hosts-rank1.log", out);
    ck_assert_msg(strstr(res, "rank 1: clock ") && !strstr(res, "not measured"), "%s", res);
    /* A host that cannot be reached: said, named, and the scenario not judged -- though the
     * first launch left a passing rank 1 result of the same name in the same --out. */
    char qdir[PATH_MAX + 32], quick[PATH_MAX + 64];
    snprintf(qdir, sizeof(qdir), "%s/quick", g_tmp);
    ck_assert_int_eq(mkdir(qdir, 0755) == 0 || errno == EEXIST, 1);
    snprintf(quick, sizeof(quick), "%s/hosts-clean.yaml", qdir);
    f = fopen(quick, "w");
    ck_assert_ptr_nonnull(f);
    fputs("ranks: 2\ntimeout: 2\ndeadline: 5\nprogram:\n  - {op: barrier}\n", f);
    fclose(f);
    slurp("%s/hosts-clean/rank1.result.json", out);
    const char *down[] = {"run", "--hosts", "near,down", "--coordinator", coord, "--devices-file",
                          devs,  "--out",   out,         quick,           NULL};
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", rg_check_free_port());
    st = railguard(NULL, down, 300);
    setenv("PATH", saved, 1);
    ck_assert_msg(st == 2, "exit %d:\n%s", st, g_out);
    expect_in("hosts-clean: rank 1 on down: did not run to a verdict (exit 255)");
    expect_in("hosts-clean: not judged");
    ck_assert_str_eq(last_line(), "0 passed, 0 failed, 1 not judged (their ranks' results could "
                                  "not be brought together)");
    snprintf(path, sizeof(path), "%s/hosts-clean/rank1.result.json", out);
    ck_assert_int_eq(access(path, F_OK), -1);
    free(saved);
    free(devs);
    free(clean);
    free(flush);
}
END_TEST

/*
 * A hang judged when it is one: both ranks inside all_reduce, asleep (no post, completion,
 * step, CPU or packet), judged DEADLOCK once they have been quiet past the 1 s timeout and its
 * margin -- long before the 60 s deadline -- with the same evidence (the shim's summaries, a
 * backtrace each) as at the deadline. One rank that left first is named in the other's hang.
 */
START_TEST(test_hang_judged_early)
{
    char *path = write_file("early.yaml", "ranks: 2\ntimeout: 1\ndeadline: 60\nprogram:\n"
                                          "  - {op: barrier}\n"
                                          "  - {op: all_reduce, count: 10}\n");
    char out[PATH_MAX + 32];
    snprintf(out, sizeof(out), "%s/early", g_tmp);
    const char *args[] = {"run", "--transport",  g_bad, "--devices", g_devs, "--out",
                          out,   "--slow-scale", "1",   path,        NULL};
    ck_assert_int_eq(railguard("hang", args, 120), 1);
    ck_assert_str_eq(json_verdicts(out), "DEADLOCK,DEADLOCK");
    const char *res = slurp("%s/000-early/result.json", out);
    const char *d = strstr(res, "no rank moved for ");
    ck_assert_msg(d && strstr(d, "past the 1 s timeout every wait of the transport's was told"),
                  "%s", res);
    double quiet = 0, at = 0;
    ck_assert_int_eq(sscanf(d, "no rank moved for %lf s", &quiet), 1);
    const char *j = strstr(d, "judged at ");
    ck_assert_msg(j && sscanf(j, "judged at %lf s, before the 60 s deadline", &at) == 1, "%s", d);
    /* Quiet past the window (the timeout, 1 s, a tenth, the lag), and judged then, not at 60. */
    ck_assert_msg(quiet > 2.1 && at >= quiet && at < 30, "quiet %.2f s, judged at %.2f s", quiet,
                  at);
    ck_assert_msg(strstr(d, "in all_reduce float32 sum count 10 since "), "%s", d);
    for (int r = 0; r < 2; r++) {
        const char *bt = slurp("%s/000-early/rank%d.backtrace", out, r);
        ck_assert_msg(strstr(bt, "asked for a backtrace (the runner judged it hung)") &&
                          strstr(bt, "rg-test-bad-plugin.so("),
                      "rank %d: %s", r, bt);
        const char *ev = slurp("%s/000-early/rank%d.events.jsonl", out, r);
        ck_assert_msg(strstr(ev, "\"event\":\"totals\""), "rank %d: no summary: %s", r, ev);
    }
    free(path);
}
END_TEST

/* Rank 1 returns wrong data and leaves; rank 0 hangs. The first failure is rank 1's, and the
 * hang says it began after rank 1 left. */
START_TEST(test_first_failure_named)
{
    char *path = write_file("first.yaml", "ranks: 2\ntimeout: 1\ndeadline: 4\nprogram:\n"
                                          "  - {op: barrier}\n"
                                          "  - {op: all_reduce, count: 10}\n");
    char out[PATH_MAX + 32];
    snprintf(out, sizeof(out), "%s/first", g_tmp);
    setenv("RG_BAD_MODE_1", "stale", 1);
    const char *args[] = {"run",   "--transport", g_bad, "--devices", g_devs,
                          "--out", out,           path,  NULL};
    ck_assert_int_eq(railguard("hang", args, 120), 1);
    ck_assert_str_eq(json_verdicts(out), "DEADLOCK,SILENT_CORRUPTION");
    expect_in("first failure: rank 1: SILENT_CORRUPTION at ");
    expect_in(" in all_reduce float32 sum count 10: result element 0 is 0x5a5a5a5a");
    const char *res = slurp("%s/000-first/result.json", out);
    ck_assert_msg(strstr(res, "waiting since rank 1 left with SILENT_CORRUPTION at "), "%s", res);
    unsetenv("RG_BAD_MODE_1");
    free(path);
}
END_TEST

/*
 * Too slow to judge, for railguard run's own ranks: rank 1's start held back by a static
 * busybox wrapper (no shim in it) past the 4 s deadline on the first attempt only (its worker
 * says --time-scale 1). The runner measures that rank 1 had not started, runs the scenario
 * again with every time x4, and judges it by that attempt: PASS, the first kept in
 * attempt-1/. Held back on both attempts: SLOW, exit 3.
 */
START_TEST(test_too_slow)
{
    char *sc = write_file("slowstart.yaml", "ranks: 2\ntimeout: 2\ndeadline: 4\nprogram:\n"
                                            "  - {op: barrier}\n"
                                            "  - {op: all_reduce, count: 10}\n");
    char *hold = write_file("hold.sh", "case \" $* \" in *\" --rank 1 \"*) case \" $* $HOLD_ALWAYS "
                                       "\" in *\" --time-scale 1 \"*) sleep 20;; esac;; esac\n"
                                       "exec \"$@\"\n");
    char out[PATH_MAX + 32], wrap[PATH_MAX + 64];
    snprintf(out, sizeof(out), "%s/slow", g_tmp);
    snprintf(wrap, sizeof(wrap), "busybox sh %s", hold);
    const char *args[] = {"run", "--devices", g_devs, "--out", out, "--rank-wrapper",
                          wrap,  sc,          NULL};
    ck_assert_int_eq(railguard(NULL, args, 300), 0);
    expect_in("PASS  slowstart");
    expect_in("      judged on a second attempt with every time x4: the first (in attempt-1/) "
              "failed when rank 0 ran out of the 4 s deadline while rank 1 had not started ");
    ck_assert_str_eq(json_verdicts(out), "ok,ok");
    const char *res = slurp("%s/000-slowstart/result.json", out);
    ck_assert_msg(strstr(res, "\"attempts\": 2") && strstr(res, "\"time_scale\": 4"), "%s", res);
    res = slurp("%s/000-slowstart/attempt-1/result.json", out); /* the first, as judged */
    ck_assert_msg(strstr(res, "\"verdict\": \"DEADLOCK\"") && strstr(res, "\"attempts\": 1"), "%s",
                  res);
    slurp("%s/000-slowstart/attempt-1/rank0.status", out);
    /* The held rank gets no gdb: it would show the wrapper, and cost seconds a process. */
    res = slurp("%s/000-slowstart/attempt-1/rank1.backtrace", out);
    ck_assert_msg(strstr(res, "no backtrace: rank 1's program had not started (the shim never "
                              "loaded in it) when it was stopped"),
                  "%s", res);

    setenv("HOLD_ALWAYS", " --time-scale 1 ", 1);
    snprintf(out, sizeof(out), "%s/slow-always", g_tmp); /* a fresh DIR per run, as documented */
    ck_assert_int_eq(railguard(NULL, args, 300), 3);
    unsetenv("HOLD_ALWAYS");
    expect_in("SLOW  slowstart");
    expect_in("and with every time x4 rank 0 ran out of the 16 s deadline while rank 1 had not "
              "started ");
    ck_assert_str_eq(last_line(), "0 passed, 0 failed, 1 too slow to judge");
    free(sc);
    free(hold);
}
END_TEST

/*
 * A wire fault where no wire is: the ranks share each rail's soft-RoCE device, whose traffic
 * never leaves it, so netem on the device under it passes nothing and the rule proves nothing
 * -- NOT_EXERCISED, said why; the netem was really put in place and taken away (its evidence),
 * and the device is left as it was.
 */
START_TEST(test_wire_on_one_device)
{
    char *sc = write_file("wire1.yaml", "ranks: 2\nqp: rc\nfaults:\n  - wire loss=1% rail=0\n"
                                        "program:\n  - {op: all_reduce, count: 100000}\n");
    char out[PATH_MAX + 32];
    snprintf(out, sizeof(out), "%s/wire1", g_tmp);
    const char *args[] = {"run", "--devices", g_devs, "--out", out, sc, NULL};
    ck_assert_int_eq(railguard(NULL, args, 120), 1);
    expect_in("NOT_EXERCISED,NOT_EXERCISED");
    expect_in("faults item 1 'wire loss=1% rail=0' (line 4) put ");
    const char *ev = slurp("%s/000-wire1/rank0.wire.jsonl", out);
    ck_assert_msg(strstr(ev, "\"event\":\"wire_on\"") && strstr(ev, "\"spec\":\"loss 1%\"") &&
                      strstr(ev, "\"event\":\"wire_off\""),
                  "%s", ev);
    /* Undone: a second run puts its netem on the same device again. */
    ck_assert_int_eq(railguard(NULL, args, 120), 1);
    ck_assert_msg(!strstr(g_out, "could not"), "%s", g_out);
    free(sc);
}
END_TEST

START_TEST(test_bad_input_stops_the_run)
{
    char *good = write_file("good.yaml", "ranks: 2\nprogram:\n  - {op: barrier}\n");
    char *typo = write_file("typo.yaml", "ranks: 2\nprogram:\n  - {op: barier}\n");
    char *rule =
        write_file("rule.yaml", "ranks: 2\nfaults:\n  - negpoll nth=1\n  - bogus x=1\nprogram:\n"
                                "  - {op: barrier}\n");
    char out[PATH_MAX + 32];
    snprintf(out, sizeof(out), "%s/never", g_tmp);
    const char *a1[] = {"run", "--devices", g_devs, "--out", out, good, typo, NULL};
    ck_assert_int_eq(railguard(NULL, a1, 60), 2);
    const char *nl = strchr(g_out, '\n');
    ck_assert_msg(strstr(g_out, "typo.yaml:3: ") && nl && !nl[1], "not one line:\n%s", g_out);
    ck_assert_int_ne(access(out, F_OK), 0); /* nothing ran, nothing was written */
    const char *a2[] = {"run", "--devices", g_devs, "--out", out, rule, NULL};
    ck_assert_int_eq(railguard(NULL, a2, 60), 2);
    expect_in("rule.yaml:4: faults item 2: unknown fault 'bogus'");
    const char *a3[] = {"run", "--devices", g_devs, "-j", "0", good, NULL};
    ck_assert_int_eq(railguard(NULL, a3, 60), 2);
    expect_in("-j: must be 1..64 '0'");
    /* Two scenarios at once would share the wire under the devices. */
    char *wire = write_file("wire.yaml", "ranks: 2\nfaults:\n  - wire loss=1%\nprogram:\n"
                                         "  - {op: barrier}\n");
    const char *a3b[] = {"run", "--devices", g_devs, "-j", "2", "--out", out, good, wire, NULL};
    ck_assert_int_eq(railguard(NULL, a3b, 60), 2);
    expect_in("wire.yaml:3: faults item 1: a wire fault needs the devices to itself: run it with "
              "-j 1\n");
    free(wire);
    const char *a4[] = {"run", "--devices", g_devs, "--bogus", good, NULL};
    ck_assert_int_eq(railguard(NULL, a4, 60), 2);
    expect_in("railguard run: unknown option '--bogus'\n");
    const char *a4b[] = {"run", "--devices", g_devs, "--out", NULL};
    ck_assert_int_eq(railguard(NULL, a4b, 60), 2);
    expect_in("railguard run: --out needs a value\n");
    /* Preflight: a device that is not here, a shim that cannot be preloaded, a transport that
     * is not one. Each stops the run with one line before any scenario could pass. */
    const char *a5[] = {"run", "--devices", "rxe9", "--out", out, good, NULL};
    ck_assert_int_eq(railguard(NULL, a5, 60), 2);
    expect_in("railguard run: preflight: device 'rxe9' is not an RDMA device here (");
    const char *a6[] = {"run",   "--devices", g_devs, "--shim", "/etc/passwd",
                        "--out", out,         good,   NULL};
    ck_assert_int_eq(railguard(NULL, a6, 60), 2);
    expect_in("railguard run: preflight: --shim /etc/passwd: cannot be loaded: ");
    const char *a7[] = {"run",   "--devices", g_devs, "--transport", "/etc/passwd",
                        "--out", out,         good,   NULL};
    ck_assert_int_eq(railguard(NULL, a7, 60), 2);
    expect_in("railguard run: preflight: --transport /etc/passwd: cannot be loaded: ");
    nl = strchr(g_out, '\n');
    ck_assert_msg(nl && !nl[1], "not one line:\n%s", g_out);
    ck_assert_int_ne(access(out, F_OK), 0);
    free(good);
    free(typo);
    free(rule);
}
END_TEST

/* The reference transport on rxe: a clean scenario and a flushed one pass, side by side. */
START_TEST(test_reference_transport)
{
    char *a = write_file("clean.yaml", "ranks: 3\nprogram:\n"
                                       "  - {op: all_reduce, dtype: float32, count: 1021}\n"
                                       "  - {op: all_gather, dtype: int8, count: 3}\n"
                                       "  - {op: broadcast, dtype: uint16, count: 9, root: 2}\n");
    char *b = write_file("flush.yaml", "ranks: 2\ntimeout: 3\nfaults:\n"
                                       "  - error status=WR_FLUSH_ERR op=recv rank=1 nth=3\n"
                                       "program:\n  - {op: all_reduce, count: 20000, repeat: 3}\n"
                                       "expect:\n  all: any\n  1: detected\n");
    /* Zero-copy: rank 0's sends go from its registered buffers until one's completion is
     * flushed (the 12th; 4 hellos come first); the call must return an error only after
     * nothing reads them any more, which RG_DEBUG has the transport say. */
    setenv("RG_DEBUG", "1", 1);
    char *z = write_file("zflush.yaml",
                         "ranks: 3\ntimeout: 3\nalgorithm: ring\nzero_copy: true\nfaults:\n"
                         "  - error status=WR_FLUSH_ERR op=send rank=0 nth=12\n"
                         "program:\n  - {op: all_gather, count: 100003}\n"
                         "  - {op: broadcast, count: 50021, root: 0}\n"
                         "expect:\n  all: any\n  0: detected\n");
    /* The reference's own header check, not a conformance rule (a flipped bit of another
     * transport's payload is no error it could see): the count in the header's bytes 16-19
     * (bit 130) damaged on arrival is refused and named, never taken as a credit. */
    char *k = write_file("credit.yaml", "ranks: 2\ntimeout: 5\nfaults:\n"
                                        "  - corrupt op=recv rank=1 step=0 nth=4 bit=130\n"
                                        "program:\n  - {op: all_reduce, count: 300000}\n"
                                        "expect:\n  0: detected@0:peer_abort\n"
                                        "  1: detected@0:protocol\n");
    char out[PATH_MAX + 32];
    snprintf(out, sizeof(out), "%s/ref", g_tmp);
    const char *args[] = {"run", "--devices", g_devs, "--out", out, "-j", "2", a, b, z, k, NULL};
    ck_assert_int_eq(railguard(NULL, args, 240), 0);
    ck_assert_str_eq(last_line(), "4 passed, 0 failed");
    expect_in("PASS  clean");
    expect_in("PASS  flush");
    expect_in("PASS  zflush");
    expect_in("PASS  credit");
    const char *res = slurp("%s/003-credit/result.json", out);
    ck_assert_msg(strstr(res, "rank 1: recv from rank 0 rail 0 (qp 0x") &&
                      strstr(res, "): message with a damaged credit count: seq "),
                  "%s", res);
    /* The flushed rank's events name the injected fault. */
    char ev[PATH_MAX + 64];
    snprintf(ev, sizeof(ev), "%s/001-flush/rank1.events.jsonl", out);
    FILE *f = fopen(ev, "r");
    ck_assert_msg(f, "no %s", ev);
    char line[2048];
    bool seen = false;
    while (fgets(line, sizeof(line), f))
        seen = seen || (strstr(line, "\"fault\":\"error\"") && strstr(line, "WR_FLUSH_ERR"));
    fclose(f);
    ck_assert_msg(seen, "no injected-fault event in %s", ev);
    /* The flush hit a collective sending in place (the connect's hellos never do), and the
     * transport tore the connection down before the call returned. */
    snprintf(ev, sizeof(ev), "%s/002-zflush/rank0.log", out);
    f = fopen(ev, "r");
    ck_assert_msg(f, "no %s", ev);
    seen = false;
    while (fgets(line, sizeof(line), f))
        seen = seen || strstr(line, "connection(s) with sends in flight or receives posted after "
                                    "a call that used the caller's memory in place failed");
    fclose(f);
    ck_assert_msg(seen, "%s: no zero-copy teardown after the flush", ev);
    free(a);
    free(b);
    free(z);
    free(k);
}
END_TEST

/* ---- external launch: ranks started by a launcher (here by hand, with srun's PMI names) ---- */
static void read_log(const char *log)
{
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(g_out, 1, sizeof(g_out) - 1, f);
    g_out[n] = '\0';
    fclose(f);
}

START_TEST(test_external_launch)
{
    char *devs = write_file("ext-devices.json", "[[null, \"rxe0\"], [\"rxe0\", null]]\n");
    char *clean = write_file("ext-clean.yaml", "ranks: 2\nprogram:\n"
                                               "  - {op: all_reduce, count: 1021}\n"
                                               "  - {op: broadcast, count: 9, root: 1}\n");
    char *flush =
        write_file("ext-flush.yaml", "ranks: 2\ntimeout: 3\nfaults:\n"
                                     "  - error status=WR_FLUSH_ERR op=recv rank=1 nth=2\n"
                                     "program:\n  - {op: all_reduce, count: 20000, repeat: 3}\n"
                                     "expect:\n  all: any\n  1: detected\n");
    char out[PATH_MAX + 32], coord[64], logs[2][PATH_MAX + 64];
    snprintf(out, sizeof(out), "%s/ext", g_tmp);
    for (int pass = 0; pass < 2; pass++) {
        /* A port nobody holds: both ranks are told rank 0's address, as a launcher would. */
        snprintf(coord, sizeof(coord), "127.0.0.1:%d", rg_check_free_port());
        /* The second pass without the sanitizer: its reproduce line must say so. */
        const char *args[] = {
            "run", "--external",     "--coordinator", coord, "--devices-file", devs, "--out",
            out,   "--no-ownership", flush,           NULL};
        if (!pass)
            args[8] = clean, args[9] = NULL;
        pid_t pids[2];
        for (int r = 0; r < 2; r++) {
            snprintf(logs[r], sizeof(logs[r]), "%s/ext%d-rank%d.log", g_tmp, pass, r);
            pids[r] = rg_check_launch_rank(g_bin, NULL, r, 2, args, logs[r]);
        }
        for (int r = 0; r < 2; r++) {
            int st = rg_check_wait_rank(pids[r], logs[r], 120);
            read_log(logs[r]);
            ck_assert_msg(st == 0, "rank %d exited %d:\n%s", r, st, g_out);
            ck_assert_str_eq(last_line(), "1 passed, 0 failed");
        }
        /* Rank 1's own line and verdict, then its total. */
        read_log(logs[1]);
        expect_in(pass ? "ext-flush[rank 1]" : "ext-clean[rank 1]");
        expect_in("'railguard report ");
        /* Both ranks judged together: the cross-rank rules hold, and the flush fired. */
        char dir[PATH_MAX + 64];
        snprintf(dir, sizeof(dir), "%s/%s", out, pass ? "ext-flush" : "ext-clean");
        const char *rep[] = {"report", dir, NULL};
        ck_assert_int_eq(railguard(NULL, rep, 60), 0);
        expect_in(pass ? "PASS  ext-flush" : "PASS  ext-clean");
        expect_in(pass ? "fired 1\n" : "fired -\n");
        ck_assert_str_eq(last_line(), "1 passed, 0 failed");
        /* One host, one clock: the merged timeline is written; and the directory, now holding
         * a report.json too, is still read as the launch it is when reported again. */
        char tr[PATH_MAX + 96];
        snprintf(tr, sizeof(tr), "%s/trace.json", dir);
        ck_assert_msg(access(tr, R_OK) == 0, "no %s", tr);
        ck_assert_int_eq(railguard(NULL, rep, 60), 0);
        expect_in(pass ? "PASS  ext-flush" : "PASS  ext-clean");
        read_log(logs[1]);
        /* The flushed receive is step 0's first data, but a peer that finished its set-up
         * first can have it arrive while rank 1's set-up still polls: then create is the
         * call that fails (detected@init), a race of the two ranks, seen once in the guest. */
        if (pass && !strstr(g_out, "  detected@init:completion  fired 1\n"))
            expect_in("  detected@0:completion  fired 1\n");
        else if (!pass)
            expect_in("  ok  fired -\n");
        ck_assert_str_eq(last_line(), "1 passed, 0 failed");
        /* Its reproduce line is an external launch's, with what this run was given. */
        const char *res = slurp("%s/rank1.result.json", dir);
        ck_assert_msg(strstr(res, "--external --coordinator "), "%s", res);
        ck_assert_msg(!pass == !strstr(res, "--no-ownership "), "%s", res);
    }
    /* A launcher whose size is not the scenario's is refused before anything runs. */
    const char *bad[] = {
        "run", "--external", "--coordinator", "127.0.0.1:1", "--devices-file", devs, clean, NULL};
    pid_t pid = rg_check_launch_rank(g_bin, NULL, 0, 3, bad, logs[0]);
    ck_assert_int_eq(rg_check_wait_rank(pid, logs[0], 120), 2);
    read_log(logs[0]);
    expect_in("the scenario has 2 ranks, the launcher started 3 (PMI_RANK)");
    /* A directory with no rank results is refused with one line. */
    const char *none[] = {"report", g_tmp, NULL};
    ck_assert_int_eq(railguard(NULL, none, 60), 2);
    expect_in("no rankR.result.json");
    free(devs);
    free(clean);
    free(flush);
}
END_TEST

/* The command line's refusals, each one line and exit 2 before anything runs; --help is not
 * one of them. */
START_TEST(test_cli_refusals)
{
    char file[PATH_MAX + 32];
    snprintf(file, sizeof(file), "%s/not-a-dir", g_tmp);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    static const struct {
        const char *args[8];
        const char *want;
    } cases[] = {
        {{"run", "--seed", " -1", "x.yaml"}, "railguard run: --seed: not a number 0..2^64-1 ' -1'"},
        {{"run", "--seed", "1x", "x.yaml"}, "railguard run: --seed: not a number"},
        {{"run", "-j", "0", "x.yaml"}, "railguard run: -j: must be 1..64 '0'"},
        {{"run", "--external", "--coordinator", "nocolon", "--devices-file", "/dev/null", "x.yaml"},
         "railguard run: --coordinator 'nocolon': expected host:port"},
        {{"run", "--out", "FILE", "x.yaml"}, "exists and is not a directory"},
        {{"run", "--fork-server", "--rank-wrapper", "env", "x.yaml"}, "not with --rank-wrapper"},
        {{"run", "--external", "--deadline", "5", "x.yaml"},
         "railguard run: --deadline is for a local run, not with --external"},
        {{"run", "--deadline", "0.5", "x.yaml"}, "railguard run: --deadline: "},
        {{"run", "--fail-fast", "--fork-server", "x.yaml"},
         "railguard run: --fail-fast is for scenarios run one by one here: not with "
         "--fork-server"},
        {{"run", "--fail-fast", "--external", "--coordinator", "h:1", "--devices-file", "/dev/null",
          "x.yaml"},
         "not with --external"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *args[9] = {NULL};
        for (int k = 0; k < 8 && cases[i].args[k]; k++)
            args[k] = strcmp(cases[i].args[k], "FILE") ? cases[i].args[k] : file;
        ck_assert_int_eq(railguard(NULL, args, 30), 2);
        expect_in(cases[i].want);
        ck_assert_msg(strchr(g_out, '\n') == g_out + strlen(g_out) - 1, "not one line: %s", g_out);
    }
    const char *help[] = {"run", "--help", NULL};
    ck_assert_int_eq(railguard(NULL, help, 30), 0);
    expect_in("usage: railguard run");
}
END_TEST

/*
 * --fork-server: ranks forked from a server per slot judge exactly as exec'd ones -- a clean
 * scenario, a flush (its evidence, step and class), a rank killed by its own fault and a
 * stopped peer -- and the shim in each rank is the rank's own: its load event names the rank
 * and a pid that is neither the server's nor another rank's.
 */
START_TEST(test_fork_server)
{
    char out[PATH_MAX + 32], sc[4][PATH_MAX];
    static const char *const names[] = {"ring-2r-all-ops", "fault-flush-recv", "fault-kill-peer",
                                        "stall-past-timeout-barrier"};
    for (int i = 0; i < 4; i++) {
        char rel[128];
        snprintf(rel, sizeof(rel), "../../scenarios/%s.yaml", names[i]);
        rg_check_build_file(sc[i], sizeof(sc[i]), rel);
    }
    snprintf(out, sizeof(out), "%s/fs", g_tmp);
    const char *args[] = {"run", "--fork-server", "--devices", g_devs, "--out", out,
                          sc[0], sc[1],           sc[2],       sc[3],  NULL};
    ck_assert_int_eq(railguard(NULL, args, 300), 0);
    ck_assert_str_eq(last_line(), "4 passed, 0 failed");
    expect_in("  ok,ok  fired -\n");
    expect_in("  detected@0:peer_abort,detected@0:completion  fired 1\n");
    expect_in("  detected@0:peer_abort,detected@0:peer_abort,killed  fired 1\n");
    long pids[2];
    for (int r = 0; r < 2; r++) {
        const char *ev = slurp("%s/001-fault-flush-recv/rank%d.events.jsonl", out, r);
        char want[64];
        snprintf(want, sizeof(want), "{\"event\":\"load\",\"rank\":%d,\"pid\":", r);
        const char *at = strstr(ev, want);
        ck_assert_msg(at && at == ev, "rank %d's events do not start with its load: %.300s", r, ev);
        pids[r] = strtol(at + strlen(want), NULL, 10);
        ck_assert_int_gt(pids[r], 1);
    }
    ck_assert_int_ne(pids[0], pids[1]);
    /* -j 2: two slots, each with servers of its own, judge alike. */
    snprintf(out, sizeof(out), "%s/fs-j2", g_tmp);
    const char *par[] = {"run", "--fork-server", "-j",  "2",   "--devices", g_devs, "--out",
                         out,   sc[0],           sc[1], sc[2], sc[3],       NULL};
    ck_assert_int_eq(railguard(NULL, par, 300), 0);
    ck_assert_str_eq(last_line(), "4 passed, 0 failed");
    expect_in("  ok,ok  fired -\n");
    expect_in("  detected@0:peer_abort,detected@0:completion  fired 1\n");
    expect_in("  detected@0:peer_abort,detected@0:peer_abort,killed  fired 1\n");
    const char *ev = slurp("%s/001-fault-flush-recv/rank0.events.jsonl", out);
    ck_assert_msg(strstr(ev, "{\"event\":\"load\",\"rank\":0,\"pid\":") == ev, "%.300s", ev);
}
END_TEST

/*
 * A scenario's env: reaches every rank, with --fork-server too (such a scenario's ranks are
 * exec'd: the server set libibverbs up before it forks): a tuning the transport refuses fails
 * each rank at init in the transport's own words, and one it takes runs as any other.
 */
START_TEST(test_scenario_env)
{
    char *bad = write_file("env-bad.yaml", "ranks: 2\nenv: {RG_IB_RETRY_CNT: '7'}\nprogram:\n"
                                           "  - {op: barrier}\n");
    char *good = write_file("env-good.yaml", "ranks: 2\nqp: rc\nenv: {RG_IB_TIMEOUT: 16}\n"
                                             "program:\n  - {op: all_reduce, count: 1000}\n");
    for (int served = 0; served < 2; served++) {
        char out[PATH_MAX + 32];
        snprintf(out, sizeof(out), "%s/env%d", g_tmp, served);
        const char *execd[] = {"run", "--devices", g_devs, "--out", out, bad, good, NULL};
        const char *forked[] = {
            "run", "--fork-server", "--devices", g_devs, "--out", out, bad, good, NULL};
        ck_assert_int_eq(railguard(NULL, served ? forked : execd, 240), 1);
        ck_assert_str_eq(last_line(), "1 passed, 1 failed");
        /* Both ranks said it: the variable reached each. */
        const char *res = slurp("%s/000-env-bad/result.json", out), *at = res;
        int said = 0;
        while ((at = strstr(at, "RG_IB_RETRY_CNT='7': expected a number from 0 to 6"))) {
            said++;
            at++;
        }
        ck_assert_msg(said >= 2, "served %d: said %d times: %.800s", served, said, res);
    }
    free(bad);
    free(good);
}
END_TEST

/*
 * The fork server's end of its socket takes only well-formed requests: one with no
 * descriptors, or an item of an unknown kind, is answered "bad" and the server goes on; a good
 * one is answered with the rank's pid, and a rank with no shim under it says so on its status
 * pipe and exits 3 -- never runs unobserved. Closing the socket ends the server.
 */
START_TEST(test_fork_server_requests)
{
    int sv[2], sp[2], gp[2];
    ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    /* CLOEXEC: the server must not hold the runner's end, or closing it would not end it. */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    pid_t srv = fork();
    ck_assert_int_ge(srv, 0);
    if (srv == 0) {
        dup2(sv[1], 3);
        unsetenv("LD_PRELOAD");
        execl(g_bin, g_bin, "worker", "--serve", "3", "--transport", "/nonexistent.so", NULL);
        _exit(127);
    }
    close(sv[1]);
    char ans[64];
    /* No descriptors: refused. */
    ck_assert_int_eq(send(sv[0], "A--rank\0", 8, 0), 8);
    ck_assert_int_eq(recv(sv[0], ans, sizeof(ans), 0), 3);
    ck_assert(!memcmp(ans, "bad", 3));
    /* Three descriptors but an item of no kind: refused, the descriptors closed. */
    ck_assert_int_eq(pipe(sp), 0);
    ck_assert_int_eq(pipe(gp), 0);
    int lfd = open("/dev/null", O_WRONLY);
    int fds[3] = {lfd, sp[1], gp[0]};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(3 * sizeof(int))];
    } c;
    struct iovec iov;
    struct msghdr mh;
    for (int pass = 0; pass < 2; pass++) {
        static const char bad_msg[] = "Zjunk";
        static const char good[] = "ERG_FI_RANK=0\0A--scenario\0A/nonexistent.yaml\0A--rank\0A0";
        memset(&c, 0, sizeof(c));
        iov = (struct iovec){.iov_base = (void *)(pass ? good : bad_msg),
                             .iov_len = pass ? sizeof(good) : sizeof(bad_msg)};
        mh = (struct msghdr){.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = c.buf,
                             .msg_controllen = sizeof(c.buf)};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, sizeof(fds));
        ck_assert_int_eq(sendmsg(sv[0], &mh, 0), (ssize_t)iov.iov_len);
        ssize_t n = recv(sv[0], ans, sizeof(ans) - 1, 0);
        ck_assert_int_gt(n, 0);
        ans[n] = '\0';
        if (!pass) {
            ck_assert_str_eq(ans, "bad");
            continue;
        }
        ck_assert_msg(!strncmp(ans, "pid ", 4), "%s", ans);
        pid_t rank = (pid_t)strtol(ans + 4, NULL, 10);
        close(sp[1]);
        char line[512] = "";
        size_t got = 0;
        for (ssize_t k; (k = read(sp[0], line + got, sizeof(line) - 1 - got)) > 0;)
            got += (size_t)k;
        line[got] = '\0';
        ck_assert_msg(strstr(line, "verdict error the fork server's rank could not restart the "
                                   "shim: the shim is not loaded"),
                      "%s", line);
        int st;
        ck_assert_int_eq(waitpid(rank, &st, 0), rank);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    }
    close(sv[0]);
    int st;
    ck_assert_int_eq(waitpid(srv, &st, 0), srv);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(sp[0]);
    close(gp[0]);
    close(gp[1]);
    close(lfd);
}
END_TEST

/* The subset plugin run on one scenario with its environment switch ENV=1 set for the run:
 * railguard's status, its logs in g_tmp/subset-NAME (out). */
/*
 * --fail-fast: the first failing scenario ends the run; the ones never started are named and
 * left out of every report, so nobody takes it for the whole suite; without it all run.
 */
START_TEST(test_fail_fast)
{
    char dir[PATH_MAX + 16], out[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s/ff", g_tmp);
    mkdir(dir, 0755);
    char *a =
        write_file("ff/a-fails.yaml", "ranks: 2\nprogram:\n  - {op: all_reduce, count: 10}\n");
    char *b = write_file("ff/b-passes.yaml", "ranks: 2\nprogram:\n  - {op: barrier}\n");
    char *c = write_file("ff/c-passes.yaml", "ranks: 2\nprogram:\n  - {op: barrier}\n");
    snprintf(out, sizeof(out), "%s/ff-out", g_tmp);
    const char *args[] = {"run",  "--fail-fast", "--transport", g_bad, "--devices",
                          g_devs, "--out",       out,           dir,   NULL};
    ck_assert_int_eq(railguard("stale", args, 120), 1);
    ck_assert_str_eq(last_line(), "0 passed, 1 failed");
    expect_in("railguard run: --fail-fast: not run: b-passes, c-passes (2 scenario(s))");
    const char *rep = slurp("%s/report.json", out);
    ck_assert_msg(strstr(rep, "a-fails") && !strstr(rep, "b-passes"), "report: %s", rep);
    snprintf(out, sizeof(out), "%s/ff-all", g_tmp);
    const char *all[] = {"run", "--transport", g_bad, "--devices", g_devs, "--out", out, dir, NULL};
    ck_assert_int_eq(railguard("stale", all, 120), 1);
    ck_assert_str_eq(last_line(), "2 passed, 1 failed");
    free(a);
    free(b);
    free(c);
}
END_TEST

/*
 * each_site: the scenario run as a sweep of its program's call sites (one point a site), judged
 * from the sweep's record. On the bad plugin (one poll site, an empty CQ): a negative poll at
 * its one site, reported and fail-stop, passes; the same transport carrying on after it fails
 * as the point did; an error completion at a site that never hands one out cannot be placed,
 * which proves nothing (NOT_EXERCISED, never a pass); a program that fails with no fault at all
 * fails at its counting run, and no point runs.
 */
static const struct {
    const char *mode, *kind, *op, *line, *verdicts, *note;
    int status;
} site_cases[] = {
    {"poll", "negpoll", "barrier, repeat: 3", "1 passed, 0 failed", "ok,ok",
     "1 call site(s), 1 point(s): 1 passed, 0 failed", 0},
    {"carryon", "negpoll", "barrier, repeat: 3", "0 passed, 1 failed", "NOT_FAIL_STOP,ok",
     "1 call site(s), 1 point(s): 0 passed, 1 failed", 1},
    {"poll", "error", "barrier, repeat: 3", "0 passed, 1 failed", "NOT_EXERCISED,NOT_EXERCISED",
     "no point ran (sweep exit 2)", 1},
    {"error", "negpoll", "all_reduce, count: 10", "0 passed, 1 failed",
     "ERROR_WITHOUT_FAULT,ERROR_WITHOUT_FAULT", "the counting run (no fault) failed", 1},
};

START_TEST(test_each_site)
{
    char sc[512], name[32], out[PATH_MAX + 32];
    snprintf(sc, sizeof(sc),
             "ranks: 2\ntimeout: 1\ndeadline: 4\neach_site: %s\nprogram:\n"
             "  - {op: %s}\n",
             site_cases[_i].kind, site_cases[_i].op);
    snprintf(name, sizeof(name), "sites%d.yaml", _i);
    char *path = write_file(name, sc);
    snprintf(out, sizeof(out), "%s/sites%d", g_tmp, _i);
    const char *args[] = {"run",   "--transport", g_bad, "--devices", g_devs,
                          "--out", out,           path,  NULL};
    ck_assert_int_eq(railguard(site_cases[_i].mode, args, 300), site_cases[_i].status);
    ck_assert_str_eq(last_line(), site_cases[_i].line);
    ck_assert_str_eq(json_verdicts(out), site_cases[_i].verdicts);
    const char *res = slurp("%s/000-sites%d/result.json", out, _i);
    ck_assert_msg(strstr(res, site_cases[_i].note), "'%s' not in %s", site_cases[_i].note, res);
    /* The sweep's own record is kept beside the scenario's result. */
    slurp("%s/000-sites%d/sites.log", out, _i);
    free(path);
}
END_TEST

/* each_site under a rank wrapper: its sweep's batches fork their ranks from servers, which no
 * wrapper can sit under, so it is skipped and says why rather than run unwrapped; under
 * --no-ownership its points are run without the sanitizer (their plans hold no ownership
 * rule). */
START_TEST(test_each_site_options)
{
    char out[PATH_MAX + 32];
    char *path = write_file("sites-opt.yaml",
                            "ranks: 2\ntimeout: 1\ndeadline: 4\neach_site: negpoll\nprogram:\n"
                            "  - {op: barrier, repeat: 3}\n");
    snprintf(out, sizeof(out), "%s/sites-wrapped", g_tmp);
    const char *w[] = {"run", "--transport",    g_bad, "--devices", g_devs, "--out", out,
                       path,  "--rank-wrapper", "env", NULL};
    ck_assert_int_eq(railguard("poll", w, 120), 0);
    expect_in("SKIP  sites-opt");
    expect_in("--rank-wrapper cannot wrap");
    snprintf(out, sizeof(out), "%s/sites-noown", g_tmp);
    const char *n[] = {"run",   "--transport", g_bad, "--devices",      g_devs,
                       "--out", out,           path,  "--no-ownership", NULL};
    ck_assert_int_eq(railguard("poll", n, 300), 0);
    ck_assert_str_eq(last_line(), "1 passed, 0 failed");
    /* The plan the point's ranks read: its fault, and no sanitizer's rule after it. */
    const char *plan = slurp("%s/000-sites-opt/sites/run-0001/000-point-0001/plan", out);
    ck_assert_msg(strstr(plan, "negpoll") && !strstr(plan, "ownership"), "%s", plan);
    free(path);
}
END_TEST

static int subset_with(const char *subset, const char *env, const char *name, const char *path,
                       char *out, size_t outlen)
{
    setenv(env, "1", 1);
    snprintf(out, outlen, "%s/subset-%s", g_tmp, name);
    const char *args[] = {"run",   "--transport", subset, "--devices", g_devs,
                          "--out", out,           path,   NULL};
    int st = railguard(NULL, args, 120);
    unsetenv(env);
    return st;
}

/*
 * A transport that declares part of what railguard asks (tests/harness/subset_plugin.c, a v2
 * adapter over the reference): stock scenarios run on it without a failure -- what it declared
 * passes, what it did not is skipped and named, never detected -- and a scenario of only what
 * it declared passes, with what its calls ran (the ring, one rail) in report.json. A limit
 * found only at the call (RG_ERR_UNSUPPORTED) is skipped the same way.
 */
START_TEST(test_subset_transport)
{
    char subset[PATH_MAX], out[PATH_MAX + 32], sc[PATH_MAX];
    rg_check_build_file(subset, sizeof(subset), "lib/rg-test-subset-plugin.so");
    rg_check_build_file(sc, sizeof(sc), "../../scenarios");
    char *mine = write_file("declared.yaml",
                            "ranks: 3\nprogram:\n"
                            "  - {op: all_reduce, dtype: float32, count: 1000, redop: max}\n"
                            "  - {op: all_gather, dtype: int32, count: 100}\n"
                            "  - {op: sendrecv, dtype: uint8, count: 50, from: 0, to: 2}\n"
                            "  - {op: barrier}\n");
    char *late = write_file("late.yaml", "ranks: 2\nprogram:\n"
                                         "  - {op: all_gather, dtype: int64, count: 10}\n"
                                         "  - {op: all_reduce, count: 10}\n");
    char ring2[PATH_MAX + 64], rc4[PATH_MAX + 64], dtypes[PATH_MAX + 64], flush[PATH_MAX + 64];
    snprintf(ring2, sizeof(ring2), "%s/ring-2r-all-ops.yaml", sc);
    snprintf(rc4, sizeof(rc4), "%s/ring-4r-rc-all-ops.yaml", sc);
    snprintf(dtypes, sizeof(dtypes), "%s/ring-3r-every-dtype.yaml", sc);
    snprintf(flush, sizeof(flush), "%s/fault-flush-recv.yaml", sc);
    snprintf(out, sizeof(out), "%s/subset", g_tmp);
    const char *args[] = {"run", "--transport", subset, "--devices", g_devs, "--out", out,
                          mine,  late,          ring2,  rc4,         dtypes, flush,   NULL};
    ck_assert_int_eq(railguard(NULL, args, 300), 0);
    ck_assert_str_eq(last_line(), "2 passed, 0 failed, 4 skipped (unsupported by the transport)");
    expect_in("PASS  declared");
    expect_in("PASS  fault-flush-recv"); /* its fault is in an all_reduce sum: declared */
    expect_in("SKIP  late");
    expect_in("SKIP  ring-2r-all-ops");
    expect_in("SKIP  ring-4r-rc-all-ops");
    expect_in("SKIP  ring-3r-every-dtype");
    expect_in("not run: subset: qp rc not declared"); /* the whole of ring-4r-rc-all-ops */
    /* ... and the skips counted by reason, a call's own refusal named by its step. */
    expect_in("could not run: 1 RG_ERR_UNSUPPORTED");
    /* No skip read as a detection: every SKIP line's verdicts are unsupported. */
    for (const char *l = strstr(g_out, "SKIP  "); l; l = strstr(l + 1, "SKIP  ")) {
        const char *e = strchr(l, '\n');
        ck_assert_msg(e && !memmem(l, (size_t)(e - l), "detected", 8), "%.200s", l);
    }
    const char *res = slurp("%s/000-declared/result.json", out);
    ck_assert_msg(strstr(res, "\"calls\": \"") && strstr(res, "ring/1:2"), "%s", res);
    res = slurp("%s/001-late/result.json", out);
    ck_assert_msg(strstr(res, "all_gather int64 count 10: RG_ERR_UNSUPPORTED"), "%s", res);
    ck_assert_msg(strstr(res, "\"skipped\": true"), "%s", res);
    res = slurp("%s/002-ring-2r-all-ops/result.json", out);
    ck_assert_msg(strstr(res, "reduce_scatter not declared") ||
                      strstr(res, "broadcast not declared") || strstr(res, "prod not declared"),
                  "%s", res);
    const char *junit = slurp("%s/junit.xml", out);
    ck_assert_msg(strstr(junit, "skipped=\"4\""), "%s", junit);
    /* Declared RG_CAP_RECOVERS: the error is kept, the program goes on past it (no fail-stop
     * repeat, so never NOT_FAIL_STOP), and the rank ends detected at its first error's step. */
    char *rec =
        write_file("recovers.yaml", "ranks: 2\ntimeout: 3\nfaults:\n"
                                    "  - error status=WR_FLUSH_ERR op=recv rank=1 nth=2\n"
                                    "program:\n  - {op: all_reduce, count: 10, repeat: 3}\n"
                                    "  - {op: barrier}\nexpect:\n  all: any\n  1: detected\n");
    char out2[PATH_MAX + 48];
    int rst = subset_with(subset, "RG_SUBSET_RECOVERS", "recovers", rec, out2, sizeof(out2));
    ck_assert_msg(rst == 0, "status %d:\n%s", rst, g_out);
    expect_in("PASS  recovers");
    res = slurp("%s/000-recovers/rank1.log", out2);
    ck_assert_msg(strstr(res, "declares RG_CAP_RECOVERS: going on after step 0's error"), "%s",
                  res);
    /* Wrong data from a call that ran: the rank is SILENT_CORRUPTION, and what the call ran
     * is still counted (a signature tells corruptions apart by algorithm). */
    char *wrong = write_file("wrong.yaml", "ranks: 2\nqp: uc\nprogram:\n"
                                           "  - {op: all_reduce, count: 10}\n");
    char out4[PATH_MAX + 48];
    int wst = subset_with(subset, "RG_SUBSET_WRONG", "wrong", wrong, out4, sizeof(out4));
    ck_assert_msg(wst == 1, "status %d:\n%s", wst, g_out);
    expect_in("SILENT_CORRUPTION,SILENT_CORRUPTION");
    res = slurp("%s/000-wrong/result.json", out4);
    ck_assert_msg(strstr(res, "\"calls\": \"") && strstr(res, "ring/1:1"), "%s", res);
    free(wrong);
    /* A create refused in mid-program: the steps after it are skipped and named (there is no
     * communicator for them), not run into errors; the scenario reads SKIP. */
    char *again = write_file("again.yaml", "ranks: 2\nprogram:\n  - {op: barrier}\n"
                                           "  - {op: destroy}\n  - {op: create}\n"
                                           "  - {op: all_reduce, count: 10}\n");
    char out3[PATH_MAX + 48];
    int ast = subset_with(subset, "RG_SUBSET_INITS", "again", again, out3, sizeof(out3));
    ck_assert_msg(ast == 0, "status %d:\n%s", ast, g_out);
    expect_in("SKIP  again");
    expect_in("  unsupported,unsupported  ");
    res = slurp("%s/000-again/result.json", out3);
    ck_assert_msg(strstr(res, "create: RG_ERR_UNSUPPORTED: subset plugin: only 1 communicator(s) "
                              "a process") &&
                      strstr(res, "no communicator (step 2's create was not supported)"),
                  "%s", res);
    free(again);
    free(rec);
    free(mine);
    free(late);
}
END_TEST

/*
 * A scenario that states no qp and "rails: up to 2" runs on an RC-only, one-rail transport
 * (the subset plugin with RG_SUBSET_RC_ONE=1) in that shape: its QPs are RC in the shim's
 * evidence, one devices' worth of rails, and every report says it ran so. A scenario that
 * states UC, or exactly two rails, is about them and is skipped, each counted by its reason.
 */
START_TEST(test_fit_transport)
{
    char subset[PATH_MAX], dir[PATH_MAX + 16], out[PATH_MAX + 48];
    rg_check_build_file(subset, sizeof(subset), "lib/rg-test-subset-plugin.so");
    snprintf(dir, sizeof(dir), "%s/fit", g_tmp);
    mkdir(dir, 0755);
    char *a = write_file("fit/a-fits.yaml", "ranks: 2\nrails: up to 2\nprogram:\n"
                                            "  - {op: all_reduce, count: 1000}\n"
                                            "  - {op: barrier}\n");
    char *b = write_file("fit/b-uc.yaml",
                         "ranks: 2\nqp: uc\nprogram:\n  - {op: all_reduce, count: 10}\n");
    char *c = write_file("fit/c-two.yaml",
                         "ranks: 2\nrails: 2\nprogram:\n  - {op: all_reduce, count: 10}\n");
    char *d = write_file("fit/d-uc2.yaml", "ranks: 2\nqp: uc\nprogram:\n  - {op: barrier}\n");
    int st = subset_with(subset, "RG_SUBSET_RC_ONE", "fit", dir, out, sizeof(out));
    ck_assert_msg(st == 0, "status %d:\n%s", st, g_out);
    expect_in("PASS  a-fits");
    expect_in("      ran as rc on 1 rail (up to 2 asked)");
    expect_in("SKIP  b-uc");
    expect_in("SKIP  c-two");
    ck_assert_str_eq(last_line(), "1 passed, 0 failed, 3 skipped (unsupported by the transport)");
    expect_in("in the transport's shape: 1 scenario(s) that state none (1 as rc, 1 on fewer "
              "rails)");
    expect_in("could not run: 2 qp uc not declared; 1 2 rails, declared at most 1");
    const char *res = slurp("%s/000-a-fits/result.json", out);
    ck_assert_msg(strstr(res, "\"fit_note\": \"ran as rc on 1 rail (up to 2 asked)\""), "%s", res);
    /* What the ranks made is what the note says: RC queue pairs, and no UC one. */
    const char *ev = slurp("%s/000-a-fits/rank0.events.jsonl", out);
    ck_assert_msg(strstr(ev, "\"event\":\"qp\"") && strstr(ev, "\"type\":2,") &&
                      !strstr(ev, "\"type\":3,"),
                  "%.2000s", ev);
    res = slurp("%s/001-b-uc/result.json", out);
    ck_assert_msg(!strstr(res, "fit_note"), "%s", res);
    free(a);
    free(b);
    free(c);
    free(d);
}
END_TEST

/*
 * A transport's known-failures file (--known): the bad transport's stale results, recorded
 * there, are xfail and the run passes; the same file for another transport is refused before
 * anything runs, with its file and line; a name not in the run is a note.
 */
START_TEST(test_known_file)
{
    char out[PATH_MAX + 32];
    char *sc = write_file("stale.yaml", "ranks: 2\ntimeout: 1\ndeadline: 3\n"
                                        "program:\n  - {op: all_reduce, count: 10}\n");
    char *known = write_file("bad-known.yaml", "transport: bad\nknown:\n"
                                               "  stale: {why: 'never writes its output', "
                                               "all: SILENT_CORRUPTION}\n"
                                               "  elsewhere: {why: x, all: CRASH}\n");
    char *other = write_file("other-known.yaml", "transport: jaccl\nknown: {}\n");
    snprintf(out, sizeof(out), "%s/known", g_tmp);
    const char *args[] = {"run", "--transport", g_bad, "--devices", g_devs, "--out",
                          out,   "--known",     known, sc,          NULL};
    ck_assert_int_eq(railguard("stale", args, 120), 0);
    expect_in("XFAIL  stale");
    expect_in("known failure: never writes its output");
    expect_in("bad-known.yaml:4: no scenario 'elsewhere' in this run");
    /* Its reproduce line judges with the same file: without it the failure would read FAIL. */
    const char *res = slurp("%s/000-stale/result.json", out);
    ck_assert_msg(strstr(res, "--known ") && strstr(res, known), "%s", res);
    args[8] = other;
    ck_assert_int_eq(railguard("stale", args, 120), 2);
    char want[PATH_MAX + 128];
    snprintf(want, sizeof(want), "%s:1: transport: the run's is 'bad', the file's 'jaccl'", other);
    ck_assert_str_eq(last_line(), want);
    free(sc);
    free(known);
    free(other);
}
END_TEST

/*
 * run --triage: three failures of the bad transport's stale results, two of them one bug
 * (all_reduce on 2 and on 3 ranks, other counts) and one another (broadcast), are two groups;
 * the first group's smallest case, re-run twice by its reproduce line, fails alike both times.
 * The deadline only bounds a hang (stale results come at once): in the guest a run's first
 * rank has taken 1.5 s from its fork to its shim's load, which a 3 s deadline could not hold.
 */
START_TEST(test_triage)
{
    char out[PATH_MAX + 32];
    char *a = write_file("tri-a.yaml", "ranks: 2\ntimeout: 1\ndeadline: 10\n"
                                       "program:\n  - {op: all_reduce, count: 10}\n");
    char *b = write_file("tri-b.yaml", "ranks: 3\ntimeout: 1\ndeadline: 10\n"
                                       "program:\n  - {op: all_reduce, count: 1000}\n");
    char *c = write_file("tri-c.yaml", "ranks: 2\ntimeout: 1\ndeadline: 10\nprogram:\n"
                                       "  - {op: broadcast, dtype: int32, count: 10, root: 0}\n");
    snprintf(out, sizeof(out), "%s/triage", g_tmp);
    const char *args[] = {
        "run", "--transport", g_bad, "--devices", g_devs, "--out", out, "--slow-scale",
        "1",   "--triage",    "2",   a,           b,      c,       NULL};
    ck_assert_msg(railguard("stale", args, 300) == 1, "%s", out_tail());
    expect_in("3 failure(s) among 3 scenario(s) in 2 report(s)");
    expect_in("[2] SILENT_CORRUPTION in all_reduce");
    expect_in("[1] SILENT_CORRUPTION in broadcast");
    expect_in("group 1: deterministic: 2 of 2 re-runs");
    const char *md = slurp("%s/triage/01-silent-corruption-all-reduce.md", out);
    /* Minimised too: an all_reduce of 10 fails alike down to 1 (its only cut here). */
    ck_assert_msg(strstr(md, "## The minimal scenario (minimised from tri-a") &&
                      strstr(md, "counts halved 4 times") &&
                      strstr(md, "- **Rate**: deterministic: 2 of 2 re-runs"),
                  "%s", md);
    const char *min = slurp("%s/triage/01-silent-corruption-all-reduce.min.yaml", out);
    ck_assert_msg(strstr(min, "count: 1,") || strstr(min, "count: 1}"), "%s", min);
    const char *js = slurp("%s/triage/triage.json", out);
    ck_assert_msg(strstr(js, "\"failures\": 3") && strstr(js, "\"same\": 2"), "%s", js);
    /* Its known-failures file gates the next run: both bugs xfail, the run passes. */
    char known[PATH_MAX + 64], out2[PATH_MAX + 32];
    snprintf(known, sizeof(known), "%s/triage/known-failures.yaml", out);
    snprintf(out2, sizeof(out2), "%s/triage-known", g_tmp);
    const char *again[] = {"run",     "--transport", g_bad, "--devices", g_devs, "--out", out2,
                           "--known", known,         a,     b,           c,      NULL};
    ck_assert_msg(railguard("stale", again, 300) == 0, "%s", out_tail());
    expect_in("XFAIL  tri-a");
    expect_in("XFAIL  tri-c");
    expect_in("known failure (signature, line ");
    free(a);
    free(b);
    free(c);
}
END_TEST

Suite *rg_suite_it_run(void)
{
    Suite *s = suite_create("it_run");
    TCase *t = tcase_create("run");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, test_bad_transport_verdicts, 0,
                        (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
    tcase_add_test(t, test_first_failure_named);
    tcase_add_test(t, test_fail_fast);
    tcase_add_test(t, test_each_site_options);
    tcase_add_loop_test(t, test_each_site, 0, (int)(sizeof(site_cases) / sizeof(site_cases[0])));
    tcase_add_test(t, test_cli_refusals);
    tcase_add_test(t, test_bad_input_stops_the_run);
    tcase_add_test(t, test_wire_on_one_device);
    tcase_add_test(t, test_too_slow);
    tcase_add_test(t, test_reference_transport);
    tcase_add_test(t, test_subset_transport);
    tcase_add_test(t, test_fit_transport);
    tcase_add_test(t, test_known_file);
    tcase_add_test(t, test_triage);
    tcase_add_test(t, test_external_launch);
    tcase_add_test(t, test_hosts_launch);
    tcase_add_test(t, test_deadline_cut);
    tcase_add_test(t, test_hang_judged_early);
    tcase_add_test(t, test_fork_server);
    tcase_add_test(t, test_scenario_env);
    tcase_add_test(t, test_fork_server_requests);
    suite_add_tcase(s, t);
    return s;
}
