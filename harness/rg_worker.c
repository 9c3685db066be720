/* SPDX-License-Identifier: MIT */
/*
 * One rank of a scenario: `railguard worker ...`, started by the runner (with the shim
 * preloaded). It loads the transport through the plugin ABI, runs the scenario's program,
 * checks every output bit-exact against rg_data's reference, every guard band and every send
 * buffer, holds each call's buffers scribbled for one more step once it returned (struct held),
 * and tells the runner where it is and how it ended, one line at a time on the status
 * descriptor, each line led by the CLOCK_MONOTONIC time in milliseconds (the clock the shim's
 * events carry, so the runner can tell whether a fault fired before an error):
 *
 *   <ms> ready                            loaded; with --go-fd, waits for the runner's go
 *   <ms> step <i> <rep> <op>              about to run program step i, repetition rep
 *   verdict ok
 *   status <st>                              the failed call's RG_ERR_* value, before a
 *   status v1                                detected verdict (v1: the ABI carries none)
 *   verdict detected <i> <rep> <message>     the transport returned an error
 *   verdict corrupt <i> <rep> <detail>       it returned success with wrong data
 *   verdict error <message>                  the harness itself could not run the rank
 *
 * A rank that is killed, or exits without a verdict line, is judged by the runner. A crash
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) writes this process's backtrace to the backtrace
 * file before the signal takes its course; so does RG_BACKTRACE_SIGNAL, which the runner sends
 * to a rank still running at the deadline before it kills it.
 */
#include "rg_faultinject.h"
#include "rg_harness.h"

#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A buffer with guard bands on both sides. */
struct gbuf {
    uint8_t *base;
    uint8_t *data;
    size_t len;
};

/*
 * A call's buffers after it returned success. The caller owns them again, so the worker
 * overwrites them with RG_SCRIBBLE at once and keeps them (still registered) until the end of
 * the next step: a transport that returned before the NIC read a send buffer (a zero-copy
 * send left in flight, Megatron-LM#4047) sends the scribble, and the receiver's data check
 * sees it; one that writes a receive buffer after returning changes the scribble, and the
 * release check sees that.
 */
#define RG_SCRIBBLE 0xC3
struct held {
    struct gbuf a, b;
    void *m[2];
    int step, rep;
};

#define FD_BITS 1024
struct fdset {
    uint64_t bit[FD_BITS / 64];
};

struct worker {
    const rg_scenario *sc;
    void (*set_phase)(int step, int rep); /* the shim's, when it is there */
    rg_tp tp;
    rg_plugin_args args;
    void *h;
    int fd;
    int rank;
    int step, rep;     /* the step running now */
    struct held held;  /* the last successful call's buffers */
    struct held fresh; /* this step's, once its call returned success and its checks passed */
    struct fdset fds;  /* open before init: anything more after finalize is the transport's */
    /* What the transport says each successful call ran (rg_tp_last_call): calls by algorithm
     * (auto: it could not say) and rails. */
    unsigned calls[RG_ALGO_COUNT][RG_MAX_RAILS + 1];
    int status; /* the status of the last failed call (say_error), 0 when none */
};

/* --- file descriptors the transport leaves open -------------------------------------------- */
static void fds_open(struct fdset *s)
{
    memset(s, 0, sizeof(*s));
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end || end == de->d_name || fd < 0 || fd >= FD_BITS || fd == dirfd(d))
            continue;
        s->bit[fd / 64] |= 1ull << (fd % 64);
    }
    closedir(d);
}

static void say(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct worker *w, const char *fmt, ...)
{
    char at[48];
    struct timespec ts;
    va_list ap;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(at, sizeof(at), "%.3f ", (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
    va_start(ap, fmt);
    rg_say_line(w->fd, at, fmt, ap);
    va_end(ap);
}

static int gbuf_alloc(struct gbuf *b, size_t len)
{
    b->len = len;
    b->base = malloc(len + 2 * RG_GUARD_BYTES);
    if (!b->base)
        return -1;
    b->data = b->base + RG_GUARD_BYTES;
    rg_guard_fill(b->base, RG_GUARD_BYTES);
    rg_guard_fill(b->data + len, RG_GUARD_BYTES);
    memset(b->data, 0x5A, len); /* what a result that never arrived looks like */
    return 0;
}

static const char *gbuf_broken(const struct gbuf *b)
{
    if (!rg_guard_intact(b->base, RG_GUARD_BYTES))
        return "the guard band before it was overwritten";
    if (!rg_guard_intact(b->data + b->len, RG_GUARD_BYTES))
        return "the guard band after it was overwritten";
    return NULL;
}

static void hex(char *out, size_t outlen, const uint8_t *p, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = n; i-- > 0 && o + 3 < outlen;)
        o += (size_t)snprintf(out + o, outlen - o, "%02x", p[i]);
}

/*
 * After finalize: every descriptor open now that was not open before init is the transport's
 * leftover (its device, its side channel, an event channel): a "leak" line names each.
 */
static void fds_leaked(struct worker *w)
{
    struct fdset now;
    char list[700] = "";
    size_t used = 0;
    int n = 0;
    fds_open(&now);
    for (int fd = 0; fd < FD_BITS; fd++) {
        uint64_t m = 1ull << (fd % 64);
        if (!(now.bit[fd / 64] & m) || (w->fds.bit[fd / 64] & m))
            continue;
        char link[64], what[200];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t k = readlink(link, what, sizeof(what) - 1);
        what[k > 0 ? k : 0] = '\0';
        n++;
        if (used + 40 < sizeof(list))
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d (%s)",
                                     used ? ", " : "", fd, k > 0 ? what : "?");
    }
    if (n)
        say(w, "leak %d file descriptor(s) the transport opened are still open after finalize: %s",
            n, list);
}

/*
 * Checks `n` elements at got against want. Returns 0, or writes what differs into detail.
 */
static int check(const uint8_t *got, const uint8_t *want, size_t n, rg_dtype dt, bool fold,
                 const char *what, size_t base_index, char *detail, size_t dlen)
{
    size_t bad = rg_data_compare(got, want, n, dt, fold);
    if (bad == n)
        return 0;
    size_t sz = rg_data_size(dt);
    char g[40], e[40];
    hex(g, sizeof(g), got + bad * sz, sz);
    hex(e, sizeof(e), want + bad * sz, sz);
    snprintf(detail, dlen, "%s element %zu is 0x%s, expected 0x%s", what, base_index + bad, g, e);
    return -1;
}

static const char *op_label(const rg_sc_op *op, char *buf, size_t len)
{
    switch (op->kind) {
    case RG_SC_ALL_REDUCE:
    case RG_SC_REDUCE_SCATTER:
        snprintf(buf, len, "%s %s %s count %zu%s", rg_sc_kind_name(op->kind),
                 rg_data_dtype_name(op->dtype), rg_data_redop_name(op->redop), op->count,
                 op->inplace ? " in place" : "");
        break;
    case RG_SC_BARRIER:
    case RG_SC_CREATE:
    case RG_SC_DESTROY:
        snprintf(buf, len, "%s", rg_sc_kind_name(op->kind));
        break;
    default:
        snprintf(buf, len, "%s %s count %zu%s", rg_sc_kind_name(op->kind),
                 rg_data_dtype_name(op->dtype), op->count, op->inplace ? " in place" : "");
        break;
    }
    return buf;
}

/*
 * zero_copy scenarios: the call's buffers (not the reference) are registered just before the
 * call and given back just after it, on error too, so a transport that sends in place is
 * tested with the buffers it really sends from. A refusal is the transport's error (detected).
 */
static int zc_on(struct worker *w, const struct gbuf *a, const struct gbuf *b, void *m[2])
{
    int st = 0;
    m[0] = m[1] = NULL;
    if (!w->sc->zero_copy)
        return 0;
    if (a->base && a->len && (st = rg_tp_mem_register(&w->tp, w->h, a->data, a->len, &m[0])))
        return st;
    if (b->base && b->len && (st = rg_tp_mem_register(&w->tp, w->h, b->data, b->len, &m[1])))
        return st;
    return 0;
}

static int zc_off(struct worker *w, void *m[2], int err)
{
    for (int i = 0; i < 2; i++) {
        int st;
        if (m[i] && w->h && (st = rg_tp_mem_deregister(&w->tp, w->h, m[i])) && !err)
            err = st;
        m[i] = NULL;
    }
    return err;
}

/* The first byte of b's data that no longer holds the scribble, or b->len. */
static size_t scribble_changed(const struct gbuf *b)
{
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] != RG_SCRIBBLE)
            return i;
    return b->len;
}

/*
 * Gives back a held call's buffers: checks that nothing wrote them since the call returned,
 * deregisters and frees them. Returns 0, 1 (deregistration failed: detected) or 2 (written
 * after return: corrupt), with detail set. `check` is false on a path that is already failing.
 */
static int release(struct worker *w, struct held *hd, bool check, char *detail, size_t dlen)
{
    int rc = 0;
    if (check) {
        const struct gbuf *bufs[2] = {&hd->a, &hd->b};
        for (int i = 0; i < 2 && !rc; i++) {
            size_t at = bufs[i]->base ? scribble_changed(bufs[i]) : bufs[i]->len;
            if (at < bufs[i]->len) {
                snprintf(detail, dlen,
                         "step %d (repetition %d) returned success, but its %s buffer was "
                         "written after the call returned (byte %zu is 0x%02x)",
                         hd->step, hd->rep, i ? "second" : "first", at, bufs[i]->data[at]);
                rc = 2;
            }
        }
    }
    if (zc_off(w, hd->m, 0) && check && !rc) {
        snprintf(detail, dlen, "mem_deregister of step %d's buffers failed: %s", hd->step,
                 w->h ? rg_tp_last_error(&w->tp, w->h) : "no communicator");
        rc = 1;
    }
    free(hd->a.base);
    free(hd->b.base);
    memset(hd, 0, sizeof(*hd));
    return rc;
}

/* An error's detail: "RG_ERR_TIMEOUT: message", or the message alone from a v1 plugin; the
 * status is kept for the verdict's "status" line. */
static void say_error(struct worker *w, char *detail, size_t dlen, int st, const char *msg)
{
    char name[64];
    const rg_tp *tp = &w->tp;
    w->status = st;
    if (tp->abi == 1)
        snprintf(detail, dlen, "%s", msg);
    else
        snprintf(detail, dlen, "%s: %s", rg_tp_status(st, name, sizeof(name)), msg);
}

/* A create the transport refused (RG_ERR_UNSUPPORTED): no communicator for the steps after
 * it, which are skipped and named, not run into "no communicator" errors. Returns the last
 * step, so the program's loop ends. */
static int skip_rest(struct worker *w, int i)
{
    for (int j = i + 1; j < w->sc->nops; j++) {
        char label[160];
        op_label(&w->sc->ops[j], label, sizeof(label));
        say(w, "unsupported %d 0 %s: no communicator (step %d's create was not supported)", j,
            label, i);
    }
    return w->sc->nops - 1;
}

/* Before a detected verdict: the failed call's status ("status -8"), or "status v1" for a
 * transport whose ABI carries none; nothing when no call failed (a check of ours did). */
static void say_status(struct worker *w)
{
    if (w->tp.abi == 1)
        say(w, "status v1");
    else if (w->status)
        say(w, "status %d", w->status);
}

/*
 * Runs one step once. Returns 0 ok, 1 detected (message in detail), 2 corrupt, 3 unsupported
 * (the call returned RG_ERR_UNSUPPORTED: nothing ran, the handle goes on), -1 error.
 */
static int run_step(struct worker *w, const rg_sc_op *op, const rg_data_key *k, char *detail,
                    size_t dlen)
{
    const rg_tp *p = &w->tp;
    int n = w->sc->ranks, r = w->rank, rc = 0, err = 0;
    size_t sz = rg_data_size(op->dtype), cnt = op->count;
    struct gbuf a = {0}, b = {0}, want = {0};
    uint8_t *copy = NULL;
    void *m[2] = {NULL, NULL};
    const char *broken;

/* A transport call, with the call's buffers registered; an error gives them back at once,
 * success hands them to the worker's hold (see struct held). */
#define CALL(expr)                                                                                 \
    do {                                                                                           \
        if (!(err = zc_on(w, &a, &b, m)))                                                          \
            err = (expr);                                                                          \
        if (err)                                                                                   \
            zc_off(w, m, err);                                                                     \
    } while (0)

    switch (op->kind) {
    case RG_SC_CREATE:
        if (w->h) {
            snprintf(detail, dlen, "create: the communicator exists");
            return -1;
        }
        char msg[512];
        err = rg_tp_init(&w->tp, &w->args, &w->h, msg, sizeof(msg));
        if (err)
            say_error(w, detail, dlen, err, msg);
        return err == RG_ERR_UNSUPPORTED ? 3 : err ? 1 : 0;
    case RG_SC_DESTROY:
        if ((rc = release(w, &w->held, true, detail, dlen)))
            return rc;
        if (w->h && (err = rg_tp_finalize(p, w->h))) {
            w->h = NULL;
            say_error(w, detail, dlen, err, "finalize failed");
            return 1;
        }
        w->h = NULL;
        return 0;
    case RG_SC_BARRIER:
        if (!w->h)
            goto no_comm;
        if (!(err = rg_tp_barrier(p, w->h)))
            return 0;
        say_error(w, detail, dlen, err, rg_tp_last_error(p, w->h));
        return err == RG_ERR_UNSUPPORTED ? 3 : 1;
    default:
        break;
    }
    if (!w->h)
        goto no_comm;

    switch (op->kind) {
    case RG_SC_ALL_REDUCE:
        if (gbuf_alloc(&a, cnt * sz) || gbuf_alloc(&want, cnt * sz))
            goto oom;
        rg_data_fill(a.data, cnt, op->dtype, (int)op->redop, k, r, 0);
        if (!op->inplace) {
            if (gbuf_alloc(&b, cnt * sz) || !(copy = malloc(cnt * sz)))
                goto oom;
            memcpy(copy, a.data, cnt * sz);
        }
        CALL(rg_tp_all_reduce(p, w->h, a.data, op->inplace ? a.data : b.data, cnt, op->dtype,
                              op->redop));
        if (err)
            break;
        rg_data_expect_reduce(want.data, cnt, op->dtype, op->redop, k, n, 0);
        rc = check(op->inplace ? a.data : b.data, want.data, cnt, op->dtype, true, "result", 0,
                   detail, dlen);
        if (!rc && copy)
            rc = check(a.data, copy, cnt, op->dtype, false, "the send buffer changed:", 0, detail,
                       dlen);
        break;
    case RG_SC_ALL_GATHER:
        if (gbuf_alloc(&b, (size_t)n * cnt * sz) || gbuf_alloc(&want, (size_t)n * cnt * sz))
            goto oom;
        for (int q = 0; q < n; q++)
            rg_data_fill(want.data + (size_t)q * cnt * sz, cnt, op->dtype, -1, k, q, 0);
        if (op->inplace) {
            memcpy(b.data + (size_t)r * cnt * sz, want.data + (size_t)r * cnt * sz, cnt * sz);
            CALL(rg_tp_all_gather(p, w->h, b.data + (size_t)r * cnt * sz, b.data, cnt, op->dtype));
        } else {
            if (gbuf_alloc(&a, cnt * sz))
                goto oom;
            memcpy(a.data, want.data + (size_t)r * cnt * sz, cnt * sz);
            CALL(rg_tp_all_gather(p, w->h, a.data, b.data, cnt, op->dtype));
            if (!err)
                rc = check(a.data, want.data + (size_t)r * cnt * sz, cnt, op->dtype, false,
                           "the send buffer changed:", 0, detail, dlen);
        }
        if (!err && !rc)
            rc = check(b.data, want.data, (size_t)n * cnt, op->dtype, false, "gathered", 0, detail,
                       dlen);
        break;
    case RG_SC_REDUCE_SCATTER:
        if (gbuf_alloc(&a, (size_t)n * cnt * sz) || gbuf_alloc(&want, cnt * sz))
            goto oom;
        rg_data_fill(a.data, (size_t)n * cnt, op->dtype, (int)op->redop, k, r, 0);
        if (op->inplace) {
            CALL(rg_tp_reduce_scatter(p, w->h, a.data, a.data + (size_t)r * cnt * sz, cnt,
                                      op->dtype, op->redop));
        } else {
            if (gbuf_alloc(&b, cnt * sz) || !(copy = malloc((size_t)n * cnt * sz)))
                goto oom;
            memcpy(copy, a.data, (size_t)n * cnt * sz);
            CALL(rg_tp_reduce_scatter(p, w->h, a.data, b.data, cnt, op->dtype, op->redop));
            if (!err)
                rc = check(a.data, copy, (size_t)n * cnt, op->dtype, false,
                           "the send buffer changed:", 0, detail, dlen);
        }
        if (err || rc)
            break;
        rg_data_expect_reduce(want.data, cnt, op->dtype, op->redop, k, n, (size_t)r * cnt);
        rc = check(op->inplace ? a.data + (size_t)r * cnt * sz : b.data, want.data, cnt, op->dtype,
                   true, "result", (size_t)r * cnt, detail, dlen);
        break;
    case RG_SC_BROADCAST:
        if (gbuf_alloc(&a, cnt * sz) || gbuf_alloc(&want, cnt * sz))
            goto oom;
        rg_data_fill(want.data, cnt, op->dtype, -1, k, op->root, 0);
        if (r == op->root)
            memcpy(a.data, want.data, cnt * sz);
        CALL(rg_tp_broadcast(p, w->h, a.data, cnt, op->dtype, op->root));
        if (!err)
            rc = check(a.data, want.data, cnt, op->dtype, false, "broadcast", 0, detail, dlen);
        break;
    case RG_SC_SENDRECV:
        if (r != op->from && r != op->to)
            return 0;
        if (gbuf_alloc(&a, cnt * sz) || gbuf_alloc(&want, cnt * sz))
            goto oom;
        rg_data_fill(want.data, cnt, op->dtype, -1, k, op->from, 0);
        if (r == op->from) {
            memcpy(a.data, want.data, cnt * sz);
            CALL(rg_tp_send(p, w->h, a.data, cnt, op->dtype, op->to));
            if (!err)
                rc = check(a.data, want.data, cnt, op->dtype, false, "the send buffer changed:", 0,
                           detail, dlen);
        } else {
            CALL(rg_tp_recv(p, w->h, a.data, cnt, op->dtype, op->from));
            if (!err)
                rc = check(a.data, want.data, cnt, op->dtype, false, "received", 0, detail, dlen);
        }
        break;
    default: /* create, destroy and barrier returned above; the parser admits no other */
        snprintf(detail, dlen, "unknown step kind %d", (int)op->kind);
        return -1;
    }
    if (err) {
        say_error(w, detail, dlen, err, rg_tp_last_error(p, w->h));
        rc = err == RG_ERR_UNSUPPORTED ? 3 : 1;
    } else if (rc == -1) {
        rc = 2;
    } else if ((broken = a.base ? gbuf_broken(&a) : NULL) ||
               (broken = b.base ? gbuf_broken(&b) : NULL)) {
        snprintf(detail, dlen, "returned success but %s", broken);
        rc = 2;
    }
    if (rc == 0) {
        /* Checked: the caller owns the buffers again. Scribble them; hold them a step. */
        if (a.base)
            memset(a.data, RG_SCRIBBLE, a.len);
        if (b.base)
            memset(b.data, RG_SCRIBBLE, b.len);
        w->fresh = (struct held){a, b, {m[0], m[1]}, w->step, w->rep};
        a.base = b.base = NULL;
    } else {
        zc_off(w, m, 0);
    }
    free(a.base);
    free(b.base);
    free(want.base);
    free(copy);
    return rc;
oom:
    free(a.base);
    free(b.base);
    free(want.base);
    free(copy);
    snprintf(detail, dlen, "out of memory for %zu elements", cnt);
    return -1;
no_comm:
    snprintf(detail, dlen, "no communicator (destroyed and not created again)");
    return -1;
#undef CALL
}

/* --- backtraces: in process, so a hang's report comes within seconds, not gdb's minute --- */
static char g_bt_path[1024];
static char g_altstack[64 * 1024];

/* Async-signal-safe: open, write and backtrace_symbols_fd (primed at start, so it loads
 * nothing here). */
static void bt_write(const char *why, int sig)
{
    void *frames[64];
    char head[96];
    int fd = open(g_bt_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    int n = snprintf(head, sizeof(head), "railguard worker pid %ld: %s (signal %d)\n",
                     (long)getpid(), why, sig);
    if (n > 0 && write(fd, head, (size_t)n) < 0)
        n = 0;
    int depth = backtrace(frames, 64);
    backtrace_symbols_fd(frames, depth, fd);
    close(fd);
}

static void on_crash(int sig)
{
    bt_write("crashed", sig);
    /* SA_RESETHAND put the default back: the signal ends the process as it would have. */
    raise(sig);
}

static void on_backtrace(int sig)
{
    int saved = errno;
    bt_write("asked for a backtrace at the deadline", sig);
    errno = saved;
}

static void bt_install(const char *path)
{
    static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    void *prime[2];
    struct sigaction sa;

    if (!path || !*path)
        return;
    snprintf(g_bt_path, sizeof(g_bt_path), "%s", path);
    backtrace(prime, 2); /* loads libgcc's unwinder now, outside any handler */
    stack_t st = {.ss_sp = g_altstack, .ss_size = sizeof(g_altstack)};
    sigaltstack(&st, NULL);
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
    for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
        sigaction(crash[i], &sa, NULL);
    const char *bs = getenv("RG_BACKTRACE_SIGNAL");
    char *end = NULL;
    long sig = bs ? strtol(bs, &end, 10) : 0;
    if (bs && *end == '\0' && sig >= SIGRTMIN && sig <= SIGRTMAX) {
        sa.sa_handler = on_backtrace;
        sa.sa_flags = SA_ONSTACK | SA_RESTART;
        sigaction((int)sig, &sa, NULL);
    }
}

/* Counts what the call that just succeeded ran, when the transport can say. */
static void note_call(struct worker *w)
{
    rg_algo a;
    int rails;
    if (w->h && w->tp.has_last_call && rg_tp_last_call(&w->tp, w->h, &a, &rails) == RG_OK)
        w->calls[a][rails]++;
}

/* "calls ring/2:3 mesh/1:2": the report's word on what really ran (nothing when unknown). */
static void say_calls(struct worker *w)
{
    static const char *const names[RG_ALGO_COUNT] = {"auto", "ring", "mesh"};
    char buf[512];
    size_t n = 0;
    for (int a = 0; a < RG_ALGO_COUNT; a++)
        for (int r = 0; r <= RG_MAX_RAILS; r++)
            if (w->calls[a][r] && n + 32 < sizeof(buf))
                n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %s/%d:%u", names[a], r,
                                      w->calls[a][r]);
    if (n)
        say(w, "calls%s", buf);
}

/* Tells the shim (when it is there) which step the program is in. */
static void phase(struct worker *w, int step, int rep)
{
    if (w->set_phase)
        w->set_phase(step, rep);
}

/* Waits for the runner's go byte: 0, or -1 at the deadline or when the runner went away. */
static int wait_go(int fd, double deadline_s)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        double left =
            deadline_s - (double)(t.tv_sec - t0.tv_sec) - (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        char g;
        ssize_t k = read(fd, &g, 1);
        if (k < 0 && errno == EINTR)
            continue;
        close(fd);
        return k == 1 && g == 'g' ? 0 : -1;
    }
}

/*
 * Fail-stop: once a call has returned an error, the same call again must fail too, and within
 * the timeout. A transport that carries on after a failure (its communicator not poisoned)
 * either returns success here, with whatever data, or keeps the caller waiting; a "notfailstop"
 * line says which. create and destroy are not repeated: a second init is a new communicator.
 * The repeat runs in a thread of its own, so a call that never returns is named as such at
 * the bound instead of running into the runner's deadline.
 */
struct repeat {
    struct worker *w;
    const rg_sc_op *op;
    const rg_data_key *k;
    int rc;
    char err[512];
};

static void *repeat_step(void *arg)
{
    struct repeat *r = arg;
    r->rc = run_step(r->w, r->op, r->k, r->err, sizeof(r->err));
    return NULL;
}

static void fail_stop(struct worker *w, const rg_sc_op *op, const rg_data_key *k)
{
    static struct repeat r;
    struct timespec t0, t1, until;
    pthread_t t;
    if (op->kind == RG_SC_CREATE || op->kind == RG_SC_DESTROY || !w->h)
        return;
    /* The transport's own deadline, with room for a slow machine; no timed test hides here:
     * only a wait that plainly outlives the deadline is called slow. */
    double bound = w->sc->timeout_s * 1.5 + 1.0;
    r = (struct repeat){.w = w, .op = op, .k = k, .rc = 1};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)bound;
    until.tv_nsec += (long)((bound - (double)(time_t)bound) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    if (pthread_create(&t, NULL, repeat_step, &r) != 0)
        return;
    if (pthread_timedjoin_np(t, NULL, &until) != 0) {
        say(w,
            "notfailstop the step, repeated after its error, had not returned after %.1f s "
            "(timeout %.1f s)",
            bound, w->sc->timeout_s);
        /* The transport is still inside the call: neither finalize nor exit's destructors
         * may run beside it. The shim writes its counts now, then the rank ends here. */
        const struct rg_fi_control_v1 *fi = rg_fi_control();
        if (fi && fi->summary)
            fi->summary();
        _exit(0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    release(w, &w->fresh, false, NULL, 0);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (r.rc == 0 || r.rc == 2)
        say(w, "notfailstop the step, repeated after its error, returned success in %.3f s%s", dt,
            r.rc == 2 ? " (with wrong data)" : "");
}

int rg_worker_main(const rg_worker_args *wa)
{
    static rg_scenario sc;
    struct worker w = {.sc = &sc, .fd = wa->status_fd, .rank = wa->rank};
    char err[1024] = "";

    bt_install(wa->backtrace_file);
    if (rg_scenario_load(wa->scenario, &sc, err, sizeof(err)) != 0) {
        say(&w, "verdict error %s", err);
        return 3;
    }
    if (wa->rank < 0 || wa->rank >= sc.ranks) {
        say(&w, "verdict error rank %d outside 0..%d", wa->rank, sc.ranks - 1);
        return 3;
    }
    if (rg_tp_open(&w.tp, wa->transport, err, sizeof(err)) != 0) {
        say(&w, "verdict error %s", err);
        return 3;
    }
    w.args = (rg_plugin_args){.size = sizeof(rg_plugin_args),
                              .rank = wa->rank,
                              .nranks = sc.ranks,
                              .coordinator = wa->coordinator,
                              .devices_file = wa->devices_file,
                              .qp_type = sc.qp,
                              .algo = sc.algo,
                              .timeout_s = sc.timeout_s};
    /* Ranks start as fast as exec and the loader let them, which on a loaded host or in an
     * emulator can differ by seconds: the runner releases them together, so the transport's
     * own timeout measures the transport, not the launch. */
    say(&w, "ready");
    if (wa->go_fd >= 0 && wait_go(wa->go_fd, sc.deadline_s) != 0) {
        say(&w, "verdict error the runner never said go (within the %.0f s deadline)",
            sc.deadline_s);
        return 3;
    }
    /* The shim's phases follow the program, so step= rules (and the sweep's anchored points)
     * count within a step; finalize is the step after the last. */
    const struct rg_fi_control_v1 *fi = rg_fi_control();
    if (fi && fi->size >= offsetof(struct rg_fi_control_v1, set_phase) + sizeof(fi->set_phase))
        w.set_phase = fi->set_phase;
    phase(&w, FI_PHASE_INIT, 0);
    say(&w, "step -1 0 init");
    /* What the transport declares it cannot do is skipped and reported, never run. */
    if (rg_tp_lacks_scenario(&w.tp, &sc, err, sizeof(err))) {
        say(&w, "verdict unsupported -1 0 %s: %s", w.tp.name, err);
        return 0;
    }
    fds_open(&w.fds);
    int ist = rg_tp_init(&w.tp, &w.args, &w.h, err, sizeof(err));
    if (ist) {
        char detail[sizeof(err) + 64];
        say_error(&w, detail, sizeof(detail), ist, err);
        if (ist != RG_ERR_UNSUPPORTED)
            say_status(&w);
        say(&w, "verdict %s -1 0 init: %s", ist == RG_ERR_UNSUPPORTED ? "unsupported" : "detected",
            detail);
        fds_leaked(&w); /* a failed init frees what it made, too */
        return 0;
    }
    char first_err[sizeof(err) + 32] = ""; /* a recovering transport's first error */
    int first_status = 0;
    for (int i = 0; i < sc.nops; i++) {
        const rg_sc_op *op = &sc.ops[i];
        char label[160];
        op_label(op, label, sizeof(label));
        if (rg_tp_lacks_step(&w.tp, op, err, sizeof(err))) {
            say(&w, "unsupported %d 0 %s: %s", i, label, err);
            continue;
        }
        for (int rep = 0; rep < op->repeat; rep++) {
            rg_data_key k = {.seed = wa->seed_set ? wa->seed : sc.seed,
                             .step = (uint32_t)i,
                             .rep = (uint32_t)rep,
                             .values = (rg_values)op->values,
                             .nranks = sc.ranks};
            phase(&w, i, rep);
            say(&w, "step %d %d %s", i, rep, label);
            w.step = i;
            w.rep = rep;
            w.status = 0;
            int rc = run_step(&w, op, &k, err, sizeof(err));
            if (rc == 3) {
                /* The transport said so at the call: the step's other repetitions go too. */
                say(&w, "unsupported %d %d %s: %s", i, rep, label, err);
                if (op->kind == RG_SC_CREATE)
                    i = skip_rest(&w, i);
                break;
            }
            if (rc == 0) {
                note_call(&w);
                /* The step before this one had a whole step to show a late read or write. */
                rc = release(&w, &w.held, true, err, sizeof(err));
                w.held = w.fresh;
                memset(&w.fresh, 0, sizeof(w.fresh));
            }
            if (rc == 0)
                continue;
            if (rc == 1 && (w.tp.caps.flags & RG_CAP_RECOVERS)) {
                /* A transport that declares it recovers is judged on what it does next: its
                 * first error is kept, the program goes on, and every later result is still
                 * checked (no fail-stop repeat: carrying on is what it promised). */
                if (!first_err[0]) {
                    first_status = w.status;
                    snprintf(first_err, sizeof(first_err), "%d %d %s", i, rep, err);
                    fprintf(stderr,
                            "railguard worker: the transport declares RG_CAP_RECOVERS: going on "
                            "after step %d's error: %s\n",
                            i, err);
                }
                continue;
            }
            release(&w, &w.fresh, false, NULL, 0);
            release(&w, &w.held, false, NULL, 0);
            /* The runner already knows the step from its "step" line. */
            if (rc == 1) {
                say_status(&w);
                say(&w, "verdict detected %d %d %s", i, rep, err);
                fail_stop(&w, op, &k);
            } else if (rc == 2)
                say(&w, "verdict corrupt %d %d %s", i, rep, err);
            else
                say(&w, "verdict error %s: %s", label, err);
            say_calls(&w);
            if (w.h) {
                rg_tp_finalize(&w.tp, w.h);
                fds_leaked(&w);
            }
            return rc < 0 ? 3 : 0;
        }
    }
    phase(&w, sc.nops, 0);
    say(&w, "step %d 0 finalize", sc.nops);
    w.status = 0;
    int rc = release(&w, &w.held, true, err, sizeof(err));
    if (rc) {
        say(&w, "verdict %s %d 0 %s", rc == 2 ? "corrupt" : "detected", sc.nops, err);
        if (w.h) {
            rg_tp_finalize(&w.tp, w.h);
            fds_leaked(&w);
        }
        return 0;
    }
    say_calls(&w);
    int fst = w.h ? rg_tp_finalize(&w.tp, w.h) : 0;
    if (fst) {
        say_error(&w, err, sizeof(err), fst, "finalize failed");
        say_status(&w);
        say(&w, "verdict detected %d 0 %s", sc.nops, err);
        fds_leaked(&w);
        return 0;
    }
    phase(&w, FI_PHASE_ANY, 0); /* finalize's phase ends: the shim writes its counts */
    fds_leaked(&w);
    if (first_err[0]) {
        w.status = first_status;
        say_status(&w);
        say(&w, "verdict detected %s", first_err);
    } else
        say(&w, "verdict ok");
    return 0;
}

/* `railguard worker OPTIONS`, as run starts it (or as its fork server hands a rank over). */
int rg_worker_cli(int argc, char **argv)
{
    rg_worker_args a = {.rank = -1, .status_fd = -1, .go_fd = -1};
    for (int i = 2; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v) {
            fprintf(stderr, "railguard worker: %s needs a value\n", k);
            return 2;
        }
        errno = 0;
        if (!strcmp(k, "--scenario")) {
            a.scenario = v;
        } else if (!strcmp(k, "--rank")) {
            a.rank = (int)strtol(v, &end, 10);
        } else if (!strcmp(k, "--coordinator")) {
            a.coordinator = v;
        } else if (!strcmp(k, "--devices-file")) {
            a.devices_file = v;
        } else if (!strcmp(k, "--transport")) {
            a.transport = v;
        } else if (!strcmp(k, "--backtrace-file")) {
            a.backtrace_file = v;
        } else if (!strcmp(k, "--status-fd")) {
            a.status_fd = (int)strtol(v, &end, 10);
        } else if (!strcmp(k, "--go-fd")) {
            a.go_fd = (int)strtol(v, &end, 10);
        } else if (!strcmp(k, "--seed")) {
            a.seed = strtoull(v, &end, 0);
            a.seed_set = true;
        } else {
            fprintf(stderr, "railguard worker: unknown option '%s'\n", k);
            return 2;
        }
        if (errno || (end && *end)) {
            fprintf(stderr, "railguard worker: %s: not a number '%s'\n", k, v);
            return 2;
        }
    }
    if (!a.scenario || a.rank < 0 || !a.coordinator || !a.devices_file || !a.transport ||
        a.status_fd < 0) {
        fprintf(stderr, "railguard worker: needs --scenario --rank --coordinator --devices-file "
                        "--transport --status-fd (it is started by 'railguard run')\n");
        return 2;
    }
    return rg_worker_main(&a);
}
