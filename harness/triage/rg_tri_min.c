/* SPDX-License-Identifier: MIT */
/*
 * A group's case minimised (rg_triage.h), as C-Reduce and fuzzers' minimisers do: its smallest
 * scenario made smaller one step at a time (a rank fewer, a rail fewer, counts halved, a step
 * cut, a fault cut: scenario/rg_sc_shrink.c), each candidate run by the group's reproduce
 * line and kept only when it still fails with the group's signature -- for a flaky group, as
 * often as the group's rate says it should, near enough; for a deterministic one, in every one
 * of as many runs as proved the group deterministic.
 */
#include "triage/rg_triage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many of `tries` runs of a candidate must fail alike: every one for a deterministic group
 * (one run), else half the group's own rate, at least one. */
static int needed(const rg_tri_rate *r, int tries)
{
    if (tries <= 1 || !r->n)
        return 1;
    int k = (tries * r->same + r->n) / (2 * r->n);
    return k < 1 ? 1 : k;
}

/* Runs candidate path `tries` times (numbered from first); how many failed alike
 * (rg_tri_alike with the minimal case's signature so far), the first such one's signature
 * into got. */
static int alike(const rg_tri_run *run, const rg_tri_group *gr, int g, int k, const char *path,
                 int first, int tries, double limit_s, rg_sig *got, char *err, size_t errlen)
{
    const rg_result *rep = run->cases[gr->rep].res;
    int same = 0;
    for (int t = first; t < first + tries; t++) {
        static rg_tri_run again;
        char out[1400];
        snprintf(out, sizeof(out), "%s/triage/min/%02d-%s/%d-%d", run->dir, g + 1, gr->slug, k, t);
        int st = rg_tri_run_once(rep->repro, path, out, limit_s, &run->with, &again, err, errlen);
        if (st < 0)
            return -1;
        if (st == 0 && !again.nslow && again.nfail &&
            rg_tri_alike(&gr->min.sig, &again.cases[0].sig)) {
            if (!same)
                *got = again.cases[0].sig;
            same++;
        }
        if (st == 0)
            rg_tri_free(&again);
    }
    return same;
}

/* The words of a signature's faults ("delay+stall"): how many, into w. */
static int fault_words(const char *faults, char w[][48], int max)
{
    int n = 0;
    for (const char *p = faults; *p && n < max;) {
        size_t k = strcspn(p, "+");
        snprintf(w[n++], 48, "%.*s", (int)(k < 47 ? k : 47), p);
        p += k + (p[k] == '+');
    }
    return n;
}

bool rg_tri_alike(const rg_sig *want, const rg_sig *got)
{
    if (!strcmp(want->key, got->key))
        return true;
    /* Every field but the faults. */
    if (strcmp(want->first, got->first) || strcmp(want->cls, got->cls) ||
        strcmp(want->op, got->op) || strcmp(want->algo, got->algo) ||
        strcmp(want->others, got->others) || want->nframes != got->nframes)
        return false;
    for (int i = 0; i < want->nframes; i++)
        if (strcmp(want->frames[i], got->frames[i]))
            return false;
    char a[FI_MAX_RULES][48], b[FI_MAX_RULES][48];
    int na = fault_words(want->faults, a, FI_MAX_RULES),
        nb = fault_words(got->faults, b, FI_MAX_RULES);
    if (nb >= na)
        return false;
    for (int j = 0; j < nb; j++) {
        bool in = false;
        for (int i = 0; i < na; i++)
            in |= !strcmp(a[i], b[j]);
        if (!in)
            return false;
    }
    return true;
}

/* The reproduce line of the minimal case: the group's, its scenario replaced. */
void rg_tri_min_repro(const char *repro, const char *path, char *out, size_t len)
{
    char *argv[64], buf[4200];
    int n = rg_tri_words(repro, argv, 64, buf, sizeof(buf));
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        if (rg_shell_word(out, len, i == n - 1 ? path : argv[i]) != 0)
            return;
    memmove(out, out + (out[0] == ' '), strlen(out + (out[0] == ' ')) + 1); /* its first blank */
}

int rg_tri_minimise(rg_tri_run *run, int g, int budget, double limit_s, char *err, size_t errlen)
{
    static rg_scenario cur, cand;
    rg_tri_group *gr = &run->groups[g];
    const rg_result *rep = run->cases[gr->rep].res;
    char dir[1200], path[1400], what[300], why[600];
    gr->min.tried = gr->min.kept = 0;
    gr->min.sig = gr->sig;
    if (rg_scenario_load(rep->path, &cur, why, sizeof(why)) != 0) {
        snprintf(gr->min.note, sizeof(gr->min.note), "not minimised: %s", why);
        return 0;
    }
    snprintf(dir, sizeof(dir), "%s/triage/min/%02d-%s", run->dir, g + 1, gr->slug);
    if (rg_mkdirs(dir) != 0) {
        snprintf(err, errlen, "%s: cannot make it", dir);
        return -1;
    }
    int tries = gr->rate.n && gr->rate.same < gr->rate.n ? (gr->rate.n < 5 ? gr->rate.n : 5) : 1;
    int need = needed(&gr->rate, tries), cursor = 0;
    /*
     * A deterministic group's candidate is screened by one run and kept only when the group's
     * re-run count of runs (the rest of them) all fail alike too: halving the counts of a race
     * (a UC sender outrunning its receiver) made one that failed once, then passed three fresh
     * runs in a row, and a minimal case that does not reproduce is no minimal case.
     */
    int confirm = gr->rate.n > 1 && gr->rate.same == gr->rate.n ? gr->rate.n - 1 : 0;
    size_t used = 0, mark = 0;
    int repeats = 0;
    char last[300] = "";
    while (gr->min.tried < budget &&
           rg_sc_shrink_next(&cur, &cursor, &cand, what, sizeof(what)) == 0) {
        int k = ++gr->min.tried;
        snprintf(cand.name, sizeof(cand.name), "%.100s-min-%d", rep->name, k);
        snprintf(path, sizeof(path), "%s/%d.yaml", dir, k);
        if (rg_scenario_save(path, &cand, "railguard triage: a minimising candidate") != 0) {
            snprintf(err, errlen, "%s: cannot write it", path);
            return -1;
        }
        static rg_sig got, more;
        int same = alike(run, gr, g, k, path, 1, tries, limit_s, &got, err, errlen);
        /* The confirming runs only once the screening ones said yes (numbered after them). */
        int again = same >= need && confirm
                        ? alike(run, gr, g, k, path, 2, confirm, limit_s, &more, err, errlen)
                        : confirm;
        if (same < 0 || again < 0)
            return -1;
        if (same < need || again < confirm)
            continue;
        /* From here on the case must fail as this candidate did: without the faults it cut. */
        gr->min.sig = got;
        cur = cand;
        cursor = 0;
        gr->min.kept++;
        /* Repeats said once with their number: "counts halved 4 times". */
        if (!strcmp(what, last)) {
            used = mark;
            repeats++;
            used += (size_t)snprintf(gr->min.steps + used, sizeof(gr->min.steps) - used,
                                     "%s%s %d times", used ? ", " : "", what, repeats);
        } else {
            mark = used;
            repeats = 1;
            used += (size_t)snprintf(gr->min.steps + used, sizeof(gr->min.steps) - used, "%s%s",
                                     used ? ", " : "", what);
        }
        snprintf(last, sizeof(last), "%s", what);
        if (used >= sizeof(gr->min.steps))
            used = mark = sizeof(gr->min.steps) - 1;
    }
    if (!gr->min.kept) {
        snprintf(gr->min.note, sizeof(gr->min.note),
                 "no smaller scenario failed the same way (%d candidate(s) tried)", gr->min.tried);
        return 0;
    }
    snprintf(cur.name, sizeof(cur.name), "%.100s-min", rep->name);
    snprintf(gr->min.path, sizeof(gr->min.path), "%s/triage/%02d-%s.min.yaml", run->dir, g + 1,
             gr->slug);
    if (rg_scenario_save(gr->min.path, &cur,
                         "railguard triage: the smallest scenario found that fails "
                         "with the group's signature") != 0) {
        snprintf(err, errlen, "%s: cannot write it", gr->min.path);
        return -1;
    }
    rg_tri_min_repro(rep->repro, gr->min.path, gr->min.repro, sizeof(gr->min.repro));
    snprintf(gr->min.note, sizeof(gr->min.note),
             "minimised from %s in %d of %d candidate(s), each failing alike in at least %d of %d "
             "run(s)",
             rep->name, gr->min.kept, gr->min.tried, need + confirm, tries + confirm);
    return 0;
}
