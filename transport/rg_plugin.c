/* SPDX-License-Identifier: MIT */
/*
 * The reference transport behind the plugin ABI (railguard/plugin.h, version 2): what the
 * scenario runner loads by default, and the example a third-party adapter follows. Thin on
 * purpose: the communicator already returns statuses from the one table, keeps the first error
 * and poisons itself, so the adapter passes statuses through and keeps init's own error where
 * last_error can find it.
 */
#include "railguard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rg_plugin_handle {
    rg_comm_h comm;
};

#define H(h) (((struct rg_plugin_handle *)(h))->comm)

static rg_status plugin_init(const rg_plugin_args *a, void **out, char *err, size_t errlen)
{
    rg_config cfg;
    rg_comm_h comm = NULL;
    struct rg_plugin_handle *h;
    rg_status st;

    if (!a || !out || a->size < sizeof(*a)) {
        snprintf(err, errlen, "railguard plugin: args too small (%u bytes, need %zu)",
                 a ? a->size : 0, sizeof(*a));
        return RG_ERR_INVALID;
    }
    rg_config_init(&cfg);
    cfg.rank = a->rank;
    cfg.size = a->nranks;
    cfg.qp_type = a->qp_type;
    cfg.algo = a->algo;
    cfg.timeout_s = a->timeout_s;
    if (snprintf(cfg.coordinator, sizeof(cfg.coordinator), "%s",
                 a->coordinator ? a->coordinator : "") >= (int)sizeof(cfg.coordinator) ||
        snprintf(cfg.devices_file, sizeof(cfg.devices_file), "%s",
                 a->devices_file ? a->devices_file : "") >= (int)sizeof(cfg.devices_file)) {
        snprintf(err, errlen, "railguard plugin: coordinator or devices file path too long");
        return RG_ERR_CONFIG;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        snprintf(err, errlen, "railguard plugin: out of memory");
        return RG_ERR_NOMEM;
    }
    if ((st = rg_comm_create(&cfg, &comm, err, errlen)) != RG_OK) {
        free(h);
        return st;
    }
    h->comm = comm;
    *out = h;
    return RG_OK;
}

static rg_status plugin_all_reduce(void *h, const void *send, void *recv, size_t count, rg_dtype dt,
                                   rg_redop op)
{
    return rg_all_reduce(H(h), send, recv, count, dt, op);
}

static rg_status plugin_all_gather(void *h, const void *send, void *recv, size_t count, rg_dtype dt)
{
    return rg_all_gather(H(h), send, recv, count, dt);
}

static rg_status plugin_reduce_scatter(void *h, const void *send, void *recv, size_t count,
                                       rg_dtype dt, rg_redop op)
{
    return rg_reduce_scatter(H(h), send, recv, count, dt, op);
}

static rg_status plugin_broadcast(void *h, void *buf, size_t count, rg_dtype dt, int root)
{
    return rg_broadcast(H(h), buf, count, dt, root);
}

static rg_status plugin_send(void *h, const void *buf, size_t count, rg_dtype dt, int peer)
{
    return rg_send(H(h), buf, count, dt, peer);
}

static rg_status plugin_recv(void *h, void *buf, size_t count, rg_dtype dt, int peer)
{
    return rg_recv(H(h), buf, count, dt, peer);
}

static rg_status plugin_barrier(void *h)
{
    return rg_barrier(H(h));
}

/* Not RG_OK when the teardown was not clean: an error met while draining is the caller's to
 * judge, like any other (the runner reads it as "finalize failed"). */
static rg_status plugin_finalize(void *h)
{
    rg_status st = RG_OK;
    if (h) {
        st = rg_comm_destroy(H(h));
        free(h);
    }
    return st;
}

static const char *plugin_last_error(void *h)
{
    /* rg_comm_error also holds argument errors, which don't poison the communicator. */
    return h ? rg_comm_error(H(h)) : "";
}

static rg_status plugin_mem_register(void *h, void *buf, size_t len, void **mem)
{
    rg_mem_h m = NULL;
    rg_status st = rg_mem_register(H(h), buf, len, &m);
    *mem = st ? NULL : m;
    return st;
}

static rg_status plugin_mem_deregister(void *h, void *m)
{
    return rg_mem_deregister(H(h), m);
}

static rg_status plugin_last_call(void *h, rg_plugin_call *info)
{
    if (!info || info->size < sizeof(*info))
        return RG_ERR_INVALID;
    return rg_comm_last_call(H(h), &info->algo, &info->rails);
}

#define ALL_REDOPS (RG_BIT(RG_SUM) | RG_BIT(RG_PROD) | RG_BIT(RG_MAX) | RG_BIT(RG_MIN))

/* Everything: the reference is what the others are measured against. Fail-stop, so no
 * RG_CAP_RECOVERS. */
static const rg_plugin_caps caps = {
    .size = sizeof(rg_plugin_caps),
    .ops = RG_BIT(RG_OP_ALL_REDUCE) | RG_BIT(RG_OP_ALL_GATHER) | RG_BIT(RG_OP_REDUCE_SCATTER) |
           RG_BIT(RG_OP_BROADCAST) | RG_BIT(RG_OP_SENDRECV) | RG_BIT(RG_OP_BARRIER),
    .redops = {[RG_OP_ALL_REDUCE] = ALL_REDOPS, [RG_OP_REDUCE_SCATTER] = ALL_REDOPS},
    .dtypes = RG_BIT(RG_DTYPE_COUNT) - 1,
    .qp_types = RG_BIT(RG_QPT_UC) | RG_BIT(RG_QPT_RC),
    .algos = RG_BIT(RG_ALGO_RING) | RG_BIT(RG_ALGO_MESH),
    .max_ranks = RG_MAX_RANKS,
    .max_rails = RG_MAX_RAILS,
    .flags = RG_CAP_IN_PLACE,
    .nan_minmax = RG_NAN_PROPAGATE, /* rg_reduce.h */
};

/* The one symbol the shared object exports (transport/rg_plugin.map). */
extern const rg_plugin rg_plugin_v2;
const rg_plugin rg_plugin_v2 = {
    .abi_version = RG_PLUGIN_ABI_VERSION,
    .size = sizeof(rg_plugin),
    .name = "railguard",
    .version = NULL,
    .caps = &caps,
    .init = plugin_init,
    .all_reduce = plugin_all_reduce,
    .all_gather = plugin_all_gather,
    .reduce_scatter = plugin_reduce_scatter,
    .broadcast = plugin_broadcast,
    .send = plugin_send,
    .recv = plugin_recv,
    .barrier = plugin_barrier,
    .finalize = plugin_finalize,
    .last_error = plugin_last_error,
    .mem_register = plugin_mem_register,
    .mem_deregister = plugin_mem_deregister,
    .last_call = plugin_last_call,
};
