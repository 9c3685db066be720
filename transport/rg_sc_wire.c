/* SPDX-License-Identifier: MIT */
/*
 * The side channel's frames: a fixed header (magic, version, type, sender, length) and a
 * bounded payload, written and read against a deadline. Nothing a peer sends is believed
 * before its header checks out, and its abort reason is made one printable line.
 */
#include "rg_sc_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int rg__sc_ms_left(double deadline)
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
            int ms = rg__sc_ms_left(deadline);
            if (ms == 0 || poll(&p, 1, ms) <= 0)
                return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

/*
 * Reads exactly len bytes before the deadline. Returns 0, -1 when the deadline passed, -2 when
 * the peer closed (EOF, or a reset: a close with our bytes unread is a reset, and is the same
 * news), -3 on any other error (errno says which).
 */
static int read_full(int fd, void *buf, size_t len, double deadline)
{
    size_t off = 0;
    while (off < len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ms = rg__sc_ms_left(deadline);
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
        if (r == 0 || (r < 0 && (errno == ECONNRESET || errno == EPIPE)))
            return -2;
        if (r < 0)
            return -3;
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

int rg__sc_send(struct rg_sc *sc, int fd, int type, const void *p, uint32_t len, double deadline)
{
    return send_frame_from(fd, type, sc->rank, p, len, deadline);
}

/*
 * A peer's abort reason is its bytes, not ours: it ends up in error messages, logs and
 * terminals, so every control byte (a newline, an escape sequence) becomes '?' and the one
 * line stays one line.
 */
static void keep_reason(struct rg_sc *sc, const char *reason)
{
    size_t i = 0;
    for (; reason[i] && i + 1 < sizeof(sc->abort_msg); i++) {
        unsigned char ch = (unsigned char)reason[i];
        sc->abort_msg[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    sc->abort_msg[i] = '\0';
}

void rg__sc_relay_abort(struct rg_sc *sc, int from, const char *reason)
{
    if (sc->aborted)
        return;
    sc->aborted = 1;
    keep_reason(sc, reason ? reason : "(no reason)");
    if (sc->rank != 0)
        return;
    double deadline = rg__now() + 1.0;
    for (int r = 1; r < sc->size; r++)
        if (r != from && sc->fd[r] >= 0)
            send_frame_from(sc->fd[r], SC_ABORT, from, sc->abort_msg,
                            (uint32_t)strlen(sc->abort_msg), deadline);
}

rg_status rg__sc_recv(struct rg_sc *sc, int fd, int who, double deadline, int *type_p, int *from_p,
                      void **payload_p, uint32_t *len_p, struct rg_err *e)
{
    struct sc_hdr h;
    int r = read_full(fd, &h, sizeof(h), deadline);
    if (r == -2) {
        /* The hub tells the others who went, before its own failure closes their sockets
         * too: otherwise every survivor blames rank 0 for the death of another. */
        if (sc->rank == 0 && who > 0) {
            char why[96];
            snprintf(why, sizeof(why),
                     "rank %d closed the side channel without a word (it exited or was killed)",
                     who);
            rg__sc_relay_abort(sc, who, why);
        }
        return rg__err_set(e, RG_ERR_PEER_ABORT,
                           "rank %d: peer rank %d is gone: it closed the side channel without a "
                           "word (it exited or was killed)",
                           sc->rank, who);
    }
    if (r == -3)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank %d: side channel from rank %d: read: %s",
                           sc->rank, who, strerror(errno));
    if (r)
        return rg__err_set(
            e, RG_ERR_TIMEOUT,
            "rank %d: side channel: no message from rank %d before the deadline%s", sc->rank, who,
            who == 0 && sc->rank ? " (rank 0 answers once every rank has come)" : "");
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
    if (type < SC_HELLO || type > SC_AGAIN)
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
            const char *why = r == -3 ? strerror(errno) : NULL;
            free(p);
            return rg__err_set(e,
                               why       ? RG_ERR_SIDE_CHANNEL
                               : r == -2 ? RG_ERR_PEER_ABORT
                                         : RG_ERR_TIMEOUT,
                               "rank %d: side channel: rank %d stopped mid-message%s%s", sc->rank,
                               who, why ? ": " : "", why ? why : "");
        }
        ((char *)p)[len] = '\0';
    }
    *type_p = type;
    *from_p = from;
    *payload_p = p;
    *len_p = len;
    return RG_OK;
}
