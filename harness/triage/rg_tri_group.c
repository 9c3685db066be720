/* SPDX-License-Identifier: MIT */
/*
 * A run directory's results read back, and its failures grouped by signature (rg_triage.h).
 * A result that cannot be read is counted and named, never skipped in silence: a triage that
 * lost a failure would report fewer bugs than the run had.
 */
#include "judge/rg_judge.h"
#include "triage/rg_triage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void note_unread(rg_tri_run *run, const char *why)
{
    if (run->nunread < (int)(sizeof(run->unread) / sizeof(run->unread[0])))
        rg_cut(run->unread[run->nunread], sizeof(run->unread[0]), why);
    run->nunread++;
}

/* A run from before the runner named hung ranks' frames is named here, so that its signatures
 * are the ones a new run of the same bug gets (launch/rg_symbolize.c). What cannot be named is
 * said, and the raw frames stand. */
static void name_hung(rg_tri_run *run, const rg_result *r)
{
    for (int i = 0; i < r->ranks; i++) {
        if (rg_rank_judged(r, i) != RG_V_DEADLOCK)
            continue;
        char path[1200], why[700], note[2000];
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", r->dir, i);
        if (rg_bt_symbolize(path, why, sizeof(why)) != 0) {
            snprintf(note, sizeof(note), "%s: not every frame named: %s", path,
                     why[0] ? why : "cannot append to it");
            note_unread(run, note);
        }
    }
}

int rg_tri_load(const char *dir, rg_tri_run *run, char *err, size_t errlen)
{
    return rg_tri_load_runs(&dir, 1, run, err, errlen);
}

int rg_tri_load_runs(const char *const *dirs, int ndirs, rg_tri_run *run, char *err, size_t errlen)
{
    char **names[RG_TRI_RUNS_MAX] = {0};
    int count[RG_TRI_RUNS_MAX] = {0}, total = 0, rc = -1;
    memset(run, 0, sizeof(*run));
    if (ndirs < 1 || ndirs > RG_TRI_RUNS_MAX) {
        snprintf(err, errlen, "%d run directories: 1 to %d", ndirs, RG_TRI_RUNS_MAX);
        return -1;
    }
    snprintf(run->dir, sizeof(run->dir), "%s", dirs[0]);
    run->nruns = ndirs;
    for (int d = 0; d < ndirs; d++) {
        count[d] = rg_result_dir_names(dirs[d], &names[d]);
        if (count[d] < 0) {
            snprintf(err, errlen, "%s: %s", dirs[d], strerror(errno));
            count[d] = 0;
            goto out;
        }
        total += count[d];
    }
    /* Every run's results in one array, allocated once: the cases point into it. */
    run->results = calloc((size_t)(total ? total : 1), sizeof(rg_result));
    run->cases = calloc((size_t)(total ? total : 1), sizeof(rg_tri_case));
    if (!run->results || !run->cases) {
        snprintf(err, errlen, "%s: no memory for %d results", dirs[0], total);
        goto out;
    }
    for (int d = 0; d < ndirs; d++)
        for (int i = 0; i < count[d]; i++) {
            char path[2200], why[2400];
            rg_result *r = &run->results[run->nresults];
            snprintf(path, sizeof(path), "%s/%s/result.json", dirs[d], names[d][i]);
            if (rg_result_read(r, path, why, sizeof(why)) != 0) {
                note_unread(run, why);
                continue;
            }
            /* Where it is now: a run's directory moves (a CI artifact, a copy). */
            snprintf(r->dir, sizeof(r->dir), "%s/%s", dirs[d], names[d][i]);
            rg_judge(r);
            run->nresults++;
            if (r->too_slow)
                run->nslow++;
            else if (r->known_state == RG_KNOWN_XPASS)
                run->nxpass++;
            else if (!r->passed) {
                rg_tri_case *c = &run->cases[run->nfail++];
                c->res = r;
                name_hung(run, r);
                rg_signature(r, &c->sig);
            }
        }
    rc = 0;
out:
    for (int d = 0; d < ndirs; d++) {
        for (int i = 0; i < count[d]; i++)
            free(names[d][i]);
        free(names[d]);
    }
    return rc;
}

/* A title a maintainer can read in a list: the first failure, where, and how the rest took it. */
static void title_of(const rg_sig *s, char *out, size_t len)
{
    char algo[64] = "", at[128] = "", faults[112] = "", rest[176] = "";
    if (s->algo[0])
        snprintf(algo, sizeof(algo), " (%s)", s->algo);
    if (s->nframes)
        snprintf(at, sizeof(at), ", waiting in %s%s", s->frames[0], s->nframes > 1 ? " ..." : "");
    if (s->faults[0])
        snprintf(faults, sizeof(faults), " under %s", s->faults);
    if (s->others[0])
        snprintf(rest, sizeof(rest), "; the others %s", s->others);
    snprintf(out, len, "%s%s%s in %s%s%s%s%s", s->first, s->cls[0] ? " " : "", s->cls, s->op, algo,
             at, faults, rest);
}

static void slug_of(const rg_sig *s, char *out, size_t len)
{
    char raw[160];
    size_t k = 0;
    snprintf(raw, sizeof(raw), "%s-%s%s%s", s->first, s->op, s->cls[0] ? "-" : "", s->cls);
    for (const char *p = raw; *p && k + 1 < len; p++) {
        char ch = *p;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        bool word = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (word)
            out[k++] = ch;
        else if (k && out[k - 1] != '-')
            out[k++] = '-';
    }
    while (k && out[k - 1] == '-')
        k--;
    out[k] = '\0';
}

/* The representative: the fewest ranks, then the shortest run, then the first by name. */
static bool better(const rg_result *a, const rg_result *b)
{
    if (a->ranks != b->ranks)
        return a->ranks < b->ranks;
    return a->seconds < b->seconds;
}

static int cmp_group(const void *a, const void *b)
{
    const rg_tri_group *x = a, *y = b;
    if (x->ncases != y->ncases)
        return y->ncases - x->ncases;
    return strcmp(x->sig.key, y->sig.key);
}

int rg_tri_group_cases(rg_tri_run *run)
{
    run->groups = calloc((size_t)(run->nfail ? run->nfail : 1), sizeof(rg_tri_group));
    if (!run->groups)
        return -1;
    for (int i = 0; i < run->nfail; i++) {
        const rg_sig *s = &run->cases[i].sig;
        int g = 0;
        while (g < run->ngroups && strcmp(run->groups[g].sig.key, s->key) != 0)
            g++;
        rg_tri_group *gr = &run->groups[g];
        if (g == run->ngroups) {
            run->ngroups++;
            gr->sig = *s;
            gr->rep = i;
            gr->cases = calloc((size_t)run->nfail, sizeof(int));
            if (!gr->cases)
                return -1;
            title_of(s, gr->title, sizeof(gr->title));
            slug_of(s, gr->slug, sizeof(gr->slug));
        }
        gr->cases[gr->ncases++] = i;
        if (better(run->cases[i].res, run->cases[gr->rep].res))
            gr->rep = i;
    }
    qsort(run->groups, (size_t)run->ngroups, sizeof(rg_tri_group), cmp_group);
    for (int g = 0; g < run->ngroups; g++)
        rg_tri_diagnose_also(run->cases[run->groups[g].rep].res, &run->groups[g].sig,
                             &run->groups[g].cause, run->groups[g].also_causes,
                             sizeof(run->groups[g].also_causes));
    return 0;
}

void rg_tri_group_drop(rg_tri_run *run, int g)
{
    free(run->groups[g].cases);
    memmove(&run->groups[g], &run->groups[g + 1],
            sizeof(run->groups[0]) * (size_t)(run->ngroups - g - 1));
    run->ngroups--;
}

void rg_tri_free(rg_tri_run *run)
{
    for (int g = 0; g < run->ngroups; g++)
        free(run->groups[g].cases);
    free(run->groups);
    free(run->cases);
    free(run->results);
    memset(run, 0, sizeof(*run));
}
