/* SPDX-License-Identifier: MIT */
/*
 * Deterministic inputs and their exact expected results. The reference arithmetic is done on
 * small integers in int64 and only then encoded, so it shares nothing with a transport's
 * reduction kernels: a wrong kernel, a wrong chunk offset or a stale buffer all show.
 */
#include "rg_data.h"

#include <string.h>

/* Keyed by the enum values, so a reordering in railguard.h cannot skew a name. */
const char *const rg_data_dtype_names[RG_DTYPE_COUNT] = {
    [RG_BOOL] = "bool",       [RG_INT8] = "int8",           [RG_UINT8] = "uint8",
    [RG_INT16] = "int16",     [RG_UINT16] = "uint16",       [RG_INT32] = "int32",
    [RG_UINT32] = "uint32",   [RG_INT64] = "int64",         [RG_UINT64] = "uint64",
    [RG_FLOAT16] = "float16", [RG_BFLOAT16] = "bfloat16",   [RG_FLOAT32] = "float32",
    [RG_FLOAT64] = "float64", [RG_COMPLEX64] = "complex64",
};

const char *const rg_data_redop_names[RG_REDOP_COUNT] = {
    [RG_SUM] = "sum", [RG_PROD] = "prod", [RG_MAX] = "max", [RG_MIN] = "min"};

static const uint8_t g_sizes[RG_DTYPE_COUNT] = {
    [RG_BOOL] = 1,     [RG_INT8] = 1,    [RG_UINT8] = 1,   [RG_INT16] = 2,     [RG_UINT16] = 2,
    [RG_INT32] = 4,    [RG_UINT32] = 4,  [RG_INT64] = 8,   [RG_UINT64] = 8,    [RG_FLOAT16] = 2,
    [RG_BFLOAT16] = 2, [RG_FLOAT32] = 4, [RG_FLOAT64] = 8, [RG_COMPLEX64] = 8,
};

size_t rg_data_size(rg_dtype dt)
{
    return (unsigned)dt < RG_DTYPE_COUNT ? g_sizes[dt] : 0;
}

const char *rg_data_dtype_name(rg_dtype dt)
{
    return (unsigned)dt < RG_DTYPE_COUNT ? rg_data_dtype_names[dt] : "?";
}

const char *rg_data_redop_name(rg_redop op)
{
    return (unsigned)op < RG_REDOP_COUNT ? rg_data_redop_names[op] : "?";
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* 64 random bits for (stream, rank, element, component). */
static uint64_t draw(const rg_data_key *k, int rank, size_t i, unsigned comp)
{
    uint64_t x = mix(k->seed ^ mix(((uint64_t)k->step << 32) | k->rep));
    x = mix(x ^ ((uint64_t)(unsigned)rank << 40) ^ comp);
    return mix(x ^ (uint64_t)i);
}

static bool is_unsigned(rg_dtype dt)
{
    return dt == RG_UINT8 || dt == RG_UINT16 || dt == RG_UINT32 || dt == RG_UINT64;
}

/*
 * The logical value of one real component. Ranges keep every reduction exact for up to
 * RG_MAX_RANKS ranks in the narrowest type: sums of 64 values in [-3, 3] stay within 192
 * (bfloat16 is exact to 256), 8-bit sums use {0, 1}; products use {-1, 1} (unsigned: {0, 1},
 * mostly 1); max and min use [-100, 100] (unsigned [0, 200]).
 */
static int64_t value(rg_dtype dt, rg_redop op, uint64_t r)
{
    if (dt == RG_BOOL)
        return (int64_t)(r & 1);
    switch (op) {
    case RG_SUM:
        if (dt == RG_INT8 || dt == RG_UINT8)
            return (int64_t)(r & 1);
        return is_unsigned(dt) ? (int64_t)(r % 4) : (int64_t)(r % 7) - 3;
    case RG_PROD:
        if (is_unsigned(dt))
            return (r % 16) != 0;
        return (r & 1) ? 1 : -1;
    case RG_MAX:
    case RG_MIN:
    default:
        return is_unsigned(dt) ? (int64_t)(r % 201) : (int64_t)(r % 201) - 100;
    }
}

/* A small integer as IEEE binary16 (exact for |v| <= 2048). */
static uint16_t f16_of(int64_t v)
{
    uint16_t sign = v < 0 ? 0x8000 : 0;
    uint64_t a = (uint64_t)(v < 0 ? -v : v);
    if (!a)
        return sign;
    int e = 63 - __builtin_clzll(a);
    uint16_t mant = (uint16_t)((a << (10 - e)) & 0x3ff);
    return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | mant);
}

static void put(void *buf, size_t i, rg_dtype dt, int64_t v)
{
    uint8_t *p = (uint8_t *)buf + i * g_sizes[dt];
    switch (dt) {
    case RG_BOOL:
    case RG_INT8:
    case RG_UINT8: {
        uint8_t x = (uint8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case RG_INT16:
    case RG_UINT16: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case RG_INT32:
    case RG_UINT32: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    case RG_INT64:
    case RG_UINT64: {
        uint64_t x = (uint64_t)v;
        memcpy(p, &x, 8);
        break;
    }
    case RG_FLOAT16: {
        uint16_t x = f16_of(v);
        memcpy(p, &x, 2);
        break;
    }
    case RG_BFLOAT16: {
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        uint16_t x = (uint16_t)(bits >> 16); /* exact: small integers need few mantissa bits */
        memcpy(p, &x, 2);
        break;
    }
    case RG_FLOAT32: {
        float f = (float)v;
        memcpy(p, &f, 4);
        break;
    }
    case RG_FLOAT64: {
        double d = (double)v;
        memcpy(p, &d, 8);
        break;
    }
    default:
        break;
    }
}

static void put_complex(void *buf, size_t i, int64_t re, int64_t im)
{
    float f[2] = {(float)re, (float)im};
    memcpy((uint8_t *)buf + i * 8, f, 8);
}

/* complex64 products use the units 1, i, -1, -i, which stay units and exact. */
static void unit(uint64_t r, int64_t *re, int64_t *im)
{
    static const int64_t u[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    *re = u[r % 4][0];
    *im = u[r % 4][1];
}

static void contribution(rg_dtype dt, rg_redop op, const rg_data_key *k, int rank, size_t i,
                         int64_t *re, int64_t *im)
{
    if (dt == RG_COMPLEX64 && op == RG_PROD) {
        unit(draw(k, rank, i, 0), re, im);
    } else {
        *re = value(dt == RG_COMPLEX64 ? RG_FLOAT32 : dt, op, draw(k, rank, i, 0));
        *im = dt == RG_COMPLEX64 ? value(RG_FLOAT32, op, draw(k, rank, i, 1)) : 0;
    }
}

void rg_data_fill(void *buf, size_t n, rg_dtype dt, int op, const rg_data_key *k, int rank,
                  size_t offset)
{
    size_t sz = rg_data_size(dt);
    if (op < 0) {
        for (size_t i = 0; i < n; i++) {
            uint64_t r = draw(k, rank, offset + i, 7);
            memcpy((uint8_t *)buf + i * sz, &r, sz);
            if (dt == RG_BOOL)
                ((uint8_t *)buf)[i] &= 1; /* a bool is 0 or 1, even when only copied */
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t re, im;
        contribution(dt, (rg_redop)op, k, rank, offset + i, &re, &im);
        if (dt == RG_COMPLEX64)
            put_complex(buf, i, re, im);
        else
            put(buf, i, dt, re);
    }
}

void rg_data_expect_reduce(void *out, size_t n, rg_dtype dt, rg_redop op, const rg_data_key *k,
                           int nranks, size_t offset)
{
    for (size_t i = 0; i < n; i++) {
        int64_t acc_re = 0, acc_im = 0;
        for (int r = 0; r < nranks; r++) {
            int64_t re, im;
            contribution(dt, op, k, r, offset + i, &re, &im);
            if (r == 0) {
                acc_re = re;
                acc_im = im;
                continue;
            }
            if (dt == RG_BOOL) {
                /* sum and max are logical or, prod and min logical and */
                acc_re = (op == RG_SUM || op == RG_MAX) ? (acc_re | re) : (acc_re & re);
                continue;
            }
            switch (op) {
            case RG_SUM:
                acc_re += re;
                acc_im += im;
                break;
            case RG_PROD:
                if (dt == RG_COMPLEX64) {
                    int64_t t = acc_re * re - acc_im * im;
                    acc_im = acc_re * im + acc_im * re;
                    acc_re = t;
                } else {
                    acc_re *= re;
                }
                break;
            case RG_MAX:
                acc_re = re > acc_re ? re : acc_re;
                break;
            case RG_MIN:
            default:
                acc_re = re < acc_re ? re : acc_re;
                break;
            }
        }
        if (dt == RG_COMPLEX64)
            put_complex(out, i, acc_re, acc_im);
        else
            put(out, i, dt, acc_re);
    }
}

static bool is_zero_float(const uint8_t *p, rg_dtype dt)
{
    uint64_t bits = 0;
    switch (dt) {
    case RG_FLOAT16:
    case RG_BFLOAT16:
        memcpy(&bits, p, 2);
        return (bits & 0x7fff) == 0;
    case RG_FLOAT32:
        memcpy(&bits, p, 4);
        return (bits & 0x7fffffffu) == 0;
    case RG_FLOAT64:
        memcpy(&bits, p, 8);
        return (bits & 0x7fffffffffffffffull) == 0;
    default:
        return false;
    }
}

size_t rg_data_compare(const void *got, const void *want, size_t n, rg_dtype dt, bool fold_zero)
{
    size_t sz = rg_data_size(dt);
    const uint8_t *g = got, *w = want;
    for (size_t i = 0; i < n; i++, g += sz, w += sz) {
        if (!memcmp(g, w, sz))
            continue;
        if (fold_zero && dt == RG_COMPLEX64 &&
            is_zero_float(g, RG_FLOAT32) == is_zero_float(w, RG_FLOAT32) &&
            is_zero_float(g + 4, RG_FLOAT32) == is_zero_float(w + 4, RG_FLOAT32) &&
            (is_zero_float(g, RG_FLOAT32) || !memcmp(g, w, 4)) &&
            (is_zero_float(g + 4, RG_FLOAT32) || !memcmp(g + 4, w + 4, 4)))
            continue;
        if (fold_zero && is_zero_float(g, dt) && is_zero_float(w, dt))
            continue;
        return i;
    }
    return n;
}

void rg_guard_fill(uint8_t *g, size_t len)
{
    for (size_t i = 0; i < len; i++)
        g[i] = (uint8_t)(0xA5 ^ (i * 29));
}

bool rg_guard_intact(const uint8_t *g, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (g[i] != (uint8_t)(0xA5 ^ (i * 29)))
            return false;
    return true;
}
