/* SPDX-License-Identifier: MIT */
/*
 * `railguard compare --base DIR... --head DIR...`: two sides of one suite, each one or more
 * run directories (railguard run --out), set against each other failure by failure
 * (compare/rg_compare.h): fixed, introduced, still failing or not settled, with the rates
 * behind each and the runs that would settle what is not. Or, given a side's transport
 * (--base-transport, --head-transport) and run's own words after "--", it runs that side's
 * suite itself, then again only the scenarios a claim not yet settled needs, round after
 * round, until every claim that more runs could settle has settled or --max-runs is reached.
 * Exit status 0 when nothing was introduced, 1 when something was, 2 on bad input (one line,
 * nothing written).
 */
#include "cmd/rg_cmd.h"
#include "compare/rg_compare.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMP__DIRS_MAX 64

struct compare_opts {
    const char *dirs[RG_CMP_SIDES][CMP__DIRS_MAX];
    int ndirs[RG_CMP_SIDES];
    char json[PATH_MAX];
    char markdown[PATH_MAX];
    double confidence;
    char transport[RG_CMP_SIDES][PATH_MAX]; /* the side's transport, run here; "" none */
    bool reference[RG_CMP_SIDES];           /* the side runs run's default transport */
    char out[PATH_MAX];
    int max_runs;
    double run_limit;
};

#define CO(f) offsetof(struct compare_opts, f)

static int take_dir(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct compare_opts *o = opts;
    int s = !strcmp(opt->name, "head") ? RG_CMP_HEAD : RG_CMP_BASE;
    if (!val[0]) {
        snprintf(why, len, "an empty directory name");
        return -1;
    }
    if (o->ndirs[s] == CMP__DIRS_MAX) {
        snprintf(why, len, "more than %d run directories", CMP__DIRS_MAX);
        return -1;
    }
    o->dirs[s][o->ndirs[s]++] = val;
    return 0;
}

static int take_confidence(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    (void)opt;
    char *end;
    double p = strtod(val, &end);
    if (end == val || *end || !(p >= 0.5 && p <= 0.999)) {
        snprintf(why, len, "must be a probability 0.5..0.999");
        return -1;
    }
    ((struct compare_opts *)opts)->confidence = p;
    return 0;
}

static int take_transport(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct compare_opts *o = opts;
    int s = !strncmp(opt->name, "head", 4) ? RG_CMP_HEAD : RG_CMP_BASE;
    if (!strcmp(val, "reference")) { /* what run uses by default: the reference transport */
        o->reference[s] = true;
        return 0;
    }
    char flag[64];
    snprintf(flag, sizeof(flag), "--%s", opt->name);
    if (rg_opt_path("compare", flag, val, o->transport[s], sizeof(o->transport[s])) != 0) {
        why[0] = '\0'; /* said */
        return -1;
    }
    (void)len;
    return 0;
}

static const rg_opt compare_table[] = {
    {.name = "base",
     .kind = RG_OPT_CALL,
     .arg = "DIR",
     .help = "A run directory of the base (railguard run --out); again for each re-run.",
     .call = take_dir},
    {.name = "head",
     .kind = RG_OPT_CALL,
     .arg = "DIR",
     .help = "A run directory of the head; again for each re-run.",
     .call = take_dir},
    {.name = "base-transport",
     .kind = RG_OPT_CALL,
     .arg = "SO",
     .help = "Run the base side here, with this transport (\"reference\": run's own): the suite "
             "given after --, then re-runs until its claims settle. Needs --out.",
     .call = take_transport},
    {.name = "head-transport",
     .kind = RG_OPT_CALL,
     .arg = "SO",
     .help = "Run the head side here, with this transport, as --base-transport.",
     .call = take_transport},
    {.name = "out",
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "Where the runs made here go: DIR/base-1, DIR/head-1, then DIR/SIDE-N for the "
             "Nth run of a side (a re-run holds only the scenarios it needed).",
     .off = CO(out),
     .len = sizeof(((struct compare_opts *)0)->out)},
    {.name = "max-runs",
     .kind = RG_OPT_INT,
     .arg = "N",
     .help = "The most runs of one scenario on a side run here (default 12; 1: no re-runs). A "
             "claim that needs more stays not settled, saying how many more.",
     .off = CO(max_runs),
     .lo = 1,
     .hi = 50},
    {.name = "run-limit",
     .kind = RG_OPT_SECONDS,
     .arg = "SECONDS",
     .help = "The longest one railguard run made here may take before it is stopped (default "
             "7200; the scenarios keep their own deadlines).",
     .off = CO(run_limit),
     .lo = 10,
     .hi = 86400},
    {.name = "confidence",
     .kind = RG_OPT_CALL,
     .arg = "P",
     .help = "How sure a fixed or introduced must be (default 0.95): a failure absent from m "
             "runs on one side is gone (or new) only if at the other side's rate it would have "
             "shown in m runs with probability >= P.",
     .call = take_confidence},
    {.name = "json",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "Also write the comparison as JSON to FILE.",
     .off = CO(json),
     .len = sizeof(((struct compare_opts *)0)->json)},
    {.name = "markdown",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "Also write it as Markdown to FILE (a PR comment, $GITHUB_STEP_SUMMARY).",
     .off = CO(markdown),
     .len = sizeof(((struct compare_opts *)0)->markdown)},
};

const rg_cli rg_compare_cli = {
    .cmd = "compare",
    .synopsis = "--base DIR... --head DIR... [options] | --base-transport SO --head-transport SO "
                "--out DIR [options] -- [run's options] [SCENARIO|DIR...]",
    .about = "Sets two sides of one suite against each other, each side one or more run "
             "directories of railguard run: every failure by its signature, with the runs it "
             "failed in on each side, is fixed (absent from enough head runs that it would have "
             "shown at the base's rate), introduced (likewise, the other way), still failing, "
             "or not settled (with the runs that would settle it). Given a side's transport it "
             "runs that side itself (run's options and scenarios after --, the stock suite "
             "when none), then re-runs just the scenarios an unsettled claim needs until it "
             "settles or --max-runs. Exit status 0 when nothing was introduced, 1 when "
             "something was, 2 on bad input.",
    .opts = compare_table,
    .nopts = (int)(sizeof(compare_table) / sizeof(compare_table[0])),
};

static const char *const side_names[RG_CMP_SIDES] = {"base", "head"};

/* Side s's n-th run made here (only: its scenarios, NULL all), read into c. 0, or 2 after its
 * line. */
static int run_side(struct compare_opts *o, rg_compare *c, int s, int n, const rg_runargs *ra,
                    const char *const *only, int nonly, const char *self, char **made)
{
    char dir[PATH_MAX + 32], log[PATH_MAX + 48], why[PATH_MAX + 200], last[256];
    snprintf(dir, sizeof(dir), "%.4000s/%s-%d", o->out, side_names[s], n);
    snprintf(log, sizeof(log), "%.4000s/%s-%d.log", o->out, side_names[s], n);
    int st = rg_side_run(self, o->reference[s] ? NULL : o->transport[s], dir, ra, only, nonly, log,
                         o->run_limit, why, sizeof(why));
    if (st < 0 || st == 2) {
        rg_log_last_line(log, last, sizeof(last));
        fprintf(stderr, "railguard compare: the %s's run %d: %s\n", side_names[s], n,
                st < 0    ? why
                : last[0] ? last
                          : "refused (its log says why)");
        return 2;
    }
    rg_log_last_line(log, last, sizeof(last));
    if (only)
        printf("compare: %s run %d, %d scenario(s) an unsettled claim needs: %s (%s)\n",
               side_names[s], n, nonly, last, dir);
    else
        printf("compare: %s run %d, the suite: %s (%s)\n", side_names[s], n, last, dir);
    fflush(stdout);
    if (o->ndirs[s] == CMP__DIRS_MAX || !(*made = strdup(dir))) {
        fprintf(stderr, "railguard compare: more than %d run directories a side\n", CMP__DIRS_MAX);
        return 2;
    }
    o->dirs[s][o->ndirs[s]++] = *made;
    if (rg_cmp_add_dir(c, s, dir, why, sizeof(why)) != 0) {
        fprintf(stderr, "railguard compare: %s\n", why);
        return 2;
    }
    return 0;
}

/* Runs the sides that have a transport: each whole once, then round after round only the
 * scenarios that unsettled claims need, until none would help or max_runs. 0, or 2. */
static int run_sides(struct compare_opts *o, rg_compare *c, const rg_runargs *ra, char **made,
                     int *nmade)
{
    char self[PATH_MAX];
    if (rg_self_exe(self, sizeof(self)) != 0) {
        fprintf(stderr, "railguard compare: cannot find its own executable\n");
        return 2;
    }
    int runs[RG_CMP_SIDES] = {0, 0};
    for (int s = 0; s < RG_CMP_SIDES; s++)
        if (o->transport[s][0] || o->reference[s]) {
            if (run_side(o, c, s, ++runs[s], ra, NULL, 0, self, &made[(*nmade)++]) != 0)
                return 2;
        }
    /* A round re-runs a scenario on a side only while it has run there fewer than max_runs
     * times (rg_cmp_rerun_list), so the rounds end by themselves; a side can start its
     * re-runs a round late (when the other side's re-run first shows a failure), hence the
     * bound of twice as many rounds, a guard only. */
    for (int round = 2; round <= 2 * o->max_runs; round++) {
        rg_cmp_decide_all(c);
        bool any = false;
        for (int s = 0; s < RG_CMP_SIDES; s++) {
            if (!o->transport[s][0] && !o->reference[s])
                continue;
            int *idx = NULL, k = rg_cmp_rerun_list(c, s, o->max_runs, &idx);
            if (k < 0) {
                fprintf(stderr, "railguard compare: out of memory\n");
                return 2;
            }
            if (!k)
                continue;
            const char **only = calloc((size_t)k, sizeof(*only));
            if (!only) {
                free(idx);
                fprintf(stderr, "railguard compare: out of memory\n");
                return 2;
            }
            for (int j = 0; j < k; j++)
                only[j] = c->sc[idx[j]].path;
            int rc = run_side(o, c, s, ++runs[s], ra, only, k, self, &made[(*nmade)++]);
            free(only);
            free(idx);
            if (rc != 0)
                return 2;
            any = true;
        }
        if (!any)
            break;
    }
    return 0;
}

int rg_compare_main(int argc, char **argv)
{
    static struct compare_opts o;
    static rg_compare c;
    static rg_runargs ra;
    char *made[2 * CMP__DIRS_MAX] = {NULL}; /* a slot a failed run never filled stays NULL */
    int nmade = 0;
    char err[2 * PATH_MAX];
    memset(&o, 0, sizeof(o));
    o.confidence = RG_CMP_CONFIDENCE;
    o.max_runs = 12;
    o.run_limit = 7200;
    int first, rc = rg_cli_parse(&rg_compare_cli, argc, argv, &o, &first);
    if (rc)
        return rc == 1 ? 0 : rc;
    bool runs_here = false;
    for (int s = 0; s < RG_CMP_SIDES; s++)
        runs_here |= o.transport[s][0] || o.reference[s];
    if (first < argc && !runs_here) {
        fprintf(stderr,
                "railguard compare: '%s': run directories go after --base or --head; "
                "run's words only with --base-transport or --head-transport\n",
                argv[first]);
        return 2;
    }
    if (rg_runargs_split(argc - first, argv + first, &ra, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard compare: after --: %s\n", err);
        return 2;
    }
    if (runs_here && !o.out[0]) {
        fprintf(stderr, "railguard compare: --out DIR is needed where a side is run here\n");
        return 2;
    }
    for (int s = 0; s < RG_CMP_SIDES; s++)
        if (!o.ndirs[s] && !o.transport[s][0] && !o.reference[s]) {
            fprintf(stderr,
                    "railguard compare: no --%s DIR and no --%s-transport SO: each side needs "
                    "runs\n",
                    side_names[s], side_names[s]);
            return 2;
        }
    memset(&c, 0, sizeof(c));
    c.confidence = o.confidence;
    rc = 2;
    for (int s = 0; s < RG_CMP_SIDES; s++)
        for (int i = 0; i < o.ndirs[s]; i++)
            if (rg_cmp_add_dir(&c, s, o.dirs[s][i], err, sizeof(err)) != 0) {
                fprintf(stderr, "railguard compare: %s\n", err);
                goto out;
            }
    if (runs_here) {
        if (rg_mkdirs(o.out) != 0) {
            fprintf(stderr, "railguard compare: --out: cannot make '%s'\n", o.out);
            goto out;
        }
        if (run_sides(&o, &c, &ra, made, &nmade) != 0)
            goto out;
    }
    for (int s = 0; s < RG_CMP_SIDES; s++) {
        c.ndirs[s] = o.ndirs[s];
        c.dirs[s] = (char **)o.dirs[s];
    }
    rg_cmp_decide_all(&c);
    if ((o.json[0] && rg_cmp_json(&c, o.json, err, sizeof(err)) != 0) ||
        (o.markdown[0] && rg_cmp_markdown(&c, o.markdown, err, sizeof(err)) != 0)) {
        fprintf(stderr, "railguard compare: %s\n", err);
        goto out;
    }
    rg_cmp_table(stdout, &c);
    rc = c.by[RG_CMP_INTRODUCED] ? 1 : 0;
out:
    rg_cmp_free(&c);
    for (int i = 0; i < nmade; i++)
        free(made[i]);
    return rc;
}
