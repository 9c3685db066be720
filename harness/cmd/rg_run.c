/* SPDX-License-Identifier: MIT */
/*
 * `railguard run`: loads every scenario first (a bad file stops the run before anything
 * starts), then runs each one in a supervisor process of its own, up to -j at a time. A
 * supervisor writes the devices file, picks a free coordinator port, starts one worker per
 * rank with the shim preloaded and the scenario's fault plan, follows each rank's status
 * lines, and at the deadline takes a backtrace of every rank still running (gdb in batch
 * mode) before killing it. Its verdicts go to result.json in the scenario's directory, which
 * the runner reads back for the live line, the table and the reports.
 */
#include "rg_run.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- scenarios: every file named, loaded before anything runs ------------------------------- */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_yaml(const char *name)
{
    size_t n = strlen(name);
    return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml"));
}

/* Appends the scenario files named by `arg` (a file, or a directory's *.yaml, sorted). */
static int collect(const char *arg, char **paths, int *n)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        fprintf(stderr, "railguard run: %s: %s\n", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (*n == RG_RUN_MAX_SCENARIOS) {
            fprintf(stderr, "railguard run: more than %d scenarios\n", RG_RUN_MAX_SCENARIOS);
            return -1;
        }
        paths[(*n)++] = strdup(arg);
        return 0;
    }
    DIR *d = opendir(arg);
    if (!d) {
        fprintf(stderr, "railguard run: %s: %s\n", arg, strerror(errno));
        return -1;
    }
    int start = *n;
    for (struct dirent *e; (e = readdir(d));) {
        char p[1024];
        if (e->d_name[0] == '.' || !is_yaml(e->d_name))
            continue;
        if (*n == RG_RUN_MAX_SCENARIOS) {
            closedir(d);
            fprintf(stderr, "railguard run: more than %d scenarios\n", RG_RUN_MAX_SCENARIOS);
            return -1;
        }
        snprintf(p, sizeof(p), "%s/%s", arg, e->d_name);
        paths[(*n)++] = strdup(p);
    }
    closedir(d);
    qsort(paths + start, (size_t)(*n - start), sizeof(char *), cmp_str);
    return 0;
}

/*
 * The most a rank registers of the caller's memory at once: zero_copy scenarios register each
 * call's buffers (input and output). The transport's own staging is its business; only what
 * the scenarios add is checked against the locked-memory limit.
 */
static uint64_t registered_bytes(const struct sc_entry *e, int n)
{
    uint64_t most = 0;
    for (int i = 0; i < n; i++) {
        const rg_scenario *sc = &e[i].sc;
        for (int k = 0; sc->zero_copy && k < sc->nops; k++) {
            const rg_sc_op *op = &sc->ops[k];
            uint64_t one = (uint64_t)op->count * rg_data_size(op->dtype);
            uint64_t wide = op->kind == RG_SC_ALL_GATHER || op->kind == RG_SC_REDUCE_SCATTER
                                ? one * (uint64_t)sc->ranks
                                : one;
            if (one + wide > most)
                most = one + wide;
        }
    }
    return most;
}

/* A result before its ranks run: what the scenario expects, and how to reproduce it. */
static void result_init(rg_result *res, const struct run_opts *o, const struct sc_entry *e,
                        const char *dir)
{
    memset(res, 0, sizeof(*res));
    snprintf(res->name, sizeof(res->name), "%s", e->sc.name);
    snprintf(res->path, sizeof(res->path), "%s", e->path);
    snprintf(res->dir, sizeof(res->dir), "%s", dir);
    res->ranks = e->sc.ranks;
    res->self_rank = -1;
    res->time_scale = e->sc.time_scale > 1 ? e->sc.time_scale : 1;
    res->attempts = 1;
    rg_phases_unknown(&res->phases);
    res->deadline_cut_s = e->deadline_cut;
    res->uc_as_rc = e->sc.uc_as_rc;
    snprintf(res->fit_note, sizeof(res->fit_note), "%s", e->sc.fit_note);
    memcpy(res->expect, e->sc.expect, sizeof(res->expect));
    memcpy(res->expect_at, e->sc.expect_at, sizeof(res->expect_at));
    memcpy(res->expect_cls, e->sc.expect_cls, sizeof(res->expect_cls));
    memcpy(res->known, e->sc.known, sizeof(res->known));
    snprintf(res->known_why, sizeof(res->known_why), "%s", e->sc.known_why);
    res->nksig = e->sc.nksig;
    memcpy(res->ksig, e->sc.ksig, sizeof(res->ksig[0]) * (size_t)e->sc.nksig);
    char repro_out[PATH_MAX + 8];
    snprintf(repro_out, sizeof(repro_out), "%s/repro", o->out);
    rg_run_repro_line(res->repro, sizeof(res->repro), o,
                      (const char *const[]){"--devices", o->devlist, NULL}, repro_out, &e->sc,
                      e->path);
}

/*
 * Too slow to judge (rg_slow.c): a first attempt that ran out of time on a machine that held
 * its ranks back is run again with every time scaled by --slow-scale, and judged by that
 * attempt; if it too runs out of time while the machine took half of it, the result is SLOW.
 */
static void second_attempt(const struct run_opts *o, const struct sc_entry *e, rg_result *res)
{
    char why[400], err[1500], note[sizeof(res->slow_note)];
    if (o->slow_scale < 2 || !rg_slow_held_back(res, &e->sc, false, why, sizeof(why)))
        return;
    if (rg_slow_set_aside(res, o->slow_scale, why, note, sizeof(note), err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard run: %s\n", err);
        return;
    }
    static struct sc_entry again;
    again = *e;
    rg_scenario_scale(&again.sc, o->slow_scale);
    char dir[sizeof(res->dir)];
    memcpy(dir, res->dir, sizeof(dir));
    result_init(res, o, &again, dir);
    res->attempts = 2;
    memcpy(res->slow_note, note, sizeof(note));
    rg_run_scenario(o, &again, res);
    rg_slow_settle(res, &e->sc, &again.sc, why);
}

/*
 * The first scenario not yet started whose exclusive resource (a program's fixed port) no
 * running one holds, or -1: under -j two such scenarios would take each other's port, and
 * what failed would be the run, not the program.
 */
int rg_run_next_startable(const struct sc_entry *e, int n, const bool *started, const int *slot_of,
                          int inflight)
{
    for (int i = 0; i < n; i++) {
        if (started[i])
            continue;
        bool held = false;
        for (int k = 0; k < inflight && e[i].sc.exclusive[0] && !held; k++)
            held = !strcmp(e[slot_of[k]].sc.exclusive, e[i].sc.exclusive);
        if (!held)
            return i;
    }
    return -1;
}

/* The supervisor: one process per scenario, so -j scenarios never share anything. */
/* One scenario, judged, into DIR/NNN-name/result.json. Returns 0, or 1 if it could not save. */
int rg_run_scenario_once(const struct run_opts *o, const struct sc_entry *e, int index)
{
    char dir[1024];
    rg_run_fmt(dir, sizeof(dir), "%s/%03d-%s", o->out, index, e->sc.name);
    static rg_result res;
    char err[512], path[1200];
    result_init(&res, o, e, dir);
    mkdir(dir, 0755);
    if (e->sc.each_site) {
        rg_run_sites(o, e, &res); /* its points have attempts and rechecks of their own */
    } else {
        double t = rg_now_s();
        rg_run_scenario(o, e, &res);
        double first = rg_now_s() - t;
        second_attempt(o, e, &res);
        if (res.attempts > 1)
            res.phases.s[RG_PH_AGAIN] = first;
    }
    rg_run_prove_cause(&res);
    snprintf(path, sizeof(path), "%s/result.json", dir);
    if (rg_result_save(&res, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard run: %s\n", err);
        return 1;
    }
    /* The timeline is for people to look at; the verdicts stand without it. */
    snprintf(path, sizeof(path), "%s/trace.json", dir);
    if (rg_trace_write(&res, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    return 0;
}

static pid_t start_scenario(const struct run_opts *o, const struct sc_entry *e, int index)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    _exit(rg_run_scenario_once(o, e, index));
}

/* A scenario's result as its supervisor saved it (or why there is none), and its line. */
void rg_run_take_result(const struct run_opts *o, const struct sc_entry *e, int idx, rg_result *r)
{
    char path[1200], err[512];
    rg_run_fmt(path, sizeof(path), "%s/%03d-%s/result.json", o->out, idx, e->sc.name);
    if (rg_result_read(r, path, err, sizeof(err)) != 0) {
        memset(r, 0, sizeof(*r));
        rg_phases_unknown(&r->phases);
        snprintf(r->name, sizeof(r->name), "%s", e->sc.name);
        snprintf(r->why, sizeof(r->why), "the scenario's supervisor died: %s", err);
        r->passed = false;
    }
    rg_report_line(stdout, r);
}

/* A run's scenarios, as loaded, and their results. */
struct run {
    struct run_opts o;
    char *paths[RG_RUN_MAX_SCENARIOS];
    struct sc_entry entries[RG_RUN_MAX_SCENARIOS];
    rg_result results[RG_RUN_MAX_SCENARIOS];
    bool started[RG_RUN_MAX_SCENARIOS];
    int n;
    rg_run_info info;
};

/* Every scenario named (none: the stock suite) loaded and checked before any runs: a typo
 * found late wastes a whole run. 0, or -1 after one line. */
static int load_all(struct run *u, int argc, char **argv, int first)
{
    const struct run_opts *o = &u->o;
    char stock[PATH_MAX], err[1024];
    if (first >= argc && rg_stock_scenarios(stock, sizeof(stock), o->self) != 0) {
        fprintf(stderr, "railguard run: no scenario named, and no stock scenarios beside %s\n",
                o->self);
        return -1;
    }
    if (first >= argc && collect(stock, u->paths, &u->n) != 0)
        return -1;
    for (int i = first; i < argc; i++)
        if (collect(argv[i], u->paths, &u->n) != 0)
            return -1;
    if (!u->n) {
        fprintf(stderr, "railguard run: no scenario files (*.yaml) in the paths given\n");
        return -1;
    }
    for (int i = 0; i < u->n; i++) {
        struct sc_entry *e = &u->entries[i];
        const char *path = u->paths[i];
        char *ap = rg_run_abs_path(path);
        snprintf(e->path, sizeof(e->path), "%s", ap);
        free(ap);
        if (rg_scenario_load(path, &e->sc, err, sizeof(err)) != 0) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
        if (o->no_ownership)
            e->sc.ownership = false;
        /* A fault's doing shows in the trace as the transport's: only the fault-free ones. */
        if (o->trace && !e->sc.nfaults)
            e->sc.trace = true;
        if (o->uc_as_rc && e->sc.nfaults + e->sc.ownership + e->sc.trace + 1 > FI_MAX_RULES) {
            fprintf(stderr,
                    "railguard run: %s: %d faults and the run's own rules leave no room for "
                    "--uc-as-rc's (at most %d rules)\n",
                    path, e->sc.nfaults, FI_MAX_RULES);
            return -1;
        }
        e->sc.uc_as_rc = o->uc_as_rc;
        e->deadline_cut = rg_scenario_cut_deadline(&e->sc, o->deadline_cut);
        if (e->sc.exec.on && (o->external || o->nhosts)) {
            fprintf(stderr,
                    "railguard run: %s: an exec scenario runs its own processes, not under "
                    "%s\n",
                    path, o->external ? "--external" : "--hosts");
            return -1;
        }
        if (e->sc.each_site && (o->external || o->nhosts)) {
            fprintf(stderr, "%s:%d: each_site runs a sweep of its own here, not under %s\n", path,
                    e->sc.each_site_line, o->external ? "--external" : "--hosts");
            return -1;
        }
        if (e->sc.exec.on && rg_exec_check(&e->sc, err, sizeof(err)) != 0) {
            fprintf(stderr, "%s:%d: %s\n", path, e->sc.exec.line, err);
            return -1;
        }
        /* Two scenarios at once would share the devices' wire: netem holds one qdisc a device,
         * and one scenario's impaired wire would be the other's too. */
        for (int f = 0; f < e->sc.nfaults && o->jobs > 1; f++)
            if (fi_kind_wire((enum fi_kind)e->sc.fault[f].kind)) {
                fprintf(stderr,
                        "%s:%d: faults item %d: a wire fault needs the devices to itself: run "
                        "it with -j 1\n",
                        path, e->sc.fault[f].line, f + 1);
                return -1;
            }
    }
    if (o->external && u->n != 1) {
        fprintf(stderr, "railguard run: --external runs one scenario per launch (%d given)\n",
                u->n);
        return -1;
    }
    return 0;
}

/* Preflight (a run that cannot inject or cannot reach a device stops here, before any scenario
 * could pass for the wrong reason), the transport's known failures once its name is known, and
 * --out made and made absolute. 0, or -1 after one line. */
static int prepare(struct run *u)
{
    struct run_opts *o = &u->o;
    char err[1024];
    if (rg_preflight(o->shim, o->transport, o->devices, o->external || o->nhosts ? 0 : o->ndevices,
                     &u->info, err, sizeof(err)) != 0 ||
        rg_preflight_memlock(registered_bytes(u->entries, u->n), err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard run: preflight: %s\n", err);
        return -1;
    }
    /* Each scenario in the shape the transport has where it states none (the ranks fit it
     * alike from the same caps); then its rails must be among the devices given. External
     * runs take their rails from the site's devices file. */
    for (int i = 0; i < u->n; i++) {
        struct sc_entry *e = &u->entries[i];
        if (u->info.caps_known && !e->sc.exec.on)
            rg_sc_fit(&e->sc, u->info.qp_types, u->info.max_rails);
        if (!o->external && !o->nhosts && !e->sc.exec.on && e->sc.rails > o->ndevices) {
            fprintf(stderr, "%s: needs %d rails, but only %d devices are given (%s)\n", e->path,
                    e->sc.rails, o->ndevices, o->devlist);
            return -1;
        }
    }
    if (o->seed_set)
        snprintf(u->info.seed, sizeof(u->info.seed), "%llu", (unsigned long long)o->seed);
    else
        snprintf(u->info.seed, sizeof(u->info.seed), "per scenario");
    if (o->known[0]) {
        static rg_scenario *scs[RG_RUN_MAX_SCENARIOS];
        char notes[2048];
        for (int i = 0; i < u->n; i++)
            scs[i] = &u->entries[i].sc;
        if (rg_known_load(o->known, u->info.transport_name, scs, u->n, notes, sizeof(notes), err,
                          sizeof(err)) != 0) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
        fputs(notes, stdout);
        rg_run_trace_for_causes(u->entries, u->n, !(o->external || o->nhosts), stdout);
    }
    if (rg_mkdirs(o->out) != 0) {
        fprintf(stderr, "railguard run: --out %s: %s\n", o->out, strerror(errno));
        return -1;
    }
    char *ao = rg_run_abs_path(o->out);
    snprintf(o->out, sizeof(o->out), "%s", ao);
    free(ao);
    return 0;
}

/* --fail-fast stopped the run: the scenarios never started leave it (their names said, so
 * nobody takes the report for the whole suite), the ones that ran keep their order. */
static void drop_not_started(struct run *u)
{
    int kept = 0, dropped = 0;
    for (int i = 0; i < u->n; i++) {
        if (!u->started[i]) {
            printf("%s%s", dropped++ ? ", " : "railguard run: --fail-fast: not run: ",
                   u->entries[i].sc.name);
            free(u->paths[i]);
            continue;
        }
        if (kept != i) {
            u->paths[kept] = u->paths[i];
            u->entries[kept] = u->entries[i];
            u->results[kept] = u->results[i];
            u->started[kept] = true;
        }
        kept++;
    }
    if (dropped)
        printf(" (%d scenario(s))\n", dropped);
    u->n = kept;
}

/* Every scenario in a supervisor process of its own, up to -j at a time. 0, or -1. */
static int run_jobs(struct run *u)
{
    pid_t running[64];
    int slot_of[64], done = 0, inflight = 0;
    bool stop = false; /* --fail-fast, after a failure: the scenarios begun finish, no more */
    while (done < u->n && !(stop && !inflight)) {
        int pick;
        while (!stop && inflight < u->o.jobs &&
               (pick = rg_run_next_startable(u->entries, u->n, u->started, slot_of, inflight)) >=
                   0) {
            pid_t pid = start_scenario(&u->o, &u->entries[pick], pick);
            if (pid < 0) {
                fprintf(stderr, "railguard run: fork: %s\n", strerror(errno));
                return -1;
            }
            u->started[pick] = true;
            running[inflight] = pid;
            slot_of[inflight++] = pick;
        }
        int wst;
        pid_t w = wait(&wst);
        if (w < 0)
            break;
        for (int k = 0; k < inflight; k++) {
            if (running[k] != w)
                continue;
            int idx = slot_of[k];
            rg_run_take_result(&u->o, &u->entries[idx], idx, &u->results[idx]);
            stop |= u->o.fail_fast && !u->results[idx].passed && !u->results[idx].too_slow;
            running[k] = running[inflight - 1];
            slot_of[k] = slot_of[inflight - 1];
            inflight--;
            done++;
            break;
        }
    }
    if (stop)
        drop_not_started(u);
    return 0;
}

/* DIR/report.json, DIR/junit.xml and DIR/index.html always, as documented; --json and --junit
 * are extra copies where a CI system looks for them (they once replaced the DIR ones). */
static void write_reports(const struct run *u, double total)
{
    const struct run_opts *o = &u->o;
    char err[1024], path[PATH_MAX + 32], jpath[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/report.json", o->out);
    const char *json_to[] = {path, o->json[0] ? o->json : NULL};
    for (int k = 0; k < 2 && json_to[k]; k++)
        if (rg_report_json(u->results, u->n, total, &u->info, json_to[k], err, sizeof(err)) != 0)
            fprintf(stderr, "railguard run: %s\n", err);
    snprintf(jpath, sizeof(jpath), "%s/junit.xml", o->out);
    const char *junit_to[] = {jpath, o->junit[0] ? o->junit : NULL};
    for (int k = 0; k < 2 && junit_to[k]; k++)
        if (rg_report_junit(u->results, u->n, total, &u->info, junit_to[k], err, sizeof(err)) != 0)
            fprintf(stderr, "railguard run: %s\n", err);
    snprintf(jpath, sizeof(jpath), "%s/index.html", o->out);
    if (rg_html_write(u->results, u->n, total, &u->info, jpath, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    rg_report_table(stdout, u->results, u->n, total);
}

/* The run's exit status: 1 when a scenario failed, 3 when none did but some were too slow to
 * judge, else 0; --tally's line appended (a skip is not a pass: the tally leaves it out). */
static int run_status(const struct run *u)
{
    int st = 0, passed = 0, slow = 0, failed = 0;
    for (int i = 0; i < u->n; i++) {
        const rg_result *r = &u->results[i];
        st |= !r->passed && !r->too_slow;
        slow += r->too_slow;
        passed += r->passed && !r->skipped;
        failed += !r->passed;
    }
    if (!st && slow)
        st = 3;
    if (u->o.tally[0]) {
        FILE *t = fopen(u->o.tally, "a");
        if (!t || fprintf(t, "conformance %d %d\n", passed, failed) < 0 || fclose(t) != 0) {
            fprintf(stderr, "railguard run: --tally %s: cannot append: %s\n", u->o.tally,
                    strerror(errno));
            st = 1;
        }
    }
    return st;
}

int rg_run_main(int argc, char **argv)
{
    /* Some 250 MB for RG_RUN_MAX_SCENARIOS results: the heap's (pages only as touched), not
     * .bss's, which a sanitizer's leak check reads whole at every exit. */
    struct run *u = calloc(1, sizeof(*u));
    int first, st = 2;
    if (!u) {
        fprintf(stderr, "railguard run: out of memory\n");
        return 2;
    }
    int rc = rg_run_parse_opts(argc, argv, &u->o, &first);
    if (rc) {
        st = rc == 1 ? 0 : rc; /* 1: --help, said */
        goto out;
    }
    if (load_all(u, argc, argv, first) != 0 || prepare(u) != 0)
        goto out;
    if (u->o.external) {
        st = rg_run_external(&u->o, &u->entries[0]);
        goto out;
    }
    if (u->o.nhosts) {
        st = rg_run_hosts(&u->o, u->entries, u->n);
        goto out;
    }
    printf("railguard run: %d scenario(s), transport %s, devices %s, -j %d, logs in %s\n", u->n,
           u->o.transport, u->o.devlist, u->o.jobs, u->o.out);
    fflush(stdout);
    double t0 = rg_now_s();
    if ((u->o.fork_server ? rg_run_served(&u->o, u->entries, u->n, u->results, u->started)
                          : run_jobs(u)) != 0)
        goto out;
    write_reports(u, rg_now_s() - t0);
    st = run_status(u);
    /* The run's verdict stands: triage reads it back and groups it, it does not judge. */
    if (u->o.triage && st == 1)
        rg_triage_dir(u->o.out, u->o.triage_rerun, u->o.triage_rerun ? RG_TRI_MIN_BUDGET : 0, NULL);
out:
    for (int i = 0; i < u->n; i++)
        free(u->paths[i]);
    free(u);
    return st;
}
