/* SPDX-License-Identifier: MIT */
/*
 * `railguard triage RUN_DIR`: a finished run's failures as a short list of defects
 * (triage/rg_triage.h): each group's title and size on stdout, a report per group and
 * triage.json in RUN_DIR/triage.
 */
#include "cmd/rg_cmd.h"
#include "triage/rg_triage.h"

#include <stddef.h>
#include <stdio.h>

struct triage_opts {
    int rerun, minimise;
    rg_tri_with with;
};

static const rg_opt triage_table[] = {
    {.name = "rerun",
     .kind = RG_OPT_INT,
     .arg = "N",
     .help = "Runs each group's smallest scenario N more times by its reproduce line (it needs "
             "the run's devices and transport) and reports how often the group's signature "
             "came back: deterministic, flaky (k of N) or did not recur (default 5; 0: none).",
     .off = offsetof(struct triage_opts, rerun),
     .len = sizeof(int),
     .lo = 0,
     .hi = 100},
    {.name = "minimise",
     .kind = RG_OPT_INT,
     .arg = "N",
     .help = "Minimises each group's smallest scenario through at most N candidates (its "
             "faults cut, then a rank, a rail, a step or a fault fewer, counts halved), each "
             "run by the group's reproduce line and kept when it fails with the group's "
             "signature (or the same with fewer faults fired), as often as its rate says for a "
             "flaky one; then merges the groups whose minimal cases fail alike (default 20; 0: "
             "none).",
     .off = offsetof(struct triage_opts, minimise),
     .len = sizeof(int),
     .lo = 0,
     .hi = 1000},
    {.name = "deadline",
     .kind = RG_OPT_SECONDS,
     .arg = "S",
     .help = "Runs every re-run, candidate and traced run with railguard run --deadline S: a "
             "scenario's deadline cut to S seconds or twice its timeout, whichever is more, so a "
             "hang costs that rather than the scenario's whole deadline (default: their own). "
             "The reports' reproduce lines keep the scenarios' own deadlines.",
     .off = offsetof(struct triage_opts, with.deadline_s),
     .len = sizeof(double),
     .lo = 1,
     .hi = 86400},
    {.name = "slow-scale",
     .kind = RG_OPT_INT,
     .arg = "F",
     .help = "Runs them with railguard run --slow-scale F: a run that ran out of time on a "
             "machine that held it back is run once more with its times F times (default: "
             "the line's own, 4 unless its run set another). A transport whose ranks spin while "
             "they wait earns that "
             "second attempt on a busy machine at almost every hang; 2 halves its cost.",
     .off = offsetof(struct triage_opts, with.slow_scale),
     .len = sizeof(int),
     .lo = 1,
     .hi = 100},
    {.name = "known-by-fault",
     .kind = RG_OPT_FLAG,
     .help = "Writes known-failures.yaml's entries for failures under faults one a fault kind "
             "and first verdict (and, for a hang, the frames it waits in), whatever operation, "
             "algorithm or other ranks each face showed: a transport whose races show a new "
             "face in every run is then gated by its bugs, not by the faces seen so far. "
             "Failures without faults keep their whole signature. Says what it gives away: a "
             "new bug under the same fault with the same first verdict reads XFAIL too.",
     .off = offsetof(struct triage_opts, with.by_fault)},
};

const rg_cli rg_triage_cli = {
    .cmd = "triage",
    .synopsis = "RUN_DIR [MORE_RUN_DIR...]",
    .about = "Groups a finished run's failures into distinct defects: failures with one "
             "signature (the first failure's verdict, error class and operation, the algorithm "
             "the transport ran, how the other ranks ended, the frames where hung ranks wait, "
             "the kinds of the faults that fired) are one group. Each group's smallest case is "
             "run again for its rate and minimised, and a cause is named only where the "
             "evidence proves one. Writes RUN_DIR/triage/NN-TITLE.md per group, ready for an "
             "issue tracker, triage.json, and known-failures.yaml for railguard run --known "
             "(a failure of a known signature reads XFAIL in any scenario). More run "
             "directories (other runs of the same suite, up to 16) add their failures to the "
             "groups, so the file holds every face a flaky bug showed; the first's triage/ is "
             "written. Exit status 0 when "
             "every result was read, 1 when some could not be (each is named), 2 on bad usage "
             "or an unreadable RUN_DIR.",
    .opts = triage_table,
    .nopts = (int)(sizeof(triage_table) / sizeof(triage_table[0])),
};

static void summary(const rg_tri_run *run)
{
    int nbugs = 0;
    for (int g = 0; g < run->ngroups; g++)
        nbugs += run->groups[g].is_bug;
    printf("railguard triage: %s: %d failure(s) among %d scenario(s) in %d report(s): %d proven "
           "bug(s), %d group(s) with no cause proven at a place",
           run->dir, run->nfail, run->nresults, run->ngroups, nbugs, run->ngroups - nbugs);
    if (run->nruns > 1)
        printf(" (%d runs read)", run->nruns);
    if (run->nxpass || run->nslow)
        printf("; besides them %d xpass, %d too slow to judge", run->nxpass, run->nslow);
    printf("\n");
    /* Where the triage's time went, so what makes it slow is chosen by numbers. */
    static const char *const said[RG_TRI_STAGES] = {"reading and grouping", "re-runs", "minimising",
                                                    "traced runs", "writing"};
    printf("railguard triage: time:");
    for (int s = 0; s < RG_TRI_STAGES; s++) {
        if (run->time_s[s] >= 0)
            printf(" %s %.1f s", said[s], run->time_s[s]);
        else
            printf(" %s not run", said[s]);
        printf(s + 1 < RG_TRI_STAGES ? "," : "\n");
    }
    for (int g = 0; g < run->ngroups; g++)
        printf("  %2d. [%d] %s\n      %s/triage/%02d-%s.md\n", g + 1, run->groups[g].ncases,
               run->groups[g].title, run->dir, g + 1, run->groups[g].slug);
}

/* A group's re-runs are bounded by four times the first run's length (at least ten minutes):
 * each has the scenario's own deadlines, this only keeps a stuck one from holding the triage. */
static double limit_of(const rg_tri_run *run, int g)
{
    const rg_result *rep = run->cases[run->groups[g].rep].res;
    double limit = rep->seconds * 4 > 600 ? rep->seconds * 4 : 600;
    /* A larger --slow-scale than the run's own makes a second attempt that much longer. */
    if (run->with.slow_scale > 4)
        limit *= (run->with.slow_scale + 1) / 5.0;
    return limit;
}

/* Every group's rate and minimal case; the groups whose minimal cases fail alike merged; then
 * every group's traced run. 0, or -1 after one line. */
static int rates(rg_tri_run *run, int n, int budget)
{
    char err[1400], said[200];
    for (int g = 0; (n || budget) && g < run->ngroups; g++) {
        const rg_result *rep = run->cases[run->groups[g].rep].res;
        double limit = limit_of(run, g);
        printf("railguard triage: group %d: %s, %d re-run(s), minimised through at most %d "
               "candidate(s)\n",
               g + 1, rep->name, n, budget);
        fflush(stdout);
        double t = rg_now_s();
        if (n && rg_tri_rerun(run, g, n, limit, &run->groups[g].rate, err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard triage: %s\n", err);
            return -1;
        }
        if (n)
            run->time_s[RG_TRI_T_RERUN] += rg_now_s() - t;
        rg_tri_rate_said(&run->groups[g].rate, said, sizeof(said));
        if (n)
            printf("railguard triage: group %d: %s\n", g + 1, said);
        t = rg_now_s();
        if (budget && rg_tri_minimise(run, g, budget, limit, err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard triage: %s\n", err);
            return -1;
        }
        if (budget)
            run->time_s[RG_TRI_T_MIN] += rg_now_s() - t;
        if (budget)
            printf("railguard triage: group %d: %s%s%s\n", g + 1, run->groups[g].min.note,
                   run->groups[g].min.steps[0] ? ": " : "", run->groups[g].min.steps);
    }
    int before = run->ngroups, merged = budget ? rg_tri_merge(run, err, sizeof(err)) : 0;
    if (merged < 0) {
        fprintf(stderr, "railguard triage: %s\n", err);
        return -1;
    }
    if (merged)
        printf("railguard triage: %d group(s) became %d: minimal cases that fail alike are one "
               "bug\n",
               before, run->ngroups);
    for (int g = 0; (n || budget) && g < run->ngroups; g++) {
        double t = rg_now_s();
        int rc = rg_tri_traced(run, g, limit_of(run, g), err, sizeof(err));
        run->time_s[RG_TRI_T_TRACED] += rg_now_s() - t;
        if (rc != 0) {
            fprintf(stderr, "railguard triage: %s\n", err);
            return -1;
        }
        printf("railguard triage: group %d: cause: %s\n", g + 1, run->groups[g].cause.text);
    }
    return 0;
}

/* Groups of one proven defect merged into one bug (triage/rg_tri_bugs.c), said. */
static int bugs(rg_tri_run *run, char *err, size_t errlen)
{
    int before = run->ngroups, merged = rg_tri_bugs(run, err, errlen);
    if (merged < 0)
        return -1;
    if (merged)
        printf("railguard triage: %d group(s) became %d: groups whose evidence proves one cause at "
               "one place are one bug\n",
               before, run->ngroups);
    return 0;
}

int rg_triage_dir(const char *dir, int rerun, int minimise, const rg_tri_with *with)
{
    return rg_triage_runs(&dir, 1, rerun, minimise, with);
}

int rg_triage_runs(const char *const *dirs, int ndirs, int rerun, int minimise,
                   const rg_tri_with *with)
{
    static rg_tri_run run;
    char err[1400] = "";
    double t0 = rg_now_s();
    if (rg_tri_load_runs(dirs, ndirs, &run, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard triage: %s\n", err);
        return 2;
    }
    if (!run.nresults && !run.nunread) {
        fprintf(stderr,
                "railguard triage: %s: no NAME/result.json in it: not a run's --out directory\n",
                run.dir);
        rg_tri_free(&run);
        return 2;
    }
    int rc = 0;
    if (with)
        run.with = *with;
    /* A stage not run stays -1: not measured, not "took no time". */
    for (int s = 0; s < RG_TRI_STAGES; s++)
        run.time_s[s] = -1;
    if (rerun)
        run.time_s[RG_TRI_T_RERUN] = 0;
    if (minimise)
        run.time_s[RG_TRI_T_MIN] = 0;
    if (rerun || minimise)
        run.time_s[RG_TRI_T_TRACED] = 0;
    int grouped = rg_tri_group_cases(&run);
    run.time_s[RG_TRI_T_READ] = rg_now_s() - t0;
    double tw = 0;
    if (grouped != 0 || rates(&run, rerun, minimise) != 0 || bugs(&run, err, sizeof(err)) != 0 ||
        (tw = rg_now_s(), rg_tri_write(&run, err, sizeof(err))) != 0) {
        if (!run.groups)
            fprintf(stderr, "railguard triage: out of memory\n");
        else if (err[0])
            fprintf(stderr, "railguard triage: %s\n", err);
        rc = 2;
    } else {
        run.time_s[RG_TRI_T_WRITE] = rg_now_s() - tw;
        summary(&run);
    }
    for (int i = 0; i < run.nunread; i++)
        fprintf(stderr, "railguard triage: a result that cannot be read: %s\n",
                i < (int)(sizeof(run.unread) / sizeof(run.unread[0])) ? run.unread[i]
                                                                      : "(and more)");
    if (!rc && run.nunread)
        rc = 1;
    rg_tri_free(&run);
    return rc;
}

int rg_triage_main(int argc, char **argv)
{
    struct triage_opts o = {.rerun = 5, .minimise = RG_TRI_MIN_BUDGET};
    int first, rc = rg_cli_parse(&rg_triage_cli, argc, argv, &o, &first);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (first >= argc || argc - first > RG_TRI_RUNS_MAX) {
        fprintf(stderr, "railguard triage: %s\n",
                first >= argc ? "no RUN_DIR: name one run's --out directory"
                              : "at most 16 RUN_DIRs");
        return 2;
    }
    return rg_triage_runs((const char *const *)argv + first, argc - first, o.rerun, o.minimise,
                          &o.with);
}
