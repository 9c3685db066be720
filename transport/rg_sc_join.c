/* SPDX-License-Identifier: MIT */
/*
 * The side channel's making: a star around rank 0, joined by proving the job's secret both
 * ways before anything else is read or sent. Rank 0 sends each new connection a random
 * challenge (nothing about the job); the peer answers with its rank and size, a challenge of
 * its own and HMAC-SHA256(secret, both challenges, rank, size); rank 0 checks it and only then
 * counts the rank. Once all have joined, rank 0's welcome carries its own HMAC over the same
 * values, so a rank never takes a squatter on the port for rank 0. A connection that fails its
 * proof is refused and logged with its address, and rank 0 goes on accepting the job's ranks
 * until its deadline.
 */
#include "rg_sc_wire.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SC_PENDING 16  /* unproven connections rank 0 holds at once */
#define SC_PROOF_S 5.0 /* how long one may take to prove the secret */

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

/* What each side proves (rg_proof_mac): the label keeps a hello's proof from passing as a
 * welcome's, and either from passing in the runners' clock exchange. */
static void sc_mac(const char *secret, const char *label, const uint8_t *root_nonce,
                   const uint8_t *peer_nonce, int rank, int size, uint8_t *mac)
{
    rg_proof_mac(secret, label, root_nonce, peer_nonce, rank, size, SC_VERSION, mac);
}

/* One connection that has not yet proven the secret (rank 0's side). */
struct sc_pending {
    int fd;
    double until;
    uint8_t nonce[SC_NONCE];
    uint8_t buf[sizeof(struct sc_hdr) + sizeof(struct sc_hello)];
    size_t got;
    char addr[96];
};

static void drop_pending(struct sc_pending *p, int *n, int i, const char *coord, const char *why)
{
    /* A stranger's refusal does not stop the job: it is logged for whoever runs it. */
    fprintf(stderr, "railguard: rank 0: side channel %s: refused a connection from %s: %s\n", coord,
            p[i].addr, why);
    close(p[i].fd);
    p[i] = p[--*n];
}

/*
 * Hangs up on a connection for its time or for room, not for what it sent: it hears SC_AGAIN
 * first, so a rank that was only slow (valgrind, a loaded emulated CPU) dials again instead of
 * failing the job. What it sent meanwhile is read away first: a close with bytes unread is a
 * reset, which may discard the frame before the rank reads it.
 */
static void hang_up(struct rg_sc *sc, struct sc_pending *p, int *n, int i, const char *coord,
                    const char *why)
{
    char junk[512];
    for (int k = 0; k < 32 && read(p[i].fd, junk, sizeof(junk)) > 0; k++)
        ; /* bounded: a stranger that never stops writing gets its reset */
    rg__sc_send(sc, p[i].fd, SC_AGAIN, NULL, 0, rg__now() + 0.5);
    drop_pending(p, n, i, coord, why); /* logged before the close: the peer's EOF follows it */
}

/* Reads what pending connection i sent. Returns a rank it proved, -1 to keep waiting, -2 when
 * it was refused (and dropped). */
static int take_pending(struct rg_sc *sc, struct sc_pending *p, int *n, int i, const char *coord)
{
    struct sc_pending *q = &p[i];
    ssize_t r = read(q->fd, q->buf + q->got, sizeof(q->buf) - q->got);
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return -1;
    if (r <= 0) {
        drop_pending(p, n, i, coord,
                     r == 0 ? "it closed before proving the job secret"
                            : "read error before it proved the job secret");
        return -2;
    }
    q->got += (size_t)r;
    /* The header is judged as soon as it is whole, so junk is refused at once. */
    if (q->got >= sizeof(struct sc_hdr)) {
        struct sc_hdr h;
        memcpy(&h, q->buf, sizeof(h));
        if (ntohl(h.magic) != SC_MAGIC || ntohs(h.version) != SC_VERSION ||
            ntohs(h.type) != SC_HELLO || ntohl(h.len) != sizeof(struct sc_hello)) {
            drop_pending(p, n, i, coord,
                         ntohl(h.magic) != SC_MAGIC ? "not a railguard side channel (bad magic)"
                         : ntohs(h.version) != SC_VERSION ? "another side-channel version"
                                                          : "no hello where one was due");
            return -2;
        }
    }
    if (q->got < sizeof(q->buf))
        return -1;
    struct sc_hdr h;
    struct sc_hello hl;
    uint8_t want[SC_MAC];
    memcpy(&h, q->buf, sizeof(h));
    memcpy(&hl, q->buf + sizeof(h), sizeof(hl));
    int from = (int)ntohl((uint32_t)h.from), rank = (int)ntohl((uint32_t)hl.rank),
        size = (int)ntohl((uint32_t)hl.size);
    /* The proof first: a stranger learns nothing from which field it got wrong. */
    sc_mac(sc->secret, "railguard-sc hello", q->nonce, hl.nonce, rank, size, want);
    if (CRYPTO_memcmp(want, hl.mac, SC_MAC) != 0) {
        drop_pending(p, n, i, coord, "wrong proof of the job secret");
        return -2;
    }
    if (rank != from || rank < 1 || rank >= sc->size || size != sc->size) {
        char why[120];
        snprintf(why, sizeof(why), "it proved the secret as rank %d of %d; expected 1..%d of %d",
                 rank, size, sc->size - 1, sc->size);
        drop_pending(p, n, i, coord, why);
        return -2;
    }
    if (sc->fd[rank] >= 0) {
        char why[80];
        snprintf(why, sizeof(why), "rank %d has joined already", rank);
        drop_pending(p, n, i, coord, why);
        return -2;
    }
    sc->fd[rank] = q->fd;
    memcpy(sc->nonce_peer[rank], hl.nonce, SC_NONCE);
    memcpy(sc->nonce_root[rank], q->nonce, SC_NONCE);
    p[i] = p[--*n];
    return rank;
}

static void accept_one(struct rg_sc *sc, int lfd, struct sc_pending *p, int *n, const char *coord)
{
    struct sockaddr_storage sa;
    socklen_t sl = sizeof(sa);
    int fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    if (*n == SC_PENDING) /* full: the oldest unproven one makes room (strangers can't crowd out) */
        hang_up(sc, p, n, 0, coord, "too many connections waiting to prove the job secret");
    struct sc_pending *q = &p[(*n)++];
    *q = (struct sc_pending){.fd = fd, .until = rg__now() + SC_PROOF_S};
    char host[64] = "?", port[16] = "?";
    getnameinfo((struct sockaddr *)&sa, sl, host, sizeof(host), port, sizeof(port),
                NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(q->addr, sizeof(q->addr), "%s port %s", host, port);
    set_nodelay(fd);
    if (rg_proof_random(q->nonce, SC_NONCE) ||
        rg__sc_send(sc, fd, SC_CHALLENGE, q->nonce, SC_NONCE, rg__now() + 1.0))
        drop_pending(p, n, *n - 1, coord, "could not send it a challenge");
}

static rg_status open_root(struct rg_sc *sc, struct addrinfo *ai, const char *coord,
                           double deadline, struct rg_err *e)
{
    int lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sc_pending pend[SC_PENDING];
    int npend = 0;
    rg_status st = RG_OK;
    if (lfd < 0)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: socket: %s", strerror(errno));
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, RG_MAX_RANKS)) {
        st = rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: cannot listen on %s: %s%s", coord,
                         strerror(errno),
                         errno == EADDRINUSE ? " (another job or program holds the port)" : "");
        goto out;
    }
    for (int joined = 1; joined < sc->size;) {
        struct pollfd pf[SC_PENDING + 1] = {{.fd = lfd, .events = POLLIN}};
        double now = rg__now(), wake = deadline;
        for (int i = 0; i < npend; i++) {
            pf[i + 1] = (struct pollfd){.fd = pend[i].fd, .events = POLLIN};
            if (pend[i].until < wake)
                wake = pend[i].until;
        }
        if (now >= deadline) {
            st = rg__err_set(e, RG_ERR_TIMEOUT,
                             "rank 0: only %d of %d ranks joined at %s before the deadline", joined,
                             sc->size, coord);
            goto out;
        }
        int pr = poll(pf, (nfds_t)npend + 1, rg__sc_ms_left(wake));
        if (pr < 0 && errno != EINTR) {
            st = rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: poll: %s", strerror(errno));
            goto out;
        }
        int had = npend;
        /* Backwards, since a dropped entry takes the last one's place. */
        for (int i = had - 1; i >= 0; i--) {
            if (pr > 0 && (pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
                if (take_pending(sc, pend, &npend, i, coord) >= 0)
                    joined++;
            } else if (rg__now() >= pend[i].until) {
                hang_up(sc, pend, &npend, i, coord, "it sent no proof of the job secret in time");
            }
        }
        if (pr > 0 && (pf[0].revents & POLLIN))
            accept_one(sc, lfd, pend, &npend, coord);
    }
    /* Everyone is here: release them together, each with rank 0's own proof. */
    for (int r = 1; r < sc->size; r++) {
        struct sc_hello h = {0, (int32_t)htonl((uint32_t)sc->size), {0}, {0}};
        sc_mac(sc->secret, "railguard-sc welcome", sc->nonce_root[r], sc->nonce_peer[r], r,
               sc->size, h.mac);
        if (rg__sc_send(sc, sc->fd[r], SC_HELLO, &h, sizeof(h), deadline)) {
            st = rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank 0: cannot greet rank %d", r);
            goto out;
        }
    }
out:
    for (int i = 0; i < npend; i++)
        close(pend[i].fd);
    close(lfd);
    return st;
}

static rg_status prove_to_root(struct rg_sc *sc, int fd, const char *coord, double deadline,
                               bool *dropped, struct rg_err *e);

static rg_status open_peer(struct rg_sc *sc, struct addrinfo *ai, const char *coord,
                           double deadline, struct rg_err *e)
{
    int fd = -1, tries = 0;
    /*
     * The MAC once before any connection: the first call into libcrypto loads and (under
     * valgrind, or a slow emulated CPU) translates its code, which took more than rank 0's
     * SC_PROOF_S between its challenge and this rank's answer. Then only the MAC itself is
     * timed.
     */
    uint8_t warm[SC_MAC], zero[SC_NONCE] = {0};
    sc_mac(sc->secret, "railguard-sc warm-up", zero, zero, sc->rank, sc->size, warm);
again:
    /* Rank 0 may not be listening yet: retry until the deadline. */
    for (;;) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank %d: socket: %s", sc->rank,
                               strerror(errno));
        tries++;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        int err = errno;
        close(fd);
        if (rg__now() > deadline)
            return rg__err_set(e, RG_ERR_TIMEOUT,
                               "rank %d: cannot reach rank 0 at %s: %d tries until the "
                               "deadline, the last: %s",
                               sc->rank, coord, tries, strerror(err));
        usleep(20000);
    }
    set_nodelay(fd);
    bool dropped = false;
    rg_status st = prove_to_root(sc, fd, coord, deadline, &dropped, e);
    /* Rank 0 hung up before this rank could answer (it drops a connection that takes longer
     * than SC_PROOF_S, or has no room for it): a slow start, not a failure while the deadline
     * allows another try. */
    if (st && dropped && rg__now() + 0.05 < deadline) {
        close(fd);
        rg__err_clear(e);
        usleep(20000);
        goto again;
    }
    if (st)
        close(fd);
    else
        sc->fd[0] = fd;
    return st;
}

/*
 * A rank's half of the handshake on its connection to rank 0: take the challenge, answer with
 * the proof, and check rank 0's welcome. Everything read here may come from a squatter on the
 * port, so nothing is believed before the welcome's proof.
 */
static rg_status prove_to_root(struct rg_sc *sc, int fd, const char *coord, double deadline,
                               bool *dropped, struct rg_err *e)
{
    int type, from;
    void *pl;
    uint32_t len;
    rg_status st = rg__sc_recv(sc, fd, 0, deadline, &type, &from, &pl, &len, e);
    *dropped = st == RG_ERR_PEER_ABORT; /* closed before its challenge: no room for us yet */
    if (st)
        return st;
    uint8_t root_nonce[SC_NONCE];
    if (type != SC_CHALLENGE || len != SC_NONCE) {
        free(pl);
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: the process at %s sent frame type %d (%u bytes) where a "
                           "challenge was due: not this job's rank 0",
                           sc->rank, coord, type, len);
    }
    memcpy(root_nonce, pl, SC_NONCE);
    free(pl);
    struct sc_hello h = {
        (int32_t)htonl((uint32_t)sc->rank), (int32_t)htonl((uint32_t)sc->size), {0}, {0}};
    if (rg_proof_random(h.nonce, SC_NONCE))
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank %d: getrandom: %s", sc->rank,
                           strerror(errno));
    sc_mac(sc->secret, "railguard-sc hello", root_nonce, h.nonce, sc->rank, sc->size, h.mac);
    if (rg__sc_send(sc, fd, SC_HELLO, &h, sizeof(h), deadline)) {
        *dropped = errno == EPIPE || errno == ECONNRESET;
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL, "rank %d: cannot greet rank 0 at %s: %s",
                           sc->rank, coord, strerror(errno));
    }
    st = rg__sc_recv(sc, fd, 0, deadline, &type, &from, &pl, &len, e);
    if (st == RG_ERR_PEER_ABORT) {
        /* Said better than "closed the side channel": why rank 0 would hang up now. */
        rg__err_clear(e);
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: rank 0 at %s closed the connection instead of welcoming "
                           "this rank: it did not take this rank's proof of the job secret (is "
                           "the secret the same on every rank?) or its rank",
                           sc->rank, coord);
    }
    if (st)
        return st;
    /* Rank 0 hangs up for time or room only after its challenge: SC_AGAIN comes here or not
     * at all (before a challenge it is a stranger's frame, refused above). */
    if (type == SC_AGAIN) {
        free(pl);
        *dropped = true;
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: rank 0 at %s hung up before this rank proved the job "
                           "secret: too slow, or no room",
                           sc->rank, coord);
    }
    struct sc_hello w;
    uint8_t want[SC_MAC];
    if (type != SC_HELLO || from != 0 || len != sizeof(w)) {
        free(pl);
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: rank 0 answered the greeting with frame type %d", sc->rank,
                           type);
    }
    memcpy(&w, pl, sizeof(w));
    free(pl);
    sc_mac(sc->secret, "railguard-sc welcome", root_nonce, h.nonce, sc->rank, sc->size, want);
    if (CRYPTO_memcmp(want, w.mac, SC_MAC) != 0 || (int)ntohl((uint32_t)w.size) != sc->size)
        return rg__err_set(e, RG_ERR_SIDE_CHANNEL,
                           "rank %d: the process at %s did not prove the job secret: not this "
                           "job's rank 0",
                           sc->rank, coord);
    return RG_OK;
}

rg_status rg__sc_open(const char *coordinator, const char *secret, int rank, int size,
                      double deadline, struct rg_sc **sc_p, struct rg_err *e)
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
    sc->secret = secret;
    for (int i = 0; i < RG_MAX_RANKS; i++)
        sc->fd[i] = -1;
    if (size == 1)
        goto done;
    if (!secret || !secret[0]) {
        st = rg__err_set(e, RG_ERR_CONFIG,
                         "rank %d: no job secret: set RG_SECRET or RG_SECRET_FILE, the same on "
                         "every rank (railguard run makes one for the ranks it starts)",
                         rank);
        goto err;
    }
    st = resolve(coordinator, rank, &ai, e);
    if (st)
        goto err;
    st = rank == 0 ? open_root(sc, ai, coordinator, deadline, e)
                   : open_peer(sc, ai, coordinator, deadline, e);
    freeaddrinfo(ai);
    if (st)
        goto err;
done:
    sc->secret = NULL; /* the caller's, and needed no longer */
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
