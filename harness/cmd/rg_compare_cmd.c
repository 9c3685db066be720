/* SPDX-License-Identifier: MIT */
/*
 * `railguard compare --base DIR... --head DIR...`: two sides of one suite, each one or more
 * run directories (railguard run --out), set against each other failure by failure
 * (compare/rg_compare.h): fixed, introduced, still failing or not settled, with the rates
 * behind each and the runs that would settle what is not. Exit status 0 when nothing was
 * introduced, 1 when something was, 2 on bad input (one line, nothing written).
 */
#include "cmd/rg_cmd.h"
#include "compare/rg_compare.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMP__DIRS_MAX 64

struct compare_opts {
    const char *dirs[RG_CMP_SIDES][CMP__DIRS_MAX];
    int ndirs[RG_CMP_SIDES];
    char json[PATH_MAX];
    char markdown[PATH_MAX];
    double confidence;
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
    .synopsis = "--base DIR [--base DIR...] --head DIR [--head DIR...] [options]",
    .about = "Sets two sides of one suite against each other, each side one or more run "
             "directories of railguard run: every failure by its signature, with the runs it "
             "failed in on each side, is fixed (absent from enough head runs that it would have "
             "shown at the base's rate), introduced (likewise, the other way), still failing, "
             "or not settled (with the runs that would settle it). Exit status 0 when nothing "
             "was introduced, 1 when something was, 2 on bad input.",
    .opts = compare_table,
    .nopts = (int)(sizeof(compare_table) / sizeof(compare_table[0])),
};

int rg_compare_main(int argc, char **argv)
{
    static struct compare_opts o;
    static rg_compare c;
    char err[2 * PATH_MAX];
    memset(&o, 0, sizeof(o));
    o.confidence = RG_CMP_CONFIDENCE;
    int first, rc = rg_cli_parse(&rg_compare_cli, argc, argv, &o, &first);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (first < argc) {
        fprintf(stderr, "railguard compare: '%s': run directories go after --base or --head\n",
                argv[first]);
        return 2;
    }
    for (int s = 0; s < RG_CMP_SIDES; s++)
        if (!o.ndirs[s]) {
            fprintf(stderr, "railguard compare: no --%s DIR: each side needs a run directory\n",
                    s == RG_CMP_BASE ? "base" : "head");
            return 2;
        }
    memset(&c, 0, sizeof(c));
    c.confidence = o.confidence;
    rc = 2;
    for (int s = 0; s < RG_CMP_SIDES; s++) {
        c.ndirs[s] = o.ndirs[s];
        c.dirs[s] = (char **)o.dirs[s];
        for (int i = 0; i < o.ndirs[s]; i++)
            if (rg_cmp_add_dir(&c, s, o.dirs[s][i], err, sizeof(err)) != 0) {
                fprintf(stderr, "railguard compare: %s\n", err);
                goto out;
            }
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
    return rc;
}
