/* SPDX-License-Identifier: MIT */
/*
 * railguard.h - the public header of librailguard, the reference collective transport.
 *
 * Every call returns an rg_status from the one table (railguard/plugin.h). A status is a negative
 * number (RG_OK is 0), so callers can test `if (st)` and print rg_strerror(st) or the
 * communicator's own message, which names rank, peer, rail, QP number and verbs status.
 */
#ifndef RAILGUARD_H
#define RAILGUARD_H

#include <stddef.h>
#include <stdint.h>

/* The status table, element types, reductions, algorithms, QP types and the plugin ABI. */
#include "railguard/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A sentence for a status; "unknown status" for a value outside the table. Never NULL. */
const char *rg_strerror(rg_status st);

/* The status's name as written in the table ("RG_ERR_TIMEOUT"); "RG_ERR_UNKNOWN" otherwise. */
const char *rg_err_name(rg_status st);

/* Device-name length. */
#define RG_DEVNAME_MAX 64

/* Bytes per element; 0 for a value outside rg_dtype. */
size_t rg_dtype_size(rg_dtype dt);
/* "float16", "sum", ...; "?" for a value outside the enum. */
const char *rg_dtype_name(rg_dtype dt);
const char *rg_redop_name(rg_redop op);
/* 1 when the pair is defined (complex64 has no max or min), else 0. */
int rg_redop_supported(rg_dtype dt, rg_redop op);

/* --- configuration ------------------------------------------------------------------------ */
#define RG_SECRET_MAX 256
#define RG_SECRET_MIN 16

typedef struct rg_config {
    int rank;                /* -1: unset */
    int size;                /* 0: the devices file's dimension */
    char coordinator[256];   /* "host:port"; rank 0 listens there, the others connect */
    char devices_file[4096]; /* path of a JACCL devices file */
    rg_qp_type qp_type;      /* UC by default, as JACCL uses */
    double timeout_s;        /* the deadline of every wait; 0: unset (60 s) */
    rg_algo algo;            /* RG_ALGO_AUTO unless set */
    /* The job's secret, the same on every rank: each side-channel connection proves it (an
     * HMAC challenge, never the secret itself) before anything else is read or sent. Needed
     * when size > 1; "" reads RG_SECRET or RG_SECRET_FILE at create. 16..256 printable
     * characters, no blanks. */
    char secret[RG_SECRET_MAX + 1];
} rg_config;

/* Everything unset: rank -1, size 0, empty strings, UC, timeout 0, auto. */
void rg_config_init(rg_config *cfg);

/*
 * Fills the fields still unset from the environment; fields already set win. Names, first
 * found wins: rank RG_RANK, MLX_RANK, JACCL_RANK; coordinator RG_COORDINATOR,
 * MLX_JACCL_COORDINATOR, JACCL_COORDINATOR; devices file RG_DEVICES_FILE, MLX_IBV_DEVICES,
 * JACCL_IBV_DEVICES; RG_QP_TYPE (uc|rc); RG_TIMEOUT (seconds, > 0); RG_ALGO (auto|ring|mesh),
 * else MLX_JACCL_RING / JACCL_RING (1: ring, 0: mesh); the secret RG_SECRET, else the first
 * line of RG_SECRET_FILE (a regular file no one else may read). A malformed value is RG_ERR_CONFIG
 * with a one-line message naming the variable and the value in err.
 */
rg_status rg_config_from_env(rg_config *cfg, char *err, size_t errlen);

/* --- communicator --------------------------------------------------------------------------- */
typedef struct rg_comm *rg_comm_h;

/*
 * Builds a communicator: opens this rank's devices, meets the other ranks over the side
 * channel, connects one QP per peer per rail, and verifies every rail end to end (a crossed
 * or dead rail is RG_ERR_RAIL_MISMATCH or RG_ERR_TIMEOUT here, naming both ends). On failure
 * err holds a one-line message and *comm_p is untouched.
 */
rg_status rg_comm_create(const rg_config *cfg, rg_comm_h *comm_p, char *err, size_t errlen);

/*
 * Poisons the communicator and tells every peer, which then fails its current or next call
 * with "peer rank R aborted: <reason>". For a caller that found something wrong on its own
 * (a verification failure, say) and will not take part in further calls.
 */
void rg_comm_abort(rg_comm_h comm, const char *reason);

/*
 * Drains and frees; safe on NULL and on a poisoned communicator. Returns RG_OK when the
 * teardown was clean (every send completed, every rank reached it), else the error it met, or
 * the communicator's first error if it was already poisoned: an error completion polled while
 * draining is reported here, never dropped. The message goes with the communicator; a caller
 * that wants it prints it (RG_DEBUG does).
 */
rg_status rg_comm_destroy(rg_comm_h comm);

int rg_comm_rank(rg_comm_h comm);
int rg_comm_size(rg_comm_h comm);

/* The first error's message ("" while none): names rank, peer, rail, QP and verbs status. */
const char *rg_comm_error(rg_comm_h comm);

/*
 * What the last collective or send/recv ran: RG_ALGO_RING or RG_ALGO_MESH (RG_ALGO_AUTO for
 * send, recv, barrier and calls that moved nothing), and how many rails it used (0 when it
 * used none). RG_ERR_INVALID on a NULL argument.
 */
rg_status rg_comm_last_call(rg_comm_h comm, rg_algo *algo, int *rails);

/*
 * Collectives. counts are elements; every rank passes the same count, dtype and op.
 * After an error the communicator is poisoned: every later call returns the first error's
 * status at once. In place: all_reduce with send == recv; all_gather with
 * send == recv + rank * count * size(dtype); reduce_scatter with recv == send + rank * count *
 * size(dtype).
 */
rg_status rg_all_reduce(rg_comm_h comm, const void *send, void *recv, size_t count, rg_dtype dt,
                        rg_redop op);
/* recv holds size * count elements, rank r's contribution at r * count. */
rg_status rg_all_gather(rg_comm_h comm, const void *send, void *recv, size_t count, rg_dtype dt);
/* send holds size * count elements; rank r receives the reduction of block r. */
rg_status rg_reduce_scatter(rg_comm_h comm, const void *send, void *recv, size_t count, rg_dtype dt,
                            rg_redop op);
rg_status rg_broadcast(rg_comm_h comm, void *buf, size_t count, rg_dtype dt, int root);
rg_status rg_send(rg_comm_h comm, const void *buf, size_t count, rg_dtype dt, int peer);
rg_status rg_recv(rg_comm_h comm, void *buf, size_t count, rg_dtype dt, int peer);
rg_status rg_barrier(rg_comm_h comm);

/*
 * Zero-copy sends from registered memory. rg_mem_register registers [buf, buf + len) on every
 * device the communicator uses. From then on a call whose outgoing block lies inside such a
 * region, is at least RG_ZCOPY_MIN bytes (default 32 KiB) and is not written again by the same
 * call goes to the wire straight from these pages instead of through a staging copy: all_gather,
 * broadcast, send, the all-gather half of all_reduce, and all_reduce's first send when send
 * is not recv (it is read from send). The rest of all_reduce's reduce-scatter half sends what
 * it rewrites, so that copies. The work happens in the output buffer (all_reduce's recv,
 * all_gather's recv, broadcast's buf, send's buf), so that is the one to register, and
 * all_reduce's send beside it. Where the pages are writable, a copied block of the same size
 * that nothing else of the call touches first may also be received in place (all_gather,
 * broadcast, recv, all_reduce's all-gather half): past the receives a connection had posted
 * before the call, its messages' payload lands in the output, their headers in staging,
 * checked before the call returns. A call that moves RG_ZCOPY_AUTO bytes (default 256 KiB)
 * or more through a buffer no region holds registers it for that call alone, and
 * deregisters it before returning.
 *
 * A call that succeeds returns after every send it posted completed and every receive it
 * posted landed. A call that used the caller's memory in place and fails tears down every
 * connection with a send still in flight or a receive still posted there before it returns,
 * so the NIC never touches a buffer its caller has got back (should the device refuse, stderr
 * says so); the output of a failed call is undefined. Keep the memory mapped until
 * rg_mem_deregister (also after errors); rg_comm_destroy deregisters what is left. Regions
 * may overlap; at most RG_MEM_MAX per communicator. Registration is local: no peer takes part,
 * and a failure (RG_ERR_INVALID, RG_ERR_NOMEM, RG_ERR_VERBS) does not poison the communicator.
 */
#define RG_MEM_MAX 16
typedef struct rg_mem *rg_mem_h;
rg_status rg_mem_register(rg_comm_h comm, void *buf, size_t len, rg_mem_h *mem_p);
rg_status rg_mem_deregister(rg_comm_h comm, rg_mem_h mem);

#ifdef __cplusplus
}
#endif
#endif /* RAILGUARD_H */
