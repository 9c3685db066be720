/* SPDX-License-Identifier: MIT */
/*
 * rg_reduce.c - the element-wise reduction kernels, the 16-bit float conversions, and the
 * names and sizes of the element types and reductions.
 *
 * Every (dtype, op) pair has its own kernel: one plain loop whose body is a small inline
 * function of two elements. rg__reduce picks the kernel once per call, so nothing inside a
 * loop branches on the type, and the compiler is free to vectorize each loop on its own.
 */
#include "rg_reduce.h"

#include <string.h>

/* Sizes and names come from the ABI's one table (railguard/plugin.h), so they cannot drift
 * apart from what adapters and the runner see. */
static const struct {
    size_t size;
    const char *name;
} dtypes[RG_DTYPE_COUNT] = {
#define RG__DTYPE_ROW(id, value, text, bytes) [id] = {bytes, text},
    RG_DTYPE_TABLE(RG__DTYPE_ROW)
#undef RG__DTYPE_ROW
};

static const char *const redop_names[RG_REDOP_COUNT] = {
    [RG_SUM] = "sum", [RG_PROD] = "prod", [RG_MAX] = "max", [RG_MIN] = "min"};

size_t rg_dtype_size(rg_dtype dt)
{
    /* The unsigned cast makes a negative value out of range as well. */
    return (unsigned)dt < RG_DTYPE_COUNT ? dtypes[dt].size : 0;
}

const char *rg_dtype_name(rg_dtype dt)
{
    return (unsigned)dt < RG_DTYPE_COUNT ? dtypes[dt].name : "?";
}

const char *rg_redop_name(rg_redop op)
{
    return (unsigned)op < RG_REDOP_COUNT ? redop_names[op] : "?";
}

/* --- 16-bit floats ------------------------------------------------------------------------ */

/* Floats are reinterpreted through memcpy, the one way C allows that has no aliasing issue. */
static inline uint32_t f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    return x;
}

static inline float bits_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof(f));
    return f;
}

/* a when c is true, else b, computed with masks so that the compiler sees no branch. */
static inline uint32_t pick(int c, uint32_t a, uint32_t b)
{
    uint32_t m = 0u - (uint32_t)(c != 0);
    return (a & m) | (b & ~m);
}

/*
 * The two float16 conversions compute every case and then pick one, with no branches, so
 * that a loop calling them can be vectorized; each case is cheap. A plain ?: is not enough:
 * the compiler would move the float arithmetic into a branch of its own, and it may not
 * execute float operations speculatively, so the loop would stay scalar.
 */
static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu; /* exponent and mantissa */

    /* A normal number: shifting puts the mantissa in place; adding 112 << 23 rebiases. */
    uint32_t normal = (em << 13) + 0x38000000u;
    /*
     * Infinity keeps its sign. A NaN keeps sign and payload and gets the quiet bit, as the
     * hardware converters do, so a signalling NaN never reaches the arithmetic.
     */
    uint32_t special = 0x7f800000u | (em << 13) | pick(em & 0x3ffu, 0x00400000u, 0);
    /*
     * Zero or subnormal: the value is mantissa * 2^-24. Both factors are exact in float and
     * the product is a normal float (or zero), so the multiplication is exact.
     */
    uint32_t sub = f32_bits((float)(int32_t)em * 0x1p-24f);

    uint32_t r = pick(em >= 0x7c00u, special, pick(em >= 0x0400u, normal, sub));
    return bits_f32(sign | r);
}

static inline uint16_t f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;

    /*
     * NaN: keep the top ten payload bits and set the quiet bit, which also keeps the result a
     * NaN when the payload lived only in the bits that are dropped.
     */
    uint32_t nan = 0x7e00u | ((x >> 13) & 0x3ffu);
    /*
     * A normal float16, from 2^-14 up. Subtracting (127 - 15) << 23 rebiases the exponent in
     * place, so the top bits are exponent and mantissa together. Adding 0xfff plus the lowest
     * kept bit before dropping 13 bits rounds to nearest with ties to even, and a carry out of
     * the mantissa moves correctly to the next binade. For smaller x the subtraction wraps,
     * which unsigned arithmetic allows, and that value is not picked.
     */
    uint32_t normal = (x - 0x38000000u + 0xfffu + ((x >> 13) & 1u)) >> 13;
    /*
     * Below 2^-14 the result is a multiple of 2^-24. Adding 0.5 makes the float's last bit
     * worth exactly 2^-24, so the FPU's own round-to-nearest-even does the rounding (2^-25
     * ties to zero, a carry to 2^-14 gives the smallest normal) and the low bits are the
     * float16 encoding. This assumes float arithmetic is done in float (FLT_EVAL_METHOD 0)
     * in the default rounding mode, as on every target we build for.
     */
    uint32_t sub = f32_bits(bits_f32(x) + 0.5f) - 0x3f000000u;

    /*
     * From 65520, the midpoint between the largest float16 (65504) and 2^16, the result is
     * infinity: the tie goes to the even neighbour, 2^16, which overflows.
     */
    uint32_t r = pick(x > 0x7f800000u, nan,
                      pick(x >= 0x477ff000u, 0x7c00u, pick(x >= 0x38800000u, normal, sub)));
    return (uint16_t)(sign | r);
}

static inline float bf16_to_f32(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    /* A NaN gets the quiet bit, exactly as in the float16 conversion. */
    if ((x & 0x7fffffffu) > 0x7f800000u)
        x |= 0x00400000u;
    return bits_f32(x);
}

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        /* NaN: truncate and set the quiet bit, so the result cannot become infinity. */
        return (uint16_t)((x >> 16) | 0x0040u);
    }
    /*
     * Round to nearest, ties to even, on the 16 bits that are dropped: adding 0x7fff rounds
     * a remainder above one half up and one below down, and the extra 1 when the kept part is
     * odd breaks a tie toward even. The carry runs through the exponent, which handles the
     * subnormal-to-normal step and overflow to infinity without special cases.
     */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float rg__f16_to_f32(uint16_t h)
{
    return f16_to_f32(h);
}

uint16_t rg__f32_to_f16(float f)
{
    return f32_to_f16(f);
}

float rg__bf16_to_f32(uint16_t b)
{
    return bf16_to_f32(b);
}

uint16_t rg__f32_to_bf16(float f)
{
    return f32_to_bf16(f);
}

/* --- element operations ------------------------------------------------------------------- */

/* Bool is one byte; any nonzero byte is true, and results are always 0 or 1. */
static inline uint8_t bool_or(uint8_t a, uint8_t b)
{
    return (uint8_t)((a | b) != 0);
}

static inline uint8_t bool_and(uint8_t a, uint8_t b)
{
    return (uint8_t)((a != 0) & (b != 0));
}

/*
 * Wrapping sum and product. Signed and unsigned types of one width share these: two's
 * complement wrapping gives the same bits either way. The leading 0u or 1u makes the
 * arithmetic unsigned int or wider, because uint8_t and uint16_t would otherwise be promoted
 * to signed int, where 65535 * 65535 overflows, which is undefined behaviour.
 */
#define RG__WRAP_OPS(T)                                                                            \
    static inline T add_##T(T a, T b)                                                              \
    {                                                                                              \
        return (T)(0u + a + b);                                                                    \
    }                                                                                              \
    static inline T mul_##T(T a, T b)                                                              \
    {                                                                                              \
        return (T)(1u * a * b);                                                                    \
    }
RG__WRAP_OPS(uint8_t)
RG__WRAP_OPS(uint16_t)
RG__WRAP_OPS(uint32_t)
RG__WRAP_OPS(uint64_t)
#undef RG__WRAP_OPS

/* Ordered comparisons need the real signedness, so max and min exist per integer type. */
#define RG__ORDER_OPS(T)                                                                           \
    static inline T max_##T(T a, T b)                                                              \
    {                                                                                              \
        return a > b ? a : b;                                                                      \
    }                                                                                              \
    static inline T min_##T(T a, T b)                                                              \
    {                                                                                              \
        return a < b ? a : b;                                                                      \
    }
RG__ORDER_OPS(int8_t)
RG__ORDER_OPS(uint8_t)
RG__ORDER_OPS(int16_t)
RG__ORDER_OPS(uint16_t)
RG__ORDER_OPS(int32_t)
RG__ORDER_OPS(uint32_t)
RG__ORDER_OPS(int64_t)
RG__ORDER_OPS(uint64_t)
#undef RG__ORDER_OPS

static inline float add_float(float a, float b)
{
    return a + b;
}

static inline float mul_float(float a, float b)
{
    return a * b;
}

static inline double add_double(double a, double b)
{
    return a + b;
}

static inline double mul_double(double a, double b)
{
    return a * b;
}

/*
 * Floating max and min. A NaN in either operand is the result (src's NaN if both are NaN).
 * Equal operands are combined bitwise: equal nonzero values have the same bits, and for
 * +0 and -0 an AND of the bits gives +0 for max and an OR gives -0 for min, so both are
 * commutative and the result does not depend on which rank's data sits in dst. Everything
 * is written as selects with no arithmetic, so the compiler can if-convert and vectorize.
 */
#define RG__FLOAT_ORDER_OPS(T, U)                                                                  \
    static inline T max_##T(T a, T b)                                                              \
    {                                                                                              \
        U ua, ub, ue;                                                                              \
        T eq;                                                                                      \
        memcpy(&ua, &a, sizeof(ua));                                                               \
        memcpy(&ub, &b, sizeof(ub));                                                               \
        ue = ua & ub;                                                                              \
        memcpy(&eq, &ue, sizeof(eq));                                                              \
        T m = b > a ? b : a;                                                                       \
        m = a == b ? eq : m;                                                                       \
        return b != b ? b : m;                                                                     \
    }                                                                                              \
    static inline T min_##T(T a, T b)                                                              \
    {                                                                                              \
        U ua, ub, ue;                                                                              \
        T eq;                                                                                      \
        memcpy(&ua, &a, sizeof(ua));                                                               \
        memcpy(&ub, &b, sizeof(ub));                                                               \
        ue = ua | ub;                                                                              \
        memcpy(&eq, &ue, sizeof(eq));                                                              \
        T m = b < a ? b : a;                                                                       \
        m = a == b ? eq : m;                                                                       \
        return b != b ? b : m;                                                                     \
    }
RG__FLOAT_ORDER_OPS(float, uint32_t)
RG__FLOAT_ORDER_OPS(double, uint64_t)
#undef RG__FLOAT_ORDER_OPS

/*
 * float16 and bfloat16 are widened to float, combined there and rounded back once. float
 * has more than twice their precision plus two bits, so that double rounding still gives
 * the correctly rounded 16-bit result for sum and product.
 */
#define RG__HALF_OPS(NAME, TO_F32, FROM_F32)                                                       \
    static inline uint16_t add_##NAME(uint16_t a, uint16_t b)                                      \
    {                                                                                              \
        return FROM_F32(TO_F32(a) + TO_F32(b));                                                    \
    }                                                                                              \
    static inline uint16_t mul_##NAME(uint16_t a, uint16_t b)                                      \
    {                                                                                              \
        return FROM_F32(TO_F32(a) * TO_F32(b));                                                    \
    }                                                                                              \
    static inline uint16_t max_##NAME(uint16_t a, uint16_t b)                                      \
    {                                                                                              \
        return FROM_F32(max_float(TO_F32(a), TO_F32(b)));                                          \
    }                                                                                              \
    static inline uint16_t min_##NAME(uint16_t a, uint16_t b)                                      \
    {                                                                                              \
        return FROM_F32(min_float(TO_F32(a), TO_F32(b)));                                          \
    }
RG__HALF_OPS(f16, f16_to_f32, f32_to_f16)
RG__HALF_OPS(bf16, bf16_to_f32, f32_to_bf16)
#undef RG__HALF_OPS

/* --- kernels ------------------------------------------------------------------------------ */

/*
 * One kernel per (type, op): a loop over elements that applies OP, dst[i] = OP(x[i], y[i]).
 * Elements are loaded and stored with memcpy, so buffers need no particular alignment;
 * compilers turn a fixed-size memcpy into a plain (vector) load or store. No pointer is
 * restrict: the compiler versions the loop on overlap (the Makefile gives this file the cost
 * model that allows it; -O2's leaves such a loop scalar), and dst == x (the in-place
 * reduction) or x == y stays correct. Three operands, so the all_reduce reads the caller's
 * input and the received data and writes the output in one pass, with no copy of the input
 * first.
 */
#define RG__KERNEL(NAME, T, OP)                                                                    \
    static void NAME(void *dst, const void *x, const void *y, size_t count)                        \
    {                                                                                              \
        unsigned char *d = dst;                                                                    \
        const unsigned char *p = x, *s = y;                                                        \
        for (size_t i = 0; i < count; i++) {                                                       \
            T a, b;                                                                                \
            memcpy(&a, p + i * sizeof(T), sizeof(T));                                              \
            memcpy(&b, s + i * sizeof(T), sizeof(T));                                              \
            a = OP(a, b);                                                                          \
            memcpy(d + i * sizeof(T), &a, sizeof(T));                                              \
        }                                                                                          \
    }

RG__KERNEL(k_bool_or, uint8_t, bool_or)
RG__KERNEL(k_bool_and, uint8_t, bool_and)

RG__KERNEL(k_add_u8, uint8_t, add_uint8_t)
RG__KERNEL(k_mul_u8, uint8_t, mul_uint8_t)
RG__KERNEL(k_max_i8, int8_t, max_int8_t)
RG__KERNEL(k_min_i8, int8_t, min_int8_t)
RG__KERNEL(k_max_u8, uint8_t, max_uint8_t)
RG__KERNEL(k_min_u8, uint8_t, min_uint8_t)

RG__KERNEL(k_add_u16, uint16_t, add_uint16_t)
RG__KERNEL(k_mul_u16, uint16_t, mul_uint16_t)
RG__KERNEL(k_max_i16, int16_t, max_int16_t)
RG__KERNEL(k_min_i16, int16_t, min_int16_t)
RG__KERNEL(k_max_u16, uint16_t, max_uint16_t)
RG__KERNEL(k_min_u16, uint16_t, min_uint16_t)

RG__KERNEL(k_add_u32, uint32_t, add_uint32_t)
RG__KERNEL(k_mul_u32, uint32_t, mul_uint32_t)
RG__KERNEL(k_max_i32, int32_t, max_int32_t)
RG__KERNEL(k_min_i32, int32_t, min_int32_t)
RG__KERNEL(k_max_u32, uint32_t, max_uint32_t)
RG__KERNEL(k_min_u32, uint32_t, min_uint32_t)

RG__KERNEL(k_add_u64, uint64_t, add_uint64_t)
RG__KERNEL(k_mul_u64, uint64_t, mul_uint64_t)
RG__KERNEL(k_max_i64, int64_t, max_int64_t)
RG__KERNEL(k_min_i64, int64_t, min_int64_t)
RG__KERNEL(k_max_u64, uint64_t, max_uint64_t)
RG__KERNEL(k_min_u64, uint64_t, min_uint64_t)

RG__KERNEL(k_add_f16, uint16_t, add_f16)
RG__KERNEL(k_mul_f16, uint16_t, mul_f16)
RG__KERNEL(k_max_f16, uint16_t, max_f16)
RG__KERNEL(k_min_f16, uint16_t, min_f16)

RG__KERNEL(k_add_bf16, uint16_t, add_bf16)
RG__KERNEL(k_mul_bf16, uint16_t, mul_bf16)
RG__KERNEL(k_max_bf16, uint16_t, max_bf16)
RG__KERNEL(k_min_bf16, uint16_t, min_bf16)

RG__KERNEL(k_add_f32, float, add_float)
RG__KERNEL(k_mul_f32, float, mul_float)
RG__KERNEL(k_max_f32, float, max_float)
RG__KERNEL(k_min_f32, float, min_float)

RG__KERNEL(k_add_f64, double, add_double)
RG__KERNEL(k_mul_f64, double, mul_double)
RG__KERNEL(k_max_f64, double, max_double)
RG__KERNEL(k_min_f64, double, min_double)

#undef RG__KERNEL

/* complex64 is two floats, real then imaginary, so its sum is the float sum of twice as many. */
static void k_add_c64(void *dst, const void *x, const void *y, size_t count)
{
    k_add_f32(dst, x, y, 2 * count);
}

/*
 * The textbook product in float: (a + bi)(c + di) = (ac - bd) + (ad + bc)i. It does not do
 * C Annex G's recovery of infinities from NaN results (as __mulsc3 does): a reduction wants
 * the plain arithmetic, the same on every rank. The parts are loaded as separate floats,
 * which the vectorizer handles where a two-float struct defeats it.
 */
static void k_mul_c64(void *dst, const void *x, const void *y, size_t count)
{
    unsigned char *d = dst;
    const unsigned char *p = x, *s = y;
    for (size_t i = 0; i < count; i++) {
        float ar, ai, br, bi;
        memcpy(&ar, p + 8 * i, 4);
        memcpy(&ai, p + 8 * i + 4, 4);
        memcpy(&br, s + 8 * i, 4);
        memcpy(&bi, s + 8 * i + 4, 4);
        float re = ar * br - ai * bi;
        float im = ar * bi + ai * br;
        memcpy(d + 8 * i, &re, 4);
        memcpy(d + 8 * i + 4, &im, 4);
    }
}

typedef void (*rg__kernel)(void *dst, const void *x, const void *y, size_t count);

/*
 * The dispatch table: a NULL entry is a pair that is not defined. rg_redop_supported reads
 * the same table, so the two cannot disagree. The order of each row is sum, prod, max, min.
 */
static const rg__kernel kernels[RG_DTYPE_COUNT][RG_REDOP_COUNT] = {
    [RG_BOOL] = {k_bool_or, k_bool_and, k_bool_or, k_bool_and},
    [RG_INT8] = {k_add_u8, k_mul_u8, k_max_i8, k_min_i8},
    [RG_UINT8] = {k_add_u8, k_mul_u8, k_max_u8, k_min_u8},
    [RG_INT16] = {k_add_u16, k_mul_u16, k_max_i16, k_min_i16},
    [RG_UINT16] = {k_add_u16, k_mul_u16, k_max_u16, k_min_u16},
    [RG_INT32] = {k_add_u32, k_mul_u32, k_max_i32, k_min_i32},
    [RG_UINT32] = {k_add_u32, k_mul_u32, k_max_u32, k_min_u32},
    [RG_INT64] = {k_add_u64, k_mul_u64, k_max_i64, k_min_i64},
    [RG_UINT64] = {k_add_u64, k_mul_u64, k_max_u64, k_min_u64},
    [RG_FLOAT16] = {k_add_f16, k_mul_f16, k_max_f16, k_min_f16},
    [RG_BFLOAT16] = {k_add_bf16, k_mul_bf16, k_max_bf16, k_min_bf16},
    [RG_FLOAT32] = {k_add_f32, k_mul_f32, k_max_f32, k_min_f32},
    [RG_FLOAT64] = {k_add_f64, k_mul_f64, k_max_f64, k_min_f64},
    [RG_COMPLEX64] = {k_add_c64, k_mul_c64, NULL, NULL},
};

static rg__kernel kernel_for(rg_dtype dt, rg_redop op)
{
    if ((unsigned)dt >= RG_DTYPE_COUNT || (unsigned)op >= RG_REDOP_COUNT)
        return NULL;
    return kernels[dt][op];
}

int rg_redop_supported(rg_dtype dt, rg_redop op)
{
    return kernel_for(dt, op) != NULL;
}

void rg__reduce(void *dst, const void *src, size_t count, rg_dtype dt, rg_redop op)
{
    /*
     * Callers check the pair once per operation. An unsupported pair reaching here anyway
     * leaves dst untouched rather than guessing at a meaning.
     */
    rg__kernel k = kernel_for(dt, op);
    if (k)
        k(dst, dst, src, count);
}

void rg__reduce_to(void *dst, const void *x, const void *y, size_t count, rg_dtype dt, rg_redop op)
{
    rg__kernel k = kernel_for(dt, op);
    if (k)
        k(dst, x, y, count);
}
