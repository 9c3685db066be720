/* SPDX-License-Identifier: MIT */
/*
 * Groups merged after minimising (rg_triage.h). A signature keeps the faults that fired, so a
 * transport that fails the same way with and without them -- a deadlock in its data path that
 * every fault scenario runs into before its fault matters -- shows as one group per fault.
 * Minimising tries the case without its faults first; when it still fails alike, the fault
 * was not the cause, and groups whose minimal cases now fail with one signature are one bug,
 * as crash de-duplication groups by the minimised test case's crash state.
 */
#include "triage/rg_triage.h"

#include <stdio.h>
#include <string.h>

/* The groups' minimal files under their new numbers, and their reproduce lines with them. */
int rg_tri_renumber(rg_tri_run *run, char *err, size_t errlen)
{
    for (int g = 0; g < run->ngroups; g++) {
        rg_tri_group *gr = &run->groups[g];
        char want[1200];
        if (!gr->min.path[0])
            continue;
        snprintf(want, sizeof(want), "%s/triage/%02d-%s.min.yaml", run->dir, g + 1, gr->slug);
        if (!strcmp(want, gr->min.path))
            continue;
        if (rename(gr->min.path, want) != 0) {
            snprintf(err, errlen, "%s: cannot rename it to %s", gr->min.path, want);
            return -1;
        }
        snprintf(gr->min.path, sizeof(gr->min.path), "%s", want);
        rg_tri_min_repro(run->cases[gr->rep].res->repro, gr->min.path, gr->min.repro,
                         sizeof(gr->min.repro));
    }
    return 0;
}

int rg_tri_absorb(rg_tri_run *run, int a, int b, char *note, size_t notelen, char *err,
                  size_t errlen)
{
    rg_tri_group *ga = &run->groups[a], *gb = &run->groups[b];
    /* b's own minimal file is kept beside the candidates, named in the note, under the name it
     * was written with: its number then is unique, its slug is not. */
    char kept[1300] = "";
    if (gb->min.path[0]) {
        const char *base = strrchr(gb->min.path, '/');
        snprintf(kept, sizeof(kept), "%.1000s/triage/min/%.200s", run->dir,
                 base ? base + 1 : gb->min.path);
        if (rename(gb->min.path, kept) != 0) {
            snprintf(err, errlen, "%s: cannot rename it to %s", gb->min.path, kept);
            return -1;
        }
    }
    size_t used = strlen(note);
    snprintf(note + used, notelen - used, "%s\"%s\" (%d scenario(s)%s%s)", used ? "; " : "",
             gb->title, gb->ncases, kept[0] ? ", its minimal case " : "",
             kept[0] ? kept + strlen(run->dir) + 1 : "");
    for (int c = 0; c < gb->ncases && ga->ncases < run->nfail; c++)
        ga->cases[ga->ncases++] = gb->cases[c];
    /* Every face it shows under: b's own signature and those it had taken in. */
    for (int i = -1; i < gb->nalso; i++) {
        const rg_sig *s = i < 0 ? &gb->sig : &gb->also[i];
        bool have = !strcmp(s->key, ga->sig.key);
        for (int j = 0; !have && j < ga->nalso; j++)
            have = !strcmp(s->key, ga->also[j].key);
        if (have)
            continue;
        if (ga->nalso < RG_TRI_SIGS)
            ga->also[ga->nalso++] = *s;
        else
            ga->also_over++;
    }
    ga->also_over += gb->also_over;
    rg_tri_group_drop(run, b);
    return 0;
}

int rg_tri_merge(rg_tri_run *run, char *err, size_t errlen)
{
    int merged = 0;
    for (int a = 0; a < run->ngroups; a++) {
        rg_tri_group *ga = &run->groups[a];
        for (int b = a + 1; b < run->ngroups;) {
            rg_tri_group *gb = &run->groups[b];
            if (!ga->min.sig.key[0] || strcmp(ga->min.sig.key, gb->min.sig.key) != 0) {
                b++;
                continue;
            }
            if (rg_tri_absorb(run, a, b, ga->merged, sizeof(ga->merged), err, errlen) != 0)
                return -1;
            merged++;
        }
    }
    return rg_tri_renumber(run, err, errlen) != 0 ? -1 : merged;
}
