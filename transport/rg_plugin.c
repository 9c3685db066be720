/* SPDX-License-Identifier: MIT */
/*
 * The reference transport behind the plugin ABI (railguard.h, "plugin ABI"): what the scenario
 * runner loads by default, and the example a third-party adapter follows. Thin on purpose: the
 * communicator already keeps the first error and poisons itself, so the adapter only maps
 * statuses to 0/nonzero and keeps init's own error where last_error can find it.
 */
#include "railguard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rg_plugin_handle {
    rg_comm_h comm;
};

static void *plugin_init(const rg_plugin_args *a, char *err, size_t errlen)
{
    rg_config cfg;
    rg_comm_h comm = NULL;
    struct rg_plugin_handle *h;

    if (!a || a->size < sizeof(*a)) {
        snprintf(err, errlen, "railguard plugin: args too small (%u bytes, need %zu)",
                 a ? a->size : 0, sizeof(*a));
        return NULL;
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
        return NULL;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        snprintf(err, errlen, "railguard plugin: out of memory");
        return NULL;
    }
    if (rg_comm_create(&cfg, &comm, err, errlen) != RG_OK) {
        free(h);
        return NULL;
    }
    h->comm = comm;
    return h;
}

static int plugin_all_reduce(void *h, const void *send, void *recv, size_t count, rg_dtype dt,
                             rg_redop op)
{
    return rg_all_reduce(((struct rg_plugin_handle *)h)->comm, send, recv, count, dt, op) != RG_OK;
}

static int plugin_all_gather(void *h, const void *send, void *recv, size_t count, rg_dtype dt)
{
    return rg_all_gather(((struct rg_plugin_handle *)h)->comm, send, recv, count, dt) != RG_OK;
}

static int plugin_reduce_scatter(void *h, const void *send, void *recv, size_t count, rg_dtype dt,
                                 rg_redop op)
{
    return rg_reduce_scatter(((struct rg_plugin_handle *)h)->comm, send, recv, count, dt, op) !=
           RG_OK;
}

static int plugin_broadcast(void *h, void *buf, size_t count, rg_dtype dt, int root)
{
    return rg_broadcast(((struct rg_plugin_handle *)h)->comm, buf, count, dt, root) != RG_OK;
}

static int plugin_send(void *h, const void *buf, size_t count, rg_dtype dt, int peer)
{
    return rg_send(((struct rg_plugin_handle *)h)->comm, buf, count, dt, peer) != RG_OK;
}

static int plugin_recv(void *h, void *buf, size_t count, rg_dtype dt, int peer)
{
    return rg_recv(((struct rg_plugin_handle *)h)->comm, buf, count, dt, peer) != RG_OK;
}

static int plugin_barrier(void *h)
{
    return rg_barrier(((struct rg_plugin_handle *)h)->comm) != RG_OK;
}

/* Non-zero when the teardown was not clean: an error met while draining is the caller's to
 * judge, like any other (the runner reads it as "finalize failed"). */
static int plugin_finalize(void *h)
{
    rg_status st = RG_OK;
    if (h) {
        st = rg_comm_destroy(((struct rg_plugin_handle *)h)->comm);
        free(h);
    }
    return st != RG_OK;
}

static const char *plugin_last_error(void *h)
{
    /* rg_comm_error also holds argument errors, which don't poison the communicator. */
    return h ? rg_comm_error(((struct rg_plugin_handle *)h)->comm) : "";
}

static void *plugin_mem_register(void *h, void *buf, size_t len)
{
    rg_mem_h m = NULL;
    return rg_mem_register(((struct rg_plugin_handle *)h)->comm, buf, len, &m) ? NULL : m;
}

static int plugin_mem_deregister(void *h, void *m)
{
    return rg_mem_deregister(((struct rg_plugin_handle *)h)->comm, m) != RG_OK;
}

/* The one symbol the shared object exports (transport/rg_plugin.map). */
extern const rg_plugin_ops rg_plugin_v1;
const rg_plugin_ops rg_plugin_v1 = {
    .abi_version = RG_PLUGIN_ABI_VERSION,
    .size = sizeof(rg_plugin_ops),
    .name = "railguard",
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
};
