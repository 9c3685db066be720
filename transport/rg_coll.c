/* SPDX-License-Identifier: MIT */
/*
 * The collectives, all driven by one pipelined engine. An operation is a list of steps; a
 * step sends one block of the work buffer to a peer and/or receives one block from a peer
 * (then copies or reduces it in place). Blocks are cut into chunks of at most chunk_bytes,
 * and chunk j travels on rail j % nrails. A step marked `dep` forwards what the step before it
 * received, so its chunk j leaves only after that step's chunk j arrived on the same rail:
 * rails are independent pipelines, and a slow wire delays only its own chunks.
 *
 * Ring all_reduce is reduce-scatter then all-gather, 2(n-1) steps with the segment each rank
 * ends up owning chosen so rank r owns segment r after the reduce-scatter.
 *
 * Mesh uses the same engine with a different plan: in step s every rank sends to r + s and
 * receives from r - s, so no step waits for another's data except the all-gather, which waits
 * for the rank's own segment to be complete. Sends race ahead as far as credits allow: fewer
 * hops in sequence than the ring's 2(n-1), for the same bytes per rank. Each segment is
 * reduced by one rank only, so every rank ends with the same bits.
 */
#include "rg_comm.h"
#include "rg_reduce.h"

#include <stdlib.h>
#include <string.h>

enum { ACT_COPY, ACT_REDUCE };

struct step {
    int send_peer, recv_peer;  /* -1: none */
    size_t send_off, send_len; /* elements of the work buffer */
    size_t recv_off, recv_len;
    int act;
    int dep; /* -1, or the step whose chunk j must have arrived before this one sends chunk j */
    struct rg_mem *zc; /* the registered region the send block lies in, or NULL: copy it */
};

struct plan {
    struct rg_comm *c;
    uint8_t *work;
    size_t esz;
    rg_dtype dt;
    rg_redop op;
    int nrails;
    rg_algo algo; /* what this call runs: RING or MESH, AUTO for send and recv */
    /*
     * One list of steps per direction. A bidirectional ring runs two independent rings, one
     * each way round; each (direction, rail) pair is a pipeline of its own, so a direction's
     * traffic on a rail never waits for the other's. Both use the same connections, each in
     * one sense only: clockwise data leaves on the right connection and arrives on the left.
     */
    int ndirs;
    int dir;   /* where add_step appends */
    int zcopy; /* some step sends from the caller's memory in place */
    int nsteps[2];
    struct step st[2][2 * RG_MAX_RANKS];
};

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
    for (int d2 = 0; d2 < p->ndirs; d2++)
        for (int t2 = d2 == d ? t : 0; t2 < p->nsteps[d2]; t2++) {
            const struct step *o = &p->st[d2][t2];
            if (o->recv_peer >= 0 && overlap(s->send_off, s->send_len, o->recv_off, o->recv_len))
                return 1;
        }
    return 0;
}

/* Which sends go from registered memory in place: see rg_mem_register in railguard.h. */
static void plan_zcopy(struct plan *p)
{
    struct rg_comm *c = p->c;
    for (int d = 0; d < p->ndirs; d++)
        for (int t = 0; t < p->nsteps[d]; t++) {
            struct step *s = &p->st[d][t];
            const uint8_t *a = p->work + s->send_off * p->esz;
            size_t len = s->send_len * p->esz;
            s->zc = NULL;
            if (s->send_peer < 0 || !len || len < c->zcopy_min)
                continue;
            for (int i = 0; i < RG_MEM_MAX && !s->zc; i++) {
                struct rg_mem *m = c->mem[i];
                if (m && a >= m->base && len <= m->len && (size_t)(a - m->base) <= m->len - len)
                    s->zc = m;
            }
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
        rg__waiting(c, -1, NULL);
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
                        rg__waiting(c, x->peer, "its data");
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
                if (s->act == ACT_REDUCE)
                    rg__reduce(dst, data, n, p->dt, p->op);
                else
                    memcpy(dst, data, len);
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
                        rg__waiting(c, x->peer, "a credit to send to it");
                    break;
                }
                size_t off, n;
                rg__chunk(s->send_len, p->esz, c->chunk_bytes, snd[v].j, &off, &n);
                if (rg__send(c, x, RG_MSG_DATA, p->work + (s->send_off + off) * p->esz, n * p->esz,
                             s->zc ? s->zc->mr[x->dev - c->devs] : NULL))
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

static rg_status run(struct plan *p)
{
    rg_status st;
    if (p->c->nmem)
        plan_zcopy(p);
    p->c->last_algo = p->algo;
    p->c->last_rails = p->nrails;
    st = run_steps(p);
    if (st && p->zcopy && p->c->poisoned)
        rg__quiesce(p->c);
    return st;
}

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/*
 * Begins an operation: a poisoned communicator fails fast with its first error; a bad
 * argument is reported (rg_comm_error shows it) without poisoning, since no peer is involved
 * yet.
 */
static rg_status begin(struct rg_comm *c, struct plan *p, rg_dtype dt, rg_redop op, int reduce,
                       const char *what)
{
    if (!c)
        return RG_ERR_INVALID;
    if (c->poisoned)
        return c->err.st;
    rg__err_clear(&c->err);
    c->op_seq++;
    memset(p, 0, offsetof(struct plan, st));
    p->c = c;
    p->algo = RG_ALGO_AUTO;
    c->last_algo = RG_ALGO_AUTO;
    c->last_rails = 0;
    p->ndirs = 1;
    p->dt = dt;
    p->op = op;
    p->esz = rg_dtype_size(dt);
    if (!p->esz)
        return rg__err_set(&c->err, RG_ERR_INVALID, "rank %d: %s: unknown dtype %d", c->rank, what,
                           (int)dt);
    if (reduce && !rg_redop_supported(dt, op))
        return rg__err_set(&c->err, RG_ERR_UNSUPPORTED, "rank %d: %s: %s is not defined on %s",
                           c->rank, what, rg_redop_name(op), rg_dtype_name(dt));
    return RG_OK;
}

static rg_status need_link(struct rg_comm *c, int peer, const char *what)
{
    if (peer < 0 || peer >= c->size || peer == c->rank)
        return rg__err_set(&c->err, RG_ERR_INVALID,
                           "rank %d: %s: peer %d is not another rank "
                           "of 0..%d",
                           c->rank, what, peer, c->size - 1);
    if (c->nrails[peer] == 0)
        return rg__err_set(&c->err, RG_ERR_CONFIG,
                           "rank %d: %s: the devices file has no link to "
                           "rank %d",
                           c->rank, what, peer);
    return RG_OK;
}

/* How many rails a step of `bytes` uses: a message that fits one chunk takes one wire. */
static int wires(const struct rg_comm *c, size_t bytes, int rails)
{
    return bytes <= c->chunk_bytes ? 1 : rails;
}

/* Ring neighbours' rail count. */
static rg_status ring_setup(struct plan *p, size_t bytes, const char *what)
{
    struct rg_comm *c = p->c;
    p->algo = RG_ALGO_RING;
    int right = mod(c->rank + 1, c->size), left = mod(c->rank - 1, c->size);
    rg_status st = need_link(c, right, what);
    if (!st)
        st = need_link(c, left, what);
    if (st)
        return st;
    int r = c->nrails[right] < c->nrails[left] ? c->nrails[right] : c->nrails[left];
    p->nrails = wires(c, bytes, r);
    return RG_OK;
}

/*
 * Which algorithm a call uses. Mesh needs a link to every peer and at most RG_MESH_MAX_RANKS
 * ranks (one QP per peer per rail); auto picks it for messages up to RG_MESH_AUTO_BYTES, where
 * the ring's 2(n-1) hops in sequence cost more than its bandwidth saves.
 */
#define RG_MESH_MAX_RANKS 9
#define RG_MESH_AUTO_BYTES (256u * 1024u)

/* 0 when this call takes the ring, else the rail count every peer has (what the mesh uses). */
static int use_mesh(const struct rg_comm *c, size_t bytes)
{
    int r = RG_MAX_RAILS;
    if (c->algo == RG_ALGO_RING || c->size > RG_MESH_MAX_RANKS)
        return 0;
    if (c->algo != RG_ALGO_MESH && bytes > RG_MESH_AUTO_BYTES)
        return 0;
    for (int q = 0; q < c->size; q++)
        if (q != c->rank && c->nrails[q] < r)
            r = c->nrails[q];
    return r;
}

static void add_step(struct plan *p, int send_peer, size_t soff, size_t slen, int recv_peer,
                     size_t roff, size_t rlen, int act, int dep)
{
    p->st[p->dir][p->nsteps[p->dir]++] =
        (struct step){send_peer, recv_peer, soff, slen, roff, rlen, act, dep, NULL};
}

/*
 * One way round the ring, seen from this rank. Clockwise, rank r sits at position r and
 * sends right (r + 1); counter-clockwise the same ring is walked backwards, so rank r sits at
 * position -r and "right" is r - 1. Position q holds rank sign * q either way, which lets one
 * plan builder serve both directions.
 */
struct ring {
    int n, pos, sign, right, left;
};

static struct ring ring_way(const struct rg_comm *c, int way)
{
    int n = c->size, r = c->rank;
    if (way == 0)
        return (struct ring){n, r, 1, mod(r + 1, n), mod(r - 1, n)};
    return (struct ring){n, mod(-r, n), -1, mod(r - 1, n), mod(r + 1, n)};
}

static int ring_rank(const struct ring *g, int q)
{
    return mod(g->sign * q, g->n);
}

/*
 * How many ways round a ring call runs, given the bytes one step moves: both when there are
 * three ranks or more (with two, both neighbours are the same link, so nothing is gained) and
 * a step spans more than one chunk; the first half of every block then goes clockwise and the
 * second half counter-clockwise, so every link carries data both ways at once.
 */
static int ring_ways(const struct rg_comm *c, size_t step_bytes)
{
    return c->ring_bidir && c->size >= 3 && step_bytes > c->chunk_bytes ? 2 : 1;
}

/* The part of a block of cnt elements that way w of `ways` carries. */
static void ring_half(size_t cnt, int ways, int w, size_t *lo, size_t *len)
{
    size_t h = ways == 2 ? cnt / 2 : cnt;
    *lo = w ? h : 0;
    *len = w ? cnt - h : h;
}

/*
 * Ring all_reduce of elements [base, base + cnt): reduce-scatter leaves segment pos complete
 * at position pos, then all-gather passes it on. The segments are interchangeable, so which
 * rank owns which one needs no mapping back to ranks.
 */
static void ring_all_reduce_steps(struct plan *p, size_t base, size_t cnt, const struct ring *g)
{
    int n = g->n;
    for (int t = 0; t < 2 * (n - 1); t++) {
        int rs = t < n - 1, s = rs ? t + 1 : t - (n - 1);
        int sseg = mod(g->pos - s, n), rseg = mod(g->pos - s - 1, n);
        size_t so, sl, ro, rl;
        rg__seg(cnt, n, sseg, &so, &sl);
        rg__seg(cnt, n, rseg, &ro, &rl);
        add_step(p, g->right, base + so, sl, g->left, base + ro, rl, rs ? ACT_REDUCE : ACT_COPY,
                 t - 1);
    }
}

/*
 * Ring all_gather (first = 0) or reduce_scatter (first = 1) over blocks of cnt elements, of
 * which this way carries [lo, lo + len): in step t the block `first + t` positions behind is
 * passed on and the next one received. After n - 1 steps all_gather holds every block and
 * reduce_scatter's last receive completes this rank's own block.
 */
static void ring_pass_steps(struct plan *p, size_t cnt, size_t lo, size_t len, const struct ring *g,
                            int first, int act)
{
    for (int t = 0; t < g->n - 1; t++)
        add_step(p, g->right, (size_t)ring_rank(g, g->pos - first - t) * cnt + lo, len, g->left,
                 (size_t)ring_rank(g, g->pos - first - t - 1) * cnt + lo, len, act, t - 1);
}

/* Ring broadcast of [lo, lo + len): a chain from the root's position along this way. */
static void ring_chain_steps(struct plan *p, size_t lo, size_t len, const struct ring *g, int root)
{
    int d = mod(g->pos - g->sign * root, g->n);
    if (d > 0)
        add_step(p, -1, 0, 0, g->left, lo, len, ACT_COPY, -1);
    if (d < g->n - 1)
        add_step(p, g->right, lo, len, -1, 0, 0, ACT_COPY, d > 0 ? 0 : -1);
}

enum ring_kind { RING_ALL_REDUCE, RING_ALL_GATHER, RING_REDUCE_SCATTER, RING_BROADCAST };

/* The ring plan of a call over blocks of count elements, one way round or both. */
static void ring_plan(struct plan *p, enum ring_kind kind, size_t count, int root)
{
    p->ndirs = ring_ways(p->c, count * p->esz);
    for (int w = 0; w < p->ndirs; w++) {
        struct ring g = ring_way(p->c, w);
        size_t lo, len;
        ring_half(count, p->ndirs, w, &lo, &len);
        p->dir = w;
        switch (kind) {
        case RING_ALL_REDUCE:
            ring_all_reduce_steps(p, lo, len, &g);
            break;
        case RING_ALL_GATHER:
            ring_pass_steps(p, count, lo, len, &g, 0, ACT_COPY);
            break;
        case RING_REDUCE_SCATTER:
            ring_pass_steps(p, count, lo, len, &g, 1, ACT_REDUCE);
            break;
        case RING_BROADCAST:
            ring_chain_steps(p, lo, len, &g, root);
            break;
        }
    }
}

/* Mesh all-gather of blocks of count elements: my block to every peer, theirs into place. */
static void mesh_gather_steps(struct plan *p, size_t count)
{
    int n = p->c->size, r = p->c->rank;
    for (int s = 1; s < n; s++)
        add_step(p, mod(r + s, n), (size_t)r * count, count, mod(r - s, n),
                 (size_t)mod(r - s, n) * count, count, ACT_COPY, -1);
}

/* A private work buffer of n blocks, the caller's n blocks or its own one at block r. */
static rg_status scratch(struct plan *p, const void *src, size_t bytes, int whole, const char *what)
{
    struct rg_comm *c = p->c;
    size_t total = bytes * (size_t)c->size;
    p->work = malloc(total);
    if (!p->work) {
        rg__err_set(&c->err, RG_ERR_NOMEM, "rank %d: %s: no memory for %zu bytes", c->rank, what,
                    total);
        return rg__fail(c, RG_ERR_NOMEM);
    }
    if (whole)
        memcpy(p->work, src, total);
    else
        memcpy(p->work + (size_t)c->rank * bytes, src, bytes);
    return RG_OK;
}

/*
 * A small all_reduce under auto, when the mesh is possible: one hop instead of the mesh's two
 * (or the ring's 2(n-1)). Every rank sends its whole input to every peer, gathers all n inputs
 * in a scratch buffer, and reduces them in rank order. Every rank thus evaluates the same
 * expression, x0 op x1 op ... op x(n-1), and ends with the same bits: the order, not the
 * operation's symmetry, is what makes ranks agree (max with a NaN is not symmetric).
 */
static rg_status all_reduce_one_shot(struct plan *p, uint8_t *recv, size_t count, int rails)
{
    size_t bytes = count * p->esz;
    rg_status st = scratch(p, recv, bytes, 0, "all_reduce");
    if (st)
        return st;
    p->algo = RG_ALGO_MESH;
    p->nrails = wires(p->c, bytes, rails);
    mesh_gather_steps(p, count);
    st = run(p);
    if (!st) {
        memcpy(recv, p->work, bytes);
        for (int q = 1; q < p->c->size; q++)
            rg__reduce(recv, p->work + (size_t)q * bytes, count, p->dt, p->op);
    }
    free(p->work);
    return st;
}

rg_status rg_all_reduce(rg_comm_h c, const void *send, void *recv, size_t count, rg_dtype dt,
                        rg_redop op)
{
    struct plan p;
    rg_status st = begin(c, &p, dt, op, 1, "all_reduce");
    if (st)
        return st;
    if (send != recv && count)
        memmove(recv, send, count * p.esz);
    int n = c->size, r = c->rank;
    if (n == 1 || count == 0)
        return RG_OK;
    p.work = recv;
    int mesh = use_mesh(c, count * p.esz);
    if (mesh && c->algo == RG_ALGO_AUTO && count * p.esz <= c->oneshot_bytes)
        return all_reduce_one_shot(&p, recv, count, mesh);
    if (mesh) {
        /* Reduce-scatter: send each rank its segment of my input, reduce mine as they come.
         * All-gather: send my finished segment to everyone, after the last reduce-scatter step
         * (n - 2) delivered each of its chunks. */
        size_t mo, ml;
        rg__seg(count, n, r, &mo, &ml);
        p.algo = RG_ALGO_MESH;
        p.nrails = wires(c, count * p.esz, mesh);
        for (int s = 1; s < n; s++) {
            size_t so, sl;
            rg__seg(count, n, mod(r + s, n), &so, &sl);
            add_step(&p, mod(r + s, n), so, sl, mod(r - s, n), mo, ml, ACT_REDUCE, -1);
        }
        for (int s = 1; s < n; s++) {
            size_t ro, rl;
            rg__seg(count, n, mod(r - s, n), &ro, &rl);
            add_step(&p, mod(r + s, n), mo, ml, mod(r - s, n), ro, rl, ACT_COPY, n - 2);
        }
        return run(&p);
    }
    st = ring_setup(&p, count * p.esz, "all_reduce");
    if (st)
        return st;
    ring_plan(&p, RING_ALL_REDUCE, count, 0);
    return run(&p);
}

rg_status rg_all_gather(rg_comm_h c, const void *send, void *recv, size_t count, rg_dtype dt)
{
    struct plan p;
    rg_status st = begin(c, &p, dt, RG_SUM, 0, "all_gather");
    if (st)
        return st;
    int n = c->size, r = c->rank;
    uint8_t *mine = (uint8_t *)recv + (size_t)r * count * p.esz;
    if (send != mine && count)
        memmove(mine, send, count * p.esz);
    if (n == 1 || count == 0)
        return RG_OK;
    p.work = recv;
    int mesh = use_mesh(c, (size_t)n * count * p.esz);
    if (mesh) {
        p.algo = RG_ALGO_MESH;
        p.nrails = wires(c, count * p.esz, mesh);
        mesh_gather_steps(&p, count);
        return run(&p);
    }
    st = ring_setup(&p, count * p.esz, "all_gather");
    if (st)
        return st;
    ring_plan(&p, RING_ALL_GATHER, count, 0);
    return run(&p);
}

rg_status rg_reduce_scatter(rg_comm_h c, const void *send, void *recv, size_t count, rg_dtype dt,
                            rg_redop op)
{
    struct plan p;
    rg_status st = begin(c, &p, dt, op, 1, "reduce_scatter");
    if (st)
        return st;
    int n = c->size, r = c->rank;
    size_t bytes = count * p.esz;
    if (n == 1 || count == 0) {
        if (count)
            memmove(recv, send, bytes);
        return RG_OK;
    }
    int mesh = use_mesh(c, bytes * (size_t)n);
    if (mesh) {
        p.algo = RG_ALGO_MESH;
        p.nrails = wires(c, bytes, mesh);
    } else if ((st = ring_setup(&p, bytes, "reduce_scatter")))
        return st;
    /* The input is const: reduce in a private copy, then hand over block r. */
    if ((st = scratch(&p, send, bytes, 1, "reduce_scatter")))
        return st;
    if (mesh)
        for (int s = 1; s < n; s++)
            add_step(&p, mod(r + s, n), (size_t)mod(r + s, n) * count, count, mod(r - s, n),
                     (size_t)r * count, count, ACT_REDUCE, -1);
    else
        ring_plan(&p, RING_REDUCE_SCATTER, count, 0);
    st = run(&p);
    if (!st)
        memmove(recv, p.work + (size_t)r * bytes, bytes);
    free(p.work);
    return st;
}

rg_status rg_broadcast(rg_comm_h c, void *buf, size_t count, rg_dtype dt, int root)
{
    struct plan p;
    rg_status st = begin(c, &p, dt, RG_SUM, 0, "broadcast");
    if (st)
        return st;
    int n = c->size, r = c->rank;
    if (root < 0 || root >= n)
        return rg__err_set(&c->err, RG_ERR_INVALID,
                           "rank %d: broadcast: root %d is outside "
                           "0..%d",
                           r, root, n - 1);
    if (n == 1 || count == 0)
        return RG_OK;
    p.work = buf;
    int d = mod(r - root, n), mesh = use_mesh(c, count * p.esz);
    if (mesh) {
        /* The root sends to every rank directly; the others receive once. */
        p.algo = RG_ALGO_MESH;
        p.nrails = wires(c, count * p.esz, mesh);
        if (d == 0)
            for (int s = 1; s < n; s++)
                add_step(&p, mod(r + s, n), 0, count, -1, 0, 0, ACT_COPY, -1);
        else
            add_step(&p, -1, 0, 0, root, 0, count, ACT_COPY, -1);
        return run(&p);
    }
    /* A chain from the root around the ring (both ways, half each, for long messages); each
     * rank forwards chunks as they arrive. */
    if ((st = ring_setup(&p, count * p.esz, "broadcast")))
        return st;
    ring_plan(&p, RING_BROADCAST, count, root);
    return run(&p);
}

static rg_status p2p(rg_comm_h c, void *buf, size_t count, rg_dtype dt, int peer, int send)
{
    struct plan p;
    const char *what = send ? "send" : "recv";
    rg_status st = begin(c, &p, dt, RG_SUM, 0, what);
    if (st)
        return st;
    st = need_link(c, peer, what);
    if (st || count == 0)
        return st;
    p.work = buf;
    p.nrails = wires(c, count * p.esz, c->nrails[peer]);
    if (send)
        add_step(&p, peer, 0, count, -1, 0, 0, ACT_COPY, -1);
    else
        add_step(&p, -1, 0, 0, peer, 0, count, ACT_COPY, -1);
    return run(&p);
}

rg_status rg_send(rg_comm_h c, const void *buf, size_t count, rg_dtype dt, int peer)
{
    /* The engine only reads a send step's block, so dropping const here is safe. */
    return p2p(c, (void *)(uintptr_t)buf, count, dt, peer, 1);
}

rg_status rg_recv(rg_comm_h c, void *buf, size_t count, rg_dtype dt, int peer)
{
    return p2p(c, buf, count, dt, peer, 0);
}

rg_status rg_barrier(rg_comm_h c)
{
    if (!c)
        return RG_ERR_INVALID;
    c->last_algo = RG_ALGO_AUTO; /* a barrier moves no data: nothing to name */
    c->last_rails = 0;
    if (c->poisoned)
        return c->err.st;
    rg__err_clear(&c->err);
    if (rg__sc_barrier(c->sc, rg__now() + c->timeout_s, &c->err))
        return rg__fail(c, c->err.st);
    return RG_OK;
}
