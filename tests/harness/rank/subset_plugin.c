/* SPDX-License-Identifier: MIT */
/*
 * A v2 adapter that declares only part of what railguard can ask, for testing how the runner
 * skips and reports the rest: built from railguard/plugin.h alone, as a third party's adapter
 * is, and forwarding every call to the reference transport's table (railguard-transport.so
 * beside this file, found through dladdr), so what it declares really works.
 *
 * Declared: all_reduce (sum and max), all_gather, send/recv and barrier; float32, float64,
 * int32, int64, uint8; UC only; the ring only; at most 3 ranks and 2 rails; no in-place calls.
 * Not declared: reduce_scatter, broadcast, prod and min, the other dtypes, RC, mesh.
 * And at the call: all_gather of int64 returns RG_ERR_UNSUPPORTED (a limit found only then),
 * which the runner must skip too, with the handle still usable. RG_SUBSET_RECOVERS=1 adds
 * RG_CAP_RECOVERS. RG_SUBSET_INITS=N: init returns RG_ERR_UNSUPPORTED after its first N calls
 * in a process (a create in mid-program refused). RG_SUBSET_WRONG=1: all_reduce succeeds with
 * its first output byte flipped (wrong data from a call that ran, for its algorithm's count).
 * RG_SUBSET_RC_ONE=1: RC only and one rail (Gloo's shape), for the scenarios fitted to it.
 */
#include "railguard/plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rg_plugin *inner(void)
{
    static const rg_plugin *t;
    if (t)
        return t;
    Dl_info info;
    char path[PATH_MAX];
    if (!dladdr((void *)inner, &info) || !info.dli_fname)
        return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    int dir = slash ? (int)(slash - info.dli_fname) : 1;
    snprintf(path, sizeof(path), "%.*s/railguard-transport.so", dir, slash ? info.dli_fname : ".");
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    t = so ? dlsym(so, RG_PLUGIN_V2_SYMBOL) : NULL;
    return t;
}

static rg_status sub_init(const rg_plugin_args *a, void **h, char *err, size_t errlen)
{
    if (!inner()) {
        snprintf(err, errlen, "subset plugin: no railguard-transport.so beside it");
        return RG_ERR_CONFIG;
    }
    static int inits;
    const char *lim = getenv("RG_SUBSET_INITS");
    if (lim && inits++ >= atoi(lim)) {
        snprintf(err, errlen, "subset plugin: only %s communicator(s) a process", lim);
        return RG_ERR_UNSUPPORTED;
    }
    /* A ring-only transport: what "auto" means here. */
    rg_plugin_args ring = *a;
    ring.algo = RG_ALGO_RING;
    return inner()->init(&ring, h, err, errlen);
}

static rg_status sub_all_reduce(void *h, const void *s, void *r, size_t n, rg_dtype dt, rg_redop op)
{
    rg_status st = inner()->all_reduce(h, s, r, n, dt, op);
    const char *wrong = getenv("RG_SUBSET_WRONG");
    if (st == RG_OK && n && wrong && !strcmp(wrong, "1"))
        *(unsigned char *)r ^= 0x40;
    return st;
}

static rg_status sub_all_gather(void *h, const void *s, void *r, size_t n, rg_dtype dt)
{
    if (dt == RG_INT64)
        return RG_ERR_UNSUPPORTED;
    return inner()->all_gather(h, s, r, n, dt);
}

static rg_status sub_send(void *h, const void *b, size_t n, rg_dtype dt, int peer)
{
    return inner()->send(h, b, n, dt, peer);
}

static rg_status sub_recv(void *h, void *b, size_t n, rg_dtype dt, int peer)
{
    return inner()->recv(h, b, n, dt, peer);
}

static rg_status sub_barrier(void *h)
{
    return inner()->barrier(h);
}

static rg_status sub_finalize(void *h)
{
    return inner()->finalize(h);
}

static const char *sub_last_error(void *h)
{
    return inner()->last_error(h);
}

static rg_status sub_last_call(void *h, rg_plugin_call *c)
{
    return inner()->last_call(h, c);
}

static rg_plugin_caps caps = {
    .size = sizeof(rg_plugin_caps),
    .ops = RG_BIT(RG_OP_ALL_REDUCE) | RG_BIT(RG_OP_ALL_GATHER) | RG_BIT(RG_OP_SENDRECV) |
           RG_BIT(RG_OP_BARRIER),
    .redops = {[RG_OP_ALL_REDUCE] = RG_BIT(RG_SUM) | RG_BIT(RG_MAX)},
    .dtypes = RG_BIT(RG_FLOAT32) | RG_BIT(RG_FLOAT64) | RG_BIT(RG_INT32) | RG_BIT(RG_INT64) |
              RG_BIT(RG_UINT8),
    .qp_types = RG_BIT(RG_QPT_UC),
    .algos = RG_BIT(RG_ALGO_RING),
    .max_ranks = 3,
    .max_rails = 2,
    .flags = 0,
};

/* RG_SUBSET_RECOVERS=1: declare RG_CAP_RECOVERS too, so the runner goes on after an error. */
__attribute__((constructor)) static void subset_env(void)
{
    const char *r = getenv("RG_SUBSET_RECOVERS");
    if (r && !strcmp(r, "1"))
        caps.flags |= RG_CAP_RECOVERS;
    const char *one = getenv("RG_SUBSET_RC_ONE");
    if (one && !strcmp(one, "1")) {
        caps.qp_types = RG_BIT(RG_QPT_RC);
        caps.max_rails = 1;
    }
}

extern const rg_plugin rg_plugin_v2;
const rg_plugin rg_plugin_v2 = {
    .abi_version = RG_PLUGIN_ABI_VERSION,
    .size = sizeof(rg_plugin),
    .name = "subset",
    .version = "test",
    .caps = &caps,
    .init = sub_init,
    .all_reduce = sub_all_reduce,
    .all_gather = sub_all_gather,
    .send = sub_send,
    .recv = sub_recv,
    .barrier = sub_barrier,
    .finalize = sub_finalize,
    .last_error = sub_last_error,
    .last_call = sub_last_call,
};
