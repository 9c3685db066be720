/* SPDX-License-Identifier: MIT */
/*
 * Records of every kind of the shim's evidence schema (faultinject/rg_fi_events.h) filled with
 * edge and sentinel values, and two records compared field by field: what the schema's
 * property test (tests/harness/evidence/test_ev_schema.c) and the evidence fuzz target
 * (tests/fuzz/fuzz_evidence.c) write and read back.
 */
#ifndef RG_EV_GEN_H
#define RG_EV_GEN_H

#include "rg_fi_events.h"

#include <stddef.h>
#include <stdint.h>

/* A stream of 64-bit draws: the test's seeded generator, or the fuzzer's input. */
typedef uint64_t (*rg_ev_draw)(void *st);

/*
 * Fills rec (a struct rg_evr_<kind>) from draws: each field an edge of its type (0, 2^63 - 1,
 * 2^63, 2^64 - 1, INT64_MIN, "unknown", an empty list, strings of quotes, backslashes,
 * control bytes and bytes from 0x80) or a drawn value; each optional field present or not.
 * Strings are made in strs[len].
 */
void rg_ev_gen(enum rg_ev_kind kind, void *rec, rg_ev_draw draw, void *st, char *strs, size_t len);

/* 0 when a and b (records of kind) hold the same fields, the optional ones present alike;
 * else -1 with the first difference in why. Times agree to the writer's 0.001 ms. */
int rg_ev_same(enum rg_ev_kind kind, const void *a, const void *b, char *why, size_t whylen);

/* The same for a record of any table in this form (the runner's wire evidence, rg_ev_wire.h). */
void rg_ev_gen_k(const rg_ev_kdef *k, void *rec, rg_ev_draw draw, void *st, char *strs, size_t len);
int rg_ev_same_k(const rg_ev_kdef *k, const void *a, const void *b, char *why, size_t whylen);

#endif
