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

/* One traced scenario (from) run by the group's line up to `tries` times, until it fails
 * alike: 1 with the cause taken when it proves one, 0 when it never failed alike, -1. */
static int traced_runs(rg_tri_run *run, int g, const char *from, const char *what, int tries,
                       double limit_s, char *err, size_t errlen)
{
    static rg_scenario sc;
    static rg_tri_run again;
    rg_tri_group *gr = &run->groups[g];
    const rg_result *rep = run->cases[gr->rep].res;
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
    snprintf(path, sizeof(path), "%s/triage/trace/%02d-%s-%s.yaml", run->dir, g + 1, gr->slug,
             what);
    snprintf(out, sizeof(out), "%s/triage/trace", run->dir);
    if (rg_mkdirs(out) != 0 ||
        rg_scenario_save(path, &sc, "railguard triage: the group's smallest case, traced") != 0) {
        snprintf(err, errlen, "%s: cannot write it", path);
        return -1;
    }
    for (int t = 1; t <= tries; t++) {
        snprintf(out, sizeof(out), "%s/triage/trace/%02d-%s-%s/%d", run->dir, g + 1, gr->slug, what,
                 t);
        int st = rg_tri_run_once(rep->repro, path, out, limit_s, &run->with, &again, err, errlen);
        if (st < 0)
            return -1;
        if (st > 0)
            continue;
        /* The group's failure, or the same with fewer faults: what its minimal case fails with
         * when minimising cut them. */
        bool alike = !again.nslow && again.nfail && rg_tri_alike(&gr->sig, &again.cases[0].sig);
        if (alike) {
            static rg_tri_cause c;
            char also[sizeof(gr->also_causes)];
            rg_tri_diagnose_also(again.cases[0].res, &again.cases[0].sig, &c, also, sizeof(also));
            if (c.proven || !gr->cause.proven) {
                gr->cause = c;
                snprintf(gr->also_causes, sizeof(gr->also_causes), "%s", also);
            }
            snprintf(gr->traced, sizeof(gr->traced),
                     "the %s case, traced (triage/trace/%02d-%s-%s.yaml), failed alike in run %d "
                     "of %d; %s",
                     what, g + 1, gr->slug, what, t, tries,
                     c.proven ? "the cause above is what its trace proves"
                              : "its trace proves no cause");
        }
        rg_tri_free(&again);
        if (alike)
            return 1;
    }
    return 0;
}

int rg_tri_traced(rg_tri_run *run, int g, double limit_s, char *err, size_t errlen)
{
    rg_tri_group *gr = &run->groups[g];
    const rg_result *rep = run->cases[gr->rep].res;
    /* The trace slows every post: a bug that needs a sender to outrun its receiver may hide
     * under it, most of all in a case minimised to the edge of failing. So the minimal case
     * first, then the representative, each a few times. */
    int tries = gr->rate.n && gr->rate.same < gr->rate.n ? 5 : 3, st = 0;
    if (gr->min.path[0])
        st = traced_runs(run, g, gr->min.path, "minimal", tries, limit_s, err, errlen);
    if (st == 0)
        st = traced_runs(run, g, rep->path, "representative", tries, limit_s, err, errlen);
    if (st < 0)
        return -1;
    if (st == 0 && !strncmp(gr->traced, "not traced", 10))
        return 0;
    if (st == 0)
        snprintf(gr->traced, sizeof(gr->traced),
                 "traced (triage/trace/%02d-%s-*.yaml), the %s case did not fail alike in %d "
                 "run(s) (triage/trace/): the cause above rests on the run's own files",
                 g + 1, gr->slug,
                 gr->min.path[0] ? "minimal nor the representative" : "representative", tries);
    return 0;
}
