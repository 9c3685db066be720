/* SPDX-License-Identifier: MIT */
/*
 * What `railguard bench` computes without a device: its options (shared by the command and its
 * ranks, so a spec written back as options must read back the same), the sizes, the counts a
 * size makes per operation, nccl-tests' bus factors, and the median and rank combination.
 */
#include "common/rg_check.h"
#include "rank/rg_rank.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

START_TEST(test_bench_options_round_trip)
{
    rg_bench_spec a, b;
    rg_bench_defaults(&a);
    const char *set[][2] = {{"ops", "all_gather,sendrecv"},
                            {"b", "1K"},
                            {"e", "16M"},
                            {"f", "4"},
                            {"n", "7"},
                            {"w", "0"},
                            {"N", "9"},
                            {"d", "bfloat16"},
                            {"o", "max"},
                            {"r", "2"},
                            {"c", "0"},
                            {"R", "1"},
                            {"a", "3"},
                            {"ranks", "4"},
                            {"rails", "2"},
                            {"qp", "uc"},
                            {"algo", "mesh"},
                            {"timeout", "2.5"}};
    for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
        ck_assert_int_eq(rg_bench_option(&a, set[i][0], set[i][1]), 0);
    ck_assert_uint_eq(a.ops, RG_BIT(RG_OP_ALL_GATHER) | RG_BIT(RG_OP_SENDRECV));
    ck_assert_uint_eq(a.max_bytes, 16u << 20);
    ck_assert_int_eq(a.dtype, RG_BFLOAT16);
    ck_assert_int_eq(a.redop, RG_MAX);
    char buf[1024], *argv[64];
    int n = rg_bench_args(&a, buf, sizeof(buf), argv, 64);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(n % 2, 0);
    rg_bench_defaults(&b);
    for (int i = 0; i < n; i += 2)
        ck_assert_int_eq(rg_bench_option(&b, argv[i] + (argv[i][1] == '-' ? 2 : 1), argv[i + 1]),
                         0);
    ck_assert_mem_eq(&a, &b, sizeof(a));
    /* -i replaces -f, and goes back as -i. */
    ck_assert_int_eq(rg_bench_option(&a, "i", "3K"), 0);
    ck_assert_int_eq(a.factor, 0);
    n = rg_bench_args(&a, buf, sizeof(buf), argv, 64);
    rg_bench_defaults(&b);
    for (int i = 0; i < n; i += 2)
        ck_assert_int_eq(rg_bench_option(&b, argv[i] + (argv[i][1] == '-' ? 2 : 1), argv[i + 1]),
                         0);
    ck_assert_mem_eq(&a, &b, sizeof(a));
}
END_TEST

START_TEST(test_bench_options_refused)
{
    rg_bench_spec s, d;
    rg_bench_defaults(&s);
    d = s;
    const char *bad[][2] = {{"ops", "all_reduce,barrier"},
                            {"ops", ""},
                            {"ops", NULL},
                            {"b", "0"},
                            {"b", "1T"},
                            {"e", "-1"},
                            {"f", "1"},
                            {"f", "2.5"},
                            {"n", "0"},
                            {"w", "x"},
                            {"N", "1001"},
                            {"d", "float128"},
                            {"o", "avg"},
                            {"r", "64"},
                            {"c", "yes"},
                            {"a", "4"},
                            {"ranks", "1"},
                            {"rails", "5"},
                            {"qp", "ud"},
                            {"algo", "tree"},
                            {"timeout", "0"},
                            {"timeout", "inf"}};
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(rg_bench_option(&s, bad[i][0], bad[i][1]) == -1, "%s %s accepted", bad[i][0],
                      bad[i][1] ? bad[i][1] : "(none)");
    fclose(stderr);
    stderr = saved;
    ck_assert_mem_eq(&s, &d, sizeof(s)); /* nothing changed by a refused value */
    ck_assert_int_eq(rg_bench_option(&s, "bogus", "1"), 1);
}
END_TEST

START_TEST(test_bench_sizes_and_counts)
{
    rg_bench_spec s;
    uint64_t z[RG_BENCH_MAX_SIZES];
    rg_bench_defaults(&s);
    s.min_bytes = 8;
    s.max_bytes = 1 << 20;
    s.factor = 4;
    ck_assert_int_eq(rg_bench_sizes(&s, z, RG_BENCH_MAX_SIZES), 9); /* 8 .. 512K */
    ck_assert_uint_eq(z[8], 512u << 10);
    s.factor = 0;
    s.step_bytes = 100;
    s.min_bytes = 100;
    s.max_bytes = 350;
    ck_assert_int_eq(rg_bench_sizes(&s, z, RG_BENCH_MAX_SIZES), 3);
    ck_assert_uint_eq(z[2], 300);
    /* A size is the larger buffer: all_gather's output, reduce_scatter's input. */
    ck_assert_uint_eq(rg_bench_count(RG_OP_ALL_REDUCE, 4096, 4, 3), 1024);
    ck_assert_uint_eq(rg_bench_count(RG_OP_ALL_GATHER, 4096, 4, 3), 341);
    ck_assert_uint_eq(rg_bench_bytes(RG_OP_ALL_GATHER, 341, 4, 3), 4092);
    ck_assert_uint_eq(rg_bench_count(RG_OP_REDUCE_SCATTER, 8, 4, 3), 0);
    ck_assert_uint_eq(rg_bench_bytes(RG_OP_SENDRECV, 5, 8, 3), 40);
}
END_TEST

START_TEST(test_bench_factors_and_stats)
{
    ck_assert(fabs(rg_bench_bus_factor(RG_OP_ALL_REDUCE, 4) - 1.5) < 1e-12);
    ck_assert(fabs(rg_bench_bus_factor(RG_OP_ALL_GATHER, 4) - 0.75) < 1e-12);
    ck_assert(fabs(rg_bench_bus_factor(RG_OP_REDUCE_SCATTER, 2) - 0.5) < 1e-12);
    ck_assert(rg_bench_bus_factor(RG_OP_BROADCAST, 8) == 1.0);
    ck_assert(rg_bench_bus_factor(RG_OP_SENDRECV, 8) == 1.0);
    double v[] = {5, 1, 4, 2, 3}, w[] = {4, 1, 3, 2};
    ck_assert(rg_bench_median(v, 5) == 3);
    ck_assert(rg_bench_median(w, 4) == 2.5);
    ck_assert(isnan(rg_bench_median(w, 0)));
    const double t[] = {2, 6, 1, 3};
    ck_assert(rg_bench_combine(t, 4, 0) == 2);
    ck_assert(rg_bench_combine(t, 4, 1) == 3);
    ck_assert(rg_bench_combine(t, 4, 2) == 1);
    ck_assert(rg_bench_combine(t, 4, 3) == 6);
    ck_assert_str_eq(rg_bench_op_name(RG_OP_REDUCE_SCATTER), "reduce_scatter");
    ck_assert_int_eq(rg_bench_op_of("sendrecv"), RG_OP_SENDRECV);
    ck_assert_int_eq(rg_bench_op_of("barrier"), -1);
}
END_TEST

Suite *rg_suite_bench(void)
{
    Suite *s = suite_create("bench");
    TCase *t = tcase_create("spec");
    tcase_add_test(t, test_bench_options_round_trip);
    tcase_add_test(t, test_bench_options_refused);
    tcase_add_test(t, test_bench_sizes_and_counts);
    tcase_add_test(t, test_bench_factors_and_stats);
    suite_add_tcase(s, t);
    return s;
}
