/* SPDX-License-Identifier: MIT */
/* Each failure of a comparison decided from its counts on both sides (rg_compare.h's rule). */
#include "rg_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *rg_cmp_state_name(rg_cmp_state s)
{
    static const char *const names[RG_CMP_STATES] = {
        [RG_CMP_FIXED] = "fixed",
        [RG_CMP_INTRODUCED] = "introduced",
        [RG_CMP_STILL] = "still failing",
        [RG_CMP_NOT_SETTLED] = "not settled",
    };
    return (unsigned)s < RG_CMP_STATES ? names[s] : "?";
}

int rg_cmp_runs_needed(double p, double confidence)
{
    if (!(p > 0) || !(confidence > 0 && confidence < 1))
        return -1;
    if (p >= 1)
        return 1;
    /* (1-p)^m <= 1 - confidence; counted up, not by a logarithm's rounding, so that the m
     * returned is the least one for which the same pow() the decision uses holds. */
    int m = (int)floor(log(1 - confidence) / log(1 - p));
    if (m < 1)
        m = 1;
    while (m > 1 && pow(1 - p, m - 1) <= 1 - confidence)
        m--;
    while (pow(1 - p, m) > 1 - confidence && m < 1000000)
        m++;
    return m;
}

int rg_cmp_runs_needed_seen(int k, int n, double confidence)
{
    if (k < 1 || n < k || !(confidence > 0 && confidence < 1))
        return -1;
    /* The chance the failure stays away from m runs, over the rates k of n leave possible:
     * E[(1-p)^m] under Beta(k+1, n-k+1), a product that grows by one factor a run. It tends to
     * 0 for any k >= 1, so the loop ends; bounded all the same. */
    double miss = 1;
    for (int m = 1; m <= 1000000; m++) {
        miss *= (double)(n - k + m) / (double)(n + 1 + m);
        if (miss <= 1 - confidence)
            return m;
    }
    return -1;
}

rg_cmp_state rg_cmp_decide(const int k[RG_CMP_SIDES], const int n[RG_CMP_SIDES], double confidence,
                           int *more, int *more_side)
{
    *more = 0;
    *more_side = RG_CMP_HEAD;
    for (int s = 0; s < RG_CMP_SIDES; s++)
        if (k[s] < 0 || n[s] < 0 || k[s] > n[s])
            return RG_CMP_NOT_SETTLED;
    if (k[RG_CMP_BASE] && k[RG_CMP_HEAD])
        return RG_CMP_STILL;
    if (!k[RG_CMP_BASE] && !k[RG_CMP_HEAD])
        return RG_CMP_NOT_SETTLED; /* no failure on either side: nothing to say of it */
    /* Shown on one side (`shown`), absent from the other's (`quiet`) runs. */
    int shown = k[RG_CMP_BASE] ? RG_CMP_BASE : RG_CMP_HEAD, quiet = RG_CMP_SIDES - 1 - shown;
    int need = rg_cmp_runs_needed_seen(k[shown], n[shown], confidence);
    *more_side = quiet;
    if (need > 0 && n[quiet] >= need)
        return shown == RG_CMP_BASE ? RG_CMP_FIXED : RG_CMP_INTRODUCED;
    *more = need > 0 ? need - n[quiet] : 0;
    return RG_CMP_NOT_SETTLED;
}

static int by_state(const void *a, const void *b)
{
    const rg_cmp_item *x = a, *y = b;
    if (x->state != y->state)
        return (int)x->state - (int)y->state;
    for (int s = RG_CMP_SIDES - 1; s >= 0; s--)
        if (x->k[s] != y->k[s])
            return y->k[s] - x->k[s];
    return strcmp(x->key, y->key);
}

void rg_cmp_decide_all(rg_compare *c)
{
    memset(c->by, 0, sizeof(c->by));
    for (int i = 0; i < c->nitems; i++) {
        rg_cmp_item *it = &c->items[i];
        for (int s = 0; s < RG_CMP_SIDES; s++) {
            /* The runs it could have shown in: those that passed, those that failed only at
             * the end when it is a step's failure, and its own. */
            it->n[s] = it->k[s];
            it->ran[s] = 0;
            for (int j = 0; j < it->nseen; j++) {
                const rg_cmp_scenario *sc = &c->sc[it->seen[j]];
                it->ran[s] += sc->runs[s];
                it->n[s] += sc->runs[s] - sc->failed[s] + (it->at_end ? 0 : sc->failed_at_end[s]);
                /* Failed otherwise, its cause proven absent from every step up to one past
                 * the step it fails in (within one step, the other failure may have come
                 * first); those failed only at the end were counted above for a step's. */
                for (int q = 0; it->kind != RG_C_NONE && q < sc->nruled; q++) {
                    const struct rg_cmp_ruled *ru = &sc->ruled[q];
                    if (ru->side == s && (ru->causes & (1u << it->kind)) &&
                        ru->reach > it->seen_step[j] && (it->at_end || !ru->at_end))
                        it->n[s]++;
                }
            }
            /* A step's failure of its own counted in failed_at_end cannot be (it is not at the
             * end), and its own at the end were taken out with failed: k added them back. */
            if (it->n[s] > it->ran[s])
                it->n[s] = it->ran[s];
        }
        it->state = rg_cmp_decide(it->k, it->n, c->confidence, &it->more, &it->more_side);
        c->by[it->state]++;
    }
    if (c->nitems > 1)
        qsort(c->items, (size_t)c->nitems, sizeof(c->items[0]), by_state);
}

void rg_cmp_free(rg_compare *c)
{
    for (int i = 0; i < c->nitems; i++) {
        free(c->items[i].seen);
        free(c->items[i].seen_step);
    }
    for (int i = 0; i < c->nsc; i++)
        free(c->sc[i].ruled);
    free(c->sc);
    free(c->items);
    c->sc = NULL;
    c->items = NULL;
    c->nsc = c->nitems = 0;
}

int rg_cmp_rerun_list(const rg_compare *c, int side, int max_runs, int **idx)
{
    *idx = NULL;
    if (!c->nsc)
        return 0;
    int n = 0, *out = calloc((size_t)c->nsc, sizeof(int));
    char *want = calloc((size_t)c->nsc, 1);
    if (!out || !want) {
        free(out);
        free(want);
        return -1;
    }
    for (int i = 0; i < c->nitems; i++) {
        const rg_cmp_item *it = &c->items[i];
        if (it->state != RG_CMP_NOT_SETTLED || it->more <= 0 || it->more_side != side)
            continue;
        /* A scenario that never ran on that side (not in its suite, or skipped there) will not
         * run on a re-run either: only those it ran, and fewer than max_runs times. */
        for (int j = 0; j < it->nseen; j++) {
            const rg_cmp_scenario *s = &c->sc[it->seen[j]];
            if (s->runs[side] > 0 && s->runs[side] < max_runs && s->path[0])
                want[it->seen[j]] = 1;
        }
    }
    for (int i = 0; i < c->nsc; i++)
        if (want[i])
            out[n++] = i;
    free(want);
    if (!n)
        free(out);
    else
        *idx = out;
    return n;
}
