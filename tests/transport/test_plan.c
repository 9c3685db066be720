/* SPDX-License-Identifier: MIT */
/*
 * The data path's arithmetic for every size class: segments and chunks tile a buffer exactly
 * (no gap, no overlap) for sizes that do not divide, single elements and empty segments; the
 * per-rail counts add up; a work request id round-trips every field.
 */
#include "common/rg_check.h"
#include "rg_plan.h"

#include <stdlib.h>

/* Counts around every boundary: 0, 1, n-1, n, n+1, primes, chunk multiples +-1. */
static const size_t counts[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 1021, 4095, 4096, 4097, 65537, 1000003};
static const size_t esz[] = {1, 2, 4, 8};

START_TEST(test_segments_tile_the_buffer)
{
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        for (int n = 1; n <= 9; n++) {
            size_t next = 0, min = (size_t)-1, max = 0;
            for (int i = 0; i < n; i++) {
                size_t off, len;
                rg__seg(counts[c], n, i, &off, &len);
                ck_assert_uint_eq(off, next); /* contiguous, in order */
                next = off + len;
                min = len < min ? len : min;
                max = len > max ? len : max;
            }
            ck_assert_uint_eq(next, counts[c]);
            ck_assert_uint_le(max - min, 1); /* balanced */
        }
    }
}
END_TEST

START_TEST(test_chunks_tile_a_segment)
{
    static const size_t chunk_bytes[] = {1, 3, 4096, 65536};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
        for (size_t e = 0; e < 4; e++)
            for (size_t b = 0; b < 4; b++) {
                if (counts[c] > 70000 && chunk_bytes[b] < 4096)
                    continue; /* a million one-element chunks prove nothing more */
                size_t nch = rg__nchunks(counts[c], esz[e], chunk_bytes[b]), next = 0;
                size_t per = rg__chunk_elems(esz[e], chunk_bytes[b]);
                ck_assert_uint_ge(per, 1);
                for (size_t j = 0; j < nch; j++) {
                    size_t off, n;
                    rg__chunk(counts[c], esz[e], chunk_bytes[b], j, &off, &n);
                    ck_assert_uint_eq(off, next);
                    ck_assert_uint_ge(n, 1);
                    /* whole elements within the chunk size, unless one element is larger */
                    ck_assert(n * esz[e] <= chunk_bytes[b] || n == 1);
                    next += n;
                }
                ck_assert_uint_eq(next, counts[c]);
                /* past the end: nothing */
                size_t off, n;
                rg__chunk(counts[c], esz[e], chunk_bytes[b], nch, &off, &n);
                ck_assert_uint_eq(n, 0);
            }
}
END_TEST

START_TEST(test_rail_counts_add_up)
{
    for (size_t nch = 0; nch < 40; nch++)
        for (int r = 1; r <= 4; r++) {
            size_t sum = 0;
            for (int k = 0; k < r; k++) {
                size_t got = rg__rail_chunks(nch, r, k), want = 0;
                for (size_t j = (size_t)k; j < nch; j += (size_t)r)
                    want++; /* chunk j rides rail j % r */
                ck_assert_uint_eq(got, want);
                sum += got;
            }
            ck_assert_uint_eq(sum, nch);
        }
}
END_TEST

START_TEST(test_wrid_round_trip)
{
    static const unsigned kinds[] = {RG_WR_SEND, RG_WR_RECV, RG_WR_CREDIT};
    static const unsigned tags[] = {0, 1, 0x7ff, 0xfff};
    static const unsigned conns[] = {0, 1, 255, 0xffff};
    static const uint32_t seqs[] = {0, 1, 0x7fffffff, 0xffffffffu};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 4; d++) {
                    uint64_t w = rg__wrid(kinds[a], tags[b], conns[c], seqs[d]);
                    ck_assert_uint_eq(rg__wrid_kind(w), kinds[a]);
                    ck_assert_uint_eq(rg__wrid_tag(w), tags[b]);
                    ck_assert_uint_eq(rg__wrid_conn(w), conns[c]);
                    ck_assert_uint_eq(rg__wrid_seq(w), seqs[d]);
                }
    /* Out-of-range fields are masked, never spill into their neighbours. */
    uint64_t w = rg__wrid(RG_WR_RECV, 0x1fff, 0x1ffff, 5);
    ck_assert_uint_eq(rg__wrid_kind(w), RG_WR_RECV);
    ck_assert_uint_eq(rg__wrid_tag(w), 0xfff);
    ck_assert_uint_eq(rg__wrid_conn(w), 0xffff);
}
END_TEST

Suite *rg_suite_plan(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("partition");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_segments_tile_the_buffer);
    tcase_add_test(tc, test_chunks_tile_a_segment);
    tcase_add_test(tc, test_rail_counts_add_up);
    tcase_add_test(tc, test_wrid_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
