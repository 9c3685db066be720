/* SPDX-License-Identifier: MIT */
/* Internals shared by the transport's files; nothing here is part of the public ABI. */
#ifndef RG_INTERNAL_H
#define RG_INTERNAL_H

#include "railguard.h"

#include <stddef.h>
#include <stdint.h>

#define RG__PRINTF(f, a) __attribute__((format(printf, f, a)))

/* An error as first detected: its status and a message that says where. */
struct rg_err {
    rg_status st;
    char msg[320];
};

/* Records st and the message unless e already holds an error; returns st either way. */
rg_status rg__err_set(struct rg_err *e, rg_status st, const char *fmt, ...) RG__PRINTF(3, 4);
void rg__err_clear(struct rg_err *e);

/* CLOCK_MONOTONIC in seconds: every deadline in the transport is measured against it. */
double rg__now(void);

/*
 * For tests that check a plan's shape from outside: messages posted to a peer so far (all
 * rails, data and hello alike; compare two readings), and the chunk size in force.
 */
uint64_t rg__comm_sends_to(rg_comm_h c, int peer);
size_t rg__comm_chunk_bytes(rg_comm_h c);
/* Sends that went from registered memory in place, so far; the RG_ZCOPY_MIN in force. */
uint64_t rg__comm_zcopy_sends(rg_comm_h c);
size_t rg__comm_zcopy_min(rg_comm_h c);
/* Receives posted so far to land in the caller's output in place. */
uint64_t rg__comm_into_recvs(rg_comm_h c);
/* Buffers registered for a single call (RG_ZCOPY_AUTO) so far, and registrations refused. */
uint64_t rg__comm_auto_regs(rg_comm_h c, uint64_t *fails);
size_t rg__comm_zcopy_auto(rg_comm_h c);
/* RG_ONESHOT_BYTES in force: auto's all_reduce up to this size is one hop to every peer. */
size_t rg__comm_oneshot_bytes(rg_comm_h c);

#endif /* RG_INTERNAL_H */
