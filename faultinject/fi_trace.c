/* SPDX-License-Identifier: MIT */
/*
 * The verbs trace (a `trace` rule, fi_shim.h): what each QP did, as events a runner can line up
 * across ranks. Three kinds, one line each:
 *   trace_qp    at a QP's move to RTR: its type, device, GID, CQs and the peer it was pointed at
 *               (the peer's GID or LID and QP number), so two ranks' ends of a connection can
 *               be paired without trusting either program's own account
 *   trace_post  a work request the program posted: its QP, direction, opcode, its ordinal on
 *               that queue, id, bytes, whether signaled, and its fate (wire: the provider took
 *               it; lost / flushed: the shim's faults kept it off the wire). at_ms is the
 *               monotonic clock read before the provider was called: a receive was available
 *               no earlier than that
 *   trace_cqe   a completion as the program saw it (after the faults): its QP, direction,
 *               opcode, status, id, bytes, and its CQ's poll count then, so a summary's later
 *               count says how long the program polled after its last completion
 *   trace_idle  a CQ polled 128, 256, 512, ... times in a row without a completion
 * A QP whose requests the shim cannot see one by one (ibv_qp_ex sends, a post a delay or late
 * fault holds off the trace) gets one trace_gap; past FI_TRACE_MAX events, or at a completion
 * it cannot tie to a watched QP, one trace_full ends the process's trace: a reader proves
 * nothing from what is missing. Only with a trace rule, so only a run that asks for it pays a
 * write per request.
 */
#include "fi_shim.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static _Atomic uint64_t g_tr_events;

/* Room for one more event: false once FI_TRACE_MAX were written (the first refusal says so). */
static bool room(void)
{
    uint64_t n = atomic_fetch_add_explicit(&g_tr_events, 1, memory_order_relaxed);
    if (n == FI_TRACE_MAX)
        FI_EV(trace_full, .has = RG_EVH(trace_full, events), .events = FI_TRACE_MAX);
    return n < FI_TRACE_MAX;
}

static const char *qp_type_name(enum ibv_qp_type t)
{
    switch (t) {
    case IBV_QPT_RC:
        return "rc";
    case IBV_QPT_UC:
        return "uc";
    case IBV_QPT_UD:
        return "ud";
    default:
        return "other";
    }
}

static const char *wr_name(enum ibv_wr_opcode op)
{
    switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_INV:
        return "send";
    case IBV_WR_SEND_WITH_IMM:
        return "send_imm";
    case IBV_WR_RDMA_WRITE:
        return "write";
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return "write_imm";
    case IBV_WR_RDMA_READ:
        return "read";
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return "atomic";
    default:
        return "other";
    }
}

static const char *wc_name(enum ibv_wc_opcode op)
{
    switch (op) {
    case IBV_WC_SEND:
        return "send";
    case IBV_WC_RDMA_WRITE:
        return "write";
    case IBV_WC_RDMA_READ:
        return "read";
    case IBV_WC_COMP_SWAP:
    case IBV_WC_FETCH_ADD:
        return "atomic";
    case IBV_WC_RECV:
        return "recv";
    case IBV_WC_RECV_RDMA_WITH_IMM:
        return "write_imm";
    default:
        return "other";
    }
}

static void gid_hex(char out[33], const union ibv_gid *g)
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", g->raw[i]);
}

static int cq_ord(const struct ibv_cq *cq)
{
    const struct fi_cq *c = cq ? fi_cq_find(cq) : NULL;
    return c ? c->ord : -1;
}

void fi_trace_qp(struct ibv_qp *qp, const struct ibv_qp_attr *a, int mask)
{
    struct fi_qp *q = fi_qp_find(qp->context, qp->qp_num);
    if (!q || !room())
        return;
    char gid[33] = "", dg[33] = "";
    struct rg_evr_trace_qp e = {.dev = q->c ? q->c->dev : "?",
                                .qp = q->qpn,
                                .type = qp_type_name(qp->qp_type),
                                .srq = q->srq,
                                .gid = gid,
                                .send_cq = cq_ord(qp->send_cq),
                                .recv_cq = cq_ord(qp->recv_cq)};
    if ((mask & IBV_QP_DEST_QPN) && (mask & IBV_QP_AV)) {
        union ibv_gid own;
        e.peer_qp = a->dest_qp_num;
        if (a->ah_attr.is_global) {
            gid_hex(dg, &a->ah_attr.grh.dgid);
            e.has = RG_EVH(trace_qp, peer_qp) | RG_EVH(trace_qp, peer_gid);
            e.peer_gid = dg;
            if (fi_real.query_gid(qp->context, a->ah_attr.port_num, a->ah_attr.grh.sgid_index,
                                  &own) == 0)
                gid_hex(gid, &own);
        } else {
            e.has = RG_EVH(trace_qp, peer_qp) | RG_EVH(trace_qp, peer_lid);
            e.peer_lid = a->ah_attr.dlid;
        }
    }
    fi_ev(RG_EVK_trace_qp, &e);
}

/* One posted request: its queue's next ordinal, and its event while there is room. False once
 * there is none. */
static bool post_event(struct fi_qp *q, int recv, const char *op, uint64_t wr_id,
                       const struct ibv_sge *sg, int nsge, bool signaled, double at_ms,
                       const char *fate)
{
    uint64_t bytes = 0;
    for (int i = 0; i < nsge; i++)
        bytes += sg[i].length;
    uint64_t n = atomic_fetch_add_explicit(&q->tr_n[recv], 1, memory_order_relaxed) + 1;
    if (!room())
        return false;
    FI_EV(trace_post, .dev = q->c ? q->c->dev : "?", .qp = q->qpn, .dir = recv ? "recv" : "send",
          .op = op, .n = n, .wr_id = wr_id, .bytes = bytes, .signaled = signaled, .fate = fate,
          .at_ms = at_ms);
    return true;
}

void fi_trace_sends(struct fi_qp *q, const struct ibv_send_wr *wr, const struct ibv_send_wr *end,
                    double at_ms, const char *fate)
{
    for (const struct ibv_send_wr *w = wr; w && w != end; w = w->next)
        if (!post_event(q, 0, wr_name(w->opcode), w->wr_id, w->sg_list, w->num_sge,
                        fi_signaled(q, w), at_ms, fate))
            return;
}

void fi_trace_recvs(struct fi_qp *q, const struct ibv_recv_wr *wr, const struct ibv_recv_wr *end,
                    double at_ms, const char *fate)
{
    for (const struct ibv_recv_wr *w = wr; w && w != end; w = w->next)
        if (!post_event(q, 1, "recv", w->wr_id, w->sg_list, w->num_sge, true, at_ms, fate))
            return;
}

/* One completion as the program sees it; recv says which queue it came from (-1: unknown). */
static void trace_cqe(struct fi_cq *c, const char *dev, uint32_t qpn, int recv, int status,
                      enum ibv_wc_opcode op, uint64_t wr_id, uint32_t byte_len)
{
    if (!room())
        return;
    FI_EV(trace_cqe, .dev = dev, .qp = qpn,
          .dir = recv < 0 ? "?"
                 : recv   ? "recv"
                          : "send",
          .op = status == IBV_WC_SUCCESS ? wc_name(op) : "?", .status = status, .wr_id = wr_id,
          .bytes = byte_len, .cq = c ? c->ord : -1,
          .polls = c ? atomic_load_explicit(&c->polls, memory_order_relaxed) : 0);
}

/* Which queue a completion came from: a success says so in its opcode; an error's opcode is
 * undefined, so only a QP with its own receive CQ can tell (-1 otherwise). */
static int recv_of(const struct fi_qp *q, const struct ibv_cq *cq, int status,
                   enum ibv_wc_opcode op)
{
    if (status == IBV_WC_SUCCESS)
        return (op & IBV_WC_RECV) != 0;
    if (q && q->qp->send_cq != q->qp->recv_cq)
        return cq == q->qp->recv_cq;
    return -1;
}

void fi_trace_cqes(struct fi_cq *c, struct ibv_cq *cq, const struct ibv_wc *wc, int n)
{
    for (int k = 0; k < n; k++) {
        const struct fi_qp *q = fi_qp_find(cq->context, wc[k].qp_num);
        trace_cqe(c, fi_dev_of(cq->context), wc[k].qp_num,
                  recv_of(q, cq, (int)wc[k].status, wc[k].opcode), (int)wc[k].status, wc[k].opcode,
                  wc[k].wr_id, wc[k].byte_len);
    }
}

void fi_trace_cqe_ex(struct ibv_cq_ex *cq, const struct fi_qp *q)
{
    struct ibv_cq *base = ibv_cq_ex_to_cq(cq);
    int status = (int)cq->status;
    enum ibv_wc_opcode op = status == IBV_WC_SUCCESS ? cq->read_opcode(cq) : IBV_WC_SEND;
    uint32_t len = status == IBV_WC_SUCCESS && cq->read_byte_len ? cq->read_byte_len(cq) : 0;
    trace_cqe(fi_cq_find(base), fi_dev_of(cq->context), q->qpn, recv_of(q, base, status, op),
              status, op, cq->wr_id, len);
}

/* The process's trace misses something it cannot tie to one QP: a reader proves nothing from
 * it (once a process). */
void fi_trace_hole(const char *why)
{
    static _Atomic int said;
    if (atomic_exchange(&said, 1) || !room())
        return;
    FI_EV(trace_full, .has = RG_EVH(trace_full, why), .why = why);
}

/*
 * A poll of c that found got completions. Polls that find nothing are counted since the CQ's
 * last completion, and the count written at 128, 256, 512, ... (trace_idle): a rank that went
 * on polling after its last completion says so, with the time, at a cost of a few lines.
 */
void fi_trace_polled(struct fi_cq *c, int got)
{
    if (got) {
        atomic_store_explicit(&c->tr_idle, 0, memory_order_relaxed);
        return;
    }
    uint64_t n = atomic_fetch_add_explicit(&c->tr_idle, 1, memory_order_relaxed) + 1;
    if (n >= 128 && !(n & (n - 1)) && room())
        FI_EV(trace_idle, .dev = c->c ? c->c->dev : "?", .cq = c->ord, .idle = n);
}

void fi_trace_gap(struct fi_qp *q, const char *why)
{
    if (atomic_exchange(&q->tr_gap, 1) || !room())
        return;
    FI_EV(trace_gap, .dev = q->c ? q->c->dev : "?", .qp = q->qpn, .why = why);
}
