/* SPDX-License-Identifier: MIT */
/*
 * vpair - two processes, one QP pair, a known byte pattern sent in chunks and verified
 * bit-exact at the receiver. It drives the transport's verbs layer (rg_verbs) the way the
 * transport will: credits over a side channel prove each receive is posted before its send,
 * since UC silently drops a send that finds no receive.
 */
#ifndef RG_TEST_VPAIR_H
#define RG_TEST_VPAIR_H

#include "rg_verbs.h"

#include <stddef.h>
#include <stdint.h>

struct vpair_opts {
    const char *send_dev; /* the sender's device, e.g. "rxe0" */
    const char *recv_dev; /* the receiver's; another rail makes a crossed pair */
    enum rg_qp_kind kind;
    size_t bytes;     /* total to move */
    size_t chunk;     /* bytes per send */
    unsigned window;  /* receives kept posted ahead */
    double timeout_s; /* every wait on either side ends by this deadline */
    struct rg_vqp_tuning tuning;
    uint64_t seed; /* the byte pattern */
};

struct vpair_result {
    rg_status st;  /* RG_OK only when every byte arrived and matched */
    char msg[512]; /* the first error, prefixed by the side that saw it */
    size_t bytes_verified;
    double seconds; /* from both QPs connected to the receiver's verdict */
};

void vpair_opts_default(struct vpair_opts *o);
/* Forks the receiver, runs the sender in this process, returns r->st. */
rg_status vpair_run(const struct vpair_opts *o, struct vpair_result *r);

/* The pattern: byte i of a stream with this seed. Exposed for the unit tests. */
void vpair_fill(uint8_t *buf, size_t len, size_t offset, uint64_t seed);
/* Index of the first byte that differs from the pattern, or len when all match. */
size_t vpair_check(const uint8_t *buf, size_t len, size_t offset, uint64_t seed);

#endif
