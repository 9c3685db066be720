/* SPDX-License-Identifier: MIT */
/* Every ibv_* call the transport makes, each turned into an rg_status and recorded once. */
#include "rg_verbs.h"

#include "rg_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gid_is_zero(const uint8_t *g)
{
    static const uint8_t zero[16];
    return memcmp(g, zero, 16) == 0;
}

static int gid_is_ipv4_mapped(const uint8_t *g)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(g, prefix, sizeof(prefix)) == 0;
}

static int gid_rank(const struct rg_vgid_entry *g)
{
    if (gid_is_zero(g->gid))
        return 0;
    if (g->type == IBV_GID_TYPE_ROCE_V2)
        return gid_is_ipv4_mapped(g->gid) ? 3 : 2;
    return 1;
}

int rg_vgid_pick(const struct rg_vgid_entry *entries, int n)
{
    int best = -1, best_rank = 0;
    for (int i = 0; i < n; i++) {
        int r = gid_rank(&entries[i]);
        /* Ties go to the lowest index, the one a tool like ibv_devinfo lists first. */
        if (r > best_rank || (r == best_rank && r > 0 && entries[i].index < best)) {
            best = entries[i].index;
            best_rank = r;
        }
    }
    return best;
}

static rg_status pick_gid(struct rg_vdev *d, int table_len, struct rg_err *e)
{
    struct ibv_gid_entry *tab = NULL;
    struct rg_vgid_entry *mine = NULL;
    rg_status st = RG_OK;
    const char *forced = getenv("RG_GID_INDEX");

    if (forced && *forced) {
        int64_t v;
        char shown[72];
        rg_parse_show(forced, shown, sizeof(shown));
        if (rg_parse_int(forced, 0, table_len - 1, &v))
            return rg__err_set(e, RG_ERR_CONFIG, "RG_GID_INDEX='%s': not an index 0..%d of %s",
                               shown, table_len - 1, d->name);
        d->gid_index = (int)v;
        /* An index inside the table can still name an empty entry: say so here, not later as
         * "No data available" from a modify_qp that cannot resolve the address. */
        union ibv_gid g;
        static const union ibv_gid zero;
        if (ibv_query_gid(d->ctx, d->port, d->gid_index, &g) || !memcmp(&g, &zero, sizeof(g)))
            return rg__err_set(e, RG_ERR_CONFIG,
                               "RG_GID_INDEX='%s': entry %d of %s port %d's GID table is empty "
                               "(no address is configured there)",
                               shown, d->gid_index, d->name, d->port);
        goto query;
    }
    tab = calloc((size_t)table_len, sizeof(*tab));
    mine = calloc((size_t)table_len, sizeof(*mine));
    if (!tab || !mine) {
        st =
            rg__err_set(e, RG_ERR_NOMEM, "%s: no memory for a GID table of %d", d->name, table_len);
        goto out;
    }
    ssize_t n = ibv_query_gid_table(d->ctx, tab, (size_t)table_len, 0);
    if (n < 0) {
        st = rg__err_set(e, RG_ERR_VERBS, "%s: ibv_query_gid_table failed: %s", d->name,
                         strerror((int)-n));
        goto out;
    }
    int k = 0;
    for (ssize_t i = 0; i < n; i++) {
        if (tab[i].port_num != d->port)
            continue;
        memcpy(mine[k].gid, tab[i].gid.raw, 16);
        mine[k].index = (int)tab[i].gid_index;
        mine[k].type = (int)tab[i].gid_type;
        k++;
    }
    d->gid_index = rg_vgid_pick(mine, k);
    if (d->gid_index < 0) {
        st = rg__err_set(e, RG_ERR_NODEV,
                         "%s port %u has no usable GID (is its netdev up "
                         "with an address?)",
                         d->name, d->port);
        goto out;
    }
query:
    if (ibv_query_gid(d->ctx, d->port, d->gid_index, &d->gid))
        st = rg__err_set(e, RG_ERR_VERBS, "%s: ibv_query_gid(%d) failed: %s", d->name, d->gid_index,
                         strerror(errno));
out:
    free(tab);
    free(mine);
    return st;
}

rg_status rg_vdev_open(struct rg_vdev *d, const char *name, struct rg_err *e)
{
    struct ibv_device **list;
    struct ibv_port_attr pa;
    int n = 0;
    rg_status st;

    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->port = 1;
    list = ibv_get_device_list(&n);
    if (!list)
        return rg__err_set(e, RG_ERR_NODEV, "cannot list RDMA devices: %s", strerror(errno));
    for (int i = 0; i < n; i++) {
        if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
            d->ctx = ibv_open_device(list[i]);
            if (!d->ctx) {
                st = rg__err_set(e, RG_ERR_VERBS, "ibv_open_device(%s) failed: %s", name,
                                 strerror(errno));
                goto err_free_list;
            }
            break;
        }
    }
    if (!d->ctx) {
        st = rg__err_set(e, RG_ERR_NODEV, "no RDMA device named '%s' (%d device(s) present)", name,
                         n);
        goto err_free_list;
    }
    ibv_free_device_list(list);
    list = NULL;

    if (ibv_query_port(d->ctx, d->port, &pa)) {
        st = rg__err_set(e, RG_ERR_VERBS, "%s: ibv_query_port(%u) failed: %s", name, d->port,
                         strerror(errno));
        goto err_close;
    }
    if (pa.state != IBV_PORT_ACTIVE) {
        st = rg__err_set(e, RG_ERR_NODEV, "%s port %u is %s, not ACTIVE", name, d->port,
                         ibv_port_state_str(pa.state));
        goto err_close;
    }
    d->mtu = pa.active_mtu;
    d->lid = pa.lid;
    d->link_layer = pa.link_layer;
    d->gid_table_len = pa.gid_tbl_len;
    st = pick_gid(d, pa.gid_tbl_len, e);
    if (st)
        goto err_close;
    d->pd = ibv_alloc_pd(d->ctx);
    if (!d->pd) {
        st = rg__err_set(e, RG_ERR_VERBS, "%s: ibv_alloc_pd failed: %s", name, strerror(errno));
        goto err_close;
    }
    return RG_OK;

err_close:
    ibv_close_device(d->ctx);
    d->ctx = NULL;
err_free_list:
    if (list)
        ibv_free_device_list(list);
    return st;
}

void rg_vdev_close(struct rg_vdev *d)
{
    if (d->pd)
        ibv_dealloc_pd(d->pd);
    if (d->ctx)
        ibv_close_device(d->ctx);
    d->pd = NULL;
    d->ctx = NULL;
}

rg_status rg_vcq_create(struct rg_vdev *d, int depth, struct ibv_cq **cq_p, struct rg_err *e)
{
    struct ibv_cq *cq = ibv_create_cq(d->ctx, depth, NULL, NULL, 0);
    if (!cq)
        return rg__err_set(e, errno == ENOMEM ? RG_ERR_NOMEM : RG_ERR_VERBS,
                           "%s: ibv_create_cq(%d) failed: %s", d->name, depth, strerror(errno));
    *cq_p = cq;
    return RG_OK;
}

void rg_vcq_destroy(struct ibv_cq *cq)
{
    if (cq)
        ibv_destroy_cq(cq);
}

rg_status rg_vqp_create(struct rg_vdev *d, enum rg_qp_kind kind, struct ibv_cq *send_cq,
                        struct ibv_cq *recv_cq, uint32_t max_send, uint32_t max_recv,
                        struct ibv_qp **qp_p, struct rg_err *e)
{
    struct ibv_qp_init_attr a = {
        .send_cq = send_cq,
        .recv_cq = recv_cq,
        .cap = {.max_send_wr = max_send,
                .max_recv_wr = max_recv,
                .max_send_sge = 2,  /* a header from staging + a payload in place */
                .max_recv_sge = 2}, /* the same, received in place */
        .qp_type = kind == RG_QP_RC ? IBV_QPT_RC : IBV_QPT_UC,
        .sq_sig_all = 1,
    };
    struct ibv_qp *qp = ibv_create_qp(d->pd, &a);
    if (!qp)
        return rg__err_set(e, errno == ENOMEM ? RG_ERR_NOMEM : RG_ERR_VERBS,
                           "%s: ibv_create_qp(%s, send %u, recv %u) failed: %s", d->name,
                           kind == RG_QP_RC ? "RC" : "UC", max_send, max_recv, strerror(errno));
    *qp_p = qp;
    return RG_OK;
}

int rg_vqp_destroy(struct ibv_qp *qp)
{
    return qp ? ibv_destroy_qp(qp) : 0;
}

void rg_vqp_local_addr(const struct rg_vdev *d, const struct ibv_qp *qp, uint32_t psn,
                       struct rg_vqp_addr *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->qpn = qp->qp_num;
    addr->psn = psn & 0xffffff;
    memcpy(addr->gid, d->gid.raw, 16);
    addr->lid = d->lid;
    addr->mtu = (uint8_t)d->mtu;
    addr->port = d->port;
}

rg_status rg_vqp_init(struct rg_vdev *d, struct ibv_qp *qp, struct rg_err *e)
{
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = d->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    int rc =
        ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc)
        return rg__err_set(e, RG_ERR_VERBS, "%s qp 0x%x: modify to INIT failed: %s", d->name,
                           qp->qp_num, strerror(rc));
    return RG_OK;
}

rg_status rg_vqp_connect(struct rg_vdev *d, struct ibv_qp *qp, enum rg_qp_kind kind,
                         const struct rg_vqp_addr *local, const struct rg_vqp_addr *remote,
                         const struct rg_vqp_tuning *t, struct rg_err *e)
{
    struct ibv_qp_attr a;
    int rc;
    const char *kname = kind == RG_QP_RC ? "RC" : "UC";

    if (kind == RG_QP_RC && (t->retry_cnt > 6 || t->rnr_retry > 6))
        return rg__err_set(e, RG_ERR_INVALID,
                           "%s qp 0x%x: retry counts above 6 mean 'forever' "
                           "on rxe and are refused",
                           d->name, qp->qp_num);
    if (qp->state == IBV_QPS_RESET && rg_vqp_init(d, qp, e))
        return e ? e->st : RG_ERR_VERBS;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = remote->mtu < local->mtu ? (enum ibv_mtu)remote->mtu : (enum ibv_mtu)local->mtu;
    a.dest_qp_num = remote->qpn;
    a.rq_psn = remote->psn;
    a.ah_attr.port_num = d->port;
    a.ah_attr.dlid = remote->lid;
    if (d->link_layer != IBV_LINK_LAYER_INFINIBAND || remote->lid == 0) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, remote->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (kind == RG_QP_RC) {
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = 12;
        mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    }
    rc = ibv_modify_qp(qp, &a, mask);
    if (rc)
        goto fail_rtr;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = local->psn;
    mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (kind == RG_QP_RC) {
        a.timeout = t->timeout;
        a.retry_cnt = t->retry_cnt;
        a.rnr_retry = t->rnr_retry;
        a.max_rd_atomic = 1;
        mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    }
    rc = ibv_modify_qp(qp, &a, mask);
    if (rc)
        return rg__err_set(e, RG_ERR_VERBS, "%s %s qp 0x%x: modify to RTS failed: %s", d->name,
                           kname, qp->qp_num, strerror(rc));
    return RG_OK;

fail_rtr:
    return rg__err_set(e, RG_ERR_VERBS,
                       "%s %s qp 0x%x: modify to RTR (remote qp 0x%x) failed: "
                       "%s",
                       d->name, kname, qp->qp_num, remote->qpn, strerror(rc));
}

rg_status rg_vmr_reg(struct rg_vdev *d, void *buf, size_t len, int access, struct ibv_mr **mr_p,
                     struct rg_err *e)
{
    struct ibv_mr *mr = ibv_reg_mr(d->pd, buf, len, access);
    if (!mr)
        return rg__err_set(e, errno == ENOMEM ? RG_ERR_NOMEM : RG_ERR_VERBS,
                           "%s: ibv_reg_mr(%zu bytes) failed: %s", d->name, len, strerror(errno));
    *mr_p = mr;
    return RG_OK;
}

void rg_vmr_dereg(struct ibv_mr *mr)
{
    if (mr)
        ibv_dereg_mr(mr);
}

rg_status rg_vpost_send(struct ibv_qp *qp, uint64_t wr_id, const struct ibv_sge *sge, int nsge,
                        struct rg_err *e)
{
    struct ibv_send_wr wr = {.wr_id = wr_id,
                             .sg_list = (struct ibv_sge *)(uintptr_t)sge,
                             .num_sge = nsge,
                             .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED};
    struct ibv_send_wr *bad;
    uint32_t len = 0;
    int rc = ibv_post_send(qp, &wr, &bad);
    if (rc) {
        for (int i = 0; i < nsge; i++)
            len += sge[i].length;
        return rg__err_set(e, rc == ENOMEM ? RG_ERR_NOMEM : RG_ERR_VERBS,
                           "qp 0x%x: post_send of %u bytes (wr_id 0x%llx) failed: %s", qp->qp_num,
                           len, (unsigned long long)wr_id, strerror(rc));
    }
    return RG_OK;
}

rg_status rg_vpost_send_wr(struct ibv_qp *qp, struct ibv_send_wr *wr, struct rg_err *e)
{
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(qp, wr, &bad);
    if (rc)
        return rg__err_set(e, rc == ENOMEM ? RG_ERR_NOMEM : RG_ERR_VERBS,
                           "qp 0x%x: post_send (opcode %d, wr_id 0x%llx) failed: %s", qp->qp_num,
                           (int)wr->opcode, (unsigned long long)wr->wr_id, strerror(rc));
    return RG_OK;
}

rg_status rg_vpost_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey,
                        struct rg_err *e)
{
    struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
    return rg_vpost_recv_sge(qp, wr_id, &sge, 1, e);
}

rg_status rg_vpost_recv_sge(struct ibv_qp *qp, uint64_t wr_id, const struct ibv_sge *sge, int nsge,
                            struct rg_err *e)
{
    struct ibv_recv_wr wr = {
        .wr_id = wr_id, .sg_list = (struct ibv_sge *)(uintptr_t)sge, .num_sge = nsge};
    struct ibv_recv_wr *bad;
    int rc = ibv_post_recv(qp, &wr, &bad);
    if (rc) {
        uint32_t bytes = 0; /* for the message only: every receive's repost comes here */
        for (int i = 0; i < nsge; i++)
            bytes += sge[i].length;
        return rg__err_set(e, rc == ENOMEM ? RG_ERR_NOMEM : RG_ERR_VERBS,
                           "qp 0x%x: post_recv of %u bytes in %d buffer(s) (wr_id 0x%llx) "
                           "failed: %s",
                           qp->qp_num, bytes, nsge, (unsigned long long)wr_id, strerror(rc));
    }
    return RG_OK;
}

/* Out of line and cold: the checks in rg_vpoll then cost a compare a completion, with no
 * stack frame for the message buffer on every poll (`make bench` counts them). */
__attribute__((cold, noinline)) static int vpoll_failed(int got, const struct ibv_wc *wc,
                                                        const struct rg_vpoller *pl)
{
    if (got < 0)
        return rg__err_set(pl->e, RG_ERR_POLL, "ibv_poll_cq returned %d", got);
    char what[160] = "completion";
    if (pl->describe)
        pl->describe(wc, pl->arg, what, sizeof(what));
    return rg__err_set(pl->e, RG_ERR_COMPLETION,
                       "%s (qp 0x%x, wr_id 0x%llx): completion %s (%d), vendor_err %u", what,
                       wc->qp_num, (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
                       (int)wc->status, wc->vendor_err);
}

int rg_vpoll(struct ibv_cq *cq, int n, struct ibv_wc *wc, const struct rg_vpoller *pl)
{
    int got = ibv_poll_cq(cq, n, wc);
    if (__builtin_expect(got < 0, 0))
        return vpoll_failed(got, wc, pl);
    for (int i = 0; i < got; i++)
        if (__builtin_expect(wc[i].status != IBV_WC_SUCCESS, 0))
            return vpoll_failed(got, &wc[i], pl);
    return got;
}
