/* SPDX-License-Identifier: MIT */
/* A rank's verbs trace read back (harness/evidence/rg_trace.c): every field as the shim writes
 * it, and a line that is not counted and named, never read as a quiet 0. */
#include "common/rg_check.h"
#include "evidence/rg_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const good =
    "{\"event\":\"load\",\"rank\":0,\"pid\":7,\"mono_ms\":1.0}\n"
    "{\"event\":\"trace_qp\",\"rank\":0,\"pid\":7,\"mono_ms\":2.0,\"dev\":\"rxe1\",\"qp\":18,"
    "\"type\":\"uc\",\"srq\":false,\"gid\":\"fe800000000000000000000000000001\",\"send_cq\":1,"
    "\"recv_cq\":1,\"peer_qp\":19,\"peer_gid\":\"fe800000000000000000000000000002\"}\n"
    "{\"event\":\"trace_post\",\"rank\":0,\"pid\":7,\"mono_ms\":3.0,\"dev\":\"rxe1\",\"qp\":18,"
    "\"dir\":\"send\",\"op\":\"write_imm\",\"n\":1,\"wr_id\":\"0x8000000000000001\",\"bytes\":9,"
    "\"signaled\":false,\"fate\":\"lost\",\"at_ms\":2.5}\n"
    "{\"event\":\"trace_cqe\",\"rank\":0,\"pid\":7,\"mono_ms\":4.0,\"dev\":\"rxe1\",\"qp\":18,"
    "\"dir\":\"?\",\"op\":\"?\",\"status\":5,\"wr_id\":\"0x1\",\"bytes\":0,\"cq\":1,\"polls\":12}\n"
    "{\"event\":\"trace_idle\",\"rank\":0,\"pid\":7,\"mono_ms\":5.0,\"dev\":\"rxe1\",\"cq\":1,"
    "\"idle\":256}\n";

static char g_path[64];

static void put(const char *text)
{
    FILE *f = fopen(g_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_trace_read)
{
    rg_trace t;
    char err[300];
    int fd = mkstemp(strcpy(g_path, "/tmp/rg-trace-XXXXXX"));
    ck_assert_int_ge(fd, 0);
    close(fd);
    put(good);
    ck_assert_int_eq(rg_trace_read(g_path, &t, err, sizeof(err)), 0);
    ck_assert(t.present && t.any && !t.full);
    ck_assert_int_eq(t.bad_lines, 0);
    ck_assert_int_eq(t.nqps, 1);
    const rg_tr_qp *q = &t.qp[0];
    ck_assert(q->pid == 7 && q->qpn == 18 && !strcmp(q->dev, "rxe1"));
    ck_assert(q->known && !q->srq && !q->gap);
    ck_assert_str_eq(q->type, "uc");
    ck_assert_str_eq(q->peer_gid, "fe800000000000000000000000000002");
    ck_assert_int_eq(q->peer_qpn, 19);
    ck_assert_int_eq(q->nposts, 1);
    ck_assert_int_eq(q->post[0].kind, RG_TR_K_WRITE_IMM);
    ck_assert(rg_tr_consumes(q->post[0].kind));
    ck_assert_int_eq(q->post[0].fate, RG_TR_LOST);
    ck_assert(!q->post[0].signaled);
    ck_assert_double_eq(q->post[0].at_ms, 2.5);
    ck_assert_int_eq(q->post[0].line, 3);
    ck_assert_int_eq(q->ncqes, 1);
    ck_assert_int_eq(q->cqe[0].dir, RG_TR_UNKNOWN);
    ck_assert_int_eq(q->cqe[0].status, 5);
    ck_assert_uint_eq(q->cqe[0].n, 12);
    ck_assert_int_eq(t.nidle, 1);
    ck_assert(t.idle[0].pid == 7 && t.idle[0].cq == 1 && t.idle[0].line == 5);
    ck_assert_uint_eq(t.idle[0].idle, 256);
    ck_assert_double_eq(t.idle[0].at_ms, 5.0);
    rg_trace_free(&t);

    /* Each field not as the shim writes it makes its line unreadable, and the first is named. */
    static const char *const bad[] = {
        "{\"event\":\"trace_post\",\"pid\":7,\"dev\":\"rxe1\",\"qp\":16777216,\"dir\":\"send\","
        "\"op\":\"send\",\"fate\":\"wire\",\"at_ms\":1}\n",
        "{\"event\":\"trace_post\",\"pid\":7,\"dev\":\"rxe1\",\"qp\":1,\"dir\":\"send\","
        "\"op\":\"recv\",\"fate\":\"wire\",\"at_ms\":1}\n",
        "{\"event\":\"trace_post\",\"pid\":7,\"dev\":\"rxe1\",\"qp\":1,\"dir\":\"send\","
        "\"op\":\"send\",\"fate\":\"wire\"}\n",
        "{\"event\":\"trace_post\",\"pid\":7,\"dev\":\"rxe1\",\"qp\":1,\"dir\":\"send\","
        "\"op\":\"send\",\"fate\":\"eaten\",\"at_ms\":1}\n",
        "{\"event\":\"trace_cqe\",\"pid\":7,\"dev\":\"rxe1\",\"qp\":1,\"dir\":\"recv\","
        "\"op\":\"recv\",\"status\":256,\"mono_ms\":1,\"cq\":0}\n",
        "{\"event\":\"trace_qp\",\"pid\":7,\"dev\":\"rxe1\",\"qp\":1,\"type\":\"uc\","
        "\"gid\":\"fe80\",\"send_cq\":0,\"recv_cq\":0}\n",
        "{\"event\":\"trace_qp\",\"pid\":7,\"dev\":\"\",\"qp\":1,\"type\":\"uc\",\"gid\":\"\","
        "\"send_cq\":0,\"recv_cq\":0}\n",
        "{\"event\":\"trace_soon\",\"pid\":7,\"dev\":\"rxe1\",\"qp\":1}\n",
        "{\"event\":\"trace_post\",\"pid\":7,\"dev\":\"rxe1\",\"qp\":1,\"dir\":\"recv\","
        "\"op\":\"recv\",\"fate\":\"wire\",\"at_ms\":1,\"signaled\":\"yes\"}\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[2048];
        snprintf(text, sizeof(text), "%s%s", good, bad[i]);
        put(text);
        ck_assert_int_eq(rg_trace_read(g_path, &t, err, sizeof(err)), 0);
        ck_assert_msg(t.bad_lines == 1, "case %zu: %d bad lines", i, t.bad_lines);
        ck_assert_msg(!strncmp(t.unreadable, "line 6: ", 8), "case %zu: %s", i, t.unreadable);
        rg_trace_free(&t);
    }
    /* No file: not present, not an error. */
    unlink(g_path);
    ck_assert_int_eq(rg_trace_read(g_path, &t, err, sizeof(err)), 0);
    ck_assert(!t.present && !t.any);
    rg_trace_free(&t);
}
END_TEST

Suite *rg_suite_trace(void)
{
    Suite *s = suite_create("trace");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_trace_read);
    suite_add_tcase(s, t);
    return s;
}
