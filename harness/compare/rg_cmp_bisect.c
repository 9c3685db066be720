/* SPDX-License-Identifier: MIT */
/*
 * One commit of a transport's history judged for `git bisect run` (rg_compare.h): its runs, read
 * as a comparison's head side, say bad when the bug showed in any, good when it stayed away
 * from enough clean runs that at its rate it would have shown, and else how many more runs
 * would tell. A run that failed otherwise is not clean: another failure can hide the bug (a
 * hang before the step that would meet it), so it counts neither way.
 */
#include "rg_compare.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static bool is_the_bug(const rg_cmp_item *it, const char *bug)
{
    if (!bug[0])
        return strcmp(it->verdict, "NOT_EXERCISED") != 0;
    return !strcmp(it->key, bug) || (it->cause[0] && !strcmp(it->cause, bug));
}

void rg_cmp_bisect(const rg_compare *c, const char *bug, const rg_bisect_rate *rate,
                   double confidence, rg_bisect_says *says)
{
    const int h = RG_CMP_HEAD;
    memset(says, 0, sizeof(*says));
    /* A failed run counts under each cause it proves (and its signature), so items overlap:
     * the runs the bug showed in are at least its largest item's, and the others are the
     * failed runs less those. */
    int failed = 0, idle = 0;
    for (int i = 0; i < c->nsc; i++)
        failed += c->sc[i].failed[h];
    for (int i = 0; i < c->nitems; i++) {
        const rg_cmp_item *it = &c->items[i];
        if (!it->k[h])
            continue;
        bool bug_here = is_the_bug(it, bug);
        /* The line shown: the bug's first, else the first other failure's. */
        if ((bug_here && !says->shown) || !says->first[0])
            snprintf(says->first, sizeof(says->first), "%s", it->example[h]);
        if (bug_here && it->k[h] > says->shown)
            says->shown = it->k[h];
        if (!bug_here && !bug[0])
            idle += it->k[h]; /* a fault that never fired: by signature alone, no overlap */
    }
    if (!bug[0])
        says->shown = failed - idle; /* every failed run but those */
    says->other = failed - says->shown;
    says->need = rate->n > 0 ? rg_cmp_runs_needed_seen(rate->k, rate->n, confidence)
                             : rg_cmp_runs_needed(rate->p, confidence);
    if (says->shown) {
        says->state = RG_BISECT_BAD;
        return;
    }
    int clean = INT_MAX, judged = 0;
    for (int i = 0; i < c->nsc; i++) {
        const rg_cmp_scenario *s = &c->sc[i];
        if (!s->runs[h])
            continue;
        judged++;
        int k = s->runs[h] - s->failed[h];
        if (k < clean)
            clean = k;
    }
    says->clean = judged ? clean : 0;
    if (says->need < 1) {
        says->state = RG_BISECT_CANNOT;
        return;
    }
    if (judged && says->clean >= says->need) {
        says->state = RG_BISECT_GOOD;
        return;
    }
    says->more = says->need - says->clean;
    says->state = RG_BISECT_MORE;
}
