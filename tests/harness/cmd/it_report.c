/* SPDX-License-Identifier: MIT */
/*
 * What `railguard run` leaves for people to look at, on rxe: every scenario's trace.json must
 * be a valid Chrome Trace Event file (required fields, begin/end pairs that match per track,
 * timestamps that never go back on a track) for a clean scenario, a fault scenario (its fired
 * fault an instant named by its rule) and a 3-rank scenario whose rank hangs (its last call
 * open until the deadline, ended DEADLOCK); the run's index.html must list each scenario with
 * its verdicts; and `railguard report DIR` must write both again from the directory alone.
 */
#include "common/rg_check.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_bin[PATH_MAX], g_bad[PATH_MAX], g_tmp[PATH_MAX], g_out[65536];

static void setup(void)
{
    rg_check_build_file(g_bin, sizeof(g_bin), "bin/railguard");
    rg_check_build_file(g_bad, sizeof(g_bad), "lib/rg-test-bad-plugin.so");
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/rg-it-report.%ld", (long)getpid());
    mkdir(g_tmp, 0755);
}

/* The Trace Event format's rules this project's traces must keep. */
static void check_trace(const char *path, int ranks, int *spans, int *faults, int *verdicts)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    ck_assert_msg(j, "%s: %s", path, e.text);
    json_t *a = json_object_get(j, "traceEvents");
    ck_assert_msg(json_is_array(a) && json_array_size(a) > 0, "%s: no traceEvents", path);
    /* Per (pid, tid): a stack of open begins and the last timestamp. */
    enum { TRACKS = 64 * 80 };
    static int depth[TRACKS];
    static json_int_t last[TRACKS];
    static char open_name[TRACKS][160];
    memset(depth, 0, sizeof(depth));
    for (int i = 0; i < TRACKS; i++)
        last[i] = -1;
    *spans = *faults = *verdicts = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(a, i, ev)
    {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        json_t *pid = json_object_get(ev, "pid"), *tid = json_object_get(ev, "tid");
        ck_assert_msg(ph && name && json_is_integer(pid) && json_is_integer(tid),
                      "%s: event %zu lacks ph, name, pid or tid", path, i);
        int p = (int)json_integer_value(pid), t = (int)json_integer_value(tid);
        ck_assert_msg(p >= 0 && p < ranks && t >= 0 && t < 80, "%s: event %zu: pid %d tid %d", path,
                      i, p, t);
        if (!strcmp(ph, "M"))
            continue;
        json_t *ts = json_object_get(ev, "ts");
        ck_assert_msg(json_is_integer(ts) && json_integer_value(ts) >= 0,
                      "%s: event %zu (%s) has no ts", path, i, name);
        int k = p * 80 + t;
        ck_assert_msg(json_integer_value(ts) >= last[k],
                      "%s: event %zu (%s) goes back in time on pid %d tid %d", path, i, name, p, t);
        last[k] = json_integer_value(ts);
        if (!strcmp(ph, "B")) {
            ck_assert_msg(depth[k] == 0, "%s: %s begins inside %s", path, name, open_name[k]);
            depth[k]++;
            snprintf(open_name[k], sizeof(open_name[k]), "%s", name);
            (*spans)++;
        } else if (!strcmp(ph, "E")) {
            ck_assert_msg(depth[k] == 1 && !strcmp(open_name[k], name),
                          "%s: %s ends what did not begin", path, name);
            depth[k]--;
        } else if (!strcmp(ph, "i")) {
            const char *s = json_string_value(json_object_get(ev, "s"));
            ck_assert_msg(s && strchr("gpt", s[0]) && !s[1], "%s: instant %s: scope", path, name);
            *faults += !strncmp(name, "fault: ", 7);
            *verdicts += !strncmp(name, "verdict: ", 9);
        } else {
            ck_assert_msg(!strcmp(ph, "C"), "%s: event %zu: phase %s", path, i, ph);
        }
    }
    for (int k = 0; k < TRACKS; k++)
        ck_assert_msg(depth[k] == 0, "%s: %s never ends", path, open_name[k]);
    json_decref(j);
}

/* The single scenario directory under out (NNN-name). */
static void scenario_dir(const char *out, const char *name, char *dir, size_t len)
{
    snprintf(dir, len, "%s/000-%s", out, name);
    struct stat st;
    ck_assert_msg(stat(dir, &st) == 0, "no %s", dir);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f, "cannot read %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

START_TEST(test_trace_clean_and_fault)
{
    char out[PATH_MAX + 16], dir[PATH_MAX + 64], path[PATH_MAX + 96];
    const char *cases[][2] = {{"ring-2r-all-ops", "2"}, {"fault-kill-peer", "3"}};
    for (int c = 0; c < 2; c++) {
        char sc[PATH_MAX];
        snprintf(out, sizeof(out), "%s/run%d", g_tmp, c);
        snprintf(sc, sizeof(sc), "scenarios/%s.yaml", cases[c][0]);
        const char *args[] = {"run", "--out", out, sc, NULL};
        int st = rg_check_cmd(g_bin, NULL, args, 300, g_out, sizeof(g_out));
        ck_assert_msg(st == 0, "run %s: %d\n%s", sc, st, g_out);
        scenario_dir(out, cases[c][0], dir, sizeof(dir));
        snprintf(path, sizeof(path), "%s/trace.json", dir);
        int spans, faults, verdicts, ranks = atoi(cases[c][1]);
        check_trace(path, ranks, &spans, &faults, &verdicts);
        ck_assert_int_eq(verdicts, ranks);
        ck_assert_int_gt(spans, ranks); /* init and at least one step each */
        ck_assert_int_eq(faults, c == 0 ? 0 : 1);
        if (c == 1)
            ck_assert_msg(strstr(slurp(path), "\"fault: kill op=recv rank=2 step=0 nth=4 (line "),
                          "the kill fault is not named by its rule");
        /* The page lists it with every rank's verdict. */
        snprintf(path, sizeof(path), "%s/index.html", out);
        const char *html = slurp(path);
        ck_assert_msg(strstr(html, cases[c][0]), "index.html lacks %s", cases[c][0]);
        ck_assert_msg(strstr(html, c == 0 ? ">r1 ok<" : ">r2 killed<"), "index.html: %s", html);
    }
}
END_TEST

START_TEST(test_trace_of_a_hang_and_report_again)
{
    char out[PATH_MAX + 16], dir[PATH_MAX + 64], path[PATH_MAX + 96], sc[PATH_MAX + 16];
    snprintf(sc, sizeof(sc), "%s/hang-3r.yaml", g_tmp);
    FILE *f = fopen(sc, "w");
    ck_assert_ptr_nonnull(f);
    fputs("name: hang-3r\nranks: 3\ntimeout: 3\ndeadline: 8\nexpect:\n  all: any\nprogram:\n"
          "  - {op: all_reduce, dtype: float32, count: 64, redop: sum}\n",
          f);
    fclose(f);
    snprintf(out, sizeof(out), "%s/hang", g_tmp);
    const char *env[] = {"RG_BAD_MODE_1", "hang", NULL};
    const char *args[] = {"run", "--transport", g_bad, "--out", out, sc, NULL};
    rg_check_cmd(g_bin, env, args, 120, g_out, sizeof(g_out));
    ck_assert_msg(strstr(g_out, "DEADLOCK"), "rank 1 did not hang:\n%s", g_out);
    scenario_dir(out, "hang-3r", dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/trace.json", dir);
    int spans, faults, verdicts;
    check_trace(path, 3, &spans, &faults, &verdicts);
    ck_assert_int_eq(verdicts, 3);
    /* The hung rank's call stays open to the deadline and ends DEADLOCK. */
    const char *t = slurp(path);
    ck_assert_msg(strstr(t, "\"result\":\"DEADLOCK\""), "%s", t);
    ck_assert_msg(strstr(t, "\"first failure: rank "), "%s", t);
    /* From the directory alone (moved, as a CI artifact is): traces and page again. */
    char moved[PATH_MAX + 32], cmd[8 * PATH_MAX];
    snprintf(moved, sizeof(moved), "%s/moved", g_tmp);
    snprintf(cmd, sizeof(cmd),
             "rm -rf '%s' && mv '%s' '%s' && rm '%s/index.html' '%s/000-hang-3r/trace.json'", moved,
             out, moved, moved, moved);
    ck_assert_int_eq(system(cmd), 0);
    const char *rep[] = {"report", moved, NULL};
    int st = rg_check_cmd(g_bin, NULL, rep, 60, g_out, sizeof(g_out));
    ck_assert_msg(st == 0, "report: %d\n%s", st, g_out);
    snprintf(path, sizeof(path), "%s/000-hang-3r/trace.json", moved);
    check_trace(path, 3, &spans, &faults, &verdicts);
    ck_assert_int_eq(verdicts, 3);
    snprintf(path, sizeof(path), "%s/index.html", moved);
    const char *html = slurp(path);
    ck_assert_msg(strstr(html, ">r1 DEADLOCK<") && strstr(html, "<svg"), "%s", html);
    /* What ran, read back from the run's report.json. */
    ck_assert_msg(strstr(html, "; transport "), "%s", html);
}
END_TEST

/*
 * railguard compare on real runs: a corrupting transport (the bad plugin, stale) as the base
 * and the reference, run by compare itself until its runs settle, as the head is a fix, exit
 * 0; the other way round an introduced failure, exit 1, its Markdown saying so; bad input is
 * one line and exit 2.
 */
START_TEST(test_compare_runs)
{
    char sc[PATH_MAX + 16], bad[PATH_MAX + 16], good[PATH_MAX + 16], md[PATH_MAX + 16];
    snprintf(sc, sizeof(sc), "%s/ar.yaml", g_tmp);
    FILE *f = fopen(sc, "w");
    ck_assert_ptr_nonnull(f);
    fputs("name: ar\nranks: 2\nprogram:\n  - {op: all_reduce, dtype: float32, count: 64}\n", f);
    fclose(f);
    snprintf(bad, sizeof(bad), "%s/cmp-bad", g_tmp);
    snprintf(good, sizeof(good), "%s/cmp-good", g_tmp);
    const char *env[] = {"RG_BAD_MODE", "stale", NULL};
    const char *b[] = {"run", "--transport", g_bad, "--out", bad, sc, NULL};
    ck_assert_int_eq(rg_check_cmd(g_bin, env, b, 120, g_out, sizeof(g_out)), 1);
    const char *g[] = {"run", "--out", good, sc, NULL};
    ck_assert_int_eq(rg_check_cmd(g_bin, NULL, g, 120, g_out, sizeof(g_out)), 0);
    /* A failure seen in the base's one run asks for 5 clean head runs (compare's rule): compare
     * runs the head itself, the reference, and re-runs it until it has them. */
    char cmp[PATH_MAX + 16], h[5][PATH_MAX + 64];
    snprintf(cmp, sizeof(cmp), "%s/cmp", g_tmp);
    const char *fixed[] = {"compare", "--base", bad, "--head-transport", "reference", "--out", cmp,
                           "--",      sc,       NULL};
    ck_assert_int_eq(rg_check_cmd(g_bin, NULL, fixed, 300, g_out, sizeof(g_out)), 0);
    ck_assert_msg(strstr(g_out, "compare: 1 fixed, 0 introduced, 0 still failing, 0 not settled") &&
                      strstr(g_out, "absent from 5 head run(s)"),
                  "%s", g_out);
    for (int i = 0; i < 5; i++)
        snprintf(h[i], sizeof(h[i]), "%s/head-%d", cmp, i + 1);
    /* Its runs carry the verbs trace (run --trace), which its causes rest on. */
    char evp[PATH_MAX + 96];
    snprintf(evp, sizeof(evp), "%s/000-ar/rank0.events.jsonl", h[0]);
    const char *ev = slurp(evp);
    ck_assert_msg(strstr(ev, "\"event\":\"trace_qp\""), "%s", ev);
    /* The other way round, those 5 clean runs as the base: the corruption is introduced. */
    snprintf(md, sizeof(md), "%s/cmp.md", g_tmp);
    const char *added[] = {"compare", "--base", h[0], "--base", h[1], "--base",     h[2], "--base",
                           h[3],      "--base", h[4], "--head", bad,  "--markdown", md,   NULL};
    ck_assert_int_eq(rg_check_cmd(g_bin, NULL, added, 60, g_out, sizeof(g_out)), 1);
    const char *m = slurp(md);
    ck_assert_msg(strstr(m, "| introduced | SILENT_CORRUPTION in all_reduce"), "%s", m);
    static const struct {
        const char *args[6];
        const char *want;
    } refusals[] = {
        {{"compare", "--base", "DIR", NULL}, "railguard compare: no --head DIR"},
        {{"compare", "--base", "DIR", "--head", "DIR", "extra"},
         "railguard compare: 'extra': run directories go after --base or --head"},
        {{"compare", "--confidence", "2", "--base", "DIR", NULL}, "must be a probability"},
        {{"compare", "--base", "SC", "--head", "DIR", NULL}, "ar.yaml: not a run directory"},
    };
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
        const char *args[7] = {NULL};
        for (int k = 0; k < 6 && refusals[i].args[k]; k++)
            args[k] = !strcmp(refusals[i].args[k], "DIR")  ? good
                      : !strcmp(refusals[i].args[k], "SC") ? sc
                                                           : refusals[i].args[k];
        ck_assert_int_eq(rg_check_cmd(g_bin, NULL, args, 60, g_out, sizeof(g_out)), 2);
        ck_assert_msg(strstr(g_out, refusals[i].want), "'%s' not in %s", refusals[i].want, g_out);
        ck_assert_msg(strchr(g_out, '\n') == g_out + strlen(g_out) - 1, "not one line: %s", g_out);
    }
}
END_TEST

/*
 * An external launch whose rank 1 is on "another host": a UTS namespace of another name and a
 * time namespace whose CLOCK_MONOTONIC reads 5000 s ahead, as a host booted earlier would. Its
 * runner measures the offset at rank 0's port; `railguard report` must then place rank 1's
 * fault, calls and verdict on rank 0's clock, within the scenario, and write the trace.
 */
START_TEST(test_trace_across_hosts)
{
    char sc[PATH_MAX + 32], devs[PATH_MAX + 32], out[PATH_MAX + 16], dir[PATH_MAX + 64],
        path[PATH_MAX + 96], coord[64], logs[2][PATH_MAX + 32];
    snprintf(sc, sizeof(sc), "%s/far.yaml", g_tmp);
    snprintf(devs, sizeof(devs), "%s/far-devices.json", g_tmp);
    FILE *f = fopen(sc, "w");
    ck_assert_ptr_nonnull(f);
    fputs("name: far\nranks: 2\ntimeout: 3\nfaults:\n"
          "  - error status=WR_FLUSH_ERR op=recv rank=1 nth=2\n"
          "program:\n  - {op: all_reduce, count: 20000, repeat: 3}\n"
          "expect:\n  all: any\n  1: detected\n",
          f);
    fclose(f);
    f = fopen(devs, "w");
    ck_assert_ptr_nonnull(f);
    fputs("[[null, \"rxe0\"], [\"rxe0\", null]]\n", f);
    fclose(f);
    snprintf(out, sizeof(out), "%s/far-out", g_tmp);
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", rg_check_free_port());
    const char *args[] = {
        "run", "--external", "--coordinator", coord, "--devices-file", devs, "--out", out,
        sc,    NULL};
    static const char *const far[] = {"unshare",     "--uts", "--time",
                                      "--monotonic", "5000",  "--fork",
                                      "sh",          "-c",    "hostname rg-far-host && exec \"$@\"",
                                      "sh",          NULL};
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        snprintf(logs[r], sizeof(logs[r]), "%s/far-rank%d.log", g_tmp, r);
        pids[r] = rg_check_launch_rank(g_bin, r ? far : NULL, r, 2, args, logs[r]);
    }
    for (int r = 0; r < 2; r++) {
        int st = rg_check_wait_rank(pids[r], logs[r], 120);
        const char *log = slurp(logs[r]);
        ck_assert_msg(st == 0, "rank %d exited %d:\n%s", r, st, log);
        if (r) {
            /* 5000 s within the measured bound (it may read 4999999.999 as well as 5000000.0). */
            const char *at = strstr(log, "rank 1: clock ");
            double off = 0, err = -1;
            ck_assert_msg(at && sscanf(at, "rank 1: clock %lf ms from rank 0's (within +-%lf", &off,
                                       &err) == 2,
                          "rank 1's clock:\n%s", log);
            ck_assert_msg(err >= 0 && off - 5000e3 <= err + 0.001 && 5000e3 - off <= err + 0.001,
                          "rank 1's clock %.3f ms, 5000000 ms expected within +-%.3f", off, err);
        }
    }
    snprintf(dir, sizeof(dir), "%s/far", out);
    snprintf(path, sizeof(path), "%s/rank1.result.json", dir);
    ck_assert_msg(strstr(slurp(path), "\"host\": \"rg-far-host\""), "%s", slurp(path));
    const char *rep[] = {"report", dir, NULL};
    int st = rg_check_cmd(g_bin, NULL, rep, 60, g_out, sizeof(g_out));
    ck_assert_msg(st == 0, "report: %d\n%s", st, g_out);
    ck_assert_msg(strstr(g_out, "placed on rank 0's clock by offsets measured at the start"), "%s",
                  g_out);
    ck_assert_msg(strstr(g_out, "PASS  far"), "%s", g_out);
    /* The trace: valid, rank 1's fault in it, and every event of either rank within the
     * scenario's seconds (unplaced, rank 1's would sit 5000 s away). */
    snprintf(path, sizeof(path), "%s/trace.json", dir);
    int spans, faults, verdicts;
    check_trace(path, 2, &spans, &faults, &verdicts);
    ck_assert_int_ge(faults, 1);
    ck_assert_int_eq(verdicts, 2);
    json_t *j = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *offs = json_object_get(json_object_get(j, "otherData"), "clock_offsets_ms");
    double off = json_number_value(json_array_get(offs, 1));
    ck_assert_msg(off > 4999e3 && off < 5001e3, "rank 1's offset %.3f ms", off);
    size_t i;
    json_t *ev;
    int rank1 = 0;
    json_array_foreach(json_object_get(j, "traceEvents"), i, ev)
    {
        json_t *ts = json_object_get(ev, "ts");
        if (!ts)
            continue;
        ck_assert_msg(json_integer_value(ts) < 120 * 1000000LL, "event %zu at %lld us", i,
                      (long long)json_integer_value(ts));
        rank1 += json_integer_value(json_object_get(ev, "pid")) == 1;
    }
    ck_assert_int_gt(rank1, 2);
    json_decref(j);
    /* The launch's page beside its files, linking them where they are. */
    snprintf(path, sizeof(path), "%s/index.html", dir);
    const char *html = slurp(path);
    ck_assert_msg(strstr(html, ">r1 detected<") && strstr(html, "href=\"rank1.log\""), "%s", html);
    snprintf(path, sizeof(path), "%s/result.json", dir);
    const char *res = slurp(path);
    ck_assert_msg(strstr(res, "\"clock_placed\": true") && strstr(res, "\"(several)\""), "%s", res);
}
END_TEST

Suite *rg_suite_it_report(void)
{
    Suite *s = suite_create("it_report");
    TCase *t = tcase_create("report");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_set_timeout(t, 400);
    tcase_add_test(t, test_trace_clean_and_fault);
    tcase_add_test(t, test_trace_of_a_hang_and_report_again);
    tcase_add_test(t, test_trace_across_hosts);
    tcase_add_test(t, test_compare_runs);
    suite_add_tcase(s, t);
    return s;
}
