/* SPDX-License-Identifier: MIT */
/*
 * `railguard bench` end to end on rxe: the reference transport through every operation at 3
 * ranks, whose JSON must hold a row per operation and size with no wrong element and with
 * algbw and busbw as nccl-tests defines them from the times it reports; a transport that
 * returns stale data (tests/harness/bad_plugin.c) must be counted wrong and fail the bench; one
 * that returns errors must fail it with the error named; and under the shim the bench must run
 * with the shim's events as evidence that it was there.
 */
#include "common/rg_check.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_bin[PATH_MAX], g_bad[PATH_MAX], g_tmp[PATH_MAX], g_json[PATH_MAX + 32];
static char g_out[65536];

static void setup(void)
{
    rg_check_build_file(g_bin, sizeof(g_bin), "bin/railguard");
    rg_check_build_file(g_bad, sizeof(g_bad), "lib/rg-test-bad-plugin.so");
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/rg-it-bench.%ld", (long)getpid());
    mkdir(g_tmp, 0755);
    snprintf(g_json, sizeof(g_json), "%s/bench.json", g_tmp);
    unlink(g_json);
}

static json_t *load_json(void)
{
    json_error_t e;
    json_t *j = json_load_file(g_json, 0, &e);
    ck_assert_msg(j, "%s: %s (line %d); output:\n%s", g_json, e.text, e.line, g_out);
    return j;
}

START_TEST(test_bench_reference_all_ops)
{
    const char *args[] = {"bench", "--ops", "all", "--ranks", "3",    "-b", "64",
                          "-e",    "64K",   "-f",  "32",      "-n",   "3",  "-w",
                          "1",     "-N",    "3",   "--json",  g_json, NULL};
    int st = rg_check_cmd(g_bin, NULL, args, 300, g_out, sizeof(g_out));
    ck_assert_msg(st == 0, "bench exited %d:\n%s", st, g_out);
    ck_assert_msg(strstr(g_out, "# wrong elements: 0 OK"), "%s", g_out);
    json_t *j = load_json();
    ck_assert(json_is_true(json_object_get(j, "ok")));
    json_t *rows = json_object_get(j, "results");
    /* 64 B, 2 KiB, 64 KiB for each of the five operations (all fit 3 float32 ranks). */
    ck_assert_int_eq(json_array_size(rows), 15);
    const double factor[] = {4.0 / 3, 2.0 / 3, 2.0 / 3, 1, 1}; /* by rg_plugin_op */
    size_t i;
    json_t *row;
    int seen = 0;
    json_array_foreach(rows, i, row)
    {
        const char *op = json_string_value(json_object_get(row, "op"));
        static const char *const names[] = {"all_reduce", "all_gather", "reduce_scatter",
                                            "broadcast", "sendrecv"};
        int k = 0;
        while (k < 5 && strcmp(op, names[k]))
            k++;
        ck_assert_msg(k < 5, "row %zu: op %s", i, op);
        seen |= 1 << k;
        json_t *t = json_object_get(row, "time_us");
        double med = json_real_value(json_object_get(t, "median"));
        double lo = json_real_value(json_object_get(t, "min"));
        double hi = json_real_value(json_object_get(t, "max"));
        double size = (double)json_integer_value(json_object_get(row, "size"));
        double alg = json_real_value(json_object_get(row, "algbw_gbs"));
        double bus = json_real_value(json_object_get(row, "busbw_gbs"));
        ck_assert_msg(med > 0 && lo <= med && med <= hi, "%s %g: %g %g %g", op, size, lo, med, hi);
        ck_assert_int_eq(json_array_size(json_object_get(t, "rounds")), 3);
        ck_assert_msg(fabs(alg - size / (med * 1e-6) / 1e9) <= 1e-9 + alg * 1e-9, "%s algbw", op);
        ck_assert_msg(fabs(bus - alg * factor[k]) <= 1e-12 + bus * 1e-9, "%s busbw %g vs %g", op,
                      bus, alg * factor[k]);
        ck_assert_int_eq(json_integer_value(json_object_get(row, "wrong")), 0);
        ck_assert_int_eq(json_array_size(json_object_get(row, "wrong_per_rank")), 3);
    }
    ck_assert_int_eq(seen, 0x1f);
    json_t *mem = json_object_get(j, "ranks_memory");
    ck_assert_int_eq(json_array_size(mem), 3);
    json_array_foreach(mem, i, row)
    {
        ck_assert_int_gt(json_integer_value(json_object_get(row, "peak_rss_kib")), 0);
        /* The reference transport registers its staging buffers: pinned pages show. */
        ck_assert_int_gt(json_integer_value(json_object_get(row, "pinned_kib")), 0);
    }
    json_decref(j);
}
END_TEST

START_TEST(test_bench_counts_wrong_data)
{
    /* bad_plugin "stale": success with the output untouched. It has no all_gather or
     * reduce_scatter, so those are reported skipped, not run. */
    const char *env[] = {"RG_BAD_MODE", "stale", NULL};
    const char *args[] = {"bench", "--transport", g_bad, "--ops",  "all",  "-b",
                          "256",   "-e",          "256", "-n",     "2",    "-w",
                          "0",     "-N",          "2",   "--json", g_json, NULL};
    int st = rg_check_cmd(g_bin, env, args, 120, g_out, sizeof(g_out));
    ck_assert_msg(st == 1, "bench exited %d:\n%s", st, g_out);
    ck_assert_msg(strstr(g_out, "FAILED"), "%s", g_out);
    json_t *j = load_json();
    ck_assert(json_is_false(json_object_get(j, "ok")));
    ck_assert_int_eq(json_array_size(json_object_get(j, "skipped")), 2);
    size_t i;
    json_t *row;
    json_t *rows = json_object_get(j, "results");
    ck_assert_int_eq(json_array_size(rows), 3); /* all_reduce, broadcast, sendrecv */
    json_array_foreach(rows, i, row)
    {
        ck_assert_msg(json_integer_value(json_object_get(row, "wrong")) > 0, "%s: no wrong",
                      json_string_value(json_object_get(row, "op")));
    }
    json_decref(j);
}
END_TEST

START_TEST(test_bench_names_errors)
{
    const char *env[] = {"RG_BAD_MODE", "error", NULL};
    const char *args[] = {"bench", "--transport", g_bad, "-b", "64", "-e",
                          "64",    "-n",          "2",   "-N", "1",  NULL};
    int st = rg_check_cmd(g_bin, env, args, 120, g_out, sizeof(g_out));
    ck_assert_msg(st == 1, "bench exited %d:\n%s", st, g_out);
    ck_assert_msg(strstr(g_out, "rank 0: FAILED: all_reduce 64 failed (v1)"), "%s", g_out);
}
END_TEST

START_TEST(test_bench_under_the_shim)
{
    const char *args[] = {"bench", "--with-shim", "-b", "4K",     "-e",   "4K", "-n",
                          "3",     "-N",          "2",  "--json", g_json, NULL};
    int st = rg_check_cmd(g_bin, NULL, args, 120, g_out, sizeof(g_out));
    ck_assert_msg(st == 0, "bench exited %d:\n%s", st, g_out);
    ck_assert_msg(strstr(g_out, ", under the shim (pass-through)"), "%s", g_out);
    json_t *j = load_json();
    ck_assert_str_eq(json_string_value(json_object_get(j, "shim")), "pass-through");
    ck_assert_int_eq(json_array_size(json_object_get(j, "results")), 1);
    json_decref(j);
    /* Under run's counting plan: the shim tracks every request, as in a scenario. */
    args[1] = "--with-shim-counting";
    st = rg_check_cmd(g_bin, NULL, args, 120, g_out, sizeof(g_out));
    ck_assert_msg(st == 0, "bench exited %d:\n%s", st, g_out);
    j = load_json();
    ck_assert_str_eq(json_string_value(json_object_get(j, "shim")), "counting");
    json_decref(j);
}
END_TEST

START_TEST(test_bench_rank_wrapper)
{
    /* Each rank runs under the wrapper (what make bench does with callgrind): the wrapper
     * leaves one mark per rank, then execs the rank. */
    char wrap[PATH_MAX + 32], marks[PATH_MAX + 32], cmd[2 * PATH_MAX + 64];
    snprintf(wrap, sizeof(wrap), "%s/wrap.sh", g_tmp);
    snprintf(marks, sizeof(marks), "%s/marks", g_tmp);
    unlink(marks);
    FILE *f = fopen(wrap, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\necho \"$@\" | grep -o -- '--rank [0-9]*' >>'%s'\nexec \"$@\"\n", marks);
    fclose(f);
    ck_assert_int_eq(chmod(wrap, 0755), 0);
    const char *args[] = {
        "bench", "--rank-wrapper", wrap, "-b", "64", "-e", "64", "-n", "2", "-N", "1", NULL};
    int st = rg_check_cmd(g_bin, NULL, args, 120, g_out, sizeof(g_out));
    ck_assert_msg(st == 0, "bench exited %d:\n%s", st, g_out);
    snprintf(cmd, sizeof(cmd), "sort %s | tr '\\n' ,", marks);
    FILE *p = popen(cmd, "r");
    char got[64] = "";
    ck_assert_ptr_nonnull(fgets(got, sizeof(got), p) ? p : NULL);
    pclose(p);
    ck_assert_str_eq(got, "--rank 0,--rank 1,");
    /* A wrapper that is not a program is one line before any rank starts. */
    const char *bad[] = {"bench", "--rank-wrapper", "/nonexistent/valgrind", NULL};
    ck_assert_int_eq(rg_check_cmd(g_bin, NULL, bad, 30, g_out, sizeof(g_out)), 2);
    ck_assert_msg(strstr(g_out, "--rank-wrapper"), "%s", g_out);
}
END_TEST

Suite *rg_suite_it_bench(void)
{
    Suite *s = suite_create("it_bench");
    TCase *t = tcase_create("bench");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_set_timeout(t, 400);
    tcase_add_test(t, test_bench_reference_all_ops);
    tcase_add_test(t, test_bench_counts_wrong_data);
    tcase_add_test(t, test_bench_names_errors);
    tcase_add_test(t, test_bench_under_the_shim);
    tcase_add_test(t, test_bench_rank_wrapper);
    suite_add_tcase(s, t);
    return s;
}
