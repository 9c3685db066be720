/* SPDX-License-Identifier: MIT */
/*
 * Smaller scenarios (rg_scenario.h): the candidates a failure is minimised through, for the
 * sweep's failing points and triage's groups. Pure: each candidate is a scenario that parses
 * back as written, or none; which one still fails the same way is the caller's run to find.
 */
#include "rg_sc_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rg_sc_halve_counts(const rg_scenario *in, rg_scenario *out)
{
    bool changed = false;
    *out = *in;
    for (int i = 0; i < out->nops; i++) {
        rg_sc_op *op = &out->ops[i];
        if (op->kind == RG_SC_BARRIER || op->kind == RG_SC_CREATE || op->kind == RG_SC_DESTROY ||
            op->count <= 1)
            continue;
        op->count = (op->count + 1) / 2;
        changed = true;
    }
    return changed ? 0 : -1;
}

/* The value of key= in a rule ("rank=3" -> 3), or -1 when it has none or it is not a number. */
static long rule_value(const char *rule, const char *key)
{
    size_t n = strlen(key);
    for (const char *w = rule; (w = strstr(w, key)); w += n)
        if ((w == rule || w[-1] == ' ') && w[n] >= '0' && w[n] <= '9')
            return strtol(w + n, NULL, 10);
    return -1;
}

/* The rule with its step=K made step=K-1 (a step before it was cut). */
static void step_down(char *rule, size_t len)
{
    char out[RG_SC_RULE_MAX];
    const char *w = strstr(rule, " step=");
    if (!w || w[6] < '0' || w[6] > '9')
        return;
    const char *v = w + 6, *e = v + strspn(v, "0123456789");
    snprintf(out, sizeof(out), "%.*s%ld%s", (int)(v - rule), rule, strtol(v, NULL, 10) - 1, e);
    snprintf(rule, len, "%s", out);
}

static void faults_text(rg_scenario *sc)
{
    size_t o = 0;
    sc->faults[0] = '\0';
    for (int i = 0; i < sc->nfaults && o < sizeof(sc->faults); i++)
        o += (size_t)snprintf(sc->faults + o, sizeof(sc->faults) - o, "%s%s", i ? "\n" : "",
                              sc->fault[i].rule);
}

static int fewer_ranks(const rg_scenario *in, rg_scenario *out, char *what, size_t len)
{
    int n = in->ranks - 1;
    if (in->exec.on || n < 2)
        return -1;
    for (int i = 0; i < in->nops; i++) {
        const rg_sc_op *op = &in->ops[i];
        if ((op->kind == RG_SC_BROADCAST && op->root >= n) ||
            (op->kind == RG_SC_SENDRECV && (op->from >= n || op->to >= n)))
            return -1;
    }
    for (int i = 0; i < in->nfaults; i++)
        if (rule_value(in->fault[i].rule, "rank=") >= n)
            return -1;
    *out = *in;
    out->ranks = n;
    snprintf(what, len, "%d ranks", n);
    return 0;
}

static int without_step(const rg_scenario *in, int s, rg_scenario *out, char *what, size_t len)
{
    const rg_sc_op *op = &in->ops[s];
    if (in->exec.on || in->nops < 2 || op->kind == RG_SC_CREATE || op->kind == RG_SC_DESTROY)
        return -1;
    for (int i = 0; i < in->nfaults; i++)
        if (rule_value(in->fault[i].rule, "step=") == s)
            return -1; /* its fault is anchored there */
    for (int r = 0; r < in->ranks; r++)
        if (in->expect_at[r] == s)
            return -1;
    *out = *in;
    memmove(&out->ops[s], &out->ops[s + 1], sizeof(out->ops[0]) * (size_t)(in->nops - s - 1));
    out->nops--;
    for (int i = 0; i < out->nfaults; i++)
        if (rule_value(out->fault[i].rule, "step=") > s)
            step_down(out->fault[i].rule, sizeof(out->fault[i].rule));
    faults_text(out);
    for (int r = 0; r < out->ranks; r++)
        if (out->expect_at[r] > s)
            out->expect_at[r]--;
    snprintf(what, len, "without step %d (%s)", s, rg_sc_kind_name(op->kind));
    return 0;
}

/* What the file expected was of its faults: without any, every rank is held to the one
 * default a fault-free run has (ok), or a fault-free candidate of a rank expected `detected`
 * would fail for passing. */
static void without_expectations(rg_scenario *sc)
{
    for (int r = 0; r < RG_MAX_RANKS; r++)
        sc->expect_named[r] = false;
    sc->expect_at_max = RG_SC_AT_ANY;
    sc->expect_at_line = sc->expect_cls_line = 0;
    rg_sc_expect_defaults(sc);
}

static int without_fault(const rg_scenario *in, int f, rg_scenario *out, char *what, size_t len)
{
    *out = *in;
    memmove(&out->fault[f], &out->fault[f + 1],
            sizeof(out->fault[0]) * (size_t)(in->nfaults - f - 1));
    out->nfaults--;
    faults_text(out);
    snprintf(what, len, "without fault '%s'", in->fault[f].rule);
    return 0;
}

/* The scenario written and parsed back: it must read as the runner will read it. */
static bool parses(const rg_scenario *sc)
{
    char *buf = NULL, err[512];
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return false;
    int w = rg_scenario_write(f, sc, NULL);
    if (fclose(f) != 0 || w != 0) {
        free(buf);
        return false;
    }
    static rg_scenario back;
    int rc = rg_scenario_parse(buf, n, "candidate.yaml", &back, err, sizeof(err));
    free(buf);
    return rc == 0;
}

int rg_sc_shrink_next(const rg_scenario *cur, int *cursor, rg_scenario *out, char *what, size_t len)
{
    /* Cursor: 0 every fault at once, 1 ranks, 2 rails, 3 counts, then 4 + i a step (last
     * first), then 4 + nops + i one fault (last first; only when there are two or more, one
     * alone is what 0 cut). Every fault first: a failure that shows without any is not theirs,
     * and whether it is decides what the rest of the case is minimised around. */
    for (;;) {
        int k = (*cursor)++, rc;
        int nf = cur->nfaults > 1 ? cur->nfaults : 0;
        if (k == 0) {
            rc = cur->nfaults ? 0 : -1;
            if (!rc) {
                *out = *cur;
                out->nfaults = 0;
                faults_text(out);
                without_expectations(out);
                snprintf(what, len, "without faults");
            }
        } else if (k == 1)
            rc = fewer_ranks(cur, out, what, len);
        else if (k == 2) {
            rc = cur->rails > 1 ? 0 : -1;
            if (!rc) {
                *out = *cur;
                out->rails = cur->rails - 1;
                out->rails_asked = out->rails; /* "up to" stays "up to", one fewer */
                snprintf(what, len, "%d rail(s)", out->rails);
            }
        } else if (k == 3) {
            rc = rg_sc_halve_counts(cur, out);
            if (!rc)
                snprintf(what, len, "counts halved");
        } else if (k < 4 + cur->nops) {
            rc = without_step(cur, cur->nops - 1 - (k - 4), out, what, len);
        } else if (k < 4 + cur->nops + nf) {
            rc = without_fault(cur, cur->nfaults - 1 - (k - 4 - cur->nops), out, what, len);
        } else {
            return -1;
        }
        if (!rc && parses(out))
            return 0;
    }
}
