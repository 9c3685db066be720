// SPDX-License-Identifier: MIT
//
// railguard's adapter for upstream JACCL (ml-explore/mlx, mlx/distributed/jaccl/lib), built
// against a checkout the user supplies (make jaccl JACCL_SRC=/path/to/mlx); nothing of JACCL
// is in this repository. It maps railguard's plugin ABI (railguard/plugin.h, version 2) onto
// jaccl::Group and declares what JACCL does, so the stock suite runs on it with the rest
// skipped as unsupported:
//
// - all_reduce: sum, max, min (JACCL has no prod); reduce_scatter: sum only (sum_scatter);
//   all_gather, send/recv, barrier; no broadcast.
// - every dtype JACCL knows, mapped by a switch: its enum's order is not railguard's.
// - UC only (JACCL's queue pairs are UC); ring and mesh (JACCL picks: a ring when asked for one
//   and the devices form one, else the mesh when they form one, else the ring). What it picked
//   is what last_call reports, so a scenario that asked for one and got the other shows it.
//
// It builds against every mlx commit since JACCL's lib/ layout (4400504ad); what an older JACCL
// lacks is probed from its headers by the Makefile (RG_JACCL_*) and declared unsupported, never
// emulated: reduce_scatter before sum_scatter (31b5cbb09), barrier before e8ebdebee. Before
// Config::set_devices_from_file (85e3fb3bb) the adapter reads the devices file (JSON: per rank,
// per peer, the device names) into set_devices' lists itself: that parsing is the adapter's code.
// The plugin's version says which API it was built against.
//
// JACCL reports every failure by throwing; the adapter catches at the ABI (no exception may
// cross a C boundary), keeps the message for last_error, and returns RG_ERR_INVALID for
// std::invalid_argument and RG_ERR_VERBS otherwise: JACCL's messages do not say more.

#include "railguard/plugin.h"

#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "jaccl/jaccl.h"
#include "jaccl/mesh.h"
#include "jaccl/ring.h"

#ifndef RG_JACCL_DEVICES_FILE
#include <json.hpp>
#endif

namespace
{

struct handle {
    std::shared_ptr<jaccl::Group> group;
    std::string error;
    rg_algo algo = RG_ALGO_AUTO;
    int rails = 0;
    rg_algo last_algo = RG_ALGO_AUTO;
    int last_rails = 0;
};

handle *H(void *h)
{
    return static_cast<handle *>(h);
}

// railguard's dtype as JACCL's; false for one JACCL lacks (none today, but never a cast).
bool to_jaccl(rg_dtype dt, int *out)
{
    switch (dt) {
    case RG_BOOL:
        *out = jaccl::Bool;
        return true;
    case RG_INT8:
        *out = jaccl::Int8;
        return true;
    case RG_UINT8:
        *out = jaccl::UInt8;
        return true;
    case RG_INT16:
        *out = jaccl::Int16;
        return true;
    case RG_UINT16:
        *out = jaccl::UInt16;
        return true;
    case RG_INT32:
        *out = jaccl::Int32;
        return true;
    case RG_UINT32:
        *out = jaccl::UInt32;
        return true;
    case RG_INT64:
        *out = jaccl::Int64;
        return true;
    case RG_UINT64:
        *out = jaccl::UInt64;
        return true;
    case RG_FLOAT16:
        *out = jaccl::Float16;
        return true;
    case RG_BFLOAT16:
        *out = jaccl::BFloat16;
        return true;
    case RG_FLOAT32:
        *out = jaccl::Float32;
        return true;
    case RG_FLOAT64:
        *out = jaccl::Float64;
        return true;
    case RG_COMPLEX64:
        *out = jaccl::Complex64;
        return true;
    default:
        return false;
    }
}

// Runs one JACCL call; an exception becomes a status and the handle's error.
template <typename F> rg_status guard(void *h, rg_algo algo, int rails, F &&f)
{
    handle *x = H(h);
    x->last_algo = RG_ALGO_AUTO;
    x->last_rails = 0;
    // last_error is the handle's first error (plugin.h): a later one never overwrites it.
    try {
        f();
    } catch (const std::invalid_argument &e) {
        if (x->error.empty())
            x->error = e.what();
        return RG_ERR_INVALID;
    } catch (const std::exception &e) {
        if (x->error.empty())
            x->error = e.what();
        return RG_ERR_VERBS;
    } catch (...) {
        if (x->error.empty())
            x->error = "[jaccl] an exception that is not a std::exception";
        return RG_ERR_VERBS;
    }
    x->last_algo = algo;
    x->last_rails = rails;
    return RG_OK;
}

#ifndef RG_JACCL_DEVICES_FILE
// The devices file as set_devices takes it, for a JACCL without set_devices_from_file: a JSON
// array per rank of one entry per peer, each null (itself), a device name or an array of them
// (as JACCL's own reader of the time takes it). Any
// other shape is thrown as std::invalid_argument, the message naming the file and the place.
std::vector<std::vector<std::vector<std::string>>> devices_of(const char *path)
{
    std::ifstream f(path ? path : "");
    if (!f)
        throw std::invalid_argument(std::string("jaccl adapter: cannot read the devices file ") +
                                    (path ? path : "(none)"));
    auto j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded() || !j.is_array())
        throw std::invalid_argument(std::string(path) + ": not a JSON array of ranks");
    std::vector<std::vector<std::vector<std::string>>> out(j.size());
    for (size_t r = 0; r < j.size(); r++) {
        if (!j[r].is_array() || j[r].size() != j.size())
            throw std::invalid_argument(std::string(path) + ": rank " + std::to_string(r) +
                                        ": not an array of one entry per rank");
        out[r].resize(j.size());
        for (size_t p = 0; p < j.size(); p++) {
            const auto &e = j[r][p];
            if (e.is_null())
                continue;
            if (e.is_string()) {
                out[r][p].push_back(e.get<std::string>());
                continue;
            }
            if (!e.is_array())
                throw std::invalid_argument(std::string(path) + ": rank " + std::to_string(r) +
                                            ", peer " + std::to_string(p) +
                                            ": not null, a device name or an array of them");
            for (const auto &d : e) {
                if (!d.is_string())
                    throw std::invalid_argument(std::string(path) + ": rank " + std::to_string(r) +
                                                ", peer " + std::to_string(p) +
                                                ": a device name not a string");
                out[r][p].push_back(d.get<std::string>());
            }
        }
    }
    return out;
}
#endif

rg_status ad_init(const rg_plugin_args *a, void **h, char *err, size_t errlen)
{
    if (!a || !h || a->size < sizeof(*a)) {
        snprintf(err, errlen, "jaccl adapter: args too small");
        return RG_ERR_INVALID;
    }
    auto *x = new (std::nothrow) handle;
    if (!x) {
        snprintf(err, errlen, "jaccl adapter: out of memory");
        return RG_ERR_NOMEM;
    }
    try {
        auto cfg = jaccl::Config()
                       .set_rank(a->rank)
                       .set_coordinator(std::string(a->coordinator ? a->coordinator : ""))
#ifdef RG_JACCL_DEVICES_FILE
                       .set_devices_from_file(a->devices_file)
#else
                       .set_devices(devices_of(a->devices_file))
#endif
                       .prefer_ring(a->algo == RG_ALGO_RING);
        if (cfg.get_size() != a->nranks) {
            snprintf(err, errlen, "jaccl adapter: the devices file has %d ranks, the run %d",
                     cfg.get_size(), a->nranks);
            delete x;
            return RG_ERR_CONFIG;
        }
        x->group = jaccl::init(cfg, true);
    } catch (const std::exception &e) {
        snprintf(err, errlen, "%s", e.what());
        delete x;
        return RG_ERR_CONFIG;
    }
    if (!x->group) {
        snprintf(err, errlen, "jaccl adapter: jaccl::init returned no group");
        delete x;
        return RG_ERR_CONFIG;
    }
    // What JACCL chose, whatever was asked: the mesh uses one rail per peer.
    if (dynamic_cast<jaccl::MeshGroup *>(x->group.get())) {
        x->algo = RG_ALGO_MESH;
        x->rails = 1;
    } else if (dynamic_cast<jaccl::RingGroup *>(x->group.get())) {
        x->algo = RG_ALGO_RING;
    }
    *h = x;
    return RG_OK;
}

rg_status ad_all_reduce(void *h, const void *s, void *r, size_t n, rg_dtype dt, rg_redop op)
{
    int t;
    size_t bytes = n * rg_plugin_dtype_size(dt);
    if (!to_jaccl(dt, &t))
        return RG_ERR_UNSUPPORTED;
    auto *g = H(h)->group.get();
    switch (op) {
    case RG_SUM:
        return guard(h, H(h)->algo, H(h)->rails, [&] { g->all_sum(s, r, bytes, t); });
    case RG_MAX:
        return guard(h, H(h)->algo, H(h)->rails, [&] { g->all_max(s, r, bytes, t); });
    case RG_MIN:
        return guard(h, H(h)->algo, H(h)->rails, [&] { g->all_min(s, r, bytes, t); });
    default:
        return RG_ERR_UNSUPPORTED;
    }
}

rg_status ad_all_gather(void *h, const void *s, void *r, size_t n, rg_dtype dt)
{
    size_t bytes = n * rg_plugin_dtype_size(dt);
    auto *g = H(h)->group.get();
    return guard(h, H(h)->algo, H(h)->rails, [&] { g->all_gather(s, r, bytes); });
}

#ifdef RG_JACCL_SUM_SCATTER
rg_status ad_reduce_scatter(void *h, const void *s, void *r, size_t n, rg_dtype dt, rg_redop op)
{
    int t;
    if (op != RG_SUM || !to_jaccl(dt, &t))
        return RG_ERR_UNSUPPORTED;
    size_t bytes = n * rg_plugin_dtype_size(dt);
    auto *g = H(h)->group.get();
    return guard(h, H(h)->algo, H(h)->rails, [&] { g->sum_scatter(s, r, bytes, t); });
}
#endif

rg_status ad_send(void *h, const void *b, size_t n, rg_dtype dt, int peer)
{
    size_t bytes = n * rg_plugin_dtype_size(dt);
    auto *g = H(h)->group.get();
    return guard(h, RG_ALGO_AUTO, 0, [&] { g->send(b, bytes, peer); });
}

rg_status ad_recv(void *h, void *b, size_t n, rg_dtype dt, int peer)
{
    size_t bytes = n * rg_plugin_dtype_size(dt);
    auto *g = H(h)->group.get();
    return guard(h, RG_ALGO_AUTO, 0, [&] { g->recv(b, bytes, peer); });
}

#ifdef RG_JACCL_BARRIER
rg_status ad_barrier(void *h)
{
    auto *g = H(h)->group.get();
    return guard(h, RG_ALGO_AUTO, 0, [&] { g->barrier(); });
}
#endif

rg_status ad_finalize(void *h)
{
    handle *x = H(h);
    rg_status st = RG_OK;
    try {
        x->group.reset();
    } catch (...) {
        st = RG_ERR_VERBS;
    }
    delete x;
    return st;
}

const char *ad_last_error(void *h)
{
    return h ? H(h)->error.c_str() : "";
}

rg_status ad_last_call(void *h, rg_plugin_call *c)
{
    if (!c || c->size < sizeof(*c))
        return RG_ERR_INVALID;
    c->algo = H(h)->last_algo;
    c->rails = H(h)->last_rails;
    return RG_OK;
}

constexpr uint32_t kReduceOps = RG_BIT(RG_SUM) | RG_BIT(RG_MAX) | RG_BIT(RG_MIN);

const rg_plugin_caps caps = [] {
    rg_plugin_caps c{};
    c.size = sizeof(rg_plugin_caps);
    c.ops = RG_BIT(RG_OP_ALL_REDUCE) | RG_BIT(RG_OP_ALL_GATHER) | RG_BIT(RG_OP_SENDRECV);
    c.redops[RG_OP_ALL_REDUCE] = kReduceOps;
#ifdef RG_JACCL_SUM_SCATTER
    c.ops |= RG_BIT(RG_OP_REDUCE_SCATTER);
    c.redops[RG_OP_REDUCE_SCATTER] = RG_BIT(RG_SUM);
#endif
#ifdef RG_JACCL_BARRIER
    c.ops |= RG_BIT(RG_OP_BARRIER);
#endif
    c.dtypes = RG_BIT(RG_DTYPE_COUNT) - 1;
    c.qp_types = RG_BIT(RG_QPT_UC);
    c.algos = RG_BIT(RG_ALGO_RING) | RG_BIT(RG_ALGO_MESH);
    c.max_ranks = RG_MAX_RANKS;
    c.max_rails = RG_MAX_RAILS;
    c.flags = RG_CAP_IN_PLACE;
    /* Neither NaN rule holds, so none is declared and no NaN is put into max or min: JACCL's
     * MaxOp is (out > in) ? out : in (reduction_ops.h, MinOp alike), which keeps the incoming
     * NaN but drops the one already in the output, so the result depends on the order the
     * ring or mesh combines the ranks in -- not RG_NAN_PROPAGATE, not IEEE fmax. */
    c.nan_minmax = RG_NAN_UNDECLARED;
    return c;
}();

} // namespace

extern "C" {
extern const rg_plugin rg_plugin_v2;
const rg_plugin rg_plugin_v2 = {
    RG_PLUGIN_ABI_VERSION,
    sizeof(rg_plugin),
    "jaccl",
    // Which JACCL API it was built against, in every report's transport line.
    "upstream"
#ifndef RG_JACCL_SUM_SCATTER
    ", no sum_scatter"
#endif
#ifndef RG_JACCL_BARRIER
    ", no barrier"
#endif
#ifndef RG_JACCL_DEVICES_FILE
    ", devices file read by the adapter"
#endif
    ,
    &caps,
    ad_init,
    ad_all_reduce,
    ad_all_gather,
#ifdef RG_JACCL_SUM_SCATTER
    ad_reduce_scatter,
#else
    nullptr, /* reduce_scatter: no Group::sum_scatter in this JACCL */
#endif
    nullptr, /* broadcast: JACCL has none */
    ad_send,
    ad_recv,
#ifdef RG_JACCL_BARRIER
    ad_barrier,
#else
    nullptr, /* barrier: no Group::barrier in this JACCL */
#endif
    ad_finalize,
    ad_last_error,
    nullptr, /* mem_register */
    nullptr, /* mem_deregister */
    ad_last_call,
};
}
