/* SPDX-License-Identifier: MIT */
/*
 * railguard.h - the public header of librailguard, the reference collective transport.
 *
 * Every call returns an rg_status from the one table below. A status is a small negative
 * number (RG_OK is 0), so callers can test `if (st)` and print rg_strerror(st) or the
 * communicator's own message, which names rank, peer, rail, QP number and verbs status.
 */
#ifndef RAILGUARD_H
#define RAILGUARD_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The one error table: name, value, text. It expands into the enum, rg_strerror() and
 * rg_err_name(), so the three can never disagree.
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

/* A sentence for a status; "unknown status" for a value outside the table. Never NULL. */
const char *rg_strerror(rg_status st);

/* The status's name as written in the table ("RG_ERR_TIMEOUT"); "RG_ERR_UNKNOWN" otherwise. */
const char *rg_err_name(rg_status st);

#ifdef __cplusplus
}
#endif
#endif /* RAILGUARD_H */
