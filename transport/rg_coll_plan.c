/* SPDX-License-Identifier: MIT */
/*
 * The collectives' plans (rg_coll.h): which block each rank sends to which peer, and which it
 * receives, step by step.
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
#include "rg_coll.h"

#include <string.h>

rg_status rg__need_link(struct rg_comm *c, int peer, const char *what)
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
int rg__wires(const struct rg_comm *c, size_t bytes, int rails)
{
    return bytes <= c->chunk_bytes ? 1 : rails;
}

/* Ring neighbours' rail count (rg_coll.h). */
rg_status rg__ring_setup(struct plan *p, size_t bytes, const char *what)
{
    struct rg_comm *c = p->c;
    p->algo = RG_ALGO_RING;
    int right = rg__mod(c->rank + 1, c->size), left = rg__mod(c->rank - 1, c->size);
    rg_status st = rg__need_link(c, right, what);
    if (!st)
        st = rg__need_link(c, left, what);
    if (st)
        return st;
    int r = c->nrails[right] < c->nrails[left] ? c->nrails[right] : c->nrails[left];
    p->nrails = rg__wires(c, bytes, r);
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
int rg__use_mesh(const struct rg_comm *c, size_t bytes)
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

struct step *rg__add_step(struct plan *p, int send_peer, size_t soff, size_t slen, int recv_peer,
                          size_t roff, size_t rlen, int act, int dep)
{
    struct step *s = &p->st[p->dir][p->nsteps[p->dir]++];
    *s = (struct step){send_peer, recv_peer, soff, slen, roff, rlen, act, dep, NULL, 0, 0, 0};
    return s;
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
        return (struct ring){n, r, 1, rg__mod(r + 1, n), rg__mod(r - 1, n)};
    return (struct ring){n, rg__mod(-r, n), -1, rg__mod(r - 1, n), rg__mod(r + 1, n)};
}

static int ring_rank(const struct ring *g, int q)
{
    return rg__mod(g->sign * q, g->n);
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
 * rank owns which one needs no mapping back to ranks. With a separate input, the first step
 * sends from it and every reduce-scatter step reduces input and received data into work: each
 * segment is received there once (segment pos - 1, sent first, comes back in the all-gather),
 * so work needs no copy of the input.
 */
static void ring_all_reduce_steps(struct plan *p, size_t base, size_t cnt, const struct ring *g)
{
    int n = g->n;
    for (int t = 0; t < 2 * (n - 1); t++) {
        int rs = t < n - 1, s = rs ? t + 1 : t - (n - 1);
        int sseg = rg__mod(g->pos - s, n), rseg = rg__mod(g->pos - s - 1, n);
        size_t so, sl, ro, rl;
        rg__seg(cnt, n, sseg, &so, &sl);
        rg__seg(cnt, n, rseg, &ro, &rl);
        struct step *st = rg__add_step(p, g->right, base + so, sl, g->left, base + ro, rl,
                                       rs ? ACT_REDUCE : ACT_COPY, t - 1);
        st->send_in = t == 0;
        st->reduce_in = rs;
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
        rg__add_step(p, g->right, (size_t)ring_rank(g, g->pos - first - t) * cnt + lo, len, g->left,
                     (size_t)ring_rank(g, g->pos - first - t - 1) * cnt + lo, len, act, t - 1);
}

/* Ring broadcast of [lo, lo + len): a chain from the root's position along this way. */
static void ring_chain_steps(struct plan *p, size_t lo, size_t len, const struct ring *g, int root)
{
    int d = rg__mod(g->pos - g->sign * root, g->n);
    if (d > 0)
        rg__add_step(p, -1, 0, 0, g->left, lo, len, ACT_COPY, -1);
    if (d < g->n - 1)
        rg__add_step(p, g->right, lo, len, -1, 0, 0, ACT_COPY, d > 0 ? 0 : -1);
}

/* The ring plan of a call over blocks of count elements, one way round or both. */
void rg__ring_plan(struct plan *p, enum ring_kind kind, size_t count, int root)
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
void rg__mesh_gather_steps(struct plan *p, size_t count)
{
    int n = p->c->size, r = p->c->rank;
    for (int s = 1; s < n; s++)
        rg__add_step(p, rg__mod(r + s, n), (size_t)r * count, count, rg__mod(r - s, n),
                     (size_t)rg__mod(r - s, n) * count, count, ACT_COPY, -1);
}
