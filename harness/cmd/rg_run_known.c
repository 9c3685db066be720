/* SPDX-License-Identifier: MIT */
/*
 * Known failures by cause (rg_run.h): an entry of the known-failures file that names a cause
 * (`cause: uc-send-without-receive`) matches a failure whose own files prove that cause, as
 * triage proves it -- for a race whose one bug shows as a hang in one run, a wrong sum in the
 * next, and a leak in a third, which no list of signatures can hold. So the run that gates on
 * such an entry records what proves it (the verbs trace, when the cause needs one) in every
 * scenario, and a failure no signature matched is diagnosed once it is judged: a cause proven
 * is kept in its result (and railguard report judges from that alike); none proven, it fails.
 */
#include "rg_run.h"

#include "triage/rg_triage.h"

#include <stdio.h>

/* Whether any of sc's known-failures entries names a cause, and one that needs the trace. */
static bool names_cause(const rg_sc_ksig *k, int n, bool traced)
{
    for (int i = 0; i < n; i++)
        if (k[i].cause && (!traced || rg_cause_needs_trace(k[i].cause)))
            return true;
    return false;
}

void rg_run_trace_for_causes(struct sc_entry *e, int n, bool here, FILE *out)
{
    int on = 0;
    if (n > 0 && !here && names_cause(e[0].sc.ksig, e[0].sc.nksig, false)) {
        /* Each rank is judged where it ran and the ranks merged later (rg_merge): no run holds
         * every rank's files to diagnose from. */
        fprintf(out, "known failures by cause: matched only in runs railguard launches itself "
                     "(not --external or --hosts); here failures are known by signature\n");
        return;
    }
    for (int i = 0; i < n; i++) {
        rg_scenario *sc = &e[i].sc;
        /* A trace proves nothing of a run where a fault fired (triage/rg_tri_qp.c): only the
         * fault-free scenarios pay for it. */
        if (!names_cause(sc->ksig, sc->nksig, true) || sc->trace || sc->nfaults)
            continue;
        sc->trace = true;
        on++;
    }
    if (on)
        fprintf(out,
                "known failures by cause: the verbs trace is on in %d fault-free scenario(s), for "
                "the causes only a trace proves\n",
                on);
}

void rg_run_prove_cause(rg_result *res)
{
    if (res->passed || res->too_slow || res->cause || !names_cause(res->ksig, res->nksig, false))
        return;
    rg_sig s;
    rg_tri_cause c;
    rg_signature(res, &s);
    rg_tri_diagnose(res, &s, &c);
    if (!c.proven)
        return;
    res->cause = c.kind;
    rg_cut(res->cause_text, sizeof(res->cause_text), c.text);
    rg_judge(res);
}
