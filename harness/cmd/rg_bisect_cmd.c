/* SPDX-License-Identifier: MIT */
/*
 * `railguard bisect`: one commit of a transport's history judged, for `git bisect run`:
 *
 *   git bisect start BAD GOOD
 *   git bisect run railguard bisect --build 'make jaccl' --transport build/x.so \
 *       --bug 'KEY' --rate 0.5 -- scenarios/regression/mlx-3654.yaml
 *
 * The build (a shell command of the user's) first: failing, or leaving no transport, is 125
 * (git skips the commit). Then the scenarios, run after run (compare/rg_cmp_bisect.c): bad (1)
 * as soon as the bug shows; good (0) once the clean runs are enough that at the bug's rate it
 * would have shown with the confidence asked; 125 when --max-runs pass first (not settled), or
 * nothing could be judged. Its own bad input is 128, which makes git bisect stop rather than
 * read it as a bad commit.
 */
#include "cmd/rg_cmd.h"
#include "compare/rg_compare.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { BISECT_GOOD = 0, BISECT_BAD = 1, BISECT_SKIP = 125, BISECT_USAGE = 128 };

struct bisect_opts {
    char transport[PATH_MAX];
    const char *build;
    const char *bug;
    rg_bisect_rate rate;
    double confidence;
    int max_runs;
    char out[PATH_MAX];
    double build_limit, run_limit;
    bool find_fix;
};

#define BO(f) offsetof(struct bisect_opts, f)

/* A probability, or K/N (a rate as triage and compare print it). */
static int take_rate(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct bisect_opts *o = opts;
    char *end;
    double p;
    long k, n;
    if (sscanf(val, "%ld/%ld", &k, &n) == 2 && strchr(val, '/')) {
        char tail[2];
        if (sscanf(val, "%ld/%ld%1s", &k, &n, tail) != 2 || k < 1 || n < 1 || k > n ||
            n > 1000000) {
            snprintf(why, len, "must be K/N with 1 <= K <= N");
            return -1;
        }
        if (strcmp(opt->name, "rate") != 0) {
            snprintf(why, len, "must be a probability 0.5..0.999");
            return -1;
        }
        o->rate = (rg_bisect_rate){.k = (int)k, .n = (int)n, .p = (double)k / (double)n};
        return 0;
    } else {
        p = strtod(val, &end);
        if (end == val || *end || !(p > 0 && p <= 1)) {
            snprintf(why, len, "must be a rate in (0, 1] or K/N");
            return -1;
        }
    }
    if (!strcmp(opt->name, "rate"))
        o->rate = (rg_bisect_rate){.k = 0, .n = 0, .p = p};
    else if (!(p >= 0.5 && p <= 0.999)) {
        snprintf(why, len, "must be a probability 0.5..0.999");
        return -1;
    } else
        o->confidence = p;
    return 0;
}

static const rg_opt bisect_table[] = {
    {.name = "build",
     .kind = RG_OPT_TEXT,
     .arg = "CMD",
     .help = "A shell command that builds the transport at this commit, run in the current "
             "directory first; failing is exit 125 (git bisect skips the commit).",
     .off = BO(build)},
    {.name = "transport",
     .kind = RG_OPT_PATH,
     .arg = "SO",
     .help = "The transport the build leaves (run's --transport); absent after the build is "
             "125. Default: run's own, the reference.",
     .off = BO(transport),
     .len = sizeof(((struct bisect_opts *)0)->transport)},
    {.name = "bug",
     .kind = RG_OPT_TEXT,
     .arg = "KEY",
     .help = "Only this failure makes a commit bad: a proven cause or a signature key, as "
             "compare --json and triage.json give them (and as this command prints each "
             "failure's). Other failures make a run unclean, neither good nor bad. Default: "
             "any failure but NOT_EXERCISED.",
     .off = BO(bug)},
    {.name = "rate",
     .kind = RG_OPT_CALL,
     .arg = "P|K/N",
     .help = "How often the bug shows on a bad commit: K/N as triage and compare measure it "
             "(\"3/4\"), its uncertainty counted, or P known (1: every time). A commit is good "
             "only after enough clean runs that it would have shown at that rate. Default 1/1: "
             "seen once, 5 clean runs.",
     .call = take_rate},
    {.name = "confidence",
     .kind = RG_OPT_CALL,
     .arg = "P",
     .help = "How sure good must be (default 0.95): clean runs enough that the bug would have "
             "shown in them with probability >= P (docs/compare.md, the rule).",
     .call = take_rate},
    {.name = "find-fix",
     .kind = RG_OPT_FLAG,
     .help = "Look for the commit that fixed the bug, not the one that brought it: exit 0 where "
             "it shows, 1 where it is gone (with git bisect start --term-old=broken "
             "--term-new=fixed). The rule for gone is the same as for good.",
     .off = BO(find_fix)},
    {.name = "max-runs",
     .kind = RG_OPT_INT,
     .arg = "N",
     .help = "The most runs of the scenarios at one commit (default 30); still not settled "
             "then is 125.",
     .off = BO(max_runs),
     .lo = 1,
     .hi = 200},
    {.name = "out",
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "Under which each commit's build log and runs go, a new directory per commit "
             "(DIR/railguard-bisect-XXXXXX/run-N); default $TMPDIR or /tmp, outside the work "
             "tree git checks out.",
     .off = BO(out),
     .len = sizeof(((struct bisect_opts *)0)->out)},
    {.name = "build-limit",
     .kind = RG_OPT_SECONDS,
     .arg = "SECONDS",
     .help = "The longest the build may take (default 3600); past it is 125.",
     .off = BO(build_limit),
     .lo = 1,
     .hi = 86400},
    {.name = "run-limit",
     .kind = RG_OPT_SECONDS,
     .arg = "SECONDS",
     .help = "The longest one railguard run may take (default 3600); past it is 125.",
     .off = BO(run_limit),
     .lo = 10,
     .hi = 86400},
};

const rg_cli rg_bisect_cli = {
    .cmd = "bisect",
    .synopsis = "[--build CMD] [--transport SO] [--bug KEY] [--rate P] [options] -- [run's "
                "options] SCENARIO...",
    .about = "Judges the commit checked out, for git bisect run: builds it (--build), runs the "
             "scenarios after -- (a bug's minimal case, say) until the bug shows (exit 1, "
             "bad) or enough clean runs say that at its rate it would have (exit 0, good); 125 "
             "when the build fails, nothing could be judged, or --max-runs pass unsettled (git "
             "skips the commit); 128 on its own bad input (git stops).",
    .opts = bisect_table,
    .nopts = (int)(sizeof(bisect_table) / sizeof(bisect_table[0])),
};

/* The build, `sh -c CMD` in the current directory, its output in log. 0, or -1 with why. */
static int build(const struct bisect_opts *o, const char *log, char *why, size_t len)
{
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, len, "cannot fork the build: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        rg_child_output(log);
        execl("/bin/sh", "sh", "-c", o->build, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    int st = 0;
    if (rg_child_wait(pid, o->build_limit, true, &st) != 0) {
        snprintf(why, len, "the build had not finished after %.0f s: stopped (%s)", o->build_limit,
                 log);
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        char last[256];
        rg_log_last_line(log, last, sizeof(last));
        snprintf(why, len, "the build failed (%s %d; %s): %s", WIFEXITED(st) ? "exit" : "signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), log, last);
        return -1;
    }
    return 0;
}

/* Every failure seen so far, by the key --bug takes, so a first bisect can name its bug. */
static void print_failures(const rg_compare *c)
{
    for (int i = 0; i < c->nitems; i++) {
        const rg_cmp_item *it = &c->items[i];
        if (!it->k[RG_CMP_HEAD])
            continue;
        printf("bisect:   %d run(s) failed %s: --bug '%s'\n", it->k[RG_CMP_HEAD], it->verdict,
               it->cause[0] ? it->cause : it->key);
    }
}

static int judge(struct bisect_opts *o, const rg_runargs *ra)
{
    char self[PATH_MAX], why[2 * PATH_MAX], log[PATH_MAX + 32], dir[PATH_MAX + 32], last[256];
    if (rg_self_exe(self, sizeof(self)) != 0) {
        fprintf(stderr, "railguard bisect: cannot find its own executable\n");
        return BISECT_USAGE;
    }
    if (o->build) {
        snprintf(log, sizeof(log), "%.4000s/build.log", o->out);
        if (build(o, log, why, sizeof(why)) != 0) {
            printf("bisect: skip (125): %s\n", why);
            return BISECT_SKIP;
        }
    }
    struct stat sb;
    if (o->transport[0] && (stat(o->transport, &sb) != 0 || !S_ISREG(sb.st_mode))) {
        printf("bisect: skip (125): no transport at %s after the build\n", o->transport);
        return BISECT_SKIP;
    }
    static rg_compare c;
    memset(&c, 0, sizeof(c));
    c.confidence = o->confidence;
    rg_bisect_says says = {0};
    int rc = BISECT_SKIP;
    for (int run = 1; run <= o->max_runs; run++) {
        snprintf(dir, sizeof(dir), "%.4000s/run-%d", o->out, run);
        snprintf(log, sizeof(log), "%.4000s/run-%d.log", o->out, run);
        int st = rg_side_run(self, o->transport[0] ? o->transport : NULL, dir, ra, NULL, 0, log,
                             o->run_limit, why, sizeof(why));
        rg_log_last_line(log, last, sizeof(last));
        if (st < 0 || st == 2) {
            printf("bisect: skip (125): run %d: %s\n", run, st < 0 ? why : last);
            goto out;
        }
        if (rg_cmp_add_dir(&c, RG_CMP_HEAD, dir, why, sizeof(why)) != 0) {
            printf("bisect: skip (125): run %d: %s\n", run, why);
            goto out;
        }
        rg_cmp_decide_all(&c);
        rg_cmp_bisect(&c, o->bug ? o->bug : "", &o->rate, o->confidence, &says);
        printf("bisect: run %d: %s (%s)\n", run, last, dir);
        fflush(stdout);
        if (says.state == RG_BISECT_BAD) {
            print_failures(&c);
            printf("bisect: bad (1): the bug showed in %d of %d run(s): %s\n", says.shown, run,
                   says.first);
            rc = BISECT_BAD;
            goto out;
        }
        if (says.state == RG_BISECT_GOOD) {
            char r[48];
            if (o->rate.n)
                snprintf(r, sizeof(r), "%d/%d", o->rate.k, o->rate.n);
            else
                snprintf(r, sizeof(r), "%.3g", o->rate.p);
            printf("bisect: good (0): absent from %d clean run(s) of every scenario; at rate "
                   "%s it would have shown with probability >= %.0f %%%s\n",
                   says.clean, r, 100 * o->confidence,
                   says.other ? " (runs that failed otherwise not counted)" : "");
            if (says.other)
                print_failures(&c);
            rc = BISECT_GOOD;
            goto out;
        }
        if (says.state == RG_BISECT_CANNOT)
            break;
    }
    if (says.other)
        print_failures(&c);
    printf("bisect: skip (125): not settled after %d run(s): %d clean of the %d the rate asks "
           "for%s%s\n",
           o->max_runs, says.clean, says.need, says.other ? "; other failures: " : "",
           says.other ? says.first : "");
out:
    rg_cmp_free(&c);
    return rc;
}

int rg_bisect_main(int argc, char **argv)
{
    static struct bisect_opts o;
    static rg_runargs ra;
    char err[PATH_MAX];
    memset(&o, 0, sizeof(o));
    o.rate = (rg_bisect_rate){.k = 1, .n = 1, .p = 1};
    o.confidence = RG_CMP_CONFIDENCE;
    o.max_runs = 30;
    o.build_limit = 3600;
    o.run_limit = 3600;
    int first, rc = rg_cli_parse(&rg_bisect_cli, argc, argv, &o, &first);
    if (rc)
        return rc == 1 ? 0 : BISECT_USAGE;
    if (rg_runargs_split(argc - first, argv + first, &ra, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard bisect: after --: %s\n", err);
        return BISECT_USAGE;
    }
    if (!ra.nfiles) {
        fprintf(stderr, "railguard bisect: no scenario after --: name the case that shows "
                        "the bug\n");
        return BISECT_USAGE;
    }
    if (o.build && !o.build[0]) {
        fprintf(stderr, "railguard bisect: --build: an empty command\n");
        return BISECT_USAGE;
    }
    if (o.bug && !o.bug[0]) {
        fprintf(stderr, "railguard bisect: --bug: an empty key\n");
        return BISECT_USAGE;
    }
    /* The transport by its absolute path: the build may be run from elsewhere next time. */
    if (o.transport[0] && o.transport[0] != '/') {
        char cwd[PATH_MAX], abs[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)) ||
            snprintf(abs, sizeof(abs), "%s/%s", cwd, o.transport) >= (int)sizeof(abs)) {
            fprintf(stderr, "railguard bisect: --transport: the path is too long\n");
            return BISECT_USAGE;
        }
        snprintf(o.transport, sizeof(o.transport), "%s", abs);
    }
    /* A directory of its own for this commit, under --out or $TMPDIR: git bisect runs this
     * once a commit, and no step may read another's runs. */
    const char *tmp = getenv("TMPDIR");
    char base[PATH_MAX];
    snprintf(base, sizeof(base), "%s", o.out[0] ? o.out : tmp && tmp[0] ? tmp : "/tmp");
    if (rg_mkdirs(base) != 0 ||
        snprintf(o.out, sizeof(o.out), "%s/railguard-bisect-XXXXXX", base) >= (int)sizeof(o.out) ||
        !mkdtemp(o.out)) {
        fprintf(stderr, "railguard bisect: cannot make a directory for its runs under %s: %s\n",
                base, strerror(errno));
        return BISECT_USAGE;
    }
    printf("bisect: runs in %s\n", o.out);
    rc = judge(&o, &ra);
    /* Looking for the fix, git's "new" commits are those without the bug. */
    if (o.find_fix && (rc == BISECT_GOOD || rc == BISECT_BAD)) {
        rc = rc == BISECT_GOOD ? BISECT_BAD : BISECT_GOOD;
        printf("bisect: --find-fix: exit %d (%s)\n", rc,
               rc ? "the bug is gone: fixed here" : "the bug is here: still broken");
    }
    return rc;
}
