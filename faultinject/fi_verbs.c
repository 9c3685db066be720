/* SPDX-License-Identifier: MIT */
/* The verbs the shim exports: devices, contexts, PDs, MRs, channels, CQs, QPs (fi_shim.h). */
#include "fi_shim.h"
#include "rg_parse.h"
#include "rg_faultinject.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* ---- exported wrappers: devices and contexts ---------------------------------------------- */
static struct ibv_cq_ex *fi_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
    FI_PROG(calls, 1); /* the rank moved: the runner's hang judge sees it */
    struct fi_ctx *cx = fi_ctx_of(ctx);
    if (!cx || !cx->create_cq_ex) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    if (fi_verb_fails(FI_VERB_CREATE_CQ, ctx, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_cq_ex *cqx = cx->create_cq_ex(ctx, a);
    if (cqx) {
        FI_TOT(cqs, 1);
        fi_cq_add(ibv_cq_ex_to_cq(cqx), cqx);
    }
    return cqx;
}

/*
 * uc_as_rc: a UC QP made an RC one, so that a send arriving before its receive is retried (RNR)
 * instead of dropped: a dominant UC race taken out of a run, to see what else fails. Its moves to
 * RTR and RTS get the attributes RC needs and UC lacks, the program's own where it gave them.
 */
static void as_rc_mark(struct ibv_qp *qp)
{
    struct fi_qp *q = fi_qp_find(qp->context, qp->qp_num);
    if (q)
        q->as_rc = true;
    FI_EV(note, .has = RG_EVH(note, qp), .what = "uc_as_rc: a UC QP created as RC",
          .qp = qp->qp_num);
}

static int as_rc_mask(struct ibv_qp *qp, struct ibv_qp_attr *in, int mask, struct ibv_qp_attr *out)
{
    struct fi_qp *q = fi_qp_find(qp->context, qp->qp_num);
    if (!q || !q->as_rc || !(mask & IBV_QP_STATE))
        return mask;
    *out = *in;
    if (in->qp_state == IBV_QPS_RTR) {
        if (!(mask & IBV_QP_MAX_DEST_RD_ATOMIC))
            out->max_dest_rd_atomic = 1;
        if (!(mask & IBV_QP_MIN_RNR_TIMER))
            out->min_rnr_timer = 1; /* 0.01 ms: a receive posted late is found soon */
        mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    } else if (in->qp_state == IBV_QPS_RTS) {
        if (!(mask & IBV_QP_TIMEOUT))
            out->timeout = 14; /* 4.096 us * 2^14: 67 ms a retry */
        if (!(mask & IBV_QP_RETRY_CNT))
            out->retry_cnt = 7;
        if (!(mask & IBV_QP_RNR_RETRY))
            out->rnr_retry = 7; /* 7: without limit, as a UC receiver would have waited */
        if (!(mask & IBV_QP_MAX_QP_RD_ATOMIC))
            out->max_rd_atomic = 1;
        mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    }
    return mask;
}

static struct ibv_qp *fi_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
    FI_PROG(calls, 1);
    struct fi_ctx *cx = fi_ctx_of(ctx);
    if (!cx || !cx->create_qp_ex) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    if (fi_verb_fails(FI_VERB_CREATE_QP, ctx, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    bool as_rc = a->qp_type == IBV_QPT_UC && fi_uc_as_rc();
    if (as_rc)
        a->qp_type = IBV_QPT_RC;
    struct ibv_qp *qp = cx->create_qp_ex(ctx, a);
    if (as_rc)
        a->qp_type = IBV_QPT_UC; /* the program's attributes as it wrote them */
    if (qp) {
        FI_TOT(qps, 1);
        bool ex = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0;
        fi_qp_add(qp, a->cap.max_send_wr, a->cap.max_recv_wr, a->srq != NULL, a->sq_sig_all,
                  ex ? ibv_qp_to_qp_ex(qp) : NULL);
        if (as_rc)
            as_rc_mark(qp);
    }
    return qp;
}

FI_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
    FI_PROG(calls, 1);
    struct ibv_context *ctx = fi_real.open_device(dev);
    if (!ctx)
        return NULL;
    FI_TOT(contexts, 1);
    atomic_fetch_add(&g_alive.contexts, 1);
    int saved = errno; /* a success may still have set errno; the program sees the real one */
    fi_read_rank();
    pthread_mutex_lock(&g_lock);
    int n = atomic_load(&g_nctx), slot = -1;
    for (int i = 0; i < n && slot < 0; i++)
        if (!atomic_load(&g_ctx[i].ctx))
            slot = i;
    if (slot < 0 && n < FI_MAX_CTX)
        slot = n;
    if (slot < 0) {
        pthread_mutex_unlock(&g_lock);
        char what[128];
        snprintf(what, sizeof(what), "context table full: %.64s is not watched", dev->name);
        FI_EV(note, .what = what);
        errno = saved;
        return ctx;
    }
    struct fi_ctx *cx = &g_ctx[slot];
    snprintf(cx->dev, sizeof(cx->dev), "%s", dev->name);
    cx->poll = ctx->ops.poll_cq;
    cx->post_send = ctx->ops.post_send;
    cx->post_recv = ctx->ops.post_recv;
    cx->post_srq_recv = ctx->ops.post_srq_recv;
    cx->req_notify = ctx->ops.req_notify_cq;
    /* Events for the shim's own completions (fi_notify.c) only where the provider keeps no
     * state of its own per event: rxe (its vendor id). mlx5 and mlx4 count events in a hook
     * of libibverbs' ibv_get_cq_event that an event the shim raises would skip. */
    struct ibv_device_attr da;
    cx->soft_events = fi_real.query_device(ctx, &da) == 0 && da.vendor_id == 0xffffff;
    struct verbs_context *vctx = verbs_get_ctx(ctx);
    cx->create_cq_ex = vctx ? vctx->create_cq_ex : NULL;
    cx->create_qp_ex = vctx ? vctx->create_qp_ex : NULL;
    atomic_store_explicit(&cx->ctx, ctx, memory_order_release);
    if (!g_one.mixed && (!g_one.poll || g_one.poll == cx->poll) &&
        (!g_one.post_send || g_one.post_send == cx->post_send) &&
        (!g_one.post_recv || g_one.post_recv == cx->post_recv)) {
        atomic_store(&g_one.poll, cx->poll);
        atomic_store(&g_one.post_send, cx->post_send);
        atomic_store(&g_one.post_recv, cx->post_recv);
    } else {
        g_one.mixed = true;
        atomic_store(&g_one.poll, NULL);
        atomic_store(&g_one.post_send, NULL);
        atomic_store(&g_one.post_recv, NULL);
    }
    if (slot == n)
        atomic_store_explicit(&g_nctx, n + 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    /* Patched only once the originals are where the wrappers look for them. */
    ctx->ops.poll_cq = fi_poll_cq;
    ctx->ops.post_send = fi_post_send;
    ctx->ops.post_recv = fi_post_recv;
    if (ctx->ops.post_srq_recv)
        ctx->ops.post_srq_recv = fi_post_srq_recv;
    if (ctx->ops.req_notify_cq)
        ctx->ops.req_notify_cq = fi_req_notify_cq;
    if (vctx && vctx->create_cq_ex)
        vctx->create_cq_ex = fi_create_cq_ex;
    if (vctx && vctx->create_qp_ex)
        vctx->create_qp_ex = fi_create_qp_ex;
    errno = saved;
    return ctx;
}

FI_EXPORT int ibv_close_device(struct ibv_context *ctx)
{
    FI_PROG(calls, 1);
    struct fi_ctx *cx = fi_ctx_of(ctx);
    int rc = fi_real.close_device(ctx);
    if (!rc && cx)
        atomic_store(&cx->ctx, NULL);
    if (!rc)
        atomic_fetch_sub(&g_alive.contexts, 1);
    return rc;
}

static struct ibv_device **g_mine[64]; /* permuted lists handed out, for ibv_free_device_list */

/* Lists handed out by the swap_rails fault: the real list is kept one slot before ours. */
FI_EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
    int n = 0;
    struct ibv_device **list = fi_real.get_device_list(&n);
    /* Kept from here and put back before every return: a program that finds no list prints
     * strerror(errno), which must name the real call's failure, not something of ours. */
    int saved = errno;
    struct fi_live *lp = fi_live();
    if (num)
        *num = n;
    fi_read_rank();
    if (!list || !lp || !lp->m_swap)
        goto out;
    struct fi_site s = {.dev = NULL, .qpn = -1, .qp_ord = -1, .cq_ord = -1};
    uint64_t nth;
    for (uint32_t m = lp->m_swap; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        const struct fi_rule *r = &lp->plan.rules[i];
        int np = r->nperm ? r->nperm : n < FI_MAX_DEVS ? n : FI_MAX_DEVS;
        if (np > n || np < 2) {
            char what[64];
            snprintf(what, sizeof(what), "swap_rails needs %d devices, %d present", np, n);
            FI_EV(note, .has = RG_EVH(note, rule), .what = what, .rule = i);
            continue;
        }
        if (!fi_fire(lp, i, &s, &nth))
            continue;
        struct ibv_device **mine = calloc((size_t)n + 2, sizeof(*mine));
        if (!mine)
            goto out;
        mine[0] = (struct ibv_device *)(void *)list;
        char names[FI_MAX_DEVS][IBV_SYSFS_NAME_MAX];
        for (int k = 0; k < np; k++)
            memcpy(names[k], list[k]->name, sizeof(names[k]));
        /*
         * Position k now holds the device that was at perm[k], under position k's old name: a
         * program that opens "rxe0" gets rxe1's hardware. The names live in libibverbs' device
         * structures, which it keeps for the life of the process, so they are renamed once.
         */
        static struct ibv_device *renamed[FI_MAX_DEVS * 4];
        static int nrenamed;
        char map[256];
        size_t o = 0;
        map[0] = '\0';
        for (int k = 0; k < np; k++) {
            int from = r->nperm ? r->perm[k] : np - 1 - k;
            mine[1 + k] = list[from];
            o += (size_t)snprintf(map + o, o < sizeof(map) ? sizeof(map) - o : 0, "%s%s=%s",
                                  k ? "," : "", names[k], names[from]);
        }
        for (int k = np; k < n; k++)
            mine[1 + k] = list[k];
        pthread_mutex_lock(&g_lock);
        for (size_t k = 0; k < sizeof(g_mine) / sizeof(g_mine[0]); k++) {
            if (!g_mine[k]) {
                g_mine[k] = mine;
                break;
            }
        }
        bool done = false;
        for (int k = 0; k < nrenamed; k++)
            done = done || renamed[k] == mine[1];
        if (!done) {
            for (int k = 0; k < np; k++) {
                memcpy(mine[1 + k]->name, names[k], sizeof(mine[1 + k]->name));
                if (nrenamed < (int)(sizeof(renamed) / sizeof(renamed[0])))
                    renamed[nrenamed++] = mine[1 + k];
            }
        }
        pthread_mutex_unlock(&g_lock);
        fi_event_fault(lp, i, &s, nth, FI_FD(.has = RG_EVH(fault, map), .map = map));
        list = mine + 1;
        break;
    }
out:
    errno = saved;
    return list;
}

FI_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
    /* Ours are recognised by address: freed lists of ours are few, so a scan is enough. */
    if (list) {
        struct ibv_device **base = list - 1;
        pthread_mutex_lock(&g_lock);
        for (size_t i = 0; i < sizeof(g_mine) / sizeof(g_mine[0]); i++) {
            if (g_mine[i] == base) {
                g_mine[i] = NULL;
                pthread_mutex_unlock(&g_lock);
                fi_real.free_device_list((struct ibv_device **)(void *)base[0]);
                free(base);
                return;
            }
        }
        pthread_mutex_unlock(&g_lock);
    }
    fi_real.free_device_list(list);
}

/* ---- exported wrappers: resources --------------------------------------------------------- */
FI_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
    FI_PROG(calls, 1);
    if (fi_verb_fails(FI_VERB_ALLOC_PD, ctx, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_pd *pd = fi_real.alloc_pd(ctx);
    if (pd)
        atomic_fetch_add(&g_alive.pds, 1);
    return pd;
}

FI_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    FI_PROG(calls, 1);
    int rc = fi_real.dealloc_pd(pd);
    if (!rc)
        atomic_fetch_sub(&g_alive.pds, 1);
    return rc;
}

/*
 * A registration that succeeded counts as alive until ibv_dereg_mr frees it. With the ownership
 * sanitizer on, the MR's range is noted (iova: the address its SGEs use; the program's address
 * is mr->addr), unless it is not in this process's memory (DMA-buf: cpu false).
 */
static struct ibv_mr *fi_mr_made(struct ibv_mr *mr, uint64_t iova, bool cpu)
{
    FI_PROG(calls, 1);
    if (!mr)
        return mr;
    atomic_fetch_add(&g_alive.mrs, 1);
    struct fi_live *lp = fi_live();
    if (lp && lp->own && cpu)
        fi_own_mr_add(mr->context, mr->lkey, (uint64_t)(uintptr_t)mr->addr, iova, mr->length);
    return mr;
}

FI_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
    FI_PROG(calls, 1);
    /* Out of the table first: no check reads the memory once the program may free it. */
    if (mr && fi_own_on())
        fi_own_mr_del(mr->context, mr->lkey);
    int rc = fi_real.dereg_mr(mr);
    if (!rc)
        atomic_fetch_sub(&g_alive.mrs, 1);
    return rc;
}

FI_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
    FI_PROG(calls, 1);
    struct ibv_comp_channel *ch = fi_real.create_comp_channel(ctx);
    if (ch)
        atomic_fetch_add(&g_alive.channels, 1);
    return ch;
}

FI_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
    FI_PROG(calls, 1);
    int rc = fi_real.destroy_comp_channel(ch);
    if (!rc)
        atomic_fetch_sub(&g_alive.channels, 1);
    return rc;
}

/*
 * libibverbs's ibv_reg_mr and ibv_reg_mr_iova end in a call of ibv_reg_mr_iova2 through its
 * PLT, which lands in this shim again: one registration would count twice (a LEAK of one MR
 * at exit, found by railguard exec on a program that calls ibv_reg_mr itself) and a reg_mr
 * rule's n would advance twice. The outer wrapper marks its thread; the inner call passes
 * straight through.
 */
static __thread bool t_in_reg_mr;

FI_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    if (fi_verb_fails(FI_VERB_REG_MR, pd ? pd->context : NULL, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    t_in_reg_mr = true;
    struct ibv_mr *mr = fi_real.reg_mr(pd, addr, length, access);
    t_in_reg_mr = false;
    return fi_mr_made(mr, (uint64_t)(uintptr_t)addr, true);
}

FI_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
                                         uint64_t iova, int access)
{
    if (fi_verb_fails(FI_VERB_REG_MR, pd ? pd->context : NULL, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    t_in_reg_mr = true;
    struct ibv_mr *mr = fi_real.reg_mr_iova(pd, addr, length, iova, access);
    t_in_reg_mr = false;
    return fi_mr_made(mr, iova, true);
}

FI_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
                                          uint64_t iova, unsigned int access)
{
    if (t_in_reg_mr)
        return fi_real.reg_mr_iova2(pd, addr, length, iova, access);
    if (fi_verb_fails(FI_VERB_REG_MR, pd ? pd->context : NULL, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return fi_mr_made(fi_real.reg_mr_iova2(pd, addr, length, iova, access), iova, true);
}

FI_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                           uint64_t iova, int fd, int access)
{
    if (fi_verb_fails(FI_VERB_REG_MR, pd ? pd->context : NULL, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return fi_mr_made(fi_real.reg_dmabuf_mr(pd, offset, length, iova, fd, access), iova, false);
}

FI_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                                       struct ibv_comp_channel *channel, int comp_vector)
{
    FI_PROG(calls, 1);
    if (fi_verb_fails(FI_VERB_CREATE_CQ, ctx, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_cq *cq = fi_real.create_cq(ctx, cqe, cq_context, channel, comp_vector);
    if (cq) {
        FI_TOT(cqs, 1);
        fi_cq_add(cq, NULL);
    }
    return cq;
}

FI_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
    FI_PROG(calls, 1);
    struct fi_cq *c = fi_cq_find(cq);
    int rc = fi_real.destroy_cq(cq);
    if (!rc && c) {
        if (fi_live())
            fi_cq_summary(c, "destroy");
        atomic_store(&c->state, SLOT_DEAD);
    }
    return rc;
}

FI_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    FI_PROG(calls, 1);
    if (fi_verb_fails(FI_VERB_CREATE_QP, pd ? pd->context : NULL, __builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    bool as_rc = attr && attr->qp_type == IBV_QPT_UC && fi_uc_as_rc();
    if (as_rc)
        attr->qp_type = IBV_QPT_RC;
    struct ibv_qp *qp = fi_real.create_qp(pd, attr);
    if (as_rc)
        attr->qp_type = IBV_QPT_UC;
    if (qp)
        FI_TOT(qps, 1);
    if (qp)
        fi_qp_add(qp, attr->cap.max_send_wr, attr->cap.max_recv_wr, attr->srq != NULL,
                  attr->sq_sig_all, NULL);
    if (qp && as_rc)
        as_rc_mark(qp);
    return qp;
}

/* Wrapped so corrupt can find the buffers of an SRQ's receives (fi_srq.c). */
FI_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
    FI_PROG(calls, 1);
    struct ibv_srq *srq = fi_real.create_srq(pd, attr);
    if (srq) {
        int saved = errno;
        fi_srq_add(srq, attr->attr.max_wr); /* the provider's own, written back */
        errno = saved;
    }
    return srq;
}

FI_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
    FI_PROG(calls, 1);
    int rc = fi_real.destroy_srq(srq);
    if (!rc)
        fi_srq_gone(srq);
    return rc;
}

/* Wrapped for the trace: a QP's move to RTR names its peer, the one moment both ends of a
 * connection are known to the shim; and for uc_as_rc's attributes. Otherwise a pass-through. */
FI_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    FI_PROG(calls, 1);
    struct ibv_qp_attr rc_attr;
    int rc_mask = fi_uc_as_rc() ? as_rc_mask(qp, attr, mask, &rc_attr) : mask;
    int rc = fi_real.modify_qp(qp, rc_mask != mask ? &rc_attr : attr, rc_mask);
    /* A UD receive is written at most a GRH and one MTU deep, whatever its scatter list says:
     * the sanitizer poisons no further (a program may use memory past that: UCX's UD buffers
     * run into what it uses while they are posted, fi_own.c). */
    if (!rc && qp->qp_type == IBV_QPT_UD && (mask & IBV_QP_PORT) && fi_own_on()) {
        struct fi_qp *q = fi_qp_find(qp->context, qp->qp_num);
        struct ibv_port_attr pa;
        int saved = errno;
        if (q && ibv_query_port(qp->context, attr->port_num, &pa) == 0 && pa.active_mtu >= 1 &&
            pa.active_mtu <= 5)
            atomic_store(&q->ud_room, 40u + (128u << pa.active_mtu));
        errno = saved;
    }
    if (!rc && fi_tracing() && (mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RTR) {
        int saved = errno;
        fi_trace_qp(qp, attr, mask);
        errno = saved;
    }
    return rc;
}

FI_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
    FI_PROG(calls, 1);
    struct fi_qp *q = qp ? fi_qp_find(qp->context, qp->qp_num) : NULL;
    if (q && atomic_load(&q->late))
        fi_late_drop(q);
    if (q && fi_live())
        fi_qp_summary(q, "destroy");
    /* Its CQs are read before the provider frees the QP (valgrind caught the read after). */
    struct fi_cq *cs[2] = {q ? fi_cq_find(qp->send_cq) : NULL, q ? fi_cq_find(qp->recv_cq) : NULL};
    int rc = fi_real.destroy_qp(qp);
    if (!rc && q) {
        /* Its made-up completions go with it: the slot may serve another QP next. */
        for (int k = 0; k < 2; k++) {
            if (!cs[k] || (k == 1 && cs[1] == cs[0]))
                continue;
            pthread_mutex_lock(&cs[k]->plock);
            int n = atomic_load(&cs[k]->npend), keep = 0;
            for (int i = 0; i < n; i++)
                if (cs[k]->pend[i].q != q)
                    cs[k]->pend[keep++] = cs[k]->pend[i];
            atomic_store(&cs[k]->npend, keep);
            pthread_mutex_unlock(&cs[k]->plock);
        }
        /* Tracking ends here: its requests' records (send copies) are freed now, not when the
         * slot is reused, so their memory and the copy budget come back at once. */
        pthread_mutex_lock(&q->rlock);
        fi_ring_forget(&q->sring, q->sring.head);
        fi_ring_forget(&q->rring, q->rring.head);
        pthread_mutex_unlock(&q->rlock);
        atomic_store(&q->state, SLOT_DEAD);
    }
    return rc;
}
