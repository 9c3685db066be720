/* SPDX-License-Identifier: MIT */
/* Where a scenario's time went (harness/result/rg_result_phases.c): the phases as result.json
 * and report.json hold them, "not measured" kept apart from zero, read back checked, summed. */
#include "common/rg_check.h"
#include "result/rg_result.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(test_json_round_trip)
{
    rg_phases p, q;
    rg_phases_unknown(&p);
    p.s[RG_PH_START] = 1.5;
    p.s[RG_PH_WORK] = 0; /* measured, and none: not the same as not measured */
    p.s[RG_PH_JUDGE] = 0.25;
    json_t *o = rg_phases_json(&p);
    ck_assert_ptr_nonnull(o);
    ck_assert(json_is_null(json_object_get(o, "hang_s")));
    ck_assert(json_number_value(json_object_get(o, "start_s")) == 1.5);
    char err[300];
    ck_assert_int_eq(rg_phases_read(o, &q, "r.json", err, sizeof(err)), 0);
    for (int i = 0; i < RG_PHASES; i++)
        ck_assert_msg(p.s[i] == q.s[i], "phase %s: %g, read back %g", rg_phase_names[i], p.s[i],
                      q.s[i]);
    /* A value no writer writes is refused, named. */
    json_object_set_new(o, "stop_s", json_real(-2));
    ck_assert_int_eq(rg_phases_read(o, &q, "r.json", err, sizeof(err)), -1);
    ck_assert_str_eq(err, "r.json: phases.stop_s is not null nor 0..1e9 seconds");
    json_object_set_new(o, "stop_s", json_string("3"));
    ck_assert_int_eq(rg_phases_read(o, &q, "r.json", err, sizeof(err)), -1);
    json_decref(o);
    json_t *x = json_string("x");
    ck_assert_int_eq(rg_phases_read(x, &q, "r.json", err, sizeof(err)), -1);
    json_decref(x);
    /* A result from before phases were kept: every phase not measured. */
    ck_assert_int_eq(rg_phases_read(NULL, &q, "r.json", err, sizeof(err)), 0);
    for (int i = 0; i < RG_PHASES; i++)
        ck_assert(q.s[i] == -1);
}
END_TEST

/* result.json keeps them, and a run's sum says in how many each was not measured. */
START_TEST(test_result_and_sum)
{
    static rg_result r[3], back;
    memset(r, 0, sizeof(r));
    for (int i = 0; i < 3; i++) {
        snprintf(r[i].name, sizeof(r[i].name), "s%d", i);
        r[i].ranks = 1;
        r[i].first_rank = -1;
        r[i].time_scale = r[i].attempts = 1;
        rg_phases_unknown(&r[i].phases);
        r[i].phases.s[RG_PH_START] = 1 + i;
        r[i].phases.s[RG_PH_HANG] = i == 1 ? -1 : 2;
    }
    char path[] = "/tmp/rg-phases-XXXXXX", err[600];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(rg_result_save(&r[1], path, err, sizeof(err)), 0);
    ck_assert_msg(rg_result_read(&back, path, err, sizeof(err)) == 0, "%s", err);
    unlink(path);
    ck_assert(back.phases.s[RG_PH_START] == 2 && back.phases.s[RG_PH_HANG] == -1 &&
              back.phases.s[RG_PH_STOP] == -1);
    rg_phases sum;
    int unknown[RG_PHASES];
    rg_phases_sum(r, 3, &sum, unknown);
    ck_assert(sum.s[RG_PH_START] == 6 && unknown[RG_PH_START] == 0);
    ck_assert(sum.s[RG_PH_HANG] == 4 && unknown[RG_PH_HANG] == 1);
    ck_assert(sum.s[RG_PH_WORK] == 0 && unknown[RG_PH_WORK] == 3);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rg_phases_line(f, r, 3);
    fclose(f);
    ck_assert_msg(strstr(buf, "time by phase, summed over 3 result(s): start-up 6.0 s, the "
                              "transport's work not measured, waiting on hangs 4.0 s "
                              "(not measured in 1),"),
                  "%s", buf);
    free(buf);
}
END_TEST

Suite *rg_suite_phases(void)
{
    Suite *s = suite_create("phases");
    TCase *t = tcase_create("phases");
    tcase_add_test(t, test_json_round_trip);
    tcase_add_test(t, test_result_and_sum);
    suite_add_tcase(s, t);
    return s;
}
