/* SPDX-License-Identifier: MIT */
/*
 * The runner's inputs and references: deterministic, exact in every dtype, and independent of
 * any transport kernel. The expected reductions are checked here against sums computed a
 * second way (decoding the filled buffers), so a bug in either path shows.
 */
#include "common/rg_check.h"
#include "rg_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Decodes element i of buf (a real dtype) to a double. */
static double decode(const void *buf, size_t i, rg_dtype dt)
{
    const uint8_t *p = (const uint8_t *)buf + i * rg_data_size(dt);
    switch (dt) {
    case RG_BOOL:
    case RG_UINT8:
        return *p;
    case RG_INT8:
        return (int8_t)*p;
    case RG_INT16: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case RG_UINT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case RG_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case RG_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case RG_INT64: {
        int64_t v;
        memcpy(&v, p, 8);
        return (double)v;
    }
    case RG_UINT64: {
        uint64_t v;
        memcpy(&v, p, 8);
        return (double)v;
    }
    case RG_FLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        double v = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
        return h & 0x8000 ? -v : v;
    }
    case RG_BFLOAT16: {
        uint16_t b;
        memcpy(&b, p, 2);
        uint32_t bits = (uint32_t)b << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    case RG_FLOAT32: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    case RG_FLOAT64: {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    default:
        return NAN;
    }
}

static const rg_data_key key = {.seed = 42, .step = 3, .rep = 1};

START_TEST(test_fill_deterministic)
{
    uint8_t a[8 * 64], b[8 * 64];
    rg_data_fill(a, 64, RG_FLOAT32, RG_SUM, &key, 2, 100);
    rg_data_fill(b, 64, RG_FLOAT32, RG_SUM, &key, 2, 100);
    ck_assert_mem_eq(a, b, 4 * 64);
    /* An offset stream continues the same stream. */
    rg_data_fill(b, 32, RG_FLOAT32, RG_SUM, &key, 2, 132);
    ck_assert_mem_eq(a + 4 * 32, b, 4 * 32);
    /* Another rank, repetition or seed gives other values. */
    rg_data_fill(b, 64, RG_FLOAT32, RG_SUM, &key, 3, 100);
    ck_assert(memcmp(a, b, 4 * 64) != 0);
    rg_data_key k2 = key;
    k2.rep++;
    rg_data_fill(b, 64, RG_FLOAT32, RG_SUM, &k2, 2, 100);
    ck_assert(memcmp(a, b, 4 * 64) != 0);
}
END_TEST

/* For every real dtype and op, the expected reduction equals the reduction of the decoded
 * contributions, and stays exact (integral, in range) for 64 ranks. */
START_TEST(test_expect_matches_decoded)
{
    enum { N = 257, RANKS = 64 };
    rg_dtype dt = (rg_dtype)_i;
    static uint8_t in[RANKS][N * 8], want[N * 8];
    for (int op = 0; op < RG_REDOP_COUNT; op++) {
        for (int r = 0; r < RANKS; r++)
            rg_data_fill(in[r], N, dt, op, &key, r, 5);
        rg_data_expect_reduce(want, N, dt, (rg_redop)op, &key, RANKS, 5);
        for (size_t i = 0; i < N; i++) {
            double acc = decode(in[0], i, dt);
            for (int r = 1; r < RANKS; r++) {
                double v = decode(in[r], i, dt);
                ck_assert_msg(v == floor(v), "%s: non-integral input %g", rg_data_dtype_name(dt),
                              v);
                if (dt == RG_BOOL)
                    acc = (op == RG_SUM || op == RG_MAX) ? (acc || v) : (acc && v);
                else if (op == RG_SUM)
                    acc += v;
                else if (op == RG_PROD)
                    acc *= v;
                else if (op == RG_MAX)
                    acc = v > acc ? v : acc;
                else
                    acc = v < acc ? v : acc;
            }
            double got = decode(want, i, dt);
            ck_assert_msg(got == acc, "%s %s element %zu: expected %g, reference says %g",
                          rg_data_dtype_name(dt), rg_data_redop_name((rg_redop)op), i, acc, got);
        }
    }
}
END_TEST

START_TEST(test_complex_prod_units)
{
    enum { N = 64, RANKS = 7 };
    float in[RANKS][N * 2], want[N * 2];
    for (int r = 0; r < RANKS; r++)
        rg_data_fill(in[r], N, RG_COMPLEX64, RG_PROD, &key, r, 0);
    rg_data_expect_reduce(want, N, RG_COMPLEX64, RG_PROD, &key, RANKS, 0);
    for (int i = 0; i < N; i++) {
        double re = in[0][2 * i], im = in[0][2 * i + 1];
        for (int r = 1; r < RANKS; r++) {
            double a = in[r][2 * i], b = in[r][2 * i + 1];
            double t = re * a - im * b;
            im = re * b + im * a;
            re = t;
        }
        ck_assert(fabs(re) + fabs(im) == 1.0); /* units stay units */
        ck_assert(want[2 * i] == re && want[2 * i + 1] == im);
    }
}
END_TEST

START_TEST(test_copy_fill_bits)
{
    uint8_t a[4096];
    rg_data_fill(a, 4096, RG_BOOL, -1, &key, 0, 0);
    int ones = 0;
    for (int i = 0; i < 4096; i++) {
        ck_assert_uint_le(a[i], 1);
        ones += a[i];
    }
    ck_assert(ones > 1800 && ones < 2300);
    uint64_t w[512];
    rg_data_fill(w, 512, RG_FLOAT64, -1, &key, 0, 0);
    int high = 0;
    for (int i = 0; i < 512; i++)
        high += (int)(w[i] >> 63);
    ck_assert(high > 200 && high < 312); /* arbitrary bits, sign included */
}
END_TEST

START_TEST(test_compare)
{
    float a[4] = {1, 0.0f, 3, -0.0f}, b[4] = {1, -0.0f, 3, 0.0f};
    ck_assert_uint_eq(rg_data_compare(a, b, 4, RG_FLOAT32, true), 4);
    ck_assert_uint_eq(rg_data_compare(a, b, 4, RG_FLOAT32, false), 1);
    b[2] = 4;
    ck_assert_uint_eq(rg_data_compare(a, b, 4, RG_FLOAT32, true), 2);
    uint16_t h1[2] = {0x0000, 0x3c00}, h2[2] = {0x8000, 0x3c01};
    ck_assert_uint_eq(rg_data_compare(h1, h2, 2, RG_FLOAT16, true), 1);
    float c1[4] = {0.0f, 1, -0.0f, 2}, c2[4] = {-0.0f, 1, 0.0f, 2};
    ck_assert_uint_eq(rg_data_compare(c1, c2, 2, RG_COMPLEX64, true), 2);
    c2[3] = 3;
    ck_assert_uint_eq(rg_data_compare(c1, c2, 2, RG_COMPLEX64, true), 1);
    int32_t i1[3] = {1, 2, 3}, i2[3] = {1, 2, 4};
    ck_assert_uint_eq(rg_data_compare(i1, i2, 3, RG_INT32, true), 2);
}
END_TEST

START_TEST(test_guard)
{
    uint8_t g[RG_GUARD_BYTES];
    rg_guard_fill(g, sizeof(g));
    ck_assert(rg_guard_intact(g, sizeof(g)));
    for (size_t i = 0; i < sizeof(g); i++) {
        g[i] ^= 1;
        ck_assert(!rg_guard_intact(g, sizeof(g)));
        g[i] ^= 1;
    }
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(rg_data_dtype_name(RG_BFLOAT16), "bfloat16");
    ck_assert_str_eq(rg_data_dtype_name((rg_dtype)99), "?");
    ck_assert_uint_eq(rg_data_size(RG_COMPLEX64), 8);
    ck_assert_uint_eq(rg_data_size((rg_dtype)99), 0);
    ck_assert_str_eq(rg_data_redop_name(RG_MIN), "min");
}
END_TEST

Suite *rg_suite_data(void)
{
    Suite *s = suite_create("data");
    TCase *t = tcase_create("data");
    tcase_add_test(t, test_fill_deterministic);
    tcase_add_loop_test(t, test_expect_matches_decoded, 0, RG_COMPLEX64);
    tcase_add_test(t, test_complex_prod_units);
    tcase_add_test(t, test_copy_fill_bits);
    tcase_add_test(t, test_compare);
    tcase_add_test(t, test_guard);
    tcase_add_test(t, test_names);
    suite_add_tcase(s, t);
    return s;
}
