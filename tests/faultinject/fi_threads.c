/* SPDX-License-Identifier: MIT */
/*
 * rg-fi-threads - the shim under concurrent threads: T threads, each with its own pair of
 * connected QPs and CQs on one shared context, each sending M messages to itself and checking
 * every payload. It prints one line per thread, "thread K: ok=N err=N timeouts=N", so a test can
 * see that each thread's traffic was counted and faulted on its own and nothing was lost.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 16
#define SIZE 1024

struct pair {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    union ibv_gid gid;
    int gid_index;
    int msgs;
    int index;
    struct ibv_cq *cq[2];
    struct ibv_qp *qp[2];
    uint8_t *buf;
    struct ibv_mr *mr;
    int ok, err, timeouts;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int to_rts(struct ibv_qp *qp, uint32_t dest, const struct pair *p)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return -1;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = dest;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = p->gid;
    a.ah_attr.grh.sgid_index = (uint8_t)p->gid_index;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = 1;
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
        return -1;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? -1 : 0;
}

static int wait_one(struct ibv_cq *cq, struct ibv_wc *wc, double deadline)
{
    while (now_s() < deadline) {
        int n = ibv_poll_cq(cq, 1, wc);
        if (n > 0)
            return 1;
    }
    return 0;
}

/* Made in the main thread, one pair after another, so pair t owns QPs #2t and #2t+1 and CQs
 * #2t and #2t+1 whatever the threads do later: plans can aim at one thread's traffic. */
static int setup(struct pair *p)
{
    for (int k = 0; k < 2; k++)
        if (!(p->cq[k] = ibv_create_cq(p->ctx, 16, NULL, NULL, 0)))
            return -1;
    for (int k = 0; k < 2; k++) {
        struct ibv_qp_init_attr qa = {
            .send_cq = p->cq[k],
            .recv_cq = p->cq[k],
            .qp_type = IBV_QPT_UC,
            .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
        if (!(p->qp[k] = ibv_create_qp(p->pd, &qa)))
            return -1;
    }
    p->buf = calloc(2, SIZE);
    p->mr = p->buf ? ibv_reg_mr(p->pd, p->buf, 2 * SIZE, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!p->mr)
        return -1;
    return to_rts(p->qp[0], p->qp[1]->qp_num, p) || to_rts(p->qp[1], p->qp[0]->qp_num, p) ? -1 : 0;
}

static void teardown(struct pair *p)
{
    for (int k = 0; k < 2; k++) {
        if (p->qp[k])
            ibv_destroy_qp(p->qp[k]);
        if (p->cq[k])
            ibv_destroy_cq(p->cq[k]);
    }
    if (p->mr)
        ibv_dereg_mr(p->mr);
    free(p->buf);
}

static void *run(void *arg)
{
    struct pair *p = arg;
    uint8_t *buf = p->buf;
    for (int m = 0; m < p->msgs; m++) {
        for (int i = 0; i < SIZE; i++)
            buf[i] = (uint8_t)(m * 7 + i + p->index);
        memset(buf + SIZE, 0, SIZE);
        struct ibv_sge rs = {(uintptr_t)(buf + SIZE), SIZE, p->mr->lkey};
        struct ibv_sge ss = {(uintptr_t)buf, SIZE, p->mr->lkey};
        struct ibv_recv_wr rwr = {.wr_id = (uint64_t)m, .sg_list = &rs, .num_sge = 1}, *rb;
        struct ibv_send_wr swr = {.wr_id = (uint64_t)m,
                                  .sg_list = &ss,
                                  .num_sge = 1,
                                  .opcode = IBV_WR_SEND,
                                  .send_flags = IBV_SEND_SIGNALED},
                           *sb;
        struct ibv_wc wc;
        if (ibv_post_recv(p->qp[1], &rwr, &rb) || ibv_post_send(p->qp[0], &swr, &sb)) {
            p->err++;
            break;
        }
        double deadline = now_s() + 2.0;
        if (!wait_one(p->cq[0], &wc, deadline) || !wait_one(p->cq[1], &wc, deadline)) {
            p->timeouts++;
            break;
        }
        if (wc.status != IBV_WC_SUCCESS) {
            p->err++;
            break; /* the QP is broken: every later request would flush */
        }
        if (memcmp(buf, buf + SIZE, SIZE))
            p->err++;
        else
            p->ok++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4, msgs = argc > 2 ? atoi(argv[2]) : 200;
    const char *dev = argc > 3 ? argv[3] : "rxe0";
    struct pair pairs[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    int n = 0, rc = 0;

    if (threads < 1 || threads > MAX_THREADS || msgs < 1) {
        fprintf(stderr, "usage: rg-fi-threads [THREADS 1..%d] [MSGS] [DEVICE]\n", MAX_THREADS);
        return 2;
    }
    struct ibv_device **list = ibv_get_device_list(&n);
    struct ibv_context *ctx = NULL;
    for (int i = 0; list && i < n && !ctx; i++)
        if (!strcmp(ibv_get_device_name(list[i]), dev))
            ctx = ibv_open_device(list[i]);
    struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    if (!pd) {
        fprintf(stderr, "threads: cannot open %s\n", dev);
        return 2;
    }
    union ibv_gid gid;
    int gi = 1;
    if (ibv_query_gid(ctx, 1, gi, &gid))
        gi = 0, ibv_query_gid(ctx, 1, 0, &gid);
    for (int t = 0; t < threads; t++) {
        pairs[t] = (struct pair){
            .ctx = ctx, .pd = pd, .gid = gid, .gid_index = gi, .msgs = msgs, .index = t};
        if (setup(&pairs[t])) {
            fprintf(stderr, "threads: setting up pair %d: %s\n", t, strerror(errno));
            return 2;
        }
    }
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tids[t], NULL, run, &pairs[t]) != 0)
            return 2;
    for (int t = 0; t < threads; t++)
        pthread_join(tids[t], NULL);
    for (int t = 0; t < threads; t++) {
        printf("thread %d: ok=%d err=%d timeouts=%d\n", t, pairs[t].ok, pairs[t].err,
               pairs[t].timeouts);
        rc |= pairs[t].ok != msgs;
        teardown(&pairs[t]);
    }
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(list);
    return rc;
}
