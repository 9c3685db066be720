/* SPDX-License-Identifier: MIT */
/*
 * Inputs and expected outputs, computed from (seed, step, repeat, rank, element) alone, so every
 * rank knows exactly what every other rank contributed and checks its result bit-exact without
 * trusting the transport. Values for reductions are small integers chosen per dtype and
 * operation so that every result is exact in every type and in any order (no rounding, no
 * overflow); copies (gather, broadcast, send) use arbitrary bit patterns, NaNs included.
 */
#ifndef RG_DATA_H
#define RG_DATA_H

#include "railguard.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which stream of values: one per (scenario seed, program step, repeat). */
typedef struct rg_data_key {
    uint64_t seed;
    uint32_t step;
    uint32_t rep;
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
 * Index of the first element of got that differs from want, or n when none does. Floating
 * types treat +0 and -0 as equal when `fold_zero` (a reduction's order decides the sign of an
 * exact zero); everything else is compared bit for bit.
 */
size_t rg_data_compare(const void *got, const void *want, size_t n, rg_dtype dt, bool fold_zero);

/* Guard bands: `len` bytes of a pattern that a write past a buffer's end would change. */
#define RG_GUARD_BYTES 64
void rg_guard_fill(uint8_t *g, size_t len);
bool rg_guard_intact(const uint8_t *g, size_t len);

#endif
