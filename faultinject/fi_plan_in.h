/* SPDX-License-Identifier: MIT */
/*
 * fi_plan_in.h - the plan parser's insides, shared by its three files and nothing else:
 *   fi_plan.c        the grammar: rules, keys, which fault takes which, the checks of a whole rule
 *   fi_plan_value.c  one key's value: numbers, probabilities, statuses, permutations, phases
 *   fi_plan_names.c  the names of faults, ops, verbs and completion statuses, both ways
 * Like the rest of the parser it allocates nothing and keeps no state.
 */
#ifndef FI_PLAN_IN_H
#define FI_PLAN_IN_H

#include "fi_plan.h"

#include <stddef.h>

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
#define B(k) (1u << (k))

/* One list for the enum and the names, so they cannot drift apart. */
#define FI__KEYS(X)                                                                                \
    X(RANK, rank), X(DEV, dev), X(QP, qp), X(CQ, cq), X(OP, op), X(AFTER, after),                  \
        X(BEFORE, before), X(VERB, verb), X(NTH, nth), X(EVERY, every), X(PROB, prob),             \
        X(SEED, seed), X(COUNT, count), X(STATUS, status), X(RET, ret), X(MS, ms), X(BIT, bit),    \
        X(PERM, perm), X(STEP, step), X(REP, rep), X(PER, per), X(CODE, code), X(RAIL, rail),      \
        X(LOSS, loss), X(DELAY, delay), X(JITTER, jitter), X(REORDER, reorder),                    \
        X(DUPLICATE, duplicate), X(CORRUPT, corrupt), X(UP, up), X(SITE, site), X(DEPTH, depth)
#define FI__KEY_ENUM(k, name) K_##k
#define FI__KEY_NAME(k, name) [K_##k] = #name
enum fi__key { FI__KEYS(FI__KEY_ENUM), K__N };

/* Where the parser is, and where its one error line goes. */
struct fi__ctx {
    const char *origin;
    int line;
    char *err;
    size_t errlen;
};

/* Writes "ORIGIN:LINE: what", made one line whatever bytes the plan held, and returns -1. */
int fi__plan_fail(const struct fi__ctx *c, const char *fmt, ...) FI__PRINTF(2, 3);

/* A token as a message shows it: cut at FI__SHOWN characters. */
struct fi__shown {
    char s[FI__SHOWN + 4];
};
struct fi__shown fi__plan_show(const char *t, size_t n);

/* One key's value v[0..vn) into the rule: 0, or -1 with the error written. */
int fi__plan_value(const struct fi__ctx *c, struct fi_rule *r, enum fi__key k, const char *v,
                   size_t vn);

/* The index of the name t[0..len), or -1: faults and ops as written, verbs but "none",
 * statuses in any case (without their IBV_WC_ prefix). */
int fi__kind_index(const char *t, size_t len);
int fi__op_index(const char *t, size_t len);
int fi__verb_index(const char *t, size_t len);
int fi__status_index(const char *t, size_t len);
/* Completion statuses are numbered 0..fi__status_count()-1. */
int fi__status_count(void);

#endif
