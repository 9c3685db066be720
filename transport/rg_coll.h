/* SPDX-License-Identifier: MIT */
/*
 * rg_coll.h - the collectives' insides, shared by their three files and nothing else:
 *   rg_coll.c       the calls (all_reduce, all_gather, reduce_scatter, broadcast, send, recv,
 *                   barrier): each checks its arguments, picks ring or mesh, builds a plan, runs it
 *   rg_coll_plan.c  the plans: which block goes to which peer in each step, ring or mesh
 *   rg_coll_run.c   the engine every plan runs on: chunks over rails, pipelined, with credits
 *   rg_coll_zc.c    the caller's memory in place: zero-copy sends, receives landing in the
 *                   output, the registrations for one call that allow them
 */
#ifndef RG_COLL_H
#define RG_COLL_H

#include "rg_comm.h"

#include <stddef.h>

enum { ACT_COPY, ACT_REDUCE };

struct step {
    int send_peer, recv_peer;  /* -1: none */
    size_t send_off, send_len; /* elements of the work buffer */
    size_t recv_off, recv_len;
    int act;
    int dep; /* -1, or the step whose chunk j must have arrived before this one sends chunk j */
    struct rg_mem *zc; /* the registered region the send block lies in, or NULL: copy it */
    /* Where the plan has a separate input (p->in): the send block is read from it, and a
     * reduction's first operand is the input at the receive block (the result goes to work).
     * all_reduce so reads its input once, in place of a copy of it into the output first. */
    int send_in, reduce_in;
    int into; /* its receives land in work in place, not through a slot (rg_coll_run.c) */
};

struct plan {
    struct rg_comm *c;
    uint8_t *work;
    const uint8_t *in; /* the caller's input where steps read it apart from work, or NULL */
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
    int dir;                 /* where add_step appends */
    int zcopy;               /* some step sends from the caller's memory in place */
    struct rg_mem *into_mem; /* the writable region steps' in-place receives land in */
    int nsteps[2];
    struct step st[2][2 * RG_MAX_RANKS];
};

enum ring_kind { RING_ALL_REDUCE, RING_ALL_GATHER, RING_REDUCE_SCATTER, RING_BROADCAST };

/* ((a mod n) + n) mod n: a rank's distance round the ring, whatever the sign of a. */
static inline int rg__mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/* Runs a built plan: every step's chunks on their rails until all arrived, or the first error. */
rg_status rg__coll_run(struct plan *p);
/* The caller's memory in place (rg_coll_zc.c). Before a plan runs: which steps send from
 * registered memory and receive into it, registering buffers for this call where that pays;
 * returns how many were (c->call_mem). After: those deregistered, the cursors off. */
int rg__zc_prepare(struct plan *p);
void rg__zc_finish(struct plan *p, int ncall);
/* The receive cursors, one a connection, set past the receives posted before the call; and
 * where the receive posted next on x lands (NULL: in its slot), with its length and region. */
void rg__into_start(struct plan *p);
uint8_t *rg__into_next(struct plan *p, struct rg_conn *x, size_t *len, const struct ibv_mr **mr);
/* Whether x's cursor has passed this call's last message (receives posted now take the next
 * call's); and the receives the last call owed, posted at this one's start by the cursors. */
int rg__into_past(const struct plan *p, const struct rg_conn *x);
rg_status rg__post_owed(struct plan *p);

/* A peer for send or recv: another rank, with a link in the devices file. */
rg_status rg__need_link(struct rg_comm *c, int peer, const char *what);
/* How many rails a step of `bytes` uses: a message that fits one chunk takes one wire. */
int rg__wires(const struct rg_comm *c, size_t bytes, int rails);
/* A ring call's set-up: both neighbours linked; the fewer of their rails (one for a message of
 * one chunk) into p->nrails. */
rg_status rg__ring_setup(struct plan *p, size_t bytes, const char *what);
/* 0 when this call takes the ring, else the rail count every peer has (what the mesh uses). */
int rg__use_mesh(const struct rg_comm *c, size_t bytes);
/* Appends a step to the plan's current direction, and returns it. */
struct step *rg__add_step(struct plan *p, int send_peer, size_t soff, size_t slen, int recv_peer,
                          size_t roff, size_t rlen, int act, int dep);
/* Where step s's send block starts: in the input or in work. */
static inline const uint8_t *rg__send_base(const struct plan *p, const struct step *s)
{
    return s->send_in && p->in ? p->in : p->work;
}
/* The ring plan of a call over blocks of count elements, one way round or both. */
void rg__ring_plan(struct plan *p, enum ring_kind kind, size_t count, int root);
/* Mesh all-gather of blocks of count elements: my block to every peer, theirs into place. */
void rg__mesh_gather_steps(struct plan *p, size_t count);

#endif
