/* SPDX-License-Identifier: MIT */
/*
 * railguard/plugin.h - the plugin ABI: how the scenario runner drives a collective transport.
 *
 * A transport is a shared object exporting one table, `const rg_plugin rg_plugin_v2`. This
 * header is all an adapter needs: element types with their sizes, reductions, the status table,
 * the capability declaration and the table. It holds no code of railguard's and nothing of the
 * reference transport (whose own header, railguard.h, includes this one), so an adapter for
 * JACCL, RMLX or a team's own stack builds with `pkg-config --cflags railguard` and links
 * nothing. docs/plugin-abi.md walks through an adapter.
 *
 * The enums' values are fixed and part of the ABI: a transport whose own enums differ maps them
 * with a switch, never a cast (JACCL's dtype order is not this one).
 *
 * Version 1 tables (`rg_plugin_v1`, operations returning 0 or nonzero) still load; their
 * errors reach the report without a status.
 */
#ifndef RAILGUARD_PLUGIN_H
#define RAILGUARD_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The one status table: name, value, text. Every railguard call and every v2 operation returns
 * one; RG_OK is 0 and errors are small negative numbers. RG_ERR_UNSUPPORTED from an operation
 * means "this transport does not do that": the runner skips the step and reports it as
 * unsupported, never as a pass and never as detected; the handle must stay usable.
 */
#define RG_STATUS_TABLE(X)                                                                         \
    X(RG_OK, 0, "success")                                                                         \
    X(RG_ERR_INVALID, -1, "invalid argument")                                                      \
    X(RG_ERR_NOMEM, -2, "out of memory")                                                           \
    X(RG_ERR_NODEV, -3, "no such RDMA device")                                                     \
    X(RG_ERR_CONFIG, -4, "bad configuration")                                                      \
    X(RG_ERR_VERBS, -5, "verbs call failed")                                                       \
    X(RG_ERR_COMPLETION, -6, "completion with error status")                                       \
    X(RG_ERR_POLL, -7, "poll_cq returned an error")                                                \
    X(RG_ERR_TIMEOUT, -8, "deadline passed")                                                       \
    X(RG_ERR_PEER_ABORT, -9, "peer aborted")                                                       \
    X(RG_ERR_SIDE_CHANNEL, -10, "side channel failed")                                             \
    X(RG_ERR_RAIL_MISMATCH, -11, "rails crossed or mismatched")                                    \
    X(RG_ERR_PROTOCOL, -12, "protocol violation")                                                  \
    X(RG_ERR_POISONED, -13, "communicator poisoned by an earlier error")                           \
    X(RG_ERR_UNSUPPORTED, -14, "not supported")

typedef enum {
#define RG__STATUS_ENUM(name, value, text) name = (value),
    RG_STATUS_TABLE(RG__STATUS_ENUM)
#undef RG__STATUS_ENUM
} rg_status;

/* The status's name as the table spells it ("RG_ERR_TIMEOUT"), or NULL outside the table. */
static inline const char *rg_plugin_status_name(int st)
{
    switch (st) {
#define RG__STATUS_CASE(name, value, text)                                                         \
    case value:                                                                                    \
        return #name;
        RG_STATUS_TABLE(RG__STATUS_CASE)
#undef RG__STATUS_CASE
    }
    return NULL;
}

/* Limits: ranks in a communicator, rails (wires) between two ranks. */
#define RG_MAX_RANKS 64
#define RG_MAX_RAILS 4

/*
 * Element types: enum name, value, name in reports, bytes per element. float16 is IEEE
 * binary16, bfloat16 the top half of a binary32, complex64 two float32 (real, imaginary).
 * Counts everywhere are elements of these sizes.
 */
#define RG_DTYPE_TABLE(X)                                                                          \
    X(RG_BOOL, 0, "bool", 1)                                                                       \
    X(RG_INT8, 1, "int8", 1)                                                                       \
    X(RG_UINT8, 2, "uint8", 1)                                                                     \
    X(RG_INT16, 3, "int16", 2)                                                                     \
    X(RG_UINT16, 4, "uint16", 2)                                                                   \
    X(RG_INT32, 5, "int32", 4)                                                                     \
    X(RG_UINT32, 6, "uint32", 4)                                                                   \
    X(RG_INT64, 7, "int64", 8)                                                                     \
    X(RG_UINT64, 8, "uint64", 8)                                                                   \
    X(RG_FLOAT16, 9, "float16", 2)                                                                 \
    X(RG_BFLOAT16, 10, "bfloat16", 2)                                                              \
    X(RG_FLOAT32, 11, "float32", 4)                                                                \
    X(RG_FLOAT64, 12, "float64", 8)                                                                \
    X(RG_COMPLEX64, 13, "complex64", 8)

typedef enum {
#define RG__DTYPE_ENUM(name, value, text, bytes) name = (value),
    RG_DTYPE_TABLE(RG__DTYPE_ENUM)
#undef RG__DTYPE_ENUM
        RG_DTYPE_COUNT
} rg_dtype;

/* Bytes per element; 0 for a value outside rg_dtype. */
static inline size_t rg_plugin_dtype_size(int dt)
{
    switch (dt) {
#define RG__DTYPE_SIZE(name, value, text, bytes)                                                   \
    case value:                                                                                    \
        return bytes;
        RG_DTYPE_TABLE(RG__DTYPE_SIZE)
#undef RG__DTYPE_SIZE
    }
    return 0;
}

/* Reductions. On bool, sum and max are logical or, prod and min logical and; complex64 has
 * no max or min. */
typedef enum { RG_SUM = 0, RG_PROD = 1, RG_MAX = 2, RG_MIN = 3, RG_REDOP_COUNT } rg_redop;

/* How a collective is carried out; AUTO lets the transport choose. */
typedef enum { RG_ALGO_AUTO = 0, RG_ALGO_RING = 1, RG_ALGO_MESH = 2, RG_ALGO_COUNT } rg_algo;
/* The QP type the scenario asks for; UC is what JACCL uses. */
typedef enum { RG_QPT_UC = 0, RG_QPT_RC = 1, RG_QPT_COUNT } rg_qp_type;

/* What init is given. `size` lets a later version add fields at the end. */
typedef struct rg_plugin_args {
    uint32_t size;            /* sizeof(rg_plugin_args) as the caller built it */
    int rank;                 /* 0..nranks-1 */
    int nranks;               /* 2..RG_MAX_RANKS */
    const char *coordinator;  /* "host:port" of the side channel; rank 0 listens there */
    const char *devices_file; /* a JACCL devices file: cell [i][j] names rank i's rails to j */
    rg_qp_type qp_type;
    rg_algo algo;
    double timeout_s; /* the transport's deadline for every wait */
} rg_plugin_args;

/* --- version 2 ---------------------------------------------------------------------------- */
#define RG_PLUGIN_ABI_VERSION 2
#define RG_PLUGIN_V2_SYMBOL "rg_plugin_v2"

/* The operations, as bits of rg_plugin_caps.ops (send and recv go together). */
typedef enum {
    RG_OP_ALL_REDUCE = 0,
    RG_OP_ALL_GATHER = 1,
    RG_OP_REDUCE_SCATTER = 2,
    RG_OP_BROADCAST = 3,
    RG_OP_SENDRECV = 4,
    RG_OP_BARRIER = 5,
    RG_OP_COUNT
} rg_plugin_op;

#define RG_BIT(x) (1u << (unsigned)(x))

/* redops' length, fixed so that a later operation does not move the fields after it. */
#define RG_PLUGIN_MAX_OPS 8
typedef char rg__plugin_ops_fit[RG_OP_COUNT <= RG_PLUGIN_MAX_OPS ? 1 : -1];

/* Flags of rg_plugin_caps.flags. */
enum {
    /* In-place calls (the rules of railguard.h: all_reduce with send == recv, ...). */
    RG_CAP_IN_PLACE = 1u << 0,
    /* After an error the handle stays usable and later calls may succeed: the runner then
     * judges the transport on its data, not on fail-stop. */
    RG_CAP_RECOVERS = 1u << 1,
};

/*
 * What max and min make of a NaN (rg_plugin_caps.nan_minmax). The special-values data puts a NaN
 * into max and min only for a transport that declared one: with none declared the order of the
 * operands decides (a > b ? a : b drops a NaN on one side and keeps it on the other), so no one
 * answer could be checked, and the reports say it was not.
 */
typedef enum {
    RG_NAN_UNDECLARED = 0, /* not declared: no NaN is put into max and min */
    RG_NAN_PROPAGATE = 1,  /* a NaN operand makes the result a NaN */
    RG_NAN_IEEE = 2,       /* IEEE maxNum/minNum, C's fmax/fmin: a NaN only when both are */
    RG_NAN_COUNT
} rg_nan_minmax;

/*
 * What the transport does, declared once (it may point at a constant). The runner reads it
 * before it starts any rank and skips -- and reports as unsupported -- every scenario step
 * that needs something not declared here, so the stock suite runs on any transport and says
 * exactly what was not tested. A zero field declares nothing of its kind.
 */
typedef struct rg_plugin_caps {
    uint32_t size;                      /* sizeof(rg_plugin_caps) as the plugin was built */
    uint32_t ops;                       /* RG_BIT(rg_plugin_op) */
    uint32_t redops[RG_PLUGIN_MAX_OPS]; /* per reducing op: RG_BIT(rg_redop) */
    uint32_t dtypes;                    /* RG_BIT(rg_dtype) */
    uint32_t qp_types;                  /* RG_BIT(rg_qp_type) */
    uint32_t algos;                     /* RG_BIT(RG_ALGO_RING) and/or MESH; AUTO always goes */
    int max_ranks;                      /* 2..RG_MAX_RANKS */
    int max_rails;                      /* 1..RG_MAX_RAILS */
    uint32_t flags;                     /* RG_CAP_* */
    uint32_t nan_minmax;                /* rg_nan_minmax (after flags: a plugin built before
                                           it is read as RG_NAN_UNDECLARED) */
} rg_plugin_caps;

/* The smallest caps.size version 2 accepts (up to flags): a later railguard that adds fields
 * still loads a plugin built against this header. */
#define RG_PLUGIN_CAPS_V2_SIZE                                                                     \
    (offsetof(rg_plugin_caps, flags) + sizeof(((rg_plugin_caps *)0)->flags))

/* What the last operation on a handle really ran, for the report. */
typedef struct rg_plugin_call {
    uint32_t size; /* sizeof(rg_plugin_call) as the runner built it */
    rg_algo algo;  /* RING or MESH; AUTO when the transport cannot say */
    int rails;     /* wires it used; 0 when it cannot say */
} rg_plugin_call;

typedef struct rg_plugin_v2 {
    uint32_t abi_version;       /* RG_PLUGIN_ABI_VERSION */
    uint32_t size;              /* sizeof(rg_plugin) as the plugin was built */
    const char *name;           /* e.g. "jaccl", shown in reports */
    const char *version;        /* the transport's own version, or NULL */
    const rg_plugin_caps *caps; /* required */
    /*
     * Joins the other ranks: RG_OK and *h set, or a status with one line in err (the runner
     * reads RG_ERR_UNSUPPORTED as "cannot run this scenario", anything else as an error).
     */
    rg_status (*init)(const rg_plugin_args *args, void **h, char *err, size_t errlen);
    /* The collectives: the semantics of railguard.h's rg_* calls. On an error, last_error
     * says what happened; after one the handle may refuse every later call. */
    rg_status (*all_reduce)(void *h, const void *send, void *recv, size_t count, rg_dtype dt,
                            rg_redop op);
    rg_status (*all_gather)(void *h, const void *send, void *recv, size_t count, rg_dtype dt);
    rg_status (*reduce_scatter)(void *h, const void *send, void *recv, size_t count, rg_dtype dt,
                                rg_redop op);
    rg_status (*broadcast)(void *h, void *buf, size_t count, rg_dtype dt, int root);
    rg_status (*send)(void *h, const void *buf, size_t count, rg_dtype dt, int peer);
    rg_status (*recv)(void *h, void *buf, size_t count, rg_dtype dt, int peer);
    rg_status (*barrier)(void *h);
    /* Tears down and frees the handle, also after errors: RG_OK when the teardown was clean. */
    rg_status (*finalize)(void *h);
    /* The handle's first error ("" while none); valid until finalize. Never NULL. */
    const char *(*last_error)(void *h);
    /* Optional (NULL): registered memory the transport may send from in place. */
    rg_status (*mem_register)(void *h, void *buf, size_t len, void **mem);
    rg_status (*mem_deregister)(void *h, void *mem);
    /* Optional (NULL): what the last operation ran. */
    rg_status (*last_call)(void *h, rg_plugin_call *info);
} rg_plugin; /* exported as `const rg_plugin rg_plugin_v2` */

/* --- version 1, still loaded ---------------------------------------------------------------- */
#define RG_PLUGIN_ABI_V1 1
#define RG_PLUGIN_SYMBOL "rg_plugin_v1"

typedef struct rg_plugin_v1 {
    uint32_t abi_version; /* RG_PLUGIN_ABI_V1 */
    uint32_t size;        /* sizeof(rg_plugin_ops) as the plugin was built */
    const char *name;
    void *(*init)(const rg_plugin_args *args, char *err, size_t errlen);
    /* Each returns 0 on success, nonzero on error. */
    int (*all_reduce)(void *h, const void *send, void *recv, size_t count, rg_dtype dt,
                      rg_redop op);
    int (*all_gather)(void *h, const void *send, void *recv, size_t count, rg_dtype dt);
    int (*reduce_scatter)(void *h, const void *send, void *recv, size_t count, rg_dtype dt,
                          rg_redop op);
    int (*broadcast)(void *h, void *buf, size_t count, rg_dtype dt, int root);
    int (*send)(void *h, const void *buf, size_t count, rg_dtype dt, int peer);
    int (*recv)(void *h, void *buf, size_t count, rg_dtype dt, int peer);
    int (*barrier)(void *h);
    int (*finalize)(void *h);
    const char *(*last_error)(void *h);
    /* Optional, present only when `size` reaches past them. */
    void *(*mem_register)(void *h, void *buf, size_t len);
    int (*mem_deregister)(void *h, void *mem);
} rg_plugin_ops;

/* The smallest `size` a v1 table may have: up to last_error. */
#define RG_PLUGIN_V1_MIN_SIZE                                                                      \
    (offsetof(rg_plugin_ops, last_error) + sizeof(((rg_plugin_ops *)0)->last_error))

#ifdef __cplusplus
}
#endif
#endif /* RAILGUARD_PLUGIN_H */
