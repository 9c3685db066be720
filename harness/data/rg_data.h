/* SPDX-License-Identifier: MIT */
/*
 * Inputs and expected outputs, computed from (seed, step, repeat, rank, element) alone, so every
 * rank knows exactly what every other rank contributed and checks its result bit-exact without
 * trusting the transport. Values for reductions are small integers chosen per dtype and
 * operation so that every result is exact in every type and in any order (no rounding, no
 * overflow), or (rg_values) values that need one rounding step or hold infinities and NaNs;
 * copies (gather, broadcast, send) use arbitrary bit patterns, NaNs included.
 */
#ifndef RG_DATA_H
#define RG_DATA_H

#include "railguard/plugin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What a reduction's inputs look like (a scenario step's `values:`):
 *   EXACT     small integers: every result exact in every type and order (the default)
 *   ROUNDING  per element, two ranks give values whose sum (or product) is not representable
 *             in the dtype and every other rank gives 0 (or 1), so the result needs exactly
 *             one rounding, whatever the order and whether the transport adds in the dtype
 *             or a wider type; max and min get non-integers. Expected: correctly rounded
 *             (to nearest, ties to even). float16, bfloat16, float32 (every redop), float64
 *             (sum, max, min), complex64 (sum)
 *   SPECIAL   +Inf, -Inf and NaN among small integers where the redop defines the result:
 *             Inf + -Inf and Inf * 0 are NaN; max and min see infinities but no NaN. NaNs
 *             compare by class. float16, bfloat16, float32, float64
 */
typedef enum { RG_VALUES_EXACT, RG_VALUES_ROUNDING, RG_VALUES_SPECIAL, RG_VALUES_COUNT } rg_values;

extern const char *const rg_data_values_names[RG_VALUES_COUNT];

/* NULL when `values` applies to (dt, op), else why not (one phrase, for an error line). */
const char *rg_data_values_problem(rg_values values, rg_dtype dt, rg_redop op);

/* Which stream of values: one per (scenario seed, program step, repeat). */
typedef struct rg_data_key {
    uint64_t seed;
    uint32_t step;
    uint32_t rep;
    rg_values values; /* reductions only; copies are arbitrary bits whatever it says */
    int nranks;       /* ROUNDING and SPECIAL pick contributors among the ranks */
    /* SPECIAL: what the transport declared max and min make of a NaN (rg_nan_minmax): a NaN
     * goes into max and min only when it declared one, and the expected result follows it. */
    int nan_minmax;
} rg_data_key;

/* The dtype and redop names, by enum value: the scenario grammar's words and the reports'
 * (the harness's own tables: it does not link the transport). */
extern const char *const rg_data_dtype_names[RG_DTYPE_COUNT];
extern const char *const rg_data_redop_names[RG_REDOP_COUNT];

/* Bytes per element of dt. */
size_t rg_data_size(rg_dtype dt);
const char *rg_data_dtype_name(rg_dtype dt);
const char *rg_data_redop_name(rg_redop op);

/*
 * Rank `rank`'s contribution, elements [offset, offset + n) of its stream. `op` < 0 means a
 * copy (arbitrary bits); otherwise values suited to reducing with op.
 */
void rg_data_fill(void *buf, size_t n, rg_dtype dt, int op, const rg_data_key *k, int rank,
                  size_t offset);

/* The reduction over ranks 0..nranks-1 of elements [offset, offset + n), encoded in dt. */
void rg_data_expect_reduce(void *out, size_t n, rg_dtype dt, rg_redop op, const rg_data_key *k,
                           int nranks, size_t offset);

/*
 * Index of the first element of got that differs from want, or n when none does. With
 * `fold_zero` (a reduction's result) floating types treat +0 and -0 as equal (the order of a
 * reduction decides the sign of an exact zero) and any NaN as any other (IEEE leaves the
 * payload open); everything else is compared bit for bit.
 */
size_t rg_data_compare(const void *got, const void *want, size_t n, rg_dtype dt, bool fold_zero);

/* Guard bands: `len` bytes of a pattern that a write past a buffer's end would change. */
#define RG_GUARD_BYTES 64
void rg_guard_fill(uint8_t *g, size_t len);
bool rg_guard_intact(const uint8_t *g, size_t len);

#endif
