/* SPDX-License-Identifier: MIT */
/*
 * A group's smallest case run once more with the verbs trace on (rg_triage.h). The trace costs
 * a write per work request and completion, so only this one run pays for it: its scenario is
 * the group's minimal one (else its representative) with `trace: true`, run by the group's own
 * reproduce line, and a cause it proves (rg_tri_qp.c, and every other cause rg_tri_diagnose
 * knows) replaces the one the run's own files proved, which is kept when it proves none.
 */
#include "triage/rg_triage.h"

#include <stdio.h>
#include <string.h>

static int write_sc(const char *path, const rg_scenario *sc)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = rg_scenario_write(f, sc, "railguard triage: the group's smallest case, traced");
    return fclose(f) != 0 ? -1 : rc;
}

int rg_tri_traced(rg_tri_run *run, int g, double limit_s, char *err, size_t errlen)
{
    static rg_scenario sc;
    static rg_tri_run again;
    rg_tri_group *gr = &run->groups[g];
    const rg_result *rep = run->cases[gr->rep].res;
    const char *from = gr->min.path[0] ? gr->min.path : rep->path;
    const char *what = gr->min.path[0] ? "the minimal scenario" : "the representative";
    char path[1200], out[1300], why[600];
    if (rg_scenario_load(from, &sc, why, sizeof(why)) != 0) {
        snprintf(gr->traced, sizeof(gr->traced), "not traced: %s", why);
        return 0;
    }
    sc.trace = true;
    if (sc.nfaults + sc.ownership + 1 > FI_MAX_RULES) {
        snprintf(gr->traced, sizeof(gr->traced),
                 "not traced: its %d fault rules leave no room for the trace's", sc.nfaults);
        return 0;
    }
    snprintf(path, sizeof(path), "%s/triage/trace/%02d-%s.yaml", run->dir, g + 1, gr->slug);
    snprintf(out, sizeof(out), "%s/triage/trace", run->dir);
    if (rg_mkdirs(out) != 0 || write_sc(path, &sc) != 0) {
        snprintf(err, errlen, "%s: cannot write it", path);
        return -1;
    }
    int tries = gr->rate.n && gr->rate.same < gr->rate.n ? 5 : 1, t;
    for (t = 1; t <= tries; t++) {
        snprintf(out, sizeof(out), "%s/triage/trace/%02d-%s/%d", run->dir, g + 1, gr->slug, t);
        int st = rg_tri_run_once(rep->repro, path, out, limit_s, &again, err, errlen);
        if (st < 0)
            return -1;
        if (st > 0)
            continue;
        bool alike = !again.nslow && again.nfail && !strcmp(again.cases[0].sig.key, gr->sig.key);
        if (alike) {
            rg_tri_cause c;
            rg_tri_diagnose(again.cases[0].res, &again.cases[0].sig, &c);
            if (c.proven || !gr->cause.proven)
                gr->cause = c;
            snprintf(gr->traced, sizeof(gr->traced),
                     "%s, traced (triage/trace/%02d-%s.yaml), failed alike in run %d of %d "
                     "(triage/trace/%02d-%s/%d); %s",
                     what, g + 1, gr->slug, t, tries, g + 1, gr->slug, t,
                     c.proven ? "the cause above is what its trace proves"
                              : "its trace proves no cause");
            rg_tri_free(&again);
            return 0;
        }
        rg_tri_free(&again);
    }
    snprintf(gr->traced, sizeof(gr->traced),
             "%s, traced (triage/trace/%02d-%s.yaml), did not fail alike in %d run(s) "
             "(triage/trace/%02d-%s/): the cause above rests on the run's own files",
             what, g + 1, gr->slug, tries, g + 1, gr->slug);
    return 0;
}
