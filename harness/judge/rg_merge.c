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
#include "judge/rg_judge.h"

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
    out->nksig = sc->nksig;
    memcpy(out->ksig, sc->ksig, sizeof(out->ksig[0]) * (size_t)sc->nksig);
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
