/* SPDX-License-Identifier: MIT */
/*
 * A transport that misbehaves on purpose, for testing the runner's verdicts: every all_reduce,
 * broadcast, send and recv, on every rank, does what RG_BAD_MODE says:
 *
 *   error     returns an error                      -> detected
 *   stale     returns success, output untouched     -> SILENT_CORRUPTION
 *   overrun   returns success, writes past the end  -> SILENT_CORRUPTION (guard band)
 *   clobber   returns success, changes the input    -> SILENT_CORRUPTION (send buffer)
 *   hang      never returns                         -> DEADLOCK
 *   crash     dies of SIGSEGV                       -> CRASH
 *   atexit    returns success, then the process exits 7 from an atexit handler (a crash at
 *             exit, after the verdict)          -> CRASH
 *   poll      polls its CQ once and returns its verdict: an error only when the poll fails
 *             (a negpoll fault), as a correct transport would  -> ok, or detected
 *
 * RG_BAD_MODE_<rank> gives one rank its own mode.
 *
 * So that the shim can instrument it, init opens the first RDMA device and creates a CQ,
 * through libibverbs dlopen-ed under the name RG_BAD_VERBS (default libibverbs.so.1; a path or
 * a symlink tests the shim's dlopen interception; "none" opens nothing, as a transport that
 * reached verbs some other way would look to the shim).
 *
 * barrier succeeds without communicating; all_gather and reduce_scatter are missing (NULL),
 * which the runner must report as an error. Only the runner's judgement is under test here.
 * The table's size says it ends at last_error, as a v1 table built before mem_register
 * existed does: it must still load, and a zero_copy scenario must be refused as an error. Its
 * mem_register and mem_deregister are set all the same, and abort: a runner that read them
 * past the size would crash the rank instead.
 */
#include "railguard.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct bad {
    int rank;
    int failed; /* a call failed: every later one fails too (fail-stop), but in "carryon" */
    char err[128];
    void *lib;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    int (*destroy_cq)(struct ibv_cq *);
    int (*dealloc_pd)(struct ibv_pd *);
    int (*close_device)(struct ibv_context *);
};

/* The few verbs init needs, looked up on the library's own handle as NCCL and JACCL do. */
static int open_verbs(struct bad *b, const char *name, char *err, size_t errlen)
{
    struct ibv_device **(*get_list)(int *);
    void (*free_list)(struct ibv_device **);
    struct ibv_context *(*open_dev)(struct ibv_device *);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *);
    struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
    int n = 0;

    b->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!b->lib) {
        snprintf(err, errlen, "bad plugin: dlopen %s: %s", name, dlerror());
        return -1;
    }
    *(void **)&get_list = dlsym(b->lib, "ibv_get_device_list");
    *(void **)&free_list = dlsym(b->lib, "ibv_free_device_list");
    *(void **)&open_dev = dlsym(b->lib, "ibv_open_device");
    *(void **)&alloc_pd = dlsym(b->lib, "ibv_alloc_pd");
    *(void **)&create_cq = dlsym(b->lib, "ibv_create_cq");
    *(void **)&b->destroy_cq = dlsym(b->lib, "ibv_destroy_cq");
    *(void **)&b->dealloc_pd = dlsym(b->lib, "ibv_dealloc_pd");
    *(void **)&b->close_device = dlsym(b->lib, "ibv_close_device");
    if (!get_list || !free_list || !open_dev || !alloc_pd || !create_cq || !b->destroy_cq ||
        !b->dealloc_pd || !b->close_device) {
        snprintf(err, errlen, "bad plugin: %s lacks a verb", name);
        return -1;
    }
    struct ibv_device **list = get_list(&n);
    if (!list || n < 1) {
        snprintf(err, errlen, "bad plugin: no RDMA device");
        if (list)
            free_list(list);
        return -1;
    }
    b->ctx = open_dev(list[0]);
    free_list(list);
    b->pd = b->ctx ? alloc_pd(b->ctx) : NULL;
    b->cq = b->pd ? create_cq(b->ctx, 16, NULL, NULL, 0) : NULL;
    if (!b->cq) {
        snprintf(err, errlen, "bad plugin: cannot open a device, PD and CQ");
        return -1;
    }
    return 0;
}

static void close_verbs(struct bad *b)
{
    if (b->cq)
        b->destroy_cq(b->cq);
    if (b->pd)
        b->dealloc_pd(b->pd);
    if (b->ctx)
        b->close_device(b->ctx);
    if (b->lib)
        dlclose(b->lib);
}

/* RG_BAD_MODE_<rank> overrides RG_BAD_MODE for that rank, so ranks can fail differently. */
static const char *mode(const struct bad *b)
{
    char name[32];
    snprintf(name, sizeof(name), "RG_BAD_MODE_%d", b ? b->rank : -1);
    const char *m = getenv(name);
    if (!m)
        m = getenv("RG_BAD_MODE");
    return m ? m : "error";
}

static void exit_badly(void)
{
    _exit(7);
}

static void *bad_init(const rg_plugin_args *a, char *err, size_t errlen)
{
    struct bad *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, errlen, "bad plugin: out of memory");
        return NULL;
    }
    b->rank = a->rank;
    if (!strcmp(mode(b), "atexit"))
        atexit(exit_badly);
    const char *lib = getenv("RG_BAD_VERBS");
    if (strcmp(lib ? lib : "", "none") != 0 &&
        open_verbs(b, lib && *lib ? lib : "libibverbs.so.1", err, errlen) != 0) {
        close_verbs(b);
        free(b);
        return NULL;
    }
    return b;
}

/* Misbehaves on `out` (n bytes), `in` (m bytes). Returns the call's status. */
static int act(struct bad *b, void *out, size_t n, void *in, size_t m)
{
    const char *md = mode(b);
    if (!strcmp(md, "error")) {
        snprintf(b->err, sizeof(b->err), "bad plugin: injected error on rank %d", b->rank);
        return 1;
    }
    if (!strcmp(md, "overrun") && out) {
        ((unsigned char *)out)[n] ^= 0xff; /* one byte past the end */
        return 0;
    }
    if (!strcmp(md, "clobber") && in && m) {
        ((unsigned char *)in)[m - 1] ^= 0x01;
        return 0;
    }
    if (!strcmp(md, "hang"))
        for (;;)
            pause();
    if (!strcmp(md, "crash"))
        raise(SIGSEGV);
    if (!strcmp(md, "poll") || !strcmp(md, "carryon")) {
        struct ibv_wc wc;
        if (b->failed && md[0] == 'p')
            return 1; /* fail-stop, as a transport must be */
        int got = b->cq ? ibv_poll_cq(b->cq, 1, &wc) : 0;
        if (got < 0) {
            snprintf(b->err, sizeof(b->err), "bad plugin: ibv_poll_cq returned %d", got);
            b->failed = 1;
            return 1;
        }
        return 0; /* used with barriers only: no data to get right */
    }
    return 0; /* stale: success, nothing written */
}

static size_t esize(rg_dtype dt)
{
    switch (dt) {
    case RG_BOOL:
    case RG_INT8:
    case RG_UINT8:
        return 1;
    case RG_INT16:
    case RG_UINT16:
    case RG_FLOAT16:
    case RG_BFLOAT16:
        return 2;
    case RG_INT32:
    case RG_UINT32:
    case RG_FLOAT32:
        return 4;
    default:
        return 8;
    }
}

static int bad_all_reduce(void *h, const void *send, void *recv, size_t count, rg_dtype dt,
                          rg_redop op)
{
    (void)op;
    return act(h, recv, count * esize(dt), send == recv ? NULL : (void *)send, count * esize(dt));
}

/* The root's buffer is right without any communication, so a 2-rank broadcast from rank 0 shows
 * an overrun on its own. */
static int bad_broadcast(void *h, void *buf, size_t count, rg_dtype dt, int root)
{
    (void)root;
    return act(h, buf, count * esize(dt), NULL, 0);
}

/* Likewise a send's input can be changed without any communication. */
static int bad_send(void *h, const void *buf, size_t count, rg_dtype dt, int peer)
{
    (void)peer;
    return act(h, NULL, 0, (void *)buf, count * esize(dt));
}

static int bad_recv(void *h, void *buf, size_t count, rg_dtype dt, int peer)
{
    (void)peer;
    return act(h, buf, count * esize(dt), NULL, 0);
}

/* barrier communicates nothing, but in "poll" mode it polls as every call does. */
static int bad_barrier(void *h)
{
    const char *md = mode(h);
    return strcmp(md, "poll") && strcmp(md, "carryon") ? 0 : act(h, NULL, 0, NULL, 0);
}

static int bad_finalize(void *h)
{
    close_verbs(h);
    free(h);
    return 0;
}

static const char *bad_last_error(void *h)
{
    return h ? ((struct bad *)h)->err : "";
}

static void *bad_mem_register(void *h, void *buf, size_t len)
{
    (void)h, (void)buf, (void)len;
    fprintf(stderr, "bad plugin: mem_register called past the table's size\n");
    abort();
}

static int bad_mem_deregister(void *h, void *mem)
{
    (void)h, (void)mem;
    fprintf(stderr, "bad plugin: mem_deregister called past the table's size\n");
    abort();
}

extern const rg_plugin_ops rg_plugin_v1;
const rg_plugin_ops rg_plugin_v1 = {
    .abi_version = RG_PLUGIN_ABI_VERSION,
    .size = RG_PLUGIN_V1_MIN_SIZE,
    .name = "bad",
    .init = bad_init,
    .all_reduce = bad_all_reduce,
    .broadcast = bad_broadcast,
    .send = bad_send,
    .recv = bad_recv,
    .barrier = bad_barrier,
    .finalize = bad_finalize,
    .last_error = bad_last_error,
    .mem_register = bad_mem_register,
    .mem_deregister = bad_mem_deregister,
};
