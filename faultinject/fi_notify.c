/* SPDX-License-Identifier: MIT */
/*
 * Completion events for the shim's own completions (fi_shim.h). The shim makes completions no
 * provider wrote: a lost send's success, the flushes of requests posted to a QP a fault broke.
 * A program that sleeps on a completion channel learns of a completion only from the channel's
 * event, and rxe raises one only for a completion it writes itself into an armed CQ, so a
 * program waiting for a made-up completion slept on, where a NIC that completes a send or
 * flushes a broken QP's requests raises the event with it. rping's server hung so in
 * ibv_get_cq_event with its lost send's completion waiting in the shim.
 *
 * So the shim keeps what the provider keeps: whether the program armed each CQ
 * (ibv_req_notify_cq, patched like the datapath) since its last event. A program that waits in
 * ibv_get_cq_event on a blocking channel, with an armed CQ of that channel holding made-up
 * completions a poll can take, gets that CQ's event from the shim at once, as a NIC would have
 * raised it; else it waits for the provider's, watching for such a CQ every FI_NOTIFY_MS. The
 * program acks the event as any other; ibv_ack_cq_events passes on only the provider's own, as
 * ibv_destroy_cq waits until the acks match the events the kernel reported.
 *
 * Only on rxe (its vendor id, 0xffffff): mlx5 and mlx4 keep a count of events in a provider
 * hook that libibverbs' ibv_get_cq_event calls, which an event the shim raised would skip, and
 * their next arm would then be wrong. What this cannot reach either: a program that waits in
 * poll(2) or epoll on the channel's descriptor (rsockets, UCX), a channel in non-blocking mode. A
 * hang there with made-up completions held is judged by the runner as the shim's limit, not the
 * program's (the cq events' `held`).
 */
#include "fi_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>

#define FI_NOTIFY_MS 20 /* how often a blocked ibv_get_cq_event looks for made-up completions */

/* Whether c holds a made-up completion that a poll would hand out now. */
static bool deliverable(struct fi_cq *c)
{
    if (!atomic_load_explicit(&c->npend, memory_order_relaxed))
        return false;
    bool any = false;
    pthread_mutex_lock(&c->plock);
    int n = atomic_load(&c->npend);
    for (int k = 0; k < n && !any; k++) {
        const struct fi_pend *p = &c->pend[k];
        any = !p->after || atomic_load(&p->q->sig_done) >= p->after;
    }
    pthread_mutex_unlock(&c->plock);
    return any;
}

/* An armed CQ of channel ch that a made-up completion is waiting in, its arm taken; or NULL. */
static struct fi_cq *owed_event(const struct ibv_comp_channel *ch)
{
    for (int i = 0; i < FI_MAX_CQS; i++) {
        struct fi_cq *c = &g_cq[i];
        if (atomic_load_explicit(&c->state, memory_order_acquire) != SLOT_LIVE || c->chan != ch ||
            !atomic_load(&c->armed) || !deliverable(c))
            continue;
        int one = 1;
        if (atomic_compare_exchange_strong(&c->armed, &one, 0))
            return c;
    }
    return NULL;
}

int fi_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
    struct fi_ctx *cx = fi_ctx_of(cq->context);
    if (!cx || !cx->req_notify)
        return EINVAL;
    int rc = cx->req_notify(cq, solicited_only);
    struct fi_cq *c = rc || !cx->soft_events ? NULL : fi_cq_find(cq);
    /* A solicited-only arm is raised by no send's completion; a flush is an error, and errors
     * raise it, but the lost send's success would not: such an arm is left to the provider. */
    if (c && !solicited_only)
        atomic_store(&c->armed, 1);
    return rc;
}

FI_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
                               void **cq_context)
{
    int fl = fcntl(channel->fd, F_GETFL);
    for (;;) {
        struct fi_cq *c = fi_live() ? owed_event(channel) : NULL;
        if (c) {
            atomic_fetch_add(&c->owed, 1);
            *cq = c->cq;
            *cq_context = c->cq->cq_context;
            return 0;
        }
        struct pollfd p = {.fd = channel->fd, .events = POLLIN};
        /* Non-blocking, or the provider's event is there (or the descriptor is broken): the
         * real call says what it says. Nothing to watch for without a plan. */
        if (fl < 0 || (fl & O_NONBLOCK) || !fi_live() || poll(&p, 1, FI_NOTIFY_MS) != 0)
            break;
    }
    int rc = fi_real.get_cq_event(channel, cq, cq_context);
    struct fi_cq *c = rc ? NULL : fi_cq_find(*cq);
    if (c)
        atomic_store(&c->armed, 0); /* the provider's event disarms the CQ */
    return rc;
}

FI_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
    struct fi_cq *c = fi_cq_find(cq);
    unsigned int own = 0;
    if (c) {
        unsigned int owed = atomic_load(&c->owed);
        while (owed && !atomic_compare_exchange_weak(&c->owed, &owed,
                                                     owed - (owed < nevents ? owed : nevents)))
            ;
        own = owed < nevents ? owed : nevents;
    }
    if (nevents > own)
        fi_real.ack_cq_events(cq, nevents - own);
}
