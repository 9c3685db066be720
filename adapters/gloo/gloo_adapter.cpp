// SPDX-License-Identifier: MIT
//
// railguard's adapter for Gloo's ibverbs transport (Meta's collective library behind
// PyTorch's gloo backend), built against Debian's libgloo-dev through Gloo's public C++ API
// alone: make gloo (ci/deps gloo installs the package). Nothing of Gloo is in this repository.
//
// What Gloo does, declared as it is (the rest is named, and skipped by the runner):
// - RC queue pairs only, on one device for every peer (gloo::transport::ibverbs::Device: one
//   ibv_context, one port, one GID index); so one rail. A devices file naming another device
//   for some peer is refused at init as unsupported.
// - all_reduce: gloo::AllreduceRing (sum, prod, max, min); all_gather: gloo::AllgatherRing;
//   reduce_scatter: gloo::ReduceScatterHalvingDoubling (sum, prod, max, min); broadcast:
//   gloo::BroadcastOneToAll; barrier: gloo::BarrierAllToAll; send/recv: a pair's send and
//   receive buffers (the transport::Buffer API the algorithms use), slots of their own. These
//   are Gloo's algorithms for its ibverbs transport: its newer API (UnboundBuffer) is not
//   implemented by that transport.
// - the element types Gloo's templates reduce: bool, the 8/16/32/64-bit integers, float16
//   (gloo::float16), float32, float64. Not bfloat16 or complex64: Gloo has no such type, and the
//   adapter does not add one.
// - ring for all_reduce and all_gather (what last_call reports); broadcast, reduce_scatter and
//   barrier run Gloo's only algorithm for each, which is neither ring nor mesh (AUTO).
//
// The adapter's own code, besides the mapping: the rendezvous store over the coordinator's
// port (gloo_store.cpp: Gloo has a file and a Redis store, railguard gives a port); the copy of
// send into recv before an all_reduce (Gloo reduces in place); the scratch copy a
// reduce_scatter reduces in (Gloo's halving-doubling overwrites its input), and the copy of
// this rank's block out of it; a copy of an in-place all_gather's input. Gloo's algorithm
// objects register their buffers when they are made, and the adapter makes one per call (the
// ABI's calls carry no plan to cache them by): a cost in the bench, not in the verdicts.
//
// Timeouts: the scenario's, through gloo::Context::setTimeout before the pairs are made (every
// wait of a pair's buffers honours it). Gloo reports failures by throwing; the adapter catches
// at the ABI: a timeout (gloo::IoException, "timeout") is RG_ERR_TIMEOUT, another I/O failure
// RG_ERR_COMPLETION when it names a completion's status, else RG_ERR_VERBS; a failed Gloo check
// (gloo::EnforceNotMet) RG_ERR_VERBS. A pair that failed keeps its error, so every later call
// fails too: fail-stop, RG_CAP_RECOVERS not declared.

#include "railguard/plugin.h"
#include "gloo_store.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gloo/allgather_ring.h>
#include <gloo/allreduce_ring.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/common/error.h>
#include <gloo/config.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/ibverbs/device.h>
#include <gloo/types.h>

#if !GLOO_HAVE_TRANSPORT_IBVERBS
#error "this Gloo was built without its ibverbs transport"
#endif

namespace
{

// Slots of send/recv: far above what the algorithms' nextSlot() reaches, one range per
// (sender, receiver), the k-th message of the pair in its k-th slot, so both ends agree
// whatever collectives ran in between (those take their slots from nextSlot(), which only
// ranks that all call the collective advance alike).
constexpr int kP2pSlotBase = 1 << 28;
constexpr int kP2pSlotsPerPeer = 1 << 16;

int p2p_slot(int from, int to, int k)
{
    return kP2pSlotBase + (from * RG_MAX_RANKS + to) * kP2pSlotsPerPeer + k;
}

// An algorithm object kept after its run, with memory it was given that must outlive it.
struct kept {
    std::unique_ptr<gloo::Algorithm> algo;
    std::shared_ptr<void> mem;
};

// How many run algorithms a handle keeps before it destroys the oldest. Gloo's algorithms
// do not wait for their last notification sends (a 4-byte "ready" to a neighbour), and this
// Gloo's transport::Buffer destructor enforces that no send is pending: an algorithm destroyed
// right after run() aborts the process whenever that completion has not come back yet
// (RG_GLOO_KEEP=0 shows it; docs/adapters.md). Sixteen calls later it has, in practice; the
// rest are destroyed at finalize.
constexpr size_t kKeepDefault = 16;

struct handle {
    std::shared_ptr<gloo::transport::Device> dev;
    std::shared_ptr<gloo::rendezvous::Context> ctx;
    std::deque<kept> kept_algos; // before ctx in destruction: they hold its pairs' buffers
    size_t keep = kKeepDefault;
    std::string error;
    std::vector<int> sent, received; // per peer: send/recv calls so far (their slots)
    rg_algo last_algo = RG_ALGO_AUTO;
    int last_rails = 0;
};

handle *H(void *h)
{
    return static_cast<handle *>(h);
}

// Runs a Gloo algorithm and keeps it (see kept): in the deque before it runs, so that an
// exception out of run() does not destroy it with its sends in flight either.
void run_kept(handle *x, gloo::Algorithm *a, std::shared_ptr<void> mem = nullptr)
{
    x->kept_algos.push_back(kept{std::unique_ptr<gloo::Algorithm>(a), std::move(mem)});
    a->run();
    while (x->kept_algos.size() > x->keep)
        x->kept_algos.pop_front();
}

bool contains(const char *s, const char *what)
{
    return s && strcasestr(s, what) != nullptr;
}

// Runs one Gloo call; an exception becomes a status and the handle's first error.
template <typename F> rg_status guard(void *h, rg_algo algo, F &&f)
{
    handle *x = H(h);
    x->last_algo = RG_ALGO_AUTO;
    x->last_rails = 0;
    rg_status st = RG_OK;
    std::string what;
    try {
        f();
    } catch (const gloo::IoException &e) {
        what = e.what();
        st = contains(e.what(), "timeout")  ? RG_ERR_TIMEOUT
             : contains(e.what(), "status") ? RG_ERR_COMPLETION
                                            : RG_ERR_VERBS;
    } catch (const gloo::EnforceNotMet &e) {
        what = e.what();
        st = RG_ERR_VERBS;
    } catch (const std::invalid_argument &e) {
        what = e.what();
        st = RG_ERR_INVALID;
    } catch (const std::bad_alloc &) {
        what = "gloo adapter: out of memory";
        st = RG_ERR_NOMEM;
    } catch (const std::exception &e) {
        what = e.what();
        st = RG_ERR_VERBS;
    } catch (...) {
        what = "gloo: an exception that is not a std::exception";
        st = RG_ERR_VERBS;
    }
    if (st != RG_OK) {
        if (x->error.empty())
            x->error = what;
        return st;
    }
    x->last_algo = algo;
    x->last_rails = 1;
    return RG_OK;
}

// --- init -------------------------------------------------------------------------------------

// This rank's one device, from the devices file (a JSON array per rank of one entry per peer:
// null for itself, a device name or an array of them). Gloo takes one device for all peers:
// several differing names are unsupported, said in err. Read by the adapter (Gloo has no such
// file); a file of another shape is a config error naming the file.
rg_status device_of(const char *path, int rank, int nranks, std::string *dev, char *err,
                    size_t errlen)
{
    std::ifstream f(path ? path : "");
    if (!f) {
        snprintf(err, errlen, "gloo adapter: cannot read the devices file %s", path ? path : "");
        return RG_ERR_CONFIG;
    }
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    // The file is railguard's own (rg_devices_write): rows of quoted names, null and brackets.
    // Read without a JSON library: rank's row is its rank-th top-level array.
    int depth = 0, row = -1;
    std::vector<std::string> names;
    for (size_t i = 0; i < text.size(); i++) {
        char c = text[i];
        if (c == '[') {
            if (++depth == 2)
                row++;
        } else if (c == ']') {
            depth--;
        } else if (c == '"' && depth >= 2 && row == rank) {
            size_t e = text.find('"', i + 1);
            if (e == std::string::npos)
                break;
            names.push_back(text.substr(i + 1, e - i - 1));
            i = e;
        } else if (c == '"') {
            size_t e = text.find('"', i + 1);
            if (e == std::string::npos)
                break;
            i = e;
        }
    }
    if (row + 1 != nranks || names.empty()) {
        snprintf(err, errlen, "gloo adapter: %s: no row of devices for rank %d of %d", path, rank,
                 nranks);
        return RG_ERR_CONFIG;
    }
    for (const auto &n : names)
        if (n != names[0]) {
            snprintf(err, errlen,
                     "gloo adapter: Gloo uses one device for every peer, the devices file gives "
                     "rank %d both %s and %s",
                     rank, names[0].c_str(), n.c_str());
            return RG_ERR_UNSUPPORTED;
        }
    *dev = names[0];
    return RG_OK;
}

// The GID index Gloo's device uses: RG_GLOO_GID_INDEX, default 1 (soft-RoCE and RoCE v2 NICs
// put the IPv4-mapped address there; index 0 is the link-local one).
int gid_index(char *err, size_t errlen)
{
    const char *s = getenv("RG_GLOO_GID_INDEX");
    if (!s || !*s)
        return 1;
    char *end = nullptr;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 255) {
        snprintf(err, errlen, "gloo adapter: RG_GLOO_GID_INDEX='%s' is not 0..255", s);
        return -1;
    }
    return (int)v;
}

rg_status ad_init(const rg_plugin_args *a, void **h, char *err, size_t errlen)
{
    if (!a || !h || a->size < sizeof(*a)) {
        snprintf(err, errlen, "gloo adapter: args too small");
        return RG_ERR_INVALID;
    }
    if (a->qp_type != RG_QPT_RC) {
        snprintf(err, errlen, "gloo adapter: Gloo's ibverbs queue pairs are RC only");
        return RG_ERR_UNSUPPORTED;
    }
    if (a->algo == RG_ALGO_MESH) {
        snprintf(err, errlen, "gloo adapter: Gloo has no mesh algorithm");
        return RG_ERR_UNSUPPORTED;
    }
    std::string devname;
    rg_status st = device_of(a->devices_file, a->rank, a->nranks, &devname, err, errlen);
    if (st != RG_OK)
        return st;
    int gid = gid_index(err, errlen);
    if (gid < 0)
        return RG_ERR_CONFIG;
    auto timeout = std::chrono::milliseconds((long long)(a->timeout_s * 1000.0 + 0.5));
    if (timeout.count() < 1)
        timeout = std::chrono::milliseconds(1);
    auto x = std::make_unique<handle>();
    if (const char *k = getenv("RG_GLOO_KEEP")) {
        char *end = nullptr;
        long v = strtol(k, &end, 10);
        if (!*k || *end || v < 0 || v > 1024) {
            snprintf(err, errlen, "gloo adapter: RG_GLOO_KEEP='%s' is not 0..1024", k);
            return RG_ERR_CONFIG;
        }
        x->keep = (size_t)v;
    }
    x->sent.assign((size_t)a->nranks, 0);
    x->received.assign((size_t)a->nranks, 0);
    std::string coordinator = a->coordinator ? a->coordinator : "";
    std::unique_ptr<rg_gloo::StoreServer> server;
    try {
        gloo::transport::ibverbs::attr attr;
        attr.name = devname;
        attr.port = 1;
        attr.index = gid;
        x->dev = gloo::transport::ibverbs::CreateDevice(attr);
        if (a->rank == 0) {
            server = std::make_unique<rg_gloo::StoreServer>(coordinator, a->nranks, timeout);
            server->start();
        }
        rg_gloo::TcpStore store(coordinator, timeout);
        x->ctx = std::make_shared<gloo::rendezvous::Context>(a->rank, a->nranks);
        x->ctx->setTimeout(timeout);
        x->ctx->connectFullMesh(store, x->dev);
        store.done();
    } catch (const gloo::IoException &e) {
        snprintf(err, errlen, "%s", e.what());
        st = contains(e.what(), "timeout") ? RG_ERR_TIMEOUT : RG_ERR_SIDE_CHANNEL;
    } catch (const std::runtime_error &e) {
        // The store's own failures say "rendezvous"; anything else is Gloo's making the
        // device or the pairs (its verbs calls).
        snprintf(err, errlen, "%s", e.what());
        st = contains(e.what(), "rendezvous") ? RG_ERR_SIDE_CHANNEL : RG_ERR_VERBS;
    } catch (const std::exception &e) {
        snprintf(err, errlen, "%s", e.what());
        st = RG_ERR_VERBS;
    }
    if (server) {
        std::string why = server->finish();
        if (st == RG_OK && !why.empty()) {
            snprintf(err, errlen, "gloo adapter: %s", why.c_str());
            st = RG_ERR_SIDE_CHANNEL;
        }
    }
    if (st != RG_OK)
        return st;
    *h = x.release();
    return RG_OK;
}

// --- the collectives ------------------------------------------------------------------------

// Calls f with a null pointer of the C++ type Gloo reduces dt as; false for a type Gloo lacks.
template <typename F> bool by_type(rg_dtype dt, F &&f)
{
    switch (dt) {
    case RG_BOOL:
        f((bool *)nullptr);
        return true;
    case RG_INT8:
        f((int8_t *)nullptr);
        return true;
    case RG_UINT8:
        f((uint8_t *)nullptr);
        return true;
    case RG_INT16:
        f((int16_t *)nullptr);
        return true;
    case RG_UINT16:
        f((uint16_t *)nullptr);
        return true;
    case RG_INT32:
        f((int32_t *)nullptr);
        return true;
    case RG_UINT32:
        f((uint32_t *)nullptr);
        return true;
    case RG_INT64:
        f((int64_t *)nullptr);
        return true;
    case RG_UINT64:
        f((uint64_t *)nullptr);
        return true;
    case RG_FLOAT16:
        f((gloo::float16 *)nullptr);
        return true;
    case RG_FLOAT32:
        f((float *)nullptr);
        return true;
    case RG_FLOAT64:
        f((double *)nullptr);
        return true;
    default:
        return false;
    }
}

template <typename T> const gloo::ReductionFunction<T> *reduction(rg_redop op)
{
    switch (op) {
    case RG_SUM:
        return gloo::ReductionFunction<T>::sum;
    case RG_PROD:
        return gloo::ReductionFunction<T>::product;
    case RG_MAX:
        return gloo::ReductionFunction<T>::max;
    case RG_MIN:
        return gloo::ReductionFunction<T>::min;
    default:
        return nullptr;
    }
}

rg_status ad_all_reduce(void *h, const void *s, void *r, size_t n, rg_dtype dt, rg_redop op)
{
    if (n > INT_MAX)
        return RG_ERR_UNSUPPORTED; // Gloo's counts are int
    rg_status st = RG_ERR_UNSUPPORTED;
    by_type(dt, [&](auto *tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        auto *fn = reduction<T>(op);
        if (!fn)
            return;
        st = guard(h, RG_ALGO_RING, [&] {
            if (s != r) // Gloo reduces in place: the adapter's copy
                memcpy(r, s, n * rg_plugin_dtype_size(dt));
            run_kept(H(h), new gloo::AllreduceRing<T>(
                               H(h)->ctx, std::vector<T *>{static_cast<T *>(r)}, (int)n, fn));
        });
    });
    return st;
}

rg_status ad_all_gather(void *h, const void *s, void *r, size_t n, rg_dtype dt)
{
    size_t bytes = n * rg_plugin_dtype_size(dt);
    if (!bytes && n)
        return RG_ERR_UNSUPPORTED;
    if (bytes > INT_MAX)
        return RG_ERR_UNSUPPORTED;
    handle *x = H(h);
    return guard(h, RG_ALGO_RING, [&] {
        // In place (s is this rank's block of r): Gloo copies its input into that block, so
        // the adapter hands it a copy rather than the block itself.
        std::shared_ptr<char> copy;
        const char *in = static_cast<const char *>(s);
        if (in == static_cast<char *>(r) + (size_t)x->ctx->rank * bytes) {
            copy.reset(new char[bytes ? bytes : 1], std::default_delete<char[]>());
            memcpy(copy.get(), in, bytes);
            in = copy.get();
        }
        run_kept(x,
                 new gloo::AllgatherRing<char>(x->ctx, std::vector<const char *>{in},
                                               static_cast<char *>(r), (int)bytes),
                 copy);
    });
}

rg_status ad_reduce_scatter(void *h, const void *s, void *r, size_t n, rg_dtype dt, rg_redop op)
{
    handle *x = H(h);
    size_t total = n * (size_t)x->ctx->size;
    if (total > INT_MAX)
        return RG_ERR_UNSUPPORTED;
    rg_status st = RG_ERR_UNSUPPORTED;
    by_type(dt, [&](auto *tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        // Gloo's halving-doubling keeps a std::vector<T> of its own, which cannot hold bool's
        // elements by address: it does not build for bool, so bool is unsupported here.
        if constexpr (std::is_same_v<T, bool>)
            return;
        else {
            auto *fn = reduction<T>(op);
            if (!fn)
                return;
            st = guard(h, RG_ALGO_AUTO, [&] {
                // Gloo's halving-doubling reduces in its input and leaves this rank's block at its
                // start: the adapter's scratch copy, and the block copied out.
                std::shared_ptr<T> scratch(new T[total ? total : 1], std::default_delete<T[]>());
                memcpy(static_cast<void *>(scratch.get()), s, total * sizeof(T));
                run_kept(x,
                         new gloo::ReduceScatterHalvingDoubling<T>(
                             x->ctx, std::vector<T *>{scratch.get()}, (int)total,
                             std::vector<int>((size_t)x->ctx->size, (int)n), fn),
                         scratch);
                memcpy(r, static_cast<const void *>(scratch.get()), n * sizeof(T));
            });
        }
    });
    return st; // AUTO: Gloo's only algorithm for it is neither ring nor mesh
}

rg_status ad_broadcast(void *h, void *b, size_t n, rg_dtype dt, int root)
{
    size_t bytes = n * rg_plugin_dtype_size(dt);
    handle *x = H(h);
    if (root < 0 || root >= x->ctx->size)
        return RG_ERR_INVALID;
    return guard(h, RG_ALGO_AUTO, [&] {
        run_kept(x, new gloo::BroadcastOneToAll<char>(
                        x->ctx, std::vector<char *>{static_cast<char *>(b)}, bytes, root));
    });
}

rg_status ad_barrier(void *h)
{
    handle *x = H(h);
    return guard(h, RG_ALGO_AUTO, [&] { run_kept(x, new gloo::BarrierAllToAll(x->ctx)); });
}

// send/recv over the pair's buffers: the receiver's buffer is made (registered and announced
// to the peer) before the sender can write into it, which Gloo's send waits for.
rg_status ad_send(void *h, const void *b, size_t n, rg_dtype dt, int peer)
{
    handle *x = H(h);
    size_t bytes = n * rg_plugin_dtype_size(dt);
    if (peer < 0 || peer >= x->ctx->size || peer == x->ctx->rank)
        return RG_ERR_INVALID;
    if (x->sent[(size_t)peer] >= kP2pSlotsPerPeer)
        return RG_ERR_UNSUPPORTED;
    int slot = p2p_slot(x->ctx->rank, peer, x->sent[(size_t)peer]++);
    return guard(h, RG_ALGO_AUTO, [&] {
        auto buf = x->ctx->getPair(peer)->createSendBuffer(slot, const_cast<void *>(b), bytes);
        buf->send();
        buf->waitSend();
    });
}

rg_status ad_recv(void *h, void *b, size_t n, rg_dtype dt, int peer)
{
    handle *x = H(h);
    size_t bytes = n * rg_plugin_dtype_size(dt);
    if (peer < 0 || peer >= x->ctx->size || peer == x->ctx->rank)
        return RG_ERR_INVALID;
    if (x->received[(size_t)peer] >= kP2pSlotsPerPeer)
        return RG_ERR_UNSUPPORTED;
    int slot = p2p_slot(peer, x->ctx->rank, x->received[(size_t)peer]++);
    return guard(h, RG_ALGO_AUTO, [&] {
        auto buf = x->ctx->getPair(peer)->createRecvBuffer(slot, b, bytes);
        buf->waitRecv();
    });
}

rg_status ad_finalize(void *h)
{
    handle *x = H(h);
    rg_status st = RG_OK;
    try {
        x->kept_algos.clear();
        x->ctx.reset();
        x->dev.reset();
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

constexpr uint32_t kReduceOps = RG_BIT(RG_SUM) | RG_BIT(RG_PROD) | RG_BIT(RG_MAX) | RG_BIT(RG_MIN);

const rg_plugin_caps caps = [] {
    rg_plugin_caps c{};
    c.size = sizeof(rg_plugin_caps);
    c.ops = RG_BIT(RG_OP_ALL_REDUCE) | RG_BIT(RG_OP_ALL_GATHER) | RG_BIT(RG_OP_REDUCE_SCATTER) |
            RG_BIT(RG_OP_BROADCAST) | RG_BIT(RG_OP_SENDRECV) | RG_BIT(RG_OP_BARRIER);
    c.redops[RG_OP_ALL_REDUCE] = kReduceOps;
    c.redops[RG_OP_REDUCE_SCATTER] = kReduceOps;
    c.dtypes = (RG_BIT(RG_DTYPE_COUNT) - 1) & ~(RG_BIT(RG_BFLOAT16) | RG_BIT(RG_COMPLEX64));
    c.qp_types = RG_BIT(RG_QPT_RC);
    c.algos = RG_BIT(RG_ALGO_RING);
    c.max_ranks = RG_MAX_RANKS;
    c.max_rails = 1;
    c.flags = RG_CAP_IN_PLACE;
    // std::max/std::min (Gloo's max and min) keep the first operand when either is a NaN:
    // the result depends on the order the ring combines ranks in, so neither rule holds.
    c.nan_minmax = RG_NAN_UNDECLARED;
    return c;
}();

} // namespace

extern "C" {
extern const rg_plugin rg_plugin_v2;
const rg_plugin rg_plugin_v2 = {
    RG_PLUGIN_ABI_VERSION,
    sizeof(rg_plugin),
    "gloo",
    "Debian libgloo " RG_GLOO_PKG_VERSION ", ibverbs transport",
    &caps,
    ad_init,
    ad_all_reduce,
    ad_all_gather,
    ad_reduce_scatter,
    ad_broadcast,
    ad_send,
    ad_recv,
    ad_barrier,
    ad_finalize,
    ad_last_error,
    nullptr, /* mem_register: Gloo registers its own buffers */
    nullptr, /* mem_deregister */
    ad_last_call,
};
}
