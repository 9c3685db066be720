/* SPDX-License-Identifier: MIT */
/*
 * A transport as the runner sees it: one loaded plugin table (version 2, or a version 1 table
 * seen through the same calls), its capability declaration, and the checks that say which
 * scenario steps it cannot run. Everything here goes through railguard/plugin.h only.
 */
#include "rank/rg_rank.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define V1_HAS_MEM(p)                                                                              \
    ((p)->size >= offsetof(rg_plugin_ops, mem_deregister) + sizeof((p)->mem_deregister) &&         \
     (p)->mem_register && (p)->mem_deregister)
#define V2_HAS(p, fn) ((p)->size >= offsetof(rg_plugin, fn) + sizeof((p)->fn) && (p)->fn)

/* A v1 table says what it has by its non-NULL operations, and nothing else: it gets every
 * redop, dtype, QP type and algorithm, as before v2. */
static void v1_caps(const rg_plugin_ops *p, rg_plugin_caps *c)
{
    memset(c, 0, sizeof(*c));
    c->size = sizeof(*c);
    c->ops = (p->all_reduce ? RG_BIT(RG_OP_ALL_REDUCE) : 0) |
             (p->all_gather ? RG_BIT(RG_OP_ALL_GATHER) : 0) |
             (p->reduce_scatter ? RG_BIT(RG_OP_REDUCE_SCATTER) : 0) |
             (p->broadcast ? RG_BIT(RG_OP_BROADCAST) : 0) |
             (p->send && p->recv ? RG_BIT(RG_OP_SENDRECV) : 0) |
             (p->barrier ? RG_BIT(RG_OP_BARRIER) : 0);
    c->redops[RG_OP_ALL_REDUCE] = c->redops[RG_OP_REDUCE_SCATTER] = RG_BIT(RG_REDOP_COUNT) - 1;
    c->dtypes = RG_BIT(RG_DTYPE_COUNT) - 1;
    c->qp_types = RG_BIT(RG_QPT_COUNT) - 1;
    c->algos = RG_BIT(RG_ALGO_COUNT) - 1;
    c->max_ranks = RG_MAX_RANKS;
    c->max_rails = RG_MAX_RAILS;
    c->flags = RG_CAP_IN_PLACE;
}

/* A v2 table's operation pointer for each declared operation must be there: a declaration the
 * table cannot keep is the adapter's bug, named at load rather than at the step. */
static int v2_check(const rg_plugin *p, const char *path, char *err, size_t len)
{
    static const struct {
        int op;
        size_t off;
        const char *name;
    } need[] = {
        {RG_OP_ALL_REDUCE, offsetof(rg_plugin, all_reduce), "all_reduce"},
        {RG_OP_ALL_GATHER, offsetof(rg_plugin, all_gather), "all_gather"},
        {RG_OP_REDUCE_SCATTER, offsetof(rg_plugin, reduce_scatter), "reduce_scatter"},
        {RG_OP_BROADCAST, offsetof(rg_plugin, broadcast), "broadcast"},
        {RG_OP_SENDRECV, offsetof(rg_plugin, send), "send"},
        {RG_OP_SENDRECV, offsetof(rg_plugin, recv), "recv"},
        {RG_OP_BARRIER, offsetof(rg_plugin, barrier), "barrier"},
    };
    if (p->size < offsetof(rg_plugin, last_error) + sizeof(p->last_error) || !p->init ||
        !p->finalize || !p->last_error || !p->caps) {
        snprintf(err, len,
                 "%s: rg_plugin_v2 table lacks init, finalize, last_error or caps (size %u)", path,
                 p->size);
        return -1;
    }
    /* Read only once the table's size says caps is there. */
    const rg_plugin_caps *c = p->caps;
    if (c->size < RG_PLUGIN_CAPS_V2_SIZE) {
        snprintf(err, len, "%s: caps.size %u, need at least %zu", path, c->size,
                 (size_t)RG_PLUGIN_CAPS_V2_SIZE);
        return -1;
    }
    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
        void *fn;
        memcpy(&fn, (const char *)p + need[i].off, sizeof(fn));
        if ((c->ops & RG_BIT(need[i].op)) && !fn) {
            snprintf(err, len, "%s: caps declare %s, but the table's %s is NULL", path,
                     need[i].name, need[i].name);
            return -1;
        }
    }
    if (c->size >= offsetof(rg_plugin_caps, nan_minmax) + sizeof(c->nan_minmax) &&
        c->nan_minmax >= RG_NAN_COUNT) {
        snprintf(err, len, "%s: caps.nan_minmax %u is none of rg_nan_minmax's values", path,
                 c->nan_minmax);
        return -1;
    }
    if (c->max_ranks < 0 || c->max_ranks > RG_MAX_RANKS || c->max_rails < 0 ||
        c->max_rails > RG_MAX_RAILS) {
        snprintf(err, len, "%s: caps max_ranks %d or max_rails %d outside 0..%d, 0..%d", path,
                 c->max_ranks, c->max_rails, RG_MAX_RANKS, RG_MAX_RAILS);
        return -1;
    }
    return 0;
}

int rg_tp_open(rg_tp *tp, const char *path, char *err, size_t len)
{
    memset(tp, 0, sizeof(*tp));
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        snprintf(err, len, "cannot be loaded: %s", dlerror());
        return -1;
    }
    const rg_plugin *v2 = dlsym(so, RG_PLUGIN_V2_SYMBOL);
    const rg_plugin_ops *v1 = v2 ? NULL : dlsym(so, RG_PLUGIN_SYMBOL);
    if (v2) {
        if (v2->abi_version != RG_PLUGIN_ABI_VERSION) {
            snprintf(err, len, "%s: rg_plugin_v2 says ABI version %u, not %d", path,
                     v2->abi_version, RG_PLUGIN_ABI_VERSION);
            goto fail;
        }
        if (v2_check(v2, path, err, len))
            goto fail;
        tp->v2 = v2;
        tp->name = v2->name ? v2->name : "?";
        tp->version = v2->version;
        /* As much as both know of; fields a newer header added stay zero (declared nothing). */
        memcpy(&tp->caps, v2->caps,
               v2->caps->size < sizeof(tp->caps) ? v2->caps->size : sizeof(tp->caps));
        tp->caps.size = sizeof(tp->caps);
        tp->has_mem = V2_HAS(v2, mem_register) && V2_HAS(v2, mem_deregister);
        tp->has_last_call = V2_HAS(v2, last_call);
    } else if (v1) {
        /* The symbol fixes the layout. A v1 adapter rebuilt against this header writes
         * RG_PLUGIN_ABI_VERSION, now 2, into its v1 table: it still loads as v1. */
        if ((v1->abi_version != RG_PLUGIN_ABI_V1 && v1->abi_version != RG_PLUGIN_ABI_VERSION) ||
            v1->size < RG_PLUGIN_V1_MIN_SIZE || !v1->init || !v1->finalize || !v1->last_error) {
            snprintf(err, len, "%s: no usable %s table (ABI version %d)", path, RG_PLUGIN_SYMBOL,
                     RG_PLUGIN_ABI_V1);
            goto fail;
        }
        tp->v1 = v1;
        tp->name = v1->name ? v1->name : "?";
        v1_caps(v1, &tp->caps);
        tp->has_mem = V1_HAS_MEM(v1);
    } else {
        snprintf(err, len, "%s: no %s or %s table: not a railguard plugin", path,
                 RG_PLUGIN_V2_SYMBOL, RG_PLUGIN_SYMBOL);
        goto fail;
    }
    tp->abi = v2 ? 2 : 1;
    tp->so = so;
    return 0;
fail:
    dlclose(so);
    return -1;
}

/* --- what a scenario needs ------------------------------------------------------------------ */

static const char *const op_names[RG_OP_COUNT] = {"all_reduce", "all_gather", "reduce_scatter",
                                                  "broadcast",  "sendrecv",   "barrier"};

int rg_tp_lacks_scenario(const rg_tp *tp, const rg_scenario *sc, char *why, size_t len)
{
    const rg_plugin_caps *c = &tp->caps;
    static const char *const qp[] = {"uc", "rc"}, *const algo[] = {"auto", "ring", "mesh"};
    if (!(c->qp_types & RG_BIT(sc->qp)))
        return snprintf(why, len, "qp %s not declared", qp[sc->qp]), 1;
    if (sc->algo != RG_ALGO_AUTO && !(c->algos & RG_BIT(sc->algo)))
        return snprintf(why, len, "algorithm %s not declared", algo[sc->algo]), 1;
    if (sc->ranks > c->max_ranks)
        return snprintf(why, len, "%d ranks, declared at most %d", sc->ranks, c->max_ranks), 1;
    if (sc->rails > c->max_rails)
        return snprintf(why, len, "%d rails, declared at most %d", sc->rails, c->max_rails), 1;
    if (sc->zero_copy && !tp->has_mem)
        return snprintf(why, len, "zero_copy needs mem_register and mem_deregister"), 1;
    return 0;
}

int rg_tp_lacks_step(const rg_tp *tp, const rg_sc_op *op, char *why, size_t len)
{
    const rg_plugin_caps *c = &tp->caps;
    int o;
    switch (op->kind) {
    case RG_SC_ALL_REDUCE:
        o = RG_OP_ALL_REDUCE;
        break;
    case RG_SC_ALL_GATHER:
        o = RG_OP_ALL_GATHER;
        break;
    case RG_SC_REDUCE_SCATTER:
        o = RG_OP_REDUCE_SCATTER;
        break;
    case RG_SC_BROADCAST:
        o = RG_OP_BROADCAST;
        break;
    case RG_SC_SENDRECV:
        o = RG_OP_SENDRECV;
        break;
    case RG_SC_BARRIER:
        o = RG_OP_BARRIER;
        break;
    default:
        return 0; /* create and destroy: every transport has init and finalize */
    }
    if (!(c->ops & RG_BIT(o)))
        return snprintf(why, len, "%s not declared", op_names[o]), 1;
    if (o == RG_OP_BARRIER)
        return 0;
    if (!(c->dtypes & RG_BIT(op->dtype)))
        return snprintf(why, len, "dtype %s not declared", rg_data_dtype_name(op->dtype)), 1;
    if ((o == RG_OP_ALL_REDUCE || o == RG_OP_REDUCE_SCATTER) && !(c->redops[o] & RG_BIT(op->redop)))
        return snprintf(why, len, "%s %s not declared", op_names[o], rg_data_redop_name(op->redop)),
               1;
    if (op->inplace && !(c->flags & RG_CAP_IN_PLACE))
        return snprintf(why, len, "in-place %s not declared", op_names[o]), 1;
    return 0;
}

/* --- the calls ----------------------------------------------------------------------------- */

/* A v1 operation's nonzero carries no status: RG_TP_V1_ERROR stands for it. */
#define V1(expr) ((expr) ? RG_TP_V1_ERROR : RG_OK)

int rg_tp_init(rg_tp *tp, const rg_plugin_args *a, void **h, char *err, size_t len)
{
    *h = NULL;
    if (tp->v2) {
        int st = tp->v2->init(a, h, err, len);
        if (st != RG_OK)
            *h = NULL; /* a handle only comes with RG_OK: never finalize what init freed */
        if (st == RG_OK && !*h) {
            snprintf(err, len, "init returned RG_OK without a handle");
            return RG_ERR_PROTOCOL;
        }
        return st;
    }
    *h = tp->v1->init(a, err, len);
    return *h ? RG_OK : RG_TP_V1_ERROR;
}

int rg_tp_all_reduce(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt,
                     rg_redop op)
{
    return tp->v2 ? tp->v2->all_reduce(h, s, r, n, dt, op)
                  : V1(tp->v1->all_reduce(h, s, r, n, dt, op));
}

int rg_tp_all_gather(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt)
{
    return tp->v2 ? tp->v2->all_gather(h, s, r, n, dt) : V1(tp->v1->all_gather(h, s, r, n, dt));
}

int rg_tp_reduce_scatter(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt,
                         rg_redop op)
{
    return tp->v2 ? tp->v2->reduce_scatter(h, s, r, n, dt, op)
                  : V1(tp->v1->reduce_scatter(h, s, r, n, dt, op));
}

int rg_tp_broadcast(const rg_tp *tp, void *h, void *b, size_t n, rg_dtype dt, int root)
{
    return tp->v2 ? tp->v2->broadcast(h, b, n, dt, root) : V1(tp->v1->broadcast(h, b, n, dt, root));
}

int rg_tp_send(const rg_tp *tp, void *h, const void *b, size_t n, rg_dtype dt, int peer)
{
    return tp->v2 ? tp->v2->send(h, b, n, dt, peer) : V1(tp->v1->send(h, b, n, dt, peer));
}

int rg_tp_recv(const rg_tp *tp, void *h, void *b, size_t n, rg_dtype dt, int peer)
{
    return tp->v2 ? tp->v2->recv(h, b, n, dt, peer) : V1(tp->v1->recv(h, b, n, dt, peer));
}

int rg_tp_barrier(const rg_tp *tp, void *h)
{
    return tp->v2 ? tp->v2->barrier(h) : V1(tp->v1->barrier(h));
}

int rg_tp_finalize(const rg_tp *tp, void *h)
{
    return tp->v2 ? tp->v2->finalize(h) : V1(tp->v1->finalize(h));
}

const char *rg_tp_last_error(const rg_tp *tp, void *h)
{
    const char *e = tp->v2 ? tp->v2->last_error(h) : tp->v1->last_error(h);
    return e ? e : "";
}

int rg_tp_mem_register(const rg_tp *tp, void *h, void *buf, size_t len, void **mem)
{
    *mem = NULL;
    if (tp->v2)
        return tp->v2->mem_register(h, buf, len, mem);
    *mem = tp->v1->mem_register(h, buf, len);
    return *mem ? RG_OK : RG_TP_V1_ERROR;
}

int rg_tp_mem_deregister(const rg_tp *tp, void *h, void *mem)
{
    return tp->v2 ? tp->v2->mem_deregister(h, mem) : V1(tp->v1->mem_deregister(h, mem));
}

int rg_tp_last_call(const rg_tp *tp, void *h, rg_algo *algo, int *rails)
{
    rg_plugin_call c = {.size = sizeof(c)};
    *algo = RG_ALGO_AUTO;
    *rails = 0;
    if (!tp->has_last_call)
        return RG_ERR_UNSUPPORTED;
    int st = tp->v2->last_call(h, &c);
    if (st == RG_OK && (unsigned)c.algo < RG_ALGO_COUNT && c.rails >= 0 &&
        c.rails <= RG_MAX_RAILS) {
        *algo = c.algo;
        *rails = c.rails;
    }
    return st;
}

const char *rg_tp_status(int st, char *buf, size_t len)
{
    const char *n = rg_plugin_status_name(st);
    if (n)
        snprintf(buf, len, "%s", n);
    else
        snprintf(buf, len, "status %d (not in railguard's table)", st);
    return buf;
}
