/* SPDX-License-Identifier: MIT */
/*
 * The fault plan's parser (its trigger is fi_fires.c). The shim runs this in its constructor,
 * inside whatever program it was preloaded into, and on that program's data path: so it allocates
 * nothing, keeps no state and never depends on the locale.
 */
#include "fi_plan.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * Far longer than any valid token (the longest is "dev=" and a 63-character name), and short
 * enough that every number fits one stack buffer and every message stays readable.
 */
#define FI__TOKEN_MAX 255
/* Messages show this much of a token, then "...". */
#define FI__SHOWN 48
/* An hour: a longer stall or delay is a typo, and would outlive any test's deadline anyway. */
#define FI__MS_MAX 3600000
/* QP numbers are 24 bits on the wire. */
#define FI__QPN_LIMIT (1 << 24)
/* A bit index past 16 Mibit (2 MiB of payload) is a typo rather than a plan. */
#define FI__BIT_LIMIT (1 << 24)

#define FI__PRINTF(f, a) __attribute__((format(printf, f, a)))

/* --- names --------------------------------------------------------------------------------- */

static const char *const kind_names[FI_KIND_MAX] = {
    [FI_ERROR] = "error",
    [FI_NEGPOLL] = "negpoll",
    [FI_STALL] = "stall",
    [FI_DELAY] = "delay",
    [FI_DELAY_FIRST] = "delay_first",
    [FI_LOSE] = "lose",
    [FI_NOMEM] = "nomem",
    [FI_CORRUPT] = "corrupt",
    [FI_SWAP_RAILS] = "swap_rails",
    [FI_COUNT] = "count",
    [FI_LATE] = "late",
    [FI_KILL] = "kill",
    [FI_STOP] = "stop",
    [FI_EXIT] = "exit",
    [FI_OWNERSHIP] = "ownership",
};

static const char *const op_names[] = {
    [FI_OP_ANY] = "any",     [FI_OP_SEND] = "send", [FI_OP_RECV] = "recv",
    [FI_OP_WRITE] = "write", [FI_OP_READ] = "read", [FI_OP_ATOMIC] = "atomic",
};

static const char *const verb_names[] = {
    [FI_VERB_NONE] = "none",           [FI_VERB_POST_SEND] = "post_send",
    [FI_VERB_POST_RECV] = "post_recv", [FI_VERB_REG_MR] = "reg_mr",
    [FI_VERB_CREATE_QP] = "create_qp", [FI_VERB_CREATE_CQ] = "create_cq",
    [FI_VERB_ALLOC_PD] = "alloc_pd",
};

/* Named through the verbs header's own constants, so a renumbering there cannot skew a name. */
#define FI__WC_STATUSES(X)                                                                         \
    X(SUCCESS), X(LOC_LEN_ERR), X(LOC_QP_OP_ERR), X(LOC_EEC_OP_ERR), X(LOC_PROT_ERR),              \
        X(WR_FLUSH_ERR), X(MW_BIND_ERR), X(BAD_RESP_ERR), X(LOC_ACCESS_ERR), X(REM_INV_REQ_ERR),   \
        X(REM_ACCESS_ERR), X(REM_OP_ERR), X(RETRY_EXC_ERR), X(RNR_RETRY_EXC_ERR),                  \
        X(LOC_RDD_VIOL_ERR), X(REM_INV_RD_REQ_ERR), X(REM_ABORT_ERR), X(INV_EECN_ERR),             \
        X(INV_EEC_STATE_ERR), X(FATAL_ERR), X(RESP_TIMEOUT_ERR), X(GENERAL_ERR), X(TM_ERR),        \
        X(TM_RNDV_INCOMPLETE)
#define FI__WC_NAME(x) [IBV_WC_##x] = #x
static const char *const status_names[] = {FI__WC_STATUSES(FI__WC_NAME)};

#define FI__NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *fi_kind_name(enum fi_kind k)
{
    return (int)k >= 0 && (int)k < FI_KIND_MAX ? kind_names[k] : "?";
}

const char *fi_op_name(enum fi_op o)
{
    return (int)o >= 0 && (int)o < FI__NELEM(op_names) ? op_names[o] : "?";
}

const char *fi_verb_name(enum fi_verb v)
{
    return (int)v >= 0 && (int)v < FI__NELEM(verb_names) ? verb_names[v] : "?";
}

const char *fi_status_name(int status)
{
    return status >= 0 && status < FI__NELEM(status_names) ? status_names[status] : NULL;
}

/* The index in names[first..n) of the word t[0..len), or -1. */
static int lookup(const char *const *names, int first, int n, const char *t, size_t len, int nocase)
{
    for (int i = first; i < n; i++) {
        if (!names[i] || strlen(names[i]) != len)
            continue;
        if (nocase ? strncasecmp(names[i], t, len) == 0 : strncmp(names[i], t, len) == 0)
            return i;
    }
    return -1;
}

/* --- keys: which ones each fault takes ----------------------------------------------------- */

/* One list for the enum and the names, so they cannot drift apart. */
#define FI__KEYS(X)                                                                                \
    X(RANK, rank), X(DEV, dev), X(QP, qp), X(CQ, cq), X(OP, op), X(AFTER, after),                  \
        X(BEFORE, before), X(VERB, verb), X(NTH, nth), X(EVERY, every), X(PROB, prob),             \
        X(SEED, seed), X(COUNT, count), X(STATUS, status), X(RET, ret), X(MS, ms), X(BIT, bit),    \
        X(PERM, perm), X(STEP, step), X(REP, rep), X(PER, per), X(CODE, code)
#define FI__KEY_ENUM(k, name) K_##k
#define FI__KEY_NAME(k, name) [K_##k] = #name
enum key { FI__KEYS(FI__KEY_ENUM), K__N };
static const char *const key_names[K__N] = {FI__KEYS(FI__KEY_NAME)};

#define B(k) (1u << (k))
#define FILTERS                                                                                    \
    (B(K_RANK) | B(K_DEV) | B(K_QP) | B(K_CQ) | B(K_OP) | B(K_AFTER) | B(K_BEFORE) | B(K_STEP) |   \
     B(K_REP))
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
 */
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
};

/* --- messages ------------------------------------------------------------------------------ */

struct ctx {
    const char *origin;
    int line;
    char *err;
    size_t errlen;
};

static int fail(const struct ctx *c, const char *fmt, ...) FI__PRINTF(2, 3);

/* Writes "ORIGIN:LINE: what", made one line whatever bytes the plan held, and returns -1. */
static int fail(const struct ctx *c, const char *fmt, ...)
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

/* A token as a message shows it: cut at FI__SHOWN characters. */
struct shown {
    char s[FI__SHOWN + 4];
};

static struct shown show(const char *t, size_t n)
{
    struct shown sh;
    size_t k = n > FI__SHOWN ? FI__SHOWN : n;

    memcpy(sh.s, t, k);
    strcpy(sh.s + k, n > k ? "..." : "");
    return sh;
}

/* --- values -------------------------------------------------------------------------------- */

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
static int num(const struct ctx *c, const char *key, const char *v, size_t n, size_t skip,
               uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t x = 0;
    int rc = to_u64(v + skip, n - skip, &x);

    if (rc == EINVAL)
        return fail(c, "bad number '%s' for %s", show(v, n).s, key);
    if (rc == ERANGE)
        return fail(c, "number too large '%s' for %s", show(v, n).s, key);
    if (x < lo || x > hi) {
        if (hi == UINT64_MAX)
            return fail(c, "%s must be at least %" PRIu64 " '%s'", key, lo, show(v, n).s);
        return fail(c, "%s must be %" PRIu64 "..%" PRIu64 " '%s'", key, lo, hi, show(v, n).s);
    }
    *out = x;
    return 0;
}

/*
 * By hand rather than strtod, whose decimal point is the host program's locale. Plain
 * decimals only ("0.25", "1", ".5"); digits past the 18th decimal cannot matter to a draw of
 * 53 bits.
 */
static int parse_prob(const struct ctx *c, const char *v, size_t n, double *out)
{
    uint64_t whole = 0, frac = 0, scale = 1;
    int digits = 0, dot = 0, frac_nonzero = 0;

    for (size_t i = 0; i < n; i++) {
        if (v[i] == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (!is_digit(v[i]))
            return fail(c, "bad number '%s' for prob", show(v, n).s);
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
        return fail(c, "bad number '%s' for prob", show(v, n).s);
    double p = (double)whole + (double)frac / (double)scale;
    if (whole > 1 || (whole == 1 && frac_nonzero) || !(p > 0.0))
        return fail(c, "prob must be in (0,1] '%s'", show(v, n).s);
    *out = p;
    return 0;
}

/* A name with or without "IBV_WC_", any case, or a number. */
static int parse_status(const struct ctx *c, const char *v, size_t n, int *out)
{
    static const char prefix[] = "IBV_WC_";
    const size_t plen = sizeof(prefix) - 1;
    uint64_t x;
    int i = -1;

    if (is_digit(v[0])) {
        if (to_u64(v, n, &x) == 0 && x < (uint64_t)FI__NELEM(status_names))
            i = (int)x;
    } else if (n > plen && strncasecmp(v, prefix, plen) == 0) {
        i = lookup(status_names, 0, FI__NELEM(status_names), v + plen, n - plen, 1);
    } else {
        i = lookup(status_names, 0, FI__NELEM(status_names), v, n, 1);
    }
    if (i < 0)
        return fail(c, "unknown status '%s'", show(v, n).s);
    *out = i;
    return 0;
}

static int parse_ret(const struct ctx *c, const char *v, size_t n, int *out)
{
    uint64_t x = 0;
    int rc = v[0] == '-' ? to_u64(v + 1, n - 1, &x) : to_u64(v, n, &x);

    if (rc == EINVAL)
        return fail(c, "bad number '%s' for ret", show(v, n).s);
    if (rc == ERANGE || v[0] != '-' || x == 0 || x > (uint64_t)INT_MAX + 1)
        return fail(c, "ret must be a negative int '%s'", show(v, n).s);
    *out = (int)(-(int64_t)x);
    return 0;
}

/* Distinct indexes, each of 0..nperm-1 once, so the shim can apply it without checking. */
static int parse_perm(const struct ctx *c, struct fi_rule *r, const char *v, size_t n)
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
            return fail(c, "perm has more than %d entries '%s'", FI_MAX_DEVS, show(v, n).s);
        if (to_u64(p, (size_t)(e - p), &x) != 0)
            return fail(c, "bad number in perm '%s'", show(v, n).s);
        r->perm[cnt++] = x < FI_MAX_DEVS ? (int)x : FI_MAX_DEVS;
        if (e == end)
            break;
        p = e + 1;
    }
    if (cnt < 2)
        return fail(c, "perm needs at least 2 entries '%s'", show(v, n).s);
    for (int i = 0; i < cnt; i++) {
        if (r->perm[i] >= cnt || (used & B(r->perm[i])))
            return fail(c, "perm is not a permutation of 0..%d '%s'", cnt - 1, show(v, n).s);
        used |= B(r->perm[i]);
    }
    r->nperm = cnt;
    return 0;
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
    r->op = FI_OP_ANY;
    r->verb = FI_VERB_NONE;
    r->before_ms = UINT64_MAX;
    r->status = IBV_WC_WR_FLUSH_ERR;
    r->ret = -1;
    r->bit = -1;
    r->line = line;
}

/* One key=value token t[0..n) of rule r; `seen` collects the keys, so each comes once. */
/* num() into an int. */
static int num_int(const struct ctx *c, const char *key, const char *v, size_t n, size_t skip,
                   uint64_t lo, uint64_t hi, int *out)
{
    uint64_t x;
    if (num(c, key, v, n, skip, lo, hi, &x))
        return -1;
    *out = (int)x;
    return 0;
}

/* qp=N (its number) or qp=#K (the K-th QP made). */
static int parse_qp(const struct ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    uint64_t x;
    if (v[0] == '#')
        return num_int(c, "qp", v, vn, 1, 0, INT_MAX, &r->qp_ord);
    if (num(c, "qp", v, vn, 0, 0, FI__QPN_LIMIT - 1, &x))
        return -1;
    r->qp_num = (int64_t)x;
    return 0;
}

static int parse_op(const struct ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    int o = lookup(op_names, 0, FI__NELEM(op_names), v, vn, 0);
    if (o < 0)
        return fail(c, "unknown op '%s'", show(v, vn).s);
    /* Only a send-side operation can vanish after completing locally. */
    if ((r->kind == FI_LOSE || r->kind == FI_LATE) && o != FI_OP_ANY && o != FI_OP_SEND &&
        o != FI_OP_WRITE)
        return fail(c, "%s takes op=send or op=write '%s'", kind_names[r->kind], show(v, vn).s);
    /* Only a received payload is there to flip: on any other op the rule would never fire. */
    if (r->kind == FI_CORRUPT && o != FI_OP_ANY && o != FI_OP_RECV)
        return fail(c, "corrupt takes op=recv '%s'", show(v, vn).s);
    r->op = (enum fi_op)o;
    return 0;
}

/* The program's own phases (rg_fi_control_v1.set_phase): init, or step N. */
static int parse_step(const struct ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    if (vn == 4 && !memcmp(v, "init", 4)) {
        r->step = FI_PHASE_INIT;
        return 0;
    }
    uint64_t x = 0;
    for (size_t i = 0; i < vn && x <= FI_PHASE_MAX; i++)
        x = v[i] >= '0' && v[i] <= '9' ? x * 10 + (uint64_t)(v[i] - '0') : FI_PHASE_MAX + 1;
    if (x > FI_PHASE_MAX)
        return fail(c, "step is init or a number from 0 to %d '%s'", FI_PHASE_MAX, show(v, vn).s);
    r->step = (int)x;
    return 0;
}

/* What n counts at a poll site: the polls (how many is up to the program's timing) or the
 * completions the CQ handed out (as many in every run, so a sweep's point is reproducible);
 * per=cqe fires at the CQ's next poll after its nth completion. */
static int parse_per(const struct ctx *c, struct fi_rule *r, const char *v, size_t vn)
{
    if (vn == 4 && !memcmp(v, "poll", 4))
        r->per_cqe = false;
    else if (vn == 3 && !memcmp(v, "cqe", 3))
        r->per_cqe = true;
    else
        return fail(c, "per is poll or cqe '%s'", show(v, vn).s);
    return 0;
}

/* One key's value into the rule. */
static int parse_value(const struct ctx *c, struct fi_rule *r, enum key k, const char *v, size_t vn)
{
    switch (k) {
    case K_RANK:
        return num_int(c, "rank", v, vn, 0, 0, INT_MAX, &r->rank);
    case K_DEV:
        if (vn >= FI_DEVNAME_MAX)
            return fail(c, "device name too long '%s'", show(v, vn).s);
        memcpy(r->dev, v, vn);
        r->dev[vn] = '\0';
        return 0;
    case K_QP:
        return parse_qp(c, r, v, vn);
    case K_CQ:
        /* A CQ has no number on the wire to name it by; only its creation order identifies it. */
        if (v[0] != '#')
            return fail(c, "cq needs the #K form '%s'", show(v, vn).s);
        return num_int(c, "cq", v, vn, 1, 0, INT_MAX, &r->cq_ord);
    case K_OP:
        return parse_op(c, r, v, vn);
    case K_VERB: {
        /* "none" is the unset value, not something nomem can fail. */
        int vb = lookup(verb_names, FI_VERB_NONE + 1, FI__NELEM(verb_names), v, vn, 0);
        if (vb < 0)
            return fail(c, "unknown verb '%s'", show(v, vn).s);
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
    case K__N:
        break;
    }
    return -1;
}

static int parse_param(const struct ctx *c, struct fi_rule *r, unsigned *seen, const char *t,
                       size_t n)
{
    const char *eq = memchr(t, '=', n);
    if (!eq)
        return fail(c, "expected key=value '%s'", show(t, n).s);
    size_t kn = (size_t)(eq - t), vn = n - kn - 1;
    int k = lookup(key_names, 0, K__N, t, kn, 0);
    if (k < 0)
        return fail(c, "unknown key '%s'", show(t, kn).s);
    if (!(kind_keys[r->kind] & B(k)))
        return fail(c, "%s does not take key '%s'", kind_names[r->kind], key_names[k]);
    if (*seen & B(k))
        return fail(c, "duplicate key '%s'", key_names[k]);
    *seen |= B(k);
    if (vn == 0)
        return fail(c, "empty value for key '%s'", key_names[k]);
    return parse_value(c, r, (enum key)k, eq + 1, vn);
}

/* The checks that need the whole rule, and the defaults that depend on the fault. */
static int finish_rule(const struct ctx *c, struct fi_rule *r, unsigned seen)
{
    if ((r->kind == FI_STALL || r->kind == FI_DELAY || r->kind == FI_DELAY_FIRST ||
         r->kind == FI_LATE) &&
        !(seen & B(K_MS)))
        return fail(c, "%s needs ms=", kind_names[r->kind]);
    if (r->kind == FI_NOMEM && !(seen & B(K_VERB)))
        return fail(c, "nomem needs verb=");
    /* A success rewritten as a success injects nothing, yet would count as fired: a plan that
     * does nothing must not read as one that does. */
    if (r->kind == FI_ERROR && r->status == IBV_WC_SUCCESS)
        return fail(c, "error status=SUCCESS injects nothing");
    /* Checked whenever either end is given: "before=0" alone is as empty as "after=5 before=5". */
    if (r->after_ms >= r->before_ms)
        return fail(c, "empty time window 'after=%" PRIu64 " before=%" PRIu64 "'", r->after_ms,
                    r->before_ms);
    /* A repetition is of some step: rep= alone would match that repetition of every step. */
    if ((seen & B(K_REP)) && !(seen & B(K_STEP)))
        return fail(c, "rep= needs step=");
    /* A poll has no op and no QP: filtering polls on either would never fire. A completion
     * has both, so per=cqe may narrow by them. */
    if ((r->kind == FI_NEGPOLL || r->kind == FI_STALL) && !r->per_cqe &&
        (seen & (B(K_OP) | B(K_QP))))
        return fail(c, "%s counts polls, which have no op or qp: add per=cqe", kind_names[r->kind]);
    /* The delay the tests need most is a late receive (RNR); a send delay is asked for. */
    if (r->kind == FI_DELAY && !(seen & B(K_OP)))
        r->op = FI_OP_RECV;
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
static int parse_text(struct ctx *c, const char *p, struct fi_plan *out)
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
                return fail(c, "token too long '%s'", show(t, n).s);
            if (r) {
                if (parse_param(c, r, &seen, t, n))
                    return -1;
                r->src_len = (uint32_t)(p - start) - r->src_off;
                continue;
            }
            int k = lookup(kind_names, 0, FI_KIND_MAX, t, n, 0);
            if (k < 0)
                return fail(c, "unknown fault '%s'", show(t, n).s);
            if (out->nrules == FI_MAX_RULES)
                return fail(c, "too many rules, at most %d '%s'", FI_MAX_RULES, show(t, n).s);
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
    struct ctx c = {origin ? origin : "plan", 1, err, errlen};

    if (err && errlen > 0)
        err[0] = '\0';
    if (!out)
        return fail(&c, "no plan to parse into");
    memset(out, 0, sizeof(*out));
    if (!text)
        return 0;
    if (parse_text(&c, text, out) == 0)
        return 0;
    /* No half-read plan: a caller that ignores the result still injects nothing. */
    memset(out, 0, sizeof(*out));
    return -1;
}
