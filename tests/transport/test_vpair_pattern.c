/* SPDX-License-Identifier: MIT */
/*
 * The integration tests trust vpair's pattern to catch corruption, so the pattern is tested:
 * any single flipped bit, at any offset, is found at its exact byte.
 */
#include "common/rg_check.h"
#include "vpair.h"

#include <stdlib.h>
#include <string.h>

START_TEST(test_every_bit_flip_found)
{
    enum { LEN = 257 };
    uint8_t buf[LEN];
    vpair_fill(buf, LEN, 0, 42);
    ck_assert_uint_eq(vpair_check(buf, LEN, 0, 42), LEN);
    for (size_t i = 0; i < LEN; i += 13) {
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            ck_assert_uint_eq(vpair_check(buf, LEN, 0, 42), i);
            buf[i] ^= (uint8_t)(1u << bit);
        }
    }
}
END_TEST

START_TEST(test_offsets_compose)
{
    /* A chunk filled at its own offset equals the same bytes of the whole stream. */
    uint8_t whole[1000], part[333];
    vpair_fill(whole, sizeof(whole), 0, 7);
    vpair_fill(part, sizeof(part), 501, 7);
    ck_assert_int_eq(memcmp(whole + 501, part, sizeof(part)), 0);
    ck_assert_uint_eq(vpair_check(whole + 501, sizeof(part), 501, 7), sizeof(part));
}
END_TEST

START_TEST(test_seed_and_shift_change_pattern)
{
    uint8_t a[64], b[64];
    vpair_fill(a, sizeof(a), 0, 1);
    vpair_fill(b, sizeof(b), 0, 2);
    ck_assert_uint_lt(vpair_check(b, sizeof(b), 0, 1), sizeof(b));
    /* Data landing 8 bytes off (a wrong offset) is caught too. */
    vpair_fill(b, sizeof(b), 8, 1);
    ck_assert_uint_lt(vpair_check(b, sizeof(b), 0, 1), sizeof(b));
    (void)a;
}
END_TEST

START_TEST(test_zero_buffer_is_not_the_pattern)
{
    /* A receive that never landed leaves zeros: stale buffers must not pass. */
    uint8_t z[64];
    memset(z, 0, sizeof(z));
    ck_assert_uint_lt(vpair_check(z, sizeof(z), 0, 3), 8);
}
END_TEST

Suite *rg_suite_vpair_pattern(void)
{
    Suite *s = suite_create("vpair_pattern");
    TCase *tc = tcase_create("pattern");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_every_bit_flip_found);
    tcase_add_test(tc, test_offsets_compose);
    tcase_add_test(tc, test_seed_and_shift_change_pattern);
    tcase_add_test(tc, test_zero_buffer_is_not_the_pattern);
    suite_add_tcase(s, tc);
    return s;
}
