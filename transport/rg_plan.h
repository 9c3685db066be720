/* SPDX-License-Identifier: MIT */
/*
 * rg_plan.h - the pure arithmetic of the data path: how a buffer splits into segments (one
 * per rank) and chunks (one message each), and how a work request id encodes what it was.
 * Kept free of verbs so every size class can be tested on the host.
 */
#ifndef RG_PLAN_H
#define RG_PLAN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Segment i of n over count elements: the first count % n segments get one element more, so
 * sizes that do not divide are exact and a segment may be empty when count < n.
 */
void rg__seg(size_t count, int n, int i, size_t *off_p, size_t *len_p);

/* Elements per chunk: as many whole elements as fit in chunk_bytes, at least one. */
size_t rg__chunk_elems(size_t esz, size_t chunk_bytes);

/* Chunks a segment of len elements needs (0 for an empty segment). */
size_t rg__nchunks(size_t len, size_t esz, size_t chunk_bytes);

/* Chunk j of such a segment: element offset and count. */
void rg__chunk(size_t len, size_t esz, size_t chunk_bytes, size_t j, size_t *off_p, size_t *n_p);

/*
 * Of nchunks chunks striped round-robin over nrails rails, how many land on rail k: the
 * chunks j = k, k + nrails, ... that rail k's cursors in rg_coll.c walk. The engine itself
 * never needs the count (receives are prefilled per connection and paced by credits, see
 * docs/transport.md); the unit tests use it to pin the striping rule.
 */
size_t rg__rail_chunks(size_t nchunks, int nrails, int k);

/*
 * A work request id: kind (4 bits), the communicator's tag (12 bits), the connection index
 * (16 bits), and a per-connection sequence number (32 bits). The tag lets a poll site reject
 * a completion that is not this communicator's.
 */
enum rg_wr_kind { RG_WR_SEND = 1, RG_WR_RECV = 2, RG_WR_CREDIT = 3 };

static inline uint64_t rg__wrid(unsigned kind, unsigned tag, unsigned conn, uint32_t seq)
{
    return ((uint64_t)(kind & 0xf) << 60) | ((uint64_t)(tag & 0xfff) << 48) |
           ((uint64_t)(conn & 0xffff) << 32) | seq;
}
static inline unsigned rg__wrid_kind(uint64_t w)
{
    return (unsigned)(w >> 60);
}
static inline unsigned rg__wrid_tag(uint64_t w)
{
    return (unsigned)(w >> 48) & 0xfff;
}
static inline unsigned rg__wrid_conn(uint64_t w)
{
    return (unsigned)(w >> 32) & 0xffff;
}
static inline uint32_t rg__wrid_seq(uint64_t w)
{
    return (uint32_t)w;
}

#endif
