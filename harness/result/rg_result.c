/* SPDX-License-Identifier: MIT */
/*
 * A rank's findings: the precedence that picks a rank's verdict from all it was found to have,
 * and the word a judged result is reported by.
 */
#include "result/rg_result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- findings ------------------------------------------------------------------------------ */

/* The verdict is the first finding of highest precedence; detail is its text. */
static void settle(rg_rank_result *k, const char *whole, int whole_at)
{
    int best = -1;
    for (int i = 0; i < k->nfindings; i++)
        if (best < 0 || k->finding[i].verdict > k->finding[best].verdict)
            best = i;
    if (best < 0)
        return;
    k->verdict = k->finding[best].verdict;
    k->t_s = k->finding[best].t_s;
    /* A finding's copy is cut to its field; the winner's whole text is kept when it is new. */
    rg_cut(k->detail, sizeof(k->detail), best == whole_at && whole ? whole : k->finding[best].text);
}

void rg_rank_find(rg_rank_result *k, rg_verdict v, double t_s, const char *fmt, ...)
{
    char text[sizeof(k->detail)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);

    int at = k->nfindings;
    if (at == RG_MAX_FINDINGS) {
        /* Full: the lowest finding gives way, unless the new one is lower still. */
        int low = 0;
        for (int i = 1; i < RG_MAX_FINDINGS; i++)
            if (k->finding[i].verdict < k->finding[low].verdict)
                low = i;
        if (k->finding[low].verdict > v)
            return;
        memmove(&k->finding[low], &k->finding[low + 1],
                (size_t)(RG_MAX_FINDINGS - 1 - low) * sizeof(k->finding[0]));
        at = RG_MAX_FINDINGS - 1;
    } else {
        k->nfindings++;
    }
    k->finding[at].verdict = v;
    k->finding[at].t_s = t_s;
    rg_cut(k->finding[at].text, sizeof(k->finding[at].text), text);
    settle(k, text, at);
}

void rg_rank_recast(rg_rank_result *k, rg_verdict from, rg_verdict to, const char *prefix)
{
    bool any = false;
    for (int i = 0; i < k->nfindings; i++) {
        rg_finding *f = &k->finding[i];
        if (f->verdict != from)
            continue;
        char text[sizeof(f->text)];
        snprintf(text, sizeof(text), "%s%s", prefix, f->text);
        memcpy(f->text, text, sizeof(text));
        f->verdict = to;
        any = true;
    }
    if (any) {
        /* The whole detail of a recast winner keeps its prefix too. */
        char whole[sizeof(k->detail)];
        snprintf(whole, sizeof(whole), "%s%s", prefix, k->detail);
        bool was = k->verdict == from;
        settle(k, NULL, -1);
        if (was && k->verdict == to)
            memcpy(k->detail, whole, sizeof(whole));
    }
}

const char *rg_result_as_rc_said(const rg_result *r, char *out, size_t len)
{
    if (r->as_rc_qps > 0)
        snprintf(out, len,
                 "UC QPs created as RC (--uc-as-rc): %lld QP(s), so a send before its receive was "
                 "retried, not dropped: what fails under it is not a UC race",
                 (long long)r->as_rc_qps);
    else
        snprintf(out, len,
                 "--uc-as-rc changed nothing here: the shim saw no UC QP created, so this run is "
                 "as it would be without it");
    return out;
}

const char *rg_result_word(const rg_result *r)
{
    if (!r->passed)
        return r->too_slow ? "SLOW" : "FAIL";
    if (r->skipped)
        return "SKIP";
    return r->known_state == RG_KNOWN_XFAIL   ? "XFAIL"
           : r->known_state == RG_KNOWN_XPASS ? "XPASS"
                                              : "PASS";
}
