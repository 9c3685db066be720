/* SPDX-License-Identifier: MIT */
/*
 * One clock for an external launch: how far each rank's CLOCK_MONOTONIC is from rank 0's,
 * measured by the ranks' runners before their workers start, so `railguard report` can place
 * every rank's calls, faults and verdict on one timeline though the ranks ran on several hosts.
 *
 * Where: the coordinator address the launch already names (rank 0's host and port). Rank 0's
 * runner listens there first; once every rank was measured (or the deadline passed) it closes
 * the port, and only then releases the ranks, so a transport that binds or dials that port
 * next never meets the clock. Peers close their end first: the port is left with no TIME_WAIT
 * on rank 0's side.
 *
 * Who: the job's secret is proven both ways before anything is believed, as the reference
 * side channel does, under labels of its own (a proof made here is no proof there, nor back):
 * rank 0 sends a random challenge; the rank answers with its rank, the size, a challenge of its
 * own and HMAC-SHA256(secret, "railguard-clock hello" | both challenges | rank | size |
 * version); rank 0 answers with its own HMAC under "railguard-clock welcome". A stranger is
 * refused and named on stderr; rank 0 goes on until its deadline.
 *
 * How: rank 0 sends the rank RG_CLOCK_ROUNDS pings and stamps each send (t1) and answer (t4);
 * the rank stamps its answer (t). Its offset is t - (t1 + t4) / 2 from the round of least
 * delay, within +-(t4 - t1) / 2 whatever the delay's split between the two ways (NTP's bound).
 * Rank 0 then sends each rank its own offset. Drift over a scenario (seconds, ppm) is not
 * corrected: the bound says what was measured at the start.
 *
 * Frames: a 16-byte header (magic, version, type, the sender's rank, the payload's length) and
 * a payload of the one length its type has, every field in network order. Anything else ends
 * the exchange with that peer, never the run: a rank that was not measured says why.
 */
#include "launch/rg_launch.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <endian.h>
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
#include <time.h>
#include <unistd.h>

#define CK_MAGIC 0x5247434bu /* "RGCK" */
#define CK_VERSION 1
#define CK_NONCE 32
#define CK_MAC 32
#define CK_PENDING 16  /* unproven connections rank 0 holds at once */
#define CK_PROOF_S 5.0 /* how long one may take to prove the secret */
#define CK_ROUND_S 2.0 /* one ping's answer */

enum ck_type { CK_CHALLENGE = 1, CK_HELLO, CK_WELCOME, CK_PING, CK_PONG, CK_RESULT };

struct ck_hdr {
    uint32_t magic;
    uint16_t version, type;
    int32_t from;
    uint32_t len;
};

struct ck_hello {
    int32_t rank, size;
    uint8_t nonce[CK_NONCE];
    uint8_t mac[CK_MAC];
};

struct ck_pong {
    uint32_t seq, pad;
    int64_t t_ns;
};

/* rounds 0: rank 0 did not measure this rank (a round failed), offset and err unset. */
struct ck_result {
    int64_t offset_ns, err_ns;
    uint32_t rounds, pad;
};

/* The one length each type's payload has. */
static uint32_t ck_len(int type)
{
    switch (type) {
    case CK_CHALLENGE:
        return CK_NONCE;
    case CK_HELLO:
        return sizeof(struct ck_hello);
    case CK_WELCOME:
        return CK_MAC;
    case CK_PING:
        return 8;
    case CK_PONG:
        return sizeof(struct ck_pong);
    case CK_RESULT:
        return sizeof(struct ck_result);
    }
    return UINT32_MAX;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int ms_left(double deadline)
{
    double left = deadline - rg_now_s();
    return left <= 0 ? 0 : left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
}

/* All of buf, or all of len bytes into buf, before the deadline: 0, else -1 (EOF too). */
static int io_full(int fd, void *buf, size_t len, double deadline, bool out)
{
    for (size_t off = 0; off < len;) {
        struct pollfd p = {.fd = fd, .events = out ? POLLOUT : POLLIN};
        int pr = poll(&p, 1, ms_left(deadline));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return -1;
        ssize_t n = out ? send(fd, (char *)buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(fd, (char *)buf + off, len - off, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

static int send_frame(int fd, int type, int from, const void *p, double deadline)
{
    uint8_t buf[sizeof(struct ck_hdr) + sizeof(struct ck_hello)];
    struct ck_hdr h = {htonl(CK_MAGIC), htons(CK_VERSION), htons((uint16_t)type),
                       (int32_t)htonl((uint32_t)from), htonl(ck_len(type))};
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), p, ck_len(type));
    return io_full(fd, buf, sizeof(h) + ck_len(type), deadline, true);
}

/* NULL when the header is a frame of `want` (any type when 0) from `from` (any when -1). */
static const char *hdr_problem(const struct ck_hdr *h, int want, int from)
{
    int type = ntohs(h->type);
    if (ntohl(h->magic) != CK_MAGIC)
        return "not railguard's clock (bad magic)";
    if (ntohs(h->version) != CK_VERSION)
        return "another version of railguard's clock";
    if (want ? type != want : ck_len(type) == UINT32_MAX)
        return "a frame of the wrong type";
    if (ntohl(h->len) != ck_len(type))
        return "a frame of the wrong length";
    if (from >= 0 && (int)ntohl((uint32_t)h->from) != from)
        return "a frame from the wrong rank";
    return NULL;
}

/* Reads one frame of type `want` into p (its length). NULL, or why not. */
static const char *recv_frame(int fd, int want, int from, void *p, double deadline)
{
    struct ck_hdr h;
    if (io_full(fd, &h, sizeof(h), deadline, false))
        return "the connection closed or went silent";
    const char *why = hdr_problem(&h, want, from);
    if (why)
        return why;
    return io_full(fd, p, ck_len(want), deadline, false) ? "a frame cut short" : NULL;
}

/* What each side proves (rg_proof_mac), under labels the side channel does not use. */
static void ck_mac(const char *secret, const char *label, const uint8_t *root_nonce,
                   const uint8_t *peer_nonce, int rank, int size, uint8_t *mac)
{
    rg_proof_mac(secret, label, root_nonce, peer_nonce, rank, size, CK_VERSION, mac);
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* host:port (an IPv6 host in brackets) resolved for a stream socket; NULL, or why not. */
static const char *resolve(const char *coordinator, struct addrinfo **ai)
{
    static char why[160];
    char host[256];
    const char *colon = strrchr(coordinator, ':'), *h = coordinator;
    if (rg_parse_hostport_problem(coordinator))
        return "not host:port";
    size_t n = (size_t)(colon - coordinator);
    if (h[0] == '[') {
        h++;
        n -= 2;
    }
    if (n >= sizeof(host))
        return "the host is too long";
    memcpy(host, h, n);
    host[n] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    int rc = getaddrinfo(host, colon + 1, &hints, ai);
    if (rc) {
        snprintf(why, sizeof(why), "%s", gai_strerror(rc));
        return why;
    }
    return NULL;
}

static void not_measured(rg_clock *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void not_measured(rg_clock *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    c->measured = false;
    vsnprintf(c->why, sizeof(c->why), fmt, ap);
    va_end(ap);
    for (char *p = c->why; *p; p++)
        if ((unsigned char)*p < ' ' || *p == 0x7f)
            *p = '?';
}

/* --- rank 0 ---------------------------------------------------------------------------------- */

struct ck_pending {
    int fd;
    double until;
    size_t got;
    uint8_t nonce[CK_NONCE]; /* the challenge it was sent */
    uint8_t buf[sizeof(struct ck_hdr) + sizeof(struct ck_hello)];
    char addr[96];
};

struct ck_root {
    const char *coord, *secret;
    int size;
    int fd[RG_MAX_RANKS]; /* each proven rank's connection, -1 none */
    int joined;
};

static void refuse(struct ck_root *k, struct ck_pending *p, int *n, int i, const char *why)
{
    fprintf(stderr, "railguard run: rank 0: clock at %s: refused a connection from %s: %s\n",
            k->coord, p[i].addr, why);
    close(p[i].fd);
    p[i] = p[--*n];
}

/*
 * Reads what has arrived from an unproven connection. Judges its header as soon as it is whole
 * and its hello once complete; refuses it (with a line) on any problem. Returns 1 when the
 * connection became a proven rank, 0 when it needs more bytes, -1 when it was refused.
 */
static int take_pending(struct ck_root *k, struct ck_pending *p, int *n, int i)
{
    struct ck_pending *q = &p[i];
    ssize_t got = recv(q->fd, q->buf + q->got, sizeof(q->buf) - q->got, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (got <= 0) {
        refuse(k, p, n, i, "it closed before proving the job secret");
        return -1;
    }
    size_t before = q->got;
    q->got += (size_t)got;
    const char *why;
    if (before < sizeof(struct ck_hdr) && q->got >= sizeof(struct ck_hdr) &&
        (why = hdr_problem((struct ck_hdr *)q->buf, CK_HELLO, -1))) {
        refuse(k, p, n, i, why);
        return -1;
    }
    if (q->got < sizeof(q->buf))
        return 0;
    struct ck_hello h;
    uint8_t want[CK_MAC];
    memcpy(&h, q->buf + sizeof(struct ck_hdr), sizeof(h));
    int rank = (int)ntohl((uint32_t)h.rank), size = (int)ntohl((uint32_t)h.size);
    /* The proof first: nothing a stranger claims is read before it. */
    ck_mac(k->secret, "railguard-clock hello", q->nonce, h.nonce, rank, size, want);
    if (CRYPTO_memcmp(want, h.mac, CK_MAC) != 0) {
        refuse(k, p, n, i, "wrong proof of the job secret");
        return -1;
    }
    if (size != k->size || rank < 1 || rank >= k->size) {
        char w[96];
        snprintf(w, sizeof(w), "it says rank %d of %d, this job is %d ranks", rank, size, k->size);
        refuse(k, p, n, i, w);
        return -1;
    }
    if (k->fd[rank] >= 0) {
        refuse(k, p, n, i, "a second connection for a rank already here");
        return -1;
    }
    ck_mac(k->secret, "railguard-clock welcome", q->nonce, h.nonce, rank, size, want);
    if (send_frame(q->fd, CK_WELCOME, 0, want, rg_now_s() + 1.0)) {
        refuse(k, p, n, i, "it did not take rank 0's welcome");
        return -1;
    }
    k->fd[rank] = q->fd;
    k->joined++;
    p[i] = p[--*n];
    return 1;
}

static void accept_one(struct ck_root *k, int lfd, struct ck_pending *p, int *n)
{
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    int fd = accept4(lfd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (*n == CK_PENDING) { /* a flood: the oldest gives way, so the job's ranks still get in */
        int old = 0;
        for (int i = 1; i < *n; i++)
            old = p[i].until < p[old].until ? i : old;
        refuse(k, p, n, old, "too many connections proving the secret at once");
    }
    struct ck_pending *q = &p[(*n)++];
    memset(q, 0, sizeof(*q));
    q->fd = fd;
    q->until = rg_now_s() + CK_PROOF_S;
    char host[64] = "?", port[16] = "?";
    getnameinfo((struct sockaddr *)&sa, salen, host, sizeof(host), port, sizeof(port),
                NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(q->addr, sizeof(q->addr), "%s port %s", host, port);
    set_nodelay(fd);
    if (rg_proof_random(q->nonce, CK_NONCE) ||
        send_frame(fd, CK_CHALLENGE, 0, q->nonce, rg_now_s() + 1.0))
        refuse(k, p, n, *n - 1, "it did not take a challenge");
}

/* Rank 0's half: every rank's pings, the least delayed round kept. 0, or -1 with why. */
static int measure(int fd, int rank, struct ck_result *res, char *why, size_t len)
{
    int64_t best = -1;
    for (uint32_t seq = 1; seq <= RG_CLOCK_ROUNDS; seq++) {
        uint8_t ping[8] = {0};
        struct ck_pong pong;
        uint32_t s = htonl(seq);
        memcpy(ping, &s, 4);
        int64_t t1 = now_ns();
        if (send_frame(fd, CK_PING, 0, ping, rg_now_s() + CK_ROUND_S)) {
            snprintf(why, len, "rank %d took no ping", rank);
            return -1;
        }
        const char *bad = recv_frame(fd, CK_PONG, rank, &pong, rg_now_s() + CK_ROUND_S);
        int64_t t4 = now_ns(), t = bad ? -1 : (int64_t)be64toh((uint64_t)pong.t_ns);
        if (bad || ntohl(pong.seq) != seq || t < 0) {
            snprintf(why, len, "rank %d's answer to ping %u: %s", rank, seq,
                     bad ? bad : "the wrong ping, or a time before its clock began");
            return -1;
        }
        if (best < 0 || t4 - t1 < best) {
            best = t4 - t1;
            res->offset_ns = t - t1 - (t4 - t1) / 2;
            res->err_ns = (t4 - t1 + 1) / 2;
        }
    }
    res->rounds = RG_CLOCK_ROUNDS;
    return 0;
}

/* Waits (boundedly) for each released rank to close first, then closes. */
static void release(struct ck_root *k, double until)
{
    for (int r = 1; r < k->size; r++) {
        char b[64];
        while (k->fd[r] >= 0 && io_full(k->fd[r], b, sizeof(b), until, false) == 0)
            ; /* a rank has nothing more to say: whatever it sends is dropped */
        if (k->fd[r] >= 0)
            close(k->fd[r]);
        k->fd[r] = -1;
    }
}

static void root_sync(const char *coord, const char *secret, int size, double deadline,
                      rg_clock *out)
{
    struct ck_root k = {.coord = coord, .secret = secret, .size = size};
    struct ck_pending pend[CK_PENDING];
    struct addrinfo *ai = NULL;
    int npend = 0, one = 1, lfd = -1;
    char missing[RG_MAX_RANKS * 4] = ""; /* "1, 2, ..., 63" */

    for (int r = 0; r < RG_MAX_RANKS; r++)
        k.fd[r] = -1;
    *out = (rg_clock){.measured = true}; /* rank 0 is the clock the others are placed on */
    const char *why = resolve(coord, &ai);
    if (why) {
        not_measured(out, "rank 0 cannot listen at %s: %s", coord, why);
        return;
    }
    lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, RG_MAX_RANKS)) {
        not_measured(out, "rank 0 cannot listen at %s: %s", coord, strerror(errno));
        freeaddrinfo(ai);
        if (lfd >= 0)
            close(lfd);
        return;
    }
    freeaddrinfo(ai);
    while (k.joined < size - 1 && rg_now_s() < deadline) {
        struct pollfd pf[CK_PENDING + 1] = {{.fd = lfd, .events = POLLIN}};
        double wake = deadline;
        for (int i = 0; i < npend; i++) {
            pf[i + 1] = (struct pollfd){.fd = pend[i].fd, .events = POLLIN};
            wake = pend[i].until < wake ? pend[i].until : wake;
        }
        int pr = poll(pf, (nfds_t)npend + 1, ms_left(wake));
        if (pr < 0 && errno != EINTR)
            break;
        /* Backwards: a refused or proven entry takes the last one's place. */
        for (int i = npend - 1; i >= 0; i--) {
            if (pr > 0 && (pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                take_pending(&k, pend, &npend, i);
            else if (rg_now_s() >= pend[i].until)
                refuse(&k, pend, &npend, i, "it sent no proof of the job secret in time");
        }
        if (pr > 0 && (pf[0].revents & POLLIN))
            accept_one(&k, lfd, pend, &npend);
    }
    for (int i = 0; i < npend; i++)
        close(pend[i].fd);
    /* The port is the transport's from here: closed before any rank is released. */
    close(lfd);
    struct ck_result res[RG_MAX_RANKS];
    size_t o = 0;
    for (int r = 1; r < size; r++) {
        char w[200] = "";
        memset(&res[r], 0, sizeof(res[r]));
        if (k.fd[r] < 0) {
            o += (size_t)snprintf(missing + o, sizeof(missing) - o, "%s%d", o ? ", " : "", r);
        } else if (measure(k.fd[r], r, &res[r], w, sizeof(w))) {
            fprintf(stderr, "railguard run: rank 0: clock at %s: %s\n", coord, w);
            close(k.fd[r]);
            k.fd[r] = -1;
        }
    }
    double until = rg_now_s() + 1.0;
    for (int r = 1; r < size; r++) {
        if (k.fd[r] < 0)
            continue;
        struct ck_result n = {(int64_t)htobe64((uint64_t)res[r].offset_ns),
                              (int64_t)htobe64((uint64_t)res[r].err_ns), htonl(res[r].rounds), 0};
        if (send_frame(k.fd[r], CK_RESULT, 0, &n, until)) {
            close(k.fd[r]);
            k.fd[r] = -1;
        }
    }
    release(&k, until);
    if (missing[0])
        snprintf(out->why, sizeof(out->why),
                 "rank(s) %.130s did not reach rank 0's clock before its deadline", missing);
}

/* --- a rank other than 0 --------------------------------------------------------------------- */

/* After the welcome: answers pings until rank 0's result. */
static void peer_pings(int fd, int rank, double deadline, rg_clock *out)
{
    for (int pings = 0;; pings++) {
        struct ck_hdr h;
        uint8_t p[sizeof(struct ck_result)];
        if (io_full(fd, &h, sizeof(h), deadline, false)) {
            not_measured(out, "rank 0 went silent or closed during the pings");
            return;
        }
        const char *why = hdr_problem(&h, 0, 0);
        int type = ntohs(h.type);
        if (!why && type != CK_PING && type != CK_RESULT)
            why = "a frame of the wrong type";
        if (!why && type == CK_PING && pings == RG_CLOCK_ROUNDS)
            why = "more pings than a measurement takes";
        if (why || io_full(fd, p, ck_len(type), deadline, false)) {
            not_measured(out, "rank 0's clock sent %s", why ? why : "a frame cut short");
            return;
        }
        if (type == CK_PING) {
            struct ck_pong pong;
            memcpy(&pong.seq, p, 4);
            pong.pad = 0;
            pong.t_ns = (int64_t)htobe64((uint64_t)now_ns());
            if (send_frame(fd, CK_PONG, rank, &pong, deadline)) {
                not_measured(out, "rank 0 took no answer to its ping");
                return;
            }
            continue;
        }
        struct ck_result res;
        memcpy(&res, p, sizeof(res));
        int64_t off = (int64_t)be64toh((uint64_t)res.offset_ns);
        int64_t err = (int64_t)be64toh((uint64_t)res.err_ns);
        uint32_t rounds = ntohl(res.rounds);
        if (!rounds) {
            not_measured(out, "rank 0 could not measure this rank (its stderr says why)");
        } else if (rounds > RG_CLOCK_ROUNDS || err < 0 || err > RG_CLOCK_ERR_MAX_MS * 1e6 ||
                   off > RG_CLOCK_OFFSET_MAX_MS * 1e6 || off < -RG_CLOCK_OFFSET_MAX_MS * 1e6) {
            /* Kept from the result file, which `railguard report` would refuse whole. */
            not_measured(out,
                         "rank 0's clock sent a result out of range (%u rounds, %+lld ns "
                         "+-%lld ns)",
                         rounds, (long long)off, (long long)err);
        } else {
            *out = (rg_clock){.measured = true,
                              .offset_ms = (double)off / 1e6,
                              .err_ms = (double)err / 1e6,
                              .rounds = (int)rounds};
        }
        return;
    }
}

/* The handshake on a connection to rank 0's port, then the pings. Nothing read is believed
 * before rank 0's welcome proves the secret: a squatter could be on that port. */
static void peer_exchange(int fd, const char *coord, const char *secret, int rank, int size,
                          double deadline, rg_clock *out)
{
    uint8_t root_nonce[CK_NONCE], want[CK_MAC], mac[CK_MAC];
    const char *why = recv_frame(fd, CK_CHALLENGE, 0, root_nonce, deadline);
    if (why) {
        not_measured(out, "the process at %s is not rank 0's railguard: %s", coord, why);
        return;
    }
    struct ck_hello h = {(int32_t)htonl((uint32_t)rank), (int32_t)htonl((uint32_t)size), {0}, {0}};
    if (rg_proof_random(h.nonce, CK_NONCE)) {
        not_measured(out, "getrandom: %s", strerror(errno));
        return;
    }
    ck_mac(secret, "railguard-clock hello", root_nonce, h.nonce, rank, size, h.mac);
    if (send_frame(fd, CK_HELLO, rank, &h, deadline) ||
        (why = recv_frame(fd, CK_WELCOME, 0, mac, deadline))) {
        not_measured(out,
                     "rank 0 at %s did not welcome this rank (%s): is the job secret the same "
                     "on every rank?",
                     coord, why ? why : "it took no hello");
        return;
    }
    ck_mac(secret, "railguard-clock welcome", root_nonce, h.nonce, rank, size, want);
    if (CRYPTO_memcmp(want, mac, CK_MAC) != 0) {
        not_measured(out, "the process at %s did not prove the job secret: not this job's rank 0",
                     coord);
        return;
    }
    peer_pings(fd, rank, deadline, out);
}

static void peer_sync(const char *coord, const char *secret, int rank, int size, double deadline,
                      rg_clock *out)
{
    struct addrinfo *ai = NULL;
    const char *why = resolve(coord, &ai);
    int fd = -1, tries = 0, last = 0;
    if (why) {
        not_measured(out, "%s: %s", coord, why);
        return;
    }
    /* Rank 0's runner may start later than this one: dial until the deadline. */
    while (fd < 0 && rg_now_s() < deadline) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        tries++;
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        last = errno;
        if (fd >= 0)
            close(fd);
        fd = -1;
        usleep(20000);
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        not_measured(out,
                     "cannot reach rank 0's runner at %s: %d tries before the deadline, the "
                     "last: %s",
                     coord, tries, strerror(last));
        return;
    }
    set_nodelay(fd);
    peer_exchange(fd, coord, secret, rank, size, deadline, out);
    close(fd); /* first, so rank 0's port keeps no TIME_WAIT */
}

void rg_clock_sync(const char *coordinator, const char *secret, int rank, int size, double deadline,
                   rg_clock *out)
{
    memset(out, 0, sizeof(*out));
    if (size < 2) {
        out->measured = true; /* one rank: its clock is the clock */
        return;
    }
    if (!secret || !secret[0]) {
        not_measured(out, "no job secret (RG_SECRET or RG_SECRET_FILE) to prove the clock's "
                          "peers with");
        return;
    }
    if (rank == 0)
        root_sync(coordinator, secret, size, deadline, out);
    else
        /* Rank 0 measures every rank before it releases any: wait for the last of them. */
        peer_sync(coordinator, secret, rank, size, deadline + CK_PROOF_S, out);
}
