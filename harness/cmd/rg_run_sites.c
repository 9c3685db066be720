/* SPDX-License-Identifier: MIT */
/*
 * each_site scenarios (rg_scenario.h): one fault at each verbs call site of the program that
 * the kind applies to. The run hands the scenario to `railguard sweep --by-site` (a counting
 * run, then a point a site and op, each failure run again alone) and judges the scenario from
 * the sweep's own record, so the default suite checks every poll site's status as a sweep
 * does: a transport that checks the status at two of its three poll sites fails here, where a
 * scenario with one fault, landing wherever the program's timing puts it, passes.
 */
#include "rg_run.h"
#include "judge/rg_judge.h"
#include "sweep/rg_sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The sweep's points carry their own deadlines; this one only guards against the sweep: its
 * counting run and a recheck, and every point of as many as a program has sites, each at its
 * deadline. */
#define SITES__POINTS_BOUND 64

/* `railguard sweep` of the scenario into out, its output in log; its exit status, or -1 when
 * it could not start or had to be stopped (why says which). */
static int sweep_sites(const struct run_opts *o, const struct sc_entry *e, const char *out,
                       const char *log, char *why, size_t whylen)
{
    char seed[24], depth[8];
    const char *argv[32];
    int a = 0;
    argv[a++] = o->self;
    argv[a++] = "sweep";
    argv[a++] = "--fault";
    argv[a++] = rg_sc_each_names[e->sc.each_site];
    argv[a++] = "--by-site";
    argv[a++] = "--site-depth";
    snprintf(depth, sizeof(depth), "%d", RG_SC_EACH_SITE_DEPTH);
    argv[a++] = depth;
    argv[a++] = "--shrink"; /* the point's own program is small: the scenario's */
    argv[a++] = "0";
    argv[a++] = "--out";
    argv[a++] = out;
    if (o->transport[0]) {
        argv[a++] = "--transport";
        argv[a++] = o->transport;
    }
    if (o->shim[0]) {
        argv[a++] = "--shim";
        argv[a++] = o->shim;
    }
    if (o->devlist[0]) {
        argv[a++] = "--devices";
        argv[a++] = o->devlist;
    }
    if (o->seed_set) {
        snprintf(seed, sizeof(seed), "%llu", (unsigned long long)o->seed);
        argv[a++] = "--seed";
        argv[a++] = seed;
    }
    if (o->known[0]) {
        argv[a++] = "--known";
        argv[a++] = o->known;
    }
    if (o->no_ownership)
        argv[a++] = "--no-ownership";
    if (o->uc_as_rc)
        argv[a++] = "--uc-as-rc";
    if (o->hang_at_deadline)
        argv[a++] = "--hang-at-deadline";
    argv[a++] = e->path;
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whylen, "cannot fork the sweep: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0); /* its runs and their ranks, stopped together if it must be */
        rg_child_output(log);
        execv(o->self, (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    double limit = 2 * (e->sc.deadline_s + 120) + SITES__POINTS_BOUND * (e->sc.deadline_s + 30);
    int st = 0;
    if (rg_child_wait(pid, limit, true, &st) != 0) {
        snprintf(why, whylen, "the sweep had not finished after %.0f s: stopped", limit);
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) {
        snprintf(why, whylen, "the sweep %s", WIFEXITED(st) ? "could not start" : "was killed");
        return -1;
    }
    return WEXITSTATUS(st);
}

/* Every rank NOT_EXERCISED: the scenario's faults (one a site) did not fire, so nothing was
 * shown, whatever the ranks did. */
static void not_exercised(rg_result *res, const char *why)
{
    res->passed = false;
    for (int r = 0; r < res->ranks; r++) {
        res->rank[r].verdict = RG_V_NOT_EXERCISED;
        snprintf(res->rank[r].detail, sizeof(res->rank[r].detail), "%s", why);
    }
    snprintf(res->why, sizeof(res->why), "rank 0: NOT_EXERCISED: %s", why);
    res->first[0] = '\0';
    res->first_rank = 0;
}

/* A run's result read into res over what result_init put there, keeping the scenario's own
 * name, file and expectations: the point or counting run is this scenario's evidence. */
static int take_base(rg_result *res, const char *path)
{
    static rg_result base;
    char err[512];
    if (rg_result_read(&base, path, err, sizeof(err)) != 0)
        return -1;
    rg_result keep = *res;
    *res = base;
    memcpy(res->name, keep.name, sizeof(res->name));
    memcpy(res->path, keep.path, sizeof(res->path));
    res->known_state = RG_KNOWN_NONE;
    return 0;
}

void rg_run_sites(const struct run_opts *o, const struct sc_entry *e, rg_result *res)
{
    const char *kind = rg_sc_each_names[e->sc.each_site];
    char out[1100], log[1100], path[2400], why[600] = "", tail[700];
    double t0 = rg_now_s();
    if (o->nwrap) {
        /* The sweep runs its points in batches whose ranks fork from servers, which a rank
         * wrapper cannot sit under: not run, and said, rather than run without the wrapper. */
        for (int r = 0; r < res->ranks; r++) {
            res->rank[r].verdict = RG_V_UNSUPPORTED;
            rg_run_fmt(res->rank[r].detail, sizeof(res->rank[r].detail),
                       "not run: each_site %s sweeps its points from fork servers, which "
                       "--rank-wrapper cannot wrap",
                       kind);
        }
        rg_judge(res);
        return;
    }
    rg_run_fmt(out, sizeof(out), "%s/sites", res->dir);
    rg_run_fmt(log, sizeof(log), "%s/sites.log", res->dir);
    int st = sweep_sites(o, e, out, log, why, sizeof(why));
    rg_log_last_line(log, tail, sizeof(tail));
    static rg_sw_result sw;
    char err[1024];
    rg_run_fmt(path, sizeof(path), "%s/sweep.json", out);
    bool have = st >= 0 && rg_sw_read(&sw, path, err, sizeof(err)) == 0;
    if (!have) {
        /* No point ran: the counting run's result says why (the program failed, or was
         * skipped, with no fault at all), else the sweep's last line does. */
        rg_run_fmt(path, sizeof(path), "%s/count/000-%s/result.json", out, e->sc.name);
        bool counted = st >= 0 && take_base(res, path) == 0;
        if (counted && (!res->passed || res->skipped)) {
            rg_run_fmt(res->sites_note, sizeof(res->sites_note),
                       "each_site %s: the counting run (no fault) %s, so no site was faulted; "
                       "sweep log: %s",
                       kind, res->skipped ? "was skipped" : "failed", log);
        } else {
            res->nrules = 0;
            not_exercised(res, st < 0 ? why : tail[0] ? tail : "the sweep left no sweep.json");
            rg_run_fmt(res->sites_note, sizeof(res->sites_note),
                       "each_site %s: no point ran (sweep exit %d); sweep log: %s", kind, st, log);
        }
        res->seconds = rg_now_s() - t0;
        return;
    }
    int by[RG_SW_STATES] = {0}, bad = -1;
    for (int i = 0; i < sw.nrows; i++) {
        by[sw.rows[i].state]++;
        if (bad < 0 && sw.rows[i].state == RG_SW_FAILED)
            bad = i;
    }
    char failed_at[400] = "";
    if (bad >= 0) {
        /* Where its fault landed, named by frame, is the failure's own line (landed at). */
        const rg_sw_row *w = &sw.rows[bad];
        rg_run_fmt(failed_at, sizeof(failed_at), "; point %d failed (%s)", w->n, w->p.rule);
        rg_run_fmt(path, sizeof(path), "%s/points/%04d-recheck/000-point-%04d/result.json", out,
                   w->n, w->n);
        if (take_base(res, path) != 0) {
            res->passed = false;
            rg_run_fmt(res->why, sizeof(res->why),
                       "each_site %s: point %d failed and left no result (%s)", kind, w->n, path);
        }
    } else {
        /* Passed (or nothing fired): the ranks' verdicts are the counting run's, faultless. */
        rg_run_fmt(path, sizeof(path), "%s/count/000-%s/result.json", out, e->sc.name);
        if (take_base(res, path) != 0) {
            res->passed = false;
            rg_run_fmt(res->why, sizeof(res->why),
                       "each_site %s: the counting run left no result (%s)", kind, path);
        }
        res->nrules = 0;
        if (!by[RG_SW_PASSED] && !by[RG_SW_FLAKY])
            not_exercised(res, "no site point's fault fired");
        else if (st != 0) {
            res->passed = false;
            rg_run_fmt(res->why, sizeof(res->why), "each_site %s: the sweep exited %d: %s", kind,
                       st, tail);
        }
    }
    rg_run_fmt(res->sites_note, sizeof(res->sites_note),
               "each_site %s (sweep --by-site, %d frames): %d call site(s), %d point(s): %d "
               "passed, %d failed, %d flaky (failed once, passed alone), %d not fired (prove "
               "nothing)%s; sweep: %s/sweep.txt",
               kind, sw.site_depth, sw.nsites, sw.nrows, by[RG_SW_PASSED], by[RG_SW_FAILED],
               by[RG_SW_FLAKY], by[RG_SW_NOT_FIRED], failed_at, out);
    rg_sw_free(&sw);
    res->seconds = rg_now_s() - t0;
}
