/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues' records of their posted receives (fi_shim.h), so corrupt can find the
 * buffer a completion filled: a receive taken from an SRQ completes on whichever QP the message
 * arrived at, naming that QP, so the QP's own ring (fi_ring.c) cannot hold it.
 *
 * An SRQ hands out its receives in the order they were posted, but its completions arrive on
 * the CQs of many QPs, which the program polls in any order: a completion takes the oldest
 * record with its wr_id, wherever it stands, and the head moves past what was taken. Programs
 * that give every receive the same wr_id (rdma-core's srq pingpong) still get the right buffer
 * while every post is recorded; once one may be missing (posted before a plan was live, or
 * past the ring's room), only a wr_id that stands for one receive alone is trusted, and
 * anything else is "unknown", never a guess at someone else's buffer.
 *
 * Tracked: SRQs made by ibv_create_srq. ibv_create_srq_ex is an inline call into the
 * provider the shim does not see; its SRQs are counted and their receives left unknown.
 */
#include "fi_shim.h"

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FI_MAX_SRQS 64

struct fi_srq {
    _Atomic int state;
    struct ibv_srq *srq;
    pthread_mutex_t lock;
    struct fi_ring ring; /* entries with `taken` set are holes a completion out of turn left */
};

static struct fi_srq g_srq[FI_MAX_SRQS];
static pthread_mutex_t g_srq_lock = PTHREAD_MUTEX_INITIALIZER;

static struct fi_srq *fi_srq_find(const struct ibv_srq *srq)
{
    for (int i = 0; i < FI_MAX_SRQS; i++) {
        struct fi_srq *s = &g_srq[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_LIVE && s->srq == srq)
            return s;
    }
    return NULL;
}

void fi_srq_add(struct ibv_srq *srq, uint32_t max_wr)
{
    pthread_mutex_lock(&g_srq_lock);
    struct fi_srq *s = NULL;
    for (int i = 0; i < FI_MAX_SRQS && !s; i++)
        if (atomic_load(&g_srq[i].state) != SLOT_LIVE)
            s = &g_srq[i];
    if (s) {
        if (atomic_load(&s->state) == SLOT_EMPTY)
            pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_lock(&s->lock);
        free(s->ring.e);
        /* Allocated here, at creation, so the datapath never allocates. */
        s->ring = (struct fi_ring){.e = calloc((size_t)max_wr + 1, sizeof(struct fi_rent))};
        s->ring.cap = s->ring.e ? max_wr + 1 : 0;
        /* Exact only if every post is seen from the start: a plan is live (see fi_qp_add). */
        s->ring.exact = fi_live() != NULL;
        s->srq = srq;
        pthread_mutex_unlock(&s->lock);
        atomic_store_explicit(&s->state, SLOT_LIVE, memory_order_release);
    }
    pthread_mutex_unlock(&g_srq_lock);
    if (!s)
        FI_EV(note, .what = "SRQ table full: its receives are not followed");
}

void fi_srq_gone(struct ibv_srq *srq)
{
    pthread_mutex_lock(&g_srq_lock);
    struct fi_srq *s = fi_srq_find(srq);
    if (s) {
        atomic_store(&s->state, SLOT_DEAD);
        pthread_mutex_lock(&s->lock);
        free(s->ring.e);
        s->ring = (struct fi_ring){0};
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&g_srq_lock);
}

int fi_srq_post(struct ibv_srq *srq, post_srq_fn post, struct ibv_recv_wr *wr,
                struct ibv_recv_wr **bad)
{
    struct fi_srq *s = fi_srq_find(srq);
    if (!s)
        return post(srq, wr, bad);
    pthread_mutex_lock(&s->lock);
    struct fi_ring *r = &s->ring;
    uint32_t tail0 = r->tail, n = 0;
    bool exact0 = r->exact;
    /* A full ring loses the record and its exactness: a shared wr_id no longer says which. */
    for (struct ibv_recv_wr *w = wr; w; w = w->next) {
        struct fi_rent e;
        fi_rent_recv(&e, w);
        fi_ring_push(r, &e);
    }
    int rc = post(srq, wr, bad);
    for (struct ibv_recv_wr *w = wr; rc && w && w != *bad; w = w->next)
        n++;
    if (rc && exact0 && r->exact) /* what the provider refused was never posted */
        r->tail = (tail0 + n) % r->cap;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

bool fi_srq_take(struct ibv_srq *srq, uint64_t wr_id, struct fi_rent *out)
{
    struct fi_srq *s = srq ? fi_srq_find(srq) : NULL;
    if (!s)
        return false;
    pthread_mutex_lock(&s->lock);
    struct fi_ring *r = &s->ring;
    uint32_t h = UINT32_MAX;
    bool twice = false;
    for (uint32_t k = r->head; r->cap && k != r->tail && !twice; k = (k + 1) % r->cap) {
        if (r->e[k].taken || r->e[k].wr_id != wr_id)
            continue;
        twice = h != UINT32_MAX;
        h = twice ? h : k;
    }
    /* Not exact: a second record with this wr_id means the one taken may be either. */
    bool found = h != UINT32_MAX && (r->exact || !twice);
    if (h != UINT32_MAX) {
        *out = r->e[h];
        r->e[h].taken = true;
        while (r->head != r->tail && r->e[r->head].taken)
            r->head = (r->head + 1) % r->cap;
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}
