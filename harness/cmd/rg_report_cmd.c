/* SPDX-License-Identifier: MIT */
/*
 * `railguard report DIR`: an external launch's ranks judged as a whole (judge/rg_merge.c), or
 * a run's directory's pages written again (report/rg_html.c).
 */
#include "cmd/rg_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_rank_result(const char *name, int *rank)
{
    char tail[32];
    return sscanf(name, "rank%d.result%31s", rank, tail) == 2 && !strcmp(tail, ".json");
}

const rg_cli rg_report_cli = {
    .cmd = "report",
    .synopsis = "DIR",
    .about =
        "Judges an external launch's ranks together: DIR is one launch's <out>/<name>, holding "
        "every "
        "rank's rankR.result.json and events; the rules that look across ranks (the first failure "
        "in time, detected only after a fault, every planned fault fired somewhere) are applied to "
        "all of them, and the reports written there. On a run's --out directory it writes every "
        "scenario's trace.json and the run's index.html again.",
};

/* Every rankR.result.json in dir into views: their number, or -1 after one line. */
static int read_views(const char *dir, rg_result *views)
{
    char err[PATH_MAX + 1200], path[PATH_MAX + 64];
    int n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "railguard report: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    for (struct dirent *e; (e = readdir(d));) {
        int r;
        if (!is_rank_result(e->d_name, &r))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (n == RG_MAX_RANKS)
            snprintf(err, sizeof(err), "%s: more than %d rank results", dir, RG_MAX_RANKS);
        else if (rg_result_read(&views[n], path, err, sizeof(err)) != 0)
            ; /* err says why */
        else if (views[n].self_rank != r)
            snprintf(err, sizeof(err), "%s: says it is rank %d", path, views[n].self_rank);
        else {
            n++;
            continue;
        }
        closedir(d);
        fprintf(stderr, "railguard report: %s\n", err);
        return -1;
    }
    closedir(d);
    return n;
}

/* The views merged into one judged result, with what the clocks allow said. 0, or -1. */
static int merge_views(const char *dir, const rg_result *views, int n, rg_result *merged,
                       bool *ordered)
{
    static rg_scenario sc;
    char err[1024];
    int rc = -1;
    for (int i = 1; i < n; i++) {
        if (strcmp(views[i].path, views[0].path) != 0) {
            fprintf(stderr, "railguard report: %s: results of two scenarios (%s, %s)\n", dir,
                    views[0].path, views[i].path);
            return -1;
        }
    }
    if (rg_scenario_load(views[0].path, &sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard report: the scenario the ranks ran: %s\n", err);
        return -1;
    }
    /* 6 MB: on the heap, as every large table here (.bss is read whole by a leak check). */
    rg_evidence *ev = calloc(RG_MAX_RANKS, sizeof(*ev));
    if (!ev) {
        fprintf(stderr, "railguard report: out of memory\n");
        return -1;
    }
    for (int r = 0; r < sc.ranks; r++) {
        if (rg_evidence_read_rank(dir, r, &ev[r], err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard report: %s\n", err);
            goto out;
        }
    }
    if (rg_merge(merged, &sc, views, n, ev, ordered, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard report: %s\n", err);
        goto out;
    }
    rc = 0;
out:
    free(ev);
    if (rc)
        return rc;
    if (merged->clock_placed)
        printf("railguard report: the ranks ran on several hosts: their times are placed on rank "
               "0's clock by offsets measured at the start, within +-%.3f ms\n",
               merged->clock_err_ms);
    for (int r = 0; !*ordered && r < n; r++)
        if (!views[r].rank[0].clock.measured)
            printf("railguard report: rank %d's clock was not measured: %s\n", views[r].self_rank,
                   views[r].rank[0].clock.why[0] ? views[r].rank[0].clock.why
                                                 : "its runner predates the clock exchange");
    if (!*ordered)
        printf("railguard report: the ranks ran on several hosts with no common clock: a fault "
               "on any rank counts as before every error\n");
    return 0;
}

/* The merged result's files in dir: result.json, report.json, junit.xml, and with one clock
 * trace.json and index.html (without one, no trace rather than a wrong one). */
static void write_merged(const char *dir, rg_result *merged, bool ordered)
{
    char err[1024], path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/result.json", dir);
    if (rg_result_save(merged, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    snprintf(path, sizeof(path), "%s/report.json", dir);
    if (rg_report_json(merged, 1, merged->seconds, NULL, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    snprintf(path, sizeof(path), "%s/junit.xml", dir);
    if (rg_report_junit(merged, 1, merged->seconds, NULL, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    snprintf(merged->dir, sizeof(merged->dir), "%s", dir);
    snprintf(path, sizeof(path), "%s/trace.json", dir);
    if (ordered && rg_trace_write(merged, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    snprintf(path, sizeof(path), "%s/index.html", dir);
    if (ordered && rg_html_write(merged, 1, merged->seconds, NULL, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard report: %s\n", err);
    else if (!ordered)
        printf("railguard report: no trace.json or index.html: the ranks' clocks are not one "
               "clock\n");
}

/* A launch's rank views judged together: its line, its files, its table; 0 passed, 1 failed, 2
 * when they cannot be merged (said). */
static int launch_judged(const char *dir, const rg_result *views, int n)
{
    static rg_result merged;
    bool ordered;
    if (merge_views(dir, views, n, &merged, &ordered) != 0)
        return 2;
    rg_report_line(stdout, &merged);
    write_merged(dir, &merged, ordered);
    rg_report_table(stdout, &merged, 1, merged.seconds);
    return merged.passed ? 0 : 1;
}

/* Every rank's view: 22 MB, so the heap's. NULL after one line. */
static rg_result *views_alloc(void)
{
    rg_result *views = calloc(RG_MAX_RANKS, sizeof(*views));
    if (!views)
        fprintf(stderr, "railguard report: out of memory\n");
    return views;
}

int rg_report_main(int argc, char **argv)
{
    char path[PATH_MAX + 64];
    int first, rc = rg_cli_parse(&rg_report_cli, argc, argv, NULL, &first);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (first != argc - 1) {
        fprintf(stderr, "railguard report: %s\n",
                first >= argc ? "no DIR: name one run's or one external launch's directory"
                              : "one DIR, not several");
        return 2;
    }
    const char *dir = argv[first];
    rg_result *views = views_alloc();
    if (!views)
        return 2;
    int n = read_views(dir, views);
    rc = 2;
    if (n < 0)
        goto out;
    /* No rank results but a report.json: a run's directory (an external launch's holds rank
     * results, and a report.json too once merged). Its traces and page are written again. */
    snprintf(path, sizeof(path), "%s/report.json", dir);
    if (!n && access(path, R_OK) == 0) {
        rc = rg_report_run_dir(dir);
        goto out;
    }
    if (!n) {
        fprintf(stderr,
                "railguard report: %s: no rankR.result.json (an external launch's "
                "--out DIR/<scenario name> holds them)\n",
                dir);
        goto out;
    }
    rc = launch_judged(dir, views, n);
out:
    free(views);
    return rc;
}

int rg_report_launch(const char *dir)
{
    rg_result *views = views_alloc();
    if (!views)
        return 2;
    int n = read_views(dir, views), rc = 2;
    if (n <= 0) {
        if (!n)
            fprintf(stderr, "railguard report: %s: no rankR.result.json\n", dir);
    } else {
        rc = launch_judged(dir, views, n);
    }
    free(views);
    return rc;
}
