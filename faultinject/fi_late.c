/* SPDX-License-Identifier: MIT */
/* The late fault: sends held back and posted later by a thread of the shim's (fi_shim.h). */
#include "fi_shim.h"
#include "rg_parse.h"
#include "rg_faultinject.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * The late fault: ibv_post_send returns at once and the request is posted for real D ms later
 * by the shim's own thread, so the NIC reads the program's buffer late, as real hardware may
 * (rxe on loopback reads it inside ibv_post_send, which hides every buffer-reuse bug). Every
 * later request on that QP waits behind it, so the queue keeps its order. Held requests live
 * in a fixed pool, filled on the datapath without allocating; the thread starts at the first.
 */
#define FI_LATE_MAX 256
#define FI_LATE_SGE 4

struct fi_late {
    bool used;
    uint64_t seq, due_ns;
    struct fi_qp *q;
    post_send_fn post;
    struct ibv_qp *qp;
    struct ibv_send_wr wr;
    struct ibv_sge sge[FI_LATE_SGE];
    struct fi_own *own; /* taken when the program posted: the buffer was the NIC's from then */
};

static struct fi_late g_late[FI_LATE_MAX];
static pthread_mutex_t g_late_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_late_cond;
static bool g_late_started;
static uint64_t g_late_seq;

/* Posts every held request that is due, in the order they were held; returns the next due. */
static uint64_t fi_late_post_due(uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (;;) {
        struct fi_late *e = NULL;
        for (int i = 0; i < FI_LATE_MAX; i++)
            if (g_late[i].used && g_late[i].due_ns <= now && (!e || g_late[i].seq < e->seq))
                e = &g_late[i];
        if (!e)
            break;
        struct ibv_send_wr *bad = NULL;
        int rc = fi_send_run_own(e->q, e->post, e->qp, &e->wr, &bad, e->own);
        if (rc)
            FI_EV(note, .has = RG_EVH(note, qp) | RG_EVH(note, err), .what = "late post failed",
                  .qp = e->q->qpn, .err = rc);
        e->used = false;
        atomic_fetch_sub(&e->q->late, 1);
        FI_PROG(late, -1);
    }
    for (int i = 0; i < FI_LATE_MAX; i++)
        if (g_late[i].used && g_late[i].due_ns < next)
            next = g_late[i].due_ns;
    return next;
}

static void *fi_late_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_late_lock);
    for (;;) {
        uint64_t next = fi_late_post_due(fi_now_ns());
        if (next == UINT64_MAX) {
            pthread_cond_wait(&g_late_cond, &g_late_lock);
            continue;
        }
        struct timespec ts = {.tv_sec = (time_t)(next / 1000000000u),
                              .tv_nsec = (long)(next % 1000000000u)};
        pthread_cond_timedwait(&g_late_cond, &g_late_lock, &ts);
    }
    return NULL;
}

/* Called with g_late_lock held. The thread takes no signal: the program's are the program's. */
static bool fi_late_start(void)
{
    if (g_late_started)
        return true;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_late_cond, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, NULL, fi_late_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        pthread_detach(t);
        g_late_started = true;
    }
    return g_late_started;
}

/* Holds w for `ms` from now (0: behind what the QP already holds). False: post it now. */
bool fi_late_hold(struct fi_qp *q, post_send_fn post, struct ibv_qp *qp,
                  const struct ibv_send_wr *w, uint64_t ms)
{
    bool held = false;
    if (w->num_sge < 0 || w->num_sge > FI_LATE_SGE)
        return false;
    pthread_mutex_lock(&g_late_lock);
    uint64_t due = fi_now_ns() + ms * 1000000u;
    /* Behind everything this QP holds already: its queue keeps its order. */
    for (int i = 0; i < FI_LATE_MAX; i++)
        if (g_late[i].used && g_late[i].q == q && g_late[i].due_ns > due)
            due = g_late[i].due_ns;
    for (int i = 0; i < FI_LATE_MAX && !held && fi_late_start(); i++) {
        struct fi_late *e = &g_late[i];
        if (e->used)
            continue;
        *e = (struct fi_late){.used = true,
                              .seq = ++g_late_seq,
                              .due_ns = due,
                              .q = q,
                              .post = post,
                              .qp = qp,
                              .wr = *w,
                              .own =
                                  fi_own_on() ? fi_own_send(qp->context, w, fi_ud_heard(q)) : NULL};
        memcpy(e->sge, w->sg_list, (size_t)w->num_sge * sizeof(e->sge[0]));
        e->wr.sg_list = e->sge;
        e->wr.next = NULL;
        atomic_fetch_add(&q->late, 1);
        FI_PROG(late, 1);
        held = true;
    }
    if (held)
        pthread_cond_signal(&g_late_cond);
    pthread_mutex_unlock(&g_late_lock);
    if (!held) {
        char what[80];
        snprintf(what, sizeof(what), "late: request posted at once (pool full, or %d SGEs)",
                 w->num_sge);
        FI_EV(note, .has = RG_EVH(note, qp), .what = what, .qp = q->qpn);
    }
    return held;
}

/* A QP going away takes its held requests with it, unposted. */
void fi_late_drop(struct fi_qp *q)
{
    int n = 0;
    pthread_mutex_lock(&g_late_lock);
    for (int i = 0; i < FI_LATE_MAX; i++)
        if (g_late[i].used && g_late[i].q == q) {
            g_late[i].used = false;
            fi_own_free(g_late[i].own);
            n++;
        }
    atomic_store(&q->late, 0);
    FI_PROG(late, -n);
    pthread_mutex_unlock(&g_late_lock);
    if (n) {
        char what[80];
        snprintf(what, sizeof(what), "late: %d held request(s) dropped with their QP", n);
        FI_EV(note, .has = RG_EVH(note, qp), .what = what, .qp = q->qpn);
    }
}

/* In a forked child: the late thread is the parent's, so the child starts its own if it needs
 * one, with an empty pool. */
void fi_late_atfork(void)
{
    pthread_mutex_init(&g_late_lock, NULL);
    memset(g_late, 0, sizeof(g_late));
    g_late_started = false;
}
