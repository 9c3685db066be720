/* SPDX-License-Identifier: MIT */
/*
 * The fault plan's values: one key's text into its rule, each checked against its range (the
 * grammar around it is fi_plan.c). Numbers are read by hand, never by the locale.
 */
#include "fi_plan_in.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static int is_xdigit(char ch)
{
    return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/*
 * Decimal or 0x hex, digits only: strtoull alone would take blanks, a sign (wrapping "-1" to
 * 2^64-1) and read "010" as octal. Returns 0, EINVAL or ERANGE.
 */
static int to_u64(const char *v, size_t n, uint64_t *out)
{
    char buf[FI__TOKEN_MAX + 1];
    int base = 10;

    if (n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
        base = 16;
        v += 2;
        n -= 2;
    }
    if (n == 0 || n >= sizeof(buf))
        return EINVAL;
    for (size_t i = 0; i < n; i++)
        if (base == 16 ? !is_xdigit(v[i]) : !is_digit(v[i]))
            return EINVAL;
    memcpy(buf, v, n);
    buf[n] = '\0';
    errno = 0;
    unsigned long long x = strtoull(buf, NULL, base);
    if (errno == ERANGE)
        return ERANGE;
    *out = x;
    return 0;
}

/* A number in [lo, hi], read from v after `skip` characters (the "#" of qp=#K) and shown whole. */
static int num(const struct fi__ctx *c, const char *key, const char *v, size_t n, size_t skip,
               uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t x = 0;
    int rc = to_u64(v + skip, n - skip, &x);

    if (rc == EINVAL)
        return fi__plan_fail(c, "bad number '%s' for %s", fi__plan_show(v, n).s, key);
    if (rc == ERANGE)
        return fi__plan_fail(c, "number too large '%s' for %s", fi__plan_show(v, n).s, key);
    if (x < lo || x > hi) {
        if (hi == UINT64_MAX)
            return fi__plan_fail(c, "%s must be at least %" PRIu64 " '%s'", key, lo,
                                 fi__plan_show(v, n).s);
        return fi__plan_fail(c, "%s must be %" PRIu64 "..%" PRIu64 " '%s'", key, lo, hi,
                             fi__plan_show(v, n).s);
    }
    *out = x;
    return 0;
}

/*
 * By hand rather than strtod, whose decimal point is the host program's locale. Plain
 * decimals only ("0.25", "1", ".5"); digits past the 18th decimal cannot matter to a draw of
 * 53 bits.
 */
static int parse_prob(const struct fi__ctx *c, const char *v, size_t n, double *out)
{
    uint64_t whole = 0, frac = 0, scale = 1;
    int digits = 0, dot = 0, frac_nonzero = 0;

    for (size_t i = 0; i < n; i++) {
        if (v[i] == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (!is_digit(v[i]))
            return fi__plan_fail(c, "bad number '%s' for prob", fi__plan_show(v, n).s);
        unsigned d = (unsigned)(v[i] - '0');
        digits++;
        if (!dot) {
            whole = whole > 1 ? 2 : whole * 10 + d; /* anything past 1 is out of range */
        } else {
            frac_nonzero |= d != 0;
            if (scale < 1000000000000000000ull) {
                frac = frac * 10 + d;
                scale *= 10;
            }
        }
    }
    if (digits == 0)
        return fi__plan_fail(c, "bad number '%s' for prob", fi__plan_show(v, n).s);
    double p = (double)whole + (double)frac / (double)scale;
    if (whole > 1 || (whole == 1 && frac_nonzero) || !(p > 0.0))
        return fi__plan_fail(c, "prob must be in (0,1] '%s'", fi__plan_show(v, n).s);
    *out = p;
    return 0;
}

/* A name with or without "IBV_WC_", any case, or a number. */
static int parse_status(const struct fi__ctx *c, const char *v, size_t n, int *out)
{
    static const char prefix[] = "IBV_WC_";
    const size_t plen = sizeof(prefix) - 1;
    uint64_t x;
    int i = -1;

    if (is_digit(v[0])) {
        if (to_u64(v, n, &x) == 0 && x < (uint64_t)fi__status_count())
            i = (int)x;
    } else if (n > plen && strncasecmp(v, prefix, plen) == 0) {
        i = fi__status_index(v + plen, n - plen);
    } else {
        i = fi__status_index(v, n);
    }
    if (i < 0)
        return fi__plan_fail(c, "unknown status '%s'", fi__plan_show(v, n).s);
    *out = i;
    return 0;
}

static int parse_ret(const struct fi__ctx *c, const char *v, size_t n, int *out)
{
    uint64_t x = 0;
    int rc = v[0] == '-' ? to_u64(v + 1, n - 1, &x) : to_u64(v, n, &x);

    if (rc == EINVAL)
        return fi__plan_fail(c, "bad number '%s' for ret", fi__plan_show(v, n).s);
    if (rc == ERANGE || v[0] != '-' || x == 0 || x > (uint64_t)INT_MAX + 1)
        return fi__plan_fail(c, "ret must be a negative int '%s'", fi__plan_show(v, n).s);
    *out = (int)(-(int64_t)x);
    return 0;
}

/* Distinct indexes, each of 0..nperm-1 once, so the shim can apply it without checking. */
static int parse_perm(const struct fi__ctx *c, struct fi_rule *r, const char *v, size_t n)
{
    const char *p = v, *end = v + n;
    unsigned used = 0;
    int cnt = 0;

    for (;;) {
        const char *e = memchr(p, ',', (size_t)(end - p));
        uint64_t x;
        if (!e)
            e = end;
        if (cnt == FI_MAX_DEVS)
            return fi__plan_fail(c, "perm has more than %d entries '%s'", FI_MAX_DEVS,
                                 fi__plan_show(v, n).s);
        if (to_u64(p, (size_t)(e - p), &x) != 0)
            return fi__plan_fail(c, "bad number in perm '%s'", fi__plan_show(v, n).s);
        r->perm[cnt++] = x < FI_MAX_DEVS ? (int)x : FI_MAX_DEVS;
        if (e == end)
            break;
        p = e + 1;
    }
    if (cnt < 2)
        return fi__plan_fail(c, "perm needs at least 2 entries '%s'", fi__plan_show(v, n).s);
    for (int i = 0; i < cnt; i++) {
        if (r->perm[i] >= cnt || (used & B(r->perm[i])))
            return fi__plan_fail(c, "perm is not a permutation of 0..%d '%s'", cnt - 1,
                                 fi__plan_show(v, n).s);
        used |= B(r->perm[i]);
    }
    r->nperm = cnt;
    return 0;
}

/* num() into an int. */
static int num_int(const struct fi__ctx *c, const char *key, const char *v, size_t n, size_t skip,
                   uint64_t lo, uint64_t hi, int *out)
{
    uint64_t x;
    if (num(c, key, v, n, skip, lo, hi, &x))
        return -1;
    *out = (int)x;
    return 0;
}

/* qp=N (its number) or qp=#K (the K-th QP made). */
static int parse_qp(const struct fi__ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    uint64_t x;
    if (v[0] == '#')
        return num_int(c, "qp", v, vn, 1, 0, INT_MAX, &r->qp_ord);
    if (num(c, "qp", v, vn, 0, 0, FI__QPN_LIMIT - 1, &x))
        return -1;
    r->qp_num = (int64_t)x;
    return 0;
}

/* op=KIND, or several joined by "|": the ops a rule sees. "any" stands alone. */
static int parse_op(const struct fi__ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    unsigned ops = 0;
    int parts = 0;
    bool any = false, twice = false;
    for (size_t at = 0, end; at <= vn; at = end + 1, parts++) {
        for (end = at; end < vn && v[end] != '|'; end++)
            ;
        int o = fi__op_index(v + at, end - at);
        if (o < 0)
            return fi__plan_fail(c, "unknown op '%s'", fi__plan_show(v + at, end - at).s);
        twice |= (ops & FI_OPS((enum fi_op)o)) != 0;
        any |= o == FI_OP_ANY;
        ops |= FI_OPS((enum fi_op)o);
    }
    if (twice || (any && parts > 1))
        return fi__plan_fail(c,
                             "op names each of send, recv, write, read, atomic once, or any "
                             "alone '%s'",
                             fi__plan_show(v, vn).s);
    /* Only a send-side operation can vanish after completing locally. */
    if ((r->kind == FI_LOSE || r->kind == FI_LATE) &&
        (ops & ~(FI_OPS(FI_OP_SEND) | FI_OPS(FI_OP_WRITE))))
        return fi__plan_fail(c, "%s takes op=send, op=write or both '%s'", fi_kind_name(r->kind),
                             fi__plan_show(v, vn).s);
    /* Only a received payload is there to flip: on any other op the rule would never fire. */
    if (r->kind == FI_CORRUPT && (ops & ~FI_OPS(FI_OP_RECV)))
        return fi__plan_fail(c, "corrupt takes op=recv '%s'", fi__plan_show(v, vn).s);
    r->ops = ops;
    return 0;
}

/* The program's own phases (rg_fi_control_v1.set_phase): init, or step N. */
static int parse_step(const struct fi__ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    if (vn == 4 && !memcmp(v, "init", 4)) {
        r->step = FI_PHASE_INIT;
        return 0;
    }
    uint64_t x = 0;
    for (size_t i = 0; i < vn && x <= FI_PHASE_MAX; i++)
        x = v[i] >= '0' && v[i] <= '9' ? x * 10 + (uint64_t)(v[i] - '0') : FI_PHASE_MAX + 1;
    if (x > FI_PHASE_MAX)
        return fi__plan_fail(c, "step is init or a number from 0 to %d '%s'", FI_PHASE_MAX,
                             fi__plan_show(v, vn).s);
    r->step = (int)x;
    return 0;
}

/* What n counts at a poll site: the polls (how many is up to the program's timing) or the
 * completions the CQ handed out (as many in every run, so a sweep's point is reproducible);
 * per=cqe fires at the CQ's next poll after its nth completion. */
static int parse_per(const struct fi__ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    if (vn == 4 && !memcmp(v, "poll", 4))
        r->per_cqe = false;
    else if (vn == 3 && !memcmp(v, "cqe", 3))
        r->per_cqe = true;
    else
        return fi__plan_fail(c, "per is poll or cqe '%s'", fi__plan_show(v, vn).s);
    return 0;
}

/* A wire rate: "1%", "0.5%" or "100%", as netem's own tc spells it, into a fraction in
 * (0, 1]. The percent sign is required, so "loss=1" cannot mean 1 % to one reader and all to
 * another. */
static int parse_percent(const struct fi__ctx *c, const char *key, const char *v, size_t n,
                         double *out)
{
    uint64_t whole = 0, frac = 0, scale = 1;
    int digits = 0, dot = 0;
    if (n < 2 || v[n - 1] != '%')
        return fi__plan_fail(c, "%s is a percentage like 1%% or 0.5%% '%s'", key,
                             fi__plan_show(v, n).s);
    for (size_t i = 0; i + 1 < n; i++) {
        if (v[i] == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (!is_digit(v[i]))
            return fi__plan_fail(c, "%s is a percentage like 1%% or 0.5%% '%s'", key,
                                 fi__plan_show(v, n).s);
        unsigned d = (unsigned)(v[i] - '0');
        digits++;
        if (!dot)
            whole = whole > 100 ? 101 : whole * 10 + d;
        else if (scale < 1000000) {
            frac = frac * 10 + d;
            scale *= 10;
        } else if (d)
            return fi__plan_fail(c, "%s has more decimals than netem keeps '%s'", key,
                                 fi__plan_show(v, n).s);
    }
    double pct = (double)whole + (double)frac / (double)scale;
    if (!digits || !(pct > 0.0) || pct > 100.0)
        return fi__plan_fail(c, "%s must be more than 0%% and at most 100%% '%s'", key,
                             fi__plan_show(v, n).s);
    *out = pct / 100.0;
    return 0;
}

/* One frame of a site=, v[0..vn) "OBJ+0xOFF", appended to r->site as the shim names it: the
 * object's file name (a path is cut to it, so a plan written on one machine names the same
 * site on another) and the offset in lower-case hex. */
static int site_frame(const struct fi__ctx *c, struct fi_rule *r, const char *v, size_t vn,
                      const char *whole, size_t wn)
{
    const char *plus = NULL;
    for (size_t i = 0; i + 2 < vn; i++)
        if (v[i] == '+' && v[i + 1] == '0' && (v[i + 2] == 'x' || v[i + 2] == 'X'))
            plus = v + i;
    if (!plus)
        return fi__plan_fail(c, "site needs OBJECT+0xOFFSET '%s'", fi__plan_show(whole, wn).s);
    const char *obj = v;
    for (const char *p = v; p < plus; p++)
        if (*p == '/')
            obj = p + 1;
    size_t on = (size_t)(plus - obj);
    if (on == 0 || on >= FI_SITE_OBJ_MAX)
        return fi__plan_fail(c, "site's object name is %s '%s'", on ? "too long" : "empty",
                             fi__plan_show(whole, wn).s);
    /* "0x..." after the '+': the plan's own number reader, hex digits only. */
    uint64_t off = 0;
    size_t hn = vn - (size_t)(plus + 1 - v);
    if (hn <= 2 || hn > 18 || to_u64(plus + 1, hn, &off) != 0)
        return fi__plan_fail(c, "site's offset is not a 64-bit hex number '%s'",
                             fi__plan_show(whole, wn).s);
    size_t at = strlen(r->site);
    int w = snprintf(r->site + at, sizeof(r->site) - at, "%s%.*s+0x%llx", at ? "<" : "", (int)on,
                     obj, (unsigned long long)off);
    if (w < 0 || (size_t)w >= sizeof(r->site) - at)
        return fi__plan_fail(c, "site is too long '%s'", fi__plan_show(whole, wn).s);
    r->site_depth++;
    return 0;
}

/* Whether v[0..n) ends as a frame does: "+0x" and hex digits to its end. */
static bool ends_frame(const char *v, size_t n)
{
    size_t h = 0;
    while (h < n && is_xdigit(v[n - 1 - h]))
        h++;
    return h > 0 && h <= 16 && n - h >= 4 && (v[n - h - 1] == 'x' || v[n - h - 1] == 'X') &&
           v[n - h - 2] == '0' && v[n - h - 3] == '+';
}

/* site=FRAME[<FRAME...]: a call site, or a call path of up to FI_SITE_DEPTH frames. A frame
 * ends at a '<' that follows its hex offset, so an object's path may hold a '<' itself. */
static int parse_site(const struct fi__ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    r->site[0] = '\0';
    r->site_depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= vn; i++) {
        if (i < vn && !(v[i] == '<' && ends_frame(v + start, i - start)))
            continue;
        if (r->site_depth == FI_SITE_DEPTH)
            return fi__plan_fail(c, "site has more than %d frames '%s'", FI_SITE_DEPTH,
                                 fi__plan_show(v, vn).s);
        if (site_frame(c, r, v + start, i - start, v, vn) != 0)
            return -1;
        start = i + 1;
    }
    return 0;
}

int fi__plan_value(const struct fi__ctx *c, struct fi_rule *r, enum fi__key k, const char *v,
                   size_t vn)
{
    switch (k) {
    case K_RANK:
        return num_int(c, "rank", v, vn, 0, 0, INT_MAX, &r->rank);
    case K_DEV:
        if (vn >= FI_DEVNAME_MAX)
            return fi__plan_fail(c, "device name too long '%s'", fi__plan_show(v, vn).s);
        memcpy(r->dev, v, vn);
        r->dev[vn] = '\0';
        return 0;
    case K_QP:
        return parse_qp(c, r, v, vn);
    case K_CQ:
        /* A CQ has no number on the wire to name it by; only its creation order identifies it. */
        if (v[0] != '#')
            return fi__plan_fail(c, "cq needs the #K form '%s'", fi__plan_show(v, vn).s);
        return num_int(c, "cq", v, vn, 1, 0, INT_MAX, &r->cq_ord);
    case K_OP:
        return parse_op(c, r, v, vn);
    case K_VERB: {
        int vb = fi__verb_index(v, vn);
        if (vb < 0)
            return fi__plan_fail(c, "unknown verb '%s'", fi__plan_show(v, vn).s);
        r->verb = (enum fi_verb)vb;
        return 0;
    }
    case K_AFTER:
        return num(c, "after", v, vn, 0, 0, UINT64_MAX, &r->after_ms);
    case K_BEFORE:
        return num(c, "before", v, vn, 0, 0, UINT64_MAX, &r->before_ms);
    case K_NTH:
        return num(c, "nth", v, vn, 0, 1, UINT64_MAX, &r->nth);
    case K_EVERY:
        return num(c, "every", v, vn, 0, 1, UINT64_MAX, &r->every);
    case K_PROB:
        return parse_prob(c, v, vn, &r->prob);
    case K_SEED:
        return num(c, "seed", v, vn, 0, 0, UINT64_MAX, &r->seed);
    case K_COUNT:
        return num(c, "count", v, vn, 0, 1, UINT64_MAX, &r->count);
    case K_STATUS:
        return parse_status(c, v, vn, &r->status);
    case K_RET:
        return parse_ret(c, v, vn, &r->ret);
    case K_MS:
        return num(c, "ms", v, vn, 0, 1, FI__MS_MAX, &r->ms);
    case K_BIT:
        return num_int(c, "bit", v, vn, 0, 0, FI__BIT_LIMIT - 1, &r->bit);
    case K_PERM:
        return parse_perm(c, r, v, vn);
    case K_STEP:
        return parse_step(c, r, v, vn);
    case K_REP:
        return num_int(c, "rep", v, vn, 0, 0, FI_PHASE_MAX, &r->rep);
    case K_CODE:
        return num_int(c, "code", v, vn, 0, 0, 255, &r->code);
    case K_PER:
        return parse_per(c, r, v, vn);
    case K_RAIL:
        return num_int(c, "rail", v, vn, 0, 0, FI_MAX_DEVS - 1, &r->rail);
    case K_LOSS:
        return parse_percent(c, "loss", v, vn, &r->loss);
    case K_REORDER:
        return parse_percent(c, "reorder", v, vn, &r->reorder);
    case K_DUPLICATE:
        return parse_percent(c, "duplicate", v, vn, &r->duplicate);
    case K_CORRUPT:
        return parse_percent(c, "corrupt", v, vn, &r->corrupt_rate);
    case K_DELAY:
        return num(c, "delay", v, vn, 0, 1, FI__MS_MAX, &r->delay_ms);
    case K_JITTER:
        return num(c, "jitter", v, vn, 0, 1, FI__MS_MAX, &r->jitter_ms);
    case K_UP:
        return num(c, "up", v, vn, 0, 1, FI__MS_MAX, &r->up_ms);
    case K_SITE:
        return parse_site(c, r, v, vn);
    case K_DEPTH:
        return num_int(c, "depth", v, vn, 0, 1, FI_SITE_DEPTH, &r->depth);
    case K__N:
        break;
    }
    return -1;
}
