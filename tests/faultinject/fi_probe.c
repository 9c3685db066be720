/* SPDX-License-Identifier: MIT */
/*
 * rg-fi-probe - a small verbs program for the shim's integration tests. One process, two QPs on
 * one device connected to each other (rxe loops them back): QP #0 sends, QP #1 receives, each
 * with its own CQ (#0, #1), so a plan can aim at either side by ordinal. Every message carries a
 * pattern derived from its index and is checked at the receiver, so a flipped bit shows.
 *
 * It reports what it saw as one line of key=value counts, which the tests assert on. It is
 * deliberately naive where a transport would be careful: it is the program under test.
 *
 * Built twice: linked against libibverbs, and (FI_PROBE_DLOPEN) resolving every exported verb
 * with dlsym on its own dlopen handle, as NCCL and JACCL do.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rg_faultinject.h"

#ifdef FI_PROBE_DLOPEN
#include <dlfcn.h>
#define V(name) v_##name
static struct ibv_device **(*v_ibv_get_device_list)(int *);
static void (*v_ibv_free_device_list)(struct ibv_device **);
static const char *(*v_ibv_get_device_name)(struct ibv_device *);
static struct ibv_context *(*v_ibv_open_device)(struct ibv_device *);
static int (*v_ibv_close_device)(struct ibv_context *);
static struct ibv_pd *(*v_ibv_alloc_pd)(struct ibv_context *);
static int (*v_ibv_dealloc_pd)(struct ibv_pd *);
static struct ibv_mr *(*v_ibv_reg_mr)(struct ibv_pd *, void *, size_t, int);
static int (*v_ibv_dereg_mr)(struct ibv_mr *);
static struct ibv_cq *(*v_ibv_create_cq)(struct ibv_context *, int, void *,
                                         struct ibv_comp_channel *, int);
static int (*v_ibv_destroy_cq)(struct ibv_cq *);
static struct ibv_qp *(*v_ibv_create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
static int (*v_ibv_destroy_qp)(struct ibv_qp *);
static int (*v_ibv_modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
static int (*v_ibv_query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
static const char *(*v_ibv_wc_status_str)(enum ibv_wc_status);
static struct ibv_qp_ex *(*v_ibv_qp_to_qp_ex)(struct ibv_qp *);

static int load_verbs(void)
{
    /* The name to open can be any that leads to libibverbs: a symlink, a full path, the
     * versioned file. The shim must recognise the object, whatever it was called. */
    const char *lib = getenv("RG_PROBE_VERBS_LIB");
    if (!lib || !*lib)
        lib = "libibverbs.so.1";
    /* RG_PROBE_DLMOPEN=1: into a new link-map namespace, where the preloaded shim is not. */
    const char *nm = getenv("RG_PROBE_DLMOPEN");
    void *h = nm && !strcmp(nm, "1") ? dlmopen(LM_ID_NEWLM, lib, RTLD_NOW) : dlopen(lib, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "probe: dlopen %s: %s\n", lib, dlerror());
        return -1;
    }
#define SYM(name)                                                                                  \
    do {                                                                                           \
        *(void **)(&v_##name) = dlsym(h, #name);                                                   \
        if (!v_##name) {                                                                           \
            fprintf(stderr, "probe: dlsym %s: %s\n", #name, dlerror());                            \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)
    SYM(ibv_get_device_list);
    SYM(ibv_free_device_list);
    SYM(ibv_get_device_name);
    SYM(ibv_open_device);
    SYM(ibv_close_device);
    SYM(ibv_alloc_pd);
    SYM(ibv_dealloc_pd);
    SYM(ibv_reg_mr);
    SYM(ibv_dereg_mr);
    SYM(ibv_create_cq);
    SYM(ibv_destroy_cq);
    SYM(ibv_create_qp);
    SYM(ibv_destroy_qp);
    SYM(ibv_modify_qp);
    SYM(ibv_query_gid);
    SYM(ibv_wc_status_str);
    SYM(ibv_qp_to_qp_ex);
#undef SYM
    return 0;
}
#else
#define V(name) name
static int load_verbs(void)
{
    return 0;
}
#endif

struct opts {
    const char *dev;
    enum ibv_qp_type type;
    int msgs;
    size_t size;
    double timeout_s;
    bool cq_ex;
    bool list;
    bool hang;           /* after the report, post two more receives and wait to be killed */
    bool scribble;       /* reuse the send buffer as soon as ibv_post_send returns (the bug) */
    long poll_empty;     /* time this many polls of an empty CQ, then stop */
    int unsignaled;      /* unsignaled sends before each message's signaled one, same wr_id */
    int recv_sges;       /* each receive's buffer cut into this many scatter entries */
    int recv_late_ms;    /* each message's receive posted this long after its send: UC drops it */
    const char *control; /* a plan set through the shim's control table, not the environment */
    bool restart;        /* --restart: that plan through the environment and restart() */
    bool qp_ex;          /* QPs made by ibv_create_qp_ex, sends posted through ibv_wr_* */
    /* Bugs railguard exec must find in a program (tests/harness/it_exec.c): */
    bool ignore_errors; /* exit 0 whatever the completions said (a status never checked) */
    bool leak;          /* exit without destroying anything */
    uint64_t tag;       /* ORed into every wr_id: ids that are pointers or tagged values */
    bool fork;          /* a daemon's shape: the parent forks, the child does the verbs work */
    bool spin;          /* after the messages, poll an empty CQ forever (a wait with no deadline) */
};

struct tally {
    int send_ok, send_err, recv_ok, recv_err, corrupt, post_send_err, post_recv_err, poll_neg;
    int err_stale; /* receives completed in error whose buffer held the right bytes anyway */
    int timeouts;
    int sends_posted; /* every send work request accepted by ibv_post_send */
    char first_err[64];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t pattern(int msg, size_t i)
{
    return (uint8_t)((size_t)msg * 131u + i * 7u + 1u);
}

static void first_err(struct tally *t, const char *what)
{
    if (!t->first_err[0])
        snprintf(t->first_err, sizeof(t->first_err), "%s", what);
}

/* The bug --spin plays: a wait for a completion with no deadline, as a receive loop whose peer
 * died. Its own function, so a backtrace names it. */
static __attribute__((noinline)) void spin_on_empty_cq(struct ibv_cq *cq)
{
    struct ibv_wc wc;
    printf("probe: spinning\n");
    fflush(stdout);
    for (;;)
        (void)ibv_poll_cq(cq, 1, &wc);
}

static int usage(const char *msg)
{
    fprintf(
        stderr,
        "probe: %s\nusage: rg-fi-probe [--dev NAME] [--qp uc|rc] [--msgs N] [--size BYTES] "
        "[--timeout S] [--cq-ex] [--list] [--poll-empty N] [--unsignaled K] [--recv-sges N] "
        "[--recv-late MS] "
        "[--hang] "
        "[--scribble] [--control PLAN [--restart]] [--qp-ex] [--ignore-errors] [--leak] [--spin] "
        "[--tag-ids] [--fork]\n",
        msg);
    return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.dev = "rxe0",
                       .type = IBV_QPT_UC,
                       .msgs = 4,
                       .size = 4096,
                       .timeout_s = 3.0,
                       .recv_sges = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--cq-ex")) {
            o->cq_ex = true;
        } else if (!strcmp(a, "--list")) {
            o->list = true;
        } else if (!strcmp(a, "--hang")) {
            o->hang = true;
        } else if (!strcmp(a, "--qp-ex")) {
            o->qp_ex = true;
        } else if (!strcmp(a, "--scribble")) {
            o->scribble = true;
        } else if (!strcmp(a, "--ignore-errors")) {
            o->ignore_errors = true;
        } else if (!strcmp(a, "--fork")) {
            o->fork = true;
        } else if (!strcmp(a, "--tag-ids")) {
            o->tag = UINT64_C(1) << 63;
        } else if (!strcmp(a, "--leak")) {
            o->leak = true;
        } else if (!strcmp(a, "--spin")) {
            o->spin = true;
        } else if (!v) {
            return usage("a flag is missing its value or unknown");
        } else if (!strcmp(a, "--control")) {
            o->control = v, i++;
        } else if (!strcmp(a, "--restart")) {
            o->restart = true;
        } else if (!strcmp(a, "--dev")) {
            o->dev = v, i++;
        } else if (!strcmp(a, "--qp")) {
            if (strcmp(v, "uc") && strcmp(v, "rc"))
                return usage("--qp takes uc or rc");
            o->type = !strcmp(v, "rc") ? IBV_QPT_RC : IBV_QPT_UC, i++;
        } else if (!strcmp(a, "--msgs")) {
            o->msgs = (int)strtol(v, &end, 10), i++;
            if (*end || o->msgs < 1 || o->msgs > 100000)
                return usage("--msgs takes 1..100000");
        } else if (!strcmp(a, "--size")) {
            o->size = (size_t)strtoul(v, &end, 10), i++;
            if (*end || o->size < 1 || o->size > (1u << 24))
                return usage("--size takes 1..16777216");
        } else if (!strcmp(a, "--recv-sges")) {
            o->recv_sges = (int)strtol(v, &end, 10), i++;
            if (*end || o->recv_sges < 1 || o->recv_sges > 4)
                return usage("--recv-sges takes 1..4");
        } else if (!strcmp(a, "--recv-late")) {
            o->recv_late_ms = (int)strtol(v, &end, 10), i++;
            if (*end || o->recv_late_ms < 1 || o->recv_late_ms > 10000)
                return usage("--recv-late takes 1..10000 ms");
        } else if (!strcmp(a, "--unsignaled")) {
            o->unsignaled = (int)strtol(v, &end, 10), i++;
            if (*end || o->unsignaled < 0 || o->unsignaled > 7)
                return usage("--unsignaled takes 0..7");
        } else if (!strcmp(a, "--poll-empty")) {
            o->poll_empty = strtol(v, &end, 10), i++;
            if (*end || o->poll_empty < 1 || o->poll_empty > 1000000000L)
                return usage("--poll-empty takes 1..1000000000");
        } else if (!strcmp(a, "--timeout")) {
            o->timeout_s = strtod(v, &end), i++;
            if (*end || o->timeout_s <= 0 || o->timeout_s > 600)
                return usage("--timeout takes seconds in (0, 600]");
        } else {
            return usage("unknown flag");
        }
    }
    return 0;
}

/* The GID to use: an IPv4-mapped one (RoCE v2 over the rail's address) if present. */
static int pick_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
    int fallback = -1;
    for (int i = 0; i < 16; i++) {
        union ibv_gid g;
        if (V(ibv_query_gid)(ctx, 1, i, &g))
            break;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        bool zero = true;
        for (int k = 0; k < 16; k++)
            zero = zero && !g.raw[k];
        if (zero)
            continue;
        if (!memcmp(g.raw, mapped, 12)) {
            *gid = g;
            return i;
        }
        if (fallback < 0) {
            fallback = i;
            *gid = g;
        }
    }
    return fallback;
}

static int connect_qp(struct ibv_qp *qp, uint32_t dest, int gid_index, const union ibv_gid *gid,
                      enum ibv_qp_type type)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
                            .pkey_index = 0,
                            .port_num = 1,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
    if (V(ibv_modify_qp)(qp, &a,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return -1;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = dest;
    a.rq_psn = 1;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = *gid;
    a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = 1;
    int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (type == IBV_QPT_RC) {
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = 12;
        mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    }
    if (V(ibv_modify_qp)(qp, &a, mask))
        return -1;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 1;
    mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (type == IBV_QPT_RC) {
        a.timeout = 14;
        a.retry_cnt = 6;
        a.rnr_retry = 6;
        a.max_rd_atomic = 1;
        mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    }
    return V(ibv_modify_qp)(qp, &a, mask) ? -1 : 0;
}

struct side {
    struct ibv_cq *cq;
    struct ibv_cq_ex *cqx;
    struct ibv_qp *qp;
};

/*
 * Waits for one completion on s until the deadline. Returns 1 with *wc filled, 0 on timeout. A
 * negative poll is counted and polling goes on: the probe wants to see what comes after it.
 * Never inlined: one poll call made from each of its callers, as a transport's wrapper is, so
 * the shim's call paths (sites depth=2) have callers to tell apart.
 */
__attribute__((noinline)) static int wait_one(struct side *s, double deadline, struct ibv_wc *wc,
                                              struct tally *t)
{
    while (now_s() < deadline) {
        if (s->cqx) {
            struct ibv_poll_cq_attr pa = {0};
            int rc = ibv_start_poll(s->cqx, &pa);
            if (rc == ENOENT)
                continue;
            if (rc) {
                t->poll_neg++;
                first_err(t, "start_poll");
                continue;
            }
            memset(wc, 0, sizeof(*wc));
            wc->wr_id = s->cqx->wr_id;
            wc->status = s->cqx->status;
            wc->byte_len = wc->status == IBV_WC_SUCCESS ? ibv_wc_read_byte_len(s->cqx) : 0;
            ibv_end_poll(s->cqx);
            return 1;
        }
        int n = ibv_poll_cq(s->cq, 1, wc);
        if (n > 0)
            return 1;
        if (n < 0) {
            t->poll_neg++;
            first_err(t, "negative poll");
        }
    }
    return 0;
}

/* Never inlined into main: wait_one's callers are then run's, in the probe, never libc's. */
__attribute__((noinline)) static int run(const struct opts *o)
{
    int n = 0, rc = 2;
    struct ibv_device **list = V(ibv_get_device_list)(&n);
    struct ibv_context *ctx = NULL;
    struct ibv_pd *pd = NULL;
    struct ibv_mr *mr = NULL;
    struct side s[2] = {{0}};
    uint8_t *buf = NULL;
    struct tally t = {0};
    union ibv_gid gid;

    /* --control: the plan comes through the control table, as an in-process test sets it. */
    const struct rg_fi_control_v1 *fi = o->control ? rg_fi_control() : NULL;
    if (o->control) {
        char err[256] = "";
        if (!fi) {
            fprintf(stderr, "probe: --control, but no shim in the process\n");
            goto out;
        }
        if (o->restart) {
            /* As a fork server's child: the plan from the environment, read again. */
            if (fi->size < offsetof(struct rg_fi_control_v1, restart) + sizeof(fi->restart)) {
                fprintf(stderr, "probe: --restart, but the shim has no restart\n");
                goto out;
            }
            unsetenv("RG_FI_PLAN_FILE");
            setenv("RG_FI_PLAN", "error nth=0", 1);
            int bad = fi->restart(err, sizeof(err));
            printf("probe: restart bad=%d err='%s'\n", bad, err);
            setenv("RG_FI_PLAN", o->control, 1);
            if (fi->restart(err, sizeof(err)) != 0) {
                fprintf(stderr, "probe: restart: %s\n", err);
                goto out;
            }
        }
        /* A bad plan is refused in one line and leaves the old one in place. */
        int bad = fi->set_plan("error nth=0", err, sizeof(err));
        printf("probe: control bad=%d err='%s'\n", bad, err);
        if (!o->restart && fi->set_plan(o->control, err, sizeof(err)) != 0) {
            fprintf(stderr, "probe: set_plan: %s\n", err);
            goto out;
        }
    }
    if (!list) {
        /* errno is what ibv_get_device_list left: the shim must not have clobbered it. */
        fprintf(stderr, "probe: cannot list RDMA devices: %s\n", strerror(errno));
        goto out;
    }
    if (!n) {
        fprintf(stderr, "probe: no verbs devices\n");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (o->list) {
            struct ibv_context *c = V(ibv_open_device)(list[i]);
            union ibv_gid g;
            char addr[64] = "?";
            if (c && pick_gid(c, &g) >= 0)
                snprintf(addr, sizeof(addr), "%u.%u.%u.%u", g.raw[12], g.raw[13], g.raw[14],
                         g.raw[15]);
            printf("probe: device %d %s %s\n", i, V(ibv_get_device_name)(list[i]), addr);
            if (c)
                V(ibv_close_device)(c);
        }
        if (!ctx && !strcmp(V(ibv_get_device_name)(list[i]), o->dev))
            ctx = V(ibv_open_device)(list[i]);
    }
    if (!ctx) {
        fprintf(stderr, "probe: device %s not found or not opened\n", o->dev);
        goto out;
    }
    int gid_index = pick_gid(ctx, &gid);
    if (gid_index < 0) {
        fprintf(stderr, "probe: %s has no usable GID\n", o->dev);
        goto out;
    }
    if (!(pd = V(ibv_alloc_pd)(ctx))) {
        fprintf(stderr, "probe: ibv_alloc_pd: %s\n", strerror(errno));
        goto out;
    }
    buf = calloc(2, o->size);
    if (!buf)
        goto out;
    if (!(mr = V(ibv_reg_mr)(pd, buf, 2 * o->size, IBV_ACCESS_LOCAL_WRITE))) {
        fprintf(stderr, "probe: ibv_reg_mr: %s\n", strerror(errno));
        goto out;
    }
    for (int k = 0; k < 2; k++) {
        if (o->cq_ex) {
            struct ibv_cq_init_attr_ex ca = {
                .cqe = 64, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM};
            s[k].cqx = ibv_create_cq_ex(ctx, &ca);
            s[k].cq = s[k].cqx ? ibv_cq_ex_to_cq(s[k].cqx) : NULL;
        } else {
            s[k].cq = V(ibv_create_cq)(ctx, 64, NULL, NULL, 0);
        }
        if (!s[k].cq) {
            fprintf(stderr, "probe: ibv_create_cq: %s\n", strerror(errno));
            goto out;
        }
    }
    for (int k = 0; k < 2; k++) {
        struct ibv_qp_init_attr qa = {
            .send_cq = s[k].cq,
            .recv_cq = s[k].cq,
            .qp_type = o->type,
            .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 4}};
        struct ibv_qp_init_attr_ex qx = {.send_cq = qa.send_cq,
                                         .recv_cq = qa.recv_cq,
                                         .qp_type = qa.qp_type,
                                         .cap = qa.cap,
                                         .pd = pd,
                                         .comp_mask =
                                             IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                                         .send_ops_flags = IBV_QP_EX_WITH_SEND};
        /* Through the context's op, as ibv_create_qp_ex does, without its fallback to
         * ibv_create_qp (which the dlopen-ing probe does not link). */
        struct verbs_context *vc = o->qp_ex ? verbs_get_ctx_op(ctx, create_qp_ex) : NULL;
        if (o->qp_ex && !vc)
            errno = EOPNOTSUPP;
        s[k].qp = !o->qp_ex ? V(ibv_create_qp)(pd, &qa) : vc ? vc->create_qp_ex(ctx, &qx) : NULL;
        if (!s[k].qp) {
            fprintf(stderr, "probe: ibv_create_qp: %s\n", strerror(errno));
            goto out;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (connect_qp(s[k].qp, s[1 - k].qp->qp_num, gid_index, &gid, o->type)) {
            fprintf(stderr, "probe: connecting qp %u: %s\n", s[k].qp->qp_num, strerror(errno));
            goto out;
        }
    }

    if (o->poll_empty) {
        /* The cost of one ibv_poll_cq that finds nothing: the shim's pass-through overhead is
         * this figure with the shim minus it without. */
        struct ibv_wc wc;
        double start = now_s();
        long found = 0;
        for (long k = 0; k < o->poll_empty; k++)
            found += ibv_poll_cq(s[0].cq, 1, &wc) != 0;
        printf("probe: poll_empty=%ld ns_per_poll=%.1f nonempty=%ld\n", o->poll_empty,
               (now_s() - start) * 1e9 / (double)o->poll_empty, found);
        rc = 0;
        goto out;
    }

    double t0 = now_s();
    /*
     * Each message is K unsignaled sends then one signaled one, all with the same wr_id (programs
     * reuse them), into K + 1 receives holding the same pattern: the signaled completion stands
     * for all K + 1 sends, and each receive is checked.
     */
    int per = o->unsignaled + 1;
    for (int m = 0; m < o->msgs; m++) {
        uint8_t *sbuf = buf, *rbuf = buf + o->size;
        for (size_t i = 0; i < o->size; i++)
            sbuf[i] = pattern(m, i);
        memset(rbuf, 0, o->size);
        /* The buffer cut into recv_sges entries, in order (a header and a payload apart). */
        struct ibv_sge rsge[4];
        int nsge = o->recv_sges < (int)o->size ? o->recv_sges : 1;
        for (int k = 0; k < nsge; k++) {
            size_t lo = o->size * (size_t)k / (size_t)nsge,
                   hi = o->size * (size_t)(k + 1) / (size_t)nsge;
            rsge[k] = (struct ibv_sge){(uintptr_t)(rbuf + lo), (uint32_t)(hi - lo), mr->lkey};
        }
        struct ibv_recv_wr rwr = {.wr_id = o->tag | (1000u + (unsigned)m),
                                  .sg_list = rsge,
                                  .num_sge = nsge},
                           *rbad;
        struct ibv_sge ssge = {(uintptr_t)sbuf, (uint32_t)o->size, mr->lkey};
        struct ibv_send_wr swr = {.wr_id = o->tag | (2000u + (unsigned)m),
                                  .sg_list = &ssge,
                                  .num_sge = 1,
                                  .opcode = IBV_WR_SEND},
                           *sbad;
        int prc = 0;
        for (int k = 0; k < per && !prc && !o->recv_late_ms; k++)
            prc = ibv_post_recv(s[1].qp, &rwr, &rbad);
        if (prc) {
            t.post_recv_err++;
            first_err(&t, strerror(prc));
            break;
        }
        for (int k = 0; k < per && !prc; k++) {
            swr.send_flags = k == per - 1 ? IBV_SEND_SIGNALED : 0;
            if (o->qp_ex) {
                /* The new post API: the shim sees the calls, not a work request list. */
                struct ibv_qp_ex *x = V(ibv_qp_to_qp_ex)(s[0].qp);
                ibv_wr_start(x);
                x->wr_id = swr.wr_id;
                x->wr_flags = swr.send_flags;
                ibv_wr_send(x);
                ibv_wr_set_sge(x, ssge.lkey, ssge.addr, ssge.length);
                prc = ibv_wr_complete(x);
            } else {
                prc = ibv_post_send(s[0].qp, &swr, &sbad);
            }
            t.sends_posted += !prc;
        }
        if (prc) {
            t.post_send_err++;
            first_err(&t, strerror(prc));
            break;
        }
        /* --recv-late: the receive after its send, as a receiver that has not prefilled: a UC
         * message that finds no receive is dropped; RC's RNR retry finds it posted. */
        if (o->recv_late_ms) {
            struct timespec ts = {o->recv_late_ms / 1000,
                                  (long)(o->recv_late_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            for (int k = 0; k < per && !prc; k++)
                prc = ibv_post_recv(s[1].qp, &rwr, &rbad);
            if (prc) {
                t.post_recv_err++;
                first_err(&t, strerror(prc));
                break;
            }
        }
        /* The bug --scribble plays: the buffer is the program's again once the post returned,
         * not once the send completed. Harmless where the NIC read it during the post. */
        if (o->scribble)
            memset(sbuf, 0xEE, o->size);
        struct ibv_wc wc;
        double deadline = now_s() + o->timeout_s;
        if (!wait_one(&s[0], deadline, &wc, &t)) {
            t.timeouts++;
            first_err(&t, "send timeout");
            break;
        }
        if (wc.status == IBV_WC_SUCCESS) {
            t.send_ok++;
        } else {
            t.send_err++;
            first_err(&t, V(ibv_wc_status_str)(wc.status));
        }
        bool timed_out = false;
        for (int k = 0; k < per; k++) {
            if (!wait_one(&s[1], deadline, &wc, &t)) {
                t.timeouts++;
                first_err(&t, "recv timeout");
                timed_out = true;
                break;
            }
            if (wc.status != IBV_WC_SUCCESS) {
                t.recv_err++;
                first_err(&t, V(ibv_wc_status_str)(wc.status));
                /* What a program that ignores the status would have used: right by luck? */
                bool stale = true;
                for (size_t i = 0; stale && i < o->size; i++)
                    stale = rbuf[i] == pattern(m, i);
                t.err_stale += stale;
                continue;
            }
            bool same = wc.byte_len == o->size && wc.wr_id == rwr.wr_id;
            for (size_t i = 0; same && i < o->size; i++)
                same = rbuf[i] == pattern(m, i);
            if (same) {
                t.recv_ok++;
            } else {
                t.corrupt++;
                first_err(&t, "payload differs");
            }
        }
        if (timed_out)
            break;
    }
    if (o->unsignaled) {
        /* Whatever else completes (flushes of unsignaled sends) is counted too, so a test can
         * compare every error completion with the work requests that were outstanding. */
        double end = now_s() + 0.3;
        struct ibv_wc wc;
        while (now_s() < end) {
            for (int k = 0; k < 2; k++) {
                if (wait_one(&s[k], now_s() + 0.01, &wc, &t) != 1)
                    continue;
                bool ok = wc.status == IBV_WC_SUCCESS;
                int *cnt = k ? (ok ? &t.recv_ok : &t.recv_err) : (ok ? &t.send_ok : &t.send_err);
                (*cnt)++;
            }
        }
    }
    double ms = (now_s() - t0) * 1e3;
    /* shim=1 when railguard-fi.so is in the process (its control table resolves), so a test
     * of the pass-through can tell "shim loaded, did nothing" from "shim never loaded". */
    printf("probe: msgs=%d send_ok=%d send_err=%d recv_ok=%d recv_err=%d corrupt=%d err_stale=%d "
           "post_send_err=%d post_recv_err=%d poll_neg=%d timeouts=%d sends_posted=%d "
           "first_err='%s' qp0=%u qp1=%u shim=%d elapsed_ms=%.0f\n",
           o->msgs, t.send_ok, t.send_err, t.recv_ok, t.recv_err, t.corrupt, t.err_stale,
           t.post_send_err, t.post_recv_err, t.poll_neg, t.timeouts, t.sends_posted, t.first_err,
           s[0].qp->qp_num, s[1].qp->qp_num, rg_fi_control() != NULL, ms);
    if (fi) {
        printf("probe: control fired=%llu matched=%llu\n", (unsigned long long)fi->fired(0),
               (unsigned long long)fi->matched(0));
        fi->summary();
        char err[8];
        fi->set_plan("", err, sizeof(err)); /* back to the pass-through */
    }
    fflush(stdout);
    if (o->hang) {
        /* A rank stuck at a deadline, with work outstanding: the runner's snapshot signal must
         * still get its evidence out before it kills it. */
        struct ibv_sge hsge = {(uintptr_t)(buf + o->size), (uint32_t)o->size, mr->lkey};
        struct ibv_recv_wr hwr = {.wr_id = 9000, .sg_list = &hsge, .num_sge = 1}, *hbad;
        for (int k = 0; k < 2; k++)
            if (ibv_post_recv(s[1].qp, &hwr, &hbad))
                fprintf(stderr, "probe: post_recv before hanging failed\n");
        printf("probe: hanging\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (o->spin)
        spin_on_empty_cq(s[1].cq);
    rc = t.recv_ok == o->msgs * per && t.send_ok == o->msgs && !t.poll_neg ? 0 : 1;
    if (o->ignore_errors)
        rc = 0;
    if (o->leak)
        return rc; /* everything left for exit to clean up */
out:
    for (int k = 1; k >= 0; k--) {
        if (s[k].qp)
            V(ibv_destroy_qp)(s[k].qp);
        if (s[k].cq)
            V(ibv_destroy_cq)(s[k].cq);
    }
    if (mr)
        V(ibv_dereg_mr)(mr);
    free(buf);
    if (pd)
        V(ibv_dealloc_pd)(pd);
    if (ctx)
        V(ibv_close_device)(ctx);
    if (list)
        V(ibv_free_device_list)(list);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    if (o.fork) {
        /* The parent opens nothing: it waits for its child and exits as the child did. */
        fflush(NULL);
        pid_t child = fork();
        if (child < 0)
            return 2;
        if (child > 0) {
            int st;
            while (waitpid(child, &st, 0) < 0)
                if (errno != EINTR)
                    return 2;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
    }
    if (load_verbs())
        return 2;
    return run(&o);
}
