/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a rank's evidence, written by the shim's own line writer
 * (faultinject/fi_event.c) and read back by the runner's reader (harness/rg_evidence.c), the
 * two linked together. Each input is used twice:
 *   0. as the fields of one record of every event kind of the schema (rg_fi_events.h), each
 *      written by the shim's writer and decoded by the runner exactly as it was made;
 *   1. as 64-bit values (8 bytes each, the edges 0, 2^63 - 1, 2^63 and 2^64 - 1 always among
 *      them): each is written as the wr_id of a fault and of an ownership finding, in the
 *      shim's format (FI_EV_WR_ID), and must be read back exactly, every line readable;
 *   2. as an events file, whole, to both readers of it (the rank's evidence, and its verbs
 *      trace, harness/evidence/rg_trace.c): neither may crash, each must count every line it
 *      cannot take, and name the first of them on one line of printable ASCII.
 * Counts the shim keeps (fired, matched) go round as JSON integers below 2^63, which its
 * counters cannot reach; one past that must come back as an unreadable line, never a wrong
 * count.
 */
#include "fi_internal.h"
#include "evidence/rg_evidence.h"
#include "evidence/rg_trace.h"
#include "evidence/rg_ev_field.h"
#include "evidence/rg_ev_wire.h"
#include "common/rg_ev_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What the shim's fi_shim.c gives fi_event.c; the fuzzer is no rank of a run. */
int fi_rank(void)
{
    return 1;
}

uint64_t fi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double fi_elapsed_ms(void)
{
    return 0.5;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_path[64];

/* The events file goes when the fuzzer exits, as a run's last input leaves it behind. */
static void drop_log(void)
{
    unlink(g_path);
}

/* A fresh events file, the shim's writer pointed at it. */
static void fresh_log(void)
{
    char err[256];
    if (!g_path[0]) {
        snprintf(g_path, sizeof(g_path), "/tmp/rg-fuzz-evidence-%ld.jsonl", (long)getpid());
        setenv("RG_FI_LOG", g_path, 1);
        atexit(drop_log);
    }
    unlink(g_path);
    if (fi_event_open(err, sizeof(err)))
        abort();
}

static void one_line(const char *s)
{
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            abort();
}

static void round_trip(uint64_t v)
{
    static rg_evidence ev;
    char err[256], want[64];
    fresh_log();
    FI_EV(load, .verbs = "fuzz");
    FI_EV(fault, .has = RG_EVH(fault, wr_id), .fault = "error", .rule = 3, .line = 4, .op = "recv",
          .nth = v & INT64_MAX, .wr_id = v);
    FI_EV(ownership, .op = "send", .qp = 17, .wr_id = v, .offset = 0, .bytes = 8);
    FI_EV(rule, .rule = 3, .matched = v & INT64_MAX, .fired = v & INT64_MAX);
    if (rg_evidence_read(g_path, &ev, err, sizeof(err)) || !ev.loaded || ev.bad_lines)
        abort();
    snprintf(want, sizeof(want), "wr_id 0x%llx,", (unsigned long long)v);
    if (!strstr(ev.own_first, want) || ev.matched[3] != (int64_t)(v & INT64_MAX) ||
        ev.fired[3] < 1 || (v & INT64_MAX && ev.fired[3] != (v & INT64_MAX)) ||
        ev.first_fault_rule != 3)
        abort();
}

/* The input as draws, 8 bytes each, then zeros. */
struct draws {
    const uint8_t *p;
    size_t n, at;
};
static uint64_t draw(void *st)
{
    struct draws *d = st;
    uint64_t v = 0;
    if (d->at + 8 <= d->n)
        memcpy(&v, d->p + d->at, 8);
    d->at += 8;
    return v;
}

/* Every kind of the schema, its fields drawn from the input: written by the shim's writer,
 * read back by the runner's decoder, the same record. */
static void every_kind(const uint8_t *data, size_t size)
{
    static _Alignas(16) char rec[1024], back[1024];
    char strs[4096], strs2[4096], why[200];
    struct draws d = {data, size, 0};
    fresh_log();
    for (int k = 0; k < RG_EVK_COUNT; k++) {
        rg_ev_gen((enum rg_ev_kind)k, rec, draw, &d, strs, sizeof(strs));
        fi_ev((enum rg_ev_kind)k, rec);
    }
    FILE *f = fopen(g_path, "r");
    char line[8192];
    int k = 0;
    if (!f)
        abort();
    /* Regenerate each record from the same draws to compare against what was read. */
    d.at = 0;
    while (fgets(line, sizeof(line), f)) {
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
        rg_ev_line l = {0};
        enum rg_ev_kind got;
        if (!o || k >= RG_EVK_COUNT || rg_ev_decode(&l, o, &got, back, strs2, sizeof(strs2)))
            abort();
        rg_ev_gen((enum rg_ev_kind)k, rec, draw, &d, strs, sizeof(strs));
        if (got != (enum rg_ev_kind)k || rg_ev_same(got, rec, back, why, sizeof(why)))
            abort();
        json_decref(o);
        k++;
    }
    fclose(f);
    if (k != RG_EVK_COUNT)
        abort();
}

/* Every kind of the runner's wire evidence (rg_ev_wire.h) the same way, by its one formatter. */
static void every_wire_kind(const uint8_t *data, size_t size)
{
    static _Alignas(16) char rec[1024], back[1024];
    char strs[4096], strs2[4096], why[200], line[8192];
    struct draws d = {data, size, 0};
    for (int k = 0; k < RG_WIREK_COUNT; k++) {
        const rg_ev_kdef *kd = &rg_wire_kinds[k];
        rg_ev_gen_k(kd, rec, draw, &d, strs, sizeof(strs));
        size_t n = rg_ev_format_rec(line, sizeof(line) - 1, kd, rec);
        if (!n)
            abort();
        line[n] = '\0';
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
        rg_ev_line l = {0};
        int got;
        if (!o || rg_ev_decode_in(&rg_ev_wire_table, &l, o, &got, back, strs2, sizeof(strs2)) ||
            got != k || rg_ev_same_k(kd, rec, back, why, sizeof(why)))
            abort();
        json_decref(o);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint64_t edges[] = {0, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX};
    static rg_evidence ev;
    char err[256];

    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        round_trip(edges[i]);
    for (size_t o = 0; o + 8 <= size && o < 8 * 16; o += 8) {
        uint64_t v;
        memcpy(&v, data + o, 8);
        round_trip(v);
    }

    every_kind(data, size);
    every_wire_kind(data, size);

    /* A count past what a JSON integer holds, in decimal (as no writer of the schema spells
     * it): unreadable, not a wrong count. */
    FILE *g = fopen(g_path, "w");
    if (!g)
        abort();
    fprintf(g, "{\"event\":\"rule\",\"rule\":0,\"matched\":%llu,\"fired\":1}\n",
            (unsigned long long)INT64_MAX + 1 + (size ? data[0] : 0));
    fclose(g);
    if (rg_evidence_read(g_path, &ev, err, sizeof(err)) || ev.bad_lines != 1 || ev.matched[0] != -1)
        abort();

    /* The bytes as an events file. */
    FILE *f = fopen(g_path, "w");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    if (rg_evidence_read(g_path, &ev, err, sizeof(err)))
        abort();
    if (ev.bad_lines < 0 || (ev.bad_lines > 0) != (ev.unreadable[0] != '\0'))
        abort();
    one_line(ev.unreadable);
    /* ... and as a verbs trace (harness/evidence/rg_trace.c): the same lines, its own fields. */
    static rg_trace t;
    if (rg_trace_read(g_path, &t, err, sizeof(err)) == 0) {
        if ((t.bad_lines > 0) != (t.unreadable[0] != '\0'))
            abort();
        one_line(t.unreadable);
    }
    rg_trace_free(&t);
    return 0;
}
