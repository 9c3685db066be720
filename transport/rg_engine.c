/* SPDX-License-Identifier: MIT */
/*
 * The progress engine (rg_comm.h): each connection's slots and credits, posting and polling,
 * what a failed completion names, the deadline's checks, and the teardown after a failed
 * zero-copy call. rg_comm.c sets connections up; rg_coll.c drives them.
 */
#include "rg_comm.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *kind_name(unsigned k)
{
    return k == RG_WR_SEND ? "send to" : k == RG_WR_RECV ? "recv from" : "credit to";
}

/* Names the operation behind a failed completion: "rank 1: recv from rank 0 rail 1". */
void rg__describe_wc(const struct ibv_wc *wc, void *arg, char *buf, size_t len)
{
    struct rg_comm *c = arg;
    unsigned idx = rg__wrid_conn(wc->wr_id);
    if (rg__wrid_tag(wc->wr_id) != c->tag || idx >= (unsigned)c->nconns) {
        snprintf(buf, len, "rank %d: completion of an unknown work request", c->rank);
        return;
    }
    snprintf(buf, len, "rank %d: %s rank %d rail %d", c->rank, kind_name(rg__wrid_kind(wc->wr_id)),
             c->conns[idx].peer, c->conns[idx].rail);
}

/* RG_DEBUG=1: on failure, every connection's counters on stderr, for post-mortems. */
/* One connection's counters: sends posted/done/credit, receives posted/arrived/consumed. */
static int conn_state(const struct rg_conn *x, char *buf, size_t len)
{
    return snprintf(buf, len, "rank %d rail %d: tx %llu/%llu/%llu rx %llu/%llu/%llu", x->peer,
                    x->rail, (unsigned long long)x->send_posted, (unsigned long long)x->send_done,
                    (unsigned long long)x->peer_credit, (unsigned long long)x->recv_posted,
                    (unsigned long long)x->recv_arrived, (unsigned long long)x->recv_consumed);
}

static void debug_dump(struct rg_comm *c)
{
    for (int i = 0; i < c->nconns; i++) {
        struct rg_conn *x = &c->conns[i];
        char st[160];
        conn_state(x, st, sizeof(st));
        fprintf(stderr, "rank %d op %u: peer %s credit granted %llu writes %llu/%llu\n", c->rank,
                c->op_seq, st, (unsigned long long)x->credit_granted,
                (unsigned long long)x->credit_writes, (unsigned long long)x->credit_done);
    }
}

rg_status rg__fail(struct rg_comm *c, rg_status st)
{
    if (!c->poisoned) {
        c->poisoned = 1;
        if (c->debug)
            debug_dump(c);
        if (c->err.st == RG_OK)
            rg__err_set(&c->err, st, "rank %d: %s", c->rank, rg_strerror(st));
        /* A peer abort needs no echo; anything else, the peers should hear of at once. */
        if (c->err.st != RG_ERR_PEER_ABORT)
            rg__sc_abort(c->sc, c->err.msg);
    }
    return c->err.st;
}

rg_status rg__post_recv_slot(struct rg_comm *c, struct rg_conn *x)
{
    return rg__post_recv_into(c, x, NULL, 0, NULL);
}

rg_status rg__post_recv_into(struct rg_comm *c, struct rg_conn *x, uint8_t *into, size_t len,
                             const struct ibv_mr *mr)
{
    uint64_t seq = x->recv_posted, t0 = rg__ph_start(c);
    uint8_t *slot = rg__recv_slot(x, c->slots, seq);
    /* The header in the slot, where peek checks it; the payload in the slot, or in place. */
    struct ibv_sge sge[2] = {
        {.addr = (uintptr_t)slot, .length = (uint32_t)x->slot_bytes, .lkey = x->mr->lkey},
        {.addr = (uintptr_t)into, .length = (uint32_t)len, .lkey = mr ? mr->lkey : 0}};
    if (into)
        sge[0].length = (uint32_t)sizeof(struct rg_hdr);
    if (rg_vpost_recv_sge(x->qp, rg__wrid(RG_WR_RECV, c->tag, (unsigned)x->idx, (uint32_t)seq), sge,
                          into ? 2 : 1, &c->err))
        return rg__fail(c, c->err.st);
    rg__ph_add(c, RG_PH_POST, t0);
    x->recv_into[seq % c->slots] = into;
    x->recv_posted++;
    c->into_recvs += into != NULL;
    return RG_OK;
}

static uint64_t *credit_src(struct rg_comm *c, struct rg_conn *x, uint64_t n)
{
    return rg__mailbox(c, x) + 2 + 2 * (n % RG_CREDIT_SRC);
}

/* A count the peer sent, low 32 bits: taken when ahead of the one held (by less than 2^31). */
static void take_count(struct rg_conn *x, uint32_t v)
{
    uint32_t ahead = v - (uint32_t)x->peer_credit;
    if (ahead && ahead < 1u << 31)
        x->peer_credit += ahead;
}

/*
 * The count in an arrived message's header, taken at its completion rather than when the plan
 * reaches it: a sender must never wait for a credit that sits unread in its own receive
 * queue. A header that fails its checks is left to rg__peek, which names what is wrong.
 */
static void header_credit(struct rg_comm *c, struct rg_conn *x, uint64_t seq, uint32_t got)
{
    struct rg_hdr h;
    if (got < sizeof(h))
        return;
    memcpy(&h, rg__recv_slot(x, c->slots, seq), sizeof(h));
    if (h.magic == RG_HDR_MAGIC && h.credit_chk == (uint32_t)~h.credit)
        take_count(x, h.credit);
}

/* The mailbox holds {count, ~count}; a torn or stale pair keeps the last good value. */
static void read_credit(struct rg_comm *c, struct rg_conn *x)
{
    volatile uint64_t *m = rg__mailbox(c, x);
    uint64_t v = m[0], w = m[1];
    if (w == ~v && v > x->peer_credit)
        x->peer_credit = v;
}

/*
 * Writes the receive count into the peer's mailbox, unless every credit source is in flight
 * (a completion then brings rg__progress back here).
 */
rg_status rg__write_credit(struct rg_comm *c, struct rg_conn *x)
{
    if (x->credit_writes - x->credit_done >= RG_CREDIT_SRC)
        return RG_OK;
    /* Each write has its own source slot, untouched until its completion. */
    uint64_t *src = credit_src(c, x, x->credit_writes);
    src[0] = x->recv_posted;
    src[1] = ~x->recv_posted;
    struct ibv_sge sge = {.addr = (uintptr_t)src, .length = 16, .lkey = x->mr->lkey};
    struct ibv_send_wr wr = {
        .wr_id = rg__wrid(RG_WR_CREDIT, c->tag, (unsigned)x->idx, (uint32_t)x->credit_writes),
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_RDMA_WRITE,
        .send_flags = IBV_SEND_SIGNALED,
        .wr.rdma = {.remote_addr = x->remote_mailbox, .rkey = x->remote_rkey},
    };
    uint64_t t0 = rg__ph_start(c);
    if (rg_vpost_send_wr(x->qp, &wr, &c->err))
        return rg__fail(c, c->err.st);
    rg__ph_add(c, RG_PH_POST, t0);
    x->credit_writes++;
    x->credit_granted = x->recv_posted;
    return RG_OK;
}

/*
 * Credits go back in batches of credit_batch (RG_CREDIT_BATCH, default half the slots): a
 * credit write costs rxe as much as a small message, and one per message doubled the traffic
 * of small calls. A sender blocked on a connection has had every message granted except at
 * most credit_batch - 1 the receiver consumed, so at least slots - credit_batch + 1 >= 1 of
 * its messages wait at the receiver, whose plan consumes them in step order; the plans need
 * only one message in flight per connection to make progress (it_coll runs them with two
 * slots and a batch of two). What batching takes away is eagerness: an rg_send may now need
 * the peer's rg_recv once more than slots - credit_batch + 1 chunks are outstanding.
 *
 * With fewer receives kept between calls than a batch (RG_RECV_KEEP), the peer can use up
 * every credit while this side consumes all it sent: both would wait, for a message and for
 * a batch that never fills. So a starved peer gets what is posted at once, batch or not.
 * Where keep >= batch the peer is never starved with fewer than a batch ungranted, and
 * nothing changes.
 */
static rg_status grant_credit(struct rg_comm *c, struct rg_conn *x)
{
    uint64_t ungranted = x->recv_posted - x->credit_granted;
    if (ungranted >= c->credit_batch || (ungranted && rg__peer_starved(x)))
        return rg__write_credit(c, x);
    return RG_OK;
}

rg_status rg__grant_credit(struct rg_comm *c, struct rg_conn *x)
{
    return grant_credit(c, x);
}

/* Out of line on purpose: `make bench` counts completions by this function's calls under
 * callgrind (one call per completion costs a few instructions against hundreds). */
__attribute__((noinline)) static rg_status on_completion(struct rg_comm *c, const struct ibv_wc *wc)
{
    unsigned kind = rg__wrid_kind(wc->wr_id), idx = rg__wrid_conn(wc->wr_id);
    uint32_t seq = rg__wrid_seq(wc->wr_id);
    if (rg__wrid_tag(wc->wr_id) != c->tag || idx >= (unsigned)c->nconns) {
        rg__err_set(&c->err, RG_ERR_PROTOCOL,
                    "rank %d: completion with wr_id 0x%llx belongs to no connection of this "
                    "communicator",
                    c->rank, (unsigned long long)wc->wr_id);
        return rg__fail(c, RG_ERR_PROTOCOL);
    }
    struct rg_conn *x = &c->conns[idx];
    uint64_t want;
    switch (kind) {
    case RG_WR_RECV:
        want = x->recv_arrived;
        if (seq != (uint32_t)want)
            break;
        x->recv_len[want % c->slots] = wc->byte_len;
        header_credit(c, x, want, wc->byte_len);
        x->recv_arrived++;
        return RG_OK;
    case RG_WR_SEND:
        want = x->send_done;
        if (seq != (uint32_t)want)
            break;
        x->send_done++;
        return RG_OK;
    case RG_WR_CREDIT:
        want = x->credit_done;
        if (seq != (uint32_t)want)
            break;
        x->credit_done++;
        return RG_OK;
    default:
        want = 0;
        break;
    }
    rg__err_set(&c->err, RG_ERR_PROTOCOL,
                "rank %d: %s rank %d rail %d (qp 0x%x): completion %u arrived where %llu was "
                "expected",
                c->rank, kind_name(kind), x->peer, x->rail, x->qp->qp_num, seq,
                (unsigned long long)want);
    return rg__fail(c, RG_ERR_PROTOCOL);
}

/*
 * A progress pass that reaped nothing. Out of line on purpose, as on_completion: `make bench`
 * counts the idle passes by its calls under callgrind, so that the polls that found
 * something, and what waiting cost, are counted rather than fitted.
 */
__attribute__((noinline)) static rg_status progress_idle(struct rg_comm *c, double *deadline,
                                                         uint64_t t0)
{
    /*
     * Idle. After poll_yield empty passes in a row, give the CPU away on every pass: ranks
     * that outnumber the cores (CI, emulators) otherwise spin away the time slice a peer
     * needs to send what this rank waits for. With a core per rank the yield returns at once.
     */
    if (c->poll_yield && c->idle >= c->poll_yield)
        sched_yield();
    /*
     * Look at the clock and the side channel now and then, not on every pass: each is a
     * system call somewhere (the clock wherever the TSC is not trusted, as in a TCG guest).
     * A deadline of 0 starts now: a call that never waits never reads the clock.
     */
    if (++c->idle % 64 == 0) {
        if (c->idle % 256 == 0 && rg__sc_check(c->sc, &c->err))
            return rg__fail(c, c->err.st);
        double now = rg__now();
        if (*deadline == 0)
            *deadline = now + c->timeout_s;
        if (now > *deadline) {
            /* Say where every connection stood: sends posted/done/credit, receives
             * posted/arrived/consumed. That is what tells a lost message from a slow peer. */
            char where[200] = "";
            size_t used = 0;
            for (int i = 0; i < c->nconns && used + 40 < sizeof(where); i++) {
                char st[160];
                conn_state(&c->conns[i], st, sizeof(st));
                int w = snprintf(where + used, sizeof(where) - used, " [%s]", st);
                if (w < 0 || (size_t)w >= sizeof(where) - used)
                    break;
                used += (size_t)w;
            }
            char whom[96] = "";
            static const char *const wait_names[] = {
                [RG_WAIT_NONE] = "progress",
                [RG_WAIT_DATA] = "its data",
                [RG_WAIT_CREDIT] = "a credit to send to it",
                [RG_WAIT_SENDS] = "its receipt of a send (a completion)",
            };
            if (c->wait_peer >= 0)
                snprintf(whom, sizeof(whom), " waiting on rank %d for %s;", c->wait_peer,
                         wait_names[c->wait_kind]);
            rg__err_set(&c->err, RG_ERR_TIMEOUT,
                        "rank %d: operation %u did not finish within "
                        "%.1f s;%s%s",
                        c->rank, c->op_seq, c->timeout_s, whom, where);
            return rg__fail(c, RG_ERR_TIMEOUT);
        }
    }
    rg__ph_add(c, rg__ph_wait(c), t0);
    return RG_OK;
}

rg_status rg__progress(struct rg_comm *c, double *deadline)
{
    struct ibv_wc wc[32];
    int any = 0;
    if (c->poisoned)
        return c->err.st;
    uint64_t t0 = rg__ph_start(c);
    for (int d = 0; d < c->ndevs; d++) {
        int n = rg_vpoll(c->devs[d].cq, 32, wc, &c->poller);
        if (n < 0)
            return rg__fail(c, c->err.st);
        for (int i = 0; i < n; i++)
            if (on_completion(c, &wc[i]))
                return c->err.st;
        any |= n;
    }
    if (!any)
        return progress_idle(c, deadline, t0);
    rg__ph_add(c, RG_PH_POLL, t0);
    /* A credit left ungranted by rg__release waits for a credit write to complete, so only a
     * pass that saw completions can have new ones to grant. */
    for (int i = 0; i < c->nconns; i++)
        if (grant_credit(c, &c->conns[i]))
            return c->err.st;
    c->idle = 0;
    return RG_OK;
}

int rg__can_send(struct rg_comm *c, struct rg_conn *x)
{
    if (x->send_posted - x->send_done >= c->slots)
        return 0;
    if (x->send_posted >= x->peer_credit)
        read_credit(c, x);
    return x->send_posted < x->peer_credit;
}

rg_status rg__send(struct rg_comm *c, struct rg_conn *x, int kind, const void *p, size_t len,
                   const struct ibv_mr *mr)
{
    uint8_t *slot = rg__send_slot(x, c->slots, x->send_posted);
    /* The header carries this connection's receive count: a credit without a write. */
    uint32_t credit = (uint32_t)x->recv_posted;
    struct rg_hdr h = {RG_HDR_MAGIC, (uint8_t)kind, (uint8_t)x->rail, x->tx_seq,
                       c->op_seq,    (uint32_t)len, credit,           ~credit};
    /* Header and payload in the slot, or the header there and the payload in place. */
    struct ibv_sge sge[2] = {
        {.addr = (uintptr_t)slot, .length = (uint32_t)(sizeof(h) + len), .lkey = x->mr->lkey},
        {.addr = (uintptr_t)p, .length = (uint32_t)len, .lkey = mr ? mr->lkey : 0}};
    memcpy(slot, &h, sizeof(h));
    uint64_t t0 = rg__ph_start(c);
    if (mr) {
        sge[0].length = (uint32_t)sizeof(h);
        c->zcopy_sends++;
    } else if (len) {
        memcpy(slot + sizeof(h), p, len);
        rg__ph_add(c, RG_PH_SLOT_IN, t0);
        t0 = rg__ph_start(c);
    }
    if (rg_vpost_send(x->qp,
                      rg__wrid(RG_WR_SEND, c->tag, (unsigned)x->idx, (uint32_t)x->send_posted), sge,
                      mr ? 2 : 1, &c->err))
        return rg__fail(c, c->err.st);
    rg__ph_add(c, RG_PH_POST, t0);
    x->send_posted++;
    x->tx_seq++;
    x->credit_granted = x->recv_posted;
    return RG_OK;
}

int rg__peek(struct rg_comm *c, struct rg_conn *x, int kind, const void **p, size_t *len)
{
    if (x->recv_consumed == x->recv_arrived)
        return 0;
    const uint8_t *slot = rg__recv_slot(x, c->slots, x->recv_consumed);
    uint32_t got = x->recv_len[x->recv_consumed % c->slots];
    struct rg_hdr h;
    const char *what = NULL;
    if (got < sizeof(h)) {
        what = "shorter than its header";
        memset(&h, 0, sizeof(h));
    } else {
        memcpy(&h, slot, sizeof(h));
        if (h.magic != RG_HDR_MAGIC)
            what = "bad magic";
        else if (h.seq != x->rx_seq)
            what = "out of sequence (a message was lost)";
        else if (h.kind != kind)
            what = "of the wrong kind";
        else if (h.rail != (uint8_t)x->rail)
            what = "from another rail";
        else if (h.len != got - sizeof(h))
            what = "of inconsistent length";
        else if (h.credit_chk != (uint32_t)~h.credit)
            what = "with a damaged credit count";
    }
    if (what) {
        rg__err_set(&c->err, RG_ERR_PROTOCOL,
                    "rank %d: recv from rank %d rail %d (qp 0x%x): message %s: seq %u (expected "
                    "%u), op %u (expected %u), kind %u, %u bytes",
                    c->rank, x->peer, x->rail, x->qp->qp_num, what, h.seq, x->rx_seq, h.op,
                    c->op_seq, h.kind, got);
        return rg__fail(c, RG_ERR_PROTOCOL);
    }
    *p = slot + sizeof(h);
    *len = h.len;
    return 1;
}

rg_status rg__release(struct rg_comm *c, struct rg_conn *x)
{
    return rg__release_into(c, x, NULL, 0, NULL);
}

rg_status rg__release_into(struct rg_comm *c, struct rg_conn *x, uint8_t *into, size_t len,
                           const struct ibv_mr *mr)
{
    x->recv_into[x->recv_consumed % c->slots] = NULL;
    x->recv_consumed++;
    x->rx_seq++;
    if (rg__post_recv_into(c, x, into, len, mr))
        return c->err.st;
    return grant_credit(c, x);
}

rg_status rg__release_owed(struct rg_comm *c, struct rg_conn *x)
{
    x->recv_into[x->recv_consumed % c->slots] = NULL;
    x->recv_consumed++;
    x->rx_seq++;
    x->recv_owed++;
    /* Nothing posted, but the message consumed may be the last the peer had a credit for. */
    return grant_credit(c, x);
}

rg_status rg__drain_sends(struct rg_comm *c, double *deadline)
{
    for (;;) {
        int busy = 0;
        for (int i = 0; i < c->nconns; i++)
            if (c->conns[i].send_posted != c->conns[i].send_done && !busy++)
                rg__waiting(c, c->conns[i].peer, RG_WAIT_SENDS);
        if (!busy)
            return RG_OK;
        if (rg__progress(c, deadline))
            return c->err.st;
    }
}

void rg__quiesce(struct rg_comm *c)
{
    int n = 0;
    for (int i = 0; i < c->nconns; i++) {
        struct rg_conn *x = &c->conns[i];
        int into = 0; /* a receive posted into the caller's memory and not yet consumed */
        for (uint64_t q = x->recv_consumed; q < x->recv_posted && !into; q++)
            into = x->recv_into[q % c->slots] != NULL;
        if (x->qp && (x->send_posted != x->send_done || into)) {
            /* Once ibv_destroy_qp returns, the device touches none of its work requests'
             * memory. The counters stay as they were, for RG_DEBUG's report. */
            int rc = rg_vqp_destroy(x->qp);
            if (rc) {
                /* Nothing else stops the device; say so, whatever RG_DEBUG says. */
                fprintf(stderr,
                        "railguard: rank %d: ibv_destroy_qp(qp 0x%x) failed: %s; a send may "
                        "still read the caller's buffer, a receive write it\n",
                        c->rank, x->qp->qp_num, strerror(rc));
                continue; /* comm_free tries again */
            }
            x->qp = NULL;
            n++;
        }
    }
    if (n && c->debug)
        fprintf(stderr,
                "rank %d op %u: tore down %d connection(s) with sends in flight or receives "
                "posted after a call that used the caller's memory in place failed\n",
                c->rank, c->op_seq, n);
}
