/* SPDX-License-Identifier: MIT */
/*
 * The engine every collective's plan runs on (rg_coll.h). Blocks are cut into chunks of at
 * most chunk_bytes, and chunk j travels on rail j % nrails. A step marked `dep` forwards what
 * the step before it received, so its chunk j leaves only after that step's chunk j arrived
 * on the same rail: rails are independent pipelines, and a slow wire delays only its own
 * chunks.
 */
#include "rg_coll.h"
#include "rg_reduce.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over the (step, chunk) pairs one rail of one direction carries, on the send or the
 * receive side. */
struct cursor {
    int d;
    int t;
    size_t j;
};

static size_t side_len(const struct step *s, int send)
{
    return send ? s->send_len : s->recv_len;
}

static int has_side(const struct step *s, int send)
{
    return send ? s->send_peer >= 0 : s->recv_peer >= 0;
}

/* Moves cur to the first valid (t, j) at or after it for rail k; t == nsteps at the end. */
static void settle(const struct plan *p, int send, int k, struct cursor *cur)
{
    while (cur->t < p->nsteps[cur->d]) {
        const struct step *s = &p->st[cur->d][cur->t];
        if (has_side(s, send) && cur->j < rg__nchunks(side_len(s, send), p->esz, p->c->chunk_bytes))
            return;
        cur->t++;
        cur->j = (size_t)k;
    }
}

static void advance(const struct plan *p, int send, int k, struct cursor *cur)
{
    cur->j += (size_t)p->nrails;
    settle(p, send, k, cur);
}

static struct rg_conn *conn(struct rg_comm *c, int peer, int rail)
{
    return &c->conns[c->conn_of[peer][rail]];
}

static rg_status run_steps(struct plan *p)
{
    struct rg_comm *c = p->c;
    double deadline = 0; /* the communicator's timeout, from the first wait (rg__progress) */
    struct cursor snd[2 * RG_MAX_RAILS], rcv[2 * RG_MAX_RAILS];
    int nv = p->ndirs * p->nrails; /* (direction, rail) pipelines */

    for (int v = 0; v < nv; v++) {
        int k = v % p->nrails;
        snd[v] = (struct cursor){v / p->nrails, 0, (size_t)k};
        rcv[v] = (struct cursor){v / p->nrails, 0, (size_t)k};
        settle(p, 1, k, &snd[v]);
        settle(p, 0, k, &rcv[v]);
    }
    for (;;) {
        int pending = 0;
        rg__waiting(c, -1, RG_WAIT_NONE);
        for (int v = 0; v < nv; v++) {
            int k = v % p->nrails, d = v / p->nrails, nst = p->nsteps[d];
            /* Receive first: it frees slots, grants credits and unblocks forwarding. */
            while (rcv[v].t < nst) {
                const struct step *s = &p->st[d][rcv[v].t];
                struct rg_conn *x = conn(c, s->recv_peer, k);
                const void *data;
                size_t len, off, n;
                int r = rg__peek(c, x, RG_MSG_DATA, &data, &len);
                if (r < 0)
                    return c->err.st;
                if (r == 0) {
                    if (c->wait_peer < 0)
                        rg__waiting(c, x->peer, RG_WAIT_DATA);
                    break;
                }
                rg__chunk(s->recv_len, p->esz, c->chunk_bytes, rcv[v].j, &off, &n);
                if (len != n * p->esz) {
                    rg__err_set(&c->err, RG_ERR_PROTOCOL,
                                "rank %d: recv from rank %d rail %d (qp 0x%x): chunk %zu of step "
                                "%d has %zu bytes, expected %zu",
                                c->rank, x->peer, k, x->qp->qp_num, rcv[v].j, rcv[v].t, len,
                                n * p->esz);
                    return rg__fail(c, RG_ERR_PROTOCOL);
                }
                uint8_t *dst = p->work + (s->recv_off + off) * p->esz;
                const uint8_t *landed = x->recv_into[x->recv_consumed % c->slots];
                uint64_t t0 = rg__ph_start(c);
                if (landed) {
                    /* In place already (rg_coll_zc.c): it must be where this step wants it. */
                    if (landed != dst || s->act != ACT_COPY) {
                        rg__err_set(&c->err, RG_ERR_PROTOCOL,
                                    "rank %d: recv from rank %d rail %d (qp 0x%x): chunk %zu of "
                                    "step %d landed in place at offset %td, not its own %td",
                                    c->rank, x->peer, k, x->qp->qp_num, rcv[v].j, rcv[v].t,
                                    landed - p->work, dst - p->work);
                        return rg__fail(c, RG_ERR_PROTOCOL);
                    }
                } else if (s->act == ACT_REDUCE) {
                    const uint8_t *mine =
                        s->reduce_in && p->in ? p->in + (s->recv_off + off) * p->esz : dst;
                    rg__reduce_to(dst, mine, data, n, p->dt, p->op);
                    rg__ph_add(c, RG_PH_REDUCE, t0);
                } else {
                    memcpy(dst, data, len);
                    rg__ph_add(c, RG_PH_SLOT_OUT, t0);
                }
                size_t ilen = 0;
                const struct ibv_mr *imr = NULL;
                uint8_t *into = rg__into_next(p, x, &ilen, &imr);
                /*
                 * Past this call's last message on x, a receive posted now would land in a
                 * slot whatever the next call is; beyond recv_keep it is left to the next call,
                 * whose cursor can post it in place (rg__post_owed), so a large call's
                 * all-gather lands in the output from its first message, not its slots+1-th.
                 */
                if (!into && rg__into_past(p, x) &&
                    x->recv_posted - x->recv_consumed > c->recv_keep) {
                    if (rg__release_owed(c, x))
                        return c->err.st;
                } else if (rg__release_into(c, x, into, ilen, imr)) {
                    return c->err.st;
                }
                advance(p, 0, k, &rcv[v]);
            }
            while (snd[v].t < nst) {
                const struct step *s = &p->st[d][snd[v].t];
                /* A forwarded chunk must have arrived (and been reduced) first. The receive
                 * cursor walks steps in order, so steps before s->dep are complete too. */
                if (s->dep >= 0 &&
                    (rcv[v].t < s->dep || (rcv[v].t == s->dep && rcv[v].j <= snd[v].j)))
                    break;
                struct rg_conn *x = conn(c, s->send_peer, k);
                if (!rg__can_send(c, x)) {
                    if (c->wait_peer < 0)
                        rg__waiting(c, x->peer, RG_WAIT_CREDIT);
                    break;
                }
                size_t off, n;
                rg__chunk(s->send_len, p->esz, c->chunk_bytes, snd[v].j, &off, &n);
                if (rg__send(c, x, RG_MSG_DATA, rg__send_base(p, s) + (s->send_off + off) * p->esz,
                             n * p->esz, s->zc ? s->zc->mr[x->dev - c->devs] : NULL))
                    return c->err.st;
                advance(p, 1, k, &snd[v]);
            }
            pending |= snd[v].t < nst || rcv[v].t < nst;
        }
        if (!pending)
            break;
        if (rg__progress(c, &deadline))
            return c->err.st;
    }
    /* Every send of this operation completes inside it, so its errors are its own. */
    return rg__drain_sends(c, &deadline);
}

rg_status rg__coll_run(struct plan *p)
{
    rg_status st;
    int ncall = rg__zc_prepare(p);
    rg__into_start(p);
    p->c->last_algo = p->algo;
    p->c->last_rails = p->nrails;
    st = rg__post_owed(p);
    if (!st)
        st = run_steps(p);
    if (st && (p->zcopy || p->into_mem) && p->c->poisoned)
        rg__quiesce(p->c);
    rg__zc_finish(p, ncall);
    return st;
}
