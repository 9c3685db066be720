/* SPDX-License-Identifier: MIT */
/*
 * The collectives, all driven by one pipelined engine. An operation is a list of steps; a
 * step sends one block of the work buffer to a peer and/or receives one block from a peer
 * (then copies or reduces it in place). Each call here checks its arguments, picks the ring
 * or the mesh, builds its plan (rg_coll_plan.c) and runs it (rg_coll_run.c).
 */
#include "rg_coll.h"
#include "rg_reduce.h"

#include <stdlib.h>
#include <string.h>

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
    uint64_t t0 = rg__ph_start(c);
    if (whole)
        memcpy(p->work, src, total);
    else
        memcpy(p->work + (size_t)c->rank * bytes, src, bytes);
    rg__ph_add(c, RG_PH_COPY, t0);
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
    rg_status st = scratch(p, p->in ? p->in : recv, bytes, 0, "all_reduce");
    if (st)
        return st;
    p->in = NULL; /* the steps send the scratch copy */
    p->algo = RG_ALGO_MESH;
    p->nrails = rg__wires(p->c, bytes, rails);
    rg__mesh_gather_steps(p, count);
    st = rg__coll_run(p);
    if (!st) {
        uint64_t t0 = rg__ph_start(p->c);
        memcpy(recv, p->work, bytes);
        rg__ph_add(p->c, RG_PH_COPY, t0);
        t0 = rg__ph_start(p->c);
        for (int q = 1; q < p->c->size; q++)
            rg__reduce(recv, p->work + (size_t)q * bytes, count, p->dt, p->op);
        rg__ph_add(p->c, RG_PH_REDUCE, t0);
    }
    free(p->work);
    return st;
}

static rg_status all_reduce(rg_comm_h c, const void *send, void *recv, size_t count, rg_dtype dt,
                            rg_redop op)
{
    struct plan p;
    rg_status st = begin(c, &p, dt, op, 1, "all_reduce");
    if (st)
        return st;
    int n = c->size, r = c->rank;
    size_t bytes = count * p.esz;
    const uint8_t *in = send, *out = recv;
    /* One rank's result is its input; buffers that partly overlap (in place is send == recv)
     * would have the steps read input the output already overwrote: the input is copied into
     * the output first, and the call runs in place. Otherwise the steps read the input where
     * it is, and only what comes back is written (rg_coll_plan.c). */
    if (in != out && count && (n == 1 || (in < out + bytes && out < in + bytes))) {
        uint64_t t0 = rg__ph_start(c);
        memmove(recv, send, bytes);
        rg__ph_add(c, RG_PH_COPY, t0);
        in = out;
    }
    if (n == 1 || count == 0)
        return RG_OK;
    p.work = recv;
    p.in = in != out ? in : NULL;
    int mesh = rg__use_mesh(c, count * p.esz);
    if (mesh && c->algo == RG_ALGO_AUTO && count * p.esz <= c->oneshot_bytes)
        return all_reduce_one_shot(&p, recv, count, mesh);
    if (mesh) {
        /* Reduce-scatter: send each rank its segment of my input, reduce mine as they come.
         * All-gather: send my finished segment to everyone, after the last reduce-scatter step
         * (n - 2) delivered each of its chunks. */
        size_t mo, ml;
        rg__seg(count, n, r, &mo, &ml);
        p.algo = RG_ALGO_MESH;
        p.nrails = rg__wires(c, count * p.esz, mesh);
        for (int s = 1; s < n; s++) {
            size_t so, sl;
            rg__seg(count, n, rg__mod(r + s, n), &so, &sl);
            struct step *rs = rg__add_step(&p, rg__mod(r + s, n), so, sl, rg__mod(r - s, n), mo, ml,
                                           ACT_REDUCE, -1);
            /* Sends from the input; the first step's receives (each chunk's first, the
             * receive cursor walking steps in order) reduce it into the output, the rest
             * reduce there in place. */
            rs->send_in = 1;
            rs->reduce_in = s == 1;
        }
        for (int s = 1; s < n; s++) {
            size_t ro, rl;
            rg__seg(count, n, rg__mod(r - s, n), &ro, &rl);
            rg__add_step(&p, rg__mod(r + s, n), mo, ml, rg__mod(r - s, n), ro, rl, ACT_COPY, n - 2);
        }
        return rg__coll_run(&p);
    }
    st = rg__ring_setup(&p, count * p.esz, "all_reduce");
    if (st)
        return st;
    rg__ring_plan(&p, RING_ALL_REDUCE, count, 0);
    return rg__coll_run(&p);
}

/* RG_PHASES: the call's own time, beside its phases' (rg_phases.c). */
rg_status rg_all_reduce(rg_comm_h c, const void *send, void *recv, size_t count, rg_dtype dt,
                        rg_redop op)
{
    if (!c || !c->phases)
        return all_reduce(c, send, recv, count, dt, op);
    c->ph_on = 1;
    uint64_t t0 = rg__ph_clock(c);
    rg_status st = all_reduce(c, send, recv, count, dt, op);
    c->ph.total += rg__ph_clock(c) - t0;
    c->ph.calls++;
    c->ph_on = 0;
    return st;
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
    int mesh = rg__use_mesh(c, (size_t)n * count * p.esz);
    if (mesh) {
        p.algo = RG_ALGO_MESH;
        p.nrails = rg__wires(c, count * p.esz, mesh);
        rg__mesh_gather_steps(&p, count);
        return rg__coll_run(&p);
    }
    st = rg__ring_setup(&p, count * p.esz, "all_gather");
    if (st)
        return st;
    rg__ring_plan(&p, RING_ALL_GATHER, count, 0);
    return rg__coll_run(&p);
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
    int mesh = rg__use_mesh(c, bytes * (size_t)n);
    if (mesh) {
        p.algo = RG_ALGO_MESH;
        p.nrails = rg__wires(c, bytes, mesh);
    } else if ((st = rg__ring_setup(&p, bytes, "reduce_scatter")))
        return st;
    /* The input is const: reduce in a private copy, then hand over block r. */
    if ((st = scratch(&p, send, bytes, 1, "reduce_scatter")))
        return st;
    if (mesh)
        for (int s = 1; s < n; s++)
            rg__add_step(&p, rg__mod(r + s, n), (size_t)rg__mod(r + s, n) * count, count,
                         rg__mod(r - s, n), (size_t)r * count, count, ACT_REDUCE, -1);
    else
        rg__ring_plan(&p, RING_REDUCE_SCATTER, count, 0);
    st = rg__coll_run(&p);
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
    int d = rg__mod(r - root, n), mesh = rg__use_mesh(c, count * p.esz);
    if (mesh) {
        /* The root sends to every rank directly; the others receive once. */
        p.algo = RG_ALGO_MESH;
        p.nrails = rg__wires(c, count * p.esz, mesh);
        if (d == 0)
            for (int s = 1; s < n; s++)
                rg__add_step(&p, rg__mod(r + s, n), 0, count, -1, 0, 0, ACT_COPY, -1);
        else
            rg__add_step(&p, -1, 0, 0, root, 0, count, ACT_COPY, -1);
        return rg__coll_run(&p);
    }
    /* A chain from the root around the ring (both ways, half each, for long messages); each
     * rank forwards chunks as they arrive. */
    if ((st = rg__ring_setup(&p, count * p.esz, "broadcast")))
        return st;
    rg__ring_plan(&p, RING_BROADCAST, count, root);
    return rg__coll_run(&p);
}

static rg_status p2p(rg_comm_h c, void *buf, size_t count, rg_dtype dt, int peer, int send)
{
    struct plan p;
    const char *what = send ? "send" : "recv";
    rg_status st = begin(c, &p, dt, RG_SUM, 0, what);
    if (st)
        return st;
    st = rg__need_link(c, peer, what);
    if (st || count == 0)
        return st;
    p.work = buf;
    p.nrails = rg__wires(c, count * p.esz, c->nrails[peer]);
    if (send)
        rg__add_step(&p, peer, 0, count, -1, 0, 0, ACT_COPY, -1);
    else
        rg__add_step(&p, -1, 0, 0, peer, 0, count, ACT_COPY, -1);
    return rg__coll_run(&p);
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
