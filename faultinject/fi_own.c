/* SPDX-License-Identifier: MIT */
/*
 * Buffer ownership: a verbs sanitizer. From a post until its completion is polled the memory a
 * work request names is the NIC's, not the program's:
 *   - a send's (or RDMA write's) gather list is copied at post and compared when the request
 *     retires (an unsignaled one, when a later completion on its queue retires it), before the
 *     program sees the completion. A change is a buffer rewritten in flight: on rxe loopback
 *     the payload went out inside post_send, so the data check alone never sees it, while real
 *     hardware may read the memory late;
 *   - a receive's (or RDMA read's) scatter list is filled with a poison pattern at post: its
 *     contents are undefined until the completion, so a program that reads it early gets
 *     poison into its results. At a receive's completion, bytes past byte_len that no longer
 *     hold poison were written by the program into memory the NIC owned. Those that still do
 *     get back what they held at post: no NIC writes past the message, so a program may find
 *     there what it left before the post. A receive's scatter list is copied at post for
 *     that, under the same budget as the sends' copies. Nor is a UD receive poisoned past the
 *     most a NIC can write into it, a GRH and one MTU: UCX's UD receive buffers run past that
 *     into memory UCX uses while they are posted (by its crash in ucs_mpool_put, reading a
 *     non-canonical pointer: poison read as the next buffer's pool header), a CRASH that was
 *     the sanitizer's, never a bug a NIC could show. Bisected in the guest: only the receive
 *     half crashed it, and the UD bound cured it where giving the slack back alone did not.
 * Inline sends are copied by the provider at post and are exempt. Only memory inside an MR
 * that is still registered is read (the MR table's lock is held across the read, and dereg_mr
 * takes it first), so a program that frees a buffer after deregistering it is never touched.
 * What the sanitizer cannot follow (an SGE outside any MR it saw, a DMA-buf MR, requests made
 * through ibv_qp_ex) is counted as not sanitized, never as checked.
 */
#include "fi_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FI_OWN_MRS 4096                /* power of two: the MR table's slots */
#define FI_OWN_COPY_MAX (256ull << 20) /* bytes of send copies held at once, at most */
#define FI_POISON 0xa5

struct own_mr {
    const void *ctx; /* NULL: empty slot */
    uint32_t lkey;
    uint64_t va, iova, len;
    uint64_t gen;
};

static struct own_mr g_mr[FI_OWN_MRS];
static pthread_rwlock_t g_mr_lock = PTHREAD_RWLOCK_INITIALIZER;
static uint64_t g_mr_gen;
static _Atomic uint64_t g_copy_bytes;

static struct {
    _Atomic uint64_t sends, recvs, rewritten, answered, unsanitized, repoisoned;
} g_own;

struct fi_own_sge {
    uint64_t va; /* where the program's bytes are */
    uint32_t len;
    uint32_t lkey;
    uint64_t gen; /* the MR's registration it was read under */
};

struct fi_own {
    const void *ctx;
    bool recv; /* a receive or an RDMA read: poisoned at post */
    bool read; /* an RDMA read: byte_len says nothing of its buffer, so no check past it */
    int nsge;
    uint32_t total;
    struct fi_own_sge *sge;
    uint8_t *copy; /* the list's bytes at post, in order (sends, receives; not reads) */
    bool ud;       /* a UD send: dqpn is its destination, heard what its QP had heard */
    uint32_t dqpn;
    uint64_t heard;
    struct fi_own *next; /* on a list of records retired unseen, checked after the ring's lock */
    uint64_t wr_id;      /* while on that list */
};

static uint32_t mr_hash(const void *ctx, uint32_t lkey)
{
    uint64_t h = (uint64_t)(uintptr_t)ctx * 0x9e3779b97f4a7c15ull ^ lkey * 0xff51afd7ed558ccdull;
    return (uint32_t)(h >> 40) & (FI_OWN_MRS - 1);
}

static struct own_mr *mr_find(const void *ctx, uint32_t lkey)
{
    uint32_t h = mr_hash(ctx, lkey);
    for (uint32_t i = 0; i < FI_OWN_MRS; i++) {
        struct own_mr *m = &g_mr[(h + i) & (FI_OWN_MRS - 1)];
        if (!m->ctx)
            return NULL;
        if (m->ctx == ctx && m->lkey == lkey && m->len)
            return m;
    }
    return NULL;
}

void fi_own_mr_add(const void *ctx, uint32_t lkey, uint64_t va, uint64_t iova, uint64_t len)
{
    pthread_rwlock_wrlock(&g_mr_lock);
    uint32_t h = mr_hash(ctx, lkey);
    struct own_mr *free_slot = NULL;
    for (uint32_t i = 0; i < FI_OWN_MRS; i++) {
        struct own_mr *m = &g_mr[(h + i) & (FI_OWN_MRS - 1)];
        if (m->ctx && m->ctx == ctx && m->lkey == lkey) {
            free_slot = m; /* an lkey reused after its dereg: take its slot */
            break;
        }
        if (!m->ctx || !m->len) {
            if (!free_slot)
                free_slot = m;
            if (!m->ctx)
                break;
        }
    }
    if (free_slot)
        *free_slot = (struct own_mr){ctx, lkey, va, iova, len, ++g_mr_gen};
    pthread_rwlock_unlock(&g_mr_lock);
    /* A full table leaves this MR unknown: its buffers are counted as not sanitized. */
}

void fi_own_mr_del(const void *ctx, uint32_t lkey)
{
    pthread_rwlock_wrlock(&g_mr_lock);
    struct own_mr *m = mr_find(ctx, lkey);
    if (m)
        m->len = 0; /* a tombstone: probes go on past it */
    pthread_rwlock_unlock(&g_mr_lock);
}

/* The program's address of an SGE, or 0 when no registered MR holds all of it. Read lock held. */
static uint64_t sge_va(const void *ctx, const struct ibv_sge *s, uint64_t *gen)
{
    const struct own_mr *m = mr_find(ctx, s->lkey);
    if (!m || s->addr < m->iova || s->length > m->len || s->addr - m->iova > m->len - s->length)
        return 0;
    *gen = m->gen;
    return m->va + (s->addr - m->iova);
}

/* keep: copy the list's bytes at post (a send's to compare, a receive's to give back);
 * room: a receive's bytes a NIC can write (0: all), the only ones poisoned and checked */
static struct fi_own *own_new(const void *ctx, bool recv, bool keep, const struct ibv_sge *sg,
                              int n, uint32_t room)
{
    if (n <= 0)
        return NULL;
    struct fi_own *o = calloc(1, sizeof(*o));
    struct fi_own_sge *s = calloc((size_t)n, sizeof(*s));
    if (!o || !s) {
        free(o);
        free(s);
        return NULL;
    }
    o->ctx = ctx;
    o->recv = recv;
    o->nsge = n;
    o->sge = s;
    pthread_rwlock_rdlock(&g_mr_lock);
    uint64_t left = room ? room : UINT64_MAX;
    for (int i = 0; i < n; i++) {
        /* Past room the list is not the NIC's to write: not poisoned, copied or checked. */
        s[i].len = sg[i].length < left ? sg[i].length : (uint32_t)left;
        left -= s[i].len;
        s[i].lkey = sg[i].lkey;
        s[i].va = sge_va(ctx, &sg[i], &s[i].gen);
        if (!s[i].va && sg[i].length) {
            pthread_rwlock_unlock(&g_mr_lock);
            free(s);
            free(o);
            return NULL;
        }
        o->total += s[i].len;
    }
    if (keep && o->total) {
        if (atomic_fetch_add(&g_copy_bytes, o->total) + o->total > FI_OWN_COPY_MAX ||
            !(o->copy = malloc(o->total))) {
            atomic_fetch_sub(&g_copy_bytes, o->total);
            pthread_rwlock_unlock(&g_mr_lock);
            free(s);
            free(o);
            return NULL;
        }
        for (int i = 0, off = 0; i < n; off += (int)s[i].len, i++)
            memcpy(o->copy + off, (const void *)(uintptr_t)s[i].va, s[i].len);
    }
    if (recv)
        for (int i = 0; i < n; i++)
            if (s[i].len)
                memset((void *)(uintptr_t)s[i].va, FI_POISON, s[i].len);
    pthread_rwlock_unlock(&g_mr_lock);
    return o;
}

/* A record made counts as checked; one that could not be (an SGE outside every MR, no
 * memory, the copy budget spent) as not sanitized. */
static struct fi_own *counted(struct fi_own *o, _Atomic uint64_t *made, int nsge)
{
    if (o)
        atomic_fetch_add(made, 1);
    else if (nsge > 0)
        atomic_fetch_add(&g_own.unsanitized, 1);
    return o;
}

void fi_heard_note(struct fi_heard *h, uint32_t src_qp)
{
    uint64_t s = atomic_fetch_add(&h->serial, 1) + 1;
    src_qp &= 0xffffff;
    atomic_store(&h->from[src_qp % FI_HEARD], s << 24 | src_qp);
}

/* Whether h heard from qpn after serial `since`. */
static bool heard_since(const struct fi_heard *h, uint32_t qpn, uint64_t since)
{
    uint64_t v = atomic_load(&h->from[(qpn & 0xffffff) % FI_HEARD]);
    return v && (v & 0xffffff) == (qpn & 0xffffff) && v >> 24 > since;
}

struct fi_own *fi_own_send(const void *ctx, const struct ibv_send_wr *w, const struct fi_heard *ud)
{
    if (w->send_flags & IBV_SEND_INLINE)
        return NULL; /* the provider copied it at post */
    switch (w->opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_SEND_WITH_INV:
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        break;
    case IBV_WR_RDMA_READ: {
        struct fi_own *o =
            counted(own_new(ctx, true, false, w->sg_list, w->num_sge, 0), &g_own.recvs, w->num_sge);
        if (o)
            o->read = true;
        return o;
    }
    default:
        return NULL; /* atomics and the rest: 8 bytes the NIC writes, nothing to compare */
    }
    struct fi_own *o =
        counted(own_new(ctx, false, true, w->sg_list, w->num_sge, 0), &g_own.sends, w->num_sge);
    if (o && ud && (w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM)) {
        o->ud = true;
        o->dqpn = w->wr.ud.remote_qpn;
        o->heard = atomic_load(&ud->serial);
    }
    return o;
}

struct fi_own *fi_own_recv(const void *ctx, const struct ibv_recv_wr *w, uint32_t room)
{
    return counted(own_new(ctx, true, true, w->sg_list, w->num_sge, room), &g_own.recvs,
                   w->num_sge);
}

void fi_own_unsanitized(uint64_t n)
{
    atomic_fetch_add(&g_own.unsanitized, n);
}

void fi_own_free(struct fi_own *o)
{
    if (!o)
        return;
    if (o->copy)
        atomic_fetch_sub(&g_copy_bytes, o->total);
    free(o->copy);
    free(o->sge);
    free(o);
}

/* SGE i's bytes when its MR is still the registration it was read under, else NULL (tracking
 * ended at dereg_mr). Read lock held. */
static uint8_t *sge_live(const struct fi_own *o, int i)
{
    const struct fi_own_sge *s = &o->sge[i];
    uint64_t gen;
    struct ibv_sge probe = {.lkey = s->lkey, .length = s->len};
    const struct own_mr *m = s->len ? mr_find(o->ctx, s->lkey) : NULL;
    if (!m || m->gen != s->gen)
        return NULL;
    probe.addr = m->iova + (s->va - m->va);
    if (sge_va(o->ctx, &probe, &gen) != s->va)
        return NULL;
    return (uint8_t *)(uintptr_t)s->va;
}

/* The first byte of p[from, len) that is not poison, or -1: eight at a time, since a slot is
 * tens of KiB past a short message and every receive's completion reads it. */
static int64_t unpoisoned_at(const uint8_t *p, uint64_t from, uint64_t len)
{
    const uint64_t w = 0x0101010101010101ull * FI_POISON;
    uint64_t b = from;
    for (uint64_t x; b + 8 <= len; b += 8) {
        memcpy(&x, p + b, 8);
        if (x != w)
            break;
    }
    for (; b < len; b++)
        if (p[b] != FI_POISON)
            return (int64_t)b;
    return -1;
}

/* The shim's last flips (fi_own_flipped): corrupt fires a few times a run at most. */
#define FI_OWN_FLIPS 16
static struct {
    uint64_t va;
    uint8_t mask;
} g_flip[FI_OWN_FLIPS];
static unsigned g_nflip;
static pthread_mutex_t g_flip_lock = PTHREAD_MUTEX_INITIALIZER;

void fi_own_flipped(uint64_t va, uint8_t mask)
{
    pthread_mutex_lock(&g_flip_lock);
    unsigned i = g_nflip++ % FI_OWN_FLIPS;
    g_flip[i].va = va;
    g_flip[i].mask = mask;
    pthread_mutex_unlock(&g_flip_lock);
}

/* Whether the byte at p differs from `was` by exactly a flip the shim made there. */
static bool shim_flip(const uint8_t *p, uint8_t was)
{
    bool mine = false;
    pthread_mutex_lock(&g_flip_lock);
    for (unsigned i = 0; i < FI_OWN_FLIPS && i < g_nflip && !mine; i++)
        mine = g_flip[i].va == (uint64_t)(uintptr_t)p && (uint8_t)(*p ^ was) == g_flip[i].mask;
    pthread_mutex_unlock(&g_flip_lock);
    return mine;
}

/*
 * The first byte that changed, as an offset into the request's gather list, or -1. A send: any
 * byte against its copy, but for a bit the shim's corrupt flipped there. A receive that completed
 * with byte_len bytes (success): any byte past them that is no longer poison.
 */
static int64_t own_diff(const struct fi_own *o, bool success, uint32_t byte_len)
{
    int64_t at = -1;
    uint64_t off = 0;
    pthread_rwlock_rdlock(&g_mr_lock);
    for (int i = 0; i < o->nsge && at < 0; off += o->sge[i].len, i++) {
        const uint8_t *p = sge_live(o, i);
        uint32_t len = o->sge[i].len;
        if (!p)
            continue;
        if (!o->recv) {
            if (memcmp(p, o->copy + off, len) != 0)
                for (uint32_t b = 0; b < len && at < 0; b++)
                    if (p[b] != o->copy[off + b] && !shim_flip(p + b, o->copy[off + b]))
                        at = (int64_t)(off + b);
        } else if (success) {
            int64_t b = unpoisoned_at(p, byte_len > off ? byte_len - off : 0, len);
            if (b >= 0)
                at = (int64_t)off + b;
        }
    }
    pthread_rwlock_unlock(&g_mr_lock);
    return at;
}

/*
 * A receive (or RDMA read) that completed in error: its buffer's contents are undefined, so
 * they become poison again before the program sees the completion. Where the shim made the
 * error up, or the NIC had written the data before failing, the bytes would otherwise still be
 * right, and a program that ignores the status would pass by luck (mlx#3152's class).
 */
static void own_repoison(struct fi_own *o)
{
    pthread_rwlock_rdlock(&g_mr_lock);
    for (int i = 0; i < o->nsge; i++) {
        uint8_t *p = sge_live(o, i);
        if (p)
            memset(p, FI_POISON, o->sge[i].len);
    }
    pthread_rwlock_unlock(&g_mr_lock);
    atomic_fetch_add(&g_own.repoisoned, 1);
}

/* A receive that completed with byte_len bytes: each byte past them that still holds poison
 * (the NIC did not write it, nor the program) gets back what it held at post. */
static void own_restore(struct fi_own *o, uint32_t byte_len)
{
    const uint64_t w = 0x0101010101010101ull * FI_POISON;
    uint64_t off = 0;
    pthread_rwlock_rdlock(&g_mr_lock);
    for (int i = 0; i < o->nsge; off += o->sge[i].len, i++) {
        uint8_t *p = sge_live(o, i);
        uint64_t len = o->sge[i].len, b = byte_len > off ? byte_len - off : 0;
        if (!p || b >= len)
            continue;
        const uint8_t *c = o->copy + off;
        for (uint64_t x; b + 8 <= len; b += 8) {
            memcpy(&x, p + b, 8);
            if (x == w)
                memcpy(p + b, c + b, 8);
            else
                for (uint64_t k = b; k < b + 8; k++)
                    if (p[k] == FI_POISON)
                        p[k] = c[k];
        }
        for (; b < len; b++)
            if (p[b] == FI_POISON)
                p[b] = c[b];
    }
    pthread_rwlock_unlock(&g_mr_lock);
}

void fi_own_defer(struct fi_own ***tail, struct fi_own *o, uint64_t wr_id)
{
    if (!o)
        return;
    o->wr_id = wr_id;
    o->next = NULL;
    **tail = o;
    *tail = &o->next;
}

void fi_own_check_list(struct fi_own *list, uint32_t qpn, const struct fi_heard *ud)
{
    while (list) {
        struct fi_own *next = list->next;
        fi_own_check(list, qpn, ud, list->wr_id, true, 0);
        fi_own_free(list);
        list = next;
    }
}

bool fi_own_check(struct fi_own *o, uint32_t qpn, const struct fi_heard *ud, uint64_t wr_id,
                  bool success, uint32_t byte_len)
{
    if (o && o->recv && !success)
        own_repoison(o);
    if (!o || (o->recv && (!success || o->read)))
        return false;
    int64_t at = own_diff(o, success, byte_len);
    if (o->recv && o->copy)
        own_restore(o, byte_len);
    if (at < 0)
        return false;
    bool answered = o->ud && ud && heard_since(ud, o->dqpn, o->heard);
    atomic_fetch_add(answered ? &g_own.answered : &g_own.rewritten, 1);
    FI_EV(ownership, .has = answered ? RG_EVH(ownership, answered) : 0,
          .op = o->recv ? "recv" : "send", .qp = qpn, .wr_id = wr_id, .offset = at,
          .bytes = o->total, .answered = answered);
    return true;
}

void fi_own_counts(struct fi_own_tally *t)
{
    t->sends = atomic_load(&g_own.sends);
    t->recvs = atomic_load(&g_own.recvs);
    t->rewritten = atomic_load(&g_own.rewritten);
    t->answered = atomic_load(&g_own.answered);
    t->unsanitized = atomic_load(&g_own.unsanitized);
    t->repoisoned = atomic_load(&g_own.repoisoned);
}
