/* SPDX-License-Identifier: MIT */
/*
 * rg_sidechan.h - the TCP side channel: a star around rank 0, used to trade connection data
 * at init, for barriers outside the data path, and to spread an abort so that peers fail fast
 * with the reason instead of waiting out their deadline.
 *
 * Every frame is a fixed header (magic, type, sender, length) and a bounded payload. Bytes
 * that do not parse are an RG_ERR_SIDE_CHANNEL error naming the peer and the field.
 */
#ifndef RG_SIDECHAN_H
#define RG_SIDECHAN_H

#include "rg_internal.h"

#include <stdint.h>

#define RG_SC_MAX_PAYLOAD (1u << 20)

struct rg_sc;

/*
 * Connects the star. Rank 0 listens on the coordinator's port and accepts size-1 peers; the
 * others connect, retrying until the deadline (rank 0 may start later). Every connection
 * proves `secret` both ways (HMAC challenges; the secret never crosses the wire) before its
 * rank counts; rank 0 refuses and logs (stderr) a connection that cannot, and goes on
 * accepting. Each side checks the other's rank, size and protocol version. `secret` is kept
 * by reference until this returns; a size above 1 needs one.
 */
rg_status rg__sc_open(const char *coordinator, const char *secret, int rank, int size,
                      double deadline, struct rg_sc **sc_p, struct rg_err *e);
void rg__sc_close(struct rg_sc *sc);

/* Every rank contributes len bytes; all receive size*len bytes in rank order. */
rg_status rg__sc_allgather(struct rg_sc *sc, const void *mine, size_t len, void *all,
                           double deadline, struct rg_err *e);

/* Returns once every rank has called it (an allgather of one byte each). */
rg_status rg__sc_barrier(struct rg_sc *sc, double deadline, struct rg_err *e);

/* Tells every rank that this one failed and why. Best effort, never blocks long. */
void rg__sc_abort(struct rg_sc *sc, const char *reason);

/*
 * Called from progress loops: returns RG_OK when nothing happened, or RG_ERR_PEER_ABORT with
 * "peer rank R aborted: <reason>" once any rank aborted. Rank 0 relays aborts it receives.
 * Cheap: one poll() with a zero timeout.
 */
rg_status rg__sc_check(struct rg_sc *sc, struct rg_err *e);

#endif
