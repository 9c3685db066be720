/* SPDX-License-Identifier: MIT */
/*
 * The interposer. Loaded by LD_PRELOAD, it wraps the exported verbs entry points and patches the
 * datapath function pointers of every context it opens: ibv_post_send, ibv_post_recv and
 * ibv_poll_cq are static inline in <infiniband/verbs.h> and call through ctx->ops, which the
 * provider filled in a writable table, so the only way in is to swap those pointers after
 * ibv_open_device. The context itself is never replaced: verbs_context sits before it in memory.
 *
 * Extended objects carry their own pointers (ibv_cq_ex's start_poll/next_poll, ibv_qp_ex's wr_*),
 * so they are patched where they are created. Programs that dlopen libibverbs and look symbols up
 * on that handle (NCCL, JACCL) would bypass a plain preload, so dlopen of libibverbs returns the
 * shim's own handle: a lookup there finds the wrappers first, then libibverbs as a dependency.
 *
 * With no plan and one provider, ibv_poll_cq, ibv_post_send and ibv_post_recv are one atomic
 * load, a test and a tail call (the extended-CQ/QP wrappers and SRQ posts still look their
 * object up). With a plan, the datapath does
 * relaxed atomic counting and table lookups and never allocates: QP and CQ state lives in fixed
 * tables filled when the objects are created.
 */
#include "fi_internal.h"
#include "rg_parse.h"
#include "rg_faultinject.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

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

static struct {
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
    int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
    int (*dealloc_pd)(struct ibv_pd *);
    int (*dereg_mr)(struct ibv_mr *);
    struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *);
    int (*destroy_comp_channel)(struct ibv_comp_channel *);
} real;

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
    uint32_t m_cqe;  /* error, corrupt */
    uint32_t m_send; /* lose, delay op=send|write, nomem verb=post_send */
    uint32_t m_recv; /* delay op=recv, nomem verb=post_recv */
    uint32_t m_verb; /* nomem on the control verbs */
    uint32_t m_first;
    uint32_t m_swap;
};

static _Atomic(struct fi_live *) g_live;

/*
 * Verbs objects alive now, by kind, for the exit's "alive" event: what a program still holds
 * when it ends is a leak (QPs and CQs are counted from their slots). Signed: an object made
 * by a path the shim does not wrap and freed by one it does drives a count below zero, which
 * is read as "not known", never as a leak.
 */
static struct {
    _Atomic int64_t contexts, pds, mrs, channels;
} g_alive;
static _Atomic int g_first_done; /* delay_first: the first post has happened */
static uint64_t g_t0_ns;
static _Atomic int g_rank = -1;
static char g_rank_err[160];    /* why the rank variable could not be read, "" when it could */
static char g_self_path[4096];  /* the shim as loaded, for dlopen(RTLD_NOLOAD) of itself */
static char g_verbs_path[4096]; /* realpath of the libibverbs holding the real ibv_open_device */
static int g_snapshot_sig;      /* the signal the snapshot handler took, 0 for none */

/* ---- contexts ----------------------------------------------------------------------------- */
struct fi_ctx {
    _Atomic(struct ibv_context *) ctx;
    char dev[IBV_SYSFS_NAME_MAX];
    poll_fn poll;
    post_send_fn post_send;
    post_recv_fn post_recv;
    post_srq_fn post_srq_recv;
    create_cq_ex_fn create_cq_ex;
    create_qp_ex_fn create_qp_ex;
};
static struct fi_ctx g_ctx[FI_MAX_CTX];
/* The provider's datapath functions when every context opened so far has the same ones (one
 * provider, the usual case): the pass-through then needs no context lookup. NULL otherwise. */
static struct {
    _Atomic(poll_fn) poll;
    _Atomic(post_send_fn) post_send;
    _Atomic(post_recv_fn) post_recv;
    bool mixed;
} g_one;
static _Atomic int g_nctx;                                 /* high-water mark of g_ctx in use */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* creation and destruction only */

/* ---- QPs and CQs -------------------------------------------------------------------------- */
enum { SLOT_EMPTY = 0, SLOT_LIVE = 1, SLOT_DEAD = 2 };

struct fi_rent { /* a posted work request: its id, for receives the buffer it fills */
    uint64_t wr_id;
    uint64_t addr;
    uint32_t len;
    bool signaled;      /* sends: whether its completion is reported on success */
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
    _Atomic uint64_t posts_send, posts_recv, cqe_send, cqe_recv, cqe_err;
    /* By operation (enum fi_op), the events an op= filter counts: posts, and completions that
     * succeeded (the only ones error and corrupt look at). A sweep plans its points from them. */
    _Atomic uint64_t posts_op[FI_OP_ATOMIC + 1], cqe_op[FI_OP_ATOMIC + 1];
    _Atomic int late;                      /* requests held by the late fault, not yet posted */
    _Atomic uint64_t sig_posted, sig_done; /* signaled sends really posted / completed */
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
    _Atomic uint64_t stall_until_ns;
    int (*start_poll)(struct ibv_cq_ex *, struct ibv_poll_cq_attr *);
    int (*next_poll)(struct ibv_cq_ex *);
    bool is_ex; /* polled through start_poll/next_poll: synthetic completions can't be added */
    pthread_mutex_t plock;
    _Atomic int npend;
    int pcap;
    struct fi_pend *pend; /* allocated with the CQ: its depth plus FI_PEND_MIN */
};

static struct fi_qp g_qp[FI_MAX_QPS];
static struct fi_cq g_cq[FI_MAX_CQS];
static _Atomic int g_qp_ord, g_cq_ord;

/*
 * What the shim saw in this process since load, for the "totals" event. Objects are counted at
 * creation, plan or not, so a runner can tell a rank that made no verbs objects at all from one
 * whose transport bypassed the shim; posts, polls and completions only while a plan is live
 * (the pass-through counts nothing).
 */
static struct {
    _Atomic uint64_t contexts, qps, cqs, posts_send, posts_recv, polls, cqe, cqe_err;
    _Atomic uint64_t posts_op[FI_OP_ATOMIC + 1], cqe_op[FI_OP_ATOMIC + 1]; /* for phases */
} g_tot;

/*
 * The program's phase (rg_fi_control_v1.set_phase): rules with step=/rep= see only the events
 * of theirs. FI_PHASE_ANY until the program says; a program that never does never fires them.
 */
static _Atomic int g_step = FI_PHASE_ANY, g_rep = FI_PHASE_ANY;
#define FI_TOT(field, n) atomic_fetch_add_explicit(&g_tot.field, (n), memory_order_relaxed)

/* ---- small helpers ------------------------------------------------------------------------ */
uint64_t fi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double fi_elapsed_ms(void)
{
    return (double)(fi_now_ns() - g_t0_ns) / 1e6;
}

int fi_rank(void)
{
    return atomic_load_explicit(&g_rank, memory_order_relaxed);
}

/* The first rank variable that is set, as launchers and JACCL name it. */
static void fi_read_rank(void)
{
    static const char *const names[] = {
        "RG_FI_RANK",           "RG_RANK",  "MLX_RANK",    "JACCL_RANK",
        "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
    int rank = -1;
    g_rank_err[0] = '\0';
    /* The first one set decides: a bad value is an error (fatal under a plan, whose rank=
     * filters it would silently mis-aim), never a reason to read the next name. */
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *v = getenv(names[i]);
        int64_t r;
        if (!v || !*v)
            continue;
        if (rg_parse_int(v, 0, 999999, &r) == 0) {
            rank = (int)r;
        } else {
            char shown[72];
            snprintf(g_rank_err, sizeof(g_rank_err), "%s='%s': not a rank number (0..999999)",
                     names[i], rg_parse_show(v, shown, sizeof(shown)));
        }
        break;
    }
    atomic_store(&g_rank, rank);
}

static void fi_sleep_ms(uint64_t ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    int saved = errno;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    errno = saved;
}

static struct fi_live *fi_live(void)
{
    return atomic_load_explicit(&g_live, memory_order_acquire);
}

/* Whether the live plan asks for the buffer-ownership sanitizer (one load of the plan). */
static bool fi_own_on(void)
{
    struct fi_live *lp = fi_live();
    return lp && lp->own;
}

static struct fi_ctx *fi_ctx_of(struct ibv_context *ctx)
{
    int n = atomic_load_explicit(&g_nctx, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (atomic_load_explicit(&g_ctx[i].ctx, memory_order_relaxed) == ctx)
            return &g_ctx[i];
    return NULL;
}

static uint32_t fi_hash(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(x ^ (x >> 29));
}

static struct fi_qp *fi_qp_find(struct ibv_context *ctx, uint32_t qpn)
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

static struct fi_cq *fi_cq_find(const struct ibv_cq *cq)
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

static const char *fi_dev_of(struct ibv_context *ctx)
{
    struct fi_ctx *c = fi_ctx_of(ctx);
    return c ? c->dev : "?";
}

/* ---- rule evaluation ---------------------------------------------------------------------- */
/* What a site knows about the event it is looking at; -1 / NULL where it doesn't apply. */
struct fi_site {
    const char *dev;
    int64_t qpn;
    int qp_ord;
    int cq_ord;
    enum fi_op op;
    enum fi_verb verb;
};

static bool fi_filter(const struct fi_rule *r, const struct fi_site *s)
{
    if (r->rank >= 0 && r->rank != fi_rank())
        return false;
    if (r->dev[0] && (!s->dev || strcmp(r->dev, s->dev) != 0))
        return false;
    if (r->qp_num >= 0 && r->qp_num != s->qpn)
        return false;
    if (r->qp_ord >= 0 && r->qp_ord != s->qp_ord)
        return false;
    if (r->cq_ord >= 0 && r->cq_ord != s->cq_ord)
        return false;
    if (r->op != FI_OP_ANY && r->op != s->op)
        return false;
    if (r->verb != FI_VERB_NONE && r->verb != s->verb)
        return false;
    if (r->step != FI_PHASE_ANY &&
        (r->step != atomic_load_explicit(&g_step, memory_order_relaxed) ||
         (r->rep != FI_PHASE_ANY && r->rep != atomic_load_explicit(&g_rep, memory_order_relaxed))))
        return false;
    if (r->after_ms || r->before_ms != UINT64_MAX) {
        double t = fi_elapsed_ms();
        if (t < (double)r->after_ms || t >= (double)r->before_ms)
            return false;
    }
    return true;
}

/* Counts the event for rule i and says whether the rule fires on it (claiming one fire). */
static bool fi_fire(struct fi_live *lp, int i, const struct fi_site *s, uint64_t *nth)
{
    const struct fi_rule *r = &lp->plan.rules[i];
    if (!fi_filter(r, s))
        return false;
    uint64_t n = atomic_fetch_add_explicit(&lp->matched[i], 1, memory_order_relaxed) + 1;
    uint64_t fired = atomic_load_explicit(&lp->fired[i], memory_order_relaxed);
    for (;;) {
        if (!fi_rule_fires(r, i, n, fired))
            return false;
        /* Two threads may both decide to fire; the count limit still holds. */
        if (atomic_compare_exchange_weak(&lp->fired[i], &fired, fired + 1))
            break;
    }
    *nth = n;
    return true;
}

static void fi_event_fault(const struct fi_live *lp, int i, const struct fi_site *s, uint64_t nth,
                           const char *detail)
{
    const struct fi_rule *r = &lp->plan.rules[i];
    fi_event("fault",
             "\"fault\":\"%s\",\"rule\":%d,\"line\":%d,\"dev\":\"%s\",\"qp\":%lld,\"qp_ord\":%d,"
             "\"cq_ord\":%d,\"op\":\"%s\",\"nth\":%llu%s%s",
             fi_kind_name(r->kind), i, r->line, s->dev ? s->dev : "", (long long)s->qpn, s->qp_ord,
             s->cq_ord, s->verb != FI_VERB_NONE ? fi_verb_name(s->verb) : fi_op_name(s->op),
             (unsigned long long)nth, detail && *detail ? "," : "", detail ? detail : "");
}

static enum fi_op fi_wc_op(enum ibv_wc_opcode op)
{
    switch (op) {
    case IBV_WC_SEND:
        return FI_OP_SEND;
    case IBV_WC_RDMA_WRITE:
        return FI_OP_WRITE;
    case IBV_WC_RDMA_READ:
        return FI_OP_READ;
    case IBV_WC_COMP_SWAP:
    case IBV_WC_FETCH_ADD:
        return FI_OP_ATOMIC;
    case IBV_WC_RECV:
    case IBV_WC_RECV_RDMA_WITH_IMM:
        return FI_OP_RECV;
    default:
        return FI_OP_ANY;
    }
}

static enum fi_op fi_wr_op(enum ibv_wr_opcode op)
{
    switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_SEND_WITH_INV:
        return FI_OP_SEND;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return FI_OP_WRITE;
    case IBV_WR_RDMA_READ:
        return FI_OP_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return FI_OP_ATOMIC;
    default:
        return FI_OP_ANY;
    }
}

/* The QP's own record names its device: no context lookup on the datapath. */
static void fi_site_qp(struct fi_site *s, const struct fi_qp *q)
{
    s->dev = q->c ? q->c->dev : "?";
    s->qpn = q->qpn;
    s->qp_ord = q->ord;
    s->cq_ord = -1;
    s->op = FI_OP_ANY;
    s->verb = FI_VERB_NONE;
}

/* nomem on a control verb: true when this call must fail with ENOMEM. */
static bool fi_verb_fails(enum fi_verb v, struct ibv_context *ctx)
{
    struct fi_live *lp = fi_live();
    if (!lp || !lp->m_verb)
        return false;
    struct fi_site s = {.dev = ctx ? fi_dev_of(ctx) : NULL,
                        .qpn = -1,
                        .qp_ord = -1,
                        .cq_ord = -1,
                        .op = FI_OP_ANY,
                        .verb = v};
    bool fail = false;
    uint64_t nth;
    for (uint32_t m = lp->m_verb; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        if (fi_fire(lp, i, &s, &nth)) { /* fi_filter matches the rule's verb= against v */
            fi_event_fault(lp, i, &s, nth, "\"errno\":\"ENOMEM\"");
            fail = true;
        }
    }
    return fail;
}

static void fi_ring_push(struct fi_ring *r, const struct fi_rent *e)
{
    uint32_t next;
    if (!r->cap || (next = (r->tail + 1) % r->cap) == r->head) {
        r->exact = false; /* one request missing: positions no longer line up */
        return;
    }
    r->e[r->tail] = *e;
    r->tail = next;
}

/* A push whose record goes with the entry, or is freed (and counted) when the ring is full. */
static void fi_ring_push_own(struct fi_ring *r, const struct fi_rent *e)
{
    uint32_t tail = r->tail;
    fi_ring_push(r, e);
    if (e->own && r->tail == tail) {
        fi_own_free(e->own);
        fi_own_unsanitized(1);
    }
}

/* The first entry from the head with this wr_id, or UINT32_MAX. */
static uint32_t fi_ring_find(const struct fi_ring *r, uint64_t wr_id)
{
    for (uint32_t h = r->head; r->cap && h != r->tail; h = (h + 1) % r->cap)
        if (r->e[h].wr_id == wr_id)
            return h;
    return UINT32_MAX;
}

/*
 * Retires the entries from the head up to and including position h. Those before h completed
 * unseen (unsignaled sends, which a later completion retires in order): their records go on
 * the list at *unseen, for the caller to check once the ring's lock is released. h's record
 * goes to *out, whose caller checks it with the completion's status.
 */
static void fi_ring_take(struct fi_ring *r, uint32_t h, struct fi_own ***unseen,
                         struct fi_rent *out)
{
    for (uint32_t k = r->head; k != h; k = (k + 1) % r->cap) {
        fi_own_defer(unseen, r->e[k].own, r->e[k].wr_id);
        r->e[k].own = NULL;
    }
    *out = r->e[h];
    r->e[h].own = NULL;
    r->head = (h + 1) % r->cap;
}

/* Forgets what the ring holds from position `from` to its tail (a break, a refused post, a
 * slot reused): the requests are gone, so their records are freed unchecked. */
static void fi_ring_forget(struct fi_ring *r, uint32_t from)
{
    for (uint32_t k = from; r->cap && k != r->tail; k = (k + 1) % r->cap) {
        fi_own_free(r->e[k].own);
        r->e[k].own = NULL;
    }
}

/*
 * Retires the request a completion stands for (see struct fi_ring) and copies it to *out.
 * `success` matters for sends: an error completion may belong to an unsignaled request, so it
 * retires up to the first request with its wr_id instead. False when no entry stands for it.
 */
static bool fi_ring_retire(struct fi_ring *r, bool recv, bool success, uint64_t wr_id,
                           struct fi_own ***unseen, struct fi_rent *out)
{
    uint32_t h = UINT32_MAX;
    if (!r->cap || r->head == r->tail)
        return false;
    if (!r->exact || (!recv && !success)) {
        h = fi_ring_find(r, wr_id);
    } else if (recv) {
        h = r->head;
    } else {
        for (uint32_t k = r->head; k != r->tail && h == UINT32_MAX; k = (k + 1) % r->cap)
            if (r->e[k].signaled)
                h = k;
    }
    if (h == UINT32_MAX)
        return false;
    fi_ring_take(r, h, unseen, out);
    return true;
}

/*
 * A completion for a posted request: drops it (and what it retires) from its ring. The
 * requests it retired unseen are checked here; its own record stays in out->own for
 * fi_retired(), once the completion's status is final.
 */
static bool fi_retire(struct fi_qp *q, bool recv, bool success, uint64_t wr_id, struct fi_rent *out)
{
    struct fi_own *unseen = NULL, **tail = &unseen;
    pthread_mutex_lock(&q->rlock);
    bool found = fi_ring_retire(recv ? &q->rring : &q->sring, recv, success, wr_id, &tail, out);
    pthread_mutex_unlock(&q->rlock);
    fi_own_check_list(unseen, q->qpn);
    return found;
}

/* Checks and frees a retired request's ownership record, with the status the program will
 * see (an error the shim made up included: a receive's buffer is then poison again). Before
 * the program sees the completion: from then on the buffer is its own again. */
static void fi_retired(struct fi_qp *q, struct fi_rent *e, int status, uint32_t byte_len)
{
    if (!e->own)
        return;
    fi_own_check(e->own, q->qpn, e->wr_id, status == IBV_WC_SUCCESS, byte_len);
    fi_own_free(e->own);
    e->own = NULL;
}

/* Whether a completion of q came from its receive queue. A successful one says so in its
 * opcode; an error's opcode is undefined, so the CQ it came on, or the ring holding its wr_id,
 * decides, and the opcode only when neither can. */
static bool fi_cqe_is_recv(struct fi_qp *q, const struct ibv_cq *cq, int status,
                           enum ibv_wc_opcode opcode, uint64_t wr_id)
{
    if (status == IBV_WC_SUCCESS)
        return (opcode & IBV_WC_RECV) != 0;
    if (q->qp->send_cq != q->qp->recv_cq)
        return cq == q->qp->recv_cq;
    pthread_mutex_lock(&q->rlock);
    bool in_s = fi_ring_find(&q->sring, wr_id) != UINT32_MAX;
    bool in_r = fi_ring_find(&q->rring, wr_id) != UINT32_MAX;
    pthread_mutex_unlock(&q->rlock);
    return in_s != in_r ? in_r : (opcode & IBV_WC_RECV) != 0;
}

static bool fi_signaled(const struct fi_qp *q, const struct ibv_send_wr *w)
{
    return q->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED);
}

/*
 * Posts a run of sends to the provider and records them. The record is written first and the
 * lock held across the post, so a completion polled at once on another thread finds its entry
 * and two threads posting to one QP record in the provider's order. What the provider refused
 * (from *bad on) leaves the record again. `pre`: the first request's ownership record, made
 * when the program posted it (a late post), or NULL to make them all now.
 */
static int fi_send_run_own(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp,
                           struct ibv_send_wr *wr, struct ibv_send_wr **bad, struct fi_own *pre)
{
    uint64_t sig = 0;
    pthread_mutex_lock(&q->rlock);
    uint32_t tail0 = q->sring.tail, n = 0;
    bool exact0 = q->sring.exact;
    bool own = !pre && fi_own_on();
    for (struct ibv_send_wr *w = wr; w; w = w->next)
        fi_ring_push_own(&q->sring, &(struct fi_rent){.wr_id = w->wr_id,
                                                      .signaled = fi_signaled(q, w),
                                                      .own = w == wr && pre ? pre
                                                             : own ? fi_own_send(qp->context, w)
                                                                   : NULL});
    int rc = post(qp, wr, bad);
    for (struct ibv_send_wr *w = wr; w && !(rc && w == *bad); w = w->next, n++)
        sig += fi_signaled(q, w);
    if (rc && exact0 && q->sring.exact) {
        uint32_t keep = (tail0 + n) % q->sring.cap;
        fi_ring_forget(&q->sring, keep);
        q->sring.tail = keep;
    }
    pthread_mutex_unlock(&q->rlock);
    atomic_fetch_add_explicit(&q->sig_posted, sig, memory_order_relaxed);
    return rc;
}

/* Posts a run of sends whose records are made now (see fi_send_run_own). */
static int fi_send_run(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp,
                       struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    return fi_send_run_own(q, post, qp, wr, bad, NULL);
}

/* Posts the run head..prev that comes before w (none when head is w); the caller's list is
 * cut there only for the post and restored. */
static int fi_send_before(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp,
                          struct ibv_send_wr *head, struct ibv_send_wr *prev, struct ibv_send_wr *w,
                          struct ibv_send_wr **bad)
{
    if (head == w)
        return 0;
    prev->next = NULL;
    int rc = fi_send_run(q, post, qp, head, bad);
    prev->next = w;
    return rc;
}

/* The same for receives; the first SGE is kept for corrupt. */
static int fi_recv_run(struct fi_qp *q, post_recv_fn post, struct ibv_qp *qp,
                       struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    pthread_mutex_lock(&q->rlock);
    uint32_t tail0 = q->rring.tail, n = 0;
    bool exact0 = q->rring.exact;
    bool own = fi_own_on();
    for (struct ibv_recv_wr *w = wr; w; w = w->next)
        fi_ring_push_own(&q->rring,
                         &(struct fi_rent){.wr_id = w->wr_id,
                                           .addr = w->num_sge > 0 ? w->sg_list[0].addr : 0,
                                           .len = w->num_sge > 0 ? w->sg_list[0].length : 0,
                                           .own = own ? fi_own_recv(qp->context, w) : NULL});
    int rc = post(qp, wr, bad);
    for (struct ibv_recv_wr *w = wr; rc && w && w != *bad; w = w->next)
        n++;
    if (rc && exact0 && q->rring.exact) {
        uint32_t keep = (tail0 + n) % q->rring.cap;
        fi_ring_forget(&q->rring, keep);
        q->rring.tail = keep;
    }
    pthread_mutex_unlock(&q->rlock);
    return rc;
}

/* Queues a completion the shim makes; false when the CQ can't take it (it would overrun). */
static bool fi_pend_push(struct fi_cq *c, struct fi_qp *q, uint64_t wr_id, enum ibv_wc_status st,
                         enum ibv_wc_opcode op, uint64_t after, bool lost)
{
    bool ok = false;
    if (!c || c->is_ex || !c->pend)
        return false;
    pthread_mutex_lock(&c->plock);
    int n = atomic_load(&c->npend);
    if (n < c->pcap) {
        struct fi_pend *p = &c->pend[n];
        memset(&p->wc, 0, sizeof(p->wc));
        p->wc.wr_id = wr_id;
        p->wc.status = st;
        p->wc.opcode = op;
        p->wc.qp_num = q->qpn;
        p->q = q;
        p->after = after;
        p->lost = lost;
        atomic_store(&c->npend, n + 1);
        ok = true;
    }
    pthread_mutex_unlock(&c->plock);
    return ok;
}

/*
 * Breaks the QP as a real error does: it is moved to the error state, and every request still
 * outstanding completes with WR_FLUSH_ERR, as will every later one. The two queues differ:
 *
 * - Receives: rxe on Linux 6.1 never completes the receives of a QP in error, which no hardware
 *   NIC does and which would turn an injected error into a hang. Receives always complete, so
 *   the ring holds exactly the outstanding ones: the shim flushes those itself, flushes later
 *   receives at once without posting them, and hides the provider's receive completions.
 * - Sends: the provider flushes its own send queue, and only what is really outstanding (an
 *   unsignaled send it already completed stays silent; the shim cannot know which those are).
 *   So its send completions are let through, a success for the broken QP turned into a flush,
 *   and later sends are posted to it and come back flushed, in order. Only when the move to the
 *   error state failed does the shim flush the send ring itself, as its best guess.
 */
static void fi_qp_break(struct fi_qp *q)
{
    if (atomic_exchange(&q->faulted, 1))
        return;
    struct fi_cq *sc = fi_cq_find(q->qp->send_cq), *rc = fi_cq_find(q->qp->recv_cq);
    int lost = 0;
    if (rc && !rc->is_ex) {
        pthread_mutex_lock(&q->rlock);
        struct fi_ring *r = &q->rring;
        for (uint32_t h = r->head; r->cap && h != r->tail; h = (h + 1) % r->cap)
            lost += !fi_pend_push(rc, q, r->e[h].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, false);
        fi_ring_forget(r, r->head);
        r->head = r->tail;
        pthread_mutex_unlock(&q->rlock);
    }
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    int saved = errno; /* the program's poll must not see our modify_qp's errno */
    int err = real.modify_qp(q->qp, &a, IBV_QP_STATE);
    errno = saved;
    if (err) {
        fi_event("note", "\"what\":\"modify_qp to ERR failed\",\"qp\":%u,\"errno\":%d", q->qpn,
                 err);
        if (sc && !sc->is_ex) {
            pthread_mutex_lock(&q->rlock);
            struct fi_ring *r = &q->sring;
            for (uint32_t h = r->head; r->cap && h != r->tail; h = (h + 1) % r->cap)
                lost +=
                    !fi_pend_push(sc, q, r->e[h].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, false);
            fi_ring_forget(r, r->head);
            r->head = r->tail;
            q->sq_by_shim = true;
            pthread_mutex_unlock(&q->rlock);
        }
    }
    if (lost)
        fi_event("note", "\"what\":\"%d flushes not made: full CQ\",\"qp\":%u", lost, q->qpn);
}

/*
 * Applies the completion-site rules to one successful completion of QP q: error rewrites its
 * status and breaks the QP; corrupt flips one bit of a received payload; kill and stop end or
 * halt the rank there.
 */
static void fi_on_cqe(struct fi_live *lp, struct fi_qp *q, struct fi_cq *c, int *status,
                      uint32_t *vendor_err, enum ibv_wc_opcode opcode, uint64_t wr_id,
                      uint32_t byte_len, const struct fi_rent *e)
{
    struct fi_site s;
    uint64_t nth;
    fi_site_qp(&s, q);
    s.cq_ord = c ? c->ord : -1;
    s.op = fi_wc_op(opcode);
    for (uint32_t m = lp->m_cqe; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        const struct fi_rule *r = &lp->plan.rules[i];
        if (r->kind == FI_CORRUPT && s.op != FI_OP_RECV)
            continue;
        if (!fi_fire(lp, i, &s, &nth))
            continue;
        if (r->kind == FI_KILL || r->kind == FI_STOP) {
            /* The event is written (one write) before the signal: the runner tells a planned
             * death from a crash by it. The completion is the program's if it ever runs on. */
            char d[96];
            snprintf(d, sizeof(d), "\"signal\":\"%s\",\"wr_id\":%llu",
                     r->kind == FI_KILL ? "SIGKILL" : "SIGSTOP", (unsigned long long)wr_id);
            fi_event_fault(lp, i, &s, nth, d);
            raise(r->kind == FI_KILL ? SIGKILL : SIGSTOP);
            continue;
        }
        if (r->kind == FI_EXIT) {
            /* exit(), not _exit(): a program that returns early runs its atexit handlers and
             * the shim's own, which records what was still alive. */
            char d[96];
            snprintf(d, sizeof(d), "\"exit\":%d,\"wr_id\":%llu", r->code,
                     (unsigned long long)wr_id);
            fi_event_fault(lp, i, &s, nth, d);
            exit(r->code);
        }
        if (r->kind == FI_ERROR) {
            char d[96];
            snprintf(d, sizeof(d), "\"status\":\"%s\",\"code\":%d,\"wr_id\":%llu",
                     fi_status_name(r->status), r->status, (unsigned long long)wr_id);
            *status = r->status;
            *vendor_err = 0;
            fi_event_fault(lp, i, &s, nth, d);
            fi_qp_break(q);
            return;
        }
        uint32_t span = byte_len;
        if (!e || !e->addr || !byte_len) {
            fi_event_fault(lp, i, &s, nth, "\"skipped\":\"receive buffer unknown or empty\"");
            continue;
        }
        if (span > e->len)
            span = e->len;
        uint64_t bit = r->bit >= 0 ? (uint64_t)r->bit
                                   : (uint64_t)(fi_draw(r->seed, i, nth) * (double)span * 8.0);
        char d[96];
        if (bit >= (uint64_t)span * 8) {
            snprintf(d, sizeof(d), "\"skipped\":\"bit %llu beyond %u bytes\"",
                     (unsigned long long)bit, span);
        } else {
            ((volatile uint8_t *)(uintptr_t)e->addr)[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            snprintf(d, sizeof(d), "\"byte\":%llu,\"bit\":%u,\"wr_id\":%llu",
                     (unsigned long long)(bit / 8), (unsigned)(bit % 8), (unsigned long long)wr_id);
        }
        fi_event_fault(lp, i, &s, nth, d);
    }
}

static void fi_count_cqe(struct fi_qp *q, int status, enum ibv_wc_opcode opcode)
{
    if (status == IBV_WC_SUCCESS) {
        atomic_fetch_add_explicit(&q->cqe_op[fi_wc_op(opcode)], 1, memory_order_relaxed);
        FI_TOT(cqe_op[fi_wc_op(opcode)], 1);
    }
    if (status != IBV_WC_SUCCESS) {
        atomic_fetch_add_explicit(&q->cqe_err, 1, memory_order_relaxed);
        FI_TOT(cqe_err, 1);
    } else if (opcode & IBV_WC_RECV)
        atomic_fetch_add_explicit(&q->cqe_recv, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&q->cqe_send, 1, memory_order_relaxed);
}

static void fi_count_post(struct fi_qp *q, enum fi_op op)
{
    bool recv = op == FI_OP_RECV;
    atomic_fetch_add_explicit(&q->posts_op[op], 1, memory_order_relaxed);
    FI_TOT(posts_op[op], 1);
    atomic_fetch_add_explicit(recv ? &q->posts_recv : &q->posts_send, 1, memory_order_relaxed);
    if (recv)
        FI_TOT(posts_recv, 1);
    else
        FI_TOT(posts_send, 1);
}

/*
 * One completion from the provider for QP q, before the program sees it: retires its request,
 * applies the completion rules, and after a break turns it into what a broken QP reports.
 * Returns false when the program must not see it (a receive the shim already flushed).
 */
static bool fi_on_provider_cqe(struct fi_live *lp, struct fi_qp *q, struct fi_cq *c,
                               const struct ibv_cq *cq, int *status, uint32_t *vendor_err,
                               enum ibv_wc_opcode opcode, uint64_t wr_id, uint32_t byte_len)
{
    bool recv = fi_cqe_is_recv(q, cq, *status, opcode, wr_id);
    bool broken = atomic_load_explicit(&q->faulted, memory_order_relaxed);
    if (broken && recv && !(c && c->is_ex))
        return false;
    if (broken && !recv && q->sq_by_shim)
        return false;
    struct fi_rent e;
    bool have = fi_retire(q, recv, *status == IBV_WC_SUCCESS, wr_id, &e);
    /* Lost sends wait for the signaled sends before them, whatever their status. */
    if (!recv && (have ? e.signaled : *status == IBV_WC_SUCCESS))
        atomic_fetch_add_explicit(&q->sig_done, 1, memory_order_relaxed);
    if (broken) {
        if (*status == IBV_WC_SUCCESS)
            *status = IBV_WC_WR_FLUSH_ERR;
    } else if (*status == IBV_WC_SUCCESS && lp->m_cqe) {
        fi_on_cqe(lp, q, c, status, vendor_err, opcode, wr_id, byte_len, have ? &e : NULL);
    }
    if (have)
        fi_retired(q, &e, *status, byte_len);
    fi_count_cqe(q, *status, opcode);
    return true;
}

/* Poll-site rules (negpoll, stall) for CQ c. Returns 1 to go on, 0 to report an empty CQ, or
 * the negative value to return. */
static int fi_on_poll(struct fi_live *lp, struct fi_cq *c)
{
    atomic_fetch_add_explicit(&c->polls, 1, memory_order_relaxed);
    FI_TOT(polls, 1);
    int result = 1;
    if (lp->m_poll) {
        struct fi_site s = {.dev = c->c ? c->c->dev : NULL,
                            .qpn = -1,
                            .qp_ord = -1,
                            .cq_ord = c->ord,
                            .op = FI_OP_ANY,
                            .verb = FI_VERB_NONE};
        uint64_t nth;
        for (uint32_t m = lp->m_poll; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            const struct fi_rule *r = &lp->plan.rules[i];
            if (r->per_cqe) {
                /* Counted and claimed when the completion was handed out: fires here once. */
                int want = c->ord + 1;
                if (atomic_load_explicit(&lp->armed_cq[i], memory_order_relaxed) != want ||
                    !atomic_compare_exchange_strong(&lp->armed_cq[i], &want, 0))
                    continue;
                nth = atomic_load(&lp->armed_nth[i]);
                atomic_fetch_add(&lp->fired[i], 1);
            } else if (!fi_fire(lp, i, &s, &nth)) {
                continue;
            }
            if (r->kind == FI_NEGPOLL) {
                char d[32];
                snprintf(d, sizeof(d), "\"ret\":%d", r->ret);
                fi_event_fault(lp, i, &s, nth, d);
                if (result > 0)
                    result = r->ret;
            } else {
                char d[32];
                snprintf(d, sizeof(d), "\"ms\":%llu", (unsigned long long)r->ms);
                fi_event_fault(lp, i, &s, nth, d);
                atomic_store(&c->stall_until_ns, fi_now_ns() + r->ms * 1000000u);
            }
        }
    }
    if (result > 0) {
        uint64_t until = atomic_load_explicit(&c->stall_until_ns, memory_order_relaxed);
        if (until) {
            /* Once over, the stall is forgotten, so later polls read no clock for it. */
            if (fi_now_ns() < until)
                result = 0;
            else
                atomic_compare_exchange_strong(&c->stall_until_ns, &until, 0);
        }
    }
    return result;
}

/* per=cqe poll rules: each completion handed out (after any rewriting) is counted, and one
 * that fires arms the rule for this CQ's next poll (a later arm replaces one not yet fired). A
 * completion count is the same in every run, where a poll count is not, so the point is
 * reproducible. */
static void fi_arm_pollcqe(struct fi_live *lp, struct fi_cq *c, struct ibv_context *ctx,
                           const struct ibv_wc *wc, int got)
{
    for (int k = 0; k < got; k++) {
        struct fi_site s = {.dev = c->c ? c->c->dev : NULL, .qpn = -1, .qp_ord = -1};
        struct fi_qp *q = fi_qp_find(ctx, wc[k].qp_num);
        if (q)
            fi_site_qp(&s, q);
        s.cq_ord = c->ord;
        s.op = fi_wc_op(wc[k].opcode);
        s.verb = FI_VERB_NONE;
        for (uint32_t m = lp->m_pollcqe; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            uint64_t nth;
            if (!fi_fire(lp, i, &s, &nth))
                continue;
            /* Not fired until a poll delivers it: a completion with no poll after it (the
             * program's last) must read as a fault that never fired, not one swallowed. */
            atomic_fetch_sub(&lp->fired[i], 1);
            atomic_store(&lp->armed_nth[i], nth);
            atomic_store(&lp->armed_cq[i], c->ord + 1);
        }
    }
}

/* ---- datapath wrappers -------------------------------------------------------------------- */
__attribute__((noinline)) static int fi_poll_cq_slow(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
    struct fi_ctx *cx = fi_ctx_of(cq->context);
    struct fi_live *lp = fi_live();
    if (!lp || !cx)
        return cx ? cx->poll(cq, ne, wc) : -1;
    struct fi_cq *c = fi_cq_find(cq);
    if (c) {
        int pre = fi_on_poll(lp, c);
        if (pre <= 0)
            return pre;
    }
    int got = cx->poll(cq, ne, wc);
    if (got < 0)
        return got;
    int saved = errno, kept = 0;
    for (int k = 0; k < got; k++) {
        struct fi_qp *q = fi_qp_find(cq->context, wc[k].qp_num);
        if (q) {
            int status = (int)wc[k].status;
            uint32_t ve = wc[k].vendor_err;
            if (!fi_on_provider_cqe(lp, q, c, cq, &status, &ve, wc[k].opcode, wc[k].wr_id,
                                    wc[k].byte_len))
                continue;
            wc[k].vendor_err = ve;
            wc[k].status = (enum ibv_wc_status)status;
        }
        if (kept != k)
            wc[kept] = wc[k];
        kept++;
    }
    got = kept;
    /* The shim's own completions: flushes at once, lost sends once all before them are done. */
    if (c && atomic_load_explicit(&c->npend, memory_order_relaxed) && got < ne) {
        pthread_mutex_lock(&c->plock);
        int n = atomic_load(&c->npend), keep = 0;
        for (int k = 0; k < n; k++) {
            struct fi_pend *p = &c->pend[k];
            if (got < ne && (!p->after || atomic_load(&p->q->sig_done) >= p->after)) {
                wc[got] = p->wc;
                if (p->wc.status == IBV_WC_SUCCESS && atomic_load(&p->q->faulted))
                    wc[got].status = IBV_WC_WR_FLUSH_ERR;
                if (p->lost)
                    atomic_fetch_add(&p->q->sig_done, 1);
                fi_count_cqe(p->q, (int)wc[got].status, wc[got].opcode);
                got++;
            } else {
                c->pend[keep++] = *p;
            }
        }
        atomic_store(&c->npend, keep);
        pthread_mutex_unlock(&c->plock);
    }
    if (c) {
        atomic_fetch_add_explicit(&c->cqe, (uint64_t)got, memory_order_relaxed);
        FI_TOT(cqe, (uint64_t)got);
        if (lp->m_pollcqe)
            fi_arm_pollcqe(lp, c, cq->context, wc, got);
    }
    errno = saved;
    return got;
}

/* The pass-through: with no plan and one provider, a load, a test and a tail call. */
static int fi_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
    poll_fn one = atomic_load_explicit(&g_one.poll, memory_order_relaxed);
    if (__builtin_expect(one && !atomic_load_explicit(&g_live, memory_order_relaxed), 1))
        return one(cq, ne, wc);
    return fi_poll_cq_slow(cq, ne, wc);
}

static void fi_first_post(struct fi_live *lp, struct fi_qp *q, enum fi_op op)
{
    if (!lp->m_first || atomic_load_explicit(&g_first_done, memory_order_relaxed))
        return;
    if (atomic_exchange(&g_first_done, 1))
        return;
    struct fi_site s;
    uint64_t nth;
    fi_site_qp(&s, q);
    s.op = op;
    for (uint32_t m = lp->m_first; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        if (fi_fire(lp, i, &s, &nth)) {
            char d[32];
            snprintf(d, sizeof(d), "\"ms\":%llu", (unsigned long long)lp->plan.rules[i].ms);
            fi_event_fault(lp, i, &s, nth, d);
            fi_sleep_ms(lp->plan.rules[i].ms);
        }
    }
}

/* Queues the local success completion of a send that is dropped instead of posted. */
/*
 * The late fault: ibv_post_send returns at once and the request is posted for real D ms later
 * by the shim's own thread, so the NIC reads the program's buffer late, as real hardware may
 * (rxe on loopback reads it inside ibv_post_send, which hides every buffer-reuse bug). Every
 * later request on that QP waits behind it, so the queue keeps its order. Held requests live
 * in a fixed pool, filled on the datapath without allocating; the thread starts at the first.
 */
#define FI_LATE_MAX 256
#define FI_LATE_SGE 4

struct fi_late {
    bool used;
    uint64_t seq, due_ns;
    struct fi_qp *q;
    post_send_fn post;
    struct ibv_qp *qp;
    struct ibv_send_wr wr;
    struct ibv_sge sge[FI_LATE_SGE];
    struct fi_own *own; /* taken when the program posted: the buffer was the NIC's from then */
};

static struct fi_late g_late[FI_LATE_MAX];
static pthread_mutex_t g_late_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_late_cond;
static bool g_late_started;
static uint64_t g_late_seq;

/* Posts every held request that is due, in the order they were held; returns the next due. */
static uint64_t fi_late_post_due(uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (;;) {
        struct fi_late *e = NULL;
        for (int i = 0; i < FI_LATE_MAX; i++)
            if (g_late[i].used && g_late[i].due_ns <= now && (!e || g_late[i].seq < e->seq))
                e = &g_late[i];
        if (!e)
            break;
        struct ibv_send_wr *bad = NULL;
        int rc = fi_send_run_own(e->q, e->post, e->qp, &e->wr, &bad, e->own);
        if (rc)
            fi_event("note", "\"what\":\"late post failed\",\"qp\":%u,\"errno\":%d", e->q->qpn, rc);
        e->used = false;
        atomic_fetch_sub(&e->q->late, 1);
    }
    for (int i = 0; i < FI_LATE_MAX; i++)
        if (g_late[i].used && g_late[i].due_ns < next)
            next = g_late[i].due_ns;
    return next;
}

static void *fi_late_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_late_lock);
    for (;;) {
        uint64_t next = fi_late_post_due(fi_now_ns());
        if (next == UINT64_MAX) {
            pthread_cond_wait(&g_late_cond, &g_late_lock);
            continue;
        }
        struct timespec ts = {.tv_sec = (time_t)(next / 1000000000u),
                              .tv_nsec = (long)(next % 1000000000u)};
        pthread_cond_timedwait(&g_late_cond, &g_late_lock, &ts);
    }
    return NULL;
}

/* Called with g_late_lock held. The thread takes no signal: the program's are the program's. */
static bool fi_late_start(void)
{
    if (g_late_started)
        return true;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_late_cond, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, NULL, fi_late_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        pthread_detach(t);
        g_late_started = true;
    }
    return g_late_started;
}

/* Holds w for `ms` from now (0: behind what the QP already holds). False: post it now. */
static bool fi_late_hold(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp,
                         const struct ibv_send_wr *w, uint64_t ms)
{
    bool held = false;
    if (w->num_sge < 0 || w->num_sge > FI_LATE_SGE)
        return false;
    pthread_mutex_lock(&g_late_lock);
    uint64_t due = fi_now_ns() + ms * 1000000u;
    /* Behind everything this QP holds already: its queue keeps its order. */
    for (int i = 0; i < FI_LATE_MAX; i++)
        if (g_late[i].used && g_late[i].q == q && g_late[i].due_ns > due)
            due = g_late[i].due_ns;
    for (int i = 0; i < FI_LATE_MAX && !held && fi_late_start(); i++) {
        struct fi_late *e = &g_late[i];
        if (e->used)
            continue;
        *e = (struct fi_late){.used = true,
                              .seq = ++g_late_seq,
                              .due_ns = due,
                              .q = q,
                              .post = post,
                              .qp = qp,
                              .wr = *w,
                              .own = fi_own_on() ? fi_own_send(qp->context, w) : NULL};
        memcpy(e->sge, w->sg_list, (size_t)w->num_sge * sizeof(e->sge[0]));
        e->wr.sg_list = e->sge;
        e->wr.next = NULL;
        atomic_fetch_add(&q->late, 1);
        held = true;
    }
    if (held)
        pthread_cond_signal(&g_late_cond);
    pthread_mutex_unlock(&g_late_lock);
    if (!held)
        fi_event("note",
                 "\"what\":\"late: request posted at once (pool full, or %d SGEs)\","
                 "\"qp\":%u",
                 w->num_sge, q->qpn);
    return held;
}

/* A QP going away takes its held requests with it, unposted. */
static void fi_late_drop(struct fi_qp *q)
{
    int n = 0;
    pthread_mutex_lock(&g_late_lock);
    for (int i = 0; i < FI_LATE_MAX; i++)
        if (g_late[i].used && g_late[i].q == q) {
            g_late[i].used = false;
            fi_own_free(g_late[i].own);
            n++;
        }
    atomic_store(&q->late, 0);
    pthread_mutex_unlock(&g_late_lock);
    if (n)
        fi_event("note", "\"what\":\"late: %d held request(s) dropped with their QP\",\"qp\":%u", n,
                 q->qpn);
}

static void fi_lose(struct fi_qp *q, const struct ibv_send_wr *wr)
{
    if (!fi_signaled(q, wr))
        return;
    /* It counts as posted and signaled: later sends' completions come after it. */
    uint64_t after = atomic_fetch_add(&q->sig_posted, 1);
    fi_pend_push(fi_cq_find(q->qp->send_cq), q, wr->wr_id, IBV_WC_SUCCESS,
                 fi_wr_op(wr->opcode) == FI_OP_WRITE ? IBV_WC_RDMA_WRITE : IBV_WC_SEND, after,
                 true);
}

__attribute__((noinline)) static int fi_post_send_slow(struct ibv_qp *qp, struct ibv_send_wr *wr,
                                                       struct ibv_send_wr **bad)
{
    struct fi_ctx *cx = fi_ctx_of(qp->context);
    struct fi_live *lp = fi_live();
    if (!lp || !cx)
        return cx ? cx->post_send(qp, wr, bad) : EINVAL;
    struct fi_qp *q = fi_qp_find(qp->context, qp->qp_num);
    if (!q)
        return cx->post_send(qp, wr, bad);
    fi_first_post(lp, q, wr ? fi_wr_op(wr->opcode) : FI_OP_ANY);
    if (atomic_load_explicit(&q->faulted, memory_order_relaxed)) {
        /* A QP in error takes the request and completes it flushed, signaled or not: the
         * provider does, its QP being in error, unless it could not be moved there. */
        struct fi_cq *sc = q->sq_by_shim ? fi_cq_find(qp->send_cq) : NULL;
        for (struct ibv_send_wr *w = wr; w; w = w->next) {
            fi_count_post(q, fi_wr_op(w->opcode));
            if (sc)
                fi_pend_push(sc, q, w->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, false);
        }
        return sc ? 0 : fi_send_run(q, cx->post_send, qp, wr, bad);
    }

    struct ibv_send_wr *head = wr, *prev = NULL;
    struct fi_site s;
    fi_site_qp(&s, q);
    for (struct ibv_send_wr *w = wr; w; w = w->next) {
        bool drop = false;
        uint64_t late_ms = 0;
        uint64_t nth;
        s.op = fi_wr_op(w->opcode);
        for (uint32_t m = lp->m_send; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            const struct fi_rule *r = &lp->plan.rules[i];
            if (r->kind == FI_NOMEM) {
                struct fi_site sv = s;
                sv.verb = FI_VERB_POST_SEND;
                if (!fi_fire(lp, i, &sv, &nth))
                    continue;
                fi_event_fault(lp, i, &sv, nth, "\"errno\":\"ENOMEM\"");
                /* Post what came before, then fail here as a full send queue would. */
                int rc = fi_send_before(q, cx->post_send, qp, head, prev, w, bad);
                if (!rc)
                    *bad = w;
                return rc ? rc : ENOMEM;
            }
            if ((r->kind == FI_LOSE || r->kind == FI_LATE) && s.op != FI_OP_SEND &&
                s.op != FI_OP_WRITE)
                continue;
            if (!fi_fire(lp, i, &s, &nth))
                continue;
            if (r->kind == FI_LATE && !late_ms) {
                char d[64];
                snprintf(d, sizeof(d), "\"ms\":%llu,\"wr_id\":%llu", (unsigned long long)r->ms,
                         (unsigned long long)w->wr_id);
                fi_event_fault(lp, i, &s, nth, d);
                late_ms = r->ms;
                continue;
            }
            if (r->kind == FI_DELAY) {
                char d[32];
                snprintf(d, sizeof(d), "\"ms\":%llu", (unsigned long long)r->ms);
                fi_event_fault(lp, i, &s, nth, d);
                fi_sleep_ms(r->ms);
            } else if (r->kind == FI_LOSE && !drop) {
                char d[48];
                snprintf(d, sizeof(d), "\"wr_id\":%llu", (unsigned long long)w->wr_id);
                fi_event_fault(lp, i, &s, nth, d);
                drop = true;
            }
        }
        fi_count_post(q, s.op);
        /* Held by the late fault, or behind a request that is. */
        if (!drop && (late_ms || atomic_load_explicit(&q->late, memory_order_relaxed))) {
            int rc = fi_send_before(q, cx->post_send, qp, head, prev, w, bad);
            if (rc)
                return rc;
            if (fi_late_hold(q, cx->post_send, qp, w, late_ms)) {
                head = w->next;
                prev = w;
                continue;
            }
            head = w;
        }
        if (drop) {
            /* Post the run before this one, then skip it. */
            int rc = fi_send_before(q, cx->post_send, qp, head, prev, w, bad);
            if (rc)
                return rc;
            fi_lose(q, w);
            head = w->next;
        }
        prev = w;
    }
    return head ? fi_send_run(q, cx->post_send, qp, head, bad) : 0;
}

/* The pass-through: with no plan and one provider, a load, a test and a tail call. */
static int fi_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    post_send_fn one = atomic_load_explicit(&g_one.post_send, memory_order_relaxed);
    if (__builtin_expect(one && !atomic_load_explicit(&g_live, memory_order_relaxed), 1))
        return one(qp, wr, bad);
    return fi_post_send_slow(qp, wr, bad);
}

__attribute__((noinline)) static int fi_post_recv_slow(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                                                       struct ibv_recv_wr **bad)
{
    struct fi_ctx *cx = fi_ctx_of(qp->context);
    struct fi_live *lp = fi_live();
    if (!lp || !cx)
        return cx ? cx->post_recv(qp, wr, bad) : EINVAL;
    struct fi_qp *q = fi_qp_find(qp->context, qp->qp_num);
    if (!q)
        return cx->post_recv(qp, wr, bad);
    fi_first_post(lp, q, FI_OP_RECV);
    struct fi_cq *rcq =
        atomic_load_explicit(&q->faulted, memory_order_relaxed) ? fi_cq_find(qp->recv_cq) : NULL;
    if (rcq && !rcq->is_ex) {
        for (struct ibv_recv_wr *w = wr; w; w = w->next) {
            fi_count_post(q, FI_OP_RECV);
            fi_pend_push(rcq, q, w->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, false);
        }
        return 0;
    }
    struct fi_site s;
    fi_site_qp(&s, q);
    s.op = FI_OP_RECV;
    for (struct ibv_recv_wr *w = wr; w && lp->m_recv; w = w->next) {
        uint64_t nth;
        for (uint32_t m = lp->m_recv; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            const struct fi_rule *r = &lp->plan.rules[i];
            struct fi_site sv = s;
            if (r->kind == FI_NOMEM)
                sv.verb = FI_VERB_POST_RECV;
            if (!fi_fire(lp, i, &sv, &nth))
                continue;
            if (r->kind == FI_NOMEM) {
                fi_event_fault(lp, i, &sv, nth, "\"errno\":\"ENOMEM\"");
                /* Everything before w is posted; w and after are not, as bad_wr says. */
                int rc = 0;
                if (w != wr) {
                    struct ibv_recv_wr *p = wr;
                    while (p->next != w)
                        p = p->next;
                    p->next = NULL;
                    for (struct ibv_recv_wr *x = wr; x; x = x->next)
                        fi_count_post(q, FI_OP_RECV);
                    rc = fi_recv_run(q, cx->post_recv, qp, wr, bad);
                    p->next = w;
                }
                if (!rc)
                    *bad = w;
                return rc ? rc : ENOMEM;
            }
            char d[32];
            snprintf(d, sizeof(d), "\"ms\":%llu", (unsigned long long)r->ms);
            fi_event_fault(lp, i, &sv, nth, d);
            fi_sleep_ms(r->ms);
        }
    }
    for (struct ibv_recv_wr *w = wr; w; w = w->next)
        fi_count_post(q, FI_OP_RECV);
    return fi_recv_run(q, cx->post_recv, qp, wr, bad);
}

/* The pass-through: with no plan and one provider, a load, a test and a tail call. */
static int fi_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    post_recv_fn one = atomic_load_explicit(&g_one.post_recv, memory_order_relaxed);
    if (__builtin_expect(one && !atomic_load_explicit(&g_live, memory_order_relaxed), 1))
        return one(qp, wr, bad);
    return fi_post_recv_slow(qp, wr, bad);
}

static int fi_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    /* Counted nowhere and never faulted yet: completions name the QP, not the SRQ entry. */
    struct fi_ctx *cx = fi_ctx_of(srq->context);
    return cx ? cx->post_srq_recv(srq, wr, bad) : EINVAL;
}

/* ---- extended CQs and QPs ----------------------------------------------------------------- */
static void fi_count_cq_cqe(struct fi_cq *c)
{
    atomic_fetch_add_explicit(&c->cqe, 1, memory_order_relaxed);
    FI_TOT(cqe, 1);
}

static int fi_cqx_after(struct fi_cq *c, struct ibv_cq_ex *cq, int rc)
{
    struct fi_live *lp = fi_live();
    /* Without IBV_WC_EX_WITH_QP_NUM the completion can't be tied to a QP: counted, not faulted. */
    if (rc || !lp || !cq->read_qp_num) {
        if (!rc && lp)
            fi_count_cq_cqe(c);
        return rc;
    }
    struct fi_qp *q = fi_qp_find(cq->context, cq->read_qp_num(cq));
    if (!q)
        return rc;
    int status = (int)cq->status;
    enum ibv_wc_opcode op = status == IBV_WC_SUCCESS ? cq->read_opcode(cq) : IBV_WC_SEND;
    uint32_t ve = 0;
    /* An extended CQ's entry can't be hidden or added to, so after a break the provider's own
     * completions are shown (fi_qp_break left the receive ring to them), successes turned into
     * flushes. */
    fi_on_provider_cqe(lp, q, c, ibv_cq_ex_to_cq(cq), &status, &ve, op, cq->wr_id,
                       status == IBV_WC_SUCCESS && cq->read_byte_len ? cq->read_byte_len(cq) : 0);
    cq->status = (enum ibv_wc_status)status;
    fi_count_cq_cqe(c);
    return rc;
}

static int fi_cqx_start(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
    struct fi_cq *c = fi_cq_find(ibv_cq_ex_to_cq(cq));
    struct fi_live *lp = fi_live();
    if (!c)
        return ENOENT; /* unreachable: the CQ was registered before its pointers were patched */
    if (lp) {
        /* An extended poll has no negative return; negpoll applies to ibv_poll_cq only. */
        int pre = fi_on_poll(lp, c);
        if (pre == 0)
            return ENOENT;
    }
    return fi_cqx_after(c, cq, c->start_poll(cq, attr));
}

static int fi_cqx_next(struct ibv_cq_ex *cq)
{
    struct fi_cq *c = fi_cq_find(ibv_cq_ex_to_cq(cq));
    if (!c)
        return ENOENT;
    return fi_cqx_after(c, cq, c->next_poll(cq));
}

static struct fi_qp *fi_qpx(struct ibv_qp_ex *qx)
{
    return fi_qp_find(qx->qp_base.context, qx->qp_base.qp_num);
}

static void fi_qpx_start(struct ibv_qp_ex *qx)
{
    struct fi_qp *q = fi_qpx(qx);
    struct fi_live *lp = fi_live();
    if (q && lp)
        fi_first_post(lp, q, FI_OP_SEND);
    if (q)
        q->wr_start(qx);
}

/* ibv_qp_ex sends are counted, not recorded: the send ring no longer knows what is outstanding. */
static void fi_qpx_untracked(struct fi_qp *q, enum fi_op op)
{
    fi_count_post(q, op);
    if (fi_own_on())
        fi_own_unsanitized(1); /* its gather list is set by calls the shim does not see */
    pthread_mutex_lock(&q->rlock);
    q->sring.exact = false;
    pthread_mutex_unlock(&q->rlock);
}

static void fi_qpx_send(struct ibv_qp_ex *qx)
{
    struct fi_qp *q = fi_qpx(qx);
    if (q && fi_live())
        fi_qpx_untracked(q, FI_OP_SEND);
    if (q)
        q->wr_send(qx);
}

static void fi_qpx_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr)
{
    struct fi_qp *q = fi_qpx(qx);
    if (q && fi_live())
        fi_qpx_untracked(q, FI_OP_WRITE);
    if (q)
        q->wr_rdma_write(qx, rkey, addr);
}

static int fi_qpx_complete(struct ibv_qp_ex *qx)
{
    struct fi_qp *q = fi_qpx(qx);
    if (!q)
        return EINVAL;
    struct fi_live *lp = fi_live();
    if (lp && lp->m_send) {
        struct fi_site s;
        uint64_t nth;
        fi_site_qp(&s, q);
        s.verb = FI_VERB_POST_SEND;
        for (uint32_t m = lp->m_send; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            if (lp->plan.rules[i].kind == FI_NOMEM && fi_fire(lp, i, &s, &nth)) {
                fi_event_fault(lp, i, &s, nth, "\"errno\":\"ENOMEM\"");
                q->wr_abort(qx);
                return ENOMEM;
            }
        }
    }
    return q->wr_complete(qx);
}

/* ---- object tables ------------------------------------------------------------------------ */
/*
 * Outstanding requests of a ring, or -1 when its record is incomplete (see struct fi_ring). Read
 * without the ring's lock: the snapshot handler may have interrupted its holder, and a count a
 * request off is all a racing read can cost.
 */
static long long fi_outstanding(const struct fi_ring *r, bool unknown)
{
    uint32_t cap = r->cap, head = __atomic_load_n(&r->head, __ATOMIC_RELAXED),
             tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
    if (unknown || !__atomic_load_n(&r->exact, __ATOMIC_RELAXED))
        return -1;
    return cap ? (long long)((tail + cap - head) % cap) : 0;
}

/* {"send":N,"recv":N,"write":N,"read":N,"atomic":N}: the events an op= filter would count. */
static void fi_by_op(char *out, size_t len, _Atomic uint64_t *v)
{
    static const enum fi_op ops[] = {FI_OP_SEND, FI_OP_RECV, FI_OP_WRITE, FI_OP_READ, FI_OP_ATOMIC};
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && o < len; i++)
        o += (size_t)snprintf(out + o, len - o, "%s\"%s\":%llu", i ? "," : "{", fi_op_name(ops[i]),
                              (unsigned long long)atomic_load(&v[ops[i]]));
    if (o < len)
        snprintf(out + o, len - o, "}");
}

/* The oldest `max` requests a ring still holds, as a JSON array of {wr_id, len}. */
static void fi_oldest(char *out, size_t len, const struct fi_ring *r, int max)
{
    uint32_t cap = r->cap, head = __atomic_load_n(&r->head, __ATOMIC_RELAXED),
             tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
    size_t o = (size_t)snprintf(out, len, "[");
    for (int i = 0; cap && i < max && (head + (uint32_t)i) % cap != tail && o < len; i++) {
        const struct fi_rent *e = &r->e[(head + (uint32_t)i) % cap];
        o += (size_t)snprintf(out + o, len - o, "%s{\"wr_id\":\"0x%llx\",\"len\":%u}", i ? "," : "",
                              (unsigned long long)e->wr_id, e->len);
    }
    if (o < len)
        snprintf(out + o, len - o, "]");
    if (o >= len - 1)
        snprintf(out, len, "[]"); /* cut short: none rather than broken JSON */
}

static void fi_qp_summary(struct fi_qp *q, const char *why)
{
    char posts[160], cqes[160];
    /* At the deadline a hung rank's oldest requests say what it waits for: their own event,
     * so the summary's line stays within an event's length. */
    if (!strcmp(why, "snapshot")) {
        char snd[320] = "[]", rcv[320] = "[]";
        /* A ring that may miss requests (not exact) lists none rather than the wrong ones. */
        if (__atomic_load_n(&q->sring.exact, __ATOMIC_RELAXED))
            fi_oldest(snd, sizeof(snd), &q->sring, 6);
        if (!q->srq && __atomic_load_n(&q->rring.exact, __ATOMIC_RELAXED))
            fi_oldest(rcv, sizeof(rcv), &q->rring, 6);
        fi_event("outstanding", "\"dev\":\"%s\",\"qp\":%u,\"qp_ord\":%d,\"send\":%s,\"recv\":%s",
                 q->c ? q->c->dev : "?", q->qpn, q->ord, snd, rcv);
    }
    fi_by_op(posts, sizeof(posts), q->posts_op);
    fi_by_op(cqes, sizeof(cqes), q->cqe_op);
    fi_event("qp",
             "\"why\":\"%s\",\"dev\":\"%s\",\"qp\":%u,\"qp_ord\":%d,\"type\":%d,"
             "\"posts_send\":%llu,\"posts_recv\":%llu,\"cqe_send\":%llu,\"cqe_recv\":%llu,"
             "\"cqe_err\":%llu,\"faulted\":%d,\"out_send\":%lld,\"out_recv\":%lld,"
             "\"posts_op\":%s,\"cqe_op\":%s",
             why, q->c ? q->c->dev : "?", q->qpn, q->ord, (int)q->qp->qp_type,
             (unsigned long long)atomic_load(&q->posts_send),
             (unsigned long long)atomic_load(&q->posts_recv),
             (unsigned long long)atomic_load(&q->cqe_send),
             (unsigned long long)atomic_load(&q->cqe_recv),
             (unsigned long long)atomic_load(&q->cqe_err), atomic_load(&q->faulted),
             fi_outstanding(&q->sring, false), fi_outstanding(&q->rring, q->srq), posts, cqes);
}

static void fi_cq_summary(struct fi_cq *c, const char *why)
{
    fi_event("cq", "\"why\":\"%s\",\"dev\":\"%s\",\"cq_ord\":%d,\"polls\":%llu,\"cqe\":%llu", why,
             c->c ? c->c->dev : "?", c->ord, (unsigned long long)atomic_load(&c->polls),
             (unsigned long long)atomic_load(&c->cqe));
}

static void fi_qp_add(struct ibv_qp *qp, uint32_t max_send, uint32_t max_recv, bool srq,
                      int sq_sig_all, struct ibv_qp_ex *qx)
{
    struct fi_ctx *cx = fi_ctx_of(qp->context);
    int ord = atomic_fetch_add(&g_qp_ord, 1), saved = errno;
    pthread_mutex_lock(&g_lock);
    uint32_t h = fi_hash((uintptr_t)qp->context, qp->qp_num);
    struct fi_qp *q = NULL;
    for (uint32_t i = 0; i < FI_MAX_QPS && !q; i++) {
        struct fi_qp *t = &g_qp[(h + i) & (FI_MAX_QPS - 1)];
        if (atomic_load(&t->state) != SLOT_LIVE)
            q = t;
    }
    if (!q) {
        pthread_mutex_unlock(&g_lock);
        fi_event("note", "\"what\":\"QP table full: qp %u is not watched\"", qp->qp_num);
        errno = saved;
        return;
    }
    fi_ring_forget(&q->sring, q->sring.head);
    fi_ring_forget(&q->rring, q->rring.head);
    free(q->sring.e);
    free(q->rring.e);
    memset((char *)q + sizeof(q->state), 0, sizeof(*q) - sizeof(q->state));
    q->ctx = qp->context;
    q->qpn = qp->qp_num;
    q->qp = qp;
    q->c = cx;
    q->ord = ord;
    q->sq_sig_all = sq_sig_all;
    q->srq = srq;
    /* Exact only if every post is seen from the start: a plan is live (see ctl_set_plan). */
    q->sring.exact = q->rring.exact = fi_live() != NULL;
    pthread_mutex_init(&q->rlock, NULL);
    /* Allocated here, at creation, so the datapath never allocates. */
    q->sring.e = calloc(max_send + 1, sizeof(struct fi_rent));
    q->sring.cap = q->sring.e ? max_send + 1 : 0;
    if (!srq && max_recv) {
        q->rring.e = calloc(max_recv + 1, sizeof(struct fi_rent));
        q->rring.cap = q->rring.e ? max_recv + 1 : 0;
    }
    if (qx) {
        q->wr_start = qx->wr_start;
        q->wr_complete = qx->wr_complete;
        q->wr_abort = qx->wr_abort;
        q->wr_send = qx->wr_send;
        q->wr_rdma_write = qx->wr_rdma_write;
    }
    atomic_store_explicit(&q->state, SLOT_LIVE, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    if (qx) {
        if (qx->wr_start)
            qx->wr_start = fi_qpx_start;
        if (qx->wr_complete)
            qx->wr_complete = fi_qpx_complete;
        if (qx->wr_send)
            qx->wr_send = fi_qpx_send;
        if (qx->wr_rdma_write)
            qx->wr_rdma_write = fi_qpx_write;
    }
    errno = saved; /* the program sees the errno ibv_create_qp left, not calloc's */
}

static void fi_cq_add(struct ibv_cq *cq, struct ibv_cq_ex *cqx)
{
    int ord = atomic_fetch_add(&g_cq_ord, 1), saved = errno;
    pthread_mutex_lock(&g_lock);
    uint32_t h = fi_hash((uintptr_t)cq, 0);
    struct fi_cq *c = NULL;
    for (uint32_t i = 0; i < FI_MAX_CQS && !c; i++) {
        struct fi_cq *t = &g_cq[(h + i) & (FI_MAX_CQS - 1)];
        if (atomic_load(&t->state) != SLOT_LIVE)
            c = t;
    }
    if (!c) {
        pthread_mutex_unlock(&g_lock);
        fi_event("note", "\"what\":\"CQ table full: cq %d is not watched\"", ord);
        errno = saved;
        return;
    }
    free(c->pend);
    memset((char *)c + sizeof(c->state), 0, sizeof(*c) - sizeof(c->state));
    c->pcap = (cq->cqe > 0 ? cq->cqe : 0) + FI_PEND_MIN;
    c->pend = calloc((size_t)c->pcap, sizeof(*c->pend));
    if (!c->pend)
        c->pcap = 0;
    c->is_ex = cqx != NULL;
    c->cq = cq;
    c->c = fi_ctx_of(cq->context);
    c->ord = ord;
    pthread_mutex_init(&c->plock, NULL);
    if (cqx) {
        c->start_poll = cqx->start_poll;
        c->next_poll = cqx->next_poll;
    }
    atomic_store_explicit(&c->state, SLOT_LIVE, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    if (cqx && cqx->start_poll) {
        cqx->start_poll = fi_cqx_start;
        cqx->next_poll = fi_cqx_next;
    }
    errno = saved; /* the program sees the errno ibv_create_cq left, not calloc's */
}

/* ---- exported wrappers: devices and contexts ---------------------------------------------- */
static struct ibv_cq_ex *fi_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
    struct fi_ctx *cx = fi_ctx_of(ctx);
    if (!cx || !cx->create_cq_ex) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    if (fi_verb_fails(FI_VERB_CREATE_CQ, ctx)) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_cq_ex *cqx = cx->create_cq_ex(ctx, a);
    if (cqx) {
        FI_TOT(cqs, 1);
        fi_cq_add(ibv_cq_ex_to_cq(cqx), cqx);
    }
    return cqx;
}

static struct ibv_qp *fi_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
    struct fi_ctx *cx = fi_ctx_of(ctx);
    if (!cx || !cx->create_qp_ex) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    if (fi_verb_fails(FI_VERB_CREATE_QP, ctx)) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_qp *qp = cx->create_qp_ex(ctx, a);
    if (qp) {
        FI_TOT(qps, 1);
        bool ex = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0;
        fi_qp_add(qp, a->cap.max_send_wr, a->cap.max_recv_wr, a->srq != NULL, a->sq_sig_all,
                  ex ? ibv_qp_to_qp_ex(qp) : NULL);
    }
    return qp;
}

FI_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
    struct ibv_context *ctx = real.open_device(dev);
    if (!ctx)
        return NULL;
    FI_TOT(contexts, 1);
    atomic_fetch_add(&g_alive.contexts, 1);
    int saved = errno; /* a success may still have set errno; the program sees the real one */
    fi_read_rank();
    pthread_mutex_lock(&g_lock);
    int n = atomic_load(&g_nctx), slot = -1;
    for (int i = 0; i < n && slot < 0; i++)
        if (!atomic_load(&g_ctx[i].ctx))
            slot = i;
    if (slot < 0 && n < FI_MAX_CTX)
        slot = n;
    if (slot < 0) {
        pthread_mutex_unlock(&g_lock);
        fi_event("note", "\"what\":\"context table full: %s is not watched\"", dev->name);
        errno = saved;
        return ctx;
    }
    struct fi_ctx *cx = &g_ctx[slot];
    snprintf(cx->dev, sizeof(cx->dev), "%s", dev->name);
    cx->poll = ctx->ops.poll_cq;
    cx->post_send = ctx->ops.post_send;
    cx->post_recv = ctx->ops.post_recv;
    cx->post_srq_recv = ctx->ops.post_srq_recv;
    struct verbs_context *vctx = verbs_get_ctx(ctx);
    cx->create_cq_ex = vctx ? vctx->create_cq_ex : NULL;
    cx->create_qp_ex = vctx ? vctx->create_qp_ex : NULL;
    atomic_store_explicit(&cx->ctx, ctx, memory_order_release);
    if (!g_one.mixed && (!g_one.poll || g_one.poll == cx->poll) &&
        (!g_one.post_send || g_one.post_send == cx->post_send) &&
        (!g_one.post_recv || g_one.post_recv == cx->post_recv)) {
        atomic_store(&g_one.poll, cx->poll);
        atomic_store(&g_one.post_send, cx->post_send);
        atomic_store(&g_one.post_recv, cx->post_recv);
    } else {
        g_one.mixed = true;
        atomic_store(&g_one.poll, NULL);
        atomic_store(&g_one.post_send, NULL);
        atomic_store(&g_one.post_recv, NULL);
    }
    if (slot == n)
        atomic_store_explicit(&g_nctx, n + 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    /* Patched only once the originals are where the wrappers look for them. */
    ctx->ops.poll_cq = fi_poll_cq;
    ctx->ops.post_send = fi_post_send;
    ctx->ops.post_recv = fi_post_recv;
    if (ctx->ops.post_srq_recv)
        ctx->ops.post_srq_recv = fi_post_srq_recv;
    if (vctx && vctx->create_cq_ex)
        vctx->create_cq_ex = fi_create_cq_ex;
    if (vctx && vctx->create_qp_ex)
        vctx->create_qp_ex = fi_create_qp_ex;
    errno = saved;
    return ctx;
}

FI_EXPORT int ibv_close_device(struct ibv_context *ctx)
{
    struct fi_ctx *cx = fi_ctx_of(ctx);
    int rc = real.close_device(ctx);
    if (!rc && cx)
        atomic_store(&cx->ctx, NULL);
    if (!rc)
        atomic_fetch_sub(&g_alive.contexts, 1);
    return rc;
}

static struct ibv_device **g_mine[64]; /* permuted lists handed out, for ibv_free_device_list */

/* Lists handed out by the swap_rails fault: the real list is kept one slot before ours. */
FI_EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
    int n = 0;
    struct ibv_device **list = real.get_device_list(&n);
    /* Kept from here and put back before every return: a program that finds no list prints
     * strerror(errno), which must name the real call's failure, not something of ours. */
    int saved = errno;
    struct fi_live *lp = fi_live();
    if (num)
        *num = n;
    fi_read_rank();
    if (!list || !lp || !lp->m_swap)
        goto out;
    struct fi_site s = {.dev = NULL, .qpn = -1, .qp_ord = -1, .cq_ord = -1};
    uint64_t nth;
    for (uint32_t m = lp->m_swap; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        const struct fi_rule *r = &lp->plan.rules[i];
        int np = r->nperm ? r->nperm : n < FI_MAX_DEVS ? n : FI_MAX_DEVS;
        if (np > n || np < 2) {
            fi_event("note", "\"what\":\"swap_rails needs %d devices, %d present\",\"rule\":%d", np,
                     n, i);
            continue;
        }
        if (!fi_fire(lp, i, &s, &nth))
            continue;
        struct ibv_device **mine = calloc((size_t)n + 2, sizeof(*mine));
        if (!mine)
            goto out;
        mine[0] = (struct ibv_device *)(void *)list;
        char names[FI_MAX_DEVS][IBV_SYSFS_NAME_MAX];
        for (int k = 0; k < np; k++)
            memcpy(names[k], list[k]->name, sizeof(names[k]));
        /*
         * Position k now holds the device that was at perm[k], under position k's old name: a
         * program that opens "rxe0" gets rxe1's hardware. The names live in libibverbs' device
         * structures, which it keeps for the life of the process, so they are renamed once.
         */
        static struct ibv_device *renamed[FI_MAX_DEVS * 4];
        static int nrenamed;
        char map[256];
        size_t o = 0;
        map[0] = '\0';
        for (int k = 0; k < np; k++) {
            int from = r->nperm ? r->perm[k] : np - 1 - k;
            mine[1 + k] = list[from];
            o += (size_t)snprintf(map + o, o < sizeof(map) ? sizeof(map) - o : 0, "%s%s=%s",
                                  k ? "," : "", names[k], names[from]);
        }
        for (int k = np; k < n; k++)
            mine[1 + k] = list[k];
        pthread_mutex_lock(&g_lock);
        for (size_t k = 0; k < sizeof(g_mine) / sizeof(g_mine[0]); k++) {
            if (!g_mine[k]) {
                g_mine[k] = mine;
                break;
            }
        }
        bool done = false;
        for (int k = 0; k < nrenamed; k++)
            done = done || renamed[k] == mine[1];
        if (!done) {
            for (int k = 0; k < np; k++) {
                memcpy(mine[1 + k]->name, names[k], sizeof(mine[1 + k]->name));
                if (nrenamed < (int)(sizeof(renamed) / sizeof(renamed[0])))
                    renamed[nrenamed++] = mine[1 + k];
            }
        }
        pthread_mutex_unlock(&g_lock);
        char d[300];
        snprintf(d, sizeof(d), "\"map\":\"%s\"", map);
        fi_event_fault(lp, i, &s, nth, d);
        list = mine + 1;
        break;
    }
out:
    errno = saved;
    return list;
}

FI_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
    /* Ours are recognised by address: freed lists of ours are few, so a scan is enough. */
    if (list) {
        struct ibv_device **base = list - 1;
        pthread_mutex_lock(&g_lock);
        for (size_t i = 0; i < sizeof(g_mine) / sizeof(g_mine[0]); i++) {
            if (g_mine[i] == base) {
                g_mine[i] = NULL;
                pthread_mutex_unlock(&g_lock);
                real.free_device_list((struct ibv_device **)(void *)base[0]);
                free(base);
                return;
            }
        }
        pthread_mutex_unlock(&g_lock);
    }
    real.free_device_list(list);
}

/* ---- exported wrappers: resources --------------------------------------------------------- */
FI_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
    if (fi_verb_fails(FI_VERB_ALLOC_PD, ctx)) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_pd *pd = real.alloc_pd(ctx);
    if (pd)
        atomic_fetch_add(&g_alive.pds, 1);
    return pd;
}

FI_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    int rc = real.dealloc_pd(pd);
    if (!rc)
        atomic_fetch_sub(&g_alive.pds, 1);
    return rc;
}

/*
 * A registration that succeeded counts as alive until ibv_dereg_mr frees it. With the ownership
 * sanitizer on, the MR's range is noted (iova: the address its SGEs use; the program's address
 * is mr->addr), unless it is not in this process's memory (DMA-buf: cpu false).
 */
static struct ibv_mr *fi_mr_made(struct ibv_mr *mr, uint64_t iova, bool cpu)
{
    if (!mr)
        return mr;
    atomic_fetch_add(&g_alive.mrs, 1);
    struct fi_live *lp = fi_live();
    if (lp && lp->own && cpu)
        fi_own_mr_add(mr->context, mr->lkey, (uint64_t)(uintptr_t)mr->addr, iova, mr->length);
    return mr;
}

FI_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
    /* Out of the table first: no check reads the memory once the program may free it. */
    if (mr && fi_own_on())
        fi_own_mr_del(mr->context, mr->lkey);
    int rc = real.dereg_mr(mr);
    if (!rc)
        atomic_fetch_sub(&g_alive.mrs, 1);
    return rc;
}

FI_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
    struct ibv_comp_channel *ch = real.create_comp_channel(ctx);
    if (ch)
        atomic_fetch_add(&g_alive.channels, 1);
    return ch;
}

FI_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
    int rc = real.destroy_comp_channel(ch);
    if (!rc)
        atomic_fetch_sub(&g_alive.channels, 1);
    return rc;
}

/*
 * libibverbs's ibv_reg_mr and ibv_reg_mr_iova end in a call of ibv_reg_mr_iova2 through its
 * PLT, which lands in this shim again: one registration would count twice (a LEAK of one MR
 * at exit, found by railguard exec on a program that calls ibv_reg_mr itself) and a reg_mr
 * rule's n would advance twice. The outer wrapper marks its thread; the inner call passes
 * straight through.
 */
static __thread bool t_in_reg_mr;

FI_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    if (fi_verb_fails(FI_VERB_REG_MR, pd ? pd->context : NULL)) {
        errno = ENOMEM;
        return NULL;
    }
    t_in_reg_mr = true;
    struct ibv_mr *mr = real.reg_mr(pd, addr, length, access);
    t_in_reg_mr = false;
    return fi_mr_made(mr, (uint64_t)(uintptr_t)addr, true);
}

FI_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
                                         uint64_t iova, int access)
{
    if (fi_verb_fails(FI_VERB_REG_MR, pd ? pd->context : NULL)) {
        errno = ENOMEM;
        return NULL;
    }
    t_in_reg_mr = true;
    struct ibv_mr *mr = real.reg_mr_iova(pd, addr, length, iova, access);
    t_in_reg_mr = false;
    return fi_mr_made(mr, iova, true);
}

FI_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
                                          uint64_t iova, unsigned int access)
{
    if (t_in_reg_mr)
        return real.reg_mr_iova2(pd, addr, length, iova, access);
    if (fi_verb_fails(FI_VERB_REG_MR, pd ? pd->context : NULL)) {
        errno = ENOMEM;
        return NULL;
    }
    return fi_mr_made(real.reg_mr_iova2(pd, addr, length, iova, access), iova, true);
}

FI_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                           uint64_t iova, int fd, int access)
{
    if (fi_verb_fails(FI_VERB_REG_MR, pd ? pd->context : NULL)) {
        errno = ENOMEM;
        return NULL;
    }
    return fi_mr_made(real.reg_dmabuf_mr(pd, offset, length, iova, fd, access), iova, false);
}

FI_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                                       struct ibv_comp_channel *channel, int comp_vector)
{
    if (fi_verb_fails(FI_VERB_CREATE_CQ, ctx)) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_cq *cq = real.create_cq(ctx, cqe, cq_context, channel, comp_vector);
    if (cq) {
        FI_TOT(cqs, 1);
        fi_cq_add(cq, NULL);
    }
    return cq;
}

FI_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
    struct fi_cq *c = fi_cq_find(cq);
    int rc = real.destroy_cq(cq);
    if (!rc && c) {
        if (fi_live())
            fi_cq_summary(c, "destroy");
        atomic_store(&c->state, SLOT_DEAD);
    }
    return rc;
}

FI_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    if (fi_verb_fails(FI_VERB_CREATE_QP, pd ? pd->context : NULL)) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_qp *qp = real.create_qp(pd, attr);
    if (qp)
        FI_TOT(qps, 1);
    if (qp)
        fi_qp_add(qp, attr->cap.max_send_wr, attr->cap.max_recv_wr, attr->srq != NULL,
                  attr->sq_sig_all, NULL);
    return qp;
}

FI_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
    struct fi_qp *q = qp ? fi_qp_find(qp->context, qp->qp_num) : NULL;
    if (q && atomic_load(&q->late))
        fi_late_drop(q);
    if (q && fi_live())
        fi_qp_summary(q, "destroy");
    /* Its CQs are read before the provider frees the QP (valgrind caught the read after). */
    struct fi_cq *cs[2] = {q ? fi_cq_find(qp->send_cq) : NULL, q ? fi_cq_find(qp->recv_cq) : NULL};
    int rc = real.destroy_qp(qp);
    if (!rc && q) {
        /* Its made-up completions go with it: the slot may serve another QP next. */
        for (int k = 0; k < 2; k++) {
            if (!cs[k] || (k == 1 && cs[1] == cs[0]))
                continue;
            pthread_mutex_lock(&cs[k]->plock);
            int n = atomic_load(&cs[k]->npend), keep = 0;
            for (int i = 0; i < n; i++)
                if (cs[k]->pend[i].q != q)
                    cs[k]->pend[keep++] = cs[k]->pend[i];
            atomic_store(&cs[k]->npend, keep);
            pthread_mutex_unlock(&cs[k]->plock);
        }
        /* Tracking ends here: its requests' records (send copies) are freed now, not when the
         * slot is reused, so their memory and the copy budget come back at once. */
        pthread_mutex_lock(&q->rlock);
        fi_ring_forget(&q->sring, q->sring.head);
        fi_ring_forget(&q->rring, q->rring.head);
        pthread_mutex_unlock(&q->rlock);
        atomic_store(&q->state, SLOT_DEAD);
    }
    return rc;
}

/* ---- plan management, control table, load and exit ---------------------------------------- */
static struct fi_live *fi_live_new(const char *text, const char *origin, char *err, size_t errlen)
{
    struct fi_live *lp = calloc(1, sizeof(*lp));
    if (!lp) {
        snprintf(err, errlen, "%s: no memory for the plan", origin);
        return NULL;
    }
    if (fi_plan_parse(text, origin, &lp->plan, err, errlen) != 0) {
        free(lp);
        return NULL;
    }
    for (int i = 0; i < lp->plan.nrules; i++) {
        const struct fi_rule *r = &lp->plan.rules[i];
        uint32_t bit = 1u << i;
        switch (r->kind) {
        case FI_NEGPOLL:
        case FI_STALL:
            lp->m_poll |= bit;
            if (r->per_cqe)
                lp->m_pollcqe |= bit;
            break;
        case FI_ERROR:
        case FI_CORRUPT:
        case FI_KILL:
        case FI_STOP:
        case FI_EXIT:
            lp->m_cqe |= bit;
            break;
        case FI_LOSE:
        case FI_LATE:
            lp->m_send |= bit;
            break;
        case FI_DELAY:
            if (r->op == FI_OP_RECV || r->op == FI_OP_ANY)
                lp->m_recv |= bit;
            if (r->op != FI_OP_RECV)
                lp->m_send |= bit;
            break;
        case FI_DELAY_FIRST:
            lp->m_first |= bit;
            break;
        case FI_NOMEM:
            if (r->verb == FI_VERB_POST_SEND)
                lp->m_send |= bit;
            else if (r->verb == FI_VERB_POST_RECV)
                lp->m_recv |= bit;
            else
                lp->m_verb |= bit;
            break;
        case FI_SWAP_RAILS:
            lp->m_swap |= bit;
            break;
        case FI_OWNERSHIP:
            lp->own = true;
            break;
        case FI_COUNT:
        case FI_KIND_MAX:
            break;
        }
    }
    return lp;
}

/*
 * The summary: per QP, CQ and rule while a plan is live (without one the pass-through counted
 * nothing per object), then always the totals, last, so a reader that sees "totals" has the
 * whole summary. `why`: "exit", "snapshot" (the signal handler) or "control" (summary()).
 *
 * Also run from the snapshot signal handler, so it takes no lock and allocates nothing: it reads
 * atomics and the fixed tables, and fi_event formats on the stack. snprintf is not on POSIX's
 * async-signal-safe list; glibc's does not allocate or lock for these conversions, which is the
 * caveat this relies on.
 */
static void fi_summary_why(const char *why)
{
    struct fi_live *lp = fi_live();
    for (int i = 0; lp && i < FI_MAX_QPS; i++)
        if (atomic_load(&g_qp[i].state) == SLOT_LIVE)
            fi_qp_summary(&g_qp[i], why);
    for (int i = 0; lp && i < FI_MAX_CQS; i++)
        if (atomic_load(&g_cq[i].state) == SLOT_LIVE)
            fi_cq_summary(&g_cq[i], why);
    for (int i = 0; lp && i < lp->plan.nrules; i++)
        fi_event("rule",
                 "\"why\":\"%s\",\"rule\":%d,\"line\":%d,\"fault\":\"%s\",\"matched\":%llu,"
                 "\"fired\":%llu",
                 why, i, lp->plan.rules[i].line, fi_kind_name(lp->plan.rules[i].kind),
                 (unsigned long long)atomic_load(&lp->matched[i]),
                 (unsigned long long)atomic_load(&lp->fired[i]));
    int64_t qps = 0, cqs = 0;
    for (int i = 0; i < FI_MAX_QPS; i++)
        qps += atomic_load(&g_qp[i].state) == SLOT_LIVE;
    for (int i = 0; i < FI_MAX_CQS; i++)
        cqs += atomic_load(&g_cq[i].state) == SLOT_LIVE;
    fi_event("alive",
             "\"why\":\"%s\",\"contexts\":%lld,\"pds\":%lld,\"mrs\":%lld,\"cqs\":%lld,\"qps\":%lld,"
             "\"channels\":%lld",
             why, (long long)atomic_load(&g_alive.contexts), (long long)atomic_load(&g_alive.pds),
             (long long)atomic_load(&g_alive.mrs), (long long)cqs, (long long)qps,
             (long long)atomic_load(&g_alive.channels));
    if (lp && lp->own) {
        struct fi_own_tally t;
        fi_own_counts(&t);
        fi_event("owned",
                 "\"why\":\"%s\",\"sends\":%llu,\"recvs\":%llu,\"rewritten\":%llu,"
                 "\"unsanitized\":%llu,\"repoisoned\":%llu",
                 why, (unsigned long long)t.sends, (unsigned long long)t.recvs,
                 (unsigned long long)t.rewritten, (unsigned long long)t.unsanitized,
                 (unsigned long long)t.repoisoned);
    }
    fi_event(
        "totals",
        "\"why\":\"%s\",\"contexts\":%llu,\"qps\":%llu,\"cqs\":%llu,\"posts_send\":%llu,"
        "\"posts_recv\":%llu,\"polls\":%llu,\"cqe\":%llu,\"cqe_err\":%llu",
        why, (unsigned long long)atomic_load(&g_tot.contexts),
        (unsigned long long)atomic_load(&g_tot.qps), (unsigned long long)atomic_load(&g_tot.cqs),
        (unsigned long long)atomic_load(&g_tot.posts_send),
        (unsigned long long)atomic_load(&g_tot.posts_recv),
        (unsigned long long)atomic_load(&g_tot.polls), (unsigned long long)atomic_load(&g_tot.cqe),
        (unsigned long long)atomic_load(&g_tot.cqe_err));
}

static void fi_summary(void)
{
    fi_summary_why("control");
}

static void fi_on_snapshot(int sig)
{
    (void)sig;
    fi_summary_why("snapshot");
}

/* The load event: which shim, which libibverbs and which program, so a runner can check that
 * the rank ran under the shim it meant and that the shim wraps the library the rank uses. */
static void fi_event_load(void)
{
    char shim[PATH_MAX] = "", exe[PATH_MAX] = "", a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
    struct fi_live *lp = fi_live();
    if (g_self_path[0] && !realpath(g_self_path, shim))
        snprintf(shim, sizeof(shim), "%s", g_self_path);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    fi_json_clean(a, sizeof(a), shim);
    fi_json_clean(b, sizeof(b), g_verbs_path);
    fi_json_clean(c, sizeof(c), exe);
    /* snapshot_signal: a runner sends it only to a rank that says it is handled, since to any
     * other process a real-time signal is fatal. */
    fi_event("load",
             "\"rules\":%d,\"shim\":\"%s\",\"verbs\":\"%s\",\"exe\":\"%s\",\"snapshot_signal\":%d",
             lp ? lp->plan.nrules : 0, a, b, c, g_snapshot_sig);
}

static void fi_fatal(const char *msg)
{
    fprintf(stderr, "railguard-fi: %s\n", msg);
    _exit(2);
}

/* RG_FI_SNAPSHOT_SIGNAL=N: signal N writes the summary, so a rank killed at a deadline leaves its
 * evidence first. Ours replaces any handler the program had for N. */
static void fi_snapshot_install(void)
{
    const char *v = getenv("RG_FI_SNAPSHOT_SIGNAL");
    char msg[160], *end = NULL;
    if (!v)
        return;
    errno = 0;
    long sig = strtol(v, &end, 10);
    if (!*v || *end || errno || sig < 1 || sig > 64) {
        snprintf(msg, sizeof(msg), "RG_FI_SNAPSHOT_SIGNAL: bad signal number '%.64s' (1..64)", v);
        fi_fatal(msg);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fi_on_snapshot;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction((int)sig, &sa, NULL) != 0) {
        snprintf(msg, sizeof(msg), "RG_FI_SNAPSHOT_SIGNAL: cannot catch signal %ld: %s", sig,
                 strerror(errno));
        fi_fatal(msg);
    }
    g_snapshot_sig = (int)sig;
}

static int ctl_set_plan(const char *text, char *err, size_t errlen)
{
    struct fi_live *lp = NULL;
    if (text && *text) {
        lp = fi_live_new(text, "set_plan", err, errlen);
        if (!lp)
            return -1;
    }
    /* The old plan is never freed: a datapath call may still be reading it. */
    struct fi_live *old = atomic_exchange_explicit(&g_live, lp, memory_order_acq_rel);
    if (old && !lp) {
        /* Without a plan posts and completions pass unrecorded: every ring loses track. */
        for (int i = 0; i < FI_MAX_QPS; i++) {
            struct fi_qp *q = &g_qp[i];
            if (atomic_load(&q->state) != SLOT_LIVE)
                continue;
            pthread_mutex_lock(&q->rlock);
            q->sring.exact = q->rring.exact = false;
            pthread_mutex_unlock(&q->rlock);
        }
    }
    atomic_store(&g_first_done, 0);
    return 0;
}

static uint64_t ctl_matched(int rule)
{
    struct fi_live *lp = fi_live();
    return lp && rule >= 0 && rule < lp->plan.nrules ? atomic_load(&lp->matched[rule]) : 0;
}

static uint64_t ctl_fired(int rule)
{
    struct fi_live *lp = fi_live();
    return lp && rule >= 0 && rule < lp->plan.nrules ? atomic_load(&lp->fired[rule]) : 0;
}

/*
 * The program moves to step `step` (FI_PHASE_INIT for its init), repetition `rep`. The phase
 * that ends gets a "phase" event with what it did: successful completions and posts by op,
 * and polls, which is how a sweep plans points anchored to a step. Counting needs a live plan
 * (a `count` rule will do), as the totals do.
 */
static struct {
    uint64_t posts_op[FI_OP_ATOMIC + 1], cqe_op[FI_OP_ATOMIC + 1], polls;
} g_phase_base;

static void fi_phase_counts(char *out, size_t len, const char *key, _Atomic uint64_t *now,
                            uint64_t *base)
{
    int o = snprintf(out, len, "\"%s\":{", key);
    for (int op = FI_OP_SEND; op <= FI_OP_ATOMIC && o > 0 && (size_t)o < len; op++) {
        uint64_t v = atomic_load(&now[op]);
        o += snprintf(out + o, len - (size_t)o, "%s\"%s\":%llu", op == FI_OP_SEND ? "" : ",",
                      fi_op_name((enum fi_op)op), (unsigned long long)(v - base[op]));
        base[op] = v;
    }
    if (o > 0 && (size_t)o < len - 1)
        snprintf(out + o, len - (size_t)o, "}");
}

static void ctl_set_phase(int step, int rep)
{
    int prev = atomic_load(&g_step), prev_rep = atomic_load(&g_rep);
    if (prev != FI_PHASE_ANY && fi_live()) {
        char posts[160], cqe[160];
        uint64_t polls = atomic_load(&g_tot.polls);
        fi_phase_counts(posts, sizeof(posts), "posts_op", g_tot.posts_op, g_phase_base.posts_op);
        fi_phase_counts(cqe, sizeof(cqe), "cqe_op", g_tot.cqe_op, g_phase_base.cqe_op);
        fi_event("phase", "\"step\":%d,\"rep\":%d,%s,%s,\"polls\":%llu", prev, prev_rep, posts, cqe,
                 (unsigned long long)(polls - g_phase_base.polls));
        g_phase_base.polls = polls;
    } else {
        for (int op = 0; op <= FI_OP_ATOMIC; op++) {
            g_phase_base.posts_op[op] = atomic_load(&g_tot.posts_op[op]);
            g_phase_base.cqe_op[op] = atomic_load(&g_tot.cqe_op[op]);
        }
        g_phase_base.polls = atomic_load(&g_tot.polls);
    }
    atomic_store(&g_rep, step < FI_PHASE_INIT ? FI_PHASE_ANY : rep);
    atomic_store(&g_step, step < FI_PHASE_INIT ? FI_PHASE_ANY : step);
}

/* A new rank's counts (a forked child, a fork server's restarted one): totals, phases, the
 * first-fault mark and the clock the events count from. */
static void fi_counts_reset(void)
{
    atomic_store(&g_first_done, 0);
    g_t0_ns = fi_now_ns();
    memset(&g_tot, 0, sizeof(g_tot));
    memset(&g_phase_base, 0, sizeof(g_phase_base));
    atomic_store(&g_step, FI_PHASE_ANY);
    atomic_store(&g_rep, FI_PHASE_ANY);
}

static void ctl_warm(void)
{
    int n = 0;
    struct ibv_device **l = real.get_device_list(&n);
    if (l)
        real.free_device_list(l);
}

static char *fi_read_file(const char *path, char *err, size_t errlen);

/* The plan from RG_FI_PLAN_FILE or RG_FI_PLAN: 0 with *out (NULL for none), or -1. */
static int fi_plan_from_env(struct fi_live **out, char *err, size_t errlen)
{
    const char *text = getenv("RG_FI_PLAN");
    const char *file = getenv("RG_FI_PLAN_FILE");
    *out = NULL;
    if (text && file) {
        snprintf(err, errlen, "RG_FI_PLAN and RG_FI_PLAN_FILE are both set: use one");
        return -1;
    }
    if (file) {
        char *buf = fi_read_file(file, err, errlen);
        if (!buf)
            return -1;
        *out = fi_live_new(buf, file, err, errlen);
        free(buf);
        return *out ? 0 : -1;
    }
    if (text) {
        *out = fi_live_new(text, "RG_FI_PLAN", err, errlen);
        return *out ? 0 : -1;
    }
    return 0;
}

/* A fork server's child: a new rank, as if the shim had just loaded into it. No device was
 * opened before the fork (the server only warms), so there are no objects to forget. */
static int ctl_restart(char *err, size_t errlen)
{
    struct fi_live *lp = NULL;
    fi_read_rank();
    atomic_store(&g_live, NULL); /* the old plan is never freed: see ctl_set_plan */
    if (fi_event_open(err, errlen) != 0)
        return -1;
    int rc = fi_plan_from_env(&lp, err, errlen);
    if (rc == 0 && lp && g_rank_err[0]) {
        snprintf(err, errlen, "%s", g_rank_err);
        rc = -1;
        lp = NULL;
    }
    atomic_store(&g_live, lp);
    fi_counts_reset();
    if (fi_live() || fi_event_logged())
        fi_event_load();
    return rc;
}

FI_EXPORT const struct rg_fi_control_v1 rg_fi_control_v1 = {
    .version = RG_FI_CONTROL_VERSION,
    .size = sizeof(struct rg_fi_control_v1),
    .set_plan = ctl_set_plan,
    .matched = ctl_matched,
    .fired = ctl_fired,
    .summary = fi_summary,
    .set_phase = ctl_set_phase,
    .warm = ctl_warm,
    .restart = ctl_restart,
};

/* A forked child is a new rank with its own counters, objects and log name. */
static void fi_atfork_child(void)
{
    /* The late thread is the parent's: the child starts its own if it needs one. */
    pthread_mutex_init(&g_late_lock, NULL);
    memset(g_late, 0, sizeof(g_late));
    g_late_started = false;
    char err[256];
    struct fi_live *lp = fi_live();
    fi_read_rank();
    if (fi_event_open(err, sizeof(err)) != 0)
        fprintf(stderr, "railguard-fi: %s\n", err);
    if (lp) {
        for (int i = 0; i < FI_MAX_RULES; i++) {
            atomic_store(&lp->matched[i], 0);
            atomic_store(&lp->fired[i], 0);
        }
    }
    fi_counts_reset();
    if (lp || fi_event_logged())
        fi_event_load();
}

static char *fi_read_file(const char *path, char *err, size_t errlen)
{
    /* Non-blocking and regular files only: a FIFO must not hang the program at load. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0) {
        snprintf(err, errlen, "RG_FI_PLAN_FILE: cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "RG_FI_PLAN_FILE: '%s': not a regular file", path);
        close(fd);
        return NULL;
    }
    char *buf = malloc(FI_PLAN_FILE_MAX + 1);
    size_t n = 0;
    bool bad = false;
    while (buf && n <= FI_PLAN_FILE_MAX) {
        ssize_t r = read(fd, buf + n, FI_PLAN_FILE_MAX + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            bad = r < 0;
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    if (!buf || bad || n > FI_PLAN_FILE_MAX || memchr(buf, '\0', n)) {
        snprintf(err, errlen, "RG_FI_PLAN_FILE: '%s': %s", path,
                 !buf                   ? "no memory"
                 : bad                  ? "read error"
                 : n > FI_PLAN_FILE_MAX ? "larger than 64 KiB"
                                        : "holds a NUL byte (the plan would be cut there)");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

__attribute__((constructor)) static void fi_load(void)
{
    char err[512];
    Dl_info self;

    g_t0_ns = fi_now_ns();
    fi_read_rank();
#define RESOLVE(field, name)                                                                       \
    do {                                                                                           \
        *(void **)(&real.field) = dlsym(RTLD_NEXT, name);                                          \
        if (!real.field)                                                                           \
            fi_fatal("cannot find the real " name " (is libibverbs installed?)");                  \
    } while (0)
    RESOLVE(get_device_list, "ibv_get_device_list");
    RESOLVE(free_device_list, "ibv_free_device_list");
    RESOLVE(open_device, "ibv_open_device");
    RESOLVE(close_device, "ibv_close_device");
    RESOLVE(alloc_pd, "ibv_alloc_pd");
    RESOLVE(reg_mr, "ibv_reg_mr");
    RESOLVE(reg_mr_iova, "ibv_reg_mr_iova");
    RESOLVE(reg_mr_iova2, "ibv_reg_mr_iova2");
    RESOLVE(reg_dmabuf_mr, "ibv_reg_dmabuf_mr");
    RESOLVE(create_cq, "ibv_create_cq");
    RESOLVE(destroy_cq, "ibv_destroy_cq");
    RESOLVE(create_qp, "ibv_create_qp");
    RESOLVE(destroy_qp, "ibv_destroy_qp");
    RESOLVE(modify_qp, "ibv_modify_qp");
    RESOLVE(dealloc_pd, "ibv_dealloc_pd");
    RESOLVE(dereg_mr, "ibv_dereg_mr");
    RESOLVE(create_comp_channel, "ibv_create_comp_channel");
    RESOLVE(destroy_comp_channel, "ibv_destroy_comp_channel");
#undef RESOLVE
    if (dladdr((void *)&fi_load, &self) && self.dli_fname)
        snprintf(g_self_path, sizeof(g_self_path), "%s", self.dli_fname);
    Dl_info verbs;
    char vpath[PATH_MAX];
    if (dladdr(*(void **)&real.open_device, &verbs) && verbs.dli_fname &&
        realpath(verbs.dli_fname, vpath))
        snprintf(g_verbs_path, sizeof(g_verbs_path), "%s", vpath);
    if (fi_dl_init(g_self_path, g_verbs_path) != 0)
        fi_fatal("cannot find the real dlopen and dlmopen");

    if (fi_event_open(err, sizeof(err)) != 0)
        fi_fatal(err);
    struct fi_live *lp = NULL;
    if (fi_plan_from_env(&lp, err, sizeof(err)) != 0)
        fi_fatal(err);
    atomic_store(&g_live, lp);
    if (fi_live() && g_rank_err[0])
        fi_fatal(g_rank_err);
    fi_snapshot_install();
    pthread_atfork(NULL, NULL, fi_atfork_child);
    /* A pass-through with no log file stays silent: a program run under the shim by hand
     * (perftest, a pingpong) keeps its standard error as it was. Under a plan, or with
     * RG_FI_LOG, the evidence is always written. */
    if (fi_live() || fi_event_logged())
        fi_event_load();
}

__attribute__((destructor)) static void fi_unload(void)
{
    if (fi_live() || fi_event_logged())
        fi_summary_why("exit");
}
