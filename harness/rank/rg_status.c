/* SPDX-License-Identifier: MIT */
/*
 * The worker's status lines read back (rg_worker.c writes them on its status pipe): each is
 * "<CLOCK_MONOTONIC ms> WORD ...", one of
 *   ready                               loaded, waiting for the runner's go
 *   step S R LABEL                      step S, repetition R (-1: init) began
 *   status ST | status v1               the failed call's status, before its verdict
 *   calls ring/2:3 mesh/1:2             what the transport said its calls ran
 *   leak TEXT | notfailstop TEXT        findings that do not end the rank
 *   sockets N                           sockets the transport held once init returned
 *   unsupported S R LABEL: WHY          a step skipped, the rank goes on
 *   verdict ok | detected S R TEXT | corrupt S R TEXT | unsupported S R TEXT | error TEXT
 * Writer and reader live in this sub-part, so the grammar has one owner. A line that is none
 * of these is not ours (a transport's own output on the pipe): it is left alone.
 */
#include "rank/rg_rank.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Seconds from t0 (CLOCK_MONOTONIC ms) to a rank's stamp, which the worker took on that clock. */
static double since(double t0_ms, double at_ms)
{
    return (at_ms - t0_ms) / 1000.0;
}

void rg_status_take(rg_rank_result *k, rg_status_said *said, char *line, double t0_ms)
{
    int step, rep, off = 0;
    double at;
    if (sscanf(line, "%lf %n", &at, &off) != 1 || off <= 0)
        return; /* not ours */
    line += off;
    said->lines++;
    double t = since(t0_ms, at);
    if (sscanf(line, "step %d %d %n", &step, &rep, &off) == 2 && off > 0) {
        k->step = step;
        k->rep = rep;
        k->step_t_s = t;
        snprintf(k->where, sizeof(k->where), "%s", line + off);
        said->steps++;
        return;
    }
    if (!strcmp(line, "ready")) {
        said->ready = true;
        return;
    }
    if (!strncmp(line, "leak ", 5)) {
        rg_rank_find(k, RG_V_LEAK, t, "%s", line + 5);
        return;
    }
    if (!strncmp(line, "notfailstop ", 12)) {
        rg_rank_find(k, RG_V_NOT_FAIL_STOP, t, "%s", line + 12);
        return;
    }
    if (!strncmp(line, "unsupported ", 12)) {
        /* "unsupported STEP REP LABEL: why": a step skipped, the rank goes on. */
        int o2 = 0;
        const char *u = line + 12;
        if (sscanf(u, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0)
            u += o2;
        rg_rank_find(k, RG_V_UNSUPPORTED, t, "not run: %s", u);
        return;
    }
    if (!strncmp(line, "status ", 7)) {
        /* The failed call's status, before its verdict: "status -8", or "status v1". */
        long st = 0;
        char *end;
        if (!strcmp(line + 7, "v1"))
            k->status = RG_STATUS_V1;
        else if ((st = strtol(line + 7, &end, 10)) < 0 && st > -RG_SC_CLASS_BITS && !*end)
            k->status = (int)st;
        return;
    }
    if (!strncmp(line, "sockets ", 8)) {
        /* The most any init left open (a create in mid-program counts again). */
        char *end;
        long n = strtol(line + 8, &end, 10);
        if (!*end && end != line + 8 && n >= 0 && n < 65536) {
            k->sockets = k->sockets_known && k->sockets > n ? k->sockets : (int)n;
            k->sockets_known = true;
        }
        return;
    }
    if (!strncmp(line, "calls ", 6)) {
        snprintf(k->calls, sizeof(k->calls), "%s", line + 6);
        return;
    }
    if (strncmp(line, "verdict ", 8) != 0)
        return;
    const char *v = line + 8;
    said->verdict = true;
    if (!strcmp(v, "ok")) {
        rg_rank_find(k, RG_V_OK, t, "%s", "");
    } else if (!strncmp(v, "detected ", 9) || !strncmp(v, "corrupt ", 8)) {
        bool det = v[0] == 'd';
        int o2 = 0;
        v += det ? 9 : 8;
        if (sscanf(v, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0) {
            k->step = step;
            k->rep = rep;
            v += o2;
        }
        rg_rank_find(k, det ? RG_V_DETECTED : RG_V_SILENT_CORRUPTION, t, "%s", v);
    } else if (!strncmp(v, "unsupported ", 12)) {
        int o2 = 0;
        v += 12;
        if (sscanf(v, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0)
            v += o2;
        rg_rank_find(k, RG_V_UNSUPPORTED, t, "not run: %s", v);
    } else if (!strncmp(v, "error ", 6)) {
        said->error = true;
        rg_rank_find(k, RG_V_ERROR, t, "%s", v + 6);
    }
}

void rg_status_say(int fd, const char *fmt, va_list ap)
{
    char at[48];
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(at, sizeof(at), "%.3f ", (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
    rg_say_line(fd, at, fmt, ap);
}
