/* SPDX-License-Identifier: MIT */
/*
 * A communicator's connections: its devices, a QP per (peer, rail) with its staging memory
 * and prefilled receives, the records the ranks trade to connect them, the checks that catch
 * crossed or misconfigured rails, the hello every rail must carry, and their teardown.
 */
#include "rg_comm.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What rank i tells everyone about its end of connection (i, peer, rail). */
struct conn_info {
    struct rg_vqp_addr a;
    uint64_t mailbox;
    uint32_t rkey;
    uint32_t slots;
    uint32_t chunk;
    uint32_t oneshot; /* plan-shaping settings: every rank must pick the same plan */
    uint8_t valid;
    uint8_t algo;
    uint8_t ring_bidir;
    uint8_t pad;
    char dev[RG_DEVNAME_MAX];
};

static struct rg_dev *open_dev(struct rg_comm *c, const char *name)
{
    for (int i = 0; i < c->ndevs; i++)
        if (!strcmp(c->devs[i].v.name, name))
            return &c->devs[i];
    struct rg_dev *d = &c->devs[c->ndevs];
    if (rg_vdev_open(&d->v, name, &c->err))
        return NULL;
    c->ndevs++;
    return d;
}

/* Two GIDs are on one link when their IPv4 /24 (or, for IPv6 GIDs, /64 prefix) agree. */
static int same_link(const uint8_t *a, const uint8_t *b)
{
    static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!memcmp(a, v4, 12) && !memcmp(b, v4, 12))
        return !memcmp(a + 12, b + 12, 3);
    return !memcmp(a, b, 8);
}

static void gid_str(const uint8_t *g, char *buf, size_t len)
{
    if (!inet_ntop(AF_INET6, g, buf, (socklen_t)len))
        snprintf(buf, len, "?");
}

rg_status rg__conns_make(struct rg_comm *c, const struct rg_devices *dv)
{
    size_t total = 0;
    for (int p = 0; p < c->size; p++)
        total += (size_t)dv->nrails[p];
    c->conns = calloc(total ? total : 1, sizeof(*c->conns));
    if (!c->conns)
        return rg__err_set(&c->err, RG_ERR_NOMEM, "rank %d: no memory for connections", c->rank);
    size_t slot_bytes = sizeof(struct rg_hdr) + c->chunk_bytes;
    for (int p = 0; p < c->size; p++) {
        c->nrails[p] = dv->nrails[p];
        for (int k = 0; k < RG_MAX_RAILS; k++)
            c->conn_of[p][k] = -1;
        for (int k = 0; k < dv->nrails[p]; k++) {
            struct rg_conn *x = &c->conns[c->nconns];
            x->idx = c->nconns++;
            x->peer = p;
            x->rail = k;
            c->conn_of[p][k] = x->idx;
            x->dev = open_dev(c, dv->names[p][k]);
            if (!x->dev)
                return c->err.st;
            x->slot_bytes = slot_bytes;
            /* Receive and send slots, then the mailbox and credit sources (8-byte aligned). */
            x->mem_len = 2 * (size_t)c->slots * slot_bytes + 16 * (1 + RG_CREDIT_SRC);
            if (posix_memalign((void **)&x->mem, 4096, x->mem_len))
                return rg__err_set(&c->err, RG_ERR_NOMEM,
                                   "rank %d: no memory for %zu bytes of "
                                   "staging",
                                   c->rank, x->mem_len);
            memset(x->mem, 0, x->mem_len);
            if (rg_vmr_reg(&x->dev->v, x->mem, x->mem_len,
                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &x->mr, &c->err))
                return c->err.st;
        }
    }
    /* One CQ per device, deep enough for every work request its connections can have. */
    for (int d = 0; d < c->ndevs; d++) {
        int depth = 0;
        for (int i = 0; i < c->nconns; i++)
            if (c->conns[i].dev == &c->devs[d])
                depth += 2 * (int)c->slots + RG_CREDIT_SRC + 2;
        if (rg_vcq_create(&c->devs[d].v, depth, &c->devs[d].cq, &c->err))
            return c->err.st;
    }
    enum rg_qp_kind kind = c->cfg.qp_type == RG_QPT_RC ? RG_QP_RC : RG_QP_UC;
    for (int i = 0; i < c->nconns; i++) {
        struct rg_conn *x = &c->conns[i];
        if (rg_vqp_create(&x->dev->v, kind, x->dev->cq, x->dev->cq, c->slots + RG_CREDIT_SRC + 1,
                          c->slots + 1, &x->qp, &c->err))
            return c->err.st;
        if (rg_vqp_init(&x->dev->v, x->qp, &c->err))
            return c->err.st;
        /* Prefill: every receive slot is posted before any peer may send. */
        for (unsigned s = 0; s < c->slots; s++)
            if (rg__post_recv_slot(c, x))
                return c->err.st;
        x->credit_granted = x->recv_posted;
        x->peer_credit = c->slots;
    }
    return RG_OK;
}

/*
 * A peer's connection record came over the network: every field is checked before any is
 * used or printed. Returns NULL, or the field that is wrong. (A device name without its NUL
 * once made the crossed-rail message read past the record.)
 */
static const char *bad_record(const struct conn_info *r)
{
    if (r->valid > 1)
        return "valid flag";
    if (!r->valid)
        return NULL; /* no rail: nothing else in it is read */
    const char *end = memchr(r->dev, '\0', sizeof(r->dev));
    if (!end || end == r->dev)
        return "device name (empty, or no NUL within its bound)";
    for (const char *p = r->dev; p < end; p++)
        if (*p < 0x21 || *p > 0x7e)
            return "device name (a character that is not printable)";
    if (r->a.qpn == 0 || r->a.qpn > 0xffffff)
        return "QP number";
    if (r->a.psn > 0xffffff)
        return "packet sequence number";
    if (r->algo > 2 || r->ring_bidir > 1)
        return "algorithm settings";
    if (!r->slots || !r->chunk)
        return "slot settings";
    return NULL;
}

/* This rank's end of connection x, as its peer will read it. */
static void fill_record(struct rg_comm *c, struct rg_conn *x, struct conn_info *ci)
{
    rg_vqp_local_addr(&x->dev->v, x->qp, (uint32_t)(rg__mix(&c->seed) & 0xffffff), &ci->a);
    ci->mailbox = (uint64_t)(uintptr_t)rg__mailbox(c, x);
    ci->rkey = x->mr->rkey;
    ci->slots = c->slots;
    ci->chunk = (uint32_t)c->chunk_bytes;
    ci->oneshot = (uint32_t)c->oneshot_bytes;
    ci->algo = (uint8_t)c->algo;
    ci->ring_bidir = (uint8_t)c->ring_bidir;
    ci->valid = 1;
    snprintf(ci->dev, sizeof(ci->dev), "%s", x->dev->v.name);
}

/* Whether the peer's record for connection x can be paired with this rank's: well formed,
 * with the same settings, and on the same link. */
static rg_status check_record(struct rg_comm *c, const struct rg_conn *x,
                              const struct conn_info *me, const struct conn_info *them)
{
    const char *bad = bad_record(them);
    if (bad) {
        return rg__err_set(&c->err, RG_ERR_PROTOCOL,
                           "rank %d: rank %d's connection record for rail %d is malformed: "
                           "its %s",
                           c->rank, x->peer, x->rail, bad);
    }
    if (!them->valid || c->nrails[x->peer] == 0) {
        return rg__err_set(&c->err, RG_ERR_RAIL_MISMATCH,
                           "rank %d: rail %d to rank %d: rank %d has no rail %d back (devices "
                           "files disagree)",
                           c->rank, x->rail, x->peer, x->peer, x->rail);
    }
    if (them->slots != c->slots || them->chunk != c->chunk_bytes) {
        return rg__err_set(&c->err, RG_ERR_CONFIG,
                           "rank %d: rank %d uses %u slots of %u bytes, this rank %u of %zu "
                           "(set RG_SLOTS and RG_CHUNK_BYTES alike everywhere)",
                           c->rank, x->peer, them->slots, them->chunk, c->slots, c->chunk_bytes);
    }
    /* Ranks that disagree here would run different plans: with message sizes that
     * happen to match, that is a wrong result, not an error. */
    if (them->algo != (uint8_t)c->algo || them->oneshot != c->oneshot_bytes ||
        them->ring_bidir != c->ring_bidir) {
        static const char *const an[] = {"auto", "ring", "mesh"};
        return rg__err_set(&c->err, RG_ERR_CONFIG,
                           "rank %d: rank %d runs algorithm %s, one-shot up to %u bytes, ring "
                           "both ways %u; this rank %s, %zu, %u (set the algorithm, "
                           "RG_ONESHOT_BYTES and RG_RING_BIDIR alike everywhere)",
                           c->rank, x->peer, them->algo < 3 ? an[them->algo] : "?", them->oneshot,
                           them->ring_bidir, an[c->algo], c->oneshot_bytes, c->ring_bidir);
    }
    if (!same_link(me->a.gid, them->a.gid)) {
        char g1[64], g2[64];
        gid_str(me->a.gid, g1, sizeof(g1));
        gid_str(them->a.gid, g2, sizeof(g2));
        return rg__err_set(&c->err, RG_ERR_RAIL_MISMATCH,
                           "rank %d: rail %d to rank %d is crossed: rank %d uses %s (%s) but "
                           "rank %d uses %s (%s), which is another link",
                           c->rank, x->rail, x->peer, c->rank, me->dev, g1, x->peer, them->dev, g2);
    }
    return RG_OK;
}

/* Trades every connection's record through the side channel, checks the peer's, and moves
 * each QP to ready-to-receive and send. */
rg_status rg__conns_connect(struct rg_comm *c, double deadline)
{
    size_t per = (size_t)c->size * RG_MAX_RAILS;
    struct conn_info *mine = calloc(per, sizeof(*mine));
    struct conn_info *all = calloc(per * (size_t)c->size, sizeof(*all));
    rg_status st = RG_OK;
    if (!mine || !all) {
        st = rg__err_set(&c->err, RG_ERR_NOMEM, "rank %d: no memory for the exchange", c->rank);
        goto out;
    }
    for (int i = 0; i < c->nconns; i++) {
        struct rg_conn *x = &c->conns[i];
        fill_record(c, x, &mine[(size_t)x->peer * RG_MAX_RAILS + (size_t)x->rail]);
    }
    st = rg__sc_allgather(c->sc, mine, per * sizeof(*mine), all, deadline, &c->err);
    if (st)
        goto out;
    for (int i = 0; i < c->nconns; i++) {
        struct rg_conn *x = &c->conns[i];
        const struct conn_info *me = &mine[(size_t)x->peer * RG_MAX_RAILS + (size_t)x->rail];
        const struct conn_info *them =
            &all[(size_t)x->peer * per + (size_t)c->rank * RG_MAX_RAILS + (size_t)x->rail];
        st = check_record(c, x, me, them);
        if (st)
            goto out;
        struct rg_vqp_tuning tune = RG_VQP_TUNING_DEFAULT;
        tune.timeout = (uint8_t)c->ib_timeout;
        tune.retry_cnt = (uint8_t)c->ib_retry_cnt;
        x->remote_mailbox = them->mailbox;
        x->remote_rkey = them->rkey;
        if (rg_vqp_connect(&x->dev->v, x->qp, c->cfg.qp_type == RG_QPT_RC ? RG_QP_RC : RG_QP_UC,
                           &me->a, &them->a, &tune, &c->err)) {
            st = c->err.st;
            goto out;
        }
    }
out:
    free(mine);
    free(all);
    return st;
}

/* Every rail carries one hello each way: a rail that does not deliver it fails here. */
rg_status rg__conns_hello(struct rg_comm *c, double deadline)
{
    /* Our own check below names the silent rail; the engine's deadline comes a second later. */
    double grace = deadline + 1.0;
    int got = 0;
    for (int i = 0; i < c->nconns; i++) {
        struct rg_conn *x = &c->conns[i];
        int32_t who[2] = {c->rank, x->peer};
        if (rg__send(c, x, RG_MSG_HELLO, who, sizeof(who), NULL))
            return c->err.st;
    }
    char done[RG_MAX_RANKS * RG_MAX_RAILS] = {0};
    while (got < c->nconns) {
        for (int i = 0; i < c->nconns; i++) {
            struct rg_conn *x = &c->conns[i];
            const void *p;
            size_t len;
            if (done[i])
                continue;
            int r = rg__peek(c, x, RG_MSG_HELLO, &p, &len);
            if (r < 0)
                return c->err.st;
            if (r == 0)
                continue;
            int32_t who[2] = {-1, -1};
            if (len == sizeof(who))
                memcpy(who, p, sizeof(who));
            if (who[0] != x->peer || who[1] != c->rank) {
                rg__err_set(&c->err, RG_ERR_RAIL_MISMATCH,
                            "rank %d: rail %d to rank %d delivered a hello from rank %d to rank "
                            "%d: rails are crossed",
                            c->rank, x->rail, x->peer, who[0], who[1]);
                return rg__fail(c, RG_ERR_RAIL_MISMATCH);
            }
            if (rg__release(c, x))
                return c->err.st;
            done[i] = 1;
            got++;
        }
        if (got == c->nconns)
            break;
        if (rg__now() > deadline) {
            for (int i = 0; i < c->nconns; i++)
                if (!done[i]) {
                    /* What was seen is a deadline passing: a timeout, so a runner can tell a
                     * peer held back on a busy machine from a rail that is wrong (a hello
                     * from the wrong rank, above, is RG_ERR_RAIL_MISMATCH). */
                    rg__err_set(&c->err, RG_ERR_TIMEOUT,
                                "rank %d: rail %d to rank %d (%s, qp 0x%x) delivered nothing "
                                "within %.1f s: the rail is crossed or down, or rank %d is slow",
                                c->rank, c->conns[i].rail, c->conns[i].peer,
                                c->conns[i].dev->v.name, c->conns[i].qp->qp_num, c->timeout_s,
                                c->conns[i].peer);
                    break;
                }
            return rg__fail(c, RG_ERR_TIMEOUT);
        }
        if (rg__progress(c, &grace))
            return c->err.st;
    }
    /* Every connection starts with all its slots granted, the hello's included. */
    for (int i = 0; i < c->nconns; i++)
        if (c->conns[i].recv_posted != c->conns[i].credit_granted &&
            rg__write_credit(c, &c->conns[i]))
            return c->err.st;
    return rg__drain_sends(c, &deadline);
}

void rg__conns_free(struct rg_comm *c)
{
    for (int i = 0; i < c->nconns; i++) {
        rg_vqp_destroy(c->conns[i].qp);
        rg_vmr_dereg(c->conns[i].mr);
        free(c->conns[i].mem);
    }
    free(c->conns);
}

void rg__devs_close(struct rg_comm *c)
{
    for (int d = 0; d < c->ndevs; d++) {
        rg_vcq_destroy(c->devs[d].cq);
        rg_vdev_close(&c->devs[d].v);
    }
}
