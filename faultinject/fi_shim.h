/* SPDX-License-Identifier: MIT */
/*
 * The interposer's state, shared by its files (fi_shim.h is internal to faultinject/): the real
 * verbs, the live plan, the tables of contexts, QPs and CQs the datapath looks objects up in,
 * and the few lookups the datapath inlines. What each file does:
 *   fi_shim.c      the state, small helpers, the QP and CQ tables and their summaries
 *   fi_rules.c     where rules meet events: filters, firing, completions and polls
 *   fi_ring.c      each QP's record of outstanding work requests, and posting through it
 *   fi_datapath.c  the ops the shim patches into contexts: poll, post, extended CQs and QPs
 *   fi_late.c      the late fault's held sends and the thread that posts them
 *   fi_trace.c     the verbs trace: each QP's peer, posts and completions, as events
 *   fi_verbs.c     the exported verbs: devices, contexts, PDs, MRs, CQs, QPs
 *   fi_control.c   the plan's life, the control table, the snapshot, load and exit
 */
#ifndef RG_FI_SHIM_H
#define RG_FI_SHIM_H

#include "fi_internal.h"
#include "rg_faultinject.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Everything declared here stays inside the shim: its datapath reaches it directly, with no
 * indirection through the GOT or PLT (only FI_EXPORT symbols are seen outside). */
#pragma GCC visibility push(hidden)

#define FI_MAX_CTX 64
#define FI_MAX_QPS 4096 /* a power of two: open-addressed by (context, QP number) */
#define FI_MAX_CQS 1024 /* likewise, by CQ pointer */
#define FI_PEND_MIN 64  /* synthetic completions a CQ can hold beyond its own depth */
#define FI_PLAN_FILE_MAX (64 * 1024)

/* ---- the real functions ------------------------------------------------------------------- */
typedef int (*poll_fn)(struct ibv_cq *, int, struct ibv_wc *);
typedef int (*post_send_fn)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
typedef int (*post_recv_fn)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **);
typedef int (*post_srq_fn)(struct ibv_srq *, struct ibv_recv_wr *, struct ibv_recv_wr **);
typedef struct ibv_cq_ex *(*create_cq_ex_fn)(struct ibv_context *, struct ibv_cq_init_attr_ex *);
typedef struct ibv_qp *(*create_qp_ex_fn)(struct ibv_context *, struct ibv_qp_init_attr_ex *);

/* The real verbs, looked up in libibverbs at load. */
struct fi_real {
    struct ibv_device **(*get_device_list)(int *);
    void (*free_device_list)(struct ibv_device **);
    struct ibv_context *(*open_device)(struct ibv_device *);
    int (*close_device)(struct ibv_context *);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
    struct ibv_mr *(*reg_mr_iova)(struct ibv_pd *, void *, size_t, uint64_t, int);
    struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *, void *, size_t, uint64_t, unsigned int);
    struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int);
    struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
    int (*destroy_cq)(struct ibv_cq *);
    struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
    int (*destroy_qp)(struct ibv_qp *);
    struct ibv_srq *(*create_srq)(struct ibv_pd *, struct ibv_srq_init_attr *);
    int (*destroy_srq)(struct ibv_srq *);
    int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
    int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
    int (*dealloc_pd)(struct ibv_pd *);
    int (*dereg_mr)(struct ibv_mr *);
    struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *);
    int (*destroy_comp_channel)(struct ibv_comp_channel *);
    int (*get_cq_event)(struct ibv_comp_channel *, struct ibv_cq **, void **);
    void (*ack_cq_events)(struct ibv_cq *, unsigned int);
    int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
};
extern struct fi_real fi_real;

/* ---- the live plan ------------------------------------------------------------------------ */
/*
 * Rules are grouped by the site that evaluates them, as bit masks, so a site looks only at its
 * own rules. Each rule counts its own matching events, independently of the others.
 */
struct fi_live {
    struct fi_plan plan;
    _Atomic uint64_t matched[FI_MAX_RULES];
    _Atomic uint64_t fired[FI_MAX_RULES];
    uint32_t m_poll;    /* negpoll, stall */
    uint32_t m_pollcqe; /* those of them with per=cqe: counted at completions, fired at polls */
    /* per=cqe: the CQ (ord + 1, 0 for none) whose next poll fires rule i, and its n there */
    _Atomic int armed_cq[FI_MAX_RULES];
    _Atomic uint64_t armed_nth[FI_MAX_RULES];
    bool own;        /* an ownership rule: the buffer-ownership sanitizer is on */
    bool trace;      /* a trace rule: every post and completion is an event (fi_trace.c) */
    uint32_t m_cqe;  /* error, corrupt */
    uint32_t m_send; /* lose, delay op=send|write, nomem verb=post_send */
    uint32_t m_recv; /* delay op=recv, nomem verb=post_recv */
    uint32_t m_verb; /* nomem on the control verbs */
    uint32_t m_first;
    uint32_t m_swap;
    bool sites;      /* a sites rule: every verbs call site is recorded (fi_caller.c) */
    bool uc_as_rc;   /* a uc_as_rc rule: UC QPs are created as RC (fi_verbs.c) */
    uint32_t m_site; /* rules with a site= filter: each call's site is looked up */
    int site_depth;  /* the frames of each call's path, while either of those is live */
};

extern _Atomic(struct fi_live *) g_live;

/*
 * Verbs objects alive now, by kind, for the exit's "alive" event: what a program still holds
 * when it ends is a leak (QPs and CQs are counted from their slots). Signed: an object made
 * by a path the shim does not wrap and freed by one it does drives a count below zero, which
 * is read as "not known", never as a leak.
 */
struct fi_alive {
    _Atomic int64_t contexts, pds, mrs, channels;
};
extern struct fi_alive g_alive;
extern _Atomic int g_first_done; /* delay_first: the first post has happened */
extern uint64_t g_t0_ns;
extern _Atomic int g_rank;
extern char g_rank_err[160];    /* why the rank variable could not be read, "" when it could */
extern char g_self_path[4096];  /* the shim as loaded, for dlopen(RTLD_NOLOAD) of itself */
extern char g_verbs_path[4096]; /* realpath of the libibverbs holding the real ibv_open_device */
extern int g_snapshot_sig;      /* the signal the snapshot handler took, 0 for none */

/* ---- contexts ----------------------------------------------------------------------------- */
struct fi_ctx {
    _Atomic(struct ibv_context *) ctx;
    char dev[IBV_SYSFS_NAME_MAX];
    poll_fn poll;
    post_send_fn post_send;
    post_recv_fn post_recv;
    post_srq_fn post_srq_recv;
    int (*req_notify)(struct ibv_cq *, int); /* the provider's ibv_req_notify_cq (fi_notify.c) */
    bool soft_events; /* rxe's: an event needs no provider hook, so the shim may raise one */
    create_cq_ex_fn create_cq_ex;
    create_qp_ex_fn create_qp_ex;
};
extern struct fi_ctx g_ctx[FI_MAX_CTX];
/* The provider's datapath functions when every context opened so far has the same ones (one
 * provider, the usual case): the pass-through then needs no context lookup. NULL otherwise. */
struct fi_one {
    _Atomic(poll_fn) poll;
    _Atomic(post_send_fn) post_send;
    _Atomic(post_recv_fn) post_recv;
    bool mixed;
};
extern struct fi_one g_one;
extern _Atomic int g_nctx;     /* high-water mark of g_ctx in use */
extern pthread_mutex_t g_lock; /* creation and destruction only */

/* ---- QPs and CQs -------------------------------------------------------------------------- */
enum { SLOT_EMPTY = 0, SLOT_LIVE = 1, SLOT_DEAD = 2 };

/* The scatter entries a receive keeps for corrupt: a header and a payload apart (the reference
 * transport's in-place receives, UCX's and NCCL's headers) are two; more are rare. */
#define FI_RENT_SGE 4
struct fi_rent { /* a posted work request: its id, for receives the buffers it fills */
    uint64_t wr_id;
    uint64_t addr[FI_RENT_SGE]; /* the first FI_RENT_SGE entries of its scatter list */
    uint32_t len[FI_RENT_SGE];
    uint32_t nsge;
    bool signaled;      /* sends: whether its completion is reported on success */
    bool taken;         /* an SRQ's: completed out of turn, a hole until the head passes it */
    struct fi_own *own; /* the ownership sanitizer's record, NULL when it is off or exempt */
};

/*
 * Work requests posted and not yet completed, in posting order. A queue completes in order, so
 * a completion is matched to its request by position, never by wr_id (programs reuse wr_ids):
 * a receive completion retires the head; a send completion retires every unsignaled request
 * before it and the first signaled one. `exact` is false once the ring may be missing requests
 * (posted while no plan was live, through ibv_qp_ex, or beyond its capacity); it then falls back
 * to matching wr_ids and its count is reported as unknown.
 */
struct fi_ring {
    struct fi_rent *e;
    uint32_t cap, head, tail;
    bool exact;
};

struct fi_qp {
    _Atomic int state;
    struct ibv_context *ctx;
    uint32_t qpn;
    struct ibv_qp *qp;
    struct fi_ctx *c;
    int ord;
    int sq_sig_all;
    _Atomic int faulted;
    bool srq;
    bool sq_by_shim; /* after a break the provider could not move to error: the shim flushes */
    bool as_rc;      /* the program asked for UC; a uc_as_rc rule made it RC (fi_verbs.c) */
    /* A UD QP's receives: the most bytes a NIC can write into one (the GRH's 40 and the
     * port's active MTU), known from its move to INIT; 0 when not a UD QP or not known. */
    _Atomic uint32_t ud_room;
    struct fi_heard heard; /* a UD QP's: whom its receives came from (fi_internal.h) */
    _Atomic uint64_t posts_send, posts_recv, cqe_send, cqe_recv, cqe_err;
    /* By operation (enum fi_op), the events an op= filter counts: posts, and completions that
     * succeeded (the only ones error and corrupt look at). A sweep plans its points from them. */
    _Atomic uint64_t posts_op[FI_OP_ATOMIC + 1], cqe_op[FI_OP_ATOMIC + 1];
    _Atomic int late;                      /* requests held by the late fault, not yet posted */
    _Atomic uint64_t sig_posted, sig_done; /* signaled sends really posted / completed */
    _Atomic uint64_t tr_n[2];              /* the trace's ordinals: sends, receives */
    _Atomic int tr_gap;                    /* the trace said it cannot see this QP's requests */
    /* qp_ex's own pointers, when the QP was created with send ops */
    void (*wr_start)(struct ibv_qp_ex *);
    int (*wr_complete)(struct ibv_qp_ex *);
    void (*wr_abort)(struct ibv_qp_ex *);
    void (*wr_send)(struct ibv_qp_ex *);
    void (*wr_rdma_write)(struct ibv_qp_ex *, uint32_t, uint64_t);
    /* what is outstanding, so a break can flush it (rlock guards both rings) */
    pthread_mutex_t rlock;
    struct fi_ring sring, rring;
};

/* q's record of whom it heard from when it is a UD QP (the ownership sanitizer's), else NULL. */
static inline struct fi_heard *fi_ud_heard(struct fi_qp *q)
{
    return q->qp && q->qp->qp_type == IBV_QPT_UD ? &q->heard : NULL;
}

/* A completion the shim makes itself: a lost send's success, or a flush after a break. */
struct fi_pend {
    struct ibv_wc wc;
    struct fi_qp *q;
    uint64_t after; /* deliver once q->sig_done reaches this (lost sends keep their order) */
    bool lost;      /* a lost signaled send: it counts in sig_done once delivered */
};

struct fi_cq {
    _Atomic int state;
    struct ibv_cq *cq;
    struct fi_ctx *c;
    int ord;
    _Atomic uint64_t polls, cqe;
    _Atomic uint64_t tr_idle; /* the trace: polls that found nothing since its last completion */
    _Atomic uint64_t stall_until_ns;
    /* fi_notify.c: armed by the program since its last event; events the shim raised for its
     * own completions that the program has not acked yet. */
    _Atomic int armed;
    _Atomic unsigned int owed;
    int (*start_poll)(struct ibv_cq_ex *, struct ibv_poll_cq_attr *);
    int (*next_poll)(struct ibv_cq_ex *);
    bool is_ex; /* polled through start_poll/next_poll: synthetic completions can't be added */
    /* Its completion channel or NULL, kept here: its summary at ibv_destroy_cq is written after
     * the provider freed the ibv_cq (valgrind found the read there), and fi_notify.c reads it
     * from other threads. */
    struct ibv_comp_channel *chan;
    pthread_mutex_t plock;
    _Atomic int npend;
    int pcap;
    struct fi_pend *pend; /* allocated with the CQ: its depth plus FI_PEND_MIN */
};

extern struct fi_qp g_qp[FI_MAX_QPS];
extern struct fi_cq g_cq[FI_MAX_CQS];
extern _Atomic int g_qp_ord, g_cq_ord;

/*
 * What the shim saw in this process since load, for the "totals" event. Objects are counted at
 * creation, plan or not, so a runner can tell a rank that made no verbs objects at all from one
 * whose transport bypassed the shim; posts, polls and completions only while a plan is live
 * (the pass-through counts nothing).
 */
struct fi_tot {
    _Atomic uint64_t contexts, qps, cqs, posts_send, posts_recv, polls, cqe, cqe_err;
    _Atomic uint64_t posts_op[FI_OP_ATOMIC + 1], cqe_op[FI_OP_ATOMIC + 1]; /* for phases */
};
extern struct fi_tot g_tot;

/*
 * The program's phase (rg_fi_control_v1.set_phase): rules with step=/rep= see only the events
 * of theirs. FI_PHASE_ANY until the program says; a program that never does never fires them.
 */
extern _Atomic int g_step, g_rep;
/* The thread that said the phase last (a kernel thread id): a fault that fires on it fired
 * inside the program's call of that phase; on another (a progress thread) it may have fired
 * between calls, so its event names no phase. */
extern _Atomic long g_phase_tid;
#define FI_TOT(field, n) atomic_fetch_add_explicit(&g_tot.field, (n), memory_order_relaxed)

/*
 * This process's slot of the progress page (fi_progress.c), never NULL: a slot nobody reads
 * when there is no page. fi_progress_open takes a slot (at load and in a fork server's child,
 * remap: the file named again; in a forked child, the parent's mapping).
 */
extern struct rg_fi_progress_slot *g_prog;
void fi_progress_open(bool remap);
#define FI_PROG(field, n) atomic_fetch_add_explicit(&g_prog->field, (n), memory_order_relaxed)

/* ---- lookups the datapath inlines ------------------------------------------------------- */

static inline struct fi_live *fi_live(void)
{
    return atomic_load_explicit(&g_live, memory_order_acquire);
}

/* Whether the live plan asks for the buffer-ownership sanitizer (one load of the plan). */
static inline bool fi_own_on(void)
{
    struct fi_live *lp = fi_live();
    return lp && lp->own;
}

/* Whether the live plan makes UC QPs RC ones. */
static inline bool fi_uc_as_rc(void)
{
    struct fi_live *lp = fi_live();
    return lp && lp->uc_as_rc;
}

/* Whether the live plan asks for the verbs trace; the monotonic clock in ms when it does (the
 * time a trace_post is stamped with: before the provider sees the request), else 0. */
static inline bool fi_tracing(void)
{
    struct fi_live *lp = fi_live();
    return lp && lp->trace;
}
static inline double fi_trace_now(void)
{
    return fi_tracing() ? (double)fi_now_ns() / 1e6 : 0;
}

static inline struct fi_ctx *fi_ctx_of(struct ibv_context *ctx)
{
    int n = atomic_load_explicit(&g_nctx, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (atomic_load_explicit(&g_ctx[i].ctx, memory_order_relaxed) == ctx)
            return &g_ctx[i];
    return NULL;
}

static inline uint32_t fi_hash(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(x ^ (x >> 29));
}

static inline struct fi_qp *fi_qp_find(struct ibv_context *ctx, uint32_t qpn)
{
    uint32_t h = fi_hash((uintptr_t)ctx, qpn);
    for (uint32_t i = 0; i < FI_MAX_QPS; i++) {
        struct fi_qp *q = &g_qp[(h + i) & (FI_MAX_QPS - 1)];
        int st = atomic_load_explicit(&q->state, memory_order_acquire);
        if (st == SLOT_EMPTY)
            return NULL;
        if (st == SLOT_LIVE && q->ctx == ctx && q->qpn == qpn)
            return q;
    }
    return NULL;
}

static inline struct fi_cq *fi_cq_find(const struct ibv_cq *cq)
{
    uint32_t h = fi_hash((uintptr_t)cq, 0);
    for (uint32_t i = 0; i < FI_MAX_CQS; i++) {
        struct fi_cq *c = &g_cq[(h + i) & (FI_MAX_CQS - 1)];
        int st = atomic_load_explicit(&c->state, memory_order_acquire);
        if (st == SLOT_EMPTY)
            return NULL;
        if (st == SLOT_LIVE && c->cq == cq)
            return c;
    }
    return NULL;
}

static inline const char *fi_dev_of(struct ibv_context *ctx)
{
    struct fi_ctx *c = fi_ctx_of(ctx);
    return c ? c->dev : "?";
}

/* What a site knows about the event it is looking at; -1 / NULL where it doesn't apply. */
struct fi_site {
    const char *dev;
    int64_t qpn;
    int qp_ord;
    int cq_ord;
    enum fi_op op;
    enum fi_verb verb;
};

/* ---- call sites (fi_caller.c) ------------------------------------------------------------ */
/* The verbs calls a site is recorded for: the ones a fault lands in. */
enum fi_call {
    FI_CALL_POLL,
    FI_CALL_POST_SEND,
    FI_CALL_POST_RECV,
    FI_CALL_REG_MR,
    FI_CALL_CREATE_QP,
    FI_CALL_CREATE_CQ,
    FI_CALL_ALLOC_PD,
    FI_CALL_KINDS
};
const char *fi_call_name(enum fi_call v);
/* A wrapped call begins (ra: its return address, in the program) and ends; between them the
 * thread's events name that site. */
void fi_call_enter(void *ra, enum fi_call v);
void fi_call_leave(void);
/* One event of kind op at the current site (posts and completions), for the sites rule. */
void fi_call_count(enum fi_op op);
/* Whether the current site is the one rule i's site= names. */
bool fi_call_matches(int rule);
/* The current site as "OBJECT+0xOFF" into caller, and its callers' frames, "OBJ+0xOFF<..."
 * (up to FI_SITE_DEPTH in all; "" when none could be found) into from; -1 (and "" in both)
 * outside a wrapped call or in no object. */
int fi_call_site(char *caller, size_t clen, char *from, size_t flen);
/* The sites rule's events: one "caller" per site, then "callers". */
void fi_call_summary(const char *why);

/* ---- what one file calls in another ---------------------------------------------------- */
/* fi_shim.c */
void fi_read_rank(void);
void fi_sleep_ms(uint64_t ms);
void fi_qp_summary(struct fi_qp *q, const char *why);
void fi_cq_summary(struct fi_cq *c, const char *why);
void fi_qp_add(struct ibv_qp *qp, uint32_t max_send, uint32_t max_recv, bool srq, int sq_sig_all,
               struct ibv_qp_ex *qx);
void fi_cq_add(struct ibv_cq *cq, struct ibv_cq_ex *cqx);

/* fi_rules.c */
bool fi_fire(struct fi_live *lp, int i, const struct fi_site *s, uint64_t *nth);
void fi_unfire(struct fi_live *lp, int i);
/* The fault event of rule i at site s; d (or NULL) holds what the fault did, in the optional
 * fields of the schema's fault (rg_fi_events.h) with their `has` bits. */
void fi_event_fault(const struct fi_live *lp, int i, const struct fi_site *s, uint64_t nth,
                    const struct rg_evr_fault *d);
/* A fault's detail record, made in place: FI_FD(.has = RG_EVH(fault, ms), .ms = 5). */
#define FI_FD(...) (&(const struct rg_evr_fault){__VA_ARGS__})
#define FI_FD_NOMEM FI_FD(.has = RG_EVH(fault, err), .err = "ENOMEM")
enum fi_op fi_wr_op(enum ibv_wr_opcode op);
void fi_site_qp(struct fi_site *s, const struct fi_qp *q);
/* ra: the call's return address, its site in the program */
bool fi_verb_fails(enum fi_verb v, struct ibv_context *ctx, void *ra);
bool fi_pend_push(struct fi_cq *c, struct fi_qp *q, uint64_t wr_id, enum ibv_wc_status st,
                  enum ibv_wc_opcode op, uint64_t after, bool lost);
void fi_qp_break(struct fi_qp *q);
void fi_count_cqe(struct fi_qp *q, int status, enum ibv_wc_opcode opcode);
void fi_count_post(struct fi_qp *q, enum fi_op op);
bool fi_on_provider_cqe(struct fi_live *lp, struct fi_qp *q, struct fi_cq *c,
                        const struct ibv_cq *cq, int *status, uint32_t *vendor_err,
                        enum ibv_wc_opcode opcode, uint64_t wr_id, uint32_t byte_len);
int fi_on_poll(struct fi_live *lp, struct fi_cq *c);
void fi_arm_pollcqe(struct fi_live *lp, struct fi_cq *c, struct ibv_context *ctx,
                    const struct ibv_wc *wc, int got);

/* fi_ring.c */
void fi_ring_forget(struct fi_ring *r, uint32_t from);
bool fi_retire(struct fi_qp *q, bool recv, bool success, uint64_t wr_id, struct fi_rent *out);
void fi_retired(struct fi_qp *q, struct fi_rent *e, int status, uint32_t byte_len);
bool fi_cqe_is_recv(struct fi_qp *q, const struct ibv_cq *cq, int status, enum ibv_wc_opcode opcode,
                    uint64_t wr_id);
bool fi_signaled(const struct fi_qp *q, const struct ibv_send_wr *w);
int fi_send_run_own(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp, struct ibv_send_wr *wr,
                    struct ibv_send_wr **bad, struct fi_own *pre);
int fi_send_run(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp, struct ibv_send_wr *wr,
                struct ibv_send_wr **bad);
int fi_send_before(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp, struct ibv_send_wr *head,
                   struct ibv_send_wr *prev, struct ibv_send_wr *w, struct ibv_send_wr **bad);
int fi_recv_run(struct fi_qp *q, post_recv_fn post, struct ibv_qp *qp, struct ibv_recv_wr *wr,
                struct ibv_recv_wr **bad);

/* fi_datapath.c */
int fi_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int fi_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int fi_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* Posts to a shared receive queue counted: the totals, the call site, the sanitizer's
 * unsanitized count (fi_rules.c). */
void fi_count_srq_posts(const struct ibv_recv_wr *wr);

/* fi_srq.c: SRQs' posted receives, for corrupt to find the buffer a completion filled. Posts
 * through `post` are recorded; take gives the record of the receive a completion with this
 * wr_id took, false when unknown (an SRQ not followed, or a wr_id that could be two). */
void fi_srq_add(struct ibv_srq *srq, uint32_t max_wr);
/* fi_ring.c's, shared with fi_srq.c: a receive's record, and a push that marks a full ring
 * inexact. */
void fi_rent_recv(struct fi_rent *e, const struct ibv_recv_wr *w);
void fi_ring_push(struct fi_ring *r, const struct fi_rent *e);
void fi_srq_gone(struct ibv_srq *srq);
int fi_srq_post(struct ibv_srq *srq, post_srq_fn post, struct ibv_recv_wr *wr,
                struct ibv_recv_wr **bad);
bool fi_srq_take(struct ibv_srq *srq, uint64_t wr_id, struct fi_rent *out);
/* The program arms a CQ (fi_notify.c): remembered, for the events of the shim's completions. */
int fi_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int fi_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int fi_cqx_start(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr);
int fi_cqx_next(struct ibv_cq_ex *cq);
void fi_qpx_start(struct ibv_qp_ex *qx);
void fi_qpx_send(struct ibv_qp_ex *qx);
void fi_qpx_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr);
int fi_qpx_complete(struct ibv_qp_ex *qx);

/* fi_trace.c (only while fi_tracing()) */
void fi_trace_qp(struct ibv_qp *qp, const struct ibv_qp_attr *a, int mask);
void fi_trace_sends(struct fi_qp *q, const struct ibv_send_wr *wr, const struct ibv_send_wr *end,
                    double at_ms, const char *fate);
void fi_trace_recvs(struct fi_qp *q, const struct ibv_recv_wr *wr, const struct ibv_recv_wr *end,
                    double at_ms, const char *fate);
void fi_trace_cqes(struct fi_cq *c, struct ibv_cq *cq, const struct ibv_wc *wc, int n);
void fi_trace_cqe_ex(struct ibv_cq_ex *cq, const struct fi_qp *q);
void fi_trace_gap(struct fi_qp *q, const char *why);
void fi_trace_hole(const char *why);
void fi_trace_polled(struct fi_cq *c, int got);

/* fi_late.c */
void fi_late_atfork(void);
bool fi_late_hold(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp,
                  const struct ibv_send_wr *w, uint64_t ms);
void fi_late_drop(struct fi_qp *q);

#pragma GCC visibility pop

#endif
