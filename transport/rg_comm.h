/* SPDX-License-Identifier: MIT */
/*
 * rg_comm.h - the communicator's insides: devices, connections (one QP per peer per rail),
 * their staging slots and credits, and the progress engine the collectives drive.
 *
 * Flow control. Each connection owns `slots` receive slots and `slots` send slots of
 * chunk_bytes + a 16-byte header. The receiver prefills every receive slot before the
 * first send can arrive and grants credits by RDMA-writing its running count of posted
 * receives into the sender's mailbox (an RDMA write consumes no receive, so UC cannot drop
 * it for want of one). A sender posts message m only while m < that count: a UC send can
 * therefore never find an empty receive queue. A send slot is reused only after its send
 * completion, and a receive slot is reposted only after the collective consumed its data.
 */
#ifndef RG_COMM_H
#define RG_COMM_H

#include "rg_config.h"
#include "rg_plan.h"
#include "rg_sidechan.h"
#include "rg_verbs.h"

#define RG_SLOTS_MAX 64
#define RG_CREDIT_SRC 4 /* credit writes in flight per connection */

/* Every message starts with this header; the receiver checks each field. */
struct rg_hdr {
    uint16_t magic;
    uint8_t kind; /* RG_MSG_* */
    uint8_t rail;
    uint32_t seq; /* per connection and direction, from 0: a gap is a lost message */
    uint32_t op;  /* the communicator's operation number */
    uint32_t len; /* payload bytes */
    /* The sender's receives posted on this connection (low 32 bits), a credit that costs no
     * write of its own wherever traffic flows both ways; ~credit, so a damaged one is never
     * taken (rg_engine.c). */
    uint32_t credit, credit_chk;
};
#define RG_HDR_MAGIC 0x5247u
enum { RG_MSG_HELLO = 1, RG_MSG_DATA = 2 };

struct rg_dev {
    struct rg_vdev v;
    struct ibv_cq *cq;
};

struct rg_conn {
    int peer, rail, idx;
    struct rg_dev *dev;
    struct ibv_qp *qp;
    uint8_t *mem; /* recv slots, send slots, mailbox, credit sources: one registration */
    size_t mem_len;
    struct ibv_mr *mr;
    size_t slot_bytes;
    /* receive side */
    uint64_t recv_posted, recv_arrived, recv_consumed;
    /* Receives a call left unposted for the next call, past recv_keep (rg_coll_run.c). */
    uint32_t recv_owed;
    uint32_t recv_len[RG_SLOTS_MAX];
    /* Where a posted receive's payload lands when not in its slot (the caller's output, in
     * place: rg_coll_run.c), by slot; NULL: in the slot. Its header lands in the slot always. */
    uint8_t *recv_into[RG_SLOTS_MAX];
    /* This call's next message on the connection to post a receive for, walking the steps
     * that receive from its peer on its rail (rg_coll_run.c); on only inside a call. */
    struct {
        int on, d, t;
        size_t j;
    } ip;
    uint32_t rx_seq;
    /* send side */
    uint64_t send_posted, send_done;
    uint32_t tx_seq;
    uint64_t peer_credit; /* last consistent count from the mailbox or a message's header */
    /* credits we grant */
    uint64_t credit_granted; /* recv_posted value last written or sent to the peer */
    uint64_t credit_writes, credit_done;
    uint64_t remote_mailbox;
    uint32_t remote_rkey;
};

/* A caller's region registered on every device of the communicator (mr[d] on devs[d]). */
struct rg_mem {
    uint8_t *base;
    size_t len;
    int writable; /* registered for local writes too: receives may land in it */
    struct ibv_mr *mr[RG_MAX_RANKS * RG_MAX_RAILS];
};

/*
 * RG_PHASES=1: where the time of the communicator's all_reduce calls goes, summed by phase
 * over its life and said in one line on stderr at rg_comm_destroy (rg_phases.c,
 * docs/bench.md). Off (the default), each place it is measured costs one branch.
 */
enum rg_phase {
    RG_PH_COPY,        /* the caller's buffers: input to output, scratch in and out */
    RG_PH_REG,         /* the caller's buffers registered for one call, and deregistered */
    RG_PH_SLOT_IN,     /* payload copied into a send slot */
    RG_PH_SLOT_OUT,    /* payload copied out of a receive slot */
    RG_PH_REDUCE,      /* reductions, from a slot or the one-shot's scratch */
    RG_PH_POST,        /* ibv_post_send/recv (rxe does its packet work in them) */
    RG_PH_POLL,        /* passes of the progress loop that reaped completions */
    RG_PH_WAIT_DATA,   /* passes that reaped nothing while a receive waited for its data */
    RG_PH_WAIT_CREDIT, /* ... while a send waited for a credit */
    RG_PH_WAIT_SENDS,  /* ... while the call waited for its own sends to complete */
    RG_PH_WAIT_OTHER,  /* ... with nothing named (between a plan's passes) */
    RG_PH_N
};

/* What a wait is for: the timeout's message names it, RG_PHASES sorts the wait by it. */
enum rg_wait { RG_WAIT_NONE, RG_WAIT_DATA, RG_WAIT_CREDIT, RG_WAIT_SENDS };

struct rg_phases {
    uint64_t ns[RG_PH_N]; /* in the clock's ticks (rg_phases.c), as total; ns when said */
    uint64_t calls, total;
    uint64_t reads;        /* clock reads made for this */
    uint64_t clock_ns;     /* what one read costs here, measured at create */
    uint64_t mono0, tick0; /* both clocks at create: the ticks' rate at report */
};

struct rg_comm {
    int rank, size;
    rg_config cfg;
    double timeout_s;
    rg_algo algo;      /* as configured; rg_coll.c decides per call what auto means */
    rg_algo last_algo; /* what the last call ran (rg_comm_last_call) */
    int last_rails;
    size_t chunk_bytes;
    unsigned slots;
    unsigned ring_bidir;   /* RG_RING_BIDIR: 1 (default) runs multi-chunk ring calls both ways */
    unsigned credit_batch; /* RG_CREDIT_BATCH: consumed messages per credit write */
    unsigned recv_keep;    /* RG_RECV_KEEP: receives posted between in-place calls */
    unsigned poll_yield;   /* RG_POLL_YIELD: empty polls before yielding the CPU, 0 never */
    unsigned ib_timeout;   /* RG_IB_TIMEOUT: RC's ack timeout, 4.096 us * 2^this a try */
    unsigned ib_retry_cnt; /* RG_IB_RETRY_CNT: RC's retries before RETRY_EXC_ERR */
    size_t oneshot_bytes;  /* RG_ONESHOT_BYTES: auto's one-hop all_reduce up to this size */
    size_t zcopy_min;      /* RG_ZCOPY_MIN: smallest block sent from registered memory in place */
    size_t zcopy_auto;     /* RG_ZCOPY_AUTO: a call's sends from one unregistered buffer that
                            * register it for the call; 0 never (rg_coll_run.c) */
    uint64_t zcopy_sends;
    uint64_t into_recvs; /* receives posted to land in the caller's output in place */
    uint64_t auto_regs, auto_reg_fails; /* buffers registered for a call; refused by a device */
    struct rg_mem call_mem[2];          /* those registrations while the call runs */
    struct rg_mem *mem[RG_MEM_MAX];
    int nmem;
    unsigned tag;
    uint64_t seed;
    uint32_t op_seq;
    struct rg_sc *sc;
    struct rg_dev devs[RG_MAX_RANKS * RG_MAX_RAILS];
    int ndevs;
    struct rg_conn *conns;
    int nconns;
    int conn_of[RG_MAX_RANKS][RG_MAX_RAILS]; /* index into conns, -1 for none */
    int nrails[RG_MAX_RANKS];
    int poisoned;
    struct rg_err err;
    struct rg_vpoller poller; /* describe_wc, this, &err */
    unsigned idle;
    /* What the current wait needs, set before each rg__progress: a timeout names that peer
     * (a stopped or lost peer shows as the one whose data or credit never came). */
    int wait_peer;          /* -1: none said */
    unsigned debug;         /* RG_DEBUG=1: counters on stderr at failures and teardown */
    enum rg_wait wait_kind; /* its data, a credit to send to it, ... */
    unsigned phases;        /* RG_PHASES=1 */
    unsigned ph_on;         /* phases, inside an all_reduce: only its time is summed */
    struct rg_phases ph;
};

/* The peer the next waits are for, and what from it; a timeout's message names them. */
static inline void rg__waiting(struct rg_comm *c, int peer, enum rg_wait what)
{
    c->wait_peer = peer;
    c->wait_kind = what;
}

/* RG_PHASES: a phase's start (0 when off), and its end added to the phase. */
uint64_t rg__ph_clock(struct rg_comm *c);
static inline uint64_t rg__ph_start(struct rg_comm *c)
{
    return c->ph_on ? rg__ph_clock(c) : 0;
}
static inline void rg__ph_add(struct rg_comm *c, enum rg_phase ph, uint64_t t0)
{
    if (c->ph_on)
        c->ph.ns[ph] += rg__ph_clock(c) - t0;
}
/* The wait a progress pass that reaped nothing belongs to. */
static inline enum rg_phase rg__ph_wait(const struct rg_comm *c)
{
    return c->wait_kind == RG_WAIT_DATA     ? RG_PH_WAIT_DATA
           : c->wait_kind == RG_WAIT_CREDIT ? RG_PH_WAIT_CREDIT
           : c->wait_kind == RG_WAIT_SENDS  ? RG_PH_WAIT_SENDS
                                            : RG_PH_WAIT_OTHER;
}
/* At create: what a clock read costs. At destroy: the line on stderr. */
void rg__ph_init(struct rg_comm *c);
void rg__ph_report(const struct rg_comm *c);

/* Slot addresses inside a connection's one registration. */
static inline uint8_t *rg__recv_slot(struct rg_conn *c, unsigned slots, uint64_t seq)
{
    return c->mem + (size_t)(seq % slots) * c->slot_bytes;
}
static inline uint8_t *rg__send_slot(struct rg_conn *c, unsigned slots, uint64_t seq)
{
    return c->mem + (size_t)(slots + seq % slots) * c->slot_bytes;
}

/*
 * One pass of the progress engine: polls every CQ, files completions with their
 * connections, grants credits, and every so often checks the deadline and the side channel.
 * *deadline == 0 means "the timeout from the first idle check on"; it is then set.
 * Returns RG_OK or the error that poisoned the communicator.
 */
rg_status rg__progress(struct rg_comm *c, double *deadline);

/* May connection x take another message now (a free send slot and a peer credit)? */
int rg__can_send(struct rg_comm *c, struct rg_conn *x);
/*
 * Sends len bytes (<= chunk_bytes) behind a header in the next send slot. With mr NULL the
 * bytes are copied into the slot; otherwise they go from p itself, which lies in mr (a region
 * registered on x's device) and must stay untouched until the send completes.
 */
rg_status rg__send(struct rg_comm *c, struct rg_conn *x, int kind, const void *p, size_t len,
                   const struct ibv_mr *mr);
/*
 * The next message that arrived on x, in order, after checking its header: kind, sequence
 * (a gap means a lost message), rail and length. Returns 1 with *p and *len set, 0 if
 * nothing arrived yet, or a negative rg_status.
 */
int rg__peek(struct rg_comm *c, struct rg_conn *x, int kind, const void **p, size_t *len);
/* Gives the peeked slot back: reposts its receive and grants the credit. */
rg_status rg__release(struct rg_comm *c, struct rg_conn *x);
/* The same, the new receive's payload landing at into (len bytes, registered as mr) instead of
 * in the slot: a message of the running call that lands in the caller's output in place. */
rg_status rg__release_into(struct rg_comm *c, struct rg_conn *x, uint8_t *into, size_t len,
                           const struct ibv_mr *mr);
/* Consumes the message and owes its receive to the next call (recv_owed); a peer it leaves
 * starved is granted what is posted (rg_engine.c). */
rg_status rg__release_owed(struct rg_comm *c, struct rg_conn *x);
/* Waits until every posted send on every connection has completed. */
rg_status rg__drain_sends(struct rg_comm *c, double *deadline);

/*
 * After a failed call that sent from or received into the caller's memory: tears down every
 * connection with a send still in flight or a receive posted there, so the NIC is done with
 * the caller's buffers when the call returns. The communicator is poisoned already, so
 * nothing uses those connections again.
 */
void rg__quiesce(struct rg_comm *c);

/* Set-up's uses of the engine (rg_conns.c): a receive slot posted, and a credit written to the
 * peer. */
rg_status rg__post_recv_slot(struct rg_comm *c, struct rg_conn *x);
rg_status rg__post_recv_into(struct rg_comm *c, struct rg_conn *x, uint8_t *into, size_t len,
                             const struct ibv_mr *mr);
rg_status rg__write_credit(struct rg_comm *c, struct rg_conn *x);
/* A credit write if a batch is ungranted, or the peer is starved and anything is. */
rg_status rg__grant_credit(struct rg_comm *c, struct rg_conn *x);
/* Every credit the peer was given has been used and consumed here: it can send nothing until
 * this side grants more (consumed <= arrived <= sent <= granted). */
static inline int rg__peer_starved(const struct rg_conn *x)
{
    return x->recv_consumed == x->credit_granted;
}

/* x's credit mailbox, past its slots: what the peer writes {count, ~count} into. Inline: the
 * engine reads it on every progress pass, and set-up publishes its address. */
static inline uint64_t *rg__mailbox(struct rg_comm *c, struct rg_conn *x)
{
    return (uint64_t *)(x->mem + (size_t)2 * c->slots * x->slot_bytes);
}

/* Records the first error, poisons the communicator and tells the peers. Returns st. */
rg_status rg__fail(struct rg_comm *c, rg_status st);
/* Names the operation behind a failed completion (c->poller's describe). */
void rg__describe_wc(const struct ibv_wc *wc, void *arg, char *buf, size_t len);

/* splitmix64: tags and starting PSNs only need to differ between communicators. */
static inline uint64_t rg__mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * The connections (rg_conns.c), in rg_comm_create's order: the devices, QPs, staging memory
 * and prefilled receives of every (peer, rail) the devices file names; their records traded
 * and checked, each QP connected; a hello each way on every rail. Each returns the error
 * it recorded in c->err. Teardown, once no work request can be in flight: the QPs and their
 * memory, then (after the caller's registered regions) the CQs and devices.
 */
rg_status rg__conns_make(struct rg_comm *c, const struct rg_devices *dv);
rg_status rg__conns_connect(struct rg_comm *c, double deadline);
rg_status rg__conns_hello(struct rg_comm *c, double deadline);
void rg__conns_free(struct rg_comm *c);
void rg__devs_close(struct rg_comm *c);

/* A registered region's MRs deregistered and the region freed (rg_mem.c). */
void rg__mem_free(struct rg_comm *c, struct rg_mem *m);

#endif
