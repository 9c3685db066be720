/* SPDX-License-Identifier: MIT */
/*
 * `railguard exec`: any verbs program, unmodified, judged as `railguard run` judges a
 * transport. N copies of the command run under the shim with the plan checked here (the plan
 * library's own parser), each with its rank and size in the environment; each process gets a
 * verdict from the one table: its exit status and signals, DEADLOCK with gdb's backtrace at
 * the deadline, and the shim's evidence -- NOT_EXERCISED when a planned fault never fired,
 * ERROR_SWALLOWED when it exited 0 after injected error completions or negative polls,
 * ERROR_WITHOUT_FAULT for a failure no fault caused, the ownership sanitizer's findings, and
 * the verbs objects left at exit (LEAK, which fails only with --leaks). `detected` is a
 * non-zero exit after a fault fired. The outputs are run's: the live line, the table,
 * report.json, junit.xml and each process's log, events and backtrace.
 */
#include "rg_exec.h"
#include "rg_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The words rank r runs: the server's, the client's, or the command after '--'. */
static char **words_of(const struct exec_opts *o, int r, int *n)
{
    if (o->server_arg) {
        *n = r ? o->nclient : o->nserver;
        return r ? (char **)o->client : (char **)o->server;
    }
    *n = o->ncmd;
    return o->cmd;
}

/* The plan's text: --faults as given, or --plan's file (at most 64 KiB). NULL and a line in
 * err when the file cannot be read. */
static char *plan_text(const struct exec_opts *o, char *err, size_t errlen)
{
    if (o->faults)
        return strdup(o->faults);
    if (!o->plan)
        return strdup("");
    FILE *f = fopen(o->plan, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", o->plan, strerror(errno));
        return NULL;
    }
    char *buf = malloc(RG_EXEC_PLAN_MAX + 1);
    size_t n = buf ? fread(buf, 1, RG_EXEC_PLAN_MAX + 1, f) : 0;
    bool bad = ferror(f) || n > RG_EXEC_PLAN_MAX || (buf && memchr(buf, '\0', n));
    fclose(f);
    if (!buf || bad) {
        snprintf(err, errlen, "%s: %s", o->plan,
                 !buf                   ? "out of memory"
                 : n > RG_EXEC_PLAN_MAX ? "longer than 64 KiB"
                                        : "unreadable or not text");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/*
 * The scenario the judge sees: no program steps, the command's ranks, the plan's rules as
 * written (the plan library splits and checks them: one owner for the grammar), the
 * sanitizer unless --no-ownership. Returns 0, or -1 with one line in err.
 */
static int build_scenario(const struct exec_opts *o, rg_scenario *sc, char *err, size_t errlen)
{
    static struct fi_plan plan, again;
    char perr[320];
    const char *origin = o->plan ? o->plan : "--faults";
    memset(sc, 0, sizeof(*sc));
    int nw;
    char **w = words_of(o, 0, &nw);
    const char *base = strrchr(w[0], '/');
    snprintf(sc->name, sizeof(sc->name), "%s", o->name[0] ? o->name : base ? base + 1 : w[0]);
    sc->ranks = o->ranks;
    sc->rails = 1;
    sc->deadline_s = o->deadline_s;
    /* Programs have no communicator timeout; SLOW_DETECTION's bound is half the deadline. */
    sc->timeout_s = o->deadline_s;
    sc->ownership = !o->no_ownership;
    sc->uc_as_rc = o->uc_as_rc;
    sc->exec.services = o->services;
    sc->exec.service_grace = o->service_grace;
    /* The client's head start as it runs (-1: when {port} listens), which a second attempt
     * scales and the too-slow rule weighs a client's failure against. */
    sc->exec.client_after = o->server_arg ? o->client_after : -1;
    char *text = plan_text(o, err, errlen);
    if (!text)
        return -1;
    if (o->count) {
        /* Counting rules after the user's: no fault, every QP, CQ and call site counted. */
        size_t tl = strlen(text);
        char *more = realloc(text, tl + 32);
        if (!more) {
            free(text);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        text = more;
        snprintf(text + tl, 32, "%scount\nsites", tl && text[tl - 1] != '\n' ? "\n" : "");
    }
    if (fi_plan_parse(text, origin, &plan, perr, sizeof(perr)) != 0) {
        snprintf(err, errlen, "%s", perr);
        free(text);
        return -1;
    }
    /* The sanitizer's rule joins the plan each process reads: it must still fit. */
    if (plan.nrules + sc->ownership + sc->uc_as_rc > FI_MAX_RULES) {
        snprintf(err, errlen, "%s: %d rules and %s make more than %d (%s)", origin, plan.nrules,
                 sc->ownership && sc->uc_as_rc ? "the ownership sanitizer's and --uc-as-rc's"
                 : sc->ownership               ? "the ownership sanitizer's"
                                               : "--uc-as-rc's",
                 FI_MAX_RULES, sc->ownership ? "--no-ownership frees one" : "one fewer frees room");
        free(text);
        return -1;
    }
    size_t used = 0;
    for (int i = 0; i < plan.nrules; i++) {
        const struct fi_rule *r = &plan.rules[i];
        rg_sc_fault *f = &sc->fault[i];
        if (r->kind == FI_OWNERSHIP) {
            snprintf(err, errlen,
                     "%s:%d: the sanitizer is on by default (--no-ownership turns it off), not a "
                     "rule 'ownership'",
                     origin, r->line);
            free(text);
            return -1;
        }
        if (fi_kind_wire(r->kind)) {
            snprintf(err, errlen, "%s:%d: %s", origin, r->line, RG_SC_EXEC_NO_WIRE);
            free(text);
            return -1;
        }
        if (r->src_len >= sizeof(f->rule) || used + r->src_len + 2 >= sizeof(sc->faults)) {
            snprintf(err, errlen, "%s:%d: rule %d longer than %zu characters", origin, r->line,
                     i + 1, sizeof(f->rule) - 1);
            free(text);
            return -1;
        }
        memcpy(f->rule, text + r->src_off, r->src_len);
        f->rule[r->src_len] = '\0';
        f->line = r->line;
        f->kind = (int)r->kind;
        used += (size_t)snprintf(sc->faults + used, sizeof(sc->faults) - used, "%s%s",
                                 used ? "\n" : "", f->rule);
    }
    sc->nfaults = plan.nrules;
    free(text);
    /* The joined plan is what every process reads: it must say the same. */
    if (fi_plan_parse(sc->faults, origin, &again, perr, sizeof(perr)) != 0 ||
        again.nrules != plan.nrules) {
        snprintf(err, errlen, "%s: the rules do not join into one plan: %s", origin, perr);
        return -1;
    }
    rg_sc_expect e = o->expect_set ? o->expect : rg_sc_expect_default(sc);
    for (int r = 0; r < sc->ranks; r++) {
        sc->expect[r] = e;
        sc->expect_at[r] = RG_SC_AT_ANY;
        sc->expect_cls[r] = 0;
    }
    return 0;
}

/* Rank r's words with {rank}, {size}, {port} and {host} replaced, into buf; argv points there. */
static int rank_argv(const struct exec_opts *o, int rank, char *buf, size_t len, char **argv)
{
    size_t used = 0;
    int nw;
    char **words = words_of(o, rank, &nw);
    for (int i = 0; i < nw; i++) {
        argv[i] = buf + used;
        for (const char *p = words[i]; *p;) {
            char tmp[16];
            const char *put = NULL;
            size_t skip = 1;
            if (!strncmp(p, "{rank}", 6)) {
                snprintf(tmp, sizeof(tmp), "%d", rank);
                put = tmp, skip = 6;
            } else if (!strncmp(p, "{size}", 6)) {
                snprintf(tmp, sizeof(tmp), "%d", o->ranks);
                put = tmp, skip = 6;
            } else if (!strncmp(p, "{port}", 6)) {
                snprintf(tmp, sizeof(tmp), "%d", o->port);
                put = tmp, skip = 6;
            } else if (!strncmp(p, "{host}", 6)) {
                put = "127.0.0.1", skip = 6;
            }
            size_t n = put ? strlen(put) : 1;
            if (used + n + 1 >= len)
                return -1;
            memcpy(buf + used, put ? put : p, n);
            used += n;
            p += skip;
        }
        buf[used++] = '\0';
    }
    argv[nw] = NULL;
    return 0;
}

/* Rank r's command: the wrapper's words (none without one), then its own with {rank}, {size},
 * {port} and {host} replaced. A wrapper must exec the program in the same process (valgrind
 * does), or signals and backtraces reach the wrapper. NULL when it does not fit. */
static char *const *command_of(const struct exec_opts *o, int r)
{
    static char words[RG_MAX_RANKS][16384];
    static char *argv[RG_MAX_RANKS][RG_CMD_WORDS + 1 + RG_EXEC_ARGS + 1];
    int nw = 0;
    for (; nw < o->nwrap && nw < RG_CMD_WORDS; nw++)
        argv[r][nw] = o->wrap_of[nw];
    if (rank_argv(o, r, words[r], sizeof(words[r]), argv[r] + nw) != 0)
        return NULL;
    return argv[r];
}

/* Runs the processes (launch/rg_programs.c) and judges them (judge/rg_judge_procs.c): res
 * holds the verdicts. */
static void run_exec(const struct exec_opts *o, const rg_scenario *sc, rg_result *res)
{
    static rg_program_launch pl;
    char plan[1200];
    /* 6.5 MB, the heap's (a leak check reads .bss whole at every exit). */
    rg_launched *l = calloc(1, sizeof(*l));
    /* A wrapper execs the process the runner starts: under a launcher that is the launcher,
     * whose ranks the wrapper would never reach. */
    if (o->launcher && o->nwrap) {
        free(l);
        for (int r = 0; r < sc->ranks; r++)
            rg_rank_find(&res->rank[r], RG_V_ERROR, 0,
                         "a rank wrapper would wrap the launcher, not the ranks it starts: put "
                         "it in the launcher's command, before the program");
        return;
    }
    if (!l || rg_proc_write_plan(res->dir, sc, plan, sizeof(plan)) != 0) {
        int e = errno;
        free(l);
        for (int r = 0; r < sc->ranks; r++)
            rg_rank_find(&res->rank[r], RG_V_ERROR, 0, "cannot write %s/plan: %s", res->dir,
                         strerror(e));
        return;
    }
    pl = (rg_program_launch){.sc = sc,
                             .shim = o->shim,
                             .dir = res->dir,
                             .planfile = plan,
                             .pair = o->server_arg != NULL,
                             .launcher = o->launcher,
                             .client_after = o->client_after,
                             .port = o->port};
    for (int r = 0; r < sc->ranks; r++) {
        pl.argv[r] = command_of(o, r);
        pl.argv_err[r] = "the command is longer than 16384 bytes";
    }
    rg_launch_programs(&pl, l);
    double judged = rg_now_s();
    rg_judge_programs(res, sc, l);
    rg_launched_phases(l, rg_now_s() - judged, &res->phases);
    free(l);
}

/*
 * Too slow to judge (judge/rg_slow.c), as railguard run does it: a run that ran out of its deadline
 * on a machine that held it back is run again with every time scaled, from `fresh` (the result
 * before any process ran), and judged by that attempt; SLOW if that runs out too.
 */
static void second_attempt(const struct exec_opts *o, const rg_scenario *sc, rg_result *res,
                           const rg_result *fresh)
{
    char why[400], err[1500], note[sizeof(res->slow_note)];
    if (o->slow_scale < 2 || !rg_slow_held_back(res, sc, false, why, sizeof(why)))
        return;
    if (rg_slow_set_aside(res, o->slow_scale, why, note, sizeof(note), err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard exec: %s\n", err);
        return;
    }
    static struct exec_opts o2;
    static rg_scenario again;
    o2 = *o; /* its word pointers still point into *o, which outlives this */
    again = *sc;
    rg_scenario_scale(&again, o->slow_scale);
    o2.deadline_s = again.deadline_s;
    o2.client_after = again.exec.client_after;
    o2.service_grace = again.exec.service_grace;
    *res = *fresh;
    res->time_scale = o->slow_scale;
    res->attempts = 2;
    memcpy(res->slow_note, note, sizeof(note));
    run_exec(&o2, &again, res);
    rg_judge(res);
    rg_slow_settle(res, sc, &again, why);
}

/* "railguard exec --ranks 2 --faults '...' -- CMD ...", quoted to paste back. */
static void repro_line(const struct exec_opts *o, int argc, char **argv, char *buf, size_t len)
{
    buf[0] = '\0';
    rg_shell_word(buf, len, o->self);
    for (int i = 0; i < argc; i++)
        if (rg_shell_word(buf, len, argv[i]) != 0)
            break;
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
}

/* {port}: a TCP port free a moment ago, picked when the processes are about to start (a
 * check at load needs none). -1 with err when loopback has none. */
static int pick_port(struct exec_opts *o, char *err, size_t errlen)
{
    o->port = rg_free_port();
    if (o->port > 0)
        return 0;
    snprintf(err, errlen, "no free TCP port on loopback for {port}");
    return -1;
}

int rg_exec_check(const rg_scenario *sc, char *err, size_t errlen)
{
    static struct exec_opts o;
    return exec_opts_of(sc, NULL, &o, err, errlen);
}

void rg_exec_scenario(const rg_scenario *sc, const char *shim, char *const *wrap, int nwrap,
                      rg_result *res)
{
    static struct exec_opts o;
    char err[300];
    res->leak_ok = true; /* a program may leave cleanup to exit: LEAK is a finding here */
    if (exec_opts_of(sc, shim, &o, err, sizeof(err)) != 0 || pick_port(&o, err, sizeof(err)) != 0) {
        for (int r = 0; r < sc->ranks; r++) {
            res->rank[r] = (rg_rank_result){
                .t_s = -1, .step = -1, .left_t_s = -1, .start_s = -1, .cpu_wait_s = -1};
            snprintf(res->rank[r].where, sizeof(res->rank[r].where), "start");
            rg_rank_find(&res->rank[r], RG_V_ERROR, 0, "could not start: %s", err);
        }
        return;
    }
    o.wrap_of = wrap;
    o.nwrap = wrap ? nwrap : 0;
    run_exec(&o, sc, res);
}

int rg_exec_main(int argc, char **argv)
{
    static struct exec_opts o;
    static rg_scenario sc;
    static rg_result res;
    char err[600], path[PATH_MAX + 64];
    memset(&o, 0, sizeof(o));
    ssize_t n = readlink("/proc/self/exe", o.self, sizeof(o.self) - 1);
    if (n <= 0) {
        fprintf(stderr, "railguard exec: cannot find my own executable\n");
        return 2;
    }
    o.self[n] = '\0';
    rg_beside(o.shim, sizeof(o.shim), o.self, "railguard-fi.so");
    int rc = exec_parse_opts(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (pick_port(&o, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard exec: %s\n", err);
        return 2;
    }
    if (build_scenario(&o, &sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard exec: %s\n", err);
        return 2;
    }
    if (access(o.shim, R_OK) != 0) {
        fprintf(stderr, "railguard exec: --shim: cannot read '%s': %s\n", o.shim, strerror(errno));
        return 2;
    }
    memset(&res, 0, sizeof(res));
    snprintf(res.name, sizeof(res.name), "%s", sc.name);
    repro_line(&o, argc, argv, res.repro, sizeof(res.repro));
    /* The result's "path" is what ran: the command line, cut to its field. */
    size_t plen = strnlen(res.repro, sizeof(res.path) - 1);
    memcpy(res.path, res.repro, plen);
    res.path[plen] = '\0';
    if ((size_t)snprintf(res.dir, sizeof(res.dir), "%s/000-%s", o.out, sc.name) >=
        sizeof(res.dir)) {
        fprintf(stderr, "railguard exec: --out: too long a path '%s'\n", o.out);
        return 2;
    }
    if (rg_mkdirs(res.dir) != 0) {
        fprintf(stderr, "railguard exec: --out: cannot make '%s': %s\n", res.dir, strerror(errno));
        return 2;
    }
    res.ranks = sc.ranks;
    res.self_rank = -1;
    res.leak_ok = !o.leaks;
    res.uc_as_rc = sc.uc_as_rc;
    memcpy(res.expect, sc.expect, sizeof(res.expect));
    memcpy(res.expect_at, sc.expect_at, sizeof(res.expect_at));
    memcpy(res.expect_cls, sc.expect_cls, sizeof(res.expect_cls));
    memcpy(res.known, sc.known, sizeof(res.known));
    res.time_scale = res.attempts = 1;
    rg_phases_unknown(&res.phases); /* until its launch measures them */
    static rg_result fresh;
    fresh = res;
    double t = rg_now_s();
    run_exec(&o, &sc, &res);
    rg_judge(&res);
    double first = rg_now_s() - t;
    second_attempt(&o, &sc, &res, &fresh);
    if (res.attempts > 1)
        res.phases.s[RG_PH_AGAIN] = first;
    snprintf(path, sizeof(path), "%s/result.json", res.dir);
    int bad = rg_result_save(&res, path, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/report.json", o.out);
    bad = bad || rg_report_json(&res, 1, res.seconds, NULL, path, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/junit.xml", o.out);
    bad = bad || rg_report_junit(&res, 1, res.seconds, NULL, path, err, sizeof(err));
    bad =
        bad || (o.json[0] && rg_report_json(&res, 1, res.seconds, NULL, o.json, err, sizeof(err)));
    bad = bad ||
          (o.junit[0] && rg_report_junit(&res, 1, res.seconds, NULL, o.junit, err, sizeof(err)));
    rg_report_line(stdout, &res);
    rg_report_table(stdout, &res, 1, res.seconds);
    if (o.count)
        exec_count_table(stdout, res.dir, sc.ranks);
    if (bad) {
        fprintf(stderr, "railguard exec: %s\n", err);
        return 1;
    }
    return res.passed ? 0 : res.too_slow ? 3 : 1;
}
