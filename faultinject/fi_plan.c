/* SPDX-License-Identifier: MIT */
/*
 * The fault plan's parser (its trigger is fi_fires.c). The shim runs this in its constructor,
 * inside whatever program it was preloaded into, and on that program's data path: so it allocates
 * nothing, keeps no state and never depends on the locale. This file is the grammar; a key's
 * value is read in fi_plan_value.c, the names in fi_plan_names.c.
 */
#include "fi_plan_in.h"

#include <infiniband/verbs.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* --- keys: which ones each fault takes ----------------------------------------------------- */

static const char *const key_names[K__N] = {FI__KEYS(FI__KEY_NAME)};

static int key_index(const char *t, size_t len)
{
    for (int k = 0; k < K__N; k++)
        if (strlen(key_names[k]) == len && strncmp(key_names[k], t, len) == 0)
            return k;
    return -1;
}

#define FILTERS                                                                                    \
    (B(K_RANK) | B(K_DEV) | B(K_QP) | B(K_CQ) | B(K_OP) | B(K_AFTER) | B(K_BEFORE) | B(K_STEP) |   \
     B(K_REP) | B(K_SITE))
#define WIRE_WHERE (B(K_RANK) | B(K_RAIL) | B(K_AFTER) | B(K_BEFORE) | B(K_STEP))
#define TRIGGERS (B(K_NTH) | B(K_EVERY) | B(K_PROB) | B(K_SEED) | B(K_COUNT))

/*
 * A key a fault would silently ignore is an error, so a plan never reads as doing more than it
 * does. Four faults are narrower than the rest:
 *   delay_first  fires once, on the rank's first post of any kind: a trigger or an op/QP filter
 *                could only stop it from ever firing, so it takes rank= and ms= alone.
 *   swap_rails   acts once, on the device list, before any QP or CQ exists: rank= and perm=.
 *   count        injects nothing and turns counting on for every QP and CQ: it takes no key
 *                (a filter would read as narrowing the counts, which it cannot).
 *   ownership    the same for the sanitizer: it watches every QP of the process or none.
 *   trace        the same for the verbs trace,
 *   sites        and for the record of call sites (its one key, depth=, says how they are named).
 *   link_down    down at after= and up again up= later: before= would be a second way to say
 *   partition    when it comes up; a partition is of a rank's every rail, so no rail= either.
 */
_Static_assert(K__N <= 32, "a rule's keys are bits of an unsigned");
static const unsigned kind_keys[FI_KIND_MAX] = {
    [FI_ERROR] = FILTERS | TRIGGERS | B(K_STATUS),
    [FI_NEGPOLL] = FILTERS | TRIGGERS | B(K_RET) | B(K_PER),
    [FI_STALL] = FILTERS | TRIGGERS | B(K_MS) | B(K_PER),
    [FI_DELAY] = FILTERS | TRIGGERS | B(K_MS),
    [FI_DELAY_FIRST] = B(K_RANK) | B(K_MS),
    [FI_LOSE] = FILTERS | TRIGGERS,
    [FI_NOMEM] = FILTERS | TRIGGERS | B(K_VERB),
    [FI_CORRUPT] = FILTERS | TRIGGERS | B(K_BIT),
    [FI_SWAP_RAILS] = B(K_RANK) | B(K_PERM),
    [FI_COUNT] = 0,
    [FI_LATE] = FILTERS | TRIGGERS | B(K_MS),
    [FI_KILL] = FILTERS | TRIGGERS,
    [FI_STOP] = FILTERS | TRIGGERS,
    [FI_EXIT] = FILTERS | TRIGGERS | B(K_CODE),
    [FI_OWNERSHIP] = 0,
    [FI_TRACE] = 0,
    [FI_SITES] = B(K_DEPTH),
    [FI_UC_AS_RC] = 0,
    /* The wire has no QPs, ops, steps or events to count: a rank's device, a rail, a window. */
    [FI_WIRE] = WIRE_WHERE | B(K_LOSS) | B(K_DELAY) | B(K_JITTER) | B(K_REORDER) | B(K_DUPLICATE) |
                B(K_CORRUPT) | B(K_UP),
    [FI_LINK_DOWN] = B(K_RANK) | B(K_RAIL) | B(K_AFTER) | B(K_UP) | B(K_STEP),
    [FI_PARTITION] = B(K_RANK) | B(K_AFTER) | B(K_UP) | B(K_STEP),
};

/* --- messages ------------------------------------------------------------------------------ */

int fi__plan_fail(const struct fi__ctx *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    if (!c->err || c->errlen == 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s:%d: %s", c->origin, c->line, msg);
    for (char *s = c->err; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            *s = '?';
    return -1;
}

struct fi__shown fi__plan_show(const char *t, size_t n)
{
    struct fi__shown sh;
    size_t k = n > FI__SHOWN ? FI__SHOWN : n;

    memcpy(sh.s, t, k);
    strcpy(sh.s + k, n > k ? "..." : "");
    return sh;
}

/* --- rules --------------------------------------------------------------------------------- */

static void rule_init(struct fi_rule *r, enum fi_kind kind, int line)
{
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->rank = -1;
    r->qp_num = -1;
    r->qp_ord = -1;
    r->cq_ord = -1;
    r->step = FI_PHASE_ANY;
    r->rep = FI_PHASE_ANY;
    r->verb = FI_VERB_NONE;
    r->before_ms = UINT64_MAX;
    r->status = IBV_WC_WR_FLUSH_ERR;
    r->ret = -1;
    r->bit = -1;
    r->depth = 1;
    r->rail = -1;
    r->line = line;
}

/* One key=value token t[0..n) of rule r; `seen` collects the keys, so each comes once. */
static int parse_param(const struct fi__ctx *c, struct fi_rule *r, unsigned *seen, const char *t,
                       size_t n)
{
    const char *eq = memchr(t, '=', n);
    if (!eq)
        return fi__plan_fail(c, "expected key=value '%s'", fi__plan_show(t, n).s);
    size_t kn = (size_t)(eq - t), vn = n - kn - 1;
    int k = key_index(t, kn);
    if (k < 0)
        return fi__plan_fail(c, "unknown key '%s'", fi__plan_show(t, kn).s);
    if (!(kind_keys[r->kind] & B(k)))
        return fi__plan_fail(c, "%s does not take key '%s'", fi_kind_name(r->kind), key_names[k]);
    if (*seen & B(k))
        return fi__plan_fail(c, "duplicate key '%s'", key_names[k]);
    *seen |= B(k);
    if (vn == 0)
        return fi__plan_fail(c, "empty value for key '%s'", key_names[k]);
    return fi__plan_value(c, r, (enum fi__key)k, eq + 1, vn);
}

/* The checks that need the whole rule, and the defaults that depend on the fault. */
static int finish_rule(const struct fi__ctx *c, struct fi_rule *r, unsigned seen)
{
    if ((r->kind == FI_STALL || r->kind == FI_DELAY || r->kind == FI_DELAY_FIRST ||
         r->kind == FI_LATE) &&
        !(seen & B(K_MS)))
        return fi__plan_fail(c, "%s needs ms=", fi_kind_name(r->kind));
    if (r->kind == FI_NOMEM && !(seen & B(K_VERB)))
        return fi__plan_fail(c, "nomem needs verb=");
    /* A success rewritten as a success injects nothing, yet would count as fired: a plan that
     * does nothing must not read as one that does. */
    if (r->kind == FI_ERROR && r->status == IBV_WC_SUCCESS)
        return fi__plan_fail(c, "error status=SUCCESS injects nothing");
    /* Checked whenever either end is given: "before=0" alone is as empty as "after=5 before=5". */
    if (r->after_ms >= r->before_ms)
        return fi__plan_fail(c, "empty time window 'after=%" PRIu64 " before=%" PRIu64 "'",
                             r->after_ms, r->before_ms);
    /* A repetition is of some step: rep= alone would match that repetition of every step. */
    if ((seen & B(K_REP)) && !(seen & B(K_STEP)))
        return fi__plan_fail(c, "rep= needs step=");
    /* A poll has no op and no QP: filtering polls on either would never fire. A completion
     * has both, so per=cqe may narrow by them. */
    if ((r->kind == FI_NEGPOLL || r->kind == FI_STALL) && !r->per_cqe &&
        (seen & (B(K_OP) | B(K_QP))))
        return fi__plan_fail(c, "%s counts polls, which have no op or qp: add per=cqe",
                             fi_kind_name(r->kind));
    /* A wire fault starts at a time or when a rank's program starts step N: one of them. It
     * ends by its up= (a link, or a netem's wire made clean again that long after it went on)
     * or, for netem, at before= or the end; a window in time past a start that is a step would
     * be a guess. */
    if (fi_kind_wire(r->kind) && (seen & B(K_STEP))) {
        if (r->step == FI_PHASE_INIT)
            return fi__plan_fail(c, "%s step= is a step of the program, from 0, not init",
                                 fi_kind_name(r->kind));
        if (seen & (B(K_AFTER) | B(K_BEFORE)))
            return fi__plan_fail(c, "%s starts at step= or after=, not both; before= needs after=",
                                 fi_kind_name(r->kind));
    }
    if (r->kind == FI_WIRE) {
        /* Two ends for one window: which one meant? */
        if ((seen & B(K_UP)) && (seen & B(K_BEFORE)))
            return fi__plan_fail(c, "wire ends at before= or up= ms after it starts, not both");
        if (!(seen & (B(K_LOSS) | B(K_DELAY) | B(K_REORDER) | B(K_DUPLICATE) | B(K_CORRUPT))))
            return fi__plan_fail(c, "wire needs loss=, delay=, reorder=, duplicate= or corrupt=");
        /* netem's jitter varies the delay, and it reorders by sending some packets at once,
         * ahead of the delayed: without a delay either would do nothing. */
        if ((seen & (B(K_JITTER) | B(K_REORDER))) && !(seen & B(K_DELAY)))
            return fi__plan_fail(
                c, "wire %s needs delay=", (seen & B(K_JITTER)) ? "jitter=" : "reorder=");
        if (r->jitter_ms > r->delay_ms)
            return fi__plan_fail(c, "wire jitter=%" PRIu64 " is more than its delay=%" PRIu64,
                                 r->jitter_ms, r->delay_ms);
    }
    /* The delay the tests need most is a late receive (RNR); a send delay is asked for. */
    if (r->kind == FI_DELAY && !(seen & B(K_OP)))
        r->ops = FI_OPS(FI_OP_RECV);
    return 0;
}

static int is_blank(char ch)
{
    /* '\r' too, so a plan file written on Windows reads the same. */
    return ch == ' ' || ch == '\t' || ch == '\r';
}

static int ends_rule(char ch)
{
    return ch == '\0' || ch == ';' || ch == '\n';
}

/*
 * '#' starts a comment only at the start of a word, since "qp=#2" uses it too. A rule ends at
 * ';', a newline or the end; its first word is the fault, the rest are key=value.
 */
static int parse_text(struct fi__ctx *c, const char *p, struct fi_plan *out)
{
    const char *start = p;
    struct fi_rule *r = NULL;
    unsigned seen = 0;

    for (;;) {
        if (is_blank(*p)) {
            p++;
        } else if (*p == '#') {
            while (*p && *p != '\n')
                p++;
        } else if (ends_rule(*p)) {
            if (r && finish_rule(c, r, seen))
                return -1;
            r = NULL;
            if (*p == '\0')
                return 0;
            if (*p++ == '\n' && c->line < INT_MAX)
                c->line++;
        } else {
            const char *t = p;
            while (!ends_rule(*p) && !is_blank(*p))
                p++;
            size_t n = (size_t)(p - t);
            if (n > FI__TOKEN_MAX)
                return fi__plan_fail(c, "token too long '%s'", fi__plan_show(t, n).s);
            if (r) {
                if (parse_param(c, r, &seen, t, n))
                    return -1;
                r->src_len = (uint32_t)(p - start) - r->src_off;
                continue;
            }
            int k = fi__kind_index(t, n);
            if (k < 0)
                return fi__plan_fail(c, "unknown fault '%s'", fi__plan_show(t, n).s);
            if (out->nrules == FI_MAX_RULES)
                return fi__plan_fail(c, "too many rules, at most %d '%s'", FI_MAX_RULES,
                                     fi__plan_show(t, n).s);
            r = &out->rules[out->nrules++];
            rule_init(r, (enum fi_kind)k, c->line);
            r->src_off = (uint32_t)(t - start);
            r->src_len = (uint32_t)n;
            seen = 0;
        }
    }
}

int fi_plan_parse(const char *text, const char *origin, struct fi_plan *out, char *err,
                  size_t errlen)
{
    struct fi__ctx c = {origin ? origin : "plan", 1, err, errlen};

    if (err && errlen > 0)
        err[0] = '\0';
    if (!out)
        return fi__plan_fail(&c, "no plan to parse into");
    memset(out, 0, sizeof(*out));
    if (!text)
        return 0;
    if (parse_text(&c, text, out) == 0)
        return 0;
    /* No half-read plan: a caller that ignores the result still injects nothing. */
    memset(out, 0, sizeof(*out));
    return -1;
}
