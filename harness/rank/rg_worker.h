/* SPDX-License-Identifier: MIT */
/*
 * One rank's own declarations, shared by its files (internal to harness/):
 *   rg_worker.c       the rank: its life from load to verdict, backtraces, the command line
 *   rg_worker_step.c  one program step: its buffers, the call, every check of what it did
 */
#ifndef RG_WORKER_H
#define RG_WORKER_H

#include "rank/rg_rank.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nothing here is seen outside the railguard binary (it is linked -rdynamic). */
#pragma GCC visibility push(hidden)

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

/* What one file calls in another. */
/* rg_worker.c */
void worker_fds_open(struct fdset *s);
void worker_say(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* rg_worker_step.c */
void worker_fds_leaked(struct worker *w);
/* How many descriptors opened since worker_fds_open are sockets: the transport's channels. */
int worker_fds_sockets(struct worker *w);
const char *worker_op_label(const rg_sc_op *op, char *buf, size_t len);
int worker_release(struct worker *w, struct held *hd, bool check, char *detail, size_t dlen);
void worker_say_error(struct worker *w, char *detail, size_t dlen, int st, const char *msg);
int worker_skip_rest(struct worker *w, int i);
void worker_say_status(struct worker *w);
int worker_run_step(struct worker *w, const rg_sc_op *op, const rg_data_key *k, char *detail,
                    size_t dlen);

#pragma GCC visibility pop

#endif
