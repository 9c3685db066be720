/* SPDX-License-Identifier: MIT */
/*
 * A worked example of a railguard adapter, built the way a third party builds one: against the
 * installed headers and library only,
 *
 *     cc -shared -fPIC -o example-adapter.so example_adapter.c \
 *         $(pkg-config --cflags --libs railguard)
 *
 * The transport behind it is librailguard itself, called through its public API
 * (railguard/railguard.h) as a team's own library would be; the adapter's work is the same for
 * any transport: map railguard's arguments onto the library's calls, pass its status back, keep
 * its last error, and declare -- honestly -- what it does. This one declares part of what
 * librailguard can do (no reduce_scatter, no broadcast, no prod, no complex64, at most 4 ranks
 * and 2 rails), so the stock suite runs on it with the rest skipped as unsupported.
 *
 * For a library whose dtype or reduction enums differ from railguard's, map them with a switch
 * (see to_mylib_dtype in docs/adapters.md), never a cast.
 */
#include <railguard/plugin.h>
#include <railguard/railguard.h>

#include <stdio.h>
#include <stdlib.h>

struct adapter {
    rg_comm_h comm;
};

static rg_status ex_init(const rg_plugin_args *a, void **h, char *err, size_t errlen)
{
    rg_config cfg;
    rg_status st;
    if (!a || a->size < sizeof(*a)) {
        snprintf(err, errlen, "example adapter: args of %u bytes, need %zu", a ? a->size : 0,
                 sizeof(*a));
        return RG_ERR_INVALID;
    }
    rg_config_init(&cfg);
    cfg.rank = a->rank;
    cfg.size = a->nranks;
    cfg.qp_type = a->qp_type;
    cfg.algo = a->algo;
    cfg.timeout_s = a->timeout_s;
    if (snprintf(cfg.coordinator, sizeof(cfg.coordinator), "%s", a->coordinator) >=
            (int)sizeof(cfg.coordinator) ||
        snprintf(cfg.devices_file, sizeof(cfg.devices_file), "%s", a->devices_file) >=
            (int)sizeof(cfg.devices_file)) {
        snprintf(err, errlen, "example adapter: coordinator or devices file too long");
        return RG_ERR_CONFIG;
    }
    struct adapter *ad = calloc(1, sizeof(*ad));
    if (!ad) {
        snprintf(err, errlen, "example adapter: out of memory");
        return RG_ERR_NOMEM;
    }
    if ((st = rg_comm_create(&cfg, &ad->comm, err, errlen)) != RG_OK) {
        free(ad);
        return st;
    }
    *h = ad;
    return RG_OK;
}

#define COMM(h) (((struct adapter *)(h))->comm)

static rg_status ex_all_reduce(void *h, const void *s, void *r, size_t n, rg_dtype dt, rg_redop op)
{
    return rg_all_reduce(COMM(h), s, r, n, dt, op);
}

static rg_status ex_all_gather(void *h, const void *s, void *r, size_t n, rg_dtype dt)
{
    return rg_all_gather(COMM(h), s, r, n, dt);
}

static rg_status ex_send(void *h, const void *b, size_t n, rg_dtype dt, int peer)
{
    return rg_send(COMM(h), b, n, dt, peer);
}

static rg_status ex_recv(void *h, void *b, size_t n, rg_dtype dt, int peer)
{
    return rg_recv(COMM(h), b, n, dt, peer);
}

static rg_status ex_barrier(void *h)
{
    return rg_barrier(COMM(h));
}

static rg_status ex_finalize(void *h)
{
    rg_status st = rg_comm_destroy(COMM(h));
    free(h);
    return st;
}

static const char *ex_last_error(void *h)
{
    return h ? rg_comm_error(COMM(h)) : "";
}

static rg_status ex_last_call(void *h, rg_plugin_call *c)
{
    return rg_comm_last_call(COMM(h), &c->algo, &c->rails);
}

static const rg_plugin_caps caps = {
    .size = sizeof(rg_plugin_caps),
    .ops = RG_BIT(RG_OP_ALL_REDUCE) | RG_BIT(RG_OP_ALL_GATHER) | RG_BIT(RG_OP_SENDRECV) |
           RG_BIT(RG_OP_BARRIER),
    .redops = {[RG_OP_ALL_REDUCE] = RG_BIT(RG_SUM) | RG_BIT(RG_MAX) | RG_BIT(RG_MIN)},
    .dtypes = (RG_BIT(RG_DTYPE_COUNT) - 1) & ~RG_BIT(RG_COMPLEX64),
    .qp_types = RG_BIT(RG_QPT_UC) | RG_BIT(RG_QPT_RC),
    .algos = RG_BIT(RG_ALGO_RING) | RG_BIT(RG_ALGO_MESH),
    .max_ranks = 4,
    .max_rails = 2,
    .flags = RG_CAP_IN_PLACE,
};

extern const rg_plugin rg_plugin_v2;
const rg_plugin rg_plugin_v2 = {
    .abi_version = RG_PLUGIN_ABI_VERSION,
    .size = sizeof(rg_plugin),
    .name = "example",
    .version = "1",
    .caps = &caps,
    .init = ex_init,
    .all_reduce = ex_all_reduce,
    .all_gather = ex_all_gather,
    .send = ex_send,
    .recv = ex_recv,
    .barrier = ex_barrier,
    .finalize = ex_finalize,
    .last_error = ex_last_error,
    .last_call = ex_last_call,
};
