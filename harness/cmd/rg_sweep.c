/* SPDX-License-Identifier: MIT */
/*
 * `railguard sweep`: every fault point of a scenario, not one lucky one. A counting run (the
 * scenario without its faults) says how many completions, posts and polls each rank saw, by
 * operation; then the scenario runs once per point with one fault injected exactly there, and
 * each point gets the per-rank verdicts. A point passes when no rank returned wrong data, hung,
 * crashed or erred without cause (ok and detected are both fine); a point whose fault did not
 * fire proves nothing and is counted apart. Every failing point is run again in a fresh
 * process before it is reported, with the command that reproduces it.
 *
 * Points are planned (rg_sweep_plan.c) per step the worker marked, so a point means the same
 * thing when the program is cut. They run in batches of up to 500, each batch one `railguard
 * run` over the points' files (its preflight and start-up paid once), read live; a failing
 * point is then run again alone, and a confirmed one shrunk to the smallest program that
 * still fails the same way.
 */
#include "rg_sweep_cmd.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || !*v || *end || *v == '-' || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int take_kind(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    int k = rg_sweep_kind_of(val);
    (void)opt;
    if (k < 0) {
        snprintf(
            why, len,
            "one of error, negpoll, lose, nomem, delay, kill, stop, late, swap_rails, not '%s'",
            val);
        return -1;
    }
    o->spec.kind = (rg_sw_kind)k;
    return 0;
}

static int take_op(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    (void)opt;
    if (!strcmp(val, "send"))
        o->spec.op = FI_OP_SEND;
    else if (!strcmp(val, "recv"))
        o->spec.op = FI_OP_RECV;
    else if (!strcmp(val, "write"))
        o->spec.op = FI_OP_WRITE;
    else
        return snprintf(why, len, "send, recv or write, not '%s'", val), -1;
    return 0;
}

static int take_status(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    (void)opt;
    if (strlen(val) >= sizeof(o->spec.status))
        return snprintf(why, len, "too long '%s'", val), -1;
    snprintf(o->spec.status, sizeof(o->spec.status), "%s", val);
    return 0;
}

/* A whole number lo..hi into the field the option names (spec.ms, spec.stride, spec.max, the
 * rank and the shrink tries). */
static int take_number(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    uint64_t x;
    if (parse_u64(val, (uint64_t)opt->lo, (uint64_t)opt->hi, &x)) {
        snprintf(why, len, "%.0f..%.0f, not '%s'", opt->lo, opt->hi, val);
        return -1;
    }
    if (!strcmp(opt->name, "ms"))
        o->spec.ms = x;
    else if (!strcmp(opt->name, "stride"))
        o->spec.stride = x;
    else if (!strcmp(opt->name, "max"))
        o->spec.max = x;
    else if (!strcmp(opt->name, "rank"))
        o->spec.rank = (int)x;
    else if (!strcmp(opt->name, "site-depth"))
        o->spec.site_depth = (int)x;
    else
        o->shrink_tries = (int)x;
    return 0;
}

/* --shard K/N: 1 <= K <= N <= RG_SW_SHARDS_MAX. */
static int take_shard(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    uint64_t k, n;
    char ks[16], ns[16], extra;
    (void)opt;
    if (sscanf(val, "%15[0-9]/%15[0-9]%c", ks, ns, &extra) != 2 ||
        parse_u64(ns, 1, RG_SW_SHARDS_MAX, &n) || parse_u64(ks, 1, n, &k))
        return snprintf(why, len, "K/N with 1 <= K <= N <= %d, not '%s'", RG_SW_SHARDS_MAX, val),
               -1;
    o->shard_k = (int)k;
    o->shard_n = (int)n;
    return 0;
}

/* An option railguard run takes as it is: passed through to every run of the sweep (a flag as
 * its name and a NULL value, which the run's argv leaves out). */
static int take_pass(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct sweep_opts *o = opts;
    uint64_t x;
    if (opt->letter == 'j' && parse_u64(val, 1, 64, &x))
        return snprintf(why, len, "1..64 points at once, not '%s'", val), -1;
    if (o->npass + 2 > (int)(sizeof(o->pass) / sizeof(o->pass[0])))
        return snprintf(why, len, "too many options passed on (--%s)", opt->name), -1;
    static char flags[8][24]; /* pass holds 8 pairs */
    int slot = o->npass / 2;
    snprintf(flags[slot], sizeof(flags[slot]), "--%s", opt->name);
    o->pass[o->npass] = flags[slot];
    o->pass[o->npass + 1] = val;
    o->npass += 2;
    return 0;
}

#define SO(f) offsetof(struct sweep_opts, f)
static const rg_opt sweep_table[] = {
    {.name = "fault",
     .kind = RG_OPT_CALL,
     .arg = "KIND",
     .help =
         "The fault every point injects: error, negpoll, lose, nomem, delay, kill, stop, late or "
         "swap_rails (required).",
     .call = take_kind},
    {.name = "op",
     .kind = RG_OPT_CALL,
     .arg = "send|recv|write",
     .help = "Only events of this operation (default: the kind's own).",
     .call = take_op},
    {.name = "status",
     .kind = RG_OPT_CALL,
     .arg = "NAME",
     .help = "error's completion status (default WR_FLUSH_ERR).",
     .call = take_status},
    {.name = "ms",
     .kind = RG_OPT_CALL,
     .arg = "D",
     .help = "delay's and late's milliseconds (default 50).",
     .lo = 1,
     .hi = 3600000,
     .call = take_number},
    {.name = "rank",
     .kind = RG_OPT_CALL,
     .arg = "R",
     .help = "Only rank R's events (default: every rank).",
     .hi = RG_MAX_RANKS - 1,
     .call = take_number},
    {.name = "stride",
     .kind = RG_OPT_CALL,
     .arg = "K",
     .help = "Every K-th event (default 1).",
     .lo = 1,
     .hi = UINT32_MAX,
     .call = take_number},
    {.name = "max",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "At most N points a (rank, op) series, spread out (default 100).",
     .lo = 1,
     .hi = SW__POINTS_MAX,
     .call = take_number},
    {.name = "by-site",
     .kind = RG_OPT_FLAG,
     .help = "One point for each verbs call site the counting run listed and each of its ops, "
             "at the site's first event (site=... nth=1), instead of one per event: every site "
             "the kind applies to is faulted once, in far fewer points.",
     .off = SO(by_site)},
    {.name = "events-only",
     .kind = RG_OPT_FLAG,
     .help = "Only the per-event points: not the one point at each verbs call site's first "
             "event there (--by-site's points) that a sweep adds to them so that every site is "
             "faulted at least once.",
     .off = SO(events_only)},
    {.name = "site-depth",
     .kind = RG_OPT_CALL,
     .arg = "D",
     .help = "Name each verbs call site by its call path of D frames, the call and D-1 callers "
             "(default 1; at most 4): a transport that calls every verb from one wrapper has "
             "one site per verb at 1, one per caller of the wrapper at 2.",
     .lo = 1,
     .hi = FI_SITE_DEPTH,
     .call = take_number},
    {.name = "whole",
     .kind = RG_OPT_FLAG,
     .help = "Points counted over the whole run, even where the program marks its steps.",
     .off = SO(spec.whole)},
    {.name = "shrink",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Candidates a failing point's shrinking may try (default 10; 0: none).",
     .hi = 100,
     .call = take_number},
    {.name = "jobs",
     .letter = 'j',
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Points at once (default 1), each slot with fork servers of its own (railguard "
             "run -j N --fork-server).",
     .call = take_pass},
    {.name = "shard",
     .kind = RG_OPT_CALL,
     .arg = "K/N",
     .help = "Run shard K of N: the points split N ways by expected cost, the same on every "
             "machine; railguard merge joins the shards' directories into the whole sweep's "
             "result.",
     .call = take_shard},
    {.name = "plan",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "Take the points and call sites from another sweep's plan.json (every sweep writes "
             "one into its --out) instead of a counting run of its own: shards given one plan "
             "cannot plan differently. The code of each object its call sites are in is "
             "compared with this build's, and a difference said (its site points may not fire).",
     .off = SO(plan),
     .len = sizeof(((struct sweep_opts *)0)->plan)},
    {.name = "list",
     .kind = RG_OPT_FLAG,
     .help = "Print the planned points after the counting run; run none.",
     .off = SO(list)},
    {.name = "exec-ranks",
     .kind = RG_OPT_FLAG,
     .help = "Every rank exec'd, as railguard run does, not forked from a server.",
     .off = SO(exec_ranks)},
    {.name = "transport",
     .kind = RG_OPT_CALL,
     .arg = "SO",
     .help = "Passed to railguard run.",
     .call = take_pass},
    {.name = "shim",
     .kind = RG_OPT_CALL,
     .arg = "SO",
     .help = "Passed to railguard run.",
     .call = take_pass},
    {.name = "devices",
     .kind = RG_OPT_CALL,
     .arg = "DEV,...",
     .help = "Passed to railguard run.",
     .call = take_pass},
    {.name = "seed",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Passed to railguard run.",
     .call = take_pass},
    {.name = "no-ownership",
     .kind = RG_OPT_CALL,
     .help = "Passed to railguard run: the ownership sanitizer off in every run.",
     .call = take_pass},
    {.name = "uc-as-rc",
     .kind = RG_OPT_CALL,
     .help = "Passed to railguard run: UC QPs created as RC in every run.",
     .call = take_pass},
    {.name = "hang-at-deadline",
     .kind = RG_OPT_CALL,
     .help = "Passed to railguard run: a hang waits for the deadline in every run.",
     .call = take_pass},
    {.name = "known",
     .kind = RG_OPT_CALL,
     .arg = "FILE",
     .help = "Passed to railguard run. The counting run may fail as FILE knows the transport "
             "fails (XFAIL); a point that does (by signature: points have names of their own) "
             "is not failing when each failing rank failed so in the counting run too.",
     .call = take_pass},
    {.name = "out",
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "The counting run, every point's run and the shrunk reproducers (default "
             "railguard-sweep).",
     .off = SO(out),
     .len = sizeof(((struct sweep_opts *)0)->out) - 64},
    {.name = "work",
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "Where the runs write their evidence (the counting run, run-NNNN/ and its log, "
             "rechecks, shrinking candidates) instead of --out, which keeps the plan, the points' "
             "files and the reports: a machine-local directory when --out is on a network file "
             "system, where every small file a rank writes costs a round trip (default: --out). "
             "One a sweep: two running at once in one directory would read each other's runs.",
     .off = SO(work),
     .len = sizeof(((struct sweep_opts *)0)->work) - 64},
};
#undef SO

const rg_cli rg_sweep_cli = {
    .cmd = "sweep",
    .synopsis = "--fault KIND [options] SCENARIO",
    .about = "Every fault point of a scenario: a counting run finds each rank's events per step, "
             "then one "
             "run per point injects the fault at exactly that event, and each failing point is "
             "shrunk to "
             "the smallest scenario that still fails the same way.",
    .opts = sweep_table,
    .nopts = (int)(sizeof(sweep_table) / sizeof(sweep_table[0])),
};

static int parse_sweep(int argc, char **argv, struct sweep_opts *o, int *first)
{
    o->spec =
        (rg_sweep_spec){.kind = RG_SW_KINDS, .rank = -1, .op = FI_OP_ANY, .max = 100, .ms = 50};
    snprintf(o->spec.status, sizeof(o->spec.status), "WR_FLUSH_ERR");
    snprintf(o->out, sizeof(o->out), "railguard-sweep");
    o->shrink_tries = RG_SW_SHRINK_TRIES;
    int rc = rg_cli_parse(&rg_sweep_cli, argc, argv, o, first);
    if (rc)
        return rc == 1 ? -1 : rc;
    if (o->spec.kind == RG_SW_KINDS)
        return sweep_bad("%s", "--fault KIND is required");
    if (o->events_only && (o->by_site || o->plan[0]))
        return sweep_bad("--events-only: not with %s (its points are %s)",
                         o->by_site ? "--by-site" : "--plan",
                         o->by_site ? "the site points alone" : "the plan's");
    if (*first != argc - 1)
        return sweep_bad("%s", *first >= argc ? "no SCENARIO: name one file after the options"
                                              : "one SCENARIO file, after the options");
    /* The status is the plan library's to check: one rule, parsed as a run would. */
    char rule[96], err[256];
    struct fi_plan plan;
    snprintf(rule, sizeof(rule), "error status=%s", o->spec.status);
    if (fi_plan_parse(rule, "--status", &plan, err, sizeof(err)) != 0)
        return sweep_bad("%s", err);
    return 0;
}

/* The counting run: the program alone, every rank expected ok, run again once if it fails (in
 * the guest a rank stalls for seconds every few dozen runs); each rank's evidence into ev. 0,
 * or 2 after one line. */
static int counting_run(const struct sweep_opts *o, const char *file, const rg_scenario *sc,
                        rg_evidence *ev, double limit, char *baseline, size_t baselen)
{
    static rg_scenario pt;
    char err[1024], path[2 * PATH_MAX], out[PATH_MAX + 128], log[PATH_MAX + 128];
    pt = *sc;
    /* No fault; the sites rule lists every verbs call site each rank calls from. */
    pt.nfaults = 1;
    snprintf(pt.fault[0].rule, sizeof(pt.fault[0].rule), "sites depth=%d", o->spec.site_depth);
    pt.fault[0].line = 0;
    pt.fault[0].optional = false;
    snprintf(pt.faults, sizeof(pt.faults), "%s", pt.fault[0].rule);
    for (int r = 0; r < pt.ranks; r++) {
        pt.expect[r] = RG_SC_EXPECT_OK;
        pt.expect_at[r] = RG_SC_AT_ANY;
        pt.expect_cls[r] = 0;
    }
    snprintf(path, sizeof(path), "%s/count.yaml", o->out);
    snprintf(out, sizeof(out), "%s/count", o->work);
    snprintf(log, sizeof(log), "%s/count.log", o->work);
    if (rg_scenario_save(path, &pt, "railguard sweep: the counting run") != 0)
        return sweep_bad("cannot write '%s'", path);
    if (run_one(o, path, out, log, limit) != 0) {
        struct outcome oc;
        char dir[2 * PATH_MAX];
        snprintf(dir, sizeof(dir), "%s/000-%s", out, pt.name);
        read_outcome(dir, &oc, false);
        snprintf(out, sizeof(out), "%.4030s/count-again", o->work);
        snprintf(log, sizeof(log), "%.4030s/count-again.log", o->work);
        int again = run_one(o, path, out, log, limit);
        if (again != 0) {
            fprintf(stderr,
                    "railguard sweep: %s must pass without faults before it is swept; the "
                    "counting run exited %d twice: %s (log %s)\n",
                    file, again, oc.first[0] ? oc.first : "see the log", log);
            return 2;
        }
        printf("railguard sweep: note: the counting run failed once and passed when run again "
               "(flaky): %s\n",
               oc.first[0] ? oc.first : "see count.log");
    }
    /* What the program does without a fault, rank by rank: --known failures are weighed
     * against it (read_outcome); plan.json keeps it for shards. */
    struct outcome base;
    char dir[2 * PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/000-%s", out, pt.name);
    read_outcome(dir, &base, false);
    snprintf(baseline, baselen, "%s", base.ran ? base.verdicts : "");
    sweep_baseline_set(baseline);
    for (int r = 0; r < sc->ranks; r++) {
        snprintf(path, sizeof(path), "%s/000-%s/rank%d.events.jsonl", out, pt.name, r);
        if (rg_evidence_read(path, &ev[r], err, sizeof(err)) != 0 || !ev[r].totals)
            return sweep_bad("the counting run left no summary in %s", path);
    }
    return 0;
}

/* Every point's file first: a batch's `railguard run` takes them all at once. 0, or 2. */
static int write_points(const struct sweep_opts *o, const char *file, const rg_scenario *sc,
                        const rg_sweep_point *pts, const int *idx, int nidx)
{
    static rg_scenario pt;
    char path[2 * PATH_MAX];
    for (int j = 0; j < nidx; j++) {
        int i = idx[j];
        const rg_sweep_point *p = &pts[i];
        pt = *sc;
        snprintf(pt.name, sizeof(pt.name), "point-%04d", i + 1);
        pt.nfaults = 1;
        snprintf(pt.fault[0].rule, sizeof(pt.fault[0].rule), "%s", p->rule);
        pt.fault[0].line = 0;
        pt.fault[0].optional = false;
        snprintf(pt.faults, sizeof(pt.faults), "%s", p->rule);
        /* The sweep's oracle: wrong data, a hang, a crash or an error with no cause fail a
         * point; ok, detected and (for kill and stop) killed are all right answers. */
        for (int r = 0; r < pt.ranks; r++) {
            pt.expect[r] = RG_SC_EXPECT_ANY;
            pt.expect_at[r] = RG_SC_AT_ANY;
            pt.expect_cls[r] = 0;
        }
        char comment[800];
        snprintf(comment, sizeof(comment), "railguard sweep point %d of %.200s: %s", i + 1, file,
                 p->rule);
        snprintf(path, sizeof(path), "%s/points/%04d.yaml", o->out, i + 1);
        if (rg_scenario_save(path, &pt, comment) != 0)
            return sweep_bad("cannot write '%s'", path);
    }
    return 0;
}

/* The call sites the kind applies to, from the counting run, named from their objects' debug
 * information: into sites (their number), or -1 with why. */
static int call_sites(const struct sweep_opts *o, const rg_evidence *ev, int ranks,
                      rg_sw_site *sites, char *why, size_t whylen)
{
    why[0] = '\0';
    int n = rg_sweep_sites(&o->spec, ev, ranks, sites, RG_SW_SITES_MAX, why, whylen);
    if (n < 0)
        return -1;
    /* One addr2line an object, for every frame of every site in it. */
    struct frame_at {
        int site, k;
    };
    static struct frame_at at[RG_SW_SITES_MAX * FI_SITE_DEPTH];
    static bool done[RG_SW_SITES_MAX * FI_SITE_DEPTH];
    static uint64_t off[RG_SW_SITES_MAX * FI_SITE_DEPTH];
    static int which[RG_SW_SITES_MAX * FI_SITE_DEPTH];
    /* Half a megabyte each: on the heap, not in every process's .bss (d20bb4b). */
    rg_sym_site *names = calloc(RG_SW_SITES_MAX * FI_SITE_DEPTH, sizeof(*names));
    rg_sym_site(*name_of)[FI_SITE_DEPTH] = calloc(RG_SW_SITES_MAX, sizeof(*name_of));
    if (!names || !name_of) {
        free(names);
        free(name_of);
        snprintf(why, whylen, "out of memory naming the call sites");
        return -1;
    }
    int nf = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < sites[i].nframes; k++)
            at[nf++] = (struct frame_at){i, k};
    memset(done, 0, sizeof(done));
    for (int a = 0; a < nf; a++) {
        if (done[a])
            continue;
        /* Each offset once (every path of a wrapper shares its first frame), in batches the
         * symbolizer takes whole. */
        const char *obj = sites[at[a].site].frame[at[a].k].obj;
        int k = 0;
        for (int b = a; b < nf; b++) {
            const rg_ev_frame *fb = &sites[at[b].site].frame[at[b].k];
            if (done[b] || strcmp(fb->obj, obj))
                continue;
            done[b] = true;
            int u = 0;
            while (u < k && off[u] != fb->off)
                u++;
            if (u == k)
                off[k++] = fb->off;
            which[b] = u;
        }
        for (int lo = 0; lo < k; lo += RG_SYM_BATCH) {
            int cnt = k - lo < RG_SYM_BATCH ? k - lo : RG_SYM_BATCH;
            char w[600];
            memset(names + lo, 0, (size_t)cnt * sizeof(names[0]));
            if (rg_sym_sites(obj, off + lo, cnt, names + lo, w, sizeof(w)) != 0 && !why[0])
                snprintf(why, whylen, "%.250s", w);
        }
        for (int b = a; b < nf; b++)
            if (done[b] && !strcmp(sites[at[b].site].frame[at[b].k].obj, obj))
                name_of[at[b].site][at[b].k] = names[which[b]];
    }
    /* A path's names, innermost first: "wrapper < its caller". */
    for (int i = 0; i < n; i++) {
        size_t fl = 0, wl = 0;
        sites[i].func[0] = sites[i].where[0] = '\0';
        for (int k = 0; k < sites[i].nframes; k++) {
            const rg_sym_site *nm = &name_of[i][k];
            fl += (size_t)snprintf(sites[i].func + fl, sizeof(sites[i].func) - fl, "%s%s",
                                   k ? " < " : "", nm->func[0] ? nm->func : "?");
            if (fl >= sizeof(sites[i].func))
                fl = sizeof(sites[i].func) - 1;
            wl += (size_t)snprintf(sites[i].where + wl, sizeof(sites[i].where) - wl, "%s%s",
                                   k ? " < " : "", nm->where[0] ? nm->where : "?");
            if (wl >= sizeof(sites[i].where))
                wl = sizeof(sites[i].where) - 1;
        }
        /* No name for the call itself: no debug information, said as before ("" both). */
        if (!name_of[i][0].func[0])
            sites[i].func[0] = '\0';
        if (!name_of[i][0].where[0])
            sites[i].where[0] = '\0';
    }
    free(names);
    free(name_of);
    return n;
}

/* The points idx[0..nidx) (of a plan of n) in batches, each batch's failures rechecked alone
 * once it is over; sweep.json and the files written from it; the summary. The exit status. */
static int run_points(const struct sweep_opts *o, const char *file, const rg_scenario *sc,
                      rg_sweep_point *pts, int n, const int *idx, int nidx, double limit,
                      rg_sw_site *sites, int nsites, const char *sites_why)
{
    static struct sweep_state ss;
    /* 16 MB between them: the heap's, as every large table here (a leak check reads .bss whole
     * at every exit). */
    rg_sw_row *rows = calloc((size_t)n + 1, sizeof(*rows));
    rg_sw_row *mine = calloc((size_t)nidx + 1, sizeof(*mine)); /* + 1: a shard may have none */
    int st = 2;
    if (!rows || !mine) {
        fprintf(stderr, "railguard sweep: out of memory for %d points\n", n);
        goto out;
    }
    ss = (struct sweep_state){.o = o, .pts = pts, .rows = rows, .n = nidx, .t0 = rg_now_s()};
    for (int lo = 0; lo < nidx; lo += SW__BATCH) {
        int hi = lo + SW__BATCH < nidx ? lo + SW__BATCH : nidx;
        struct batch b = {o,          idx + lo, hi - lo, (hi - lo) * (sc->deadline_s + 30) + 120,
                          point_done, &ss};
        if (run_batch(&b) != 0)
            fprintf(stderr, "railguard sweep: the run of points %d..%d did not end by itself\n",
                    idx[lo] + 1, idx[hi - 1] + 1);
        for (int j = lo; j < hi; j++)
            if (!ss.seen[idx[j]] || ss.suspect[idx[j]])
                recheck(&ss, idx[j], limit);
    }
    double dt = rg_now_s() - ss.t0;
    printf("sweep: %s %s: %d points in %.1f s (%.2f points/s): %d fired, %d not fired, %d "
           "failing, %d flaky\n",
           file, rg_sweep_kind_name(o->spec.kind), nidx, dt, nidx / (dt > 0 ? dt : 1), ss.fired,
           nidx - ss.fired, ss.failed, ss.flaky);
    /* What became of each point, the way a merge of shards gives it too. */
    static rg_sw_result res;
    for (int j = 0; j < nidx; j++)
        mine[j] = rows[idx[j]];
    res = (rg_sw_result){.kind = o->spec.kind,
                         .npoints = n,
                         .shard_k = o->shard_k,
                         .shard_n = o->shard_n,
                         .seconds = dt,
                         .nrows = nidx,
                         .rows = mine,
                         .nsites = nsites,
                         .sites = sites,
                         .site_depth = o->spec.site_depth};
    snprintf(res.sites_why, sizeof(res.sites_why), "%s", sites_why);
    snprintf(res.scenario, sizeof(res.scenario), "%s", file);
    snprintf(res.name, sizeof(res.name), "%s", sc->name);
    rg_sweep_digest(pts, n, res.digest);
    char err[1024];
    if (rg_sw_write(&res, o->out, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard sweep: %s\n", err);
        goto out;
    }
    if (strcmp(o->work, o->out))
        printf("railguard sweep: the runs' evidence: %s\n", o->work);
    printf("railguard sweep: %s/sweep.json (and sweep.txt, junit.xml, index.html)\n", o->out);
    printf("%d passed, %d failed, %d skipped\n", ss.passed, ss.failed,
           nidx - ss.passed - ss.failed);
    st = ss.failed ? 1 : 0;
out:
    free(rows);
    free(mine);
    return st;
}

/* --plan FILE: its points and sites, for this scenario and kind only. The number of points,
 * or -1 after one line. */
static int given_plan(const struct sweep_opts *o, const rg_scenario *sc, rg_sweep_point *pts,
                      rg_sw_site *sites, int *nsites, char *why, size_t whylen, char *baseline,
                      size_t baselen, int *depth, rg_sw_obj *objs, int *nobjs)
{
    static rg_sw_result p;
    char err[1200];
    if (rg_sw_plan_read(&p, pts, SW__POINTS_MAX, o->plan, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard sweep: --plan: %s\n", err);
        return -1;
    }
    int n = p.npoints;
    if (strcmp(p.name, sc->name) || p.kind != o->spec.kind) {
        fprintf(stderr,
                "railguard sweep: --plan: %s is a plan of scenario %s, fault %s, not of %s, "
                "fault %s\n",
                o->plan, p.name, rg_sweep_kind_name(p.kind), sc->name,
                rg_sweep_kind_name(o->spec.kind));
        n = -1;
    } else if (o->spec.site_depth && o->spec.site_depth != p.site_depth) {
        fprintf(stderr,
                "railguard sweep: --plan: %s names call sites by %d frame(s), not "
                "--site-depth %d\n",
                o->plan, p.site_depth, o->spec.site_depth);
        n = -1;
    }
    *depth = p.site_depth;
    *nsites = p.nsites;
    for (int i = 0; i < p.nsites && i < RG_SW_SITES_MAX; i++)
        sites[i] = p.sites[i];
    snprintf(why, whylen, "%s", p.sites_why);
    snprintf(baseline, baselen, "%s", p.baseline);
    *nobjs = p.nobjs;
    for (int i = 0; i < p.nobjs; i++)
        objs[i] = p.objs[i];
    if (n >= 0)
        sweep_objs_check(o, &p);
    rg_sw_free(&p);
    return n;
}

static int sweep_main(int argc, char **argv, rg_evidence *ev, rg_sweep_point *pts)
{
    static struct sweep_opts o;
    static rg_scenario sc;
    char err[1024], path[2 * PATH_MAX];
    int first = 0;
    int rc = parse_sweep(argc, argv, &o, &first);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: --help */
    ssize_t sl = readlink("/proc/self/exe", o.self, sizeof(o.self) - 1);
    if (sl <= 0)
        return sweep_bad("%s", "cannot find my own executable");
    o.self[sl] = '\0';
    const char *file = argv[first];
    if (rg_scenario_load(file, &sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (o.spec.kind == RG_SW_SWAP && sc.rails < 2)
        return sweep_bad("%s: swap_rails needs a scenario with 2 or more rails (it has %d)", file,
                         sc.rails);
    /* --work first: refused, it leaves no --out behind. */
    if (o.work[0] && rg_mkdirs(o.work) != 0)
        return sweep_bad("--work: cannot create '%s': %s", o.work, strerror(errno));
    if (rg_mkdirs(o.out) != 0)
        return sweep_bad("--out: cannot create '%s': %s", o.out, strerror(errno));
    snprintf(path, sizeof(path), "%s/points", o.out);
    mkdir(path, 0755);
    if (!o.work[0])
        snprintf(o.work, sizeof(o.work), "%s", o.out);
    snprintf(path, sizeof(path), "%s/points", o.work);
    mkdir(path, 0755); /* rechecks and shrinking candidates run there */
    double limit = sc.deadline_s + 120;
    static rg_sw_site sites[RG_SW_SITES_MAX];
    static rg_sw_obj objs[RG_SW_OBJS_MAX];
    char sites_why[300], baseline[256] = "";
    int nsites, n, nobjs = 0;
    if (o.plan[0]) {
        int depth = 1;
        if ((n = given_plan(&o, &sc, pts, sites, &nsites, sites_why, sizeof(sites_why), baseline,
                            sizeof(baseline), &depth, objs, &nobjs)) < 0)
            return 2;
        o.spec.site_depth = depth;
        sweep_baseline_set(baseline);
    } else {
        if (!o.spec.site_depth)
            o.spec.site_depth = 1;
        if ((rc = counting_run(&o, file, &sc, ev, limit, baseline, sizeof(baseline))))
            return rc;
        nsites = call_sites(&o, ev, sc.ranks, sites, sites_why, sizeof(sites_why));
        if (nsites < 0 && o.by_site)
            return sweep_bad("--by-site: %s", sites_why);
        nobjs = sweep_objs_of(&o, sites, nsites, objs);
        n = o.by_site
                ? rg_sweep_plan_sites(&o.spec, sites, nsites, pts, SW__POINTS_MAX, err, sizeof(err))
                : rg_sweep_plan(&o.spec, ev, sc.ranks, pts, SW__POINTS_MAX, err, sizeof(err));
        if (n < 0)
            return sweep_bad("%s", err);
        /* And one point at each call site's first event there: a site whose events a count
         * never lands on (a negative poll is anchored to a completion, and the poll after the
         * hello's last one is the first step's) is faulted all the same. */
        int m = 0;
        if (!o.by_site && !o.events_only && nsites > 0 &&
            (m = rg_sweep_plan_sites(&o.spec, sites, nsites, pts + n, SW__POINTS_MAX - n, err,
                                     sizeof(err))) < 0)
            return sweep_bad("%s", err);
        n += m;
    }
    /* No point proves nothing: said, never a sweep that passed (a transport that declared
     * every step unsupported, a program with no event of the kind). */
    if (n == 0) {
        struct outcome oc;
        char dir[2 * PATH_MAX];
        snprintf(dir, sizeof(dir), "%s/count/000-%s", o.work, sc.name);
        read_outcome(dir, &oc, false);
        return sweep_bad("%s: no point to sweep: %s%s%s", file,
                         o.by_site ? "no verbs call site the kind applies to"
                                   : "no event a point of the kind could fault",
                         oc.ran && !o.plan[0] ? "; the counting run's ranks: " : "",
                         oc.ran && !o.plan[0] ? oc.verdicts : "");
    }
    /* The plan, for shards on other machines to share (--plan). */
    static rg_sw_result plan;
    plan = (rg_sw_result){.kind = o.spec.kind,
                          .npoints = n,
                          .nsites = nsites,
                          .sites = sites,
                          .site_depth = o.spec.site_depth,
                          .nobjs = nobjs};
    for (int i = 0; i < nobjs; i++)
        plan.objs[i] = objs[i];
    snprintf(plan.scenario, sizeof(plan.scenario), "%s", file);
    snprintf(plan.name, sizeof(plan.name), "%s", sc.name);
    snprintf(plan.sites_why, sizeof(plan.sites_why), "%s", sites_why);
    snprintf(plan.baseline, sizeof(plan.baseline), "%s", baseline);
    rg_sweep_digest(pts, n, plan.digest);
    snprintf(path, sizeof(path), "%s/plan.json", o.out);
    if (rg_sw_plan_save(&plan, pts, path, err, sizeof(err)) != 0)
        return sweep_bad("%s", err);
    printf("railguard sweep: %s, %d point(s) of %s; %s:", file, n, rg_sweep_kind_name(o.spec.kind),
           o.plan[0] ? "the plan given" : "counting run");
    for (int r = 0; r < sc.ranks && !o.plan[0]; r++)
        printf(" rank %d %llu/%llu recv/send completions, %llu polls;", r,
               (unsigned long long)ev[r].op_cqe[FI_OP_RECV],
               (unsigned long long)ev[r].op_cqe[FI_OP_SEND], (unsigned long long)ev[r].polls);
    printf("\n");
    if (nsites >= 0)
        printf("railguard sweep: %d verbs call site(s) %s applies to%s%s\n", nsites,
               rg_sweep_kind_name(o.spec.kind), sites_why[0] ? "; names: " : "", sites_why);
    else
        printf("railguard sweep: call sites not listed: %s\n", sites_why);
    /* This run's points: all of them, or its shard's (the same split on every machine). */
    static int idx[SW__POINTS_MAX];
    static bool mine[SW__POINTS_MAX];
    int nidx = 0;
    if (o.shard_n && rg_sweep_shard(pts, n, o.shard_k, o.shard_n, mine) < 0)
        return sweep_bad("--shard %d/%d: cannot split %d points", o.shard_k, o.shard_n, n);
    for (int i = 0; i < n; i++)
        if (!o.shard_n || mine[i])
            idx[nidx++] = i;
    if (o.shard_n) {
        double cost = 0, all = 0;
        for (int i = 0; i < n; i++) {
            all += pts[i].cost;
            cost += mine[i] ? pts[i].cost : 0;
        }
        char digest[17];
        rg_sweep_digest(pts, n, digest);
        printf("railguard sweep: shard %d/%d: %d of the plan's %d points (expected cost %.1f of "
               "%.1f; plan digest %s)\n",
               o.shard_k, o.shard_n, nidx, n, cost, all, digest);
    }
    if (o.list) {
        /* How big a sweep is, before it is paid for: one line a point, the rule it arms. */
        for (int j = 0; j < nidx; j++)
            printf("%5d  %s\n", idx[j] + 1, pts[idx[j]].rule);
        printf("sweep: %s %s: %d points planned, none run (--list)\n", file,
               rg_sweep_kind_name(o.spec.kind), nidx);
        return 0;
    }
    fflush(stdout);
    if ((rc = write_points(&o, file, &sc, pts, idx, nidx)))
        return rc;
    return run_points(&o, file, &sc, pts, n, idx, nidx, limit, sites, nsites, sites_why);
}

int rg_sweep_main(int argc, char **argv)
{
    /* The counting run's evidence and the plan's points, 7 MB: the heap's. */
    rg_evidence *ev = calloc(RG_MAX_RANKS, sizeof(*ev));
    rg_sweep_point *pts = calloc(SW__POINTS_MAX, sizeof(*pts));
    int rc = 2;
    if (ev && pts)
        rc = sweep_main(argc, argv, ev, pts);
    else
        fprintf(stderr, "railguard sweep: out of memory\n");
    free(ev);
    free(pts);
    return rc;
}
