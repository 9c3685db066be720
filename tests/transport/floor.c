/* SPDX-License-Identifier: MIT */
/*
 * rg-floor - what a 2-rank exchange of one small message costs with nothing but verbs: the
 * floor `make bench` sets the reference's 8-byte all_reduce against, beside perftest's
 * one-way latency. Two processes, one device, one QP each, connected to each other; every
 * iteration each posts one signaled send of SIZE bytes and waits for its completion and for
 * the other's message, both at once -- the pattern of a 2-rank all_reduce that fits one
 * message, without its protocol (no header, credits, reduction or copies).
 *
 * perftest has no such test: ib_send_lat sends one way at a time, ib_send_bw -b keeps many
 * messages in flight. On rxe the two directions of an exchange need not overlap (each
 * ibv_post_send runs the whole packet path in the kernel), so an exchange can cost a round
 * trip rather than a one-way latency: this measures it rather than assuming either.
 *
 * Every completion's status is checked, every wait has a deadline, and the run fails with
 * one line naming what went wrong. It prints one line of key=value figures (ci/bench reads
 * exchange_us): the two processes' mean time per exchange, and each one's.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rg_parse.h"

#define WARMUP 100
#define RECVS 16 /* receives kept posted: the peer is never more than one exchange ahead */

struct opts {
    const char *dev;
    int gid_index, uc, size, iters;
    double timeout_s;
};

struct peer_info {
    uint32_t qpn;
    union ibv_gid gid;
};

static int me; /* 0 or 1, for messages */

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rg-floor: process %d: ", me);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void xfer(int fd, void *p, size_t n, int out)
{
    ssize_t k = out ? write(fd, p, n) : read(fd, p, n);
    if (k != (ssize_t)n)
        die("the other process %s (%s)", out ? "is gone" : "did not answer",
            k < 0 ? strerror(errno) : "short");
}

/* The device, opened when `open`; otherwise only whether it exists (NULL, or dies). */
static struct ibv_context *open_dev(const char *name, int open)
{
    int n = 0, found = 0;
    struct ibv_device **l = ibv_get_device_list(&n);
    struct ibv_context *ctx = NULL;
    if (!l)
        die("ibv_get_device_list: %s", strerror(errno));
    for (int i = 0; i < n && !found; i++)
        if ((found = !strcmp(ibv_get_device_name(l[i]), name)) && open &&
            !(ctx = ibv_open_device(l[i])))
            die("ibv_open_device(%s): %s", name, strerror(errno));
    ibv_free_device_list(l);
    if (!found)
        die("no RDMA device %s", name);
    return ctx;
}

static void connect_qp(struct ibv_qp *qp, const struct opts *o, const struct peer_info *th)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};
    int rc =
        ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc)
        die("ibv_modify_qp(INIT): %s", strerror(rc));
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = th->qpn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = th->gid;
    a.ah_attr.grh.sgid_index = (uint8_t)o->gid_index;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = 1;
    int f = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (!o->uc)
        f |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    if ((rc = ibv_modify_qp(qp, &a, f)))
        die("ibv_modify_qp(RTR): %s", strerror(rc));
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 1;
    f = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (!o->uc)
        f |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    if ((rc = ibv_modify_qp(qp, &a, f)))
        die("ibv_modify_qp(RTS): %s", strerror(rc));
}

/* Waits for this exchange's send completion and one message; *avail carries messages that
 * arrived ahead (the peer may be one exchange ahead). Fails past the deadline, or when the
 * other process has gone. */
static void wait_exchange(struct ibv_cq *cq, struct ibv_qp *qp, struct ibv_recv_wr *rw, int *avail,
                          int fd, double deadline)
{
    int sent = 0;
    unsigned idle = 0;
    while (!sent || !*avail) {
        struct ibv_wc wc[8];
        struct ibv_recv_wr *bad;
        int k = ibv_poll_cq(cq, 8, wc);
        if (k < 0)
            die("ibv_poll_cq: %d", k);
        for (int i = 0; i < k; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                die("%s completion failed: %s", wc[i].wr_id ? "a receive's" : "a send's",
                    ibv_wc_status_str(wc[i].status));
            if (!wc[i].wr_id) {
                sent = 1;
                continue;
            }
            ++*avail;
            int rc = ibv_post_recv(qp, rw, &bad);
            if (rc)
                die("ibv_post_recv: %s", strerror(rc));
        }
        if (k || ++idle % 4096)
            continue;
        /* Its closed socket reads as end of file; its last handshake byte is not. */
        char b;
        if (recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
            die("the other process is gone");
        if (now() > deadline)
            die("no exchange finished within the deadline (a lost message?)");
    }
    --*avail;
}

/* One process's side: returns its time per exchange, in seconds. */
static double run(const struct opts *o, int fd)
{
    struct ibv_context *ctx = open_dev(o->dev, 1);
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 2 * RECVS + 8, NULL, NULL, 0) : NULL;
    size_t bytes = (size_t)o->size + 64;
    char *buf = calloc(2, bytes);
    struct ibv_mr *mr = cq && buf ? ibv_reg_mr(pd, buf, 2 * bytes, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!mr)
        die("setting up the device's resources: %s", strerror(errno));
    struct ibv_qp_init_attr ia = {
        .send_cq = cq,
        .recv_cq = cq,
        .cap = {.max_send_wr = 8, .max_recv_wr = RECVS, .max_send_sge = 1, .max_recv_sge = 1},
        .qp_type = o->uc ? IBV_QPT_UC : IBV_QPT_RC,
    };
    struct ibv_qp *qp = ibv_create_qp(pd, &ia);
    if (!qp)
        die("ibv_create_qp: %s", strerror(errno));
    struct peer_info mine = {.qpn = qp->qp_num}, th;
    if (ibv_query_gid(ctx, 1, o->gid_index, &mine.gid))
        die("ibv_query_gid(port 1, index %d): %s", o->gid_index, strerror(errno));
    xfer(fd, &mine, sizeof(mine), 1);
    xfer(fd, &th, sizeof(th), 0);
    connect_qp(qp, o, &th);
    struct ibv_sge rs = {
        .addr = (uintptr_t)buf + bytes, .length = (uint32_t)bytes, .lkey = mr->lkey};
    struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *brw;
    for (int i = 0; i < RECVS; i++) {
        int rc = ibv_post_recv(qp, &rw, &brw);
        if (rc)
            die("ibv_post_recv: %s", strerror(rc));
    }
    char c = 0; /* both connected, receives posted: a UC message sent now is not dropped */
    xfer(fd, &c, 1, 1);
    xfer(fd, &c, 1, 0);
    struct ibv_sge ss = {.addr = (uintptr_t)buf, .length = (uint32_t)o->size, .lkey = mr->lkey};
    struct ibv_send_wr sw = {.wr_id = 0,
                             .sg_list = &ss,
                             .num_sge = 1,
                             .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED},
                       *bsw;
    double deadline = now() + o->timeout_s, t0 = 0;
    int avail = 0;
    for (int it = -WARMUP; it < o->iters; it++) {
        if (it == 0)
            t0 = now();
        int rc = ibv_post_send(qp, &sw, &bsw);
        if (rc)
            die("ibv_post_send: %s", strerror(rc));
        wait_exchange(cq, qp, &rw, &avail, fd, deadline);
    }
    double t = (now() - t0) / o->iters;
    /* The other may still wait for a send's completion that needs this QP: hold it until
     * both are done. */
    xfer(fd, &c, 1, 1);
    xfer(fd, &c, 1, 0);
    ibv_destroy_qp(qp);
    ibv_dereg_mr(mr);
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    free(buf);
    return t;
}

static void usage(void)
{
    printf("usage: rg-floor -d DEV [-x GID_INDEX] [-c rc|uc] [-s SIZE] [-n ITERS] [-t SECONDS]\n"
           "  defaults: -x 1 -c rc -s 8 -n 2000 -t 60 (the whole run's deadline)\n");
    exit(0);
}

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.gid_index = 1, .size = 8, .iters = 2000, .timeout_s = 60};
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n = 0;
        if (!strcmp(a, "-h"))
            usage();
        int bad = !v;
        if (bad)
            ;
        else if (!strcmp(a, "-d"))
            o->dev = v;
        else if (!strcmp(a, "-c") && (!strcmp(v, "rc") || !strcmp(v, "uc")))
            o->uc = !strcmp(v, "uc");
        else if (!strcmp(a, "-x") && !(bad = rg_parse_int(v, 0, 255, &n)))
            o->gid_index = (int)n;
        else if (!strcmp(a, "-s") && !(bad = rg_parse_int(v, 1, 4096, &n)))
            o->size = (int)n;
        else if (!strcmp(a, "-n") && !(bad = rg_parse_int(v, 1, 10000000, &n)))
            o->iters = (int)n;
        else if (!strcmp(a, "-t"))
            bad = rg_parse_seconds(v, 0.001, 86400, &o->timeout_s) != 0;
        else
            bad = 1;
        if (bad) {
            fprintf(stderr, "rg-floor: %s%s%s: not a valid option and value (see -h)\n", a,
                    v ? " " : "", v ? v : "");
            exit(2);
        }
    }
    if (!o->dev) {
        fprintf(stderr, "rg-floor: -d DEV is required (see -h)\n");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    struct opts o;
    parse(argc, argv, &o);
    /* A missing device is said once, before there are two processes to say it. Nothing is
     * opened or registered yet, so the fork below copies no verbs state. */
    open_dev(o.dev, 0);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        die("socketpair: %s", strerror(errno));
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        me = 1;
        close(sv[0]);
        double t = run(&o, sv[1]);
        xfer(sv[1], &t, sizeof(t), 1);
        _exit(0);
    }
    close(sv[1]);
    double t0 = run(&o, sv[0]), t1 = 0;
    xfer(sv[0], &t1, sizeof(t1), 0);
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        die("the other process failed (status 0x%x)", st);
    printf("exchange_us=%.3f rank0_us=%.3f rank1_us=%.3f qp=%s size=%d iters=%d\n",
           (t0 + t1) / 2 * 1e6, t0 * 1e6, t1 * 1e6, o.uc ? "uc" : "rc", o.size, o.iters);
    return 0;
}
