/* SPDX-License-Identifier: MIT */
/*
 * `railguard report DIR`: the judgement of an external launch (mpirun, srun) as a whole. Each
 * rank judged itself alone and left DIR/rankR.result.json beside its shim's events; here the
 * rules that look across ranks are applied to all of them at once: the first failure in time,
 * detected only after a fault fired on some rank, every planned fault fired somewhere.
 *
 * Times: each rank counted from its own start on its own host's CLOCK_MONOTONIC. Ranks on one
 * host share that clock, so their times are rebased to the earliest start and ordered. Ranks
 * on several hosts are placed on rank 0's clock by the offsets their runners measured at the
 * start (rg_clock.c), each within a bound; a fault then counts as early as the bounds allow, so
 * no error is called faultless by the clocks' doubt. When some rank's clock was not measured
 * there is no common clock: a fault that fired anywhere counts as before every error, and the
 * report says the order was not checked.
 */
#include "rg_harness.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void shift_rank(rg_rank_result *k, double by)
{
    if (k->t_s >= 0)
        k->t_s += by;
    if (k->step_t_s >= 0)
        k->step_t_s += by;
    if (k->left_t_s >= 0)
        k->left_t_s += by;
    for (int f = 0; f < k->nfindings; f++)
        if (k->finding[f].t_s >= 0)
            k->finding[f].t_s += by;
}

/*
 * Merges the per-rank views (each holding its rank as rank 0, self_rank naming it) into one
 * result and judges it. ev[r] is rank r's evidence. Returns 0, or -1 with one line in err.
 */
int rg_merge(rg_result *out, const rg_scenario *sc, const rg_result *views, int nviews,
             rg_evidence *ev, bool *ordered, char *err, size_t errlen)
{
    const rg_result *by[RG_MAX_RANKS] = {NULL};
    double off[RG_MAX_RANKS] = {0}, t0 = -1, doubt = 0;
    bool one_host = true, measured = true;

    for (int i = 0; i < nviews; i++) {
        int r = views[i].self_rank;
        if (r < 0 || r >= sc->ranks) {
            snprintf(err, errlen, "%s: a result for rank %d, outside 0..%d", views[i].dir, r,
                     sc->ranks - 1);
            return -1;
        }
        if (by[r]) {
            snprintf(err, errlen, "%s: two results for rank %d", views[i].dir, r);
            return -1;
        }
        by[r] = &views[i];
        if (strcmp(views[i].host, views[0].host) != 0)
            one_host = false;
        const rg_clock *c = &views[i].rank[0].clock;
        measured = measured && c->measured;
        off[r] = c->offset_ms;
        doubt = c->err_ms > doubt ? c->err_ms : doubt;
    }
    /* One host: one clock, exactly. Several, every one measured: rank 0's clock. */
    bool placed = !one_host && measured;
    *ordered = one_host || placed;
    for (int r = 0; r < sc->ranks; r++) {
        if (!placed)
            off[r] = 0;
        if (by[r] && (t0 < 0 || by[r]->t0_mono_ms - off[r] < t0))
            t0 = by[r]->t0_mono_ms - off[r];
    }
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", sc->name);
    out->ranks = sc->ranks;
    out->self_rank = -1;
    out->t0_mono_ms = t0;
    out->clock_placed = placed;
    out->clock_err_ms = placed ? doubt : 0;
    if (nviews) {
        snprintf(out->path, sizeof(out->path), "%s", views[0].path);
        snprintf(out->dir, sizeof(out->dir), "%s", views[0].dir);
        snprintf(out->host, sizeof(out->host), "%s", one_host ? views[0].host : "(several)");
    }
    snprintf(out->known_why, sizeof(out->known_why), "%s", sc->known_why);
    for (int r = 0; r < sc->ranks; r++) {
        rg_rank_result *k = &out->rank[r];
        out->expect[r] = sc->expect[r];
        out->expect_at[r] = sc->expect_at[r];
        out->expect_cls[r] = sc->expect_cls[r];
        out->known[r] = sc->known[r];
        if (!by[r]) {
            *k = (rg_rank_result){.t_s = -1, .step = -1, .step_t_s = -1, .left_t_s = -1};
            snprintf(k->where, sizeof(k->where), "start");
            rg_rank_find(k, RG_V_ERROR, -1,
                         "no result from this rank: it never finished its own judgement (its "
                         "node or launcher died?)");
            continue;
        }
        *k = by[r]->rank[0];
        shift_rank(k, *ordered ? (by[r]->t0_mono_ms - off[r] - t0) / 1000.0 : 0);
        if (by[r]->seconds > out->seconds)
            out->seconds = by[r]->seconds;
        if (!out->repro[0])
            snprintf(out->repro, sizeof(out->repro), "%s", by[r]->repro);
        if (ev[r].first_fault_mono_ms < 0)
            continue;
        if (!*ordered) /* without a common clock a fault anywhere counts as before everything */
            ev[r].first_fault_mono_ms = 0;
        else if (placed) /* on rank 0's clock, as early as the fault's and the error's doubt allow
                          */
            ev[r].first_fault_mono_ms -= off[r] + 2 * doubt;
    }
    rg_evidence_apply(out, sc, ev, 0, sc->ranks, *ordered ? t0 : 0, RG_EV_CROSS);
    rg_judge(out);
    return 0;
}

static bool is_rank_result(const char *name, int *rank)
{
    char tail[32];
    return sscanf(name, "rank%d.result%31s", rank, tail) == 2 && !strcmp(tail, ".json");
}

int rg_report_main(int argc, char **argv)
{
    static rg_result views[RG_MAX_RANKS], merged;
    static rg_evidence ev[RG_MAX_RANKS];
    static rg_scenario sc;
    char err[1024], path[PATH_MAX + 64];
    int n = 0;
    bool ordered;

    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: railguard report DIR   (DIR: one external launch's <out>/<name>, "
                        "holding every rank's rankR.result.json)\n");
        return 2;
    }
    const char *dir = argv[1];
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "railguard report: %s: %s\n", dir, strerror(errno));
        return 2;
    }
    for (struct dirent *e; (e = readdir(d));) {
        int r;
        if (!is_rank_result(e->d_name, &r))
            continue;
        if (n == RG_MAX_RANKS) {
            closedir(d);
            fprintf(stderr, "railguard report: %s: more than %d rank results\n", dir, RG_MAX_RANKS);
            return 2;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (rg_result_read(&views[n], path, err, sizeof(err)) != 0) {
            closedir(d);
            fprintf(stderr, "railguard report: %s\n", err);
            return 2;
        }
        if (views[n].self_rank != r) {
            closedir(d);
            fprintf(stderr, "railguard report: %s: says it is rank %d\n", path, views[n].self_rank);
            return 2;
        }
        n++;
    }
    closedir(d);
    /* No rank results but a report.json: a run's directory (an external launch's holds rank
     * results, and a report.json too once merged). Its traces and page are written again. */
    snprintf(path, sizeof(path), "%s/report.json", dir);
    if (!n && access(path, R_OK) == 0)
        return rg_report_run_dir(dir);
    if (!n) {
        fprintf(stderr,
                "railguard report: %s: no rankR.result.json (an external launch's "
                "--out DIR/<scenario name> holds them)\n",
                dir);
        return 2;
    }
    for (int i = 1; i < n; i++) {
        if (strcmp(views[i].path, views[0].path) != 0) {
            fprintf(stderr, "railguard report: %s: results of two scenarios (%s, %s)\n", dir,
                    views[0].path, views[i].path);
            return 2;
        }
    }
    if (rg_scenario_load(views[0].path, &sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard report: the scenario the ranks ran: %s\n", err);
        return 2;
    }
    for (int r = 0; r < sc.ranks; r++) {
        snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", dir, r);
        if (rg_evidence_read(path, &ev[r], err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard report: %s\n", err);
            return 2;
        }
    }
    if (rg_merge(&merged, &sc, views, n, ev, &ordered, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard report: %s\n", err);
        return 2;
    }
    if (merged.clock_placed)
        printf("railguard report: the ranks ran on several hosts: their times are placed on rank "
               "0's clock by offsets measured at the start, within +-%.3f ms\n",
               merged.clock_err_ms);
    for (int r = 0; !ordered && r < n; r++)
        if (!views[r].rank[0].clock.measured)
            printf("railguard report: rank %d's clock was not measured: %s\n", views[r].self_rank,
                   views[r].rank[0].clock.why[0] ? views[r].rank[0].clock.why
                                                 : "its runner predates the clock exchange");
    if (!ordered)
        printf("railguard report: the ranks ran on several hosts with no common clock: a fault "
               "on any rank counts as before every error\n");
    rg_report_line(stdout, &merged);
    snprintf(path, sizeof(path), "%s/result.json", dir);
    if (rg_result_save(&merged, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    snprintf(path, sizeof(path), "%s/report.json", dir);
    if (rg_report_json(&merged, 1, merged.seconds, NULL, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    snprintf(path, sizeof(path), "%s/junit.xml", dir);
    if (rg_report_junit(&merged, 1, merged.seconds, NULL, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    /* The timeline needs one clock: ranks on one host share CLOCK_MONOTONIC, ranks on several
     * are placed by their measured offsets; without those, no trace rather than a wrong one. */
    snprintf(merged.dir, sizeof(merged.dir), "%s", dir);
    snprintf(path, sizeof(path), "%s/trace.json", dir);
    if (ordered && rg_trace_write(&merged, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    /* The launch's page, beside its files: its timeline needs the same one clock. */
    snprintf(path, sizeof(path), "%s/index.html", dir);
    if (ordered && rg_html_write(&merged, 1, merged.seconds, NULL, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    else if (!ordered)
        printf("railguard report: no trace.json or index.html: the ranks' clocks are not one "
               "clock\n");
    rg_report_table(stdout, &merged, 1, merged.seconds);
    return merged.passed ? 0 : 1;
}
