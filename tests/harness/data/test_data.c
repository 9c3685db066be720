/* SPDX-License-Identifier: MIT */
/*
 * The runner's inputs and references: deterministic, exact in every dtype, and independent of
 * any transport kernel. The expected reductions are checked here against sums computed a
 * second way (decoding the filled buffers), so a bug in either path shows.
 */
#include "common/rg_check.h"
#include "data/rg_data.h"

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

/* ---- values that need rounding, and special values ---------------------------------------- */

/* float -> bfloat16, to nearest even (the textbook formula) or truncated (a plausible bug). */
static uint16_t bf16_rne(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static uint16_t bf16_trunc(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)(x >> 16);
}

static float get_f32(const void *buf, size_t i)
{
    float f;
    memcpy(&f, (const uint8_t *)buf + 4 * i, 4);
    return f;
}

static float red_f(rg_redop op, float a, float b)
{
    return op == RG_SUM    ? a + b
           : op == RG_PROD ? a * b
           : op == RG_MAX  ? (b > a ? b : a)
                           : (b < a ? b : a);
}

/*
 * ROUNDING: whichever order a transport combines the ranks in, and whether it works in the
 * dtype or in float, it lands on the expected value; most elements needed a rounding; and a
 * bfloat16 sum that truncates instead of rounding is caught.
 */
START_TEST(test_rounding_values)
{
    enum { N = 512, RANKS = 5 };
    rg_data_key k = key;
    k.values = RG_VALUES_ROUNDING;
    k.nranks = RANKS;
    static uint8_t in[RANKS][N * 8], want[N * 8], got[N * 8];
    for (int op = 0; op < RG_REDOP_COUNT; op++) {
        /* float32: forwards, backwards and in double all agree with the reference. */
        for (int r = 0; r < RANKS; r++)
            rg_data_fill(in[r], N, RG_FLOAT32, op, &k, r, 9);
        rg_data_expect_reduce(want, N, RG_FLOAT32, (rg_redop)op, &k, RANKS, 9);
        int rounded = 0;
        for (size_t i = 0; i < N; i++) {
            float fw = get_f32(in[0], i), bw = get_f32(in[RANKS - 1], i);
            double wide = get_f32(in[0], i);
            for (int r = 1; r < RANKS; r++) {
                fw = red_f((rg_redop)op, fw, get_f32(in[r], i));
                bw = red_f((rg_redop)op, bw, get_f32(in[RANKS - 1 - r], i));
                double v = get_f32(in[r], i);
                wide = op == RG_SUM    ? wide + v
                       : op == RG_PROD ? wide * v
                       : op == RG_MAX  ? fmax(wide, v)
                                       : fmin(wide, v);
            }
            ck_assert_msg(
                fw == get_f32(want, i) && bw == get_f32(want, i) && (float)wide == get_f32(want, i),
                "float32 %s element %zu: %a %a %a, expected %a", rg_data_redop_name((rg_redop)op),
                i, (double)fw, (double)bw, wide, (double)get_f32(want, i));
            rounded += (double)(float)wide != wide;
        }
        if (op == RG_SUM || op == RG_PROD)
            ck_assert_msg(rounded > N / 2, "%s: only %d of %d elements needed rounding",
                          rg_data_redop_name((rg_redop)op), rounded, N);
        /* float16 in _Float16 arithmetic, each step rounded. */
        for (int r = 0; r < RANKS; r++)
            rg_data_fill(in[r], N, RG_FLOAT16, op, &k, r, 9);
        rg_data_expect_reduce(want, N, RG_FLOAT16, (rg_redop)op, &k, RANKS, 9);
        for (size_t i = 0; i < N; i++) {
            _Float16 acc, v;
            memcpy(&acc, in[0] + 2 * i, 2);
            for (int r = 1; r < RANKS; r++) {
                memcpy(&v, in[r] + 2 * i, 2);
                acc = (_Float16)red_f((rg_redop)op, (float)acc, (float)v);
            }
            memcpy(got + 2 * i, &acc, 2);
        }
        ck_assert_uint_eq(rg_data_compare(got, want, N, RG_FLOAT16, true), N);
        /* bfloat16 summed in float and rounded once: right; truncated: caught. */
        for (int r = 0; r < RANKS; r++)
            rg_data_fill(in[r], N, RG_BFLOAT16, op, &k, r, 9);
        rg_data_expect_reduce(want, N, RG_BFLOAT16, (rg_redop)op, &k, RANKS, 9);
        static uint8_t trunc[N * 2];
        for (size_t i = 0; i < N; i++) {
            float acc = (float)decode(in[0], i, RG_BFLOAT16);
            for (int r = 1; r < RANKS; r++)
                acc = red_f((rg_redop)op, acc, (float)decode(in[r], i, RG_BFLOAT16));
            uint16_t h = bf16_rne(acc), t = bf16_trunc(acc);
            memcpy(got + 2 * i, &h, 2);
            memcpy(trunc + 2 * i, &t, 2);
        }
        ck_assert_uint_eq(rg_data_compare(got, want, N, RG_BFLOAT16, true), N);
        if (op == RG_SUM || op == RG_PROD)
            ck_assert_uint_lt(rg_data_compare(trunc, want, N, RG_BFLOAT16, true), N);
    }
    /* float64 sums, and complex64 sums part by part. */
    for (int r = 0; r < RANKS; r++)
        rg_data_fill(in[r], N, RG_FLOAT64, RG_SUM, &k, r, 0);
    rg_data_expect_reduce(want, N, RG_FLOAT64, RG_SUM, &k, RANKS, 0);
    for (size_t i = 0; i < N; i++) {
        double acc = decode(in[RANKS - 1], i, RG_FLOAT64);
        for (int r = RANKS - 2; r >= 0; r--)
            acc += decode(in[r], i, RG_FLOAT64);
        ck_assert(acc == decode(want, i, RG_FLOAT64));
    }
    for (int r = 0; r < RANKS; r++)
        rg_data_fill(in[r], N, RG_COMPLEX64, RG_SUM, &k, r, 0);
    rg_data_expect_reduce(want, N, RG_COMPLEX64, RG_SUM, &k, RANKS, 0);
    for (size_t i = 0; i < 2 * N; i++) {
        float acc = get_f32(in[0], i);
        for (int r = 1; r < RANKS; r++)
            acc += get_f32(in[r], i);
        ck_assert(acc == get_f32(want, i));
    }
}
END_TEST

/* SPECIAL: infinities and NaNs where the redop defines them, compared by class. */
START_TEST(test_special_values)
{
    enum { N = 600, RANKS = 3 };
    rg_data_key k = key;
    k.values = RG_VALUES_SPECIAL;
    k.nranks = RANKS;
    static float in[RANKS][N], want[N], got[N];
    for (int op = 0; op < RG_REDOP_COUNT; op++) {
        for (int r = 0; r < RANKS; r++)
            rg_data_fill(in[r], N, RG_FLOAT32, op, &k, r, 0);
        rg_data_expect_reduce(want, N, RG_FLOAT32, (rg_redop)op, &k, RANKS, 0);
        int inf = 0, nan = 0;
        for (size_t i = 0; i < N; i++) {
            got[i] = in[0][i];
            for (int r = 1; r < RANKS; r++)
                got[i] = red_f((rg_redop)op, got[i], in[r][i]);
            inf += isinf(want[i]) != 0;
            nan += isnan(want[i]) != 0;
        }
        ck_assert_uint_eq(rg_data_compare(got, want, N, RG_FLOAT32, true), N);
        ck_assert_int_gt(inf, N / 10);
        if (op == RG_SUM || op == RG_PROD)
            ck_assert_int_gt(nan, N / 10);
        else
            ck_assert_int_eq(nan, 0); /* max and min of a NaN are not defined alike everywhere */
        /* A transport that drops an infinity is caught. */
        for (size_t i = 0; i < N; i++)
            if (isinf(got[i]))
                got[i] = 0;
        ck_assert_uint_lt(rg_data_compare(got, want, N, RG_FLOAT32, true), N);
    }
    /* The same classes in bfloat16 and float16 encodings. */
    static uint16_t h[RANKS][N], hw[N];
    for (int r = 0; r < RANKS; r++)
        rg_data_fill(h[r], N, RG_FLOAT16, RG_SUM, &k, r, 0);
    rg_data_expect_reduce(hw, N, RG_FLOAT16, RG_SUM, &k, RANKS, 0);
    for (size_t i = 0; i < N; i++) {
        _Float16 acc, v; /* decode() knows no infinities: the compiler's own type does */
        memcpy(&acc, &h[0][i], 2);
        for (int r = 1; r < RANKS; r++) {
            memcpy(&v, &h[r][i], 2);
            acc = (_Float16)((float)acc + (float)v);
        }
        memcpy(&got[0], &acc, 2);
        ck_assert_msg(rg_data_compare(got, &hw[i], 1, RG_FLOAT16, true) == 1,
                      "float16 element %zu: %g, expected 0x%04x", i, (double)acc, hw[i]);
    }
    /* Where a pattern does not apply, the scenario grammar refuses it. */
    ck_assert_ptr_nonnull(rg_data_values_problem(RG_VALUES_ROUNDING, RG_INT32, RG_SUM));
    ck_assert_ptr_nonnull(rg_data_values_problem(RG_VALUES_ROUNDING, RG_FLOAT64, RG_PROD));
    ck_assert_ptr_nonnull(rg_data_values_problem(RG_VALUES_SPECIAL, RG_COMPLEX64, RG_SUM));
    ck_assert_ptr_null(rg_data_values_problem(RG_VALUES_ROUNDING, RG_COMPLEX64, RG_SUM));
    ck_assert_ptr_null(rg_data_values_problem(RG_VALUES_SPECIAL, RG_BFLOAT16, RG_MIN));
}
END_TEST

/* A NaN in max and min as the transport declared: a propagating transport's results and an
 * IEEE fmax/fmin one's each pass their own declaration and fail the other's, whichever
 * order the ranks are combined in; undeclared, no NaN goes in. */
static float red_nan(rg_redop op, float a, float b, int nan)
{
    if (nan == RG_NAN_PROPAGATE && (isnan(a) || isnan(b)))
        return NAN;
    if (nan == RG_NAN_IEEE)
        return op == RG_MAX ? fmaxf(a, b) : fminf(a, b);
    return red_f(op, a, b);
}

START_TEST(test_special_nan_minmax)
{
    enum { N = 600, RANKS = 3 };
    static float in[RANKS][N], want[RG_NAN_COUNT][N], got[RG_NAN_COUNT][N];
    for (int op = RG_MAX; op <= RG_MIN; op++) {
        for (int nan = 0; nan < RG_NAN_COUNT; nan++) {
            rg_data_key k = key;
            k.values = RG_VALUES_SPECIAL;
            k.nranks = RANKS;
            k.nan_minmax = nan;
            int nan_in = 0, nan_out = 0;
            for (int r = 0; r < RANKS; r++)
                rg_data_fill(in[r], N, RG_FLOAT32, op, &k, r, 0);
            rg_data_expect_reduce(want[nan], N, RG_FLOAT32, (rg_redop)op, &k, RANKS, 0);
            for (size_t i = 0; i < N; i++) {
                float fw = in[0][i], bw = in[RANKS - 1][i];
                for (int r = 0; r < RANKS; r++)
                    nan_in += isnan(in[r][i]) != 0;
                for (int r = 1; r < RANKS; r++) {
                    fw = red_nan((rg_redop)op, fw, in[r][i], nan);
                    bw = red_nan((rg_redop)op, bw, in[RANKS - 1 - r][i], nan);
                }
                got[nan][i] = fw;
                ck_assert_uint_eq(rg_data_compare(&bw, &want[nan][i], 1, RG_FLOAT32, true), 1);
                nan_out += isnan(want[nan][i]) != 0;
            }
            ck_assert_uint_eq(rg_data_compare(got[nan], want[nan], N, RG_FLOAT32, true), N);
            if (nan == RG_NAN_UNDECLARED) {
                ck_assert_int_eq(nan_in, 0);
            } else {
                ck_assert_int_gt(nan_in, N / 10);
                /* IEEE: only one rank's is a NaN, so none comes out; propagated, every one. */
                ck_assert_int_eq(nan_out, nan == RG_NAN_IEEE ? 0 : nan_in);
            }
        }
        ck_assert_uint_lt(
            rg_data_compare(got[RG_NAN_IEEE], want[RG_NAN_PROPAGATE], N, RG_FLOAT32, true), N);
        ck_assert_uint_lt(
            rg_data_compare(got[RG_NAN_PROPAGATE], want[RG_NAN_IEEE], N, RG_FLOAT32, true), N);
    }
}
END_TEST

Suite *rg_suite_data(void)
{
    Suite *s = suite_create("data");
    TCase *t = tcase_create("data");
    tcase_add_test(t, test_fill_deterministic);
    tcase_add_loop_test(t, test_expect_matches_decoded, 0, RG_COMPLEX64);
    tcase_add_test(t, test_complex_prod_units);
    tcase_add_test(t, test_rounding_values);
    tcase_add_test(t, test_special_values);
    tcase_add_test(t, test_special_nan_minmax);
    tcase_add_test(t, test_copy_fill_bits);
    tcase_add_test(t, test_compare);
    tcase_add_test(t, test_guard);
    tcase_add_test(t, test_names);
    suite_add_tcase(s, t);
    return s;
}
