/* SPDX-License-Identifier: MIT */
/* One program step of a rank (rg_worker.h): its guarded buffers, the call through the plugin
 * ABI, the output checked bit-exact against rg_data, guard bands, send buffers and the last
 * step's held buffers, and what the rank says of it. */
#include "rg_worker.h"
#include "rg_faultinject.h"

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

/* --- file descriptors the transport leaves open -------------------------------------------- */
void worker_fds_open(struct fdset *s)
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

/* A status line, stamped (rg_status.c owns the grammar, reader and writer both). */
void worker_say(struct worker *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rg_status_say(w->fd, fmt, ap);
    va_end(ap);
}

/* The next descriptor from fd on that is open in now and was not before init (-1: none), and
 * what it is ("socket:[123]", "/dev/infiniband/uverbs0"; "?" when it cannot be read). */
static int next_new_fd(const struct worker *w, const struct fdset *now, int fd, char *what,
                       size_t len)
{
    for (; fd < FD_BITS; fd++) {
        uint64_t m = 1ull << (fd % 64);
        if (!(now->bit[fd / 64] & m) || (w->fds.bit[fd / 64] & m))
            continue;
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t k = readlink(link, what, len - 1);
        snprintf(what + (k > 0 ? k : 0), len - (size_t)(k > 0 ? k : 0), "%s", k > 0 ? "" : "?");
        return fd;
    }
    return -1;
}

int worker_fds_sockets(struct worker *w)
{
    struct fdset now;
    char what[200];
    int n = 0;
    worker_fds_open(&now);
    for (int fd = 0; (fd = next_new_fd(w, &now, fd, what, sizeof(what))) >= 0; fd++)
        n += !strncmp(what, "socket:", 7);
    return n;
}

/*
 * After finalize: every descriptor open now that was not open before init is the transport's
 * leftover (its device, its side channel, an event channel): a "leak" line names each.
 */
void worker_fds_leaked(struct worker *w)
{
    struct fdset now;
    char list[700] = "";
    size_t used = 0;
    int n = 0;
    char what[200];
    worker_fds_open(&now);
    for (int fd = 0; (fd = next_new_fd(w, &now, fd, what, sizeof(what))) >= 0; fd++) {
        n++;
        if (used + 40 < sizeof(list))
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d (%s)",
                                     used ? ", " : "", fd, what);
    }
    if (n)
        worker_say(
            w, "leak %d file descriptor(s) the transport opened are still open after finalize: %s",
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

const char *worker_op_label(const rg_sc_op *op, char *buf, size_t len)
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
int worker_release(struct worker *w, struct held *hd, bool check, char *detail, size_t dlen)
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
void worker_say_error(struct worker *w, char *detail, size_t dlen, int st, const char *msg)
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
int worker_skip_rest(struct worker *w, int i)
{
    for (int j = i + 1; j < w->sc->nops; j++) {
        char label[160];
        worker_op_label(&w->sc->ops[j], label, sizeof(label));
        worker_say(w, "unsupported %d 0 %s: no communicator (step %d's create was not supported)",
                   j, label, i);
    }
    return w->sc->nops - 1;
}

/* Before a detected verdict: the failed call's status ("status -8"), or "status v1" for a
 * transport whose ABI carries none; nothing when no call failed (a check of ours did). */
void worker_say_status(struct worker *w)
{
    if (w->tp.abi == 1)
        worker_say(w, "status v1");
    else if (w->status)
        worker_say(w, "status %d", w->status);
}

/*
 * Runs one step once. Returns 0 ok, 1 detected (message in detail), 2 corrupt, 3 unsupported
 * (the call returned RG_ERR_UNSUPPORTED: nothing ran, the handle goes on), -1 error.
 */
/* One collective step's state: its buffers, the reference, the call's status and the check's. */
struct step {
    struct worker *w;
    const rg_sc_op *op;
    const rg_data_key *k;
    char *detail;
    size_t dlen;
    const rg_tp *p;
    int n, r;
    size_t sz, cnt;
    struct gbuf a, b, want;
    uint8_t *copy;
    void *m[2];
    int err, rc;
};

/* A transport call, with the call's buffers registered; an error gives them back at once,
 * success hands them to the worker's hold (see struct held). */
#define CALL(s, expr)                                                                              \
    do {                                                                                           \
        if (!((s)->err = zc_on((s)->w, &(s)->a, &(s)->b, (s)->m)))                                 \
            (s)->err = (expr);                                                                     \
        if ((s)->err)                                                                              \
            zc_off((s)->w, (s)->m, (s)->err);                                                      \
    } while (0)

/* Each step below: its buffers made and filled, its call, its output checked against the
 * reference (rc -1 on a mismatch, with detail). -1 when a buffer could not be had. */
static int step_all_reduce(struct step *s)
{
    const rg_sc_op *op = s->op;
    size_t bytes = s->cnt * s->sz;
    if (gbuf_alloc(&s->a, bytes) || gbuf_alloc(&s->want, bytes))
        return -1;
    rg_data_fill(s->a.data, s->cnt, op->dtype, (int)op->redop, s->k, s->r, 0);
    if (!op->inplace) {
        if (gbuf_alloc(&s->b, bytes) || !(s->copy = malloc(bytes)))
            return -1;
        memcpy(s->copy, s->a.data, bytes);
    }
    uint8_t *out = op->inplace ? s->a.data : s->b.data;
    CALL(s, rg_tp_all_reduce(s->p, s->w->h, s->a.data, out, s->cnt, op->dtype, op->redop));
    if (s->err)
        return 0;
    rg_data_expect_reduce(s->want.data, s->cnt, op->dtype, op->redop, s->k, s->n, 0);
    s->rc = check(out, s->want.data, s->cnt, op->dtype, true, "result", 0, s->detail, s->dlen);
    if (!s->rc && s->copy)
        s->rc = check(s->a.data, s->copy, s->cnt, op->dtype, false, "the send buffer changed:", 0,
                      s->detail, s->dlen);
    return 0;
}

static int step_all_gather(struct step *s)
{
    const rg_sc_op *op = s->op;
    size_t bytes = s->cnt * s->sz;
    if (gbuf_alloc(&s->b, (size_t)s->n * bytes) || gbuf_alloc(&s->want, (size_t)s->n * bytes))
        return -1;
    for (int q = 0; q < s->n; q++)
        rg_data_fill(s->want.data + (size_t)q * bytes, s->cnt, op->dtype, -1, s->k, q, 0);
    uint8_t *mine = s->want.data + (size_t)s->r * bytes;
    if (op->inplace) {
        memcpy(s->b.data + (size_t)s->r * bytes, mine, bytes);
        CALL(s, rg_tp_all_gather(s->p, s->w->h, s->b.data + (size_t)s->r * bytes, s->b.data, s->cnt,
                                 op->dtype));
    } else {
        if (gbuf_alloc(&s->a, bytes))
            return -1;
        memcpy(s->a.data, mine, bytes);
        CALL(s, rg_tp_all_gather(s->p, s->w->h, s->a.data, s->b.data, s->cnt, op->dtype));
        if (!s->err)
            s->rc = check(s->a.data, mine, s->cnt, op->dtype, false, "the send buffer changed:", 0,
                          s->detail, s->dlen);
    }
    if (!s->err && !s->rc)
        s->rc = check(s->b.data, s->want.data, (size_t)s->n * s->cnt, op->dtype, false, "gathered",
                      0, s->detail, s->dlen);
    return 0;
}

static int step_reduce_scatter(struct step *s)
{
    const rg_sc_op *op = s->op;
    size_t bytes = s->cnt * s->sz, all = (size_t)s->n * bytes, at = (size_t)s->r * s->cnt;
    if (gbuf_alloc(&s->a, all) || gbuf_alloc(&s->want, bytes))
        return -1;
    rg_data_fill(s->a.data, (size_t)s->n * s->cnt, op->dtype, (int)op->redop, s->k, s->r, 0);
    if (op->inplace) {
        CALL(s, rg_tp_reduce_scatter(s->p, s->w->h, s->a.data, s->a.data + at * s->sz, s->cnt,
                                     op->dtype, op->redop));
    } else {
        if (gbuf_alloc(&s->b, bytes) || !(s->copy = malloc(all)))
            return -1;
        memcpy(s->copy, s->a.data, all);
        CALL(s, rg_tp_reduce_scatter(s->p, s->w->h, s->a.data, s->b.data, s->cnt, op->dtype,
                                     op->redop));
        if (!s->err)
            s->rc = check(s->a.data, s->copy, (size_t)s->n * s->cnt, op->dtype, false,
                          "the send buffer changed:", 0, s->detail, s->dlen);
    }
    if (s->err || s->rc)
        return 0;
    rg_data_expect_reduce(s->want.data, s->cnt, op->dtype, op->redop, s->k, s->n, at);
    s->rc = check(op->inplace ? s->a.data + at * s->sz : s->b.data, s->want.data, s->cnt, op->dtype,
                  true, "result", at, s->detail, s->dlen);
    return 0;
}

static int step_broadcast(struct step *s)
{
    const rg_sc_op *op = s->op;
    size_t bytes = s->cnt * s->sz;
    if (gbuf_alloc(&s->a, bytes) || gbuf_alloc(&s->want, bytes))
        return -1;
    rg_data_fill(s->want.data, s->cnt, op->dtype, -1, s->k, op->root, 0);
    if (s->r == op->root)
        memcpy(s->a.data, s->want.data, bytes);
    CALL(s, rg_tp_broadcast(s->p, s->w->h, s->a.data, s->cnt, op->dtype, op->root));
    if (!s->err)
        s->rc = check(s->a.data, s->want.data, s->cnt, op->dtype, false, "broadcast", 0, s->detail,
                      s->dlen);
    return 0;
}

static int step_sendrecv(struct step *s)
{
    const rg_sc_op *op = s->op;
    size_t bytes = s->cnt * s->sz;
    if (gbuf_alloc(&s->a, bytes) || gbuf_alloc(&s->want, bytes))
        return -1;
    rg_data_fill(s->want.data, s->cnt, op->dtype, -1, s->k, op->from, 0);
    if (s->r == op->from) {
        memcpy(s->a.data, s->want.data, bytes);
        CALL(s, rg_tp_send(s->p, s->w->h, s->a.data, s->cnt, op->dtype, op->to));
        if (!s->err)
            s->rc = check(s->a.data, s->want.data, s->cnt, op->dtype, false,
                          "the send buffer changed:", 0, s->detail, s->dlen);
    } else {
        CALL(s, rg_tp_recv(s->p, s->w->h, s->a.data, s->cnt, op->dtype, op->from));
        if (!s->err)
            s->rc = check(s->a.data, s->want.data, s->cnt, op->dtype, false, "received", 0,
                          s->detail, s->dlen);
    }
    return 0;
}
#undef CALL

/* create, destroy and barrier: no buffers. The step's status as worker_run_step returns it. */
static int step_control(struct worker *w, const rg_sc_op *op, char *detail, size_t dlen)
{
    const rg_tp *p = &w->tp;
    char msg[512];
    int err, rc;
    switch (op->kind) {
    case RG_SC_CREATE:
        if (w->h) {
            snprintf(detail, dlen, "create: the communicator exists");
            return -1;
        }
        err = rg_tp_init(&w->tp, &w->args, &w->h, msg, sizeof(msg));
        if (err)
            worker_say_error(w, detail, dlen, err, msg);
        return err == RG_ERR_UNSUPPORTED ? 3 : err ? 1 : 0;
    case RG_SC_DESTROY:
        if ((rc = worker_release(w, &w->held, true, detail, dlen)))
            return rc;
        err = w->h ? rg_tp_finalize(p, w->h) : 0;
        w->h = NULL;
        if (err) {
            worker_say_error(w, detail, dlen, err, "finalize failed");
            return 1;
        }
        return 0;
    default: /* barrier */
        if (!w->h) {
            snprintf(detail, dlen, "no communicator (destroyed and not created again)");
            return -1;
        }
        if (!(err = rg_tp_barrier(p, w->h)))
            return 0;
        worker_say_error(w, detail, dlen, err, rg_tp_last_error(p, w->h));
        return err == RG_ERR_UNSUPPORTED ? 3 : 1;
    }
}

/* The call's and the checks' verdict on the step: on success the buffers are scribbled and
 * held a step (the caller owns them again); else given back. Frees what the step made. */
static int step_finish(struct step *s)
{
    const char *broken;
    int rc = s->rc;
    if (s->err) {
        worker_say_error(s->w, s->detail, s->dlen, s->err, rg_tp_last_error(s->p, s->w->h));
        rc = s->err == RG_ERR_UNSUPPORTED ? 3 : 1;
    } else if (rc == -1) {
        rc = 2;
    } else if ((broken = s->a.base ? gbuf_broken(&s->a) : NULL) ||
               (broken = s->b.base ? gbuf_broken(&s->b) : NULL)) {
        snprintf(s->detail, s->dlen, "returned success but %s", broken);
        rc = 2;
    }
    if (rc == 0) {
        if (s->a.base)
            memset(s->a.data, RG_SCRIBBLE, s->a.len);
        if (s->b.base)
            memset(s->b.data, RG_SCRIBBLE, s->b.len);
        s->w->fresh = (struct held){s->a, s->b, {s->m[0], s->m[1]}, s->w->step, s->w->rep};
        s->a.base = s->b.base = NULL;
    } else {
        zc_off(s->w, s->m, 0);
    }
    return rc;
}

int worker_run_step(struct worker *w, const rg_sc_op *op, const rg_data_key *k, char *detail,
                    size_t dlen)
{
    if (op->kind == RG_SC_CREATE || op->kind == RG_SC_DESTROY || op->kind == RG_SC_BARRIER)
        return step_control(w, op, detail, dlen);
    if (!w->h) {
        snprintf(detail, dlen, "no communicator (destroyed and not created again)");
        return -1;
    }
    if (op->kind == RG_SC_SENDRECV && w->rank != op->from && w->rank != op->to)
        return 0;
    struct step s = {.w = w,
                     .op = op,
                     .k = k,
                     .detail = detail,
                     .dlen = dlen,
                     .p = &w->tp,
                     .n = w->sc->ranks,
                     .r = w->rank,
                     .sz = rg_data_size(op->dtype),
                     .cnt = op->count};
    int made;
    switch (op->kind) {
    case RG_SC_ALL_REDUCE:
        made = step_all_reduce(&s);
        break;
    case RG_SC_ALL_GATHER:
        made = step_all_gather(&s);
        break;
    case RG_SC_REDUCE_SCATTER:
        made = step_reduce_scatter(&s);
        break;
    case RG_SC_BROADCAST:
        made = step_broadcast(&s);
        break;
    case RG_SC_SENDRECV:
        made = step_sendrecv(&s);
        break;
    default: /* the parser admits no other */
        snprintf(detail, dlen, "unknown step kind %d", (int)op->kind);
        return -1;
    }
    int rc = made ? -1 : step_finish(&s);
    if (made)
        snprintf(detail, dlen, "out of memory for %zu elements", s.cnt);
    free(s.a.base);
    free(s.b.base);
    free(s.want.base);
    free(s.copy);
    return rc;
}
