/* SPDX-License-Identifier: MIT */
/*
 * rg_verbs.h - the transport's one door to ibverbs. Every ibv_* call in railguard's transport
 * is made in rg_verbs.c, which turns the result into an rg_status and records the error once,
 * where it is detected, with the device, QP number and verbs status in the message.
 */
#ifndef RG_VERBS_H
#define RG_VERBS_H

#include "rg_internal.h"

#include <infiniband/verbs.h>
#include <stdint.h>

enum rg_qp_kind { RG_QP_UC = 0, RG_QP_RC = 1 };

/* An open device with its protection domain and the port and GID railguard uses. */
struct rg_vdev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    char name[64];
    uint8_t port;
    int gid_index;
    int gid_table_len; /* the port's GID table, populated or not */
    union ibv_gid gid;
    enum ibv_mtu mtu; /* the port's active MTU */
    uint16_t lid;     /* nonzero on InfiniBand, 0 on RoCE */
    int link_layer;   /* IBV_LINK_LAYER_* */
};

/*
 * What two sides exchange to connect a QP pair. Fixed-size and byte-order-neutral fields
 * only, so it can cross the side channel as it is.
 */
struct rg_vqp_addr {
    uint32_t qpn;
    uint32_t psn;
    uint8_t gid[16];
    uint16_t lid;
    uint8_t mtu;
    uint8_t port;
};

/* RC reliability settings. rxe treats retry_cnt 7 as "retry forever": railguard never uses it. */
struct rg_vqp_tuning {
    uint8_t timeout;   /* 4.096 us * 2^timeout per try */
    uint8_t retry_cnt; /* 0..6 */
    uint8_t rnr_retry; /* 0..6; 7 would mean forever */
};
#define RG_VQP_TUNING_DEFAULT                                                                      \
    {                                                                                              \
        .timeout = 14, .retry_cnt = 6, .rnr_retry = 6                                              \
    }

/* One GID table entry as the picker sees it (a plain copy, so the logic is testable). */
struct rg_vgid_entry {
    uint8_t gid[16];
    int index;
    int type; /* IBV_GID_TYPE_* */
};

/*
 * Chooses the GID index to use: a RoCE v2 IPv4-mapped GID first (it routes over the rail's
 * /24), then any RoCE v2 GID, then any RoCE v1 or IB GID, skipping all-zero entries.
 * Returns -1 when nothing is usable.
 */
int rg_vgid_pick(const struct rg_vgid_entry *entries, int n);

/* Describes the operation behind a failed completion, e.g. "recv from rank 0 rail 1". */
typedef void (*rg_vwc_describe_fn)(const struct ibv_wc *wc, void *arg, char *buf, size_t len);

/* What rg_vpoll names a failed completion with (describe may be NULL) and where its error
 * goes: one pointer, so a poll that finds nothing saves two registers, not four. */
struct rg_vpoller {
    rg_vwc_describe_fn describe;
    void *arg;
    struct rg_err *e;
};

rg_status rg_vdev_open(struct rg_vdev *d, const char *name, struct rg_err *e);
void rg_vdev_close(struct rg_vdev *d);

rg_status rg_vcq_create(struct rg_vdev *d, int depth, struct ibv_cq **cq_p, struct rg_err *e);
void rg_vcq_destroy(struct ibv_cq *cq);

rg_status rg_vqp_create(struct rg_vdev *d, enum rg_qp_kind kind, struct ibv_cq *send_cq,
                        struct ibv_cq *recv_cq, uint32_t max_send, uint32_t max_recv,
                        struct ibv_qp **qp_p, struct rg_err *e);
/* 0, or ibv_destroy_qp's error number (the QP then still exists). */
int rg_vqp_destroy(struct ibv_qp *qp);
void rg_vqp_local_addr(const struct rg_vdev *d, const struct ibv_qp *qp, uint32_t psn,
                       struct rg_vqp_addr *addr);
/* RESET -> INIT; receives may be posted from here on, before the QP is connected. */
rg_status rg_vqp_init(struct rg_vdev *d, struct ibv_qp *qp, struct rg_err *e);
/* INIT -> RTR -> RTS against the remote side's address (a QP still in RESET goes to INIT). */
rg_status rg_vqp_connect(struct rg_vdev *d, struct ibv_qp *qp, enum rg_qp_kind kind,
                         const struct rg_vqp_addr *local, const struct rg_vqp_addr *remote,
                         const struct rg_vqp_tuning *t, struct rg_err *e);

rg_status rg_vmr_reg(struct rg_vdev *d, void *buf, size_t len, int access, struct ibv_mr **mr_p,
                     struct rg_err *e);
void rg_vmr_dereg(struct ibv_mr *mr);

/* A signaled send gathered from nsge buffers (each sge names its own lkey). */
rg_status rg_vpost_send(struct ibv_qp *qp, uint64_t wr_id, const struct ibv_sge *sge, int nsge,
                        struct rg_err *e);
/* Posts one prepared work request (an RDMA write, say). */
rg_status rg_vpost_send_wr(struct ibv_qp *qp, struct ibv_send_wr *wr, struct rg_err *e);
rg_status rg_vpost_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey,
                        struct rg_err *e);
/* A receive scattered over nsge buffers (each sge names its own lkey). */
rg_status rg_vpost_recv_sge(struct ibv_qp *qp, uint64_t wr_id, const struct ibv_sge *sge, int nsge,
                            struct rg_err *e);

/*
 * Polls up to n completions into wc. Returns how many, all with IBV_WC_SUCCESS, or a negative
 * rg_status: RG_ERR_POLL when ibv_poll_cq itself fails, RG_ERR_COMPLETION for the first
 * completion whose status is not success (described by pl->describe, if set). Every poll site
 * in the transport goes through here, so no completion status goes unchecked.
 */
int rg_vpoll(struct ibv_cq *cq, int n, struct ibv_wc *wc, const struct rg_vpoller *pl);

#endif /* RG_VERBS_H */
