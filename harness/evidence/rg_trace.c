/* SPDX-License-Identifier: MIT */
/*
 * One rank's verbs trace (rg_trace.h), read back from the shim's trace_* events. Every field is
 * checked as the shim writes it: a name that is not one of its names, a QP number past 24 bits, a
 * post without its time, each makes the line unreadable.
 */
#include "evidence/rg_trace.h"
#include "evidence/rg_ev_field.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int name_in(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static const char *const kinds[] = {
    [RG_TR_K_SEND] = "send",           [RG_TR_K_SEND_IMM] = "send_imm", [RG_TR_K_WRITE] = "write",
    [RG_TR_K_WRITE_IMM] = "write_imm", [RG_TR_K_READ] = "read",         [RG_TR_K_ATOMIC] = "atomic",
    [RG_TR_K_RECV] = "recv",           [RG_TR_K_OTHER] = "other",
};
static const char *const dirs[] = {
    [RG_TR_SEND] = "send", [RG_TR_RECV] = "recv", [RG_TR_UNKNOWN] = "?"};
static const char *const fates[] = {
    [RG_TR_WIRE] = "wire", [RG_TR_LOST] = "lost", [RG_TR_FLUSHED] = "flushed"};
#define NAMES(a) (int)(sizeof(a) / sizeof(a[0]))

struct rd {
    rg_trace *t;
    bool oom;
};

static long pid_of(rg_ev_line *l, json_t *o)
{
    return (long)(rg_ev_u64(l, o, "pid") & 0x7fffffff);
}

/* The QP a line names (made at its first mention), or NULL when the line cannot name one. */
static rg_tr_qp *qp_of(rg_ev_line *l, struct rd *d, json_t *o)
{
    rg_trace *t = d->t;
    const char *dev = rg_ev_str(l, o, "dev");
    uint64_t qpn = rg_ev_u64(l, o, "qp");
    long pid = pid_of(l, o);
    if (!json_object_get(o, "qp") || qpn >= (1u << 24) || !*dev || strlen(dev) >= RG_TR_DEV) {
        rg_ev_bad(l, "\"qp\" or \"dev\" is not a QP's");
        return NULL;
    }
    for (int i = 0; i < t->nqps; i++)
        if (t->qp[i].pid == pid && t->qp[i].qpn == qpn && !strcmp(t->qp[i].dev, dev))
            return &t->qp[i];
    if (t->nqps % 16 == 0) {
        rg_tr_qp *n = realloc(t->qp, (size_t)(t->nqps + 16) * sizeof(*n));
        if (!n) {
            d->oom = true;
            return NULL;
        }
        t->qp = n;
    }
    rg_tr_qp *q = &t->qp[t->nqps++];
    memset(q, 0, sizeof(*q));
    q->pid = pid;
    snprintf(q->dev, sizeof(q->dev), "%s", dev);
    q->qpn = (uint32_t)qpn;
    q->peer_qpn = -1;
    q->send_cq = q->recv_cq = -1;
    return q;
}

static rg_tr_op *push(struct rd *d, rg_tr_op **v, int *n, int *cap)
{
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 64;
        rg_tr_op *x = realloc(*v, (size_t)nc * sizeof(*x));
        if (!x) {
            d->oom = true;
            return NULL;
        }
        *v = x;
        *cap = nc;
    }
    rg_tr_op *op = &(*v)[(*n)++];
    memset(op, 0, sizeof(*op));
    return op;
}

static int cq_ord_of(rg_ev_line *l, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v) && json_integer_value(v) >= -1 && json_integer_value(v) < 1 << 30)
        return (int)json_integer_value(v);
    rg_ev_bad(l, "\"%s\" is not a CQ's number", key);
    return -1;
}

static bool hex_gid(const char *s)
{
    if (!*s)
        return true; /* not known */
    if (strlen(s) != 32)
        return false;
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789abcdef", *p))
            return false;
    return true;
}

static void take_qp(rg_ev_line *l, struct rd *d, json_t *o, rg_tr_qp *q)
{
    const char *type = rg_ev_str(l, o, "type"), *gid = rg_ev_str(l, o, "gid");
    static const char *const types[] = {"rc", "uc", "ud", "other"};
    if (name_in(type, types, 4) < 0 || !hex_gid(gid)) {
        rg_ev_bad(l, "\"type\" or \"gid\" is not as the shim writes it");
        return;
    }
    /* The number again (a QP destroyed and its number reused, or one moved to RTR twice): two
     * lifetimes' requests would be counted as one, so neither is. (Receives posted before RTR
     * are the usual prefill; a reused number's restarted ordinals are caught at its posts.) */
    if (q->known)
        q->gap = true;
    q->known = true;
    q->line = l->no;
    snprintf(q->type, sizeof(q->type), "%s", type);
    snprintf(q->gid, sizeof(q->gid), "%s", gid);
    q->srq = rg_ev_bool(l, o, "srq");
    q->send_cq = cq_ord_of(l, o, "send_cq");
    q->recv_cq = cq_ord_of(l, o, "recv_cq");
    if (json_object_get(o, "peer_qp")) {
        uint64_t p = rg_ev_u64(l, o, "peer_qp");
        const char *pg = rg_ev_str(l, o, "peer_gid");
        if (p >= (1u << 24) || !hex_gid(pg)) {
            rg_ev_bad(l, "\"peer_qp\" or \"peer_gid\" is not a peer's");
            return;
        }
        q->peer_qpn = (int64_t)p;
        if (*pg)
            snprintf(q->peer_gid, sizeof(q->peer_gid), "%s", pg);
        else
            snprintf(q->peer_gid, sizeof(q->peer_gid), "lid:%llu",
                     (unsigned long long)(rg_ev_u64(l, o, "peer_lid") & 0xffff));
    }
    (void)d;
}

static void take_post(rg_ev_line *l, struct rd *d, json_t *o, rg_tr_qp *q)
{
    int dir = name_in(rg_ev_str(l, o, "dir"), dirs, 2);
    int kind = name_in(rg_ev_str(l, o, "op"), kinds, NAMES(kinds));
    int fate = name_in(rg_ev_str(l, o, "fate"), fates, NAMES(fates));
    double at = rg_ev_ms(l, o, "at_ms");
    if (dir < 0 || kind < 0 || fate < 0 || at < 0 ||
        (dir == RG_TR_RECV) != (kind == RG_TR_K_RECV)) {
        rg_ev_bad(l, "\"dir\", \"op\", \"fate\" or \"at_ms\" is not a post's");
        return;
    }
    uint64_t n = rg_ev_u64(l, o, "n");
    for (int i = q->nposts - 1; i >= 0; i--)
        if (q->post[i].dir == dir) {
            if (q->post[i].n >= n)
                q->gap = true; /* its ordinals started again: another QP under its number */
            break;
        }
    rg_tr_op *op = push(d, &q->post, &q->nposts, &q->capp);
    if (!op)
        return;
    op->at_ms = at;
    op->n = n;
    op->line = l->no;
    op->dir = (uint8_t)dir;
    op->kind = (uint8_t)kind;
    op->fate = (uint8_t)fate;
    op->signaled = rg_ev_bool(l, o, "signaled");
    op->cq = -1;
    (void)rg_ev_u64(l, o, "wr_id"); /* checked: an id the shim wrote is RG_HEX64 */
}

static void take_cqe(rg_ev_line *l, struct rd *d, json_t *o, rg_tr_qp *q)
{
    int dir = name_in(rg_ev_str(l, o, "dir"), dirs, NAMES(dirs));
    const char *opn = rg_ev_str(l, o, "op");
    int kind = !strcmp(opn, "?") ? RG_TR_K_OTHER : name_in(opn, kinds, NAMES(kinds));
    uint64_t status = rg_ev_u64(l, o, "status");
    double at = rg_ev_ms(l, o, "mono_ms");
    if (dir < 0 || kind < 0 || status > 255 || at < 0) {
        rg_ev_bad(l, "\"dir\", \"op\", \"status\" or \"mono_ms\" is not a completion's");
        return;
    }
    rg_tr_op *op = push(d, &q->cqe, &q->ncqes, &q->capc);
    if (!op)
        return;
    op->at_ms = at;
    op->n = rg_ev_u64(l, o, "polls");
    op->line = l->no;
    op->status = (int)status;
    op->cq = cq_ord_of(l, o, "cq");
    op->dir = (uint8_t)dir;
    op->kind = (uint8_t)kind;
    (void)rg_ev_u64(l, o, "wr_id");
}

static void take_idle(rg_ev_line *l, struct rd *d, json_t *o)
{
    rg_trace *t = d->t;
    double at = rg_ev_ms(l, o, "mono_ms");
    int cq = cq_ord_of(l, o, "cq");
    if (at < 0 || cq < 0) {
        rg_ev_bad(l, "\"mono_ms\" or \"cq\" is not an idle CQ's");
        return;
    }
    if (t->nidle == t->capi) {
        int nc = t->capi ? t->capi * 2 : 32;
        rg_tr_idle *x = realloc(t->idle, (size_t)nc * sizeof(*x));
        if (!x) {
            d->oom = true;
            return;
        }
        t->idle = x;
        t->capi = nc;
    }
    t->idle[t->nidle++] = (rg_tr_idle){
        .pid = pid_of(l, o), .cq = cq, .idle = rg_ev_u64(l, o, "idle"), .at_ms = at, .line = l->no};
}

static void take(rg_ev_line *l, json_t *o, void *arg)
{
    struct rd *d = arg;
    const char *name = rg_ev_str(l, o, "event");
    if (strncmp(name, "trace_", 6))
        return; /* the rank's evidence reads the rest (rg_evidence.c) */
    d->t->any = true;
    if (!strcmp(name, "trace_full")) {
        d->t->full = true;
        return;
    }
    if (!strcmp(name, "trace_idle")) {
        take_idle(l, d, o);
        return;
    }
    rg_tr_qp *q = qp_of(l, d, o);
    if (!q)
        return;
    if (!strcmp(name, "trace_qp"))
        take_qp(l, d, o, q);
    else if (!strcmp(name, "trace_post"))
        take_post(l, d, o, q);
    else if (!strcmp(name, "trace_cqe"))
        take_cqe(l, d, o, q);
    else if (!strcmp(name, "trace_gap"))
        q->gap = true;
    else
        rg_ev_bad(l, "\"%.40s\" is not an event of the trace", name);
}

int rg_trace_read(const char *path, rg_trace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    struct rd d = {t, false};
    int rc = rg_ev_each_shim(path, take, &d, &t->bad_lines, t->unreadable, sizeof(t->unreadable),
                             err, errlen);
    if (rc < 0)
        return -1;
    t->present = rc > 0;
    if (d.oom) {
        snprintf(err, errlen, "%s: out of memory reading its trace", path);
        return -1;
    }
    return 0;
}

void rg_trace_free(rg_trace *t)
{
    for (int i = 0; i < t->nqps; i++) {
        free(t->qp[i].post);
        free(t->qp[i].cqe);
    }
    free(t->qp);
    free(t->idle);
    memset(t, 0, sizeof(*t));
}
