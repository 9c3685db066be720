/* SPDX-License-Identifier: MIT */
/* The communicator: its settings, its creation in order (side channel, connections, hello)
 * and its teardown. Its connections are rg_conns.c, registered memory rg_mem.c, and the
 * progress engine that moves its messages rg_engine.c. */
#include "rg_comm.h"
#include "rg_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S 60.0
#define DEFAULT_CHUNK (64u << 10)
#define DEFAULT_SLOTS 8u
#define DEFAULT_ZCOPY_MIN (32u << 10)
/* Sends of at least this much from one buffer in a call register it for the call: guest
 * measurements in rg_coll_run.c. */
#define DEFAULT_ZCOPY_AUTO (256u << 10)
#define DEFAULT_POLL_YIELD 1024u
#define DEFAULT_ONESHOT (4u << 10)

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
    rg__conns_free(c);
    /* After the QPs: no work request can still read a region. */
    for (int i = 0; i < RG_MEM_MAX; i++)
        if (c->mem[i])
            rg__mem_free(c, c->mem[i]);
    rg__devs_close(c);
    rg__sc_close(c->sc);
    free(c);
}

/* The settings: the caller's, then the tuning variables of the environment, then this
 * communicator's random seed and tag. */
static rg_status comm_tune(struct rg_comm *c, const rg_config *cfg)
{
    c->cfg = *cfg;
    explicit_bzero(c->cfg.secret, sizeof(c->cfg.secret)); /* needed at the handshake only */
    c->rank = cfg->rank;
    c->wait_peer = -1;
    c->poller = (struct rg_vpoller){.describe = rg__describe_wc, .arg = c, .e = &c->err};
    c->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : DEFAULT_TIMEOUT_S;
    c->algo = cfg->algo;
    c->chunk_bytes = env_uint("RG_CHUNK_BYTES", DEFAULT_CHUNK, 4096, 8u << 20, true, &c->err);
    c->slots = env_uint("RG_SLOTS", DEFAULT_SLOTS, 2, RG_SLOTS_MAX, false, &c->err);
    c->ring_bidir = env_uint("RG_RING_BIDIR", 1, 0, 1, false, &c->err);
    c->zcopy_min = env_uint("RG_ZCOPY_MIN", DEFAULT_ZCOPY_MIN, 0, 1u << 30, true, &c->err);
    c->zcopy_auto = env_uint("RG_ZCOPY_AUTO", DEFAULT_ZCOPY_AUTO, 0, 1u << 30, true, &c->err);
    c->oneshot_bytes = env_uint("RG_ONESHOT_BYTES", DEFAULT_ONESHOT, 0, 1u << 20, true, &c->err);
    c->credit_batch = env_uint("RG_CREDIT_BATCH", c->slots / 2, 1, c->slots, false, &c->err);
    /* Below a batch, a peer can be starved between calls: grant_credit and rg__post_owed
     * grant it at once then (rg_engine.c). */
    c->recv_keep = env_uint("RG_RECV_KEEP", c->credit_batch, 1, c->slots, false, &c->err);
    c->poll_yield = env_uint("RG_POLL_YIELD", DEFAULT_POLL_YIELD, 0, 1u << 30, false, &c->err);
    /* RC's reliability, as NCCL_IB_TIMEOUT and NCCL_IB_RETRY_CNT: a wire that drops packets
     * for longer than retry_cnt + 1 timeouts fails the QP with RETRY_EXC_ERR. retry_cnt 7
     * would mean "forever" on rxe: never. */
    struct rg_vqp_tuning dflt = RG_VQP_TUNING_DEFAULT;
    c->ib_timeout = env_uint("RG_IB_TIMEOUT", dflt.timeout, 1, 31, false, &c->err);
    c->ib_retry_cnt = env_uint("RG_IB_RETRY_CNT", dflt.retry_cnt, 0, 6, false, &c->err);
    /* 0 or 1, read once: "RG_DEBUG=0" used to turn debugging on (any value did). */
    c->debug = env_uint("RG_DEBUG", 0, 0, 1, false, &c->err);
    c->phases = env_uint("RG_PHASES", 0, 0, 1, false, &c->err);
    if (c->err.st)
        return c->err.st;
    rg__ph_init(c);
    /* The tag tells this communicator's completions from any other's, e.g. a predecessor's. */
    /* Not rand(): the caller's random sequence is none of our business. */
    c->seed = (uint64_t)(rg__now() * 1e9) ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)c;
    c->tag = (unsigned)(rg__mix(&c->seed) & 0xfff);
    return RG_OK;
}

/* Where this rank stands: its rank, the devices file's links (into dv) and the size they
 * make, and a coordinator when there are peers to meet. */
static rg_status comm_place(struct rg_comm *c, const rg_config *cfg, struct rg_devices *dv)
{
    if (cfg->rank < 0) {
        /* Said plainly: "rank -1 out of range" sent people looking for a -1 they never set. */
        return rg__err_set(&c->err, RG_ERR_CONFIG,
                           "no rank: set rg_config.rank, or RG_RANK (MLX_RANK, JACCL_RANK) for "
                           "rg_config_from_env");
    }
    if (!cfg->devices_file[0])
        return rg__err_set(&c->err, RG_ERR_CONFIG,
                           "rank %d: no devices file (set RG_DEVICES_FILE "
                           "or MLX_IBV_DEVICES)",
                           cfg->rank);
    rg_status st = rg__devices_load(cfg->devices_file, cfg->rank, dv, &c->err);
    if (st)
        return st;
    c->size = dv->size;
    if (cfg->size && cfg->size != dv->size)
        return rg__err_set(&c->err, RG_ERR_CONFIG,
                           "rank %d: size %d, but the devices file %s is "
                           "%d x %d",
                           c->rank, cfg->size, cfg->devices_file, dv->size, dv->size);
    if (c->size > 1 && !cfg->coordinator[0])
        return rg__err_set(&c->err, RG_ERR_CONFIG,
                           "rank %d: no coordinator address (set "
                           "RG_COORDINATOR or MLX_JACCL_COORDINATOR)",
                           c->rank);
    return RG_OK;
}

/* The side channel, joined with the job's secret. A plugin fills rg_config by hand: the
 * launcher's secret still comes from the environment. Kept on the stack only for the
 * handshake. */
static rg_status comm_join(struct rg_comm *c, const rg_config *cfg, double deadline)
{
    char secret[RG_SECRET_MAX + 1];
    snprintf(secret, sizeof(secret), "%s", cfg->secret);
    if (!secret[0] && c->size > 1) {
        char why[320];
        if (rg__secret_from_env(secret, why, sizeof(why)))
            return rg__err_set(&c->err, RG_ERR_CONFIG, "rank %d: %s", c->rank, why);
    }
    rg_status st =
        rg__sc_open(cfg->coordinator, secret, c->rank, c->size, deadline, &c->sc, &c->err);
    explicit_bzero(secret, sizeof(secret));
    return st;
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
    double deadline;
    st = comm_tune(c, cfg);
    if (st)
        goto fail;
    deadline = rg__now() + c->timeout_s;
    dv = calloc(1, sizeof(*dv));
    if (!dv) {
        st = rg__err_set(&c->err, RG_ERR_NOMEM, "no memory");
        goto fail;
    }
    st = comm_place(c, cfg, dv);
    if (!st)
        st = comm_join(c, cfg, deadline);
    if (st)
        goto fail;
    /* The side channel first, the devices after: a rank whose registration or QP fails can
     * then tell its peers at once, instead of leaving them to wait out their deadline. */
    st = rg__conns_make(c, dv);
    if (st)
        goto fail_abort;
    st = rg__conns_connect(c, deadline);
    if (st)
        goto fail_abort;
    /* Every QP of every rank is at RTR with its receives posted before anyone sends. */
    st = rg__sc_barrier(c->sc, deadline, &c->err);
    if (st)
        goto fail_abort;
    st = rg__conns_hello(c, deadline);
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
    rg__ph_report(c);
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

uint64_t rg__comm_into_recvs(rg_comm_h c)
{
    return c ? c->into_recvs : 0;
}

uint64_t rg__comm_zcopy_sends(rg_comm_h c)
{
    return c ? c->zcopy_sends : 0;
}

size_t rg__comm_zcopy_auto(rg_comm_h c)
{
    return c ? c->zcopy_auto : 0;
}

uint64_t rg__comm_auto_regs(rg_comm_h c, uint64_t *fails)
{
    if (fails)
        *fails = c ? c->auto_reg_fails : 0;
    return c ? c->auto_regs : 0;
}

size_t rg__comm_zcopy_min(rg_comm_h c)
{
    return c ? c->zcopy_min : 0;
}

size_t rg__comm_oneshot_bytes(rg_comm_h c)
{
    return c ? c->oneshot_bytes : 0;
}
