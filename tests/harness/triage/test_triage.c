/* SPDX-License-Identifier: MIT */
/* Triage: a run directory's failures grouped by signature and written, and each group's rate
 * from re-runs (the signature itself is judge/'s: tests/harness/judge/test_signature.c). */
#include "common/rg_check.h"
#include "judge/rg_judge.h"
#include "triage/rg_triage.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- a run directory's failures ------------------------------------------------------------ */

static void mk(rg_result *r, const char *name, int ranks, int origin, rg_verdict first,
               rg_verdict rest, const char *where, int status)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    snprintf(r->path, sizeof(r->path), "/nonexistent/%s.yaml", name);
    snprintf(r->dir, sizeof(r->dir), "/nonexistent/%s", name);
    snprintf(r->repro, sizeof(r->repro), "railguard run %s.yaml", name);
    r->ranks = ranks;
    r->seconds = ranks;
    for (int i = 0; i < ranks; i++) {
        rg_rank_result *k = &r->rank[i];
        k->verdict = i == origin ? first : rest;
        k->t_s = i == origin ? 1.0 : 2.0 + i;
        k->step = 2;
        snprintf(k->where, sizeof(k->where), "%s", where);
        snprintf(k->calls, sizeof(k->calls), "ring/2:%d", 3 + i);
        snprintf(k->detail, sizeof(k->detail), "rank %d's detail", i);
        k->status = i == origin ? status : 0;
        r->expect[i] = RG_SC_EXPECT_OK;
        r->expect_at[i] = RG_SC_AT_ANY;
    }
    rg_judge(r);
}

/* --- a run directory ------------------------------------------------------------------------- */

static void put(const char *dir, const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void save(const char *dir, const char *sub, rg_result *r)
{
    char path[512], err[512];
    snprintf(path, sizeof(path), "%s/%s", dir, sub);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(r->dir, sizeof(r->dir), "%s", path);
    snprintf(path, sizeof(path), "%s/%s/result.json", dir, sub);
    ck_assert_msg(rg_result_save(r, path, err, sizeof(err)) == 0, "%s", err);
}

START_TEST(test_run_dir)
{
    static rg_result r[4];
    static rg_tri_run run;
    char dir[] = "/tmp/rg-triage-XXXXXX", err[600], path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* Two scenarios with one hang, one with a corruption, one pass, one unreadable result. */
    mk(&r[0], "hang-4r", 4, 1, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 5", -2);
    mk(&r[1], "hang-2r", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 9", -2);
    mk(&r[2], "corrupt", 3, 2, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce bf16 sum count 3", 0);
    mk(&r[3], "fine", 2, 0, RG_V_OK, RG_V_OK, "all_reduce float32 sum count 3", 0);
    save(dir, "000-hang-4r", &r[0]);
    save(dir, "001-hang-2r", &r[1]);
    save(dir, "002-corrupt", &r[2]);
    save(dir, "003-fine", &r[3]);
    snprintf(path, sizeof(path), "%s/004-torn", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/004-torn/result.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"name\": \"torn\", \"ranks\": ", f);
    fclose(f);

    ck_assert_int_eq(rg_tri_load(dir, &run, err, sizeof(err)), 0);
    ck_assert_int_eq(run.nresults, 4);
    ck_assert_int_eq(run.nunread, 1);
    ck_assert_ptr_nonnull(strstr(run.unread[0], "004-torn/result.json"));
    ck_assert_int_eq(run.nfail, 3);
    ck_assert_int_eq(rg_tri_group_cases(&run), 0);
    ck_assert_int_eq(run.ngroups, 2);
    /* The larger group first, shown by its smallest scenario. */
    ck_assert_int_eq(run.groups[0].ncases, 2);
    ck_assert_str_eq(run.cases[run.groups[0].rep].res->name, "hang-2r");
    ck_assert_str_eq(run.groups[1].sig.first, "SILENT_CORRUPTION");
    /* The run's page gets the triage section, once however often triage writes it, and a
     * title's markup escaped. */
    snprintf(path, sizeof(path), "%s/index.html", dir);
    f = fopen(path, "w");
    fputs("<html><body><h1>run</h1>\n</body></html>\n", f);
    fclose(f);
    snprintf(run.groups[1].title, sizeof(run.groups[1].title), "<b>corrupt</b>");
    /* The hang's cause proven: an entry by cause beside the signatures. */
    run.groups[0].cause.proven = true;
    run.groups[0].cause.kind = RG_C_NO_DEADLINE;
    snprintf(run.groups[0].cause.text, sizeof(run.groups[0].cause.text),
             "a wait with no deadline: ...");
    ck_assert_int_eq(rg_tri_write(&run, err, sizeof(err)), 0);
    ck_assert_msg(rg_tri_write(&run, err, sizeof(err)) == 0, "%s", err);
    char *page = rg_check_slurp(path);
    ck_assert_ptr_nonnull(strstr(page,
                                 "<h1>run</h1>\n<!-- railguard triage -->\n<section "
                                 "id=\"triage\"><h2>Triage: 3 failure(s) in 2 report(s), 0 of "
                                 "them a proven bug</h2>"));
    ck_assert_ptr_null(
        strstr(strstr(page, "<section id=\"triage\">") + 1, "<section id=\"triage\">"));
    ck_assert_ptr_nonnull(strstr(page, "&lt;b&gt;corrupt&lt;/b&gt;</a> (1 scenario(s))"));
    ck_assert_ptr_nonnull(strstr(page, "</ol></section>\n</body></html>\n"));
    free(page);
    snprintf(path, sizeof(path), "%s/triage/01-%s.md", dir, run.groups[0].slug);
    char *md = rg_check_slurp(path);
    ck_assert_ptr_nonnull(strstr(md, "# DEADLOCK"));
    ck_assert_ptr_nonnull(strstr(md, "railguard run hang-2r.yaml"));
    ck_assert_ptr_nonnull(strstr(md, "| 0 | ok | DEADLOCK **(failed)** |"));
    ck_assert_ptr_nonnull(strstr(md, "none taken"));
    free(md);
    snprintf(path, sizeof(path), "%s/triage/triage.json", dir);
    char *js = rg_check_slurp(path);
    ck_assert_ptr_nonnull(strstr(js, "\"failures\": 3"));
    ck_assert_ptr_nonnull(strstr(js, "\"unread\": 1"));
    free(js);
    /* The known-failures file it wrote reads back, and takes each failure it was made from
     * as xfail; the scenario that passed was in no group, and stays a plain pass. */
    static rg_scenario sc;
    rg_scenario *scs[] = {&sc};
    char notes[256];
    snprintf(sc.name, sizeof(sc.name), "hang-2r");
    snprintf(path, sizeof(path), "%s/triage/known-failures.yaml", dir);
    ck_assert_msg(rg_known_load(path, NULL, scs, 1, notes, sizeof(notes), err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_int_eq(sc.nksig, 3);
    ck_assert_int_eq(sc.ksig[2].cause, RG_C_NO_DEADLINE);
    ck_assert_str_eq(sc.ksig[2].why,
                     "a wait with no deadline (the cause triage proved for group 1)");
    ck_assert_int_eq(sc.ksig[2].nseen, 2);
    for (int i = 0; i < 4; i++) {
        r[i].nksig = sc.nksig;
        memcpy(r[i].ksig, sc.ksig, sizeof(sc.ksig));
        ck_assert(rg_judge(&r[i]));
        ck_assert_int_eq(r[i].known_state, i < 3 ? RG_KNOWN_XFAIL : RG_KNOWN_NONE);
    }
    /* A failure of another signature is still a failure. */
    mk(&r[0], "hang-4r", 4, 1, RG_V_CRASH, RG_V_DEADLOCK, "all_gather float32 count 5", 0);
    r[0].nksig = sc.nksig;
    memcpy(r[0].ksig, sc.ksig, sizeof(sc.ksig));
    ck_assert(!rg_judge(&r[0]));
    /* ... unless its own files proved the cause an entry names: the same bug, another face. */
    r[0].cause = RG_C_NO_DEADLINE;
    ck_assert(rg_judge(&r[0]));
    ck_assert_msg(strstr(r[0].why, "known failure (cause, line "), "%s", r[0].why);
    rg_tri_free(&run);
    /* Not a directory: one line, no crash. */
    ck_assert_int_eq(rg_tri_load("/nonexistent/run", &run, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/run"));
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A result of mk()'s with one fault that fired (its kind the rule's first word). */
static void faulted(rg_result *r, const char *rule)
{
    r->nrules = 1;
    snprintf(r->rule[0].rule, sizeof(r->rule[0].rule), "%s", rule);
    r->rule[0].fired = 1;
    rg_judge(r);
}

/* Whether a failure reads XFAIL under the known file at path. */
static bool known_as(rg_result *r, const char *path)
{
    static rg_scenario sc;
    rg_scenario *scs[] = {&sc};
    char notes[512], err[512];
    memset(&sc, 0, sizeof(sc));
    snprintf(sc.name, sizeof(sc.name), "%s", r->name);
    ck_assert_msg(rg_known_load(path, NULL, scs, 1, notes, sizeof(notes), err, sizeof(err)) == 0,
                  "%s", err);
    r->nksig = sc.nksig;
    memcpy(r->ksig, sc.ksig, sizeof(sc.ksig));
    return rg_judge(r) && r->known_state == RG_KNOWN_XFAIL;
}

/* --known-by-fault: a transport whose abort under an error shows another op and other ranks
 * each run is known by its fault and first verdict; a failure without faults keeps its whole
 * signature, and another first verdict under the fault is not known. */
START_TEST(test_known_by_fault)
{
    static rg_result r[3], t;
    static rg_tri_run run;
    char dir[] = "/tmp/rg-tribyfault-XXXXXX", err[600], path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    mk(&r[0], "flush", 2, 0, RG_V_CRASH, RG_V_NOT_FAIL_STOP, "all_reduce float32 count 9", 0);
    faulted(&r[0], "error status=WR_FLUSH_ERR op=recv rank=0 nth=1");
    mk(&r[1], "negpoll", 3, 1, RG_V_CRASH, RG_V_DEADLOCK, "broadcast int8 count 9", 0);
    faulted(&r[1], "error op=send rank=1 nth=3");
    mk(&r[2], "plain", 2, 0, RG_V_CRASH, RG_V_OK, "all_gather float32 count 9", 0);
    save(dir, "000-flush", &r[0]);
    save(dir, "001-negpoll", &r[1]);
    save(dir, "002-plain", &r[2]);
    for (int by = 0; by < 2; by++) {
        const char *dirs[] = {dir};
        ck_assert_msg(rg_tri_load_runs(dirs, 1, &run, err, sizeof(err)) == 0, "%s", err);
        run.with.by_fault = by;
        ck_assert_int_eq(rg_tri_group_cases(&run), 0);
        ck_assert_int_eq(run.ngroups, 3);
        ck_assert_msg(rg_tri_write(&run, err, sizeof(err)) == 0, "%s", err);
        snprintf(path, sizeof(path), "%s/triage/known-failures.yaml", dir);
        char *known = rg_check_slurp(path);
        ck_assert_msg(!by || strstr(known, "why: \"CRASH under error, whatever else it showed (2 "
                                           "faces seen)\"\n    first: CRASH\n    faults: "
                                           "\"error\"\n    seen: [\"flush\", \"negpoll\"]\n"),
                      "%s", known);
        free(known);
        /* A third face of the abort: another op, the others another way. */
        mk(&t, "barrier", 4, 2, RG_V_CRASH, RG_V_KILLED, "barrier", 0);
        faulted(&t, "error op=recv rank=2 nth=7");
        ck_assert_int_eq(known_as(&t, path), by);
        /* Another first verdict under the same fault is not that bug. */
        mk(&t, "barrier", 4, 2, RG_V_SILENT_CORRUPTION, RG_V_OK, "barrier", 0);
        faulted(&t, "error op=recv rank=2 nth=7");
        ck_assert(!known_as(&t, path));
        /* Without faults a crash elsewhere is another face, in either file. */
        mk(&t, "plain", 2, 0, RG_V_CRASH, RG_V_OK, "barrier", 0);
        ck_assert(!known_as(&t, path));
        /* ... and the face seen is known in both. */
        mk(&t, "plain", 2, 0, RG_V_CRASH, RG_V_OK, "all_gather float32 count 9", 0);
        ck_assert(known_as(&t, path));
        rg_tri_free(&run);
    }
    /* One bug of two faces (as triage merges a proven cause's groups): each face's entry is
     * seen only where that face showed; a hang's entry keeps its frames. */
    mk(&r[2], "stop", 3, 1, RG_V_DEADLOCK, RG_V_DEADLOCK, "barrier", 0);
    faulted(&r[2], "stop op=send rank=0 nth=1");
    char sub[700];
    snprintf(sub, sizeof(sub), "rm -rf '%s/002-plain' '%s/triage'", dir, dir);
    ck_assert_int_eq(system(sub), 0);
    save(dir, "002-stop", &r[2]);
    snprintf(sub, sizeof(sub), "%s/002-stop", dir);
    put(sub, "rank1.backtrace",
        "#0  0x00007f04 in __GI___poll (fds=0x1) at poll.c:29\n"
        "#1  0x00007f05 in Pair::signalIoFailure (this=0x1) at pair.cc:88\n");
    const char *dirs[] = {dir};
    ck_assert_msg(rg_tri_load_runs(dirs, 1, &run, err, sizeof(err)) == 0, "%s", err);
    run.with.by_fault = true;
    ck_assert_int_eq(rg_tri_group_cases(&run), 0);
    ck_assert_int_eq(run.ngroups, 3);
    rg_tri_group *g0 = &run.groups[0];
    for (int g = 1; g < run.ngroups; g++) {
        g0->also[g0->nalso++] = run.groups[g].sig;
        for (int c = 0; c < run.groups[g].ncases; c++)
            g0->cases[g0->ncases++] = run.groups[g].cases[c];
    }
    while (run.ngroups > 1)
        rg_tri_group_drop(&run, 1);
    ck_assert_msg(rg_tri_write(&run, err, sizeof(err)) == 0, "%s", err);
    snprintf(path, sizeof(path), "%s/triage/known-failures.yaml", dir);
    char *known = rg_check_slurp(path);
    ck_assert_msg(strstr(known, "faults: \"error\"\n    seen: [\"flush\", \"negpoll\"]\n"), "%s",
                  known);
    ck_assert_msg(strstr(known, "first: DEADLOCK\n    faults: \"stop\"\n    frames: "
                                "[\"Pair::signalIoFailure\"]\n    seen: [\"stop\"]\n"),
                  "%s", known);
    free(known);
    rg_tri_free(&run);
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Two runs of one suite: their failures grouped together, a scenario that failed alike in both
 * named once in its entry, the first run's directory the triage's. */
START_TEST(test_runs)
{
    static rg_result r[3];
    static rg_tri_run run;
    char a[] = "/tmp/rg-triruns-a-XXXXXX", b[] = "/tmp/rg-triruns-b-XXXXXX", err[600], path[600];
    ck_assert_ptr_nonnull(mkdtemp(a));
    ck_assert_ptr_nonnull(mkdtemp(b));
    mk(&r[0], "hang-2r", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 9", -2);
    mk(&r[1], "hang-2r", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 9", -2);
    mk(&r[2], "corrupt", 3, 2, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce bf16 sum count 3", 0);
    save(a, "000-hang-2r", &r[0]);
    save(b, "000-hang-2r", &r[1]);
    save(b, "001-corrupt", &r[2]);
    const char *dirs[] = {a, b};
    ck_assert_msg(rg_tri_load_runs(dirs, 2, &run, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(run.nruns, 2);
    ck_assert_int_eq(run.nresults, 3);
    ck_assert_int_eq(run.nfail, 3);
    ck_assert_str_eq(run.dir, a);
    ck_assert_int_eq(rg_tri_group_cases(&run), 0);
    ck_assert_int_eq(run.ngroups, 2);
    ck_assert_int_eq(run.groups[0].ncases, 2);
    ck_assert_int_eq(rg_tri_write(&run, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/triage/known-failures.yaml", a);
    char *known = rg_check_slurp(path);
    ck_assert_msg(strstr(known, "seen: [\"hang-2r\"]\n") && strstr(known, "seen: [\"corrupt\"]"),
                  "%s", known);
    free(known);
    rg_tri_free(&run);
    /* More runs than it reads, or none: one line. */
    const char *many[RG_TRI_RUNS_MAX + 1];
    for (int i = 0; i <= RG_TRI_RUNS_MAX; i++)
        many[i] = a;
    ck_assert_int_eq(rg_tri_load_runs(many, RG_TRI_RUNS_MAX + 1, &run, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "1 to 16"));
    const char *gone[] = {a, "/nonexistent/run"};
    ck_assert_int_eq(rg_tri_load_runs(gone, 2, &run, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/run"));
    snprintf(path, sizeof(path), "rm -rf '%s' '%s'", a, b);
    ck_assert_int_eq(system(path), 0);
}
END_TEST

/* --- re-runs --------------------------------------------------------------------------------- */

START_TEST(test_words)
{
    char *argv[8], buf[256];
    ck_assert_int_eq(rg_tri_words("/b/railguard run --out '/tmp/a b' 'it'\\''s.yaml'", argv, 8, buf,
                                  sizeof(buf)),
                     5);
    ck_assert_str_eq(argv[0], "/b/railguard");
    ck_assert_str_eq(argv[3], "/tmp/a b");
    ck_assert_str_eq(argv[4], "it's.yaml");
    ck_assert_ptr_null(argv[5]);
    /* What railguard never writes is refused, not run through a shell. */
    ck_assert_int_eq(rg_tri_words("a 'open", argv, 8, buf, sizeof(buf)), -1);
    ck_assert_int_eq(rg_tri_words("a; rm -rf x", argv, 8, buf, sizeof(buf)), -1);
    ck_assert_int_eq(rg_tri_words("a $(x)", argv, 8, buf, sizeof(buf)), -1);
    ck_assert_int_eq(rg_tri_words("a b c d e f g h i", argv, 8, buf, sizeof(buf)), -1);
    ck_assert_int_eq(rg_tri_words("a b", argv, 8, buf, 3), -1);
}
END_TEST

START_TEST(test_rate_said)
{
    char s[200];
    rg_tri_rate r = {0};
    rg_tri_rate_said(&r, s, sizeof(s));
    ck_assert_ptr_nonnull(strstr(s, "not measured"));
    r = (rg_tri_rate){.n = 5, .same = 5};
    rg_tri_rate_said(&r, s, sizeof(s));
    ck_assert_str_eq(s, "deterministic: 5 of 5 re-runs");
    r = (rg_tri_rate){.n = 5, .same = 2, .passed = 2, .unjudged = 1};
    rg_tri_rate_said(&r, s, sizeof(s));
    ck_assert_str_eq(s, "flaky: 2 of 5 re-runs (2 passed, 0 failed otherwise, 1 not judged)");
    r = (rg_tri_rate){.n = 3, .passed = 3};
    rg_tri_rate_said(&r, s, sizeof(s));
    ck_assert_str_eq(s, "did not recur in 3 re-runs (3 passed, 0 failed otherwise, 0 not judged)");
}
END_TEST

/*
 * The re-run loop end to end, with a stand-in for `railguard run` (no devices needed): a
 * script that, called as the reproduce line calls railguard, writes a result into its --out,
 * failing the same way on odd calls and passing on even ones.
 */
START_TEST(test_rerun)
{
    static rg_result bad, good;
    static rg_tri_run run;
    char dir[] = "/tmp/rg-rerun-XXXXXX", err[600], path[700], script[700], cmd[1500];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    mk(&bad, "flaky", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 5", -2);
    mk(&good, "flaky", 2, 0, RG_V_OK, RG_V_OK, "all_gather float32 count 5", 0);
    save(dir, "000-flaky", &bad);
    snprintf(path, sizeof(path), "%s/good.json", dir);
    ck_assert_int_eq(rg_result_save(&good, path, err, sizeof(err)), 0);
    snprintf(script, sizeof(script), "%s/fake-railguard", dir);
    FILE *f = fopen(script, "w");
    fprintf(f,
            "#!/bin/sh\n"
            "echo \"$*\" > %s/args\n"
            "while [ $# -gt 1 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
            "n=$(cat %s/calls 2>/dev/null || echo 0); n=$((n + 1)); echo $n > %s/calls\n"
            "mkdir -p \"$out/000-flaky\"\n"
            "if [ $((n %% 2)) = 1 ]; then cp %s/000-flaky/result.json \"$out/000-flaky/\";\n"
            "else cp %s/good.json \"$out/000-flaky/result.json\"; fi\n",
            dir, dir, dir, dir, dir);
    fclose(f);
    ck_assert_int_eq(chmod(script, 0755), 0);
    /* The run's own reproduce line names the stand-in. */
    snprintf(bad.repro, sizeof(bad.repro), "%s run --seed 1 --out %s/repro flaky.yaml", script,
             dir);
    snprintf(path, sizeof(path), "%s/000-flaky/result.json", dir);
    ck_assert_int_eq(rg_result_save(&bad, path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_tri_load(dir, &run, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_tri_group_cases(&run), 0);
    ck_assert_int_eq(run.ngroups, 1);
    rg_tri_rate *rate = &run.groups[0].rate;
    ck_assert_int_eq(rg_tri_rerun(&run, 0, 4, 60, rate, err, sizeof(err)), 0);
    ck_assert_int_eq(rate->n, 4);
    ck_assert_int_eq(rate->same, 2);
    ck_assert_int_eq(rate->passed, 2);
    ck_assert_int_eq(rate->unjudged, 0);
    snprintf(path, sizeof(path), "%s/triage/rerun/01-%s/3/000-flaky/result.json", dir,
             run.groups[0].slug);
    ck_assert_int_eq(access(path, R_OK), 0);
    /* The line as it was, but for its --out. */
    char *args;
    snprintf(path, sizeof(path), "%s/args", dir);
    snprintf(cmd, sizeof(cmd), "run --seed 1 --out %s/triage/rerun/01-%s/4 flaky.yaml\n", dir,
             run.groups[0].slug);
    args = rg_check_slurp(path);
    ck_assert_str_eq(args, cmd);
    free(args);
    /* triage --deadline: added before the scenario, or in place of the line's own. */
    run.with = (rg_tri_with){.deadline_s = 12.5, .slow_scale = 2};
    ck_assert_int_eq(rg_tri_rerun(&run, 0, 1, 60, rate, err, sizeof(err)), 0);
    snprintf(cmd, sizeof(cmd),
             "run --seed 1 --out %s/triage/rerun/01-%s/1 --deadline 12.5 --slow-scale 2 "
             "flaky.yaml\n",
             dir, run.groups[0].slug);
    args = rg_check_slurp(path);
    ck_assert_str_eq(args, cmd);
    free(args);
    snprintf(run.cases[0].res->repro, sizeof(run.cases[0].res->repro),
             "%s run --deadline 40 --seed 1 --slow-scale 3 --out x flaky.yaml", script);
    ck_assert_int_eq(rg_tri_rerun(&run, 0, 1, 60, rate, err, sizeof(err)), 0);
    snprintf(cmd, sizeof(cmd),
             "run --deadline 12.5 --seed 1 --slow-scale 2 --out %s/triage/rerun/01-%s/1 "
             "flaky.yaml\n",
             dir, run.groups[0].slug);
    args = rg_check_slurp(path);
    ck_assert_str_eq(args, cmd);
    free(args);
    /* A gated run's line: its known-failures file left out (the re-run would read XFAIL). */
    snprintf(run.cases[0].res->repro, sizeof(run.cases[0].res->repro),
             "%s run --seed 1 --known /k.yaml --out x flaky.yaml", script);
    ck_assert_int_eq(rg_tri_rerun(&run, 0, 1, 60, rate, err, sizeof(err)), 0);
    snprintf(cmd, sizeof(cmd),
             "run --seed 1 --out %s/triage/rerun/01-%s/1 --deadline 12.5 --slow-scale 2 "
             "flaky.yaml\n",
             dir, run.groups[0].slug);
    args = rg_check_slurp(path);
    ck_assert_str_eq(args, cmd);
    free(args);
    run.with = (rg_tri_with){0};
    /* A line that is not a railguard run is refused, not run. */
    snprintf(bad.repro, sizeof(bad.repro), "%s exec -- ls", script);
    run.cases[0].res->repro[0] = '\0';
    snprintf(run.cases[0].res->repro, sizeof(run.cases[0].res->repro), "%s", bad.repro);
    ck_assert_int_eq(rg_tri_rerun(&run, 0, 1, 60, rate, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not one railguard run"));
    rg_tri_free(&run);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/*
 * A run directory in dir with one failing case, big.yaml (its YAML given, `ranks` ranks), and a
 * stand-in railguard (dir/fake-railguard) as its reproduce line: the case's result where the
 * shell condition `fails` holds of the candidate ($last), a pass elsewhere. Loaded into run and
 * grouped.
 */
static void stand_in(const char *dir, const char *yaml, int ranks, const char *fails,
                     rg_tri_run *run)
{
    static rg_result bad, good;
    char err[600], path[700], script[700];
    snprintf(path, sizeof(path), "%s/big.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs(yaml, f);
    fclose(f);
    mk(&bad, "big", ranks, 0, RG_V_SILENT_CORRUPTION, RG_V_SILENT_CORRUPTION, "all_reduce float32",
       0);
    mk(&good, "big", ranks, 0, RG_V_OK, RG_V_OK, "all_reduce float32", 0);
    snprintf(bad.path, sizeof(bad.path), "%s", path);
    save(dir, "000-big", &bad);
    snprintf(path, sizeof(path), "%s/good.json", dir);
    ck_assert_int_eq(rg_result_save(&good, path, err, sizeof(err)), 0);
    snprintf(script, sizeof(script), "%s/fake-railguard", dir);
    f = fopen(script, "w");
    fprintf(f,
            "#!/bin/sh\n"
            "for a; do last=$a; done\n"
            "while [ $# -gt 1 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
            "mkdir -p \"$out/000-x\"\n"
            "if %s; then cp %s/000-big/result.json \"$out/000-x/\";\n"
            "else cp %s/good.json \"$out/000-x/result.json\"; fi\n",
            fails, dir, dir);
    fclose(f);
    ck_assert_int_eq(chmod(script, 0755), 0);
    snprintf(bad.repro, sizeof(bad.repro), "%s run --seed 1 --out %s/repro %s/big.yaml", script,
             dir, dir);
    snprintf(path, sizeof(path), "%s/000-big/result.json", dir);
    ck_assert_int_eq(rg_result_save(&bad, path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_tri_load(dir, run, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_tri_group_cases(run), 0);
}

/*
 * Minimising with the same stand-in, whose bug is any all_reduce: from 3 ranks, 2 rails, an
 * all_reduce of 16 and a broadcast, the minimal case is 2 ranks, 1 rail, an all_reduce of 1.
 */
START_TEST(test_minimise)
{
    static rg_tri_run run;
    static rg_scenario min;
    char dir[] = "/tmp/rg-min-XXXXXX", err[600], path[700], script[700], cmd[1500];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(script, sizeof(script), "%s/fake-railguard", dir);
    stand_in(dir,
             "ranks: 3\nrails: 2\nprogram:\n  - {op: all_reduce, count: 16}\n"
             "  - {op: broadcast, count: 4, root: 0}\n",
             3, "grep -q all_reduce \"$last\"", &run);
    rg_tri_group *gr = &run.groups[0];
    ck_assert_int_eq(rg_tri_minimise(&run, 0, 20, 60, err, sizeof(err)), 0);
    ck_assert_msg(gr->min.kept >= 4 && gr->min.path[0], "%s", gr->min.note);
    ck_assert_msg(strstr(gr->min.steps, "2 ranks, 1 rail(s), counts halved") &&
                      strstr(gr->min.steps, "without step 1 (broadcast)"),
                  "%s", gr->min.steps);
    ck_assert_msg(rg_scenario_load(gr->min.path, &min, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(min.ranks, 2);
    ck_assert_int_eq(min.rails, 1);
    ck_assert_int_eq(min.nops, 1);
    ck_assert_int_eq(min.ops[0].kind, RG_SC_ALL_REDUCE);
    ck_assert_uint_eq(min.ops[0].count, 1);
    /* Its reproduce line is the group's, naming the minimal scenario. */
    ck_assert_msg(strstr(gr->min.repro, script) && strstr(gr->min.repro, gr->min.path), "%s",
                  gr->min.repro);
    /* The report shows the minimal case first. */
    ck_assert_int_eq(rg_tri_write(&run, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/triage/01-%s.md", dir, gr->slug);
    char *md = rg_check_slurp(path);
    ck_assert_ptr_nonnull(strstr(md, "## The minimal scenario (minimised from big"));
    free(md);
    /* A budget of one candidate: the first (a rank fewer) is kept, and no more tried. */
    ck_assert_int_eq(rg_tri_minimise(&run, 0, 1, 60, err, sizeof(err)), 0);
    ck_assert_int_eq(gr->min.tried, 1);
    rg_tri_free(&run);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/*
 * A deterministic group (3 of 3 re-runs) whose bug, below a count of 8, fails only on a
 * candidate's first run (a race that halving made rare): those candidates are screened in and
 * then refused on the runs that confirm them, so the minimal case stops at 8 and fails every
 * time, rather than at a count of 1 that failed once.
 */
START_TEST(test_minimise_confirms)
{
    static rg_tri_run run;
    static rg_scenario min;
    char dir[] = "/tmp/rg-minc-XXXXXX", err[600], cmd[1500];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    stand_in(dir, "ranks: 2\nprogram:\n  - {op: all_reduce, count: 16}\n", 2,
             "grep -Eq 'count: (8|16)[^0-9]' \"$last\" || "
             "{ [ ! -e \"$last.seen\" ] && : >\"$last.seen\"; }",
             &run);
    rg_tri_group *gr = &run.groups[0];
    gr->rate = (rg_tri_rate){.n = 3, .same = 3};
    ck_assert_int_eq(rg_tri_minimise(&run, 0, 20, 60, err, sizeof(err)), 0);
    ck_assert_msg(gr->min.path[0], "%s", gr->min.note);
    ck_assert_msg(rg_scenario_load(gr->min.path, &min, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(min.ops[0].count, 8);
    ck_assert_msg(strstr(gr->min.note, "each failing alike in at least 3 of 3 run(s)"), "%s",
                  gr->min.note);
    /* The candidates below 8 were each run: once screened in, then refused. */
    ck_assert_msg(gr->min.tried > gr->min.kept, "%s", gr->min.note);
    rg_tri_free(&run);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/*
 * Two groups that differ only in the fault that fired (a stall, a delay), where the stand-in
 * fails alike without any: each minimal case drops its fault first, the two minimal cases have
 * one signature, and the groups merge into one, its known-failures entry naming no faults.
 */
static void with_fault(rg_result *r, const char *rule)
{
    r->nrules = 1;
    snprintf(r->rule[0].rule, sizeof(r->rule[0].rule), "%s", rule);
    r->rule[0].fired = 1;
    r->rule[0].fired_by[0] = 1;
}

START_TEST(test_merge)
{
    static rg_result st, de, none;
    static rg_tri_run run;
    char dir[] = "/tmp/rg-merge-XXXXXX", err[600], path[700], script[700], cmd[1500];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *const yaml[] = {"stalled", "delayed"};
    const char *const rule[] = {"stall ms=10 nth=1", "delay ms=5 nth=1"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s.yaml", dir, yaml[i]);
        FILE *f = fopen(path, "w");
        fprintf(f, "ranks: 2\nprogram:\n  - {op: all_reduce, count: 8}\nfaults:\n  - %s\n",
                rule[i]);
        fclose(f);
    }
    mk(&st, "stalled", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_reduce float32", 0);
    mk(&de, "delayed", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_reduce float32", 0);
    mk(&none, "x", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_reduce float32", 0);
    with_fault(&st, rule[0]);
    with_fault(&de, rule[1]);
    snprintf(st.path, sizeof(st.path), "%s/stalled.yaml", dir);
    snprintf(de.path, sizeof(de.path), "%s/delayed.yaml", dir);
    save(dir, "000-stalled", &st);
    save(dir, "001-delayed", &de);
    snprintf(path, sizeof(path), "%s/none.json", dir);
    ck_assert_int_eq(rg_result_save(&none, path, err, sizeof(err)), 0);
    /* The stand-in: the same deadlock, with whichever fault the scenario has firing. */
    snprintf(script, sizeof(script), "%s/fake-railguard", dir);
    FILE *f = fopen(script, "w");
    fprintf(
        f,
        "#!/bin/sh\n"
        "for a; do last=$a; done\n"
        "while [ $# -gt 1 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
        "mkdir -p \"$out/000-x\"\n"
        "if grep -q '^  - stall' \"$last\"; then cp %s/000-stalled/result.json \"$out/000-x/\";\n"
        "elif grep -q '^  - delay' \"$last\"; then cp %s/001-delayed/result.json \"$out/000-x/\";\n"
        "else cp %s/none.json \"$out/000-x/result.json\"; fi\n",
        dir, dir, dir);
    fclose(f);
    ck_assert_int_eq(chmod(script, 0755), 0);
    rg_result *both[] = {&st, &de};
    const char *const sub[] = {"000-stalled", "001-delayed"};
    for (int i = 0; i < 2; i++) {
        snprintf(both[i]->repro, sizeof(both[i]->repro), "%s run --out %s/repro %s/%s.yaml", script,
                 dir, dir, yaml[i]);
        snprintf(path, sizeof(path), "%s/%s/result.json", dir, sub[i]);
        ck_assert_int_eq(rg_result_save(both[i], path, err, sizeof(err)), 0);
    }
    ck_assert_int_eq(rg_tri_load(dir, &run, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_tri_group_cases(&run), 0);
    ck_assert_int_eq(run.ngroups, 2);
    /* The faults alone tell them apart. */
    ck_assert(!rg_tri_alike(&run.groups[0].sig, &run.groups[1].sig));
    ck_assert(!rg_tri_alike(&run.groups[1].sig, &run.groups[0].sig));
    for (int g = 0; g < 2; g++) {
        ck_assert_int_eq(rg_tri_minimise(&run, g, 3, 60, err, sizeof(err)), 0);
        ck_assert_msg(strstr(run.groups[g].min.steps, "without faults") == run.groups[g].min.steps,
                      "%s", run.groups[g].min.steps);
        ck_assert_str_eq(run.groups[g].min.sig.faults, "");
        /* The group's failure, and the same with fewer faults; never the reverse. */
        ck_assert(rg_tri_alike(&run.groups[g].sig, &run.groups[g].min.sig));
        ck_assert(!rg_tri_alike(&run.groups[g].min.sig, &run.groups[g].sig));
    }
    char second_min[1200];
    snprintf(second_min, sizeof(second_min), "%s", run.groups[1].min.path);
    ck_assert_int_eq(rg_tri_merge(&run, err, sizeof(err)), 1);
    ck_assert_int_eq(run.ngroups, 1);
    rg_tri_group *gr = &run.groups[0];
    ck_assert_int_eq(gr->ncases, 2);
    ck_assert_msg(strstr(gr->merged, "(1 scenario(s), its minimal case triage/min/02-"), "%s",
                  gr->merged);
    snprintf(path, sizeof(path), "%s/triage/min/%s", dir, strrchr(second_min, '/') + 1);
    ck_assert_int_eq(access(path, R_OK), 0);
    /* The merged group's minimal file went beside the candidates; the survivor's is 01-. */
    ck_assert_int_ne(access(second_min, F_OK), 0);
    snprintf(path, sizeof(path), "%s/triage/01-%s.min.yaml", dir, gr->slug);
    ck_assert_str_eq(gr->min.path, path);
    ck_assert_int_eq(access(path, R_OK), 0);
    ck_assert_int_eq(rg_tri_write(&run, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/triage/known-failures.yaml", dir);
    char *known = rg_check_slurp(path);
    ck_assert_ptr_null(strstr(known, "faults:"));
    ck_assert_ptr_nonnull(strstr(known, "first: DEADLOCK"));
    free(known);
    snprintf(path, sizeof(path), "%s/triage/01-%s.md", dir, gr->slug);
    char *md = rg_check_slurp(path);
    ck_assert_ptr_nonnull(strstr(md,
                                 "- **Without the faults**: the minimal case fails the same way "
                                 "with none fired"));
    ck_assert_ptr_nonnull(strstr(md, "- **Merged into this group**: "));
    free(md);
    rg_tri_free(&run);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Writes text to dir/name. */
/* A cause only with the lines it rests on; none where nothing proves one. */
START_TEST(test_diagnose)
{
    static rg_result r;
    rg_sig s;
    rg_tri_cause c;
    char dir[] = "/tmp/rg-why-XXXXXX", cmd[700];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* An error handed to rank 0 and swallowed: the fault event is cited by line. */
    mk(&r, "swallow", 2, 0, RG_V_ERROR_SWALLOWED, RG_V_OK, "all_reduce float32", 0);
    snprintf(r.dir, sizeof(r.dir), "%s", dir);
    rg_signature(&r, &s);
    rg_tri_diagnose(&r, &s, &c);
    ck_assert(!c.proven); /* no events file: nothing to rest on */
    ck_assert_ptr_nonnull(strstr(c.text, "none proven"));
    put(dir, "rank0.events.jsonl",
        "{\"event\":\"load\",\"rank\":0}\n"
        "{\"event\":\"fault\",\"rank\":0,\"fault\":\"error\",\"qp\":18,"
        "\"status\":\"WR_FLUSH_ERR\",\"wr_id\":\"0x3e9\"}\n");
    rg_tri_diagnose(&r, &s, &c);
    ck_assert(c.proven);
    ck_assert_ptr_nonnull(strstr(c.text, "an error polled, then ignored"));
    ck_assert_int_eq(c.kind, RG_C_ERROR_IGNORED);
    ck_assert_int_eq(c.nlines, 1);
    ck_assert_ptr_nonnull(strstr(c.line[0], "rank0.events.jsonl:2: {\"event\":\"fault\""));
    ck_assert_str_eq(c.site, ""); /* the fault event names no call site: no place to match */
    put(dir, "rank0.events.jsonl",
        "{\"event\":\"fault\",\"rank\":0,\"fault\":\"error\",\"qp\":18,"
        "\"status\":\"WR_FLUSH_ERR\",\"caller\":\"/usr/lib/x/librailguard.so.1+0x1a2b\","
        "\"from\":\"\"}\n");
    rg_tri_diagnose(&r, &s, &c);
    ck_assert_str_eq(c.site, "the poll at librailguard.so.1+0x1a2b");
    ck_assert_str_eq(c.place, ""); /* no debug information read: no name another build shares */
    char key[400];
    rg_tri_cause_place_key(&c, key, sizeof(key));
    ck_assert_str_eq(key, "error-ignored at the poll at librailguard.so.1+0x1a2b");
    /* An object with debug information (this binary): the function and its line (one long
     * enough that 8 bytes in is still inside it). */
    {
        Dl_info di;
        ck_assert(dladdr((void *)(uintptr_t)rg_tri_diagnose_ruled, &di) != 0);
        char exe[PATH_MAX], ev[PATH_MAX + 300];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        ck_assert_int_gt(n, 0);
        exe[n] = '\0';
        snprintf(
            ev, sizeof(ev),
            "{\"event\":\"fault\",\"rank\":0,\"fault\":\"error\",\"qp\":18,"
            "\"status\":\"WR_FLUSH_ERR\",\"caller\":\"%s+0x%llx\",\"from\":\"\"}\n",
            exe,
            (unsigned long long)((uintptr_t)rg_tri_diagnose_ruled - (uintptr_t)di.dli_fbase + 8));
        put(dir, "rank0.events.jsonl", ev);
        rg_tri_diagnose(&r, &s, &c);
        ck_assert_str_eq(c.place, "the poll in rg_tri_diagnose_ruled");
        ck_assert_msg(!strncmp(c.site, "the poll in rg_tri_diagnose_ruled (rg_tri_why.c:", 48),
                      "%s", c.site);
        rg_tri_cause_place_key(&c, key, sizeof(key));
        ck_assert_str_eq(key, "error-ignored at the poll in rg_tri_diagnose_ruled");
        rg_tri_cause_key(&c, key, sizeof(key)); /* within one build, the line tells sites apart */
        ck_assert_msg(strstr(key, "(rg_tri_why.c:"), "%s", key);
    }
    /* A send buffer changed in flight: the sanitizer's event. */
    mk(&r, "reuse", 2, 1, RG_V_BUFFER_REWRITTEN_IN_FLIGHT, RG_V_OK, "all_reduce float32", 0);
    snprintf(r.dir, sizeof(r.dir), "%s", dir);
    put(dir, "rank1.events.jsonl",
        "{\"event\":\"ownership\",\"rank\":1,\"op\":\"send\",\"qp\":17,\"offset\":4}\n");
    rg_signature(&r, &s);
    rg_tri_diagnose(&r, &s, &c);
    ck_assert(c.proven);
    ck_assert_ptr_nonnull(strstr(c.text, "a buffer reused in flight: rank 1"));
    ck_assert_int_eq(c.kind, RG_C_BUFFER_REUSED);
    ck_assert_ptr_nonnull(strstr(c.line[0], "rank1.events.jsonl:1:"));
    ck_assert_str_eq(c.site, "a send buffer");
    /* A hang past the timeout with no rank timing out: no deadline. */
    put(dir, "hang.yaml",
        "ranks: 2\ntimeout: 1\ndeadline: 3\nprogram:\n  - {op: all_gather, count: 5}\n");
    mk(&r, "hang", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 5", 0);
    snprintf(r.dir, sizeof(r.dir), "%s", dir);
    snprintf(r.path, sizeof(r.path), "%s/hang.yaml", dir);
    r.rank[0].step_t_s = 0.4;
    r.rank[0].left_t_s = 3.5; /* ended late (a second attempt's DEADLOCK): it had a deadline */
    rg_signature(&r, &s);
    rg_tri_diagnose(&r, &s, &c);
    ck_assert(!c.proven);
    r.rank[0].left_t_s = -1; /* still running at the deadline */
    rg_tri_diagnose(&r, &s, &c);
    ck_assert_msg(c.proven, "%s", c.text);
    ck_assert_msg(strstr(c.text, "a wait with no deadline: rank 0's all_gather float32 count 5 "
                                 "began at 0.40 s and was still running at the 3 s deadline, 2.6 "
                                 "s later, past the 1.0 s timeout"),
                  "%s", c.text);
    ck_assert_int_eq(c.kind, RG_C_NO_DEADLINE);
    /* Judged hung before the deadline (nothing moved for longer than the timeout): the wait
     * is measured to that judgement, not to a deadline the run never reached. */
    rg_rank_find(&r.rank[0], RG_V_DEADLOCK, 2.1, RG_HANG_EARLY " 1.6 s (no verbs call ...)");
    rg_tri_diagnose(&r, &s, &c);
    ck_assert_msg(c.proven, "%s", c.text);
    ck_assert_msg(strstr(c.text, "began at 0.40 s and was still running when the run judged it "
                                 "hung at 2.10 s, 1.7 s later, past the 1.0 s timeout"),
                  "%s", c.text);
    /* ... and a wait that ended within the timeout proves nothing of deadlines. */
    r.rank[0].nfindings = 0;
    rg_rank_find(&r.rank[0], RG_V_DEADLOCK, 1.2, RG_HANG_EARLY " 0.7 s (no verbs call ...)");
    rg_tri_diagnose(&r, &s, &c);
    ck_assert_msg(!c.proven, "%s", c.text);
    r.rank[0].nfindings = 0;
    /* ... but not when some rank did time out: that transport has deadlines. */
    r.rank[1].status = RG_ERR_TIMEOUT;
    rg_tri_diagnose(&r, &s, &c);
    ck_assert(!c.proven);
    /* A wrong result: what happened is shown, no cause is made up. */
    mk(&r, "wrong", 2, 0, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce float32", 0);
    rg_signature(&r, &s);
    rg_tri_diagnose(&r, &s, &c);
    ck_assert(!c.proven);
    ck_assert_int_eq(c.nlines, 0);
    ck_assert_int_eq(c.kind, RG_C_NONE);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A QP's role by the ranks' places around the ring, the same whatever the scenario's size. */
START_TEST(test_role)
{
    char out[96];
    rg_tri_role(2, 1, 0, "on the QP to", out, sizeof(out));
    ck_assert_str_eq(out, "on the QP to its peer");
    rg_tri_role(4, 3, 0, "to", out, sizeof(out));
    ck_assert_str_eq(out, "to the next rank");
    rg_tri_role(3, 0, 2, "to", out, sizeof(out));
    ck_assert_str_eq(out, "to the previous rank");
    rg_tri_role(5, 0, 2, "to", out, sizeof(out));
    ck_assert_str_eq(out, "to another rank");
}
END_TEST

/* One group of a hand-made run: sig first/op/others, its cause, n cases from case c. */
static void bug_group(rg_tri_run *run, int g, const char *first, const char *op, bool proven,
                      rg_cause kind, const char *site, int c, int n)
{
    rg_tri_group *gr = &run->groups[g];
    memset(gr, 0, sizeof(*gr));
    snprintf(gr->sig.first, sizeof(gr->sig.first), "%s", first);
    snprintf(gr->sig.op, sizeof(gr->sig.op), "%s", op);
    snprintf(gr->sig.key, sizeof(gr->sig.key), "%s %s", first, op);
    snprintf(gr->title, sizeof(gr->title), "%s in %s", first, op);
    snprintf(gr->slug, sizeof(gr->slug), "g%d", g);
    gr->cause.proven = proven;
    gr->cause.kind = kind;
    snprintf(gr->cause.site, sizeof(gr->cause.site), "%s", site);
    snprintf(gr->cause.text, sizeof(gr->cause.text), "%s", proven ? "proven" : "none proven");
    gr->cases = calloc((size_t)run->nfail, sizeof(int));
    ck_assert_ptr_nonnull(gr->cases);
    for (int i = 0; i < n; i++)
        gr->cases[gr->ncases++] = c + i;
    gr->rep = c;
}

/*
 * Bugs, not groups: two groups proven the same wait with no deadline in the same frame are one
 * bug, titled by it, both signatures kept (and in the known-failures file); the same cause in
 * another frame is another bug; an unproven group and one whose cause names no place stand
 * apart and say why.
 */
START_TEST(test_bugs)
{
    static rg_tri_run run;
    static rg_result r[6];
    char dir[] = "/tmp/rg-bugs-XXXXXX", err[600], path[700], cmd[700];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    memset(&run, 0, sizeof(run));
    snprintf(run.dir, sizeof(run.dir), "%s", dir);
    run.nfail = 6;
    run.results = NULL;
    run.cases = calloc(6, sizeof(rg_tri_case));
    run.groups = calloc(6, sizeof(rg_tri_group));
    ck_assert(run.cases && run.groups);
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof(name), "s%d", i);
        mk(&r[i], name, 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_reduce", 0);
        run.cases[i].res = &r[i];
    }
    run.ngroups = 5;
    bug_group(&run, 0, "DEADLOCK", "all_reduce", true, RG_C_NO_DEADLINE, "the wait in ring_wait", 0,
              2);
    bug_group(&run, 1, "NOT_UNEXPECTED", "barrier", false, RG_C_NONE, "", 2, 1);
    bug_group(&run, 2, "DEADLOCK", "all_gather", true, RG_C_NO_DEADLINE, "the wait in ring_wait", 3,
              1);
    bug_group(&run, 3, "DEADLOCK", "sendrecv", true, RG_C_NO_DEADLINE, "the wait in mesh_wait", 4,
              1);
    bug_group(&run, 4, "DEADLOCK", "broadcast", true, RG_C_UC_NO_RECV, "", 5, 1);
    ck_assert_int_eq(rg_tri_bugs(&run, err, sizeof(err)), 1);
    ck_assert_int_eq(run.ngroups, 4);
    rg_tri_group *b = &run.groups[0];
    ck_assert(b->is_bug);
    ck_assert_int_eq(b->ncases, 3);
    ck_assert_str_eq(b->title, "a wait with no deadline: the wait in ring_wait");
    ck_assert_int_eq(b->nalso, 1);
    ck_assert_str_eq(b->also[0].key, "DEADLOCK all_gather");
    ck_assert_msg(strstr(b->bug, "one bug with \"DEADLOCK in all_gather\" (1 scenario(s))"), "%s",
                  b->bug);
    ck_assert(!run.groups[1].is_bug);
    ck_assert_msg(strstr(run.groups[1].bug, "its cause is not proven"), "%s", run.groups[1].bug);
    ck_assert(run.groups[2].is_bug); /* another frame: another bug */
    ck_assert_msg(strstr(run.groups[2].bug, "no other group's evidence proves"), "%s",
                  run.groups[2].bug);
    ck_assert(!run.groups[3].is_bug);
    ck_assert_msg(strstr(run.groups[3].bug, "names no site, frame or QP role"), "%s",
                  run.groups[3].bug);
    /* Every signature of the bug is an entry of the known-failures file, under its title. */
    ck_assert_msg(rg_tri_write(&run, err, sizeof(err)) == 0, "%s", err);
    snprintf(path, sizeof(path), "%s/triage/known-failures.yaml", dir);
    char *known = rg_check_slurp(path);
    ck_assert_ptr_nonnull(strstr(known, "op: \"all_reduce\""));
    ck_assert_ptr_nonnull(strstr(known, "op: \"all_gather\""));
    char *first = strstr(known, "why: \"a wait with no deadline: the wait in ring_wait\"");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_nonnull(
        strstr(first + 1, "why: \"a wait with no deadline: the wait in ring_wait\""));
    free(known);
    snprintf(path, sizeof(path), "%s/triage/01-%s.md", dir, b->slug);
    char *md = rg_check_slurp(path);
    ck_assert_ptr_nonnull(strstr(md, "- **Bug**: one bug with"));
    ck_assert_ptr_nonnull(strstr(md, "- **Also seen as**: `DEADLOCK all_gather`"));
    free(md);
    snprintf(path, sizeof(path), "%s/triage/02-%s.md", dir, run.groups[1].slug);
    md = rg_check_slurp(path);
    ck_assert_ptr_nonnull(strstr(md, "- **Not a bug of its own yet**: not merged"));
    free(md);
    run.results = NULL;
    rg_tri_free(&run);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Sixty groups of one proven cause: the file keeps room for its entry by cause, names the
 * groups that fit its why and counts the rest, and reads back. */
START_TEST(test_known_many_groups)
{
    static rg_tri_run run;
    static rg_tri_group groups[60];
    static rg_scenario sc;
    rg_scenario *scs[] = {&sc};
    char path[] = "/tmp/rg-kmany-XXXXXX", notes[256], err[600];
    memset(&run, 0, sizeof(run));
    run.ngroups = 60;
    run.groups = groups;
    for (int g = 0; g < 60; g++) {
        snprintf(groups[g].sig.first, sizeof(groups[g].sig.first), "DEADLOCK");
        snprintf(groups[g].sig.op, sizeof(groups[g].sig.op), "all_reduce");
        snprintf(groups[g].title, sizeof(groups[g].title), "hang %d", g);
        groups[g].cause.proven = true;
        groups[g].cause.kind = RG_C_NO_DEADLINE;
    }
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_int_eq(rg_tri_write_known(&run, f), 60 - (RG_SC_KSIG_MAX - 1));
    fclose(f);
    ck_assert_msg(rg_known_load(path, NULL, scs, 1, notes, sizeof(notes), err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_int_eq(sc.nksig, RG_SC_KSIG_MAX);
    const rg_sc_ksig *k = &sc.ksig[RG_SC_KSIG_MAX - 1];
    ck_assert_int_eq(k->cause, RG_C_NO_DEADLINE);
    ck_assert_msg(strstr(k->why, "a wait with no deadline (the cause triage proved for groups 1, "
                                 "2, 3") &&
                      strstr(k->why, " +"),
                  "%s", k->why);
    unlink(path);
}
END_TEST

Suite *rg_suite_triage(void)
{
    Suite *s = suite_create("triage");
    TCase *t = tcase_create("triage");
    tcase_add_test(t, test_run_dir);
    tcase_add_test(t, test_runs);
    tcase_add_test(t, test_known_by_fault);
    tcase_add_test(t, test_words);
    tcase_add_test(t, test_rate_said);
    tcase_add_test(t, test_rerun);
    tcase_add_test(t, test_minimise);
    tcase_add_test(t, test_minimise_confirms);
    tcase_add_test(t, test_merge);
    tcase_add_test(t, test_diagnose);
    tcase_add_test(t, test_known_many_groups);
    tcase_add_test(t, test_role);
    tcase_add_test(t, test_bugs);
    suite_add_tcase(s, t);
    return s;
}
