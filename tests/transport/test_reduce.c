/* SPDX-License-Identifier: MIT */
/*
 * The reduction kernels against a reference written independently of them, the float16 and
 * bfloat16 conversions exhaustively and at their rounding points, and the element types'
 * names and sizes. The references work from values (ldexp, exact double arithmetic and an
 * explicit round-half-even), not from the bit tricks the kernels use.
 */
#include "common/rg_check.h"
#include "rg_reduce.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * Check's ck_assert_msg records the line on every success, which costs a write to the
 * runner; the loops below make hundreds of thousands of checks, so they only call Check on
 * a failure.
 */
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

/* --- bit helpers -------------------------------------------------------------------------- */

static uint32_t fbits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    return x;
}

static float bitsf(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof(f));
    return f;
}

static uint64_t dbits(double d)
{
    uint64_t x;
    memcpy(&x, &d, sizeof(x));
    return x;
}

static double bitsd(uint64_t x)
{
    double d;
    memcpy(&d, &x, sizeof(d));
    return d;
}

/* The low w bytes' worth of v, stored as a w-byte integer (so independent of byte order). */
static void put_int(unsigned char *p, size_t w, uint64_t v)
{
    uint8_t v8 = (uint8_t)v;
    uint16_t v16 = (uint16_t)v;
    uint32_t v32 = (uint32_t)v;
    switch (w) {
    case 1:
        memcpy(p, &v8, 1);
        break;
    case 2:
        memcpy(p, &v16, 2);
        break;
    case 4:
        memcpy(p, &v32, 4);
        break;
    default:
        memcpy(p, &v, 8);
        break;
    }
}

static uint64_t get_int(const unsigned char *p, size_t w)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (w) {
    case 1:
        memcpy(&v8, p, 1);
        return v8;
    case 2:
        memcpy(&v16, p, 2);
        return v16;
    case 4:
        memcpy(&v32, p, 4);
        return v32;
    default:
        memcpy(&v64, p, 8);
        return v64;
    }
}

/* Sign-extends the low w bytes of v. */
static int64_t sext(uint64_t v, size_t w)
{
    if (w == 8) {
        int64_t s;
        memcpy(&s, &v, sizeof(s));
        return s;
    }
    uint64_t sign = 1ull << (8 * w - 1);
    v &= (sign << 1) - 1;
    return (int64_t)(v ^ sign) - (int64_t)sign;
}

/* The product modulo 2^64 from 32-bit halves, so it does not lean on the kernels' wrap. */
static uint64_t mul64_by_halves(uint64_t a, uint64_t b)
{
    uint64_t alo = a & 0xffffffffu, ahi = a >> 32, blo = b & 0xffffffffu, bhi = b >> 32;
    uint64_t cross = ((alo * bhi + ahi * blo) & 0xffffffffu) << 32;
    return alo * blo + cross;
}

/* --- reference 16-bit floats -------------------------------------------------------------- */

/* Values straight from the format's definition. */
static double ref_f16_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0x1f)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -24);
    else
        v = ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double ref_bf16_value(uint16_t b)
{
    int e = (b >> 7) & 0xff, m = b & 0x7f;
    double v;
    if (e == 0xff)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -133);
    else
        v = ldexp(128 + m, e - 134);
    return (b & 0x8000) ? -v : v;
}

/* A 16-bit format described by its values: every finite positive pattern, ascending. */
struct fmt16 {
    double vals[0x7f80];
    int nfinite;        /* patterns 0 .. nfinite-1 are the finite positive values */
    uint16_t inf, qnan; /* +infinity and the quiet bit (with the exponent) */
    int man_bits;       /* stored mantissa bits */
    double min_normal;  /* smallest normal */
    double overflow;    /* from here on, round to nearest gives infinity */
    double (*value)(uint16_t);
};

static struct fmt16 F16, BF16;

static void fmt16_init(void)
{
    F16.nfinite = 0x7c00;
    F16.inf = 0x7c00;
    F16.qnan = 0x7e00;
    F16.man_bits = 10;
    F16.min_normal = ldexp(1, -14);
    F16.overflow = 65520.0;
    F16.value = ref_f16_value;
    BF16.nfinite = 0x7f80;
    BF16.inf = 0x7f80;
    BF16.qnan = 0x7fc0;
    BF16.man_bits = 7;
    BF16.min_normal = ldexp(1, -126);
    BF16.overflow = ldexp(2.0 - ldexp(1, -8), 127);
    BF16.value = ref_bf16_value;
    for (int i = 0; i < F16.nfinite; i++)
        F16.vals[i] = ref_f16_value((uint16_t)i);
    for (int i = 0; i < BF16.nfinite; i++)
        BF16.vals[i] = ref_bf16_value((uint16_t)i);
}

/*
 * Rounds v (a float's value) to the format: scale so that one unit is the format's spacing
 * at v, round half to even by hand, scale back, and look the value up among the patterns.
 * Every step is exact in double. A NaN gives the format's quiet NaN with v's sign.
 */
static uint16_t ref_narrow(const struct fmt16 *fm, double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isnan(v))
        return (uint16_t)(sign | fm->qnan);
    double a = fabs(v);
    if (a >= fm->overflow)
        return (uint16_t)(sign | fm->inf);
    double q;
    if (a < fm->min_normal) {
        q = fm->min_normal * ldexp(1, -fm->man_bits);
    } else {
        int ex;
        frexp(a, &ex); /* a = f * 2^ex, f in [0.5, 1) */
        q = ldexp(1, ex - 1 - fm->man_bits);
    }
    double n = a / q, t = floor(n), frac = n - t;
    if (frac > 0.5 || (frac == 0.5 && fmod(t, 2.0) == 1.0))
        t += 1;
    double r = t * q;
    int lo = 0, hi = fm->nfinite - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (fm->vals[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    EXPECT(fm->vals[lo] == r, "reference: %a is not a value of the format", r);
    return (uint16_t)(sign | lo);
}

static int f16_is_nan(uint16_t h)
{
    return (h & 0x7fff) > 0x7c00;
}

static int bf16_is_nan(uint16_t b)
{
    return (b & 0x7fff) > 0x7f80;
}

/* --- reference reductions ----------------------------------------------------------------- */

/* Max or min of two values: NaN wins, and of +0 and -0 max is +0 and min is -0. */
static double ref_maxmin(double x, double y, int want_max)
{
    if (isnan(x) || isnan(y))
        return NAN;
    if (x == y) {
        if (x != 0)
            return x;
        int neg = want_max ? (signbit(x) && signbit(y)) : (signbit(x) || signbit(y));
        return neg ? -0.0 : 0.0;
    }
    if (want_max)
        return x > y ? x : y;
    return x < y ? x : y;
}

/* One float op as the documented semantics define it: the exact result, rounded once. */
static float ref_f32_op(rg_redop op, float x, float y)
{
    switch (op) {
    case RG_SUM:
        return (float)((double)x + (double)y);
    case RG_PROD:
        return (float)((double)x * (double)y);
    case RG_MAX:
        return (float)ref_maxmin(x, y, 1);
    default:
        return (float)ref_maxmin(x, y, 0);
    }
}

static double ref_f64_op(rg_redop op, double x, double y)
{
    switch (op) {
    case RG_SUM:
        return x + y;
    case RG_PROD:
        return x * y;
    case RG_MAX:
        return ref_maxmin(x, y, 1);
    default:
        return ref_maxmin(x, y, 0);
    }
}

static int is_signed_int(rg_dtype dt)
{
    return dt == RG_INT8 || dt == RG_INT16 || dt == RG_INT32 || dt == RG_INT64;
}

/* The expected out = a op b for one element of type dt (w bytes). */
static void ref_elem(rg_dtype dt, rg_redop op, size_t w, const unsigned char *a,
                     const unsigned char *b, unsigned char *out)
{
    switch (dt) {
    case RG_BOOL: {
        int x = a[0] != 0, y = b[0] != 0;
        out[0] = (unsigned char)((op == RG_SUM || op == RG_MAX) ? (x || y) : (x && y));
        return;
    }
    case RG_FLOAT16:
    case RG_BFLOAT16: {
        const struct fmt16 *fm = dt == RG_FLOAT16 ? &F16 : &BF16;
        float x = (float)fm->value((uint16_t)get_int(a, 2));
        float y = (float)fm->value((uint16_t)get_int(b, 2));
        put_int(out, 2, ref_narrow(fm, ref_f32_op(op, x, y)));
        return;
    }
    case RG_FLOAT32:
        put_int(
            out, 4,
            fbits(ref_f32_op(op, bitsf((uint32_t)get_int(a, 4)), bitsf((uint32_t)get_int(b, 4)))));
        return;
    case RG_FLOAT64:
        put_int(out, 8, dbits(ref_f64_op(op, bitsd(get_int(a, 8)), bitsd(get_int(b, 8)))));
        return;
    case RG_COMPLEX64: {
        float x[2], y[2], r[2];
        memcpy(x, a, 8);
        memcpy(y, b, 8);
        if (op == RG_SUM) {
            r[0] = x[0] + y[0];
            r[1] = x[1] + y[1];
        } else {
            float rr = x[0] * y[0], ii = x[1] * y[1], ri = x[0] * y[1], ir = x[1] * y[0];
            r[0] = rr - ii;
            r[1] = ri + ir;
        }
        memcpy(out, r, 8);
        return;
    }
    default:
        break;
    }
    /* Integers: exact in 64 bits (or by halves for 64-bit products), then truncated. */
    uint64_t ua = get_int(a, w), ub = get_int(b, w), r;
    if (op == RG_SUM) {
        r = ua + ub;
    } else if (op == RG_PROD) {
        r = w == 8 ? mul64_by_halves(ua, ub) : ua * ub;
    } else if (is_signed_int(dt)) {
        int64_t x = sext(ua, w), y = sext(ub, w);
        int take_x = op == RG_MAX ? x > y : x < y;
        r = (uint64_t)(take_x ? x : y);
    } else {
        int take_x = op == RG_MAX ? ua > ub : ua < ub;
        r = take_x ? ua : ub;
    }
    put_int(out, w, r);
}

/* Equal, where any NaN matches an expected NaN, and a 16-bit NaN must be quiet. */
static int elem_equal(rg_dtype dt, size_t w, const unsigned char *got, const unsigned char *want)
{
    switch (dt) {
    case RG_FLOAT16: {
        uint16_t g = (uint16_t)get_int(got, 2), e = (uint16_t)get_int(want, 2);
        return f16_is_nan(e) ? f16_is_nan(g) && (g & 0x0200) : g == e;
    }
    case RG_BFLOAT16: {
        uint16_t g = (uint16_t)get_int(got, 2), e = (uint16_t)get_int(want, 2);
        return bf16_is_nan(e) ? bf16_is_nan(g) && (g & 0x0040) : g == e;
    }
    case RG_FLOAT32:
    case RG_COMPLEX64:
        for (size_t k = 0; k < w; k += 4) {
            float g, e;
            memcpy(&g, got + k, 4);
            memcpy(&e, want + k, 4);
            if (isnan(e) ? !isnan(g) : fbits(g) != fbits(e))
                return 0;
        }
        return 1;
    case RG_FLOAT64: {
        double g = bitsd(get_int(got, 8)), e = bitsd(get_int(want, 8));
        return isnan(e) ? isnan(g) : dbits(g) == dbits(e);
    }
    default:
        return memcmp(got, want, w) == 0;
    }
}

/* --- value sets --------------------------------------------------------------------------- */

/* Float values are given as bit patterns (a float is not a constant for an integer array). */
#define C(re, im) ((uint64_t)(re) | (uint64_t)(im) << 32)
#define I(x) ((uint64_t)(int64_t)(x))

static const uint64_t v_bool[] = {0, 1, 2, 0x80, 0xff};
static const uint64_t v_int8[] = {I(0),   I(1),    I(-1), I(2),  I(-2),  I(127), I(-128),
                                  I(100), I(-100), I(64), I(16), I(-16), I(3)};
static const uint64_t v_uint8[] = {0, 1, 2, 3, 15, 16, 127, 128, 200, 255};
static const uint64_t v_int16[] = {I(0),   I(1),    I(-1),  I(2),   I(-2),   I(32767), I(-32768),
                                   I(300), I(-300), I(256), I(181), I(-182), I(1000)};
static const uint64_t v_uint16[] = {0, 1, 2, 255, 256, 32767, 32768, 65535, 65534, 300, 1000};
static const uint64_t v_int32[] = {I(0),      I(1),         I(-1),        I(2),
                                   I(-2),     I(INT32_MAX), I(INT32_MIN), I(65536),
                                   I(-65536), I(46341),     I(100000),    I(-7)};
static const uint64_t v_uint32[] = {0,          1,          2,     UINT32_MAX, UINT32_MAX - 1,
                                    0x80000000, 0x7fffffff, 65536, 65535,      100000};
static const uint64_t v_int64[] = {I(0),
                                   I(1),
                                   I(-1),
                                   I(2),
                                   I(-2),
                                   I(INT64_MAX),
                                   I(INT64_MIN),
                                   I(1ll << 32),
                                   I(-(1ll << 32)),
                                   I(3037000500ll),
                                   I(0x123456789ll),
                                   I(-7)};
static const uint64_t v_uint64[] = {0,
                                    1,
                                    2,
                                    UINT64_MAX,
                                    UINT64_MAX - 1,
                                    1ull << 63,
                                    (1ull << 63) - 1,
                                    1ull << 32,
                                    0xffffffffull,
                                    0x0123456789abcdefull};
/* float16 patterns: zeros, subnormals, 1 and its neighbour, max, infinities, NaNs, ties. */
static const uint64_t v_f16[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x0200, 0x3c00,
                                 0x3c01, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01,
                                 0xfe00, 0x4000, 0x4200, 0x3555, 0x1400, 0x6800, 0x3800, 0x4c00};
static const uint64_t v_bf16[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80, 0x3f81,
                                  0xbf80, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc0,
                                  0x4000, 0x4040, 0x4300, 0x3eab, 0x4380, 0x3f00, 0x0100};
static const uint64_t v_f32[] = {
    0x00000000, /* 0 */
    0x80000000, /* -0 */
    0x3f800000, /* 1 */
    0xbf800000, /* -1 */
    0x3fc00000, /* 1.5 */
    0x40400000, /* 3 */
    0x3dcccccd, /* 0.1 */
    0x7f7fffff, /* FLT_MAX */
    0xff7fffff, /* -FLT_MAX */
    0x00800000, /* FLT_MIN */
    0x00000001, /* the smallest subnormal */
    0x80000001, /* and its negative */
    0x7f800000, /* inf */
    0xff800000, /* -inf */
    0x7fc00000, /* quiet NaN */
    0xffc00001, /* negative quiet NaN with a payload */
    0x7f800001, /* signalling NaN */
    0x4b800000, /* 2^24 */
    0x3f800001, /* 1 + 2^-23 */
    0x60ad78ec, /* 1e20 */
};
static const uint64_t v_f64[] = {
    0x0000000000000000, /* 0 */
    0x8000000000000000, /* -0 */
    0x3ff0000000000000, /* 1 */
    0xbff0000000000000, /* -1 */
    0x3ff8000000000000, /* 1.5 */
    0x4008000000000000, /* 3 */
    0x3fb999999999999a, /* 0.1 */
    0x7fefffffffffffff, /* DBL_MAX */
    0xffefffffffffffff, /* -DBL_MAX */
    0x0010000000000000, /* DBL_MIN */
    0x0000000000000001, /* the smallest subnormal */
    0x8000000000000001, /* and its negative */
    0x7ff0000000000000, /* inf */
    0xfff0000000000000, /* -inf */
    0x7ff8000000000000, /* quiet NaN */
    0xfff8000000000001, /* negative quiet NaN with a payload */
    0x7ff0000000000001, /* signalling NaN */
    0x4340000000000000, /* 2^53 */
    0x3ff0000000000001, /* 1 + 2^-52 */
    0x6974e718d7d7625a, /* 1e200 */
};
static const uint64_t v_c64[] = {
    C(0x3f800000, 0x40000000), /* 1 + 2i */
    C(0x40400000, 0xc0800000), /* 3 - 4i */
    C(0x00000000, 0x80000000), /* 0 - 0i */
    C(0x80000000, 0x80000000), /* -0 - 0i */
    C(0x7f800000, 0x00000000), /* inf + 0i */
    C(0x7fc00000, 0x3f800000), /* NaN + 1i */
    C(0x7149f2ca, 0x7149f2ca), /* 1e30 + 1e30i */
    C(0x3f000000, 0x3e800000), /* 0.5 + 0.25i */
    C(0xc0000000, 0x00000000), /* -2 + 0i */
    C(0x7f7fffff, 0x00800000), /* FLT_MAX + FLT_MIN i */
};

#define NV(v) ((int)(sizeof(v) / sizeof(v[0])))
static const struct dtcase {
    rg_dtype dt;
    const char *name;
    size_t size;
    const uint64_t *vals;
    int nvals;
} dtcases[] = {
    {RG_BOOL, "bool", 1, v_bool, NV(v_bool)},
    {RG_INT8, "int8", 1, v_int8, NV(v_int8)},
    {RG_UINT8, "uint8", 1, v_uint8, NV(v_uint8)},
    {RG_INT16, "int16", 2, v_int16, NV(v_int16)},
    {RG_UINT16, "uint16", 2, v_uint16, NV(v_uint16)},
    {RG_INT32, "int32", 4, v_int32, NV(v_int32)},
    {RG_UINT32, "uint32", 4, v_uint32, NV(v_uint32)},
    {RG_INT64, "int64", 8, v_int64, NV(v_int64)},
    {RG_UINT64, "uint64", 8, v_uint64, NV(v_uint64)},
    {RG_FLOAT16, "float16", 2, v_f16, NV(v_f16)},
    {RG_BFLOAT16, "bfloat16", 2, v_bf16, NV(v_bf16)},
    {RG_FLOAT32, "float32", 4, v_f32, NV(v_f32)},
    {RG_FLOAT64, "float64", 8, v_f64, NV(v_f64)},
    {RG_COMPLEX64, "complex64", 8, v_c64, NV(v_c64)},
};
#undef NV
static const int ndtcases = (int)(sizeof(dtcases) / sizeof(dtcases[0]));

static const char *const opnames[] = {"sum", "prod", "max", "min"};

/* complex64 is stored as real then imaginary; the value sets pack them as two 32-bit halves. */
static void put_elem(const struct dtcase *c, unsigned char *p, uint64_t v)
{
    if (c->dt == RG_COMPLEX64) {
        put_int(p, 4, v & 0xffffffffu);
        put_int(p + 4, 4, v >> 32);
    } else {
        put_int(p, c->size, v);
    }
}

static void hex(char *buf, size_t len, const unsigned char *p, size_t w)
{
    buf[0] = '\0';
    for (size_t k = 0; k < w && 2 * k + 3 <= len; k++)
        snprintf(buf + 2 * k, len - 2 * k, "%02x", p[k]);
}

/* --- reduction tests ---------------------------------------------------------------------- */

enum { MAXV = 32 };

/*
 * Every ordered pair of the type's values, in one call per op so the kernels' vector body
 * and tail both run; each element against the reference, and src left as it was.
 */
START_TEST(test_reduce_against_reference)
{
    const struct dtcase *c = &dtcases[_i];
    const size_t w = c->size;
    const int n = c->nvals, count = n * n;
    ck_assert_int_le(n, MAXV);
    unsigned char dst[MAXV * MAXV * 8], src[MAXV * MAXV * 8], src0[MAXV * MAXV * 8],
        want[MAXV * MAXV * 8];
    fmt16_init();

    /* The library's own table says which ops apply; the count below checks that table
     * against what this test expects (complex64 has no ordering, so no max or min). */
    int ops_run = 0;
    for (int op = 0; op < RG_REDOP_COUNT; op++) {
        if (!rg_redop_supported(c->dt, (rg_redop)op))
            continue;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                size_t k = (size_t)(i * n + j) * w;
                put_elem(c, dst + k, c->vals[i]);
                put_elem(c, src + k, c->vals[j]);
                ref_elem(c->dt, (rg_redop)op, w, dst + k, src + k, want + k);
            }
        }
        memcpy(src0, src, (size_t)count * w);
        rg__reduce(dst, src, (size_t)count, c->dt, (rg_redop)op);
        for (int e = 0; e < count; e++) {
            size_t k = (size_t)e * w;
            if (!elem_equal(c->dt, w, dst + k, want + k)) {
                char a[20], b[20], g[20], x[20];
                unsigned char av[8], bv[8];
                put_elem(c, av, c->vals[e / n]);
                put_elem(c, bv, c->vals[e % n]);
                hex(a, sizeof(a), av, w);
                hex(b, sizeof(b), bv, w);
                hex(g, sizeof(g), dst + k, w);
                hex(x, sizeof(x), want + k, w);
                ck_abort_msg("%s %s: %s op %s gave %s, want %s (bytes in memory order)", c->name,
                             opnames[op], a, b, g, x);
            }
        }
        EXPECT(memcmp(src, src0, (size_t)count * w) == 0, "%s %s changed src", c->name,
               opnames[op]);
        ops_run++;
    }
    ck_assert_int_eq(ops_run, c->dt == RG_COMPLEX64 ? 2 : 4);
}
END_TEST

/*
 * Misaligned buffers (one byte off) and an in-place call (dst == src) give the same result
 * as aligned, distinct buffers. Under UBSan a misaligned typed access would also trap.
 */
START_TEST(test_reduce_unaligned_and_in_place)
{
    const struct dtcase *c = &dtcases[_i];
    const size_t w = c->size;
    const int n = c->nvals;
    _Alignas(16) unsigned char a[MAXV * 8 + 16], b[MAXV * 8 + 16], u[MAXV * 8 + 16],
        v[MAXV * 8 + 16], want[MAXV * 8], t3[MAXV * 8 + 16];
    fmt16_init();

    for (int op = 0; op < RG_REDOP_COUNT; op++) {
        if (!rg_redop_supported(c->dt, (rg_redop)op))
            continue;
        /* Pairs (i, n-1-i), so every value meets another. */
        for (int i = 0; i < n; i++) {
            put_elem(c, a + (size_t)i * w, c->vals[i]);
            put_elem(c, b + (size_t)i * w, c->vals[n - 1 - i]);
        }
        memcpy(u + 1, a, (size_t)n * w);
        memcpy(v + 1, b, (size_t)n * w);
        /* Three operands, the output apart and misaligned: what the all_reduce's reduce-scatter
         * does, input and received data into the output. The inputs stay as they were. */
        memset(t3, 0xa5, sizeof(t3));
        rg__reduce_to(t3 + 3, u + 1, v + 1, (size_t)n, c->dt, (rg_redop)op);
        EXPECT(!memcmp(u + 1, a, (size_t)n * w) && !memcmp(v + 1, b, (size_t)n * w),
               "%s %s: rg__reduce_to wrote an input", c->name, opnames[op]);
        rg__reduce(a, b, (size_t)n, c->dt, (rg_redop)op);
        rg__reduce(u + 1, v + 1, (size_t)n, c->dt, (rg_redop)op);
        for (int i = 0; i < n; i++) {
            EXPECT(elem_equal(c->dt, w, u + 1 + (size_t)i * w, a + (size_t)i * w),
                   "%s %s: misaligned element %d differs", c->name, opnames[op], i);
            EXPECT(elem_equal(c->dt, w, t3 + 3 + (size_t)i * w, a + (size_t)i * w),
                   "%s %s: three-operand element %d differs", c->name, opnames[op], i);
        }
        EXPECT(t3[2] == 0xa5 && t3[3 + (size_t)n * w] == 0xa5,
               "%s %s: rg__reduce_to wrote outside its output", c->name, opnames[op]);

        /* In place: each element combined with itself. */
        for (int i = 0; i < n; i++) {
            put_elem(c, u + (size_t)i * w, c->vals[i]);
            ref_elem(c->dt, (rg_redop)op, w, u + (size_t)i * w, u + (size_t)i * w,
                     want + (size_t)i * w);
        }
        rg__reduce(u, u, (size_t)n, c->dt, (rg_redop)op);
        for (int i = 0; i < n; i++)
            EXPECT(elem_equal(c->dt, w, u + (size_t)i * w, want + (size_t)i * w),
                   "%s %s: in-place element %d wrong", c->name, opnames[op], i);
    }
}
END_TEST

/* Known answers, written out by hand, so a mistake shared by kernel and reference shows. */
START_TEST(test_reduce_known_answers)
{
    int8_t i8[] = {127, -128, -128}, i8s[] = {1, -1, -1};
    rg__reduce(i8, i8s, 2, RG_INT8, RG_SUM);
    ck_assert_int_eq(i8[0], -128);
    ck_assert_int_eq(i8[1], 127);
    rg__reduce(i8 + 2, i8s + 2, 1, RG_INT8, RG_PROD);
    ck_assert_int_eq(i8[2], -128); /* -128 * -1 wraps back to -128 */

    uint16_t u16[] = {65535, 65535}, u16s[] = {65535, 1};
    rg__reduce(u16, u16s, 2, RG_UINT16, RG_PROD);
    ck_assert_uint_eq(u16[0], 1);
    ck_assert_uint_eq(u16[1], 65535);
    rg__reduce(u16, u16s, 2, RG_UINT16, RG_SUM);
    ck_assert_uint_eq(u16[0], 0);
    ck_assert_uint_eq(u16[1], 0);

    int16_t i16[] = {-32768, 200}, i16s[] = {-1, 200};
    rg__reduce(i16, i16s, 2, RG_INT16, RG_PROD);
    ck_assert_int_eq(i16[0], -32768);
    ck_assert_int_eq(i16[1], -25536); /* 40000 - 65536 */

    int32_t i32[] = {INT32_MIN, INT32_MAX, -5}, i32s[] = {-1, 2, 3};
    rg__reduce(i32, i32s, 3, RG_INT32, RG_PROD);
    ck_assert_int_eq(i32[0], INT32_MIN);
    ck_assert_int_eq(i32[1], -2);
    ck_assert_int_eq(i32[2], -15);
    int32_t m32[] = {-1, INT32_MIN}, m32s[] = {1, INT32_MAX};
    rg__reduce(m32, m32s, 2, RG_INT32, RG_MAX);
    ck_assert_int_eq(m32[0], 1);
    ck_assert_int_eq(m32[1], INT32_MAX);

    uint32_t u32[] = {0xffffffffu}, u32s[] = {0xffffffffu};
    rg__reduce(u32, u32s, 1, RG_UINT32, RG_MIN);
    ck_assert_uint_eq(u32[0], 0xffffffffu);
    rg__reduce(u32, u32s, 1, RG_UINT32, RG_PROD);
    ck_assert_uint_eq(u32[0], 1);

    int64_t i64[] = {INT64_MAX, INT64_MIN, -1}, i64s[] = {1, -1, INT64_MIN};
    rg__reduce(i64, i64s, 3, RG_INT64, RG_SUM);
    ck_assert(i64[0] == INT64_MIN);
    ck_assert(i64[1] == INT64_MAX);
    ck_assert(i64[2] == INT64_MAX);
    uint64_t u64[] = {UINT64_MAX, 1ull << 32}, u64s[] = {UINT64_MAX, 1ull << 32};
    rg__reduce(u64, u64s, 2, RG_UINT64, RG_PROD);
    ck_assert(u64[0] == 1);
    ck_assert(u64[1] == 0);
    int64_t s64[] = {-1, INT64_MIN}, s64s[] = {0, INT64_MAX};
    rg__reduce(s64, s64s, 2, RG_INT64, RG_MIN);
    ck_assert(s64[0] == -1);
    ck_assert(s64[1] == INT64_MIN);

    unsigned char bl[] = {2, 0, 0x80, 0}, bls[] = {0, 0, 0x40, 7};
    rg__reduce(bl, bls, 4, RG_BOOL, RG_SUM);
    ck_assert(bl[0] == 1 && bl[1] == 0 && bl[2] == 1 && bl[3] == 1);
    unsigned char bp[] = {2, 0, 0x80, 0}, bps[] = {0, 0, 0x40, 7};
    rg__reduce(bp, bps, 4, RG_BOOL, RG_MIN);
    ck_assert(bp[0] == 0 && bp[1] == 0 && bp[2] == 1 && bp[3] == 0);

    /* 2048 + 1 ties to 2048, 2048 + 3 to 2052; 65504 + 16 is the overflow midpoint. */
    uint16_t h[] = {0x6800, 0x6800, 0x7bff, 0x0001}, hs[] = {0x3c00, 0x4200, 0x4c00, 0x0001};
    rg__reduce(h, hs, 4, RG_FLOAT16, RG_SUM);
    ck_assert_uint_eq(h[0], 0x6800);
    ck_assert_uint_eq(h[1], 0x6802);
    ck_assert_uint_eq(h[2], 0x7c00);
    ck_assert_uint_eq(h[3], 0x0002);
    /* Smallest subnormal squared underflows to zero; the sign is the product's. */
    uint16_t hp[] = {0x0001, 0x8001, 0x3c00}, hps[] = {0x0001, 0x0001, 0x7c01};
    rg__reduce(hp, hps, 3, RG_FLOAT16, RG_PROD);
    ck_assert_uint_eq(hp[0], 0x0000);
    ck_assert_uint_eq(hp[1], 0x8000);
    ck_assert(f16_is_nan(hp[2]) && (hp[2] & 0x0200));

    /* bfloat16: 256 + 1 ties to 256, 256 + 3 to 260 (0x4382). */
    uint16_t bf[] = {0x4380, 0x4380, 0x7f7f}, bfs[] = {0x3f80, 0x4040, 0x7f7f};
    rg__reduce(bf, bfs, 3, RG_BFLOAT16, RG_SUM);
    ck_assert_uint_eq(bf[0], 0x4380);
    ck_assert_uint_eq(bf[1], 0x4382);
    ck_assert_uint_eq(bf[2], 0x7f80);

    float fm[] = {NAN, 1.0f, -0.0f, 0.0f, -INFINITY}, fms[] = {1.0f, NAN, 0.0f, -0.0f, -1.0f};
    rg__reduce(fm, fms, 5, RG_FLOAT32, RG_MAX);
    ck_assert(isnan(fm[0]) && isnan(fm[1]));
    ck_assert(fm[2] == 0.0f && !signbit(fm[2]));
    ck_assert(fm[3] == 0.0f && !signbit(fm[3]));
    ck_assert(fm[4] == -1.0f);
    float fn[] = {NAN, 1.0f, -0.0f, 0.0f}, fns[] = {1.0f, NAN, 0.0f, -0.0f};
    rg__reduce(fn, fns, 4, RG_FLOAT32, RG_MIN);
    ck_assert(isnan(fn[0]) && isnan(fn[1]));
    ck_assert(fn[2] == 0.0f && signbit(fn[2]));
    ck_assert(fn[3] == 0.0f && signbit(fn[3]));
    double dm[] = {1.0, NAN}, dms[] = {NAN, -INFINITY};
    rg__reduce(dm, dms, 2, RG_FLOAT64, RG_MIN);
    ck_assert(isnan(dm[0]) && isnan(dm[1]));

    /* (1 + 2i)(3 - 4i) = 11 + 2i; the sum is 4 - 2i. */
    float cx[] = {1.0f, 2.0f, 1.0f, 2.0f}, cxs[] = {3.0f, -4.0f, 3.0f, -4.0f};
    rg__reduce(cx, cxs, 1, RG_COMPLEX64, RG_PROD);
    rg__reduce(cx + 2, cxs + 2, 1, RG_COMPLEX64, RG_SUM);
    ck_assert(cx[0] == 11.0f && cx[1] == 2.0f);
    ck_assert(cx[2] == 4.0f && cx[3] == -2.0f);
}
END_TEST

/* An unsupported pair or a value outside the enums leaves dst alone; count 0 touches nothing. */
START_TEST(test_reduce_unsupported_is_noop)
{
    float d[4] = {1.0f, 2.0f, 3.0f, 4.0f}, s[4] = {5.0f, 6.0f, 7.0f, 8.0f};
    rg__reduce(d, s, 2, RG_COMPLEX64, RG_MAX);
    rg__reduce(d, s, 2, RG_COMPLEX64, RG_MIN);
    rg__reduce(d, s, 4, RG_DTYPE_COUNT, RG_SUM);
    rg__reduce(d, s, 4, (rg_dtype)-1, RG_SUM);
    rg__reduce(d, s, 4, RG_FLOAT32, RG_REDOP_COUNT);
    rg__reduce(d, s, 4, RG_FLOAT32, (rg_redop)-1);
    ck_assert(d[0] == 1.0f && d[1] == 2.0f && d[2] == 3.0f && d[3] == 4.0f);
    rg__reduce(d, s, 0, RG_FLOAT32, RG_SUM);
    ck_assert(d[0] == 1.0f);
    rg__reduce(NULL, NULL, 0, RG_INT64, RG_PROD);
}
END_TEST

/* --- float16 ------------------------------------------------------------------------------ */

/*
 * All 65536 patterns: widening gives the value the format defines, and narrowing it back
 * gives the same pattern. A NaN widens to a quiet NaN of the same sign and narrows back to
 * the pattern with the quiet bit set.
 */
START_TEST(test_f16_exhaustive_round_trip)
{
    for (uint32_t i = 0; i < 0x10000; i++) {
        uint16_t h = (uint16_t)i;
        float f = rg__f16_to_f32(h);
        double want = ref_f16_value(h);
        uint16_t back = rg__f32_to_f16(f);
        if (f16_is_nan(h)) {
            EXPECT(isnan(f) && (fbits(f) & 0x00400000u), "%04x: not a quiet NaN", h);
            EXPECT(!signbit(f) == !(h & 0x8000), "%04x: NaN sign lost", h);
            EXPECT(back == (h | 0x0200), "%04x: NaN came back as %04x", h, back);
        } else {
            EXPECT(fbits(f) == fbits((float)want), "%04x: widened to %a, want %a", h, (double)f,
                   want);
            EXPECT(back == h, "%04x: came back as %04x", h, back);
        }
    }
}
END_TEST

static const struct {
    uint32_t in; /* float bits */
    uint16_t out;
} f16_points[] = {
    {0x477ff000, 0x7c00}, /* 65520: the overflow midpoint ties to 2^16, i.e. infinity */
    {0xc77ff000, 0xfc00}, /* -65520 */
    {0x477fefff, 0x7bff}, /* 65519.99: just below, the largest finite 65504 */
    {0x477fe000, 0x7bff}, /* 65504 */
    {0x501502f9, 0x7c00}, /* 1e10 */
    {0x7f7fffff, 0x7c00}, /* FLT_MAX */
    {0x7f800000, 0x7c00}, /* inf */
    {0xff800000, 0xfc00}, /* -inf */
    {0x3f801000, 0x3c00}, /* 1 + 2^-11: a tie, goes to the even 1.0 */
    {0x3f803000, 0x3c02}, /* 1 + 3 * 2^-11: a tie, goes up to the even 1 + 2^-9 */
    {0x3f801001, 0x3c01}, /* just above the tie rounds up */
    {0x3f800fff, 0x3c00}, /* just below rounds down */
    {0x3f802000, 0x3c01}, /* 1 + 2^-10 exactly */
    {0x33800000, 0x0001}, /* 2^-24: the smallest subnormal */
    {0x33000000, 0x0000}, /* 2^-25: a tie between 0 and 2^-24, goes to 0 */
    {0xb3000000, 0x8000}, /* -2^-25 keeps its sign */
    {0x33000001, 0x0001}, /* slightly above 2^-25 rounds up */
    {0x32ffffff, 0x0000}, /* slightly below rounds down */
    {0x33c00000, 0x0002}, /* 3 * 2^-25: a tie between 1 and 2 units, goes to 2 */
    {0x34200000, 0x0002}, /* 5 * 2^-25: a tie between 2 and 3 units, goes to 2 */
    {0x387fe000, 0x0400}, /* 2^-14 - 2^-25: a tie between 0x3ff and 0x400, goes to 0x400 */
    {0x387fdfff, 0x03ff}, /* just below that tie */
    {0x38800000, 0x0400}, /* 2^-14: the smallest normal */
    {0x387fffff, 0x0400}, /* just below 2^-14 rounds up to it */
    {0x2edbe6ff, 0x0000}, /* 1e-10 */
    {0x00800000, 0x0000}, /* FLT_MIN */
    {0x00000001, 0x0000}, /* the smallest float subnormal */
    {0x80000000, 0x8000}, /* -0 */
    {0x00000000, 0x0000}, /* +0 */
    {0x3eaaaaab, 0x3555}, /* 1/3 */
    {0x3dcccccd, 0x2e66}, /* 0.1 */
    {0x45001000, 0x6800}, /* 2049: a tie, to 2048 */
    {0x45003000, 0x6802}, /* 2051: a tie, to 2052 */
    {0x45002000, 0x6801}, /* 2050 exactly */
    {0x7fc00000, 0x7e00}, /* quiet NaN */
    {0xffc00000, 0xfe00}, /* negative quiet NaN */
    {0x7f800001, 0x7e00}, /* signalling NaN, payload only in dropped bits: still NaN, quiet */
    {0x7f802000, 0x7e01}, /* signalling NaN with payload in kept bits: kept, quiet */
};

START_TEST(test_f16_rounding_points)
{
    for (size_t i = 0; i < sizeof(f16_points) / sizeof(f16_points[0]); i++) {
        uint16_t got = rg__f32_to_f16(bitsf(f16_points[i].in));
        EXPECT(got == f16_points[i].out, "f32 %08x (%a) -> %04x, want %04x", f16_points[i].in,
               (double)bitsf(f16_points[i].in), got, f16_points[i].out);
    }
    /* The named decimal values, written as the brief states them. */
    ck_assert_uint_eq(rg__f32_to_f16(65520.0f), 0x7c00);
    ck_assert_uint_eq(rg__f32_to_f16(65519.99f), 0x7bff);
    ck_assert_uint_eq(rg__f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    ck_assert_uint_eq(rg__f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
    ck_assert_uint_eq(rg__f32_to_f16(0x1p-24f), 0x0001);
    ck_assert_uint_eq(rg__f32_to_f16(0x1p-25f), 0x0000);
}
END_TEST

/*
 * Narrowing against the reference: every midpoint between neighbouring float16 values and
 * the floats two ulps either side of it (both signs), then a spread over all float patterns.
 */
static void check_narrow(const struct fmt16 *fm, uint16_t (*narrow)(float), uint32_t x)
{
    float f = bitsf(x);
    uint16_t got = narrow(f), want = ref_narrow(fm, f);
    int nan = fm == &F16 ? f16_is_nan(want) : bf16_is_nan(want);
    if (nan) {
        uint16_t quiet = fm == &F16 ? 0x0200 : 0x0040;
        EXPECT((fm == &F16 ? f16_is_nan(got) : bf16_is_nan(got)) && (got & quiet) &&
                   (got & 0x8000) == (want & 0x8000),
               "f32 %08x -> %04x, want a quiet NaN", x, got);
    } else {
        EXPECT(got == want, "f32 %08x (%a) -> %04x, want %04x", x, (double)f, got, want);
    }
}

static void sweep_narrow(const struct fmt16 *fm, uint16_t (*narrow)(float))
{
    for (int i = 0; i < fm->nfinite; i++) {
        double next = i + 1 < fm->nfinite ? fm->vals[i + 1] : fm->overflow * 2 - fm->vals[i];
        uint32_t mid = fbits((float)((fm->vals[i] + next) / 2));
        for (uint32_t d = 0; d <= 4; d++) {
            uint32_t x = mid + d - 2;
            if (mid < 2 && d < 2)
                continue;
            check_narrow(fm, narrow, x);
            check_narrow(fm, narrow, x | 0x80000000u);
        }
    }
    /* A prime stride visits every exponent with scattered mantissas. */
    for (uint64_t x = 0; x <= 0xffffffffu; x += 65521)
        check_narrow(fm, narrow, (uint32_t)x);
    check_narrow(fm, narrow, 0x7f800000u);
    check_narrow(fm, narrow, 0xffffffffu);
}

START_TEST(test_f16_narrow_sweep)
{
    fmt16_init();
    /* The reference's overflow midpoint is exact in float, so the sweep covers it too. */
    ck_assert(fbits((float)F16.overflow) == 0x477ff000u);
    sweep_narrow(&F16, rg__f32_to_f16);
}
END_TEST

/* --- bfloat16 ----------------------------------------------------------------------------- */

START_TEST(test_bf16_exhaustive_round_trip)
{
    for (uint32_t i = 0; i < 0x10000; i++) {
        uint16_t b = (uint16_t)i;
        float f = rg__bf16_to_f32(b);
        double want = ref_bf16_value(b);
        uint16_t back = rg__f32_to_bf16(f);
        if (bf16_is_nan(b)) {
            EXPECT(isnan(f) && (fbits(f) & 0x00400000u), "%04x: not a quiet NaN", b);
            EXPECT(!signbit(f) == !(b & 0x8000), "%04x: NaN sign lost", b);
            EXPECT(back == (b | 0x0040), "%04x: NaN came back as %04x", b, back);
        } else {
            EXPECT(fbits(f) == fbits((float)want), "%04x: widened to %a, want %a", b, (double)f,
                   want);
            EXPECT(back == b, "%04x: came back as %04x", b, back);
        }
    }
}
END_TEST

static const struct {
    uint32_t in;
    uint16_t out;
} bf16_points[] = {
    {0x3f808000, 0x3f80}, /* 1 + 2^-8: a tie, goes to the even 1.0 */
    {0x3f818000, 0x3f82}, /* 1 + 3 * 2^-8: a tie, goes up to the even 0x3f82 */
    {0x3f808001, 0x3f81}, /* just above the tie rounds up */
    {0x3f807fff, 0x3f80}, /* just below rounds down */
    {0x3f810000, 0x3f81}, /* exact */
    {0x7f7fffff, 0x7f80}, /* FLT_MAX rounds past the largest bfloat16 to infinity */
    {0x7f7f7fff, 0x7f7f}, /* just below the overflow midpoint */
    {0x7f7f8000, 0x7f80}, /* the overflow midpoint: ties to even, which is infinity */
    {0xff7f8000, 0xff80}, /* and its negative */
    {0x00008000, 0x0000}, /* half the smallest subnormal: a tie, to 0 */
    {0x80008000, 0x8000}, /* the same, negative */
    {0x00008001, 0x0001}, /* just above: the smallest subnormal */
    {0x00018000, 0x0002}, /* 1.5 units: a tie, to 2 */
    {0x00017fff, 0x0001}, /* just below */
    {0x007f8000, 0x0080}, /* a tie between the largest subnormal and the smallest normal */
    {0x007fffff, 0x0080}, /* the largest float subnormal rounds up to the smallest normal */
    {0x00000001, 0x0000}, /* the smallest float subnormal */
    {0x80000000, 0x8000}, /* -0 */
    {0x7f800000, 0x7f80}, /* inf */
    {0xff800000, 0xff80}, /* -inf */
    {0x43808000, 0x4380}, /* 257: a tie, to 256 */
    {0x43818000, 0x4382}, /* 259: a tie, to 260 */
    {0x43810000, 0x4381}, /* 258 exactly */
    {0x7fc00000, 0x7fc0}, /* quiet NaN */
    {0xffc00000, 0xffc0}, /* negative quiet NaN */
    {0x7f800001, 0x7fc0}, /* signalling NaN with payload only in dropped bits: quiet NaN */
    {0xff800001, 0xffc0}, /* and negative */
    {0x7f810000, 0x7fc1}, /* signalling NaN with payload in kept bits: kept, quiet */
    {0x7fffffff, 0x7fff}, /* all payload bits: truncated, never rounded into a carry */
};

START_TEST(test_bf16_rounding_points)
{
    for (size_t i = 0; i < sizeof(bf16_points) / sizeof(bf16_points[0]); i++) {
        uint16_t got = rg__f32_to_bf16(bitsf(bf16_points[i].in));
        EXPECT(got == bf16_points[i].out, "f32 %08x (%a) -> %04x, want %04x", bf16_points[i].in,
               (double)bitsf(bf16_points[i].in), got, bf16_points[i].out);
    }
}
END_TEST

START_TEST(test_bf16_narrow_sweep)
{
    fmt16_init();
    ck_assert(fbits((float)BF16.overflow) == 0x7f7f8000u);
    sweep_narrow(&BF16, rg__f32_to_bf16);
}
END_TEST

/* --- names, sizes, support ---------------------------------------------------------------- */

START_TEST(test_dtype_size_and_name)
{
    ck_assert_int_eq(ndtcases, RG_DTYPE_COUNT);
    for (int i = 0; i < ndtcases; i++) {
        ck_assert_int_eq(dtcases[i].dt, i);
        ck_assert_uint_eq(rg_dtype_size(dtcases[i].dt), dtcases[i].size);
        ck_assert_str_eq(rg_dtype_name(dtcases[i].dt), dtcases[i].name);
    }
    ck_assert_uint_eq(rg_dtype_size(RG_DTYPE_COUNT), 0);
    ck_assert_uint_eq(rg_dtype_size((rg_dtype)-1), 0);
    ck_assert_uint_eq(rg_dtype_size((rg_dtype)1000), 0);
    ck_assert_str_eq(rg_dtype_name(RG_DTYPE_COUNT), "?");
    ck_assert_str_eq(rg_dtype_name((rg_dtype)-1), "?");
}
END_TEST

START_TEST(test_redop_names)
{
    ck_assert_str_eq(rg_redop_name(RG_SUM), "sum");
    ck_assert_str_eq(rg_redop_name(RG_PROD), "prod");
    ck_assert_str_eq(rg_redop_name(RG_MAX), "max");
    ck_assert_str_eq(rg_redop_name(RG_MIN), "min");
    ck_assert_str_eq(rg_redop_name(RG_REDOP_COUNT), "?");
    ck_assert_str_eq(rg_redop_name((rg_redop)-1), "?");
}
END_TEST

START_TEST(test_redop_supported)
{
    for (int dt = 0; dt < RG_DTYPE_COUNT; dt++) {
        for (int op = 0; op < RG_REDOP_COUNT; op++) {
            int want = !(dt == RG_COMPLEX64 && (op == RG_MAX || op == RG_MIN));
            ck_assert_msg(rg_redop_supported((rg_dtype)dt, (rg_redop)op) == want,
                          "%s %s: supported should be %d", dtcases[dt].name, opnames[op], want);
        }
    }
    ck_assert_int_eq(rg_redop_supported(RG_DTYPE_COUNT, RG_SUM), 0);
    ck_assert_int_eq(rg_redop_supported((rg_dtype)-1, RG_SUM), 0);
    ck_assert_int_eq(rg_redop_supported(RG_INT32, RG_REDOP_COUNT), 0);
    ck_assert_int_eq(rg_redop_supported(RG_INT32, (rg_redop)-1), 0);
}
END_TEST

Suite *rg_suite_reduce(void)
{
    Suite *s = suite_create("reduce");

    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_reduce_against_reference, 0, ndtcases);
    tcase_add_loop_test(tc, test_reduce_unaligned_and_in_place, 0, ndtcases);
    tcase_add_test(tc, test_reduce_known_answers);
    tcase_add_test(tc, test_reduce_unsupported_is_noop);
    suite_add_tcase(s, tc);

    tc = tcase_create("float16");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_f16_exhaustive_round_trip);
    tcase_add_test(tc, test_f16_rounding_points);
    tcase_add_test(tc, test_f16_narrow_sweep);
    suite_add_tcase(s, tc);

    tc = tcase_create("bfloat16");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_bf16_exhaustive_round_trip);
    tcase_add_test(tc, test_bf16_rounding_points);
    tcase_add_test(tc, test_bf16_narrow_sweep);
    suite_add_tcase(s, tc);

    tc = tcase_create("names");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_dtype_size_and_name);
    tcase_add_test(tc, test_redop_names);
    tcase_add_test(tc, test_redop_supported);
    suite_add_tcase(s, tc);
    return s;
}
