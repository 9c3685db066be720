/* SPDX-License-Identifier: MIT */
/* A scenario's faults, its per-rank expectation and its known failure (rg_sc_parse.h). */
#include "rg_sc_parse.h"
#include "data/rg_data.h"
#include "fi_plan.h"
#include "rg_parse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* --- faults, expect ------------------------------------------------------------------------ */

/* The one fault rule an item holds, checked alone by the plan library (the shim's own parser). */
static int parse_fault_rule(const struct ctx *c, const yaml_node_t *f, int item, rg_sc_fault *out)
{
    struct fi_plan plan;
    char err[320];
    const char *v = (const char *)f->data.scalar.value;
    size_t len = f->data.scalar.length;
    bool blank = true;

    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)v[i];
        /* Items are joined one per line: any of these would end or cut a rule of the plan. */
        if (ch == ';')
            return sc_bad(c, f, "faults item %d: one rule per item, no ';' in", item);
        if (ch < 0x20 || ch == 0x7f)
            return sc_bad(c, f, "faults item %d: control character in", item);
        if (ch == '#' && (i == 0 || v[i - 1] == ' '))
            return sc_bad(c, f, "faults item %d: no comments in a rule ('#' starts one)", item);
        blank = blank && ch == ' ';
    }
    if (blank)
        return sc_bad(c, f, "faults item %d: empty rule", item);
    if (len >= sizeof(out->rule))
        return sc_bad(c, f, "faults item %d: longer than %zu characters", item,
                      sizeof(out->rule) - 1);
    memcpy(out->rule, v, len);
    out->rule[len] = '\0';
    out->line = (int)sc_line_of(f);
    if (fi_plan_parse(out->rule, "", &plan, err, sizeof(err)) != 0) {
        /* The library says ":1: what 'token'"; the line that matters is the file's. */
        const char *what = strstr(err, ": ");
        return sc_fail(c, sc_line_of(f), "faults item %d: %s", item, what ? what + 2 : err);
    }
    if (plan.nrules != 1)
        return sc_bad(c, f, "faults item %d: one rule per item, not %d in", item, plan.nrules);
    out->kind = (int)plan.rules[0].kind;
    if (out->kind == FI_OWNERSHIP || out->kind == FI_TRACE)
        return sc_bad(c, f, "faults item %d: %s is the scenario's key '%s', not a fault:", item,
                      out->kind == FI_TRACE ? "the verbs trace" : "the sanitizer",
                      fi_kind_name((enum fi_kind)out->kind));
    /* It changes what runs, and every report must say so: the run's flag, which they read. */
    if (out->kind == FI_UC_AS_RC)
        return sc_bad(c, f, "faults item %d: uc_as_rc is the run's --uc-as-rc, not a fault:", item);
    return 0;
}

/*
 * Each item is one rule: a string, or a mapping {rule: STRING, optional: true|false} for a rule
 * the scenario allows never to fire. The rules are joined one per line, as the plan file each
 * rank is given holds them, and the joined plan is parsed whole once more, so a limit that only
 * the whole plan can break (the number of rules) is caught here, before anything runs.
 */
int sc_parse_faults(const struct ctx *c, const yaml_node_t *n)
{
    rg_scenario *sc = c->sc;
    char *out = sc->faults;
    size_t used = 0;
    struct fi_plan plan;
    char err[320];

    if (n->type != YAML_SEQUENCE_NODE)
        return sc_bad(c, n, "faults must be a sequence of rules, not");
    sc->nfaults = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        const yaml_node_t *f = sc_node_at(c, *it), *rule = f;
        int item = sc->nfaults + 1;
        bool optional = false;
        if (!f)
            return sc_fail(c, sc_line_of(n), "YAML: broken document");
        if (sc->nfaults == FI_MAX_RULES)
            return sc_bad(c, f, "faults: at most %d rules, item %d is one more", FI_MAX_RULES,
                          item);
        if (f->type == YAML_MAPPING_NODE) {
            rule = NULL;
            for (yaml_node_pair_t *p = f->data.mapping.pairs.start; p < f->data.mapping.pairs.top;
                 p++) {
                const yaml_node_t *key = sc_node_at(c, p->key), *val = sc_node_at(c, p->value);
                if (!key || !val)
                    return sc_fail(c, sc_line_of(f), "YAML: broken document");
                if (sc_scalar_is(key, "rule") && !rule) {
                    rule = val;
                } else if (sc_scalar_is(key, "optional")) {
                    if (!sc_is_plain(val) ||
                        !(sc_scalar_is(val, "true") || sc_scalar_is(val, "false")))
                        return sc_bad(c, val, "faults item %d: optional must be true or false",
                                      item);
                    optional = sc_scalar_is(val, "true");
                } else {
                    return sc_bad(c, key,
                                  "faults item %d: unknown or repeated key (rule, optional)", item);
                }
            }
            if (!rule)
                return sc_fail(c, sc_line_of(f), "faults item %d: missing key 'rule'", item);
        }
        if (!sc_is_scalar(rule))
            return sc_bad(c, rule, "faults item %d: a rule must be a string, not", item);
        rg_sc_fault *fl = &sc->fault[sc->nfaults];
        if (parse_fault_rule(c, rule, item, fl))
            return -1;
        fl->optional = optional;
        size_t len = strlen(fl->rule), sep = used ? 1 : 0;
        if (used + sep + len >= RG_SC_FAULTS_MAX)
            return sc_bad(c, rule, "faults longer than %d characters in all at",
                          RG_SC_FAULTS_MAX - 1);
        memcpy(out + used, "\n", sep);
        memcpy(out + used + sep, fl->rule, len);
        used += sep + len;
        out[used] = '\0';
        sc->nfaults++;
    }
    if (fi_plan_parse(out, c->path, &plan, err, sizeof(err)) != 0)
        return sc_fail(c, sc_line_of(n), "faults: the joined plan: %s", err);
    if (plan.nrules != sc->nfaults)
        return sc_fail(c, sc_line_of(n), "faults: the joined plan has %d rules for %d items",
                       plan.nrules, sc->nfaults);
    return 0;
}

/*
 * known: a failure verdict per rank ("all" or a rank), and why (required, one line): the
 * scenario's known failure, which the judge reports as xfail rather than failing the run.
 */
int sc_parse_known(const struct ctx *c, const yaml_node_t *n)
{
    rg_scenario *sc = c->sc;
    int all = -1, per_rank[RG_MAX_RANKS];
    bool named[RG_MAX_RANKS] = {false}, seen_all = false, seen_why = false;
    if (n->type != YAML_MAPPING_NODE)
        return sc_bad(c, n, "known must be a mapping (why, and verdicts by rank or all), not");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = sc_node_at(c, p->key), *val = sc_node_at(c, p->value);
        uint64_t r = 0;
        if (!key || !val)
            return sc_fail(c, sc_line_of(n), "YAML: broken document");
        if (sc_scalar_is(key, "why")) {
            size_t len = sc_is_scalar(val) ? val->data.scalar.length : 0;
            const char *v = sc_is_scalar(val) ? (const char *)val->data.scalar.value : "";
            if (seen_why)
                return sc_bad(c, key, "known: duplicate key");
            if (!len || len >= sizeof(sc->known_why))
                return sc_bad(c, val, "known: why must be 1..%zu characters, not",
                              sizeof(sc->known_why) - 1);
            for (size_t i = 0; i < len; i++)
                if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
                    return sc_bad(c, val, "known: why must be one line, not");
            memcpy(sc->known_why, v, len);
            sc->known_why[len] = '\0';
            seen_why = true;
            continue;
        }
        bool is_all = sc_scalar_is(key, "all");
        if (!is_all && (!sc_is_scalar(key) ||
                        sc_digits_u64((const char *)key->data.scalar.value, key->data.scalar.length,
                                      false, &r) ||
                        r >= (uint64_t)sc->ranks))
            return sc_bad(c, key, "known: a key is why, all or a rank 0..%d, not", sc->ranks - 1);
        if (is_all ? seen_all : named[r])
            return sc_bad(c, key, "known: duplicate key");
        char name[40] = "";
        if (sc_is_scalar(val) && val->data.scalar.length < sizeof(name))
            memcpy(name, val->data.scalar.value, val->data.scalar.length);
        int v = rg_verdict_of(name);
        if (v <= RG_V_KILLED)
            return sc_bad(c, val,
                          "known: a failure verdict (NOT_EXERCISED ... SILENT_CORRUPTION), not");
        if (is_all) {
            seen_all = true;
            all = v;
        } else {
            named[r] = true;
            per_rank[r] = v;
        }
    }
    if (!seen_why)
        return sc_fail(c, sc_line_of(n), "known: needs why (the reason, or an upstream link)");
    if (!seen_all) {
        bool any = false;
        for (int r = 0; r < sc->ranks; r++)
            any |= named[r];
        if (!any)
            return sc_fail(c, sc_line_of(n), "known: names no verdict (all, or a rank)");
    }
    for (int r = 0; r < sc->ranks; r++)
        sc->known[r] = named[r] ? per_rank[r] : all < 0 ? 0 : all;
    return 0;
}

rg_sc_expect rg_sc_expect_default(const rg_scenario *sc)
{
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++)
        switch ((enum fi_kind)sc->fault[i].kind) {
        case FI_DELAY:
        case FI_DELAY_FIRST:
        case FI_STALL:
        case FI_LATE:
        case FI_COUNT:
        case FI_OWNERSHIP:
        case FI_TRACE:
        case FI_SITES:
            break;
        case FI_WIRE:
            /* RC retransmits what the wire lost, duplicated, reordered or corrupted (the
             * receiver drops a packet whose checksum fails); UC has no retry. */
            if (sc->qp != RG_QPT_RC)
                return RG_SC_EXPECT_ANY;
            break;
        default:
            return RG_SC_EXPECT_ANY;
        }
    return RG_SC_EXPECT_OK;
}

/* "all" first, then the ranks named, whatever their order in the file; a rank neither names
 * takes the default once the faults are known (rg_sc_expect_defaults). */
int sc_parse_expect(const struct ctx *c, const yaml_node_t *n)
{
    const yaml_node_t *all_key = NULL, *rank_key[RG_MAX_RANKS] = {NULL};
    int all = RG_SC_EXPECT_OK, per_rank[RG_MAX_RANKS] = {0};
    int all_at = RG_SC_AT_ANY, at_rank[RG_MAX_RANKS];
    uint32_t all_cls = 0, cls_rank[RG_MAX_RANKS];
    int ranks = c->sc->ranks;

    if (n->type != YAML_MAPPING_NODE)
        return sc_bad(c, n, "expect must be a mapping, not");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = sc_node_at(c, p->key), *val = sc_node_at(c, p->value);
        uint64_t r = 0;
        int e = 0;
        if (!key || !val)
            return sc_fail(c, sc_line_of(n), "YAML: broken document");
        if (!sc_is_scalar(key))
            return sc_bad(c, key, "a key must be a scalar, not");
        bool is_all = sc_scalar_is(key, "all");
        /* Plain or quoted alike: a key is a name here, not a number to compute with. */
        if (!is_all) {
            if (sc_digits_u64((const char *)key->data.scalar.value, key->data.scalar.length, false,
                              &r))
                return sc_bad(c, key, "unknown key");
            if (r >= (uint64_t)ranks)
                return sc_bad(c, key, "expect rank must be 0..%d", ranks - 1);
        }
        if (is_all ? all_key != NULL : rank_key[r] != NULL)
            return sc_bad(c, key, "duplicate key");
        rg_sc_expect ev;
        int at;
        uint32_t cls;
        if (!sc_is_scalar(val) || rg_sc_expect_parse((const char *)val->data.scalar.value,
                                                     val->data.scalar.length, &ev, &at, &cls) != 0)
            return sc_bad(c, val, "expect must be " RG_SC_EXPECT_FORMS ", not");
        e = (int)ev;
        if (cls && !c->sc->expect_cls_line)
            c->sc->expect_cls_line = (int)sc_line_of(val);
        if (at > c->sc->expect_at_max) {
            c->sc->expect_at_max = at;
            c->sc->expect_at_line = (int)sc_line_of(val);
        }
        if (is_all) {
            all_key = key;
            all = e;
            all_at = at;
            all_cls = cls;
            continue;
        }
        rank_key[r] = key;
        per_rank[r] = e;
        at_rank[r] = at;
        cls_rank[r] = cls;
    }
    for (int r = 0; r < ranks; r++) {
        c->sc->expect_named[r] = rank_key[r] || all_key;
        c->sc->expect[r] = (rg_sc_expect)(rank_key[r] ? per_rank[r] : all);
        c->sc->expect_at[r] = rank_key[r] ? at_rank[r] : all_at;
        c->sc->expect_cls[r] = rank_key[r] ? cls_rank[r] : all_cls;
    }
    return 0;
}

void rg_sc_expect_defaults(rg_scenario *sc)
{
    rg_sc_expect e = rg_sc_expect_default(sc);
    for (int r = 0; r < sc->ranks && r < RG_MAX_RANKS; r++)
        if (!sc->expect_named[r]) {
            sc->expect[r] = e;
            sc->expect_at[r] = RG_SC_AT_ANY;
            sc->expect_cls[r] = 0;
        }
}
