/* SPDX-License-Identifier: MIT */
/*
 * rg_trace.h - one rank's verbs trace, read back from its events file: what each QP did, when
 * (a scenario with `trace: true`; the shim's fi_trace.c writes it). Per QP, the peer it was
 * pointed at, every work request posted and every completion polled, each with the line of the
 * events file it came from so a cause can cite it; per CQ, its runs of polls that found
 * nothing (trace_idle).
 * Like the rank's evidence, a line that is not as the shim writes it is counted and named.
 */
#ifndef RG_TRACE_H
#define RG_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rg_tr_dir { RG_TR_SEND, RG_TR_RECV, RG_TR_UNKNOWN };
/* What a request or completion was. A receive is consumed by send, send_imm and write_imm. */
enum rg_tr_kind {
    RG_TR_K_SEND,
    RG_TR_K_SEND_IMM,
    RG_TR_K_WRITE,
    RG_TR_K_WRITE_IMM,
    RG_TR_K_READ,
    RG_TR_K_ATOMIC,
    RG_TR_K_RECV,
    RG_TR_K_OTHER
};
/* Where a posted request went: the provider took it, or a fault of the shim's kept it off. */
enum rg_tr_fate { RG_TR_WIRE, RG_TR_LOST, RG_TR_FLUSHED };

/* A post or a completion, in the order the file has them. */
typedef struct rg_tr_op {
    double at_ms;  /* CLOCK_MONOTONIC ms: a post's before the provider saw it, a completion's
                    * when the program got it */
    uint64_t n;    /* a post's ordinal on its queue (from 1); a completion's CQ poll count */
    int line;      /* in the events file */
    int status;    /* a completion's (0: success) */
    int cq;        /* a completion's CQ (its creation ordinal in the process), -1 unknown */
    uint8_t dir;   /* enum rg_tr_dir */
    uint8_t kind;  /* enum rg_tr_kind */
    uint8_t fate;  /* enum rg_tr_fate (posts) */
    bool signaled; /* posts */
} rg_tr_op;

#define RG_TR_DEV 32
typedef struct rg_tr_qp {
    long pid;
    char dev[RG_TR_DEV];
    uint32_t qpn;
    bool known;        /* its trace_qp came: the fields below hold */
    bool gap;          /* the shim could not see its requests one by one, or the number
                        * served two QPs (a second trace_qp, an ordinal going back) */
    bool srq;          /* its receives come from a shared receive queue (not traced) */
    char type[8];      /* "rc", "uc", "ud", "other" */
    char gid[40];      /* its own, 32 hex digits ("" when not known) */
    char peer_gid[40]; /* the peer's, or "lid:N" */
    int64_t peer_qpn;  /* -1: none (UD) */
    int send_cq, recv_cq;
    int line; /* of its trace_qp */
    int nposts, ncqes;
    rg_tr_op *post, *cqe;
    int capp, capc;
} rg_tr_qp;

/* A CQ polled `idle` times in a row without a completion, by at_ms (trace_idle). */
typedef struct rg_tr_idle {
    long pid;
    int cq;
    uint64_t idle;
    double at_ms;
    int line;
} rg_tr_idle;

typedef struct rg_trace {
    bool present; /* the events file was there */
    bool any;     /* it holds trace events */
    bool full;    /* some process stopped tracing at FI_TRACE_MAX */
    int bad_lines;
    char unreadable[300];
    int nqps;
    rg_tr_qp *qp;
    int nidle, capi;
    rg_tr_idle *idle;
} rg_trace;

/* Reads one rank's trace. A missing file is not an error (present stays false). 0, or -1
 * with err (the file cannot be read, or memory ran out). rg_trace_free it either way. */
int rg_trace_read(const char *path, rg_trace *t, char *err, size_t errlen);
void rg_trace_free(rg_trace *t);

/* Whether a request of this kind takes a receive at its peer. */
static inline bool rg_tr_consumes(int kind)
{
    return kind == RG_TR_K_SEND || kind == RG_TR_K_SEND_IMM || kind == RG_TR_K_WRITE_IMM;
}

#endif
