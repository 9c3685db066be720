/* SPDX-License-Identifier: MIT */
/* GID choice: the IPv4-mapped RoCE v2 GID routes over the rail's /24, so it wins. */
#include "common/rg_check.h"
#include "rg_verbs.h"

#include <string.h>

static struct rg_vgid_entry ent(int index, int type, const char *kind)
{
    struct rg_vgid_entry e;
    memset(&e, 0, sizeof(e));
    e.index = index;
    e.type = type;
    if (!strcmp(kind, "v4")) { /* ::ffff:10.9.0.1 */
        e.gid[10] = e.gid[11] = 0xff;
        e.gid[12] = 10, e.gid[13] = 9, e.gid[15] = 1;
    } else if (!strcmp(kind, "ll")) { /* fe80::1 */
        e.gid[0] = 0xfe, e.gid[1] = 0x80, e.gid[15] = 1;
    }
    return e;
}

START_TEST(test_prefers_v2_ipv4)
{
    struct rg_vgid_entry t[] = {
        ent(0, IBV_GID_TYPE_ROCE_V1, "ll"), ent(1, IBV_GID_TYPE_ROCE_V2, "ll"),
        ent(2, IBV_GID_TYPE_ROCE_V1, "v4"), ent(3, IBV_GID_TYPE_ROCE_V2, "v4")};
    ck_assert_int_eq(rg_vgid_pick(t, 4), 3);
}
END_TEST

START_TEST(test_rxe_table_shape)
{
    /* rxe lists one type per entry: fe80:: as v2 at 0, then ::ffff:a.b.c.d as v2 at 1. */
    struct rg_vgid_entry t[] = {ent(0, IBV_GID_TYPE_ROCE_V2, "ll"),
                                ent(1, IBV_GID_TYPE_ROCE_V2, "v4"),
                                ent(2, IBV_GID_TYPE_ROCE_V2, "zero")};
    ck_assert_int_eq(rg_vgid_pick(t, 3), 1);
}
END_TEST

START_TEST(test_falls_back_and_skips_zero)
{
    struct rg_vgid_entry t[] = {ent(0, IBV_GID_TYPE_ROCE_V2, "zero"), ent(4, IBV_GID_TYPE_IB, "ll"),
                                ent(2, IBV_GID_TYPE_IB, "ll")};
    ck_assert_int_eq(rg_vgid_pick(t, 3), 2); /* lowest index among equals */
    ck_assert_int_eq(rg_vgid_pick(t, 1), -1);
    ck_assert_int_eq(rg_vgid_pick(t, 0), -1);
}
END_TEST

Suite *rg_suite_verbs_gid(void)
{
    Suite *s = suite_create("verbs_gid");
    TCase *tc = tcase_create("pick");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_prefers_v2_ipv4);
    tcase_add_test(tc, test_rxe_table_shape);
    tcase_add_test(tc, test_falls_back_and_skips_zero);
    suite_add_tcase(s, tc);
    return s;
}
