/* SPDX-License-Identifier: MIT */
/* The communicator: set-up, rail verification, registered memory, teardown. The progress
 * engine that moves its messages is rg_engine.c. */
#include "rg_comm.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S 60.0
#define DEFAULT_CHUNK (64u << 10)
#define DEFAULT_SLOTS 8u
#define DEFAULT_ZCOPY_MIN (32u << 10)
#define DEFAULT_POLL_YIELD 1024u
#define DEFAULT_ONESHOT (4u << 10)

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

/* splitmix64: tags and starting PSNs only need to differ between communicators. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* --- registered memory ---------------------------------------------------------------------- */

static void mem_free(struct rg_comm *c, struct rg_mem *m)
{
    for (int d = 0; d < c->ndevs; d++)
        rg_vmr_dereg(m->mr[d]);
    free(m);
}

rg_status rg_mem_register(rg_comm_h c, void *buf, size_t len, rg_mem_h *mem_p)
{
    if (!c || !mem_p)
        return RG_ERR_INVALID;
    if (c->poisoned)
        return c->err.st;
    rg__err_clear(&c->err);
    if (!buf || !len)
        return rg__err_set(&c->err, RG_ERR_INVALID, "rank %d: rg_mem_register: %s", c->rank,
                           buf ? "an empty region" : "a NULL buffer");
    int slot = 0;
    while (slot < RG_MEM_MAX && c->mem[slot])
        slot++;
    if (slot == RG_MEM_MAX)
        return rg__err_set(&c->err, RG_ERR_INVALID,
                           "rank %d: rg_mem_register: %d regions are registered already, the "
                           "most a communicator keeps",
                           c->rank, RG_MEM_MAX);
    struct rg_mem *m = calloc(1, sizeof(*m));
    if (!m)
        return rg__err_set(&c->err, RG_ERR_NOMEM, "rank %d: rg_mem_register: no memory", c->rank);
    m->base = buf;
    m->len = len;
    for (int d = 0; d < c->ndevs; d++) {
        /* Read by the local device only: read-only pages (a const input) register too. */
        rg_status st = rg_vmr_reg(&c->devs[d].v, buf, len, 0, &m->mr[d], &c->err);
        if (st) {
            mem_free(c, m);
            return st;
        }
    }
    c->mem[slot] = m;
    c->nmem++;
    *mem_p = m;
    return RG_OK;
}

rg_status rg_mem_deregister(rg_comm_h c, rg_mem_h m)
{
    if (!c)
        return RG_ERR_INVALID;
    for (int i = 0; i < RG_MEM_MAX; i++)
        if (m && c->mem[i] == m) {
            c->mem[i] = NULL;
            c->nmem--;
            mem_free(c, m);
            return RG_OK;
        }
    /* Not an error that poisons: nothing was sent. A poisoned communicator keeps its error. */
    if (c->poisoned)
        return RG_ERR_INVALID;
    rg__err_clear(&c->err);
    rg__err_set(&c->err, RG_ERR_INVALID,
                "rank %d: rg_mem_deregister: %p is no region of this communicator", c->rank,
                (void *)m);
    return RG_ERR_INVALID;
}

/* --- set-up ---------------------------------------------------------------------------------- */

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

static rg_status make_conns(struct rg_comm *c, const struct rg_devices *dv)
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

static rg_status exchange_and_connect(struct rg_comm *c, double deadline)
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
        struct conn_info *ci = &mine[(size_t)x->peer * RG_MAX_RAILS + (size_t)x->rail];
        rg_vqp_local_addr(&x->dev->v, x->qp, (uint32_t)(mix(&c->seed) & 0xffffff), &ci->a);
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
    st = rg__sc_allgather(c->sc, mine, per * sizeof(*mine), all, deadline, &c->err);
    if (st)
        goto out;
    for (int i = 0; i < c->nconns; i++) {
        struct rg_conn *x = &c->conns[i];
        const struct conn_info *me = &mine[(size_t)x->peer * RG_MAX_RAILS + (size_t)x->rail];
        const struct conn_info *them =
            &all[(size_t)x->peer * per + (size_t)c->rank * RG_MAX_RAILS + (size_t)x->rail];
        const char *bad = bad_record(them);
        if (bad) {
            st = rg__err_set(&c->err, RG_ERR_PROTOCOL,
                             "rank %d: rank %d's connection record for rail %d is malformed: "
                             "its %s",
                             c->rank, x->peer, x->rail, bad);
            goto out;
        }
        if (!them->valid || c->nrails[x->peer] == 0) {
            st = rg__err_set(&c->err, RG_ERR_RAIL_MISMATCH,
                             "rank %d: rail %d to rank %d: rank %d has no rail %d back (devices "
                             "files disagree)",
                             c->rank, x->rail, x->peer, x->peer, x->rail);
            goto out;
        }
        if (them->slots != c->slots || them->chunk != c->chunk_bytes) {
            st = rg__err_set(&c->err, RG_ERR_CONFIG,
                             "rank %d: rank %d uses %u slots of %u bytes, this rank %u of %zu "
                             "(set RG_SLOTS and RG_CHUNK_BYTES alike everywhere)",
                             c->rank, x->peer, them->slots, them->chunk, c->slots, c->chunk_bytes);
            goto out;
        }
        /* Ranks that disagree here would run different plans: with message sizes that
         * happen to match, that is a wrong result, not an error. */
        if (them->algo != (uint8_t)c->algo || them->oneshot != c->oneshot_bytes ||
            them->ring_bidir != c->ring_bidir) {
            static const char *const an[] = {"auto", "ring", "mesh"};
            st = rg__err_set(&c->err, RG_ERR_CONFIG,
                             "rank %d: rank %d runs algorithm %s, one-shot up to %u bytes, ring "
                             "both ways %u; this rank %s, %zu, %u (set the algorithm, "
                             "RG_ONESHOT_BYTES and RG_RING_BIDIR alike everywhere)",
                             c->rank, x->peer, them->algo < 3 ? an[them->algo] : "?", them->oneshot,
                             them->ring_bidir, an[c->algo], c->oneshot_bytes, c->ring_bidir);
            goto out;
        }
        if (!same_link(me->a.gid, them->a.gid)) {
            char g1[64], g2[64];
            gid_str(me->a.gid, g1, sizeof(g1));
            gid_str(them->a.gid, g2, sizeof(g2));
            st = rg__err_set(&c->err, RG_ERR_RAIL_MISMATCH,
                             "rank %d: rail %d to rank %d is crossed: rank %d uses %s (%s) but "
                             "rank %d uses %s (%s), which is another link",
                             c->rank, x->rail, x->peer, c->rank, me->dev, g1, x->peer, them->dev,
                             g2);
            goto out;
        }
        static const struct rg_vqp_tuning tune = RG_VQP_TUNING_DEFAULT;
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
static rg_status hello(struct rg_comm *c, double deadline)
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
                    rg__err_set(&c->err, RG_ERR_RAIL_MISMATCH,
                                "rank %d: rail %d to rank %d (%s, qp 0x%x) delivered nothing "
                                "within %.1f s: the rail is crossed or down",
                                c->rank, c->conns[i].rail, c->conns[i].peer,
                                c->conns[i].dev->v.name, c->conns[i].qp->qp_num, c->timeout_s);
                    break;
                }
            return rg__fail(c, RG_ERR_RAIL_MISMATCH);
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

/* A tuning variable: a count, or with `bytes` a size ("64K"); the shared parser decides. */
static unsigned env_uint(const char *name, unsigned dflt, unsigned lo, unsigned hi, bool bytes,
                         struct rg_err *e)
{
    const char *s = getenv(name);
    uint64_t v;
    if (!s || !*s)
        return dflt;
    if (bytes ? rg_parse_size(s, lo, hi, &v) : rg_parse_uint(s, false, lo, hi, &v)) {
        char shown[72];
        rg__err_set(e, RG_ERR_CONFIG, "%s='%s': expected %s from %u to %u", name,
                    rg_parse_show(s, shown, sizeof(shown)),
                    bytes ? "a size in bytes (or with K, M, G)" : "a number", lo, hi);
        return 0;
    }
    return (unsigned)v;
}

static void comm_free(struct rg_comm *c)
{
    for (int i = 0; i < c->nconns; i++) {
        rg_vqp_destroy(c->conns[i].qp);
        rg_vmr_dereg(c->conns[i].mr);
        free(c->conns[i].mem);
    }
    free(c->conns);
    /* After the QPs: no work request can still read a region. */
    for (int i = 0; i < RG_MEM_MAX; i++)
        if (c->mem[i])
            mem_free(c, c->mem[i]);
    for (int d = 0; d < c->ndevs; d++) {
        rg_vcq_destroy(c->devs[d].cq);
        rg_vdev_close(&c->devs[d].v);
    }
    rg__sc_close(c->sc);
    free(c);
}

rg_status rg_comm_create(const rg_config *cfg, rg_comm_h *comm_p, char *err, size_t errlen)
{
    struct rg_devices *dv = NULL;
    struct rg_comm *c = calloc(1, sizeof(*c));
    rg_status st;
    if (!c) {
        snprintf(err, errlen, "no memory for a communicator");
        return RG_ERR_NOMEM;
    }
    c->cfg = *cfg;
    explicit_bzero(c->cfg.secret, sizeof(c->cfg.secret)); /* needed at the handshake only */
    c->rank = cfg->rank;
    c->wait_peer = -1;
    c->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : DEFAULT_TIMEOUT_S;
    c->algo = cfg->algo;
    double deadline = rg__now() + c->timeout_s;
    c->chunk_bytes = env_uint("RG_CHUNK_BYTES", DEFAULT_CHUNK, 4096, 8u << 20, true, &c->err);
    c->slots = env_uint("RG_SLOTS", DEFAULT_SLOTS, 2, RG_SLOTS_MAX, false, &c->err);
    c->ring_bidir = env_uint("RG_RING_BIDIR", 1, 0, 1, false, &c->err);
    c->zcopy_min = env_uint("RG_ZCOPY_MIN", DEFAULT_ZCOPY_MIN, 0, 1u << 30, true, &c->err);
    c->oneshot_bytes = env_uint("RG_ONESHOT_BYTES", DEFAULT_ONESHOT, 0, 1u << 20, true, &c->err);
    c->credit_batch = env_uint("RG_CREDIT_BATCH", c->slots / 2, 1, c->slots, false, &c->err);
    c->poll_yield = env_uint("RG_POLL_YIELD", DEFAULT_POLL_YIELD, 0, 1u << 30, false, &c->err);
    /* 0 or 1, read once: "RG_DEBUG=0" used to turn debugging on (any value did). */
    c->debug = env_uint("RG_DEBUG", 0, 0, 1, false, &c->err);
    if (c->err.st) {
        st = c->err.st;
        goto fail;
    }
    /* The tag tells this communicator's completions from any other's, e.g. a predecessor's. */
    /* Not rand(): the caller's random sequence is none of our business. */
    c->seed = (uint64_t)(rg__now() * 1e9) ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)c;
    c->tag = (unsigned)(mix(&c->seed) & 0xfff);
    if (cfg->rank < 0) {
        /* Said plainly: "rank -1 out of range" sent people looking for a -1 they never set. */
        st = rg__err_set(&c->err, RG_ERR_CONFIG,
                         "no rank: set rg_config.rank, or RG_RANK (MLX_RANK, JACCL_RANK) for "
                         "rg_config_from_env");
        goto fail;
    }
    if (!cfg->devices_file[0]) {
        st = rg__err_set(&c->err, RG_ERR_CONFIG,
                         "rank %d: no devices file (set RG_DEVICES_FILE "
                         "or MLX_IBV_DEVICES)",
                         cfg->rank);
        goto fail;
    }
    dv = calloc(1, sizeof(*dv));
    if (!dv) {
        st = rg__err_set(&c->err, RG_ERR_NOMEM, "no memory");
        goto fail;
    }
    st = rg__devices_load(cfg->devices_file, cfg->rank, dv, &c->err);
    if (st)
        goto fail;
    c->size = dv->size;
    if (cfg->size && cfg->size != dv->size) {
        st = rg__err_set(&c->err, RG_ERR_CONFIG,
                         "rank %d: size %d, but the devices file %s is "
                         "%d x %d",
                         c->rank, cfg->size, cfg->devices_file, dv->size, dv->size);
        goto fail;
    }
    if (c->size > 1 && !cfg->coordinator[0]) {
        st = rg__err_set(&c->err, RG_ERR_CONFIG,
                         "rank %d: no coordinator address (set "
                         "RG_COORDINATOR or MLX_JACCL_COORDINATOR)",
                         c->rank);
        goto fail;
    }
    /* A plugin fills rg_config by hand: the launcher's secret still comes from the
     * environment. Kept on the stack only for the handshake. */
    char secret[RG_SECRET_MAX + 1];
    snprintf(secret, sizeof(secret), "%s", cfg->secret);
    if (!secret[0] && c->size > 1) {
        char why[320];
        if (rg__secret_from_env(secret, why, sizeof(why))) {
            st = rg__err_set(&c->err, RG_ERR_CONFIG, "rank %d: %s", c->rank, why);
            goto fail;
        }
    }
    st = rg__sc_open(cfg->coordinator, secret, c->rank, c->size, deadline, &c->sc, &c->err);
    explicit_bzero(secret, sizeof(secret));
    if (st)
        goto fail;
    /* The side channel first, the devices after: a rank whose registration or QP fails can
     * then tell its peers at once, instead of leaving them to wait out their deadline. */
    st = make_conns(c, dv);
    if (st)
        goto fail_abort;
    st = exchange_and_connect(c, deadline);
    if (st)
        goto fail_abort;
    /* Every QP of every rank is at RTR with its receives posted before anyone sends. */
    st = rg__sc_barrier(c->sc, deadline, &c->err);
    if (st)
        goto fail_abort;
    st = hello(c, deadline);
    if (st)
        goto fail;
    free(dv);
    *comm_p = c;
    return RG_OK;

fail_abort:
    rg__fail(c, st);
fail:
    snprintf(err, errlen, "%s", c->err.msg[0] ? c->err.msg : rg_strerror(st));
    free(dv);
    comm_free(c);
    return st;
}

rg_status rg_comm_destroy(rg_comm_h c)
{
    rg_status st;
    if (!c)
        return RG_OK;
    /*
     * Teardown drains: outstanding sends complete, and every rank reaches this point, before
     * any QP goes away, so no peer is left writing into freed memory or reading a closed
     * side channel as an abort.
     */
    if (!c->poisoned) {
        double deadline = rg__now() + c->timeout_s;
        st = rg__drain_sends(c, &deadline);
        if (st == RG_OK)
            st = rg__sc_barrier(c->sc, deadline, &c->err);
    } else {
        st = c->err.st;
    }
    if (st && c->debug)
        fprintf(stderr, "railguard: rank %d: teardown: %s\n", c->rank, c->err.msg);
    comm_free(c);
    return st;
}

void rg_comm_abort(rg_comm_h c, const char *reason)
{
    if (!c || c->poisoned)
        return;
    rg__err_clear(&c->err);
    rg__err_set(&c->err, RG_ERR_POISONED, "rank %d: aborted by its caller: %s", c->rank,
                reason ? reason : "(no reason)");
    rg__fail(c, RG_ERR_POISONED);
}

int rg_comm_rank(rg_comm_h c)
{
    return c ? c->rank : -1;
}

int rg_comm_size(rg_comm_h c)
{
    return c ? c->size : 0;
}

const char *rg_comm_error(rg_comm_h c)
{
    return c ? c->err.msg : "no communicator";
}

rg_status rg_comm_last_call(rg_comm_h c, rg_algo *algo, int *rails)
{
    if (!c || !algo || !rails)
        return RG_ERR_INVALID;
    *algo = c->last_algo;
    *rails = c->last_rails;
    return RG_OK;
}

uint64_t rg__comm_sends_to(rg_comm_h c, int peer)
{
    uint64_t n = 0;
    if (!c || peer < 0 || peer >= c->size)
        return 0;
    for (int k = 0; k < c->nrails[peer]; k++)
        n += c->conns[c->conn_of[peer][k]].send_posted;
    return n;
}

size_t rg__comm_chunk_bytes(rg_comm_h c)
{
    return c ? c->chunk_bytes : 0;
}

uint64_t rg__comm_zcopy_sends(rg_comm_h c)
{
    return c ? c->zcopy_sends : 0;
}

size_t rg__comm_zcopy_min(rg_comm_h c)
{
    return c ? c->zcopy_min : 0;
}

size_t rg__comm_oneshot_bytes(rg_comm_h c)
{
    return c ? c->oneshot_bytes : 0;
}
