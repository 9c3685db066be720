/* SPDX-License-Identifier: MIT */
/*
 * A side's run directories read into a comparison: each NNN-name/result.json a run, counted
 * under its scenario's name; each failure (a failed result, or a known one that happened: an
 * xfail is still the failure) under the cause its files prove at a place, else under its
 * signature's key. A result too slow to judge or skipped
 * proves nothing either way and counts apart.
 */
#include "rg_compare.h"
#include "judge/rg_judge.h"
#include "result/rg_result.h"
#include "triage/rg_triage.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Grows *p (n used, *cap held) by one zeroed element of size sz; the new one, or NULL. */
static void *grow(void **p, int n, int *cap, size_t sz)
{
    if (n == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        void *q = realloc(*p, sz * (size_t)nc);
        if (!q)
            return NULL;
        *p = q;
        *cap = nc;
    }
    void *e = (char *)*p + sz * (size_t)n;
    memset(e, 0, sz);
    return e;
}

static int scenario_of(rg_compare *c, const char *name, const char *path)
{
    for (int i = 0; i < c->nsc; i++)
        if (!strcmp(c->sc[i].name, name))
            return i;
    rg_cmp_scenario *s = grow((void **)&c->sc, c->nsc, &c->capsc, sizeof(*s));
    if (!s)
        return -1;
    snprintf(s->name, sizeof(s->name), "%s", name);
    snprintf(s->path, sizeof(s->path), "%s", path);
    return c->nsc++;
}

/* The item of a failure: its proven cause's when it has one (cause not ""), else its
 * signature's. */
static rg_cmp_item *item_of(rg_compare *c, const rg_sig *sig, const char *cause, rg_cause kind)
{
    for (int i = 0; i < c->nitems; i++)
        if (cause[0] ? !strcmp(c->items[i].cause, cause)
                     : !c->items[i].cause[0] && !strcmp(c->items[i].key, sig->key))
            return &c->items[i];
    rg_cmp_item *it = grow((void **)&c->items, c->nitems, &c->capitems, sizeof(*it));
    if (!it)
        return NULL;
    snprintf(it->key, sizeof(it->key), "%s", sig->key);
    snprintf(it->cause, sizeof(it->cause), "%.399s", cause);
    it->kind = cause[0] ? kind : RG_C_NONE;
    snprintf(it->verdict, sizeof(it->verdict), "%s", sig->first);
    snprintf(it->op, sizeof(it->op), "%s", sig->op);
    it->at_end = !strcmp(sig->op, "finalize") || !strcmp(sig->op, "end");
    c->nitems++;
    return it;
}

/* Scenario sc among it's, failed in at step. */
static int note_seen(rg_cmp_item *it, int sc, int step)
{
    for (int j = 0; j < it->nseen; j++)
        if (it->seen[j] == sc) {
            if (step < it->seen_step[j])
                it->seen_step[j] = step;
            return 0;
        }
    int cap = it->capseen;
    int *slot = grow((void **)&it->seen, it->nseen, &cap, sizeof(int));
    if (!slot)
        return -1;
    cap = it->capseen;
    int *at = grow((void **)&it->seen_step, it->nseen, &cap, sizeof(int));
    if (!at)
        return -1;
    it->capseen = cap;
    *slot = sc;
    *at = step;
    it->nseen++;
    return 0;
}

/* The step every rank of r got to: where the run stopped for the rank that got least far. */
static int reach_of(const rg_result *r)
{
    int reach = INT_MAX;
    for (int k = 0; k < r->ranks && k < RG_MAX_RANKS; k++)
        if (r->rank[k].step < reach)
            reach = r->rank[k].step;
    return reach == INT_MAX ? -1 : reach;
}

/* One failed run of scenario sc counted under each of the n causes tc its files prove at a
 * place, else under its signature. 0, or -1 out of memory. */
static int count_failure(rg_compare *c, int side, int sc, const rg_result *r, const rg_sig *sig,
                         const rg_tri_cause *tc, int n)
{
    char keys[RG_TRI_CAUSES_MAX][400];
    rg_cause kinds[RG_TRI_CAUSES_MAX];
    int nkeys = 0;
    bool unplaced = false; /* a cause proven that names no place: known by its signature */
    for (int i = 0; i < n; i++) {
        rg_tri_cause_place_key(&tc[i], keys[nkeys], sizeof(keys[0]));
        bool again = false;
        for (int j = 0; j < nkeys; j++)
            again |= !strcmp(keys[j], keys[nkeys]);
        unplaced |= !keys[nkeys][0];
        if (keys[nkeys][0] && !again)
            kinds[nkeys++] = tc[i].kind;
    }
    if (!nkeys || unplaced) {
        keys[nkeys][0] = '\0'; /* by its signature */
        kinds[nkeys++] = RG_C_NONE;
    }
    for (int i = 0; i < nkeys; i++) {
        rg_cmp_item *it = item_of(c, sig, keys[i], kinds[i]);
        if (!it || note_seen(it, sc, r->rank[sig->origin].step) != 0)
            return -1;
        it->k[side]++;
        if (!it->example[side][0])
            rg_cut(it->example[side], sizeof(it->example[side]), r->first[0] ? r->first : r->why);
    }
    return 0;
}

int rg_cmp_add_dir(rg_compare *c, int side, const char *dir, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a run directory: %s", dir,
                 errno ? strerror(errno) : "not a directory");
        return -1;
    }
    char **names = NULL;
    int n = rg_result_dir_names(dir, &names), rc = 0;
    if (n <= 0) {
        snprintf(err, errlen, "%s: not a run directory: no NNN-name/result.json in it", dir);
        free(names);
        return -1;
    }
    /* One result at a time: each is large (its ranks, rules and known signatures). */
    rg_result *r = malloc(sizeof(*r));
    char path[2400], why[600];
    for (int i = 0; i < n && !rc; i++) {
        snprintf(path, sizeof(path), "%s/%s/result.json", dir, names[i]);
        if (!r || rg_result_read(r, path, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "%s", r ? why : "out of memory");
            rc = -1;
            break;
        }
        c->results[side]++;
        for (int p = 0; p < RG_PHASES; p++) {
            if (r->phases.s[p] >= 0)
                c->phases[side].s[p] += r->phases.s[p];
            else
                c->unmeasured[side][p]++;
        }
        int sc = scenario_of(c, r->name, r->path);
        if (sc < 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        if (r->skipped || r->too_slow) {
            c->sc[sc].skipped[side]++;
            continue;
        }
        c->sc[sc].runs[side]++;
        if (r->passed && r->known_state != RG_KNOWN_XFAIL)
            continue;
        c->sc[sc].failed[side]++;
        /* Its own files, where they are now: the cause is read from the run as it was kept. */
        snprintf(r->dir, sizeof(r->dir), "%.700s/%.300s", dir, names[i]);
        rg_sig sig;
        rg_signature(r, &sig);
        bool at_end = !strcmp(sig.op, "finalize") || !strcmp(sig.op, "end");
        if (at_end)
            c->sc[sc].failed_at_end[side]++;
        /* The causes it proves and those it rules out, from one read of its traces. */
        static rg_tri_cause tc[RG_TRI_CAUSES_MAX];
        unsigned ruled;
        int ncause = rg_tri_diagnose_ruled(r, &sig, tc, RG_TRI_CAUSES_MAX, &ruled);
        struct rg_cmp_ruled *ru = NULL;
        if (ruled) {
            rg_cmp_scenario *s = &c->sc[sc];
            ru = grow((void **)&s->ruled, s->nruled, &s->capruled, sizeof(*ru));
            if (ru) {
                s->nruled++;
                *ru = (struct rg_cmp_ruled){side, ruled, reach_of(r), at_end};
            }
        }
        if ((ruled && !ru) || count_failure(c, side, sc, r, &sig, tc, ncause) != 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(r);
    return rc;
}
