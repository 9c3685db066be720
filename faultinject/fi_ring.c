/* SPDX-License-Identifier: MIT */
/* Each QP's record of the work requests it has outstanding, and posting through it (fi_shim.h). */
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

void fi_ring_push(struct fi_ring *r, const struct fi_rent *e)
{
    uint32_t next;
    if (!r->cap || (next = (r->tail + 1) % r->cap) == r->head) {
        r->exact = false; /* one request missing: positions no longer line up */
        return;
    }
    r->e[r->tail] = *e;
    r->tail = next;
}

/* A push whose record goes with the entry, or is freed (and counted) when the ring is full. */
static void fi_ring_push_own(struct fi_ring *r, const struct fi_rent *e)
{
    uint32_t tail = r->tail;
    fi_ring_push(r, e);
    if (e->own && r->tail == tail) {
        fi_own_free(e->own);
        fi_own_unsanitized(1);
    }
}

/* The first entry from the head with this wr_id, or UINT32_MAX. */
static uint32_t fi_ring_find(const struct fi_ring *r, uint64_t wr_id)
{
    for (uint32_t h = r->head; r->cap && h != r->tail; h = (h + 1) % r->cap)
        if (r->e[h].wr_id == wr_id)
            return h;
    return UINT32_MAX;
}

/*
 * Retires the entries from the head up to and including position h. Those before h completed
 * unseen (unsignaled sends, which a later completion retires in order): their records go on
 * the list at *unseen, for the caller to check once the ring's lock is released. h's record
 * goes to *out, whose caller checks it with the completion's status.
 */
static void fi_ring_take(struct fi_ring *r, uint32_t h, struct fi_own ***unseen,
                         struct fi_rent *out)
{
    for (uint32_t k = r->head; k != h; k = (k + 1) % r->cap) {
        fi_own_defer(unseen, r->e[k].own, r->e[k].wr_id);
        r->e[k].own = NULL;
    }
    *out = r->e[h];
    r->e[h].own = NULL;
    r->head = (h + 1) % r->cap;
}

/* Forgets what the ring holds from position `from` to its tail (a break, a refused post, a
 * slot reused): the requests are gone, so their records are freed unchecked. */
void fi_ring_forget(struct fi_ring *r, uint32_t from)
{
    for (uint32_t k = from; r->cap && k != r->tail; k = (k + 1) % r->cap) {
        fi_own_free(r->e[k].own);
        r->e[k].own = NULL;
    }
}

/*
 * Retires the request a completion stands for (see struct fi_ring) and copies it to *out.
 * `success` matters for sends: an error completion may belong to an unsignaled request, so it
 * retires up to the first request with its wr_id instead. False when no entry stands for it.
 */
static bool fi_ring_retire(struct fi_ring *r, bool recv, bool success, uint64_t wr_id,
                           struct fi_own ***unseen, struct fi_rent *out)
{
    uint32_t h = UINT32_MAX;
    if (!r->cap || r->head == r->tail)
        return false;
    if (!r->exact || (!recv && !success)) {
        h = fi_ring_find(r, wr_id);
    } else if (recv) {
        h = r->head;
    } else {
        for (uint32_t k = r->head; k != r->tail && h == UINT32_MAX; k = (k + 1) % r->cap)
            if (r->e[k].signaled)
                h = k;
    }
    if (h == UINT32_MAX)
        return false;
    fi_ring_take(r, h, unseen, out);
    return true;
}

/*
 * A completion for a posted request: drops it (and what it retires) from its ring. The
 * requests it retired unseen are checked here; its own record stays in out->own for
 * fi_retired(), once the completion's status is final.
 */
bool fi_retire(struct fi_qp *q, bool recv, bool success, uint64_t wr_id, struct fi_rent *out)
{
    struct fi_own *unseen = NULL, **tail = &unseen;
    pthread_mutex_lock(&q->rlock);
    bool found = fi_ring_retire(recv ? &q->rring : &q->sring, recv, success, wr_id, &tail, out);
    pthread_mutex_unlock(&q->rlock);
    fi_own_check_list(unseen, q->qpn, fi_ud_heard(q));
    return found;
}

/* Checks and frees a retired request's ownership record, with the status the program will
 * see (an error the shim made up included: a receive's buffer is then poison again). Before
 * the program sees the completion: from then on the buffer is its own again. */
void fi_retired(struct fi_qp *q, struct fi_rent *e, int status, uint32_t byte_len)
{
    if (!e->own)
        return;
    fi_own_check(e->own, q->qpn, fi_ud_heard(q), e->wr_id, status == IBV_WC_SUCCESS, byte_len);
    fi_own_free(e->own);
    e->own = NULL;
}

/* Whether a completion of q came from its receive queue. A successful one says so in its
 * opcode; an error's opcode is undefined, so the CQ it came on, or the ring holding its wr_id,
 * decides, and the opcode only when neither can. */
bool fi_cqe_is_recv(struct fi_qp *q, const struct ibv_cq *cq, int status, enum ibv_wc_opcode opcode,
                    uint64_t wr_id)
{
    if (status == IBV_WC_SUCCESS)
        return (opcode & IBV_WC_RECV) != 0;
    if (q->qp->send_cq != q->qp->recv_cq)
        return cq == q->qp->recv_cq;
    pthread_mutex_lock(&q->rlock);
    bool in_s = fi_ring_find(&q->sring, wr_id) != UINT32_MAX;
    bool in_r = fi_ring_find(&q->rring, wr_id) != UINT32_MAX;
    pthread_mutex_unlock(&q->rlock);
    return in_s != in_r ? in_r : (opcode & IBV_WC_RECV) != 0;
}

bool fi_signaled(const struct fi_qp *q, const struct ibv_send_wr *w)
{
    return q->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED);
}

/*
 * Posts a run of sends to the provider and records them. The record is written first and the
 * lock held across the post, so a completion polled at once on another thread finds its entry
 * and two threads posting to one QP record in the provider's order. What the provider refused
 * (from *bad on) leaves the record again. `pre`: the first request's ownership record, made
 * when the program posted it (a late post), or NULL to make them all now.
 */
int fi_send_run_own(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp, struct ibv_send_wr *wr,
                    struct ibv_send_wr **bad, struct fi_own *pre)
{
    uint64_t sig = 0;
    pthread_mutex_lock(&q->rlock);
    uint32_t tail0 = q->sring.tail, n = 0;
    bool exact0 = q->sring.exact;
    bool own = !pre && fi_own_on();
    for (struct ibv_send_wr *w = wr; w; w = w->next)
        fi_ring_push_own(
            &q->sring, &(struct fi_rent){.wr_id = w->wr_id,
                                         .signaled = fi_signaled(q, w),
                                         .own = w == wr && pre ? pre
                                                : own ? fi_own_send(qp->context, w, fi_ud_heard(q))
                                                      : NULL});
    double at = fi_trace_now();
    int rc = post(qp, wr, bad);
    for (struct ibv_send_wr *w = wr; w && !(rc && w == *bad); w = w->next, n++)
        sig += fi_signaled(q, w);
    if (at > 0)
        fi_trace_sends(q, wr, rc ? *bad : NULL, at, "wire");
    if (rc && exact0 && q->sring.exact) {
        uint32_t keep = (tail0 + n) % q->sring.cap;
        fi_ring_forget(&q->sring, keep);
        q->sring.tail = keep;
    }
    pthread_mutex_unlock(&q->rlock);
    atomic_fetch_add_explicit(&q->sig_posted, sig, memory_order_relaxed);
    return rc;
}

/* Posts a run of sends whose records are made now (see fi_send_run_own). */
int fi_send_run(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp, struct ibv_send_wr *wr,
                struct ibv_send_wr **bad)
{
    return fi_send_run_own(q, post, qp, wr, bad, NULL);
}

/* Posts the run head..prev that comes before w (none when head is w); the caller's list is
 * cut there only for the post and restored. */
int fi_send_before(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp, struct ibv_send_wr *head,
                   struct ibv_send_wr *prev, struct ibv_send_wr *w, struct ibv_send_wr **bad)
{
    if (head == w)
        return 0;
    prev->next = NULL;
    int rc = fi_send_run(q, post, qp, head, bad);
    prev->next = w;
    return rc;
}

/* A receive's record: its wr_id and the first FI_RENT_SGE entries of its scatter list, kept
 * for corrupt. */
void fi_rent_recv(struct fi_rent *e, const struct ibv_recv_wr *w)
{
    *e = (struct fi_rent){.wr_id = w->wr_id};
    for (int i = 0; i < w->num_sge && i < FI_RENT_SGE; i++) {
        e->addr[i] = w->sg_list[i].addr;
        e->len[i] = w->sg_list[i].length;
        e->nsge++;
    }
}

/* The same for receives (fi_rent_recv's records). */
int fi_recv_run(struct fi_qp *q, post_recv_fn post, struct ibv_qp *qp, struct ibv_recv_wr *wr,
                struct ibv_recv_wr **bad)
{
    pthread_mutex_lock(&q->rlock);
    uint32_t tail0 = q->rring.tail, n = 0;
    bool exact0 = q->rring.exact;
    bool own = fi_own_on();
    for (struct ibv_recv_wr *w = wr; w; w = w->next) {
        struct fi_rent e;
        fi_rent_recv(&e, w);
        e.own = own ? fi_own_recv(qp->context, w, atomic_load(&q->ud_room)) : NULL;
        fi_ring_push_own(&q->rring, &e);
    }
    double at = fi_trace_now();
    int rc = post(qp, wr, bad);
    for (struct ibv_recv_wr *w = wr; rc && w && w != *bad; w = w->next)
        n++;
    if (at > 0)
        fi_trace_recvs(q, wr, rc ? *bad : NULL, at, "wire");
    if (rc && exact0 && q->rring.exact) {
        uint32_t keep = (tail0 + n) % q->rring.cap;
        fi_ring_forget(&q->rring, keep);
        q->rring.tail = keep;
    }
    pthread_mutex_unlock(&q->rlock);
    return rc;
}

/* Queues a completion the shim makes; false when the CQ can't take it (it would overrun). */
