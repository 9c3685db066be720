/* SPDX-License-Identifier: MIT */
/*
 * rg_reduce.h - element-wise reduction kernels and the 16-bit float conversions they use.
 * Kept apart from the data path so they can be tested exhaustively on the host.
 */
#ifndef RG_REDUCE_H
#define RG_REDUCE_H

#include "rg_internal.h"

#include <stdint.h>

/*
 * dst[i] = dst[i] op src[i] for i < count. The pair (dt, op) must be supported
 * (rg_redop_supported); callers check that once per operation, not here. Integer sum and
 * product wrap modulo 2^bits (computed unsigned, so signed overflow is not undefined).
 * Floating max/min propagate NaN. float16/bfloat16 are widened to float, combined, and
 * rounded back to nearest, ties to even.
 */
void rg__reduce(void *dst, const void *src, size_t count, rg_dtype dt, rg_redop op);
/* dst[i] = x[i] op y[i]: the same, reading x where rg__reduce reads dst (dst may be x). */
void rg__reduce_to(void *dst, const void *x, const void *y, size_t count, rg_dtype dt, rg_redop op);

float rg__f16_to_f32(uint16_t h);
uint16_t rg__f32_to_f16(float f);
float rg__bf16_to_f32(uint16_t b);
uint16_t rg__f32_to_bf16(float f);

#endif
