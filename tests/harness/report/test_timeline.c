/* SPDX-License-Identifier: MIT */
/*
 * The timeline and the run page from files alone: a rank's status lines (one cut short by a
 * kill, one that is not ours) and shim events (a fired fault, a QP's snapshot at the deadline)
 * become spans and marks; trace.json pairs every begin with its end; the page escapes a
 * scenario name, an error and a step label that carry markup.
 */
#include "common/rg_check.h"
#include "judge/rg_judge.h"
#include "report/rg_report.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static rg_result g_r;

static void put(const char *name, const char *text)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s", g_r.dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    memset(&g_r, 0, sizeof(g_r));
    snprintf(g_r.dir, sizeof(g_r.dir), "%s/timeline.%ld", rg_check_tmpdir(), (long)getpid());
    mkdir(g_r.dir, 0755);
    snprintf(g_r.name, sizeof(g_r.name), "<script>x()</script>");
    g_r.ranks = 2;
    g_r.t0_mono_ms = 1000;
    g_r.seconds = 5;
    g_r.nrules = 1;
    snprintf(g_r.rule[0].rule, sizeof(g_r.rule[0].rule), "kill op=recv rank=1 nth=2");
    g_r.rule[0].line = 9;
    g_r.rule[0].fired = 1;
    g_r.rank[0] = (rg_rank_result){.verdict = RG_V_DEADLOCK, .t_s = 5, .left_t_s = -1};
    snprintf(g_r.rank[0].detail, sizeof(g_r.rank[0].detail), "<img src=x> & more");
    g_r.rank[1] = (rg_rank_result){.verdict = RG_V_KILLED, .t_s = 1.5, .left_t_s = 1.5};
    rg_judge(&g_r); /* names the first failure, as every run's result has it */
    snprintf(g_r.why, sizeof(g_r.why), "rank 0: DEADLOCK <b>");
    put("rank0.status", "1100.0 ready\n1200.0 step -1 0 init\n1400.0 step 0 0 all_reduce <x>\n"
                        "garbage line\n1500.0 step 1 0 cut short");
    put("rank1.status", "1200.0 step -1 0 init\n1300.0 step 0 0 all_reduce\n");
    put("rank0.events.jsonl", "{\"event\":\"outstanding\",\"mono_ms\":6000,\"qp_ord\":0,"
                              "\"send\":[],\"recv\":[{\"wr_id\":\"0x2a\",\"len\":65552},"
                              "{\"wr_id\":7,\"len\":1}]}\n"
                              "{\"event\":\"qp\",\"mono_ms\":6000,\"why\":\"snapshot\","
                              "\"qp_ord\":0,\"qp\":17,\"dev\":\"rxe0\",\"posts_send\":3,"
                              "\"cqe_send\":3,\"posts_recv\":9,\"cqe_recv\":1,\"out_send\":0,"
                              "\"out_recv\":8}\nnot json\n");
    put("rank1.events.jsonl", "{\"event\":\"fault\",\"mono_ms\":2400,\"rule\":0,\"line\":1,"
                              "\"op\":\"recv\",\"nth\":2}\n");
}

START_TEST(test_timeline_from_files)
{
    rg_tl_rank *t = malloc(sizeof(*t));
    ck_assert_int_eq(rg_timeline_load(&g_r, 0, t), 0);
    /* init, then all_reduce open until the deadline (the cut line is not a step). */
    ck_assert_int_eq(t->nspans, 2);
    ck_assert_str_eq(t->span[1].label, "all_reduce <x>");
    ck_assert(t->span[1].t0_s == 0.4 && t->span[1].t1_s == 5);
    ck_assert_str_eq(t->span[1].result, "DEADLOCK");
    ck_assert_int_eq(t->nqps, 1);
    ck_assert_int_eq(t->qp[0].out_recv, 8);
    /* The oldest receive named; an entry whose wr_id is not the shim's string is skipped. */
    ck_assert_str_eq(t->qp[0].oldest, "receives: wr_id 0x2a (65552 B)");
    ck_assert_int_eq(rg_timeline_load(&g_r, 1, t), 0);
    ck_assert_int_eq(t->nmarks, 1);
    ck_assert_msg(strstr(t->mark[0].text, "kill op=recv rank=1 nth=2 (line 9)"), "%s",
                  t->mark[0].text);
    ck_assert(t->span[1].t1_s == 1.5);
    /* The runner's wire events beside the shim's: a link down and up, a netem on and off. */
    put("rank1.wire.jsonl",
        "{\"event\":\"link\",\"rule\":0,\"rank\":1,\"rail\":1,\"dev\":\"rxe1\","
        "\"netdev\":\"rg1\",\"mono_ms\":2500,\"t_ms\":1500,\"state\":\"down\",\"down\":true,"
        "\"carrier_changes\":\"unknown\"}\n"
        "{\"event\":\"wire_off\",\"rule\":0,\"rank\":1,\"rail\":0,\"dev\":\"rxe0\","
        "\"netdev\":\"rg0\",\"mono_ms\":2600,\"t_ms\":1600,\"spec\":\"loss 5%\",\"loss\":true,"
        "\"sent_pkts\":3779,\"dropped\":41}\n"
        /* not the runner's line (no t_ms): no mark */
        "{\"event\":\"wire_on\",\"rule\":0,\"rank\":1,\"rail\":0,\"dev\":\"rxe0\","
        "\"netdev\":\"rg0\",\"mono_ms\":2700,\"spec\":\"loss 5%\"}\n");
    ck_assert_int_eq(rg_timeline_load(&g_r, 1, t), 0);
    ck_assert_int_eq(t->nmarks, 3);
    ck_assert_str_eq(t->mark[1].text, "wire: link down rg1 (rail 1, rxe1) (line 9)");
    ck_assert(t->mark[1].t_s > 1.4999 && t->mark[1].t_s < 1.5001);
    ck_assert_str_eq(t->mark[2].text,
                     "wire: netem off rg0 (rail 0, rxe0): 3779 packet(s) through, 41 dropped");
    free(t);
}
END_TEST

START_TEST(test_trace_pairs_and_page_escapes)
{
    char path[1300], err[256];
    snprintf(path, sizeof(path), "%s/trace.json", g_r.dir);
    ck_assert_int_eq(rg_trace_write(&g_r, path, err, sizeof(err)), 0);
    json_t *j = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(j);
    size_t i;
    json_t *e;
    int open = 0, ends = 0, outstanding = 0;
    json_array_foreach(json_object_get(j, "traceEvents"), i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(e, "name"));
        ck_assert_ptr_nonnull(ph);
        open += !strcmp(ph, "B") - !strcmp(ph, "E");
        ck_assert_int_ge(open, 0);
        ends += !strcmp(ph, "E");
        if (!strncmp(name, "outstanding at the deadline: 0 send(s), 8", 41)) {
            outstanding++;
            ck_assert_str_eq(
                json_string_value(json_object_get(json_object_get(e, "args"), "oldest")),
                "receives: wr_id 0x2a (65552 B)");
        }
    }
    ck_assert_int_eq(open, 0);
    ck_assert_int_eq(ends, 4);
    ck_assert_int_eq(outstanding, 1);
    json_decref(j);
    snprintf(path, sizeof(path), "%s/index.html", g_r.dir);
    ck_assert_int_eq(rg_html_write(&g_r, 1, 5, NULL, path, err, sizeof(err)), 0);
    FILE *f = fopen(path, "r");
    static char page[1 << 16];
    size_t n = fread(page, 1, sizeof(page) - 1, f);
    page[n] = '\0';
    fclose(f);
    ck_assert_ptr_null(strstr(page, "<script"));
    ck_assert_ptr_null(strstr(page, "<img"));
    ck_assert_ptr_null(strstr(page, "<b>"));
    ck_assert_ptr_null(strstr(page, "<x>"));
    ck_assert_ptr_nonnull(strstr(page, "&lt;script&gt;x()&lt;/script&gt;"));
    ck_assert_ptr_nonnull(strstr(page, "&lt;img src=x&gt; &amp; more"));
    ck_assert_ptr_nonnull(strstr(page, "<svg"));
}
END_TEST

Suite *rg_suite_timeline(void)
{
    Suite *s = suite_create("timeline");
    TCase *t = tcase_create("files");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_add_test(t, test_timeline_from_files);
    tcase_add_test(t, test_trace_pairs_and_page_escapes);
    suite_add_tcase(s, t);
    return s;
}
