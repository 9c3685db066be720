/* SPDX-License-Identifier: MIT */
/*
 * The evidence schema's two halves against each other (faultinject/rg_fi_events.h): every
 * event kind written by the shim's own formatter (faultinject/fi_ev_format.c) with edge and
 * sentinel values, and read back by the runner's decoder (harness/evidence/rg_ev_schema.c)
 * exactly; lines the shim does not write refused with the field named; and the SRQ's unknown
 * receive count read as unknown by the rank's evidence, not as an unreadable line.
 */
#include "common/rg_check.h"
#include "common/rg_ev_gen.h"
#include "evidence/rg_ev_field.h"
#include "evidence/rg_ev_wire.h"
#include "evidence/rg_evidence.h"
#include "fi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t splitmix(void *st)
{
    uint64_t z = (*(uint64_t *)st += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* One record written and read back; the line's text in line. */
static void round_trip(enum rg_ev_kind kind, const void *rec, char *line, size_t cap)
{
    static _Alignas(16) char back[1024];
    char strs[4096], why[200];
    struct fi_ev_head h = {-1, 2147483647, 0.001, 987654321.5};
    size_t n = fi_ev_format(line, cap, kind, rec, &h);
    ck_assert_uint_gt(n, 2);
    ck_assert_int_eq(line[n - 1], '\n');
    line[n] = '\0';
    ck_assert_uint_eq(strlen(line), n); /* no NUL inside */
    json_error_t je;
    json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    ck_assert_msg(o != NULL, "%s: not JSON (%s): %s", rg_ev_kinds[kind].name, je.text, line);
    rg_ev_line l = {0};
    enum rg_ev_kind got;
    ck_assert_uint_le(rg_ev_kinds[kind].size, sizeof(back));
    int rc = rg_ev_decode(&l, o, &got, back, strs, sizeof(strs));
    ck_assert_msg(rc == 0, "%s: unreadable: %s: %s", rg_ev_kinds[kind].name, l.why, line);
    ck_assert_int_eq(got, kind);
    ck_assert_msg(rg_ev_same(kind, rec, back, why, sizeof(why)) == 0, "%s: %s", why, line);
    /* The head as written. */
    ck_assert_int_eq(json_integer_value(json_object_get(o, "rank")), -1);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "pid")), 2147483647);
    json_decref(o);
}

/* Every kind, 400 records each: every edge of every type, every optional field both ways. */
START_TEST(test_schema_round_trip)
{
    static _Alignas(16) char rec[1024];
    char strs[4096], line[4096];
    uint64_t st = 42;
    for (int k = 0; k < RG_EVK_COUNT; k++)
        for (int i = 0; i < 400; i++) {
            rg_ev_gen((enum rg_ev_kind)k, rec, splitmix, &st, strs, sizeof(strs));
            round_trip((enum rg_ev_kind)k, rec, line, sizeof(line));
        }
}
END_TEST

/* The runner's wire evidence, the same way: every kind written by the one formatter from its
 * own table (rg_ev_wire.h), with edge values, and decoded back exactly. */
START_TEST(test_wire_schema_round_trip)
{
    static _Alignas(16) char rec[1024], back[1024];
    char strs[4096], strs2[4096], line[4096], why[200];
    uint64_t st = 7;
    for (int k = 0; k < RG_WIREK_COUNT; k++)
        for (int i = 0; i < 400; i++) {
            const rg_ev_kdef *d = &rg_wire_kinds[k];
            ck_assert_uint_le(d->size, sizeof(rec));
            rg_ev_gen_k(d, rec, splitmix, &st, strs, sizeof(strs));
            size_t n = rg_ev_format_rec(line, sizeof(line), d, rec);
            ck_assert_uint_gt(n, 2);
            line[n] = '\0';
            json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
            ck_assert_msg(o != NULL, "%s: not JSON: %s", d->name, line);
            rg_ev_line l = {0};
            int got = -1;
            int rc = rg_ev_decode_in(&rg_ev_wire_table, &l, o, &got, back, strs2, sizeof(strs2));
            ck_assert_msg(rc == 0, "%s: unreadable: %s: %s", d->name, l.why, line);
            ck_assert_int_eq(got, k);
            ck_assert_msg(rg_ev_same_k(d, rec, back, why, sizeof(why)) == 0, "%s: %s", why, line);
            json_decref(o);
        }
    /* A shim's line is not the wire's, nor the wire's the shim's. */
    json_t *o = json_loads("{\"event\":\"load\"}", 0, NULL);
    rg_ev_line l = {0};
    int got;
    ck_assert_int_eq(rg_ev_decode_in(&rg_ev_wire_table, &l, o, &got, back, strs2, sizeof(strs2)),
                     -1);
    ck_assert_str_eq(l.why, "\"event\" is not an event the runner's wire writes");
    json_decref(o);
}
END_TEST

/* The sentinels spelt out: unknown counts and lists, and counts past 2^63. */
START_TEST(test_schema_sentinels)
{
    char line[4096];
    struct rg_evr_qp q = {.why = "exit",
                          .dev = "rxe0",
                          .qp = 17,
                          .srq = true,
                          .out_send = {true, UINT64_MAX},
                          .out_recv = {false, 0}};
    round_trip(RG_EVK_qp, &q, line, sizeof(line));
    ck_assert_ptr_nonnull(strstr(line, "\"out_recv\":\"unknown\""));
    ck_assert_ptr_nonnull(strstr(line, "\"out_send\":\"0xffffffffffffffff\""));
    struct rg_evr_outstanding w = {.dev = "rxe0", .qp = 17, .send = {.n = 0}, .recv = {.n = -1}};
    round_trip(RG_EVK_outstanding, &w, line, sizeof(line));
    ck_assert_ptr_nonnull(strstr(line, "\"send\":[],\"recv\":\"unknown\""));
    struct rg_evr_fault f = {
        .has = RG_EVH(fault, wr_id), .fault = "error", .qp = {false, 0}, .wr_id = UINT64_MAX};
    round_trip(RG_EVK_fault, &f, line, sizeof(line));
    ck_assert_ptr_nonnull(strstr(line, "\"qp\":\"unknown\""));
    ck_assert_ptr_null(strstr(line, "\"ms\"")); /* absent optional fields are not written */
}
END_TEST

/* A record too long for a line becomes a "cut" event naming its kind, never a torn line. */
START_TEST(test_schema_cut)
{
    static char big[5000];
    char line[4096];
    memset(big, 'x', sizeof(big) - 1);
    struct rg_evr_note n = {.what = big};
    struct fi_ev_head h = {0, 1, 1.0, 1.0};
    size_t len = fi_ev_format(line, 512, RG_EVK_note, &n, &h);
    ck_assert_uint_lt(len, 512);
    line[len] = '\0';
    ck_assert_str_eq(strchr(line, ',') + 1,
                     "\"rank\":0,\"pid\":1,\"t_ms\":1.000,\"mono_ms\":1.000,\"of\":\"note\"}\n");
    ck_assert(!strncmp(line, "{\"event\":\"cut\",", 15));
    json_t *o = json_loads(line, 0, NULL);
    rg_ev_line l = {0};
    ck_assert(o && rg_ev_check(&l, o));
    json_decref(o);
}
END_TEST

static void refused(const char *text, const char *why)
{
    json_t *o = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(o);
    rg_ev_line l = {0};
    ck_assert(!rg_ev_check(&l, o));
    ck_assert_msg(strstr(l.why, why) != NULL, "%s: said '%s', not '%s'", text, l.why, why);
    json_decref(o);
}

/* What the shim does not write is refused, the field and its type named. */
START_TEST(test_schema_refuses)
{
    refused("{\"event\":\"qp\",\"out_recv\":-1}", "\"out_recv\" is not a count or \"unknown\"");
    refused("{\"event\":\"qp\",\"out_recv\":\"unknwn\"}", "\"out_recv\" is not a count");
    refused("{\"event\":\"qp\",\"qps\":1}", "\"qps\" is not a field of a qp event");
    refused("{\"event\":\"nosuch\"}", "\"event\" is not an event the shim writes");
    refused("{\"rank\":0}", "\"event\" is not an event the shim writes");
    refused("{\"event\":\"fault\",\"wr_id\":5}", "\"wr_id\" is not a 64-bit identifier");
    refused("{\"event\":\"trace_post\",\"at_ms\":-1}", "\"at_ms\" is not a time in ms");
    refused("{\"event\":\"phase\",\"posts_op\":{\"send\":1}}", "\"posts_op\" is not counts by op");
    refused("{\"event\":\"outstanding\",\"send\":[{\"wr_id\":\"0x1\"}]}",
            "\"send\" is not a list of requests");
    refused("{\"event\":\"trace_qp\",\"srq\":1}", "\"srq\" is not true or false");
    refused("{\"event\":\"load\",\"rules\":1.5}", "\"rules\" is not an integer");
    /* A decode needs every field its kind always has. */
    json_t *o = json_loads("{\"event\":\"cq\",\"why\":\"exit\"}", 0, NULL);
    char rec[256], strs[256];
    enum rg_ev_kind k;
    rg_ev_line l = {0};
    ck_assert_int_eq(rg_ev_decode(&l, o, &k, rec, strs, sizeof(strs)), -1);
    ck_assert_str_eq(l.why, "a cq event without \"dev\"");
    json_decref(o);
}
END_TEST

/* The reported bug: a QP whose receives go through an SRQ (ibv_srq_pingpong) made the rank's
 * evidence unreadable. Its unknown count is read as unknown, and its queues not listed as
 * holding a number of receives nobody knows. */
START_TEST(test_schema_srq_evidence)
{
    char path[] = "/tmp/rg-ev-srq-XXXXXX", line[4096], err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    struct fi_ev_head h = {0, 4242, 1.0, 100.0};
    struct rg_evr_load ld = {.verbs = "libibverbs.so.1", .exe = "/usr/bin/ibv_srq_pingpong"};
    struct rg_evr_totals t = {.why = "exit", .qps = 4};
    struct rg_evr_qp q = {.why = "exit",
                          .dev = "rxe0",
                          .qp = 17,
                          .type = 2,
                          .srq = true,
                          .posts_send = 50,
                          .out_send = {true, 0},
                          .out_recv = {false, 0}};
    size_t n = fi_ev_format(line, sizeof(line), RG_EVK_load, &ld, &h);
    ck_assert_int_eq(write(fd, line, n), (ssize_t)n);
    n = fi_ev_format(line, sizeof(line), RG_EVK_totals, &t, &h);
    ck_assert_int_eq(write(fd, line, n), (ssize_t)n);
    n = fi_ev_format(line, sizeof(line), RG_EVK_qp, &q, &h);
    ck_assert_int_eq(write(fd, line, n), (ssize_t)n);
    q.out_send = (rg_ev_n){true, 2};
    n = fi_ev_format(line, sizeof(line), RG_EVK_qp, &q, &h);
    ck_assert_int_eq(write(fd, line, n), (ssize_t)n);
    close(fd);
    static rg_evidence ev;
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    unlink(path);
    ck_assert_msg(ev.bad_lines == 0, "%s", ev.unreadable);
    ck_assert(ev.loaded);
    ck_assert_str_eq(ev.queues, "qp 17 (rxe0): 2 send(s) and an unknown number of (its SRQ's) "
                                "receive(s) outstanding of 50 and 0 posted");
}
END_TEST

Suite *rg_suite_ev_schema(void)
{
    Suite *s = suite_create("ev_schema");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_schema_round_trip);
    tcase_add_test(t, test_wire_schema_round_trip);
    tcase_add_test(t, test_schema_sentinels);
    tcase_add_test(t, test_schema_cut);
    tcase_add_test(t, test_schema_refuses);
    tcase_add_test(t, test_schema_srq_evidence);
    suite_add_tcase(s, t);
    return s;
}
