/* SPDX-License-Identifier: MIT */
/*
 * The side channel once joined (rg_sc_join.c made the star): a progress check that takes
 * aborts as they come, the allgather through rank 0, the barrier, and this rank's abort.
 * Rank 0 keeps a part a peer sent while it was still in the data path, for the next gather.
 */
#include "rg_sc_wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rg_status note_abort(struct rg_sc *sc, int from, const char *reason, struct rg_err *e)
{
    rg__sc_relay_abort(sc, from, reason);
    return rg__err_set(e, RG_ERR_PEER_ABORT, "rank %d: peer rank %d aborted: %s", sc->rank, from,
                       sc->abort_msg);
}

/* Handles one frame that arrived outside an allgather. */
static rg_status take_frame(struct rg_sc *sc, int who, int type, int from, void *pl, uint32_t len,
                            struct rg_err *e)
{
    if (type == SC_ABORT) {
        rg_status st = note_abort(sc, from, pl, e);
        free(pl);
        return st;
    }
    if (type == SC_GATHER && sc->rank == 0 && !sc->early[who]) {
        sc->early[who] = pl;
        sc->early_len[who] = len;
        return RG_OK;
    }
    free(pl);
    return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                       "rank %d: side channel: unexpected frame type %d "
                       "from rank %d",
                       sc->rank, type, who);
}

rg_status rg__sc_check(struct rg_sc *sc, struct rg_err *e)
{
    struct pollfd p[RG_MAX_RANKS];
    int who[RG_MAX_RANKS], n = 0;
    if (sc->aborted)
        return rg__err_set(e, RG_ERR_PEER_ABORT, "rank %d: a peer aborted: %s", sc->rank,
                           sc->abort_msg);
    for (int r = 0; r < RG_MAX_RANKS; r++)
        if (sc->fd[r] >= 0 && !(sc->rank == 0 && sc->early[r])) {
            p[n].fd = sc->fd[r];
            p[n].events = POLLIN;
            p[n].revents = 0;
            who[n++] = r;
        }
    if (n == 0 || poll(p, (nfds_t)n, 0) <= 0)
        return RG_OK;
    for (int i = 0; i < n; i++) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        int type, from;
        void *pl;
        uint32_t len;
        rg_status st =
            rg__sc_recv(sc, p[i].fd, who[i], rg__now() + 5.0, &type, &from, &pl, &len, e);
        if (st)
            return st;
        st = take_frame(sc, who[i], type, from, pl, len, e);
        if (st)
            return st;
    }
    return RG_OK;
}

/* A rank but 0: its part to rank 0, then the whole back (frames of other kinds between are
 * taken as they come). */
static rg_status gather_from_root(struct rg_sc *sc, const void *mine, size_t len, void *all,
                                  double deadline, struct rg_err *e)
{
    int type, from;
    void *pl;
    uint32_t got;
    if (rg__sc_send(sc, sc->fd[0], SC_GATHER, mine, (uint32_t)len, deadline))
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank %d: cannot send to rank 0", sc->rank);
    for (;;) {
        rg_status st = rg__sc_recv(sc, sc->fd[0], 0, deadline, &type, &from, &pl, &got, e);
        if (st)
            return st;
        if (type != SC_GATHER_ALL) {
            st = take_frame(sc, 0, type, from, pl, got, e);
            if (st)
                return st;
            continue;
        }
        if (got != len * (size_t)sc->size) {
            free(pl);
            return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                               "rank %d: side channel: rank 0 sent %u bytes, expected %zu",
                               sc->rank, got, len * (size_t)sc->size);
        }
        memcpy(all, pl, got);
        free(pl);
        return RG_OK;
    }
}

/* Rank 0: the parts that have come (take_frame keeps a gather part as early), into all. */
static rg_status take_early(struct rg_sc *sc, size_t len, void *all, char *seen, int *have,
                            struct rg_err *e)
{
    for (int r = 1; r < sc->size; r++) {
        if (seen[r] || !sc->early[r])
            continue;
        if (sc->early_len[r] != len)
            return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                               "rank 0: side channel: rank %d sent %u bytes, expected %zu", r,
                               sc->early_len[r], len);
        memcpy((char *)all + (size_t)r * len, sc->early[r], len);
        free(sc->early[r]);
        sc->early[r] = NULL;
        seen[r] = 1;
        (*have)++;
    }
    return RG_OK;
}

/* Rank 0 at the deadline: name who never came, the stopped or lost rank. */
static rg_status gather_late(const struct rg_sc *sc, const char *seen, int have, struct rg_err *e)
{
    char missing[96] = "";
    size_t used = 0;
    for (int r = 1; r < sc->size && used + 8 < sizeof(missing); r++)
        if (!seen[r])
            used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%d",
                                     used ? ", " : "", r);
    return rg__err_set(e, RG_ERR_TIMEOUT,
                       "rank 0: side channel: %d of %d ranks arrived before the deadline; "
                       "waiting on rank(s) %s",
                       have, sc->size, missing);
}

/* Rank 0: one part per peer in whatever order they come, then the whole to every peer. */
static rg_status gather_at_root(struct rg_sc *sc, size_t len, void *all, double deadline,
                                struct rg_err *e)
{
    int have = 1, type, from;
    void *pl;
    uint32_t got;
    char seen[RG_MAX_RANKS] = {0};
    seen[0] = 1;
    for (;;) {
        rg_status st = take_early(sc, len, all, seen, &have, e);
        if (st)
            return st;
        if (have == sc->size)
            break;
        struct pollfd p[RG_MAX_RANKS];
        int who[RG_MAX_RANKS], n = 0;
        for (int r = 1; r < sc->size; r++)
            if (!seen[r]) {
                p[n] = (struct pollfd){.fd = sc->fd[r], .events = POLLIN};
                who[n++] = r;
            }
        int ms = rg__sc_ms_left(deadline);
        int pr = ms ? poll(p, (nfds_t)n, ms) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return gather_late(sc, seen, have, e);
        for (int i = 0; i < n; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            st = rg__sc_recv(sc, p[i].fd, who[i], deadline, &type, &from, &pl, &got, e);
            if (!st)
                st = take_frame(sc, who[i], type, from, pl, got, e);
            if (st)
                return st;
        }
    }
    for (int r = 1; r < sc->size; r++)
        if (rg__sc_send(sc, sc->fd[r], SC_GATHER_ALL, all, (uint32_t)(len * (size_t)sc->size),
                        deadline))
            return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: cannot send to rank %d", r);
    return RG_OK;
}

rg_status rg__sc_allgather(struct rg_sc *sc, const void *mine, size_t len, void *all,
                           double deadline, struct rg_err *e)
{
    if (len == 0 || len * (size_t)sc->size > RG_SC_MAX_PAYLOAD)
        return rg__err_set(e, RG_ERR_INVALID, "rank %d: allgather of %zu bytes per rank", sc->rank,
                           len);
    memcpy((char *)all + (size_t)sc->rank * len, mine, len);
    if (sc->size == 1)
        return RG_OK;
    if (sc->aborted)
        return rg__sc_check(sc, e);
    return sc->rank != 0 ? gather_from_root(sc, mine, len, all, deadline, e)
                         : gather_at_root(sc, len, all, deadline, e);
}

void rg__sc_abort(struct rg_sc *sc, const char *reason)
{
    if (!sc || sc->aborted)
        return;
    sc->aborted = 1;
    snprintf(sc->abort_msg, sizeof(sc->abort_msg), "%s", reason);
    double deadline = rg__now() + 1.0;
    for (int r = 0; r < RG_MAX_RANKS; r++)
        if (sc->fd[r] >= 0)
            rg__sc_send(sc, sc->fd[r], SC_ABORT, sc->abort_msg, (uint32_t)strlen(sc->abort_msg),
                        deadline);
}

rg_status rg__sc_barrier(struct rg_sc *sc, double deadline, struct rg_err *e)
{
    char one = 1, all[RG_MAX_RANKS];
    return rg__sc_allgather(sc, &one, 1, all, deadline, e);
}
