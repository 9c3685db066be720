/* SPDX-License-Identifier: MIT */
/*
 * A known-failures file's `signatures:` (rg_scenario.h): failures known by what they are, not
 * by the scenario they showed in, as railguard triage writes them. Every field is checked as
 * the judge will compare it, so an entry that could never match is refused, not kept. An entry
 * by `cause:` (base/rg_base.h's table) matches a failure whose own evidence proves that cause,
 * and needs no `first`: a race's one bug shows as a hang one run and a wrong sum the next.
 */
#include "rg_sc_parse.h"

#include <stdio.h>
#include <string.h>

enum {
    K_WHY,
    K_FIRST,
    K_CLASS,
    K_OP,
    K_ALGO,
    K_OTHERS,
    K_FAULTS,
    K_FRAMES,
    K_RATE,
    K_SEEN,
    K_CAUSE,
    K__N
};
static const char *const ksig_keys[K__N] = {"why",    "first",  "class", "op",   "algo", "others",
                                            "faults", "frames", "rate",  "seen", "cause"};

/* A scalar of one printable line into out (len bytes), empty allowed when `empty`. */
static int one_line(const struct ctx *c, const yaml_node_t *v, const char *what, char *out,
                    size_t len, bool empty)
{
    if (!sc_is_scalar(v))
        return sc_bad(c, v, "%s must be one line of text, not", what);
    size_t n = v->data.scalar.length;
    const char *s = (const char *)v->data.scalar.value;
    if ((!n && !empty) || n >= len)
        return sc_bad(c, v, "%s must be %d..%zu characters, not", what, empty ? 0 : 1, len - 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return sc_bad(c, v, "%s must be one line, not", what);
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

/* Verdict names joined by '+', each a failure verdict: how the judge spells `others`. */
static int verdict_list(const struct ctx *c, const yaml_node_t *v, char *out, size_t len)
{
    if (one_line(c, v, "others", out, len, true))
        return -1;
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", out);
    for (char *save = NULL, *w = strtok_r(copy, "+", &save); w; w = strtok_r(NULL, "+", &save))
        if (rg_verdict_of(w) < 0)
            return sc_bad(c, v, "others: '%s' is no verdict in", w);
    return 0;
}

/* A sequence of scalars into rows of `width` bytes, at most max. */
static int scalars(const struct ctx *c, const yaml_node_t *v, const char *what, char *rows,
                   size_t width, int max, int *n)
{
    if (v->type != YAML_SEQUENCE_NODE)
        return sc_bad(c, v, "%s must be a list, not", what);
    *n = 0;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        const yaml_node_t *e = sc_node_at(c, *it);
        if (!e)
            return sc_fail(c, sc_line_of(v), "YAML: broken document");
        if (*n == max)
            return sc_bad(c, e, "%s: at most %d entries; one too many", what, max);
        if (one_line(c, e, what, rows + (size_t)*n * width, width, false))
            return -1;
        (*n)++;
    }
    return 0;
}

static int ksig_fields(const struct ctx *c, yaml_node_t **val, rg_sc_ksig *k)
{
    rg_sig *s = &k->sig;
    int v = -1;
    if (one_line(c, val[K_WHY], "why", k->why, sizeof(k->why), false))
        return -1;
    if (val[K_CAUSE]) {
        char name[32];
        if (one_line(c, val[K_CAUSE], "cause", name, sizeof(name), false))
            return -1;
        if ((v = rg_cause_of(name)) < 0)
            return sc_bad(c, val[K_CAUSE],
                          "cause must be error-ignored, buffer-reused, uc-send-without-receive, "
                          "wait-never-sent or wait-without-deadline, not");
        k->cause = (rg_cause)v;
    }
    /* Any verdict: the first rank to miss its expectation may have ended ok (a detection
     * expected), detected (at the wrong step or class) or killed. An entry by cause may leave
     * it out: the bug's first verdict is what a race decides. */
    if (val[K_FIRST] && one_line(c, val[K_FIRST], "first", s->first, sizeof(s->first), false))
        return -1;
    if (val[K_FIRST] && ((v = rg_verdict_of(s->first)) < 0 || v == RG_V_UNSUPPORTED))
        return sc_bad(c, val[K_FIRST], "first must be a verdict (not unsupported), not");
    /* A cause is proven for one first failure (or any): an entry naming another never matches. */
    int want = rg_cause_verdict(k->cause);
    if (val[K_FIRST] && k->cause && want >= 0 && v != want)
        return sc_bad(c, val[K_FIRST], "cause %s is proven only for first %s, not",
                      rg_cause_name(k->cause), rg_verdict_name((rg_verdict)want));
    if (val[K_CLASS]) {
        k->has |= RG_SIG_HAS_CLS;
        if (one_line(c, val[K_CLASS], "class", s->cls, sizeof(s->cls), true))
            return -1;
        if (s->cls[0] && strcmp(s->cls, "v1") && rg_sc_class_of(s->cls, strlen(s->cls)) == 0)
            return sc_bad(c, val[K_CLASS], "class must be a status class, v1 or empty, not");
    }
    if (val[K_OP] &&
        (k->has |= RG_SIG_HAS_OP, one_line(c, val[K_OP], "op", s->op, sizeof(s->op), false)))
        return -1;
    if (val[K_ALGO] && (k->has |= RG_SIG_HAS_ALGO,
                        one_line(c, val[K_ALGO], "algo", s->algo, sizeof(s->algo), true)))
        return -1;
    if (val[K_OTHERS] &&
        (k->has |= RG_SIG_HAS_OTHERS, verdict_list(c, val[K_OTHERS], s->others, sizeof(s->others))))
        return -1;
    if (val[K_FAULTS] && (k->has |= RG_SIG_HAS_FAULTS,
                          one_line(c, val[K_FAULTS], "faults", s->faults, sizeof(s->faults), true)))
        return -1;
    /* A trace proves nothing of a run where a fault fired (rg_tri_qp.c). */
    if (val[K_FAULTS] && s->faults[0] && rg_cause_needs_trace(k->cause))
        return sc_bad(c, val[K_FAULTS], "cause %s is proven only where no fault fired, not",
                      rg_cause_name(k->cause));
    if (val[K_FRAMES] &&
        (k->has |= RG_SIG_HAS_FRAMES, scalars(c, val[K_FRAMES], "frames", s->frames[0],
                                              sizeof(s->frames[0]), RG_SIG_FRAMES, &s->nframes)))
        return -1;
    if (val[K_RATE] && one_line(c, val[K_RATE], "rate", k->rate, sizeof(k->rate), true))
        return -1;
    if (val[K_SEEN] &&
        scalars(c, val[K_SEEN], "seen", k->seen[0], sizeof(k->seen[0]), RG_SC_KSIG_SEEN, &k->nseen))
        return -1;
    return 0;
}

int sc_parse_ksigs(const struct ctx *c, const yaml_node_t *n, rg_sc_ksig *out, int *nout)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return sc_bad(c, n, "signatures must be a list of mappings (why, first, ...), not");
    *nout = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        yaml_node_t *e = sc_node_at(c, *it), *key[K__N], *val[K__N];
        if (!e)
            return sc_fail(c, sc_line_of(n), "YAML: broken document");
        if (*nout == RG_SC_KSIG_MAX)
            return sc_bad(c, e, "signatures: at most %d; one too many", RG_SC_KSIG_MAX);
        if (e->type != YAML_MAPPING_NODE)
            return sc_bad(c, e, "a signature must be a mapping (why, first, ...), not");
        if (sc_collect(c, e, ksig_keys, K__N, key, val))
            return -1;
        if (!val[K_WHY] || (!val[K_FIRST] && !val[K_CAUSE]))
            return sc_fail(c, sc_line_of(e), "a signature needs why, and first or cause");
        rg_sc_ksig *k = &out[*nout];
        memset(k, 0, sizeof(*k));
        k->line = (int)sc_line_of(e);
        if (ksig_fields(c, val, k))
            return -1;
        (*nout)++;
    }
    return 0;
}
