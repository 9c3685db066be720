/* SPDX-License-Identifier: MIT */
/*
 * The caller's memory in place (rg_coll.h): which sends of a plan go to the wire from the
 * caller's pages, which receives land in its output without a slot's copy, the registrations
 * that allows for one call, and the cursor that tells which message a receive being posted
 * will take. rg_coll_run.c runs the plan; rg_engine.c posts what this file decides.
 */
#include "rg_coll.h"

#include <stdint.h>
#include <string.h>

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

/*
 * May step t of direction d receive in place? Only a copy (a reduction reads the slot), of a
 * block at least RG_ZCOPY_MIN, that nothing else of the call may touch before its data lands:
 * no send from work and no other receive overlapping it in this direction up to step t, or in
 * the other direction at all; a later step of this direction may send it only as the same
 * block forwarded (its dep at t or after, so each chunk leaves after it arrived). A receive
 * posted in place belongs to the device from the moment it is posted, messages ahead of its
 * data: the shim's ownership sanitizer even fills it with poison then. The one rule keeps the
 * device and the sanitizer off anything the call still reads or writes.
 */
static int may_land(const struct plan *p, int d, int t)
{
    const struct step *s = &p->st[d][t];
    if (s->recv_peer < 0 || s->act != ACT_COPY || s->recv_len * p->esz < p->c->zcopy_min)
        return 0;
    for (int d2 = 0; d2 < p->ndirs; d2++)
        for (int t2 = 0; t2 < p->nsteps[d2]; t2++) {
            const struct step *o = &p->st[d2][t2];
            int before = d2 != d || t2 <= t, mine = d2 == d && t2 == t;
            int sends = o->send_peer >= 0 && rg__send_base(p, o) == p->work &&
                        overlap(s->recv_off, s->recv_len, o->send_off, o->send_len);
            if (sends &&
                (before || o->dep < t || o->send_off != s->recv_off || o->send_len != s->recv_len))
                return 0;
            /* A later receive may rewrite it (or reduce into it) chunk by chunk after it,
             * the receive cursor taking each rail's steps in order: the same block only. */
            if (!mine && o->recv_peer >= 0 &&
                overlap(s->recv_off, s->recv_len, o->recv_off, o->recv_len) &&
                (before || o->recv_off != s->recv_off || o->recv_len != s->recv_len))
                return 0;
        }
    return 1;
}

/* The registered region [a, a + len) lies in (a writable one when asked): the caller's, or
 * one made for this call. */
static struct rg_mem *region_of(struct rg_comm *c, const uint8_t *a, size_t len, int ncall,
                                int writable)
{
    for (int i = 0; i < RG_MEM_MAX + ncall; i++) {
        struct rg_mem *m = i < RG_MEM_MAX ? c->mem[i] : &c->call_mem[i - RG_MEM_MAX];
        if (m && (!writable || m->writable) && a >= m->base && len <= m->len &&
            (size_t)(a - m->base) <= m->len - len)
            return m;
    }
    return NULL;
}

/* Registers [a, a + len) on every device as call region ncall; 0, or -1 if a device refused. */
static int register_span(struct rg_comm *c, uint8_t *a, size_t len, int writable, int ncall)
{
    struct rg_mem *m = &c->call_mem[ncall];
    struct rg_err e;
    memset(m->mr, 0, sizeof(m->mr));
    m->base = a;
    m->len = len;
    m->writable = writable;
    int d = 0;
    /* Read-only unless receives land there: a const input's pages register too. */
    while (d < c->ndevs &&
           !rg_vmr_reg(&c->devs[d].v, a, len, writable ? IBV_ACCESS_LOCAL_WRITE : 0, &m->mr[d], &e))
        d++;
    if (d == c->ndevs) {
        c->auto_regs++;
        return 0;
    }
    while (d-- > 0)
        rg_vmr_dereg(m->mr[d]);
    c->auto_reg_fails++;
    return -1;
}

/*
 * Zero-copy without rg_mem_register (RG_ZCOPY_AUTO): a buffer this call sends from and
 * receives into in place at least that many bytes, and no registered region holds, is
 * registered on every device for the call alone and deregistered when it ends -- after every
 * send completed and every receive landed, or after the connections were torn down
 * (rg__coll_run), so the device touches no page the caller has back. In the TCG guest
 * registering and deregistering 1 MiB took 205 us against 287 us to copy it, 4 MiB 248 against
 * 1289 us, 32 KiB 117 against 60 us: a copy costs less only below a few hundred KiB. Nothing
 * is kept from one call to the next: a cache would one day send from pages the caller freed
 * and the allocator handed out again at the same address, unless every free were watched. A
 * device that refuses (a memlock limit) leaves the call to its staging copies, counted in
 * auto_reg_fails; the call itself is no worse for it.
 */
int rg__zc_prepare(struct plan *p)
{
    struct rg_comm *c = p->c;
    const uint8_t *bases[2] = {p->work, p->in};
    int ncall = 0;
    /* Every call comes here, the 8-byte one too: with no caller's region and fewer bytes
     * moved than RG_ZCOPY_AUTO, nothing below can apply, and the plan is left as built. */
    size_t moved = 0;
    for (int d = 0; d < p->ndirs; d++)
        for (int t = 0; t < p->nsteps[d]; t++)
            moved += p->st[d][t].send_len + p->st[d][t].recv_len;
    if (!c->nmem && (!c->zcopy_auto || moved * p->esz < c->zcopy_auto))
        return 0;
    for (int d = 0; d < p->ndirs; d++)
        for (int t = 0; t < p->nsteps[d]; t++)
            p->st[d][t].into = may_land(p, d, t);
    for (int b = 0; b < 2; b++) {
        size_t lo = SIZE_MAX, hi = 0, total = 0, got = 0;
        int bare = 0; /* some of it in no region fit for its use */
        for (int d = 0; d < p->ndirs && bases[b]; d++)
            for (int t = 0; t < p->nsteps[d]; t++) {
                const struct step *s = &p->st[d][t];
                size_t off[2], len[2] = {0, 0};
                if (s->send_peer >= 0 && s->send_len && rg__send_base(p, s) == bases[b]) {
                    off[0] = s->send_off;
                    len[0] = s->send_len;
                    bare |= !region_of(c, bases[b] + off[0] * p->esz, len[0] * p->esz, 0, 0);
                }
                if (s->into && bases[b] == p->work) {
                    off[1] = s->recv_off;
                    len[1] = s->recv_len;
                    got += len[1];
                    bare |= !region_of(c, bases[b] + off[1] * p->esz, len[1] * p->esz, 0, 1);
                }
                for (int i = 0; i < 2; i++)
                    if (len[i]) {
                        lo = off[i] < lo ? off[i] : lo;
                        hi = off[i] + len[i] > hi ? off[i] + len[i] : hi;
                        total += len[i];
                    }
            }
        if (!bare || !c->zcopy_auto || total * p->esz < c->zcopy_auto)
            continue;
        uint64_t t0 = rg__ph_start(c);
        if (!register_span(c, (uint8_t *)bases[b] + lo * p->esz, (hi - lo) * p->esz, got > 0,
                           ncall))
            ncall++;
        rg__ph_add(c, RG_PH_REG, t0);
    }
    /* Which sends go from registered memory in place: see rg_mem_register in railguard.h. */
    for (int d = 0; d < p->ndirs; d++)
        for (int t = 0; t < p->nsteps[d]; t++) {
            struct step *s = &p->st[d][t];
            const uint8_t *a = rg__send_base(p, s) + s->send_off * p->esz;
            size_t len = s->send_len * p->esz;
            s->zc = NULL;
            if (s->into) {
                struct rg_mem *m =
                    region_of(c, p->work + s->recv_off * p->esz, s->recv_len * p->esz, ncall, 1);
                /* One region for every in-place receive: the cursor posts into it. */
                if (m && (!p->into_mem || p->into_mem == m))
                    p->into_mem = m;
                else
                    s->into = 0;
            }
            if (s->send_peer < 0 || !len || len < c->zcopy_min)
                continue;
            s->zc = region_of(c, a, len, ncall, 0);
            if (s->zc && rewritten(p, d, t))
                s->zc = NULL;
            p->zcopy |= s->zc != NULL;
        }
    return ncall;
}

void rg__zc_finish(struct plan *p, int ncall)
{
    struct rg_comm *c = p->c;
    for (int i = 0; i < c->nconns && p->into_mem; i++) /* only rg__into_start set them */
        c->conns[i].ip.on = 0;
    uint64_t t0 = rg__ph_start(c);
    for (int i = 0; i < ncall; i++)
        for (int d = 0; d < c->ndevs; d++) {
            rg_vmr_dereg(c->call_mem[i].mr[d]);
            c->call_mem[i].mr[d] = NULL;
        }
    if (ncall)
        rg__ph_add(c, RG_PH_REG, t0);
}

/* The connection's cursor to its next message of this call with a step to take it, or to
 * the end (t == nsteps): steps that receive from its peer, chunks on its rail. */
static void into_settle(const struct plan *p, struct rg_conn *x)
{
    while (x->ip.t < p->nsteps[x->ip.d]) {
        const struct step *s = &p->st[x->ip.d][x->ip.t];
        if (s->recv_peer == x->peer &&
            x->ip.j < rg__nchunks(s->recv_len, p->esz, p->c->chunk_bytes))
            return;
        x->ip.t++;
        x->ip.j = (size_t)x->rail;
    }
}

/*
 * A connection's messages arrive in the order its peer sends them, which is the order this
 * rank's plan receives them (the plans agree, or the headers say so), and a receive queue
 * hands them out in the order receives were posted. So the receive posted as the
 * connection's m-th of this call takes the call's m-th message on it: the cursor starts past
 * the receives already posted (into slots, before the call knew its buffers) and moves one
 * message a post.
 */
void rg__into_start(struct plan *p)
{
    struct rg_comm *c = p->c;
    for (int i = 0; i < c->nconns && p->into_mem; i++) {
        struct rg_conn *x = &c->conns[i];
        x->ip.on = 0;
        if (x->rail >= p->nrails)
            continue;
        for (int d = 0; d < p->ndirs && !x->ip.on; d++)
            for (int t = 0; t < p->nsteps[d] && !x->ip.on; t++)
                if (p->st[d][t].recv_peer == x->peer) {
                    x->ip.on = 1;
                    x->ip.d = d;
                }
        if (!x->ip.on)
            continue;
        x->ip.t = 0;
        x->ip.j = (size_t)x->rail;
        into_settle(p, x);
        for (uint64_t q = x->recv_consumed; q < x->recv_posted; q++) {
            x->ip.j += (size_t)p->nrails;
            into_settle(p, x);
        }
    }
}

/* Has x's cursor no message of this call left for a receive (or none at all)? */
static int cursor_done(const struct plan *p, const struct rg_conn *x)
{
    return !x->ip.on || x->ip.t >= p->nsteps[x->ip.d];
}

/* Where the receive posted next on x lands: its payload's place in work, or NULL (a slot). */
uint8_t *rg__into_next(struct plan *p, struct rg_conn *x, size_t *len, const struct ibv_mr **mr)
{
    if (cursor_done(p, x))
        return NULL;
    const struct step *s = &p->st[x->ip.d][x->ip.t];
    uint8_t *into = NULL;
    if (s->into) {
        size_t off, n;
        rg__chunk(s->recv_len, p->esz, p->c->chunk_bytes, x->ip.j, &off, &n);
        into = p->work + (s->recv_off + off) * p->esz;
        *len = n * p->esz;
        *mr = p->into_mem->mr[x->dev - p->c->devs];
    }
    x->ip.j += (size_t)p->nrails;
    into_settle(p, x);
    return into;
}

int rg__into_past(const struct plan *p, const struct rg_conn *x)
{
    return p->into_mem && x->ip.on && cursor_done(p, x);
}

/*
 * The receives the last call left unposted (rg_coll_run.c), posted where this call's cursors
 * say: in place when its messages have a place in the output. Their count rides on this
 * call's first send to the peer; a peer still holding a credit sends its first message and
 * the progress loop grants the rest. A peer the last call left starved (keep below the credit
 * batch) with nothing ungranted then got no credit at that consume; the receives posted here
 * are new credit, granted at once, or it would wait for a send that may never come (a call
 * that only receives from it sends nothing to carry the count). A call that lands in
 * place and has fewer messages on x than receives are posted leaves the rest owed: posted
 * into slots now, they would sit ahead of the next call's messages too, and calls shorter
 * than the slots would never land in place. A call that lands nothing in place posts them
 * all, as before keep existed.
 */
rg_status rg__post_owed(struct plan *p)
{
    struct rg_comm *c = p->c;
    for (int i = 0; i < c->nconns; i++) {
        struct rg_conn *x = &c->conns[i];
        for (; x->recv_owed; x->recv_owed--) {
            if (p->into_mem && cursor_done(p, x) &&
                x->recv_posted - x->recv_consumed >= c->recv_keep)
                break;
            size_t len = 0;
            const struct ibv_mr *mr = NULL;
            uint8_t *into = rg__into_next(p, x, &len, &mr);
            if (rg__post_recv_into(c, x, into, len, mr))
                return c->err.st;
        }
        if (rg__peer_starved(x) && rg__grant_credit(c, x))
            return c->err.st;
    }
    return RG_OK;
}
