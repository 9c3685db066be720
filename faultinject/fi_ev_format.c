/* SPDX-License-Identifier: MIT */
/*
 * One event line made from its kind's record, field by field as the schema (rg_fi_events.h)
 * says each type is written: the writer's half of the one table. Pure (no clock, no file), so
 * the property test runs it against the reader directly. Formatting is on the stack: events
 * are written from the datapath, where the shim allocates nothing.
 */
#include "fi_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

/* The line being made: on the stack, cut (o > cap) rather than overrun. */
struct ev_buf {
    char *p;
    size_t o, cap;
};

static void put(struct ev_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct ev_buf *b, const char *fmt, ...)
{
    if (b->o >= b->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(b->p + b->o, b->cap - b->o, fmt, ap);
    va_end(ap);
    b->o = m < 0 ? b->cap : b->o + (size_t)m;
}

/* Counts above 2^63 - 1 are strings: jansson's integers are signed, and the value stays exact. */
static void put_u(struct ev_buf *b, uint64_t v)
{
    if (v > (uint64_t)INT64_MAX)
        put(b, RG_HEX64, v);
    else
        put(b, "%" PRIu64, v);
}

/* Every byte of s, as the reader gives it back: quote and backslash escaped, control bytes and
 * bytes from 0x80 as \u00XX (the reader maps those code points back to the bytes). */
static void put_s(struct ev_buf *b, const char *s)
{
    put(b, "\"");
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c && b->o < b->cap; c++) {
        if (*c == '"' || *c == '\\')
            put(b, "\\%c", *c);
        else if (*c < 0x20 || *c >= 0x7f)
            put(b, "\\u%04x", *c);
        else
            b->p[b->o++] = (char)*c;
    }
    put(b, "\"");
}

static void put_field(struct ev_buf *b, const rg_ev_fdef *f, const char *rec)
{
    const void *v = rec + f->off;
    put(b, ",\"%s\":", f->name);
    switch ((enum rg_ev_type)f->type) {
    case RG_EVT_U:
        put_u(b, *(const uint64_t *)v);
        break;
    case RG_EVT_I:
        put(b, "%" PRId64, *(const int64_t *)v);
        break;
    case RG_EVT_X:
        put(b, RG_HEX64, *(const uint64_t *)v);
        break;
    case RG_EVT_S:
        put_s(b, *(const char *const *)v);
        break;
    case RG_EVT_B:
        put(b, "%s", *(const bool *)v ? "true" : "false");
        break;
    case RG_EVT_MS:
        put(b, "%.3f", *(const double *)v);
        break;
    case RG_EVT_N: {
        const rg_ev_n *n = v;
        if (n->known)
            put_u(b, n->v);
        else
            put(b, "\"unknown\"");
        break;
    }
    case RG_EVT_OPS: {
        static const char *const names[5] = {"send", "recv", "write", "read", "atomic"};
        for (int i = 0; i < 5; i++) {
            put(b, "%s\"%s\":", i ? "," : "{", names[i]);
            put_u(b, ((const rg_ev_ops *)v)->op[i]);
        }
        put(b, "}");
        break;
    }
    case RG_EVT_WRS: {
        const rg_ev_wrs *w = v;
        if (w->n < 0) {
            put(b, "\"unknown\"");
            break;
        }
        put(b, "[");
        for (int i = 0; i < w->n && i < RG_EV_WRS_MAX; i++) {
            put(b, "%s{\"wr_id\":" RG_HEX64 ",\"len\":", i ? "," : "", w->e[i].wr_id);
            put_u(b, w->e[i].len);
            put(b, "}");
        }
        put(b, "]");
        break;
    }
    }
}

static void put_head(struct ev_buf *b, const char *name, const struct fi_ev_head *h)
{
    put(b, "{\"event\":\"%s\",\"rank\":%d,\"pid\":%ld,\"t_ms\":%.3f,\"mono_ms\":%.3f", name,
        h->rank, h->pid, h->t_ms, h->mono_ms);
}

/* The fields of a record of kind k: each required one, and each optional one it has. */
static void put_fields(struct ev_buf *b, const rg_ev_kdef *k, const void *rec)
{
    uint32_t has = *(const uint32_t *)rec;
    for (int i = 0; i < k->nf; i++)
        if (k->f[i].required || (has & (1u << i)))
            put_field(b, &k->f[i], rec);
}

size_t rg_ev_format_rec(char *line, size_t cap, const rg_ev_kdef *k, const void *rec)
{
    if (cap < 64)
        return 0;
    struct ev_buf b = {line, 0, cap - 2};
    put(&b, "{\"event\":\"%s\"", k->name);
    put_fields(&b, k, rec);
    if (b.o >= b.cap)
        return 0;
    b.p[b.o++] = '}';
    b.p[b.o++] = '\n';
    return b.o;
}

size_t fi_ev_format(char *line, size_t cap, enum rg_ev_kind kind, const void *rec,
                    const struct fi_ev_head *h)
{
    if ((unsigned)kind >= RG_EVK_COUNT || cap < 256)
        return 0;
    const rg_ev_kdef *k = &rg_ev_kinds[kind];
    struct ev_buf b = {line, 0, cap - 2};
    put_head(&b, k->name, h);
    put_fields(&b, k, rec);
    if (b.o >= b.cap) {
        /* Too long for a line: its kind said instead, never a line cut short. */
        b.o = 0;
        put_head(&b, "cut", h);
        put(&b, ",\"of\":\"%s\"", k->name);
    }
    b.p[b.o++] = '}';
    b.p[b.o++] = '\n';
    return b.o;
}
