/* SPDX-License-Identifier: MIT */
/* The TCP side channel: a star around rank 0 with framed, bounded, validated messages. */
#include "rg_sidechan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SC_MAGIC 0x52475343u /* "RGSC" */
#define SC_VERSION 1

enum sc_type { SC_HELLO = 1, SC_GATHER = 2, SC_GATHER_ALL = 3, SC_ABORT = 4 };

struct sc_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    int32_t from;
    uint32_t len;
};

struct sc_hello {
    int32_t rank;
    int32_t size;
};

struct rg_sc {
    int rank, size;
    int fd[RG_MAX_RANKS]; /* rank 0: one per peer; others: fd[0] is rank 0 */
    /* Rank 0 only: a GATHER a peer sent early, while rank 0 was still in the data path. */
    void *early[RG_MAX_RANKS];
    uint32_t early_len[RG_MAX_RANKS];
    int aborted;
    char abort_msg[256];
};

static int ms_left(double deadline)
{
    double left = deadline - rg__now();
    if (left <= 0)
        return 0;
    return left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
}

/* Writes all of buf before the deadline; MSG_NOSIGNAL so a dead peer is an error, not SIGPIPE. */
static int write_full(int fd, const void *buf, size_t len, double deadline)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(fd, (const char *)buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int ms = ms_left(deadline);
            if (ms == 0 || poll(&p, 1, ms) <= 0)
                return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

/* Reads exactly len bytes before the deadline. Returns 0, -1 on error or timeout, -2 on EOF. */
static int read_full(int fd, void *buf, size_t len, double deadline)
{
    size_t off = 0;
    while (off < len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ms = ms_left(deadline);
        if (ms == 0)
            return -1;
        int pr = poll(&p, 1, ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return -1;
        ssize_t r = read(fd, (char *)buf + off, len - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return -2;
        if (r < 0)
            return -1;
        off += (size_t)r;
    }
    return 0;
}

/* One frame; `from` is the rank it speaks for (rank 0 relays others' aborts). */
static int send_frame_from(int fd, int type, int from, const void *p, uint32_t len, double deadline)
{
    struct sc_hdr h = {htonl(SC_MAGIC), htons(SC_VERSION), htons((uint16_t)type),
                       (int32_t)htonl((uint32_t)from), htonl(len)};
    if (write_full(fd, &h, sizeof(h), deadline))
        return -1;
    return len ? write_full(fd, p, len, deadline) : 0;
}

static int send_frame(struct rg_sc *sc, int fd, int type, const void *p, uint32_t len,
                      double deadline)
{
    return send_frame_from(fd, type, sc->rank, p, len, deadline);
}

/*
 * Reads one frame from peer `who` and validates its header. On success *payload_p is a
 * malloc'd buffer (NULL for an empty payload) the caller frees.
 */
static rg_status recv_frame(struct rg_sc *sc, int fd, int who, double deadline, int *type_p,
                            int *from_p, void **payload_p, uint32_t *len_p, struct rg_err *e)
{
    struct sc_hdr h;
    int r = read_full(fd, &h, sizeof(h), deadline);
    if (r == -2)
        return rg__err_set(e, RG_ERR_PEER_ABORT,
                           "rank %d: peer rank %d aborted: it closed the side channel", sc->rank,
                           who);
    if (r)
        return rg__err_set(e, RG_ERR_TIMEOUT,
                           "rank %d: side channel: no message from rank %d before the deadline",
                           sc->rank, who);
    uint32_t magic = ntohl(h.magic), len = ntohl(h.len);
    int type = ntohs(h.type), from = (int)ntohl((uint32_t)h.from);
    if (magic != SC_MAGIC)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: side channel from rank %d: bad magic 0x%08x", sc->rank, who,
                           magic);
    if (ntohs(h.version) != SC_VERSION)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: side channel from rank %d: protocol version %u, expected %d",
                           sc->rank, who, ntohs(h.version), SC_VERSION);
    if (type < SC_HELLO || type > SC_ABORT)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: side channel from rank %d: unknown frame type %d", sc->rank,
                           who, type);
    if (from < 0 || from >= sc->size)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: side channel from rank %d: sender field %d outside 0..%d",
                           sc->rank, who, from, sc->size - 1);
    if (len > RG_SC_MAX_PAYLOAD)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: side channel from rank %d: length %u exceeds %u", sc->rank,
                           who, len, RG_SC_MAX_PAYLOAD);
    void *p = NULL;
    if (len) {
        p = malloc(len + 1);
        if (!p)
            return rg__err_set(e, RG_ERR_NOMEM, "rank %d: side channel: no memory", sc->rank);
        r = read_full(fd, p, len, deadline);
        if (r) {
            free(p);
            return rg__err_set(e, r == -2 ? RG_ERR_PEER_ABORT : RG_ERR_TIMEOUT,
                               "rank %d: side channel: rank %d stopped mid-message", sc->rank, who);
        }
        ((char *)p)[len] = '\0';
    }
    *type_p = type;
    *from_p = from;
    *payload_p = p;
    *len_p = len;
    return RG_OK;
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static rg_status resolve(const char *coordinator, int rank, struct addrinfo **ai_p,
                         struct rg_err *e)
{
    char host[256];
    const char *colon = strrchr(coordinator, ':');
    if (!colon || colon == coordinator || !colon[1] ||
        (size_t)(colon - coordinator) >= sizeof(host))
        return rg__err_set(e, RG_ERR_CONFIG, "rank %d: coordinator '%s' is not host:port", rank,
                           coordinator);
    memcpy(host, coordinator, (size_t)(colon - coordinator));
    host[colon - coordinator] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    int rc = getaddrinfo(host, colon + 1, &hints, ai_p);
    if (rc)
        return rg__err_set(e, RG_ERR_CONFIG, "rank %d: coordinator '%s': %s", rank, coordinator,
                           gai_strerror(rc));
    return RG_OK;
}

static rg_status open_root(struct rg_sc *sc, struct addrinfo *ai, const char *coord,
                           double deadline, struct rg_err *e)
{
    int lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    rg_status st = RG_OK;
    if (lfd < 0)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: socket: %s", strerror(errno));
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, RG_MAX_RANKS)) {
        st = rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: cannot listen on %s: %s", coord,
                         strerror(errno));
        goto out;
    }
    for (int joined = 1; joined < sc->size;) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        int ms = ms_left(deadline);
        if (ms == 0 || poll(&p, 1, ms) <= 0) {
            st = rg__err_set(e, RG_ERR_TIMEOUT,
                             "rank 0: only %d of %d ranks joined at %s before the deadline", joined,
                             sc->size, coord);
            goto out;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        set_nodelay(fd);
        int type, from;
        void *pl = NULL;
        uint32_t len;
        st = recv_frame(sc, fd, -1, deadline, &type, &from, &pl, &len, e);
        if (st) {
            close(fd);
            goto out;
        }
        struct sc_hello h = {0, 0};
        if (type == SC_HELLO && len == sizeof(h))
            memcpy(&h, pl, sizeof(h));
        free(pl);
        int r = (int)ntohl((uint32_t)h.rank), sz = (int)ntohl((uint32_t)h.size);
        if (type != SC_HELLO || len != sizeof(h) || r != from || r < 1 || r >= sc->size ||
            sz != sc->size || sc->fd[r] >= 0) {
            close(fd);
            st = rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                             "rank 0: a peer at %s introduced itself as rank %d of %d; expected "
                             "a new rank 1..%d of %d",
                             coord, r, sz, sc->size - 1, sc->size);
            goto out;
        }
        sc->fd[r] = fd;
        joined++;
    }
    /* Everyone is here: release them together. */
    for (int r = 1; r < sc->size; r++) {
        struct sc_hello h = {0, (int32_t)htonl((uint32_t)sc->size)};
        if (send_frame(sc, sc->fd[r], SC_HELLO, &h, sizeof(h), deadline)) {
            st = rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: cannot greet rank %d", r);
            goto out;
        }
    }
out:
    close(lfd);
    return st;
}

static rg_status open_peer(struct rg_sc *sc, struct addrinfo *ai, const char *coord,
                           double deadline, struct rg_err *e)
{
    int fd = -1;
    /* Rank 0 may not be listening yet: retry until the deadline. */
    for (;;) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank %d: socket: %s", sc->rank,
                               strerror(errno));
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        int err = errno;
        close(fd);
        if (rg__now() > deadline)
            return rg__err_set(e, RG_ERR_TIMEOUT,
                               "rank %d: cannot reach rank 0 at %s before the deadline: %s",
                               sc->rank, coord, strerror(err));
        usleep(20000);
    }
    set_nodelay(fd);
    sc->fd[0] = fd;
    struct sc_hello h = {(int32_t)htonl((uint32_t)sc->rank), (int32_t)htonl((uint32_t)sc->size)};
    if (send_frame(sc, fd, SC_HELLO, &h, sizeof(h), deadline))
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank %d: cannot greet rank 0 at %s", sc->rank,
                           coord);
    int type, from;
    void *pl;
    uint32_t len;
    rg_status st = recv_frame(sc, fd, 0, deadline, &type, &from, &pl, &len, e);
    if (st)
        return st;
    free(pl);
    if (type != SC_HELLO || from != 0 || len != sizeof(h))
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: rank 0 answered the greeting "
                           "with frame type %d",
                           sc->rank, type);
    return RG_OK;
}

rg_status rg__sc_open(const char *coordinator, int rank, int size, double deadline,
                      struct rg_sc **sc_p, struct rg_err *e)
{
    struct addrinfo *ai = NULL;
    struct rg_sc *sc;
    rg_status st;

    if (size < 1 || size > RG_MAX_RANKS || rank < 0 || rank >= size)
        return rg__err_set(e, RG_ERR_INVALID, "rank %d of %d is outside 0..%d", rank, size,
                           RG_MAX_RANKS - 1);
    sc = calloc(1, sizeof(*sc));
    if (!sc)
        return rg__err_set(e, RG_ERR_NOMEM, "rank %d: no memory for the side channel", rank);
    sc->rank = rank;
    sc->size = size;
    for (int i = 0; i < RG_MAX_RANKS; i++)
        sc->fd[i] = -1;
    if (size == 1)
        goto done;
    st = resolve(coordinator, rank, &ai, e);
    if (st)
        goto err;
    st = rank == 0 ? open_root(sc, ai, coordinator, deadline, e)
                   : open_peer(sc, ai, coordinator, deadline, e);
    freeaddrinfo(ai);
    if (st)
        goto err;
done:
    *sc_p = sc;
    return RG_OK;
err:
    rg__sc_close(sc);
    return st;
}

void rg__sc_close(struct rg_sc *sc)
{
    if (!sc)
        return;
    for (int i = 0; i < RG_MAX_RANKS; i++) {
        if (sc->fd[i] >= 0)
            close(sc->fd[i]);
        free(sc->early[i]);
    }
    free(sc);
}

static rg_status note_abort(struct rg_sc *sc, int from, const char *reason, struct rg_err *e)
{
    if (!sc->aborted) {
        sc->aborted = 1;
        snprintf(sc->abort_msg, sizeof(sc->abort_msg), "%s", reason ? reason : "(no reason)");
        /* Rank 0 is the hub: everyone else hears of the abort through it. */
        if (sc->rank == 0) {
            double deadline = rg__now() + 1.0;
            for (int r = 1; r < sc->size; r++)
                if (r != from && sc->fd[r] >= 0)
                    send_frame_from(sc->fd[r], SC_ABORT, from, sc->abort_msg,
                                    (uint32_t)strlen(sc->abort_msg), deadline);
        }
    }
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
        rg_status st = recv_frame(sc, p[i].fd, who[i], rg__now() + 5.0, &type, &from, &pl, &len, e);
        if (st)
            return st;
        st = take_frame(sc, who[i], type, from, pl, len, e);
        if (st)
            return st;
    }
    return RG_OK;
}

rg_status rg__sc_allgather(struct rg_sc *sc, const void *mine, size_t len, void *all,
                           double deadline, struct rg_err *e)
{
    rg_status st;
    int type, from;
    void *pl;
    uint32_t got;

    if (len == 0 || len * (size_t)sc->size > RG_SC_MAX_PAYLOAD)
        return rg__err_set(e, RG_ERR_INVALID, "rank %d: allgather of %zu bytes per rank", sc->rank,
                           len);
    memcpy((char *)all + (size_t)sc->rank * len, mine, len);
    if (sc->size == 1)
        return RG_OK;
    if (sc->aborted)
        return rg__sc_check(sc, e);
    if (sc->rank != 0) {
        if (send_frame(sc, sc->fd[0], SC_GATHER, mine, (uint32_t)len, deadline))
            return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank %d: cannot send to rank 0", sc->rank);
        for (;;) {
            st = recv_frame(sc, sc->fd[0], 0, deadline, &type, &from, &pl, &got, e);
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
    /* Rank 0: collect one part per peer in whatever order they come, then send the whole. */
    int have = 1;
    char seen[RG_MAX_RANKS] = {0};
    seen[0] = 1;
    while (have < sc->size) {
        for (int r = 1; r < sc->size; r++) {
            if (seen[r] || !sc->early[r])
                continue;
            if (sc->early_len[r] != len) {
                return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                                   "rank 0: side channel: rank %d sent %u bytes, expected %zu", r,
                                   sc->early_len[r], len);
            }
            memcpy((char *)all + (size_t)r * len, sc->early[r], len);
            free(sc->early[r]);
            sc->early[r] = NULL;
            seen[r] = 1;
            have++;
        }
        if (have == sc->size)
            break;
        struct pollfd p[RG_MAX_RANKS];
        int who[RG_MAX_RANKS], n = 0;
        for (int r = 1; r < sc->size; r++)
            if (!seen[r]) {
                p[n].fd = sc->fd[r];
                p[n].events = POLLIN;
                p[n].revents = 0;
                who[n++] = r;
            }
        int ms = ms_left(deadline);
        int pr = ms ? poll(p, (nfds_t)n, ms) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return rg__err_set(e, RG_ERR_TIMEOUT,
                               "rank 0: side channel: %d of %d ranks arrived before the deadline",
                               have, sc->size);
        for (int i = 0; i < n; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            st = recv_frame(sc, p[i].fd, who[i], deadline, &type, &from, &pl, &got, e);
            if (st)
                return st;
            st = take_frame(sc, who[i], type, from, pl, got, e);
            if (st)
                return st;
        }
    }
    for (int r = 1; r < sc->size; r++)
        if (send_frame(sc, sc->fd[r], SC_GATHER_ALL, all, (uint32_t)(len * (size_t)sc->size),
                       deadline))
            return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: cannot send to rank %d", r);
    return RG_OK;
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
            send_frame(sc, sc->fd[r], SC_ABORT, sc->abort_msg, (uint32_t)strlen(sc->abort_msg),
                       deadline);
}

rg_status rg__sc_barrier(struct rg_sc *sc, double deadline, struct rg_err *e)
{
    char one = 1, all[RG_MAX_RANKS];
    return rg__sc_allgather(sc, &one, 1, all, deadline, e);
}
