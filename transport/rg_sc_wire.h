/* SPDX-License-Identifier: MIT */
/*
 * rg_sc_wire.h - the side channel's own insides, shared by its three files and nothing else:
 * the frame and hello layouts, the channel's state, and the framed I/O every part uses.
 *   rg_sc_wire.c   frames on a socket: bounded writes and reads, the header's checks, aborts
 *   rg_sc_join.c   the star's making: rank 0's accept loop and the secret's proof both ways
 *   rg_sidechan.c  what a joined channel does: progress checks, allgather, barrier, abort
 */
#ifndef RG_SC_WIRE_H
#define RG_SC_WIRE_H

#include "rg_sidechan.h"

#include <stdint.h>

#define SC_MAGIC 0x52475343u /* "RGSC" */
#define SC_VERSION 3         /* 2: the secret's handshake; 3: SC_AGAIN */
#define SC_NONCE 32
#define SC_MAC 32

/* SC_AGAIN: rank 0 hangs up on a connection that has not proven the secret in its time, or to
 * make room, and says so first: the rank behind it, if it is one, dials again. A refusal (a
 * wrong proof) is a hang-up without a word. */
enum sc_type {
    SC_HELLO = 1,
    SC_GATHER = 2,
    SC_GATHER_ALL = 3,
    SC_ABORT = 4,
    SC_CHALLENGE = 5,
    SC_AGAIN = 6
};

struct sc_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    int32_t from;
    uint32_t len;
};

/* A peer's hello and rank 0's welcome; mac proves the secret over both nonces. */
struct sc_hello {
    int32_t rank;
    int32_t size;
    uint8_t nonce[SC_NONCE]; /* the hello's own challenge; zero in a welcome */
    uint8_t mac[SC_MAC];
};

struct rg_sc {
    int rank, size;
    const char *secret; /* the caller's, for the handshake only */
    /* Rank 0: each peer's and its own challenge, for the welcome's proof. */
    uint8_t nonce_peer[RG_MAX_RANKS][SC_NONCE], nonce_root[RG_MAX_RANKS][SC_NONCE];
    int fd[RG_MAX_RANKS]; /* rank 0: one per peer; others: fd[0] is rank 0 */
    /* Rank 0 only: a GATHER a peer sent early, while rank 0 was still in the data path. */
    void *early[RG_MAX_RANKS];
    uint32_t early_len[RG_MAX_RANKS];
    int aborted;
    char abort_msg[256];
};

/* Milliseconds to the deadline for poll(): 0 once it has passed, capped to fit an int. */
int rg__sc_ms_left(double deadline);

/* One frame in this rank's name. Returns 0, or -1 when it could not all go before the deadline. */
int rg__sc_send(struct rg_sc *sc, int fd, int type, const void *p, uint32_t len, double deadline);

/*
 * Reads one frame from peer `who` and validates its header. On success *payload_p is a
 * malloc'd buffer (NULL for an empty payload) the caller frees.
 */
rg_status rg__sc_recv(struct rg_sc *sc, int fd, int who, double deadline, int *type_p, int *from_p,
                      void **payload_p, uint32_t *len_p, struct rg_err *e);

/*
 * Records an abort that began at rank `from` (once); rank 0, the hub, passes it on to every
 * other rank in `from`'s name, so each survivor blames the rank that failed, not the hub.
 */
void rg__sc_relay_abort(struct rg_sc *sc, int from, const char *reason);

#endif
