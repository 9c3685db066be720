/* SPDX-License-Identifier: MIT */
/*
 * The verbs layer on real rxe: a UC and an RC QP pair between two processes move 1 MiB in
 * chunks, verified bit-exact, on every rail; odd sizes; and the failures that must surface
 * as errors within the deadline rather than hang: a crossed rail and a missing device.
 */
#include "common/rg_check.h"
#include "rg_verbs.h"
#include "vpair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char devs[8][64];
static int ndevs;

static void setup(void)
{
    ndevs = rg_check_devices(devs, 8);
    ck_assert_msg(ndevs > 0, "RG_SOFTROCE_DEVICES names no device");
}

static void expect_ok(struct vpair_opts *o)
{
    struct vpair_result r;
    rg_status st = vpair_run(o, &r);
    ck_assert_msg(st == RG_OK, "%s %s->%s %zu bytes: %s: %s", o->kind == RG_QP_RC ? "RC" : "UC",
                  o->send_dev, o->recv_dev, o->bytes, rg_err_name(st), r.msg);
    ck_assert_uint_eq(r.bytes_verified, o->bytes);
    printf("  %s %s: %zu bytes in %.3f s, verified\n", o->kind == RG_QP_RC ? "RC" : "UC",
           o->send_dev, r.bytes_verified, r.seconds);
}

/* Loop index: rail * 2 + kind, so each rail runs UC and RC. */
START_TEST(test_pair_1mib_each_rail)
{
    struct vpair_opts o;
    int rail = _i / 2;
    ck_assert_int_lt(rail, ndevs);
    vpair_opts_default(&o);
    o.send_dev = o.recv_dev = devs[rail];
    o.kind = _i % 2 ? RG_QP_RC : RG_QP_UC;
    o.seed = (uint64_t)_i + 11;
    expect_ok(&o);
}
END_TEST

START_TEST(test_pair_odd_sizes)
{
    /* One byte; a prime total with a prime chunk (a short last chunk); chunk > total. */
    static const size_t sizes[][2] = {{1, 4096}, {1000003, 4099}, {4, 65536}};
    struct vpair_opts o;
    vpair_opts_default(&o);
    o.send_dev = o.recv_dev = devs[0];
    o.kind = _i ? RG_QP_RC : RG_QP_UC;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        o.bytes = sizes[k][0];
        o.chunk = sizes[k][1];
        o.window = 3;
        expect_ok(&o);
    }
}
END_TEST

START_TEST(test_rc_crossed_rail_is_an_error)
{
    /* rxe0 and rxe1 are different links: RC must end in RETRY_EXC_ERR, not hang. */
    struct vpair_opts o;
    struct vpair_result r;
    ck_assert_msg(ndevs >= 2, "this test needs two rails (ci/softroce --rails 2)");
    vpair_opts_default(&o);
    o.send_dev = devs[0];
    o.recv_dev = devs[1];
    o.kind = RG_QP_RC;
    o.tuning.retry_cnt = 1;
    o.tuning.timeout = 10;
    o.timeout_s = 20;
    ck_assert_int_eq(vpair_run(&o, &r), RG_ERR_COMPLETION);
    ck_assert_msg(strstr(r.msg, "retry counter exceeded") != NULL, "message: %s", r.msg);
    ck_assert_msg(strstr(r.msg, "(12)") != NULL, "message lacks the status number: %s", r.msg);
}
END_TEST

START_TEST(test_uc_crossed_rail_times_out)
{
    /* UC gives no error at all on a crossed rail: only the deadline catches it. */
    struct vpair_opts o;
    struct vpair_result r;
    ck_assert_msg(ndevs >= 2, "this test needs two rails (ci/softroce --rails 2)");
    vpair_opts_default(&o);
    o.send_dev = devs[0];
    o.recv_dev = devs[1];
    o.kind = RG_QP_UC;
    o.bytes = 64 << 10;
    o.timeout_s = 3;
    ck_assert_int_eq(vpair_run(&o, &r), RG_ERR_TIMEOUT);
    ck_assert_msg(strstr(r.msg, "receiver") != NULL, "message: %s", r.msg);
}
END_TEST

START_TEST(test_missing_device)
{
    struct vpair_opts o;
    struct vpair_result r;
    vpair_opts_default(&o);
    o.send_dev = o.recv_dev = "rxe_no_such";
    o.timeout_s = 5;
    ck_assert_int_eq(vpair_run(&o, &r), RG_ERR_NODEV);
    ck_assert_msg(strstr(r.msg, "rxe_no_such") != NULL, "message: %s", r.msg);
}
END_TEST

/* A forced GID index: junk, outside the table, or on an empty entry is a config error that
 * says which, at open. (An empty entry used to fail later as "No data available".) */
START_TEST(test_gid_index_forced)
{
    static const struct {
        const char *value, *want;
    } cases[] = {
        {"abc", "RG_GID_INDEX='abc': not an index 0.."},
        {" 1", "RG_GID_INDEX=' 1': not an index 0.."},
        {"100000", "RG_GID_INDEX='100000': not an index 0.."},
    };
    struct rg_vdev d;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct rg_err e = {0};
        setenv("RG_GID_INDEX", cases[i].value, 1);
        ck_assert_int_eq(rg_vdev_open(&d, devs[0], &e), RG_ERR_CONFIG);
        ck_assert_msg(strstr(e.msg, cases[i].want), "%s", e.msg);
    }
    /* The last entry of the table: rxe fills only the first few. */
    struct rg_err e = {0};
    unsetenv("RG_GID_INDEX");
    ck_assert_int_eq(rg_vdev_open(&d, devs[0], &e), RG_OK);
    int last = d.gid_table_len - 1;
    rg_vdev_close(&d);
    char v[16];
    snprintf(v, sizeof(v), "%d", last);
    setenv("RG_GID_INDEX", v, 1);
    e = (struct rg_err){0};
    ck_assert_int_eq(rg_vdev_open(&d, devs[0], &e), RG_ERR_CONFIG);
    ck_assert_msg(strstr(e.msg, "GID table is empty"), "%s", e.msg);
    /* A populated one is taken. */
    setenv("RG_GID_INDEX", "0", 1);
    e = (struct rg_err){0};
    ck_assert_msg(rg_vdev_open(&d, devs[0], &e) == RG_OK, "%s", e.msg);
    ck_assert_int_eq(d.gid_index, 0);
    rg_vdev_close(&d);
    unsetenv("RG_GID_INDEX");
}
END_TEST

Suite *rg_suite_it_verbs(void)
{
    Suite *s = suite_create("it_verbs");
    /* The loop covers exactly the rails this run has. */
    int rails = rg_check_devices(devs, 8);
    TCase *tc = tcase_create("pairs");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_pair_1mib_each_rail, 0, 2 * (rails > 0 ? rails : 1));
    tcase_add_loop_test(tc, test_pair_odd_sizes, 0, 2);
    tcase_add_test(tc, test_rc_crossed_rail_is_an_error);
    tcase_add_test(tc, test_uc_crossed_rail_times_out);
    tcase_add_test(tc, test_missing_device);
    tcase_add_test(tc, test_gid_index_forced);
    suite_add_tcase(s, tc);
    return s;
}
