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

static int overlap(size_t a, size_t alen, size_t b, size_t blen)
{
    return alen && blen && a < b + blen && b < a + alen;
}

/*
 * Does any receive that may still land after step t of direction d starts sending write into
 * its send block? In this direction that is step t itself and every later one (an earlier
 * receive into the block has happened before the block is sent: that is the plan's dep
 * rule, zero-copy or not); in the other direction, which runs alongside, any step.
 */
static int rewritten(const struct plan *p, int d, int t)
{
    const struct step *s = &p->st[d][t];
    if (rg__send_base(p, s) != p->work)
        return 0; /* the input, which no receive writes (rg_all_reduce keeps it apart) */
    for (int d2 = 0; d2 < p->ndirs; d2++)
        for (int t2 = d2 == d ? t : 0; t2 < p->nsteps[d2]; t2++) {
            const struct step *o = &p->st[d2][t2];
            if (o->recv_peer >= 0 && overlap(s->send_off, s->send_len, o->recv_off, o->recv_len))
                return 1;
        }
    return 0;
}

/* The registered region [a, a + len) lies in: the caller's, or one made for this call. */
static struct rg_mem *region_of(struct rg_comm *c, const uint8_t *a, size_t len, int ncall)
{
    for (int i = 0; i < RG_MEM_MAX + ncall; i++) {
        struct rg_mem *m = i < RG_MEM_MAX ? c->mem[i] : &c->call_mem[i - RG_MEM_MAX];
        if (m && a >= m->base && len <= m->len && (size_t)(a - m->base) <= m->len - len)
            return m;
    }
    return NULL;
}

/*
 * Zero-copy without rg_mem_register (RG_ZCOPY_AUTO): a buffer this call sends at least that
 * many bytes from, and no registered region holds, is registered on every device for the call
 * alone and deregistered when it ends -- after every send completed, or after the connections
 * were torn down (rg__coll_run), so the device reads no page the caller has back. In the TCG
 * guest registering and deregistering 1 MiB took 205 us against 287 us to copy it, 4 MiB 248
 * against 1289 us, 32 KiB 117 against 60 us: a copy costs less only below a few hundred KiB.
 * Nothing is kept from one call to the next: a cache would one day send from pages the caller
 * freed and the allocator handed out again at the same address, unless every free were
 * watched. A device that refuses (a memlock limit) leaves the call to its staging copies,
 * counted in auto_reg_fails; the call itself is no worse for it.
 */
static int register_for_call(struct plan *p)
{
    struct rg_comm *c = p->c;
    const uint8_t *bases[2] = {p->work, p->in};
    int ncall = 0;
    for (int b = 0; b < 2 && c->zcopy_auto; b++) {
        size_t lo = SIZE_MAX, hi = 0, total = 0;
        for (int d = 0; d < p->ndirs; d++)
            for (int t = 0; t < p->nsteps[d]; t++) {
                const struct step *s = &p->st[d][t];
                if (s->send_peer < 0 || !s->send_len || !bases[b] ||
                    rg__send_base(p, s) != bases[b])
                    continue;
                lo = s->send_off < lo ? s->send_off : lo;
                hi = s->send_off + s->send_len > hi ? s->send_off + s->send_len : hi;
                total += s->send_len;
            }
        if (!total || total * p->esz < c->zcopy_auto)
            continue;
        uint8_t *a = (uint8_t *)bases[b] + lo * p->esz;
        size_t len = (hi - lo) * p->esz;
        if (region_of(c, a, len, ncall))
            continue; /* the caller's registration holds it already */
        uint64_t t0 = rg__ph_start(c);
        struct rg_mem *m = &c->call_mem[ncall];
        struct rg_err e;
        memset(m->mr, 0, sizeof(m->mr));
        m->base = a;
        m->len = len;
        int d = 0;
        /* Read by the local device only: a const input's pages register too. */
        while (d < c->ndevs && !rg_vmr_reg(&c->devs[d].v, a, len, 0, &m->mr[d], &e))
            d++;
        if (d == c->ndevs) {
            ncall++;
            c->auto_regs++;
        } else {
            while (d-- > 0)
                rg_vmr_dereg(m->mr[d]);
            c->auto_reg_fails++;
        }
        rg__ph_add(c, RG_PH_REG, t0);
    }
    return ncall;
}

static void deregister_for_call(struct rg_comm *c, int ncall)
{
    uint64_t t0 = rg__ph_start(c);
    for (int i = 0; i < ncall; i++)
        for (int d = 0; d < c->ndevs; d++) {
            rg_vmr_dereg(c->call_mem[i].mr[d]);
            c->call_mem[i].mr[d] = NULL;
        }
    if (ncall)
        rg__ph_add(c, RG_PH_REG, t0);
}

/* Which sends go from registered memory in place: see rg_mem_register in railguard.h. */
static void plan_zcopy(struct plan *p, int ncall)
{
    struct rg_comm *c = p->c;
    for (int d = 0; d < p->ndirs; d++)
        for (int t = 0; t < p->nsteps[d]; t++) {
            struct step *s = &p->st[d][t];
            const uint8_t *a = rg__send_base(p, s) + s->send_off * p->esz;
            size_t len = s->send_len * p->esz;
            s->zc = NULL;
            if (s->send_peer < 0 || !len || len < c->zcopy_min)
                continue;
            s->zc = region_of(c, a, len, ncall);
            if (s->zc && rewritten(p, d, t))
                s->zc = NULL;
            p->zcopy |= s->zc != NULL;
        }
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
                uint64_t t0 = rg__ph_start(c);
                if (s->act == ACT_REDUCE) {
                    const uint8_t *mine =
                        s->reduce_in && p->in ? p->in + (s->recv_off + off) * p->esz : dst;
                    rg__reduce_to(dst, mine, data, n, p->dt, p->op);
                    rg__ph_add(c, RG_PH_REDUCE, t0);
                } else {
                    memcpy(dst, data, len);
                    rg__ph_add(c, RG_PH_SLOT_OUT, t0);
                }
                if (rg__release(c, x))
                    return c->err.st;
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
    int ncall = register_for_call(p);
    if (p->c->nmem || ncall)
        plan_zcopy(p, ncall);
    p->c->last_algo = p->algo;
    p->c->last_rails = p->nrails;
    st = run_steps(p);
    if (st && p->zcopy && p->c->poisoned)
        rg__quiesce(p->c);
    deregister_for_call(p->c, ncall);
    return st;
}
