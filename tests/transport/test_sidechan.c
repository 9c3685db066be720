/* SPDX-License-Identifier: MIT */
/*
 * The side channel on loopback, with strangers: a job's ranks join by proving its secret, and
 * whoever cannot (a silent socket, junk, a forged hello, another job's rank, a squatter on the
 * port) is refused without harming the job. No device needed: the side channel is TCP only.
 */
#include "common/rg_check.h"
#include "rg_sidechan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SECRET "loopback-test-secret-0123456789"

struct rank_run {
    char coord[64];
    const char *secret;
    int rank, size;
    double deadline;
    rg_status st;
    struct rg_err err;
    int gathered; /* 1 when an allgather after open came back right */
};

static void *rank_thread(void *arg)
{
    struct rank_run *r = arg;
    struct rg_sc *sc = NULL;
    r->st = rg__sc_open(r->coord, r->secret, r->rank, r->size, r->deadline, &sc, &r->err);
    if (r->st == RG_OK) {
        int mine = 100 + r->rank, all[8] = {0};
        rg_status st = rg__sc_allgather(sc, &mine, sizeof(mine), all, r->deadline, &r->err);
        r->gathered = st == RG_OK;
        for (int i = 0; i < r->size; i++)
            r->gathered &= all[i] == 100 + i;
        rg__sc_close(sc);
    }
    return NULL;
}

static void start(pthread_t *t, struct rank_run *r, const char *coord, const char *secret, int rank,
                  int size, double secs)
{
    *r = (struct rank_run){.secret = secret, .rank = rank, .size = size};
    snprintf(r->coord, sizeof(r->coord), "%s", coord);
    r->deadline = rg__now() + secs;
    ck_assert_int_eq(pthread_create(t, NULL, rank_thread, r), 0);
}

/* A free loopback port, and "127.0.0.1:PORT" for it in coord. */
static int loopback(char *coord, size_t len)
{
    int port = rg_check_free_port();
    snprintf(coord, len, "127.0.0.1:%d", port);
    return port;
}

static int dial(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < 250; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        ck_assert_int_ge(fd, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
            return fd;
        close(fd);
        usleep(20000);
    }
    ck_abort_msg("nothing listens on port %d", port);
    return -1;
}

/* Everything the peer sends until it closes (or 5 s pass); returns the byte count. */
static size_t drain(int fd, unsigned char *buf, size_t cap)
{
    size_t got = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0)
            return got;
        unsigned char tmp[4096];
        ssize_t n = read(fd, tmp, sizeof(tmp));
        if (n <= 0)
            return got;
        for (ssize_t i = 0; i < n && got < cap; i++)
            buf[got++] = tmp[i];
    }
}

/* A frame as the wire carries it: magic, version, type, sender, length, then the payload. */
static size_t frame(unsigned char *out, int type, int from, const void *p, uint32_t len)
{
    uint32_t magic = htonl(0x52475343u), f = htonl((uint32_t)from), l = htonl(len);
    uint16_t v = htons(3), t = htons((uint16_t)type);
    memcpy(out, &magic, 4);
    memcpy(out + 4, &v, 2);
    memcpy(out + 6, &t, 2);
    memcpy(out + 8, &f, 4);
    memcpy(out + 12, &l, 4);
    if (len)
        memcpy(out + 16, p, len);
    return 16 + len;
}

/* stderr into a file for the test's life (each test runs in its own process). */
static char g_log[64];
static void capture_stderr(void)
{
    snprintf(g_log, sizeof(g_log), "/tmp/rg-sc-log.%d", (int)getpid());
    int fd = open(g_log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(dup2(fd, 2), 0);
    close(fd);
}

static int log_count(const char *needle)
{
    char buf[16384];
    FILE *f = fopen(g_log, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    int k = 0;
    for (const char *p = buf; (p = strstr(p, needle)); p++)
        k++;
    return k;
}

START_TEST(test_sc_join)
{
    char coord[64];
    loopback(coord, sizeof(coord));
    pthread_t t[3];
    static struct rank_run r[3];
    for (int i = 0; i < 3; i++)
        start(&t[i], &r[i], coord, SECRET, i, 3, 20);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(r[i].st == RG_OK, "rank %d: %s", i, r[i].err.msg);
        ck_assert_int_eq(r[i].gathered, 1);
    }
}
END_TEST

/* Strangers of every kind arrive first; the job's rank 1 still joins, and no stranger gets
 * more than the 48 bytes of a random challenge. */
START_TEST(test_sc_strangers)
{
    char coord[64];
    int port = loopback(coord, sizeof(coord));
    capture_stderr();
    pthread_t t0, t1;
    static struct rank_run r0, r1;
    start(&t0, &r0, coord, SECRET, 0, 2, 20);
    int silent = dial(port);
    /* Junk bytes where a frame header is due. */
    int junk = dial(port);
    unsigned char noise[1000];
    for (size_t i = 0; i < sizeof(noise); i++)
        noise[i] = (unsigned char)(i * 37 + 11);
    ck_assert_int_eq(write(junk, noise, sizeof(noise)), (ssize_t)sizeof(noise));
    /* A well-formed hello claiming rank 1, with a forged proof. */
    int forged = dial(port);
    unsigned char hello[72] = {0}, buf[256];
    uint32_t one = htonl(1), two = htonl(2);
    memcpy(hello, &one, 4);
    memcpy(hello + 4, &two, 4);
    memset(hello + 40, 0xab, 32);
    size_t n = frame(buf, 1, 1, hello, sizeof(hello));
    ck_assert_int_eq(write(forged, buf, n), (ssize_t)n);
    /* A rank of another job: the right protocol, another secret. */
    start(&t1, &r1, coord, "another-jobs-secret-0123456789", 1, 2, 3);
    pthread_join(t1, NULL);
    ck_assert_int_eq(r1.st, RG_ERR_SIDE_CHANNEL);
    ck_assert_msg(strstr(r1.err.msg, "did not take this rank's proof of the job secret"), "%s",
                  r1.err.msg);
    /* The job's own rank 1, last of all. */
    start(&t1, &r1, coord, SECRET, 1, 2, 20);
    pthread_join(t1, NULL);
    pthread_join(t0, NULL);
    ck_assert_msg(r0.st == RG_OK, "rank 0: %s", r0.err.msg);
    ck_assert_msg(r1.st == RG_OK, "rank 1: %s (rank 0: %s)", r1.err.msg, r0.err.msg);
    ck_assert_int_eq(r0.gathered, 1);
    /* Each stranger got the challenge and nothing more, then was closed. */
    unsigned char got[4096];
    ck_assert_uint_eq(drain(junk, got, sizeof(got)), 48);
    ck_assert_uint_eq(drain(forged, got, sizeof(got)), 48);
    /* The silent one, unless the job joined within its SC_PROOF_S (a slow machine), was hung
     * up on for its time: then an empty SC_AGAIN followed, and the refusal was logged. */
    size_t quiet = drain(silent, got, sizeof(got));
    ck_assert_int_eq(got[7], 5); /* a challenge frame */
    ck_assert_msg(quiet == 48 || (quiet == 64 && got[48 + 7] == 6 && got[48 + 15] == 0),
                  "the silent stranger got %zu bytes", quiet);
    close(junk);
    close(forged);
    close(silent);
    ck_assert_int_eq(log_count("refused a connection from 127.0.0.1 port "), quiet == 48 ? 3 : 4);
    ck_assert_int_eq(log_count("not a railguard side channel (bad magic)"), 1);
    ck_assert_int_eq(log_count("wrong proof of the job secret"), 2);
    unlink(g_log);
}
END_TEST

/* A stranger that stays silent is dropped after its time to prove itself; a flood of them
 * cannot crowd the job out. */
START_TEST(test_sc_silent_flood)
{
    char coord[64];
    int port = loopback(coord, sizeof(coord));
    capture_stderr();
    pthread_t t0, t1;
    static struct rank_run r0, r1;
    start(&t0, &r0, coord, SECRET, 0, 2, 20);
    int fds[40];
    for (int i = 0; i < 40; i++)
        fds[i] = dial(port);
    start(&t1, &r1, coord, SECRET, 1, 2, 20);
    pthread_join(t1, NULL);
    pthread_join(t0, NULL);
    ck_assert_msg(r0.st == RG_OK, "rank 0: %s", r0.err.msg);
    ck_assert_msg(r1.st == RG_OK, "rank 1: %s", r1.err.msg);
    for (int i = 0; i < 40; i++)
        close(fds[i]);
    ck_assert_int_ge(log_count("too many connections waiting to prove the job secret"), 1);
    unlink(g_log);
}
END_TEST

/* A listener of the test's own on rank 0's port (a squatter, or a rank 0 that drops). */
static int listen_on(int port)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0), on = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(lfd, 4), 0);
    return lfd;
}

/* A squatter on rank 0's port cannot pass as rank 0: it cannot prove the secret back. */
START_TEST(test_sc_squatter)
{
    char coord[64];
    int port = loopback(coord, sizeof(coord));
    int lfd = listen_on(port);
    for (int pass = 0; pass < 2; pass++) {
        pthread_t t1;
        static struct rank_run r1;
        start(&t1, &r1, coord, SECRET, 1, 2, 10);
        int fd = accept(lfd, NULL, NULL);
        ck_assert_int_ge(fd, 0);
        unsigned char nonce[32], buf[256], in[128];
        memset(nonce, 7, sizeof(nonce));
        if (pass == 0) {
            /* No challenge: a welcome straight away. */
            unsigned char w[72] = {0};
            size_t n = frame(buf, 1, 0, w, sizeof(w));
            ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
        } else {
            /* A challenge, then a welcome whose proof it cannot make. */
            size_t n = frame(buf, 5, 0, nonce, sizeof(nonce));
            ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
            size_t got = 0; /* the rank's hello, in however many reads */
            while (got < 88) {
                ssize_t k = read(fd, in + got, sizeof(in) - got);
                ck_assert_int_gt(k, 0);
                got += (size_t)k;
            }
            ck_assert_uint_eq(got, 88);
            unsigned char w[72] = {0};
            uint32_t two = htonl(2);
            memcpy(w + 4, &two, 4);
            n = frame(buf, 1, 0, w, sizeof(w));
            ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
        }
        pthread_join(t1, NULL);
        close(fd);
        ck_assert_int_eq(r1.st, RG_ERR_SIDE_CHANNEL);
        ck_assert_msg(strstr(r1.err.msg, pass
                                             ? "did not prove the job secret: not this job's rank 0"
                                             : "where a challenge was due"),
                      "%s", r1.err.msg);
    }
    close(lfd);
}
END_TEST

/* Reads exactly n bytes from fd within 10 s. */
static void read_n(int fd, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ck_assert_int_eq(poll(&p, 1, 10000), 1);
        ssize_t k = read(fd, buf + got, n - got);
        ck_assert_int_gt(k, 0);
        got += (size_t)k;
    }
}

/*
 * A connection that takes longer than SC_PROOF_S to answer its challenge is hung up on with an
 * SC_AGAIN frame first (and the hang-up logged); the job's rank 1 still joins after it.
 */
START_TEST(test_sc_slow_prover_told_again)
{
    char coord[64];
    int port = loopback(coord, sizeof(coord));
    capture_stderr();
    pthread_t t0, t1;
    static struct rank_run r0, r1;
    start(&t0, &r0, coord, SECRET, 0, 2, 30);
    int slow = dial(port);
    unsigned char got[4096];
    read_n(slow, got, 48);
    ck_assert_int_eq(got[7], 5); /* the challenge */
    /* Then nothing, past SC_PROOF_S (5 s): what follows is the SC_AGAIN, then the end. */
    struct pollfd p = {.fd = slow, .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 10000), 1);
    ck_assert_uint_eq(drain(slow, got, sizeof(got)), 16);
    ck_assert_int_eq(got[7], 6);
    ck_assert_int_eq(got[15], 0); /* no payload */
    close(slow);
    ck_assert_int_eq(log_count("it sent no proof of the job secret in time"), 1);
    start(&t1, &r1, coord, SECRET, 1, 2, 20);
    pthread_join(t1, NULL);
    pthread_join(t0, NULL);
    ck_assert_msg(r0.st == RG_OK, "rank 0: %s", r0.err.msg);
    ck_assert_msg(r1.st == RG_OK, "rank 1: %s", r1.err.msg);
    ck_assert(r0.gathered && r1.gathered);
    unlink(g_log);
}
END_TEST

/* Rank 0's part played by the test on lfd: the next connection, sent a challenge. */
static int fake_root(int lfd)
{
    int fd = accept(lfd, NULL, NULL);
    ck_assert_int_ge(fd, 0);
    unsigned char nonce[32], buf[256];
    memset(nonce, 9, sizeof(nonce));
    size_t n = frame(buf, 5, 0, nonce, sizeof(nonce));
    ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
    return fd;
}

/*
 * A rank that rank 0 hangs up on for its time or for room (rank 0 gives each connection
 * SC_PROOF_S and has room for SC_PENDING: a slow start, under valgrind or four ranks on two
 * loaded vCPUs) dials again until its deadline and joins, rather than failing the job at init:
 * pass 0 hangs up before the challenge; pass 1 after the rank's hello, with SC_AGAIN. Pass 1
 * used to be taken for a refusal, or, when the hang-up came as a reset, reported as "no
 * message from rank 0 before the deadline" at once, leaving the other ranks to wait out theirs.
 */
START_TEST(test_sc_dropped_rank_dials_again)
{
    for (int pass = 0; pass < 2; pass++) {
        char coord[64];
        int port = loopback(coord, sizeof(coord));
        int lfd = listen_on(port), fd;
        pthread_t t0, t1;
        static struct rank_run r0, r1;
        start(&t1, &r1, coord, SECRET, 1, 2, 20);
        if (pass == 0) {
            fd = accept(lfd, NULL, NULL);
            ck_assert_int_ge(fd, 0);
        } else {
            unsigned char buf[128];
            fd = fake_root(lfd);
            read_n(fd, buf, 88); /* its hello */
            size_t n = frame(buf, 6, 0, NULL, 0);
            ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
        }
        close(fd);
        close(lfd);
        start(&t0, &r0, coord, SECRET, 0, 2, 20);
        pthread_join(t1, NULL);
        pthread_join(t0, NULL);
        ck_assert_msg(r1.st == RG_OK, "pass %d: rank 1: %s", pass, r1.err.msg);
        ck_assert_msg(r0.st == RG_OK, "pass %d: rank 0: %s", pass, r0.err.msg);
        ck_assert(r0.gathered && r1.gathered);
    }
}
END_TEST

/*
 * Refused with a reset (rank 0 closed with the hello unread): a refusal, said at once, not a
 * timeout "before the deadline" that never came.
 */
START_TEST(test_sc_reset_is_a_refusal)
{
    char coord[64];
    int port = loopback(coord, sizeof(coord));
    int lfd = listen_on(port);
    pthread_t t1;
    static struct rank_run r1;
    start(&t1, &r1, coord, SECRET, 1, 2, 20);
    int fd = fake_root(lfd);
    /* Its whole hello is here (header and body are two writes: a reset between them fails
     * the second, which the rank takes for a hang-up and dials again), and stays unread. */
    unsigned char peek[128];
    for (int i = 0; i < 1000 && recv(fd, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT) < 88; i++)
        usleep(10000);
    ck_assert_int_eq(recv(fd, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT), 88);
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    double t = rg__now();
    close(fd);
    close(lfd);
    pthread_join(t1, NULL);
    ck_assert_int_eq(r1.st, RG_ERR_SIDE_CHANNEL);
    ck_assert_msg(strstr(r1.err.msg, "closed the connection instead of welcoming this rank"), "%s",
                  r1.err.msg);
    ck_assert_msg(rg__now() - t < 10, "the refusal took %.1f s", rg__now() - t);
}
END_TEST

/* No secret, a port in use, nobody listening: each a clear error within the deadline. */
START_TEST(test_sc_setup_errors)
{
    struct rg_sc *sc = NULL;
    struct rg_err e = {0};
    char coord[64];
    int port = loopback(coord, sizeof(coord));
    ck_assert_int_eq(rg__sc_open(coord, "", 0, 2, rg__now() + 1, &sc, &e), RG_ERR_CONFIG);
    ck_assert_ptr_nonnull(strstr(e.msg, "no job secret: set RG_SECRET or RG_SECRET_FILE"));
    /* Someone else holds the port. */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(lfd, 1), 0);
    e = (struct rg_err){0};
    ck_assert_int_eq(rg__sc_open(coord, SECRET, 0, 2, rg__now() + 1, &sc, &e), RG_ERR_SIDE_CHANNEL);
    ck_assert_msg(strstr(e.msg, "cannot listen on 127.0.0.1:") &&
                      strstr(e.msg, "(another job or program holds the port)"),
                  "%s", e.msg);
    close(lfd);
    /* Nobody there: retries until the deadline, then says how many and why. */
    double t0 = rg__now();
    e = (struct rg_err){0};
    ck_assert_int_eq(rg__sc_open(coord, SECRET, 1, 2, t0 + 0.3, &sc, &e), RG_ERR_TIMEOUT);
    ck_assert_msg(strstr(e.msg, "cannot reach rank 0 at 127.0.0.1:") &&
                      strstr(e.msg, "Connection refused"),
                  "%s", e.msg);
    ck_assert_double_lt(rg__now() - t0, 5.0);
}
END_TEST

/* Each rank of a 3-rank job checks the side channel until it fails; rank 2 leaves without a
 * word (as SIGKILL would). */
struct watch {
    struct rg_sc *sc;
    rg_status st;
    struct rg_err err;
};

static void *watch_thread(void *arg)
{
    struct watch *w = arg;
    double until = rg__now() + 10;
    while (w->st == RG_OK && rg__now() < until) {
        w->st = rg__sc_check(w->sc, &w->err);
        usleep(1000);
    }
    return NULL;
}

struct opener {
    struct rank_run *r;
    struct rg_sc **sc;
};

static void *open_one(void *arg)
{
    struct opener *o = arg;
    o->r->st = rg__sc_open(o->r->coord, o->r->secret, o->r->rank, o->r->size, o->r->deadline, o->sc,
                           &o->r->err);
    return NULL;
}

/* Ranks 0..2 of one job, opened side by side (rank 0 waits for the others inside open). */
static void open_three(struct rg_sc *sc[3])
{
    char coord[64];
    loopback(coord, sizeof(coord));
    static struct rank_run r[3];
    static struct opener op[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        r[i] = (struct rank_run){.secret = SECRET, .rank = i, .size = 3};
        snprintf(r[i].coord, sizeof(r[i].coord), "%s", coord);
        r[i].deadline = rg__now() + 20;
        op[i] = (struct opener){&r[i], &sc[i]};
        ck_assert_int_eq(pthread_create(&t[i], NULL, open_one, &op[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(r[i].st == RG_OK, "rank %d: %s", i, r[i].err.msg);
    }
}

/* Ranks 0 and 1 watch while rank 2 leaves: closed without a word, or with an abort. */
static void watch_rank2_leave(struct rg_sc *sc[3], const char *reason, struct watch w[2])
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (struct watch){.sc = sc[i]};
        ck_assert_int_eq(pthread_create(&t[i], NULL, watch_thread, &w[i]), 0);
    }
    if (reason)
        rg__sc_abort(sc[2], reason);
    rg__sc_close(sc[2]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    rg__sc_close(sc[0]);
    rg__sc_close(sc[1]);
}

/* The survivors name the rank that died, not the hub that relayed it. */
START_TEST(test_sc_gone_named)
{
    static struct rg_sc *sc[3];
    static struct watch w[2];
    open_three(sc);
    watch_rank2_leave(sc, NULL, w); /* no ABORT: gone, as a killed process is */
    ck_assert_int_eq(w[0].st, RG_ERR_PEER_ABORT);
    ck_assert_msg(strstr(w[0].err.msg, "rank 0: peer rank 2 is gone"), "%s", w[0].err.msg);
    ck_assert_int_eq(w[1].st, RG_ERR_PEER_ABORT);
    ck_assert_msg(
        strstr(w[1].err.msg, "rank 1: peer rank 2 aborted: rank 2 closed the side channel"), "%s",
        w[1].err.msg);
}
END_TEST

/* A peer's abort reason is its bytes: a newline or an escape sequence in it reaches neither
 * rank's message (they used to be copied through, making a one-line error two). */
START_TEST(test_sc_abort_reason_one_line)
{
    static struct rg_sc *sc[3];
    static struct watch w[2];
    open_three(sc);
    watch_rank2_leave(sc, "first line\nsecond line\x1b[2J", w);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(w[i].st, RG_ERR_PEER_ABORT);
        ck_assert_msg(strstr(w[i].err.msg, "peer rank 2 aborted: first line?second line?[2J"),
                      "rank %d: %s", i, w[i].err.msg);
        for (const char *p = w[i].err.msg; *p; p++)
            ck_assert_int_ge((unsigned char)*p, 0x20);
    }
}
END_TEST

Suite *rg_suite_sidechan(void)
{
    Suite *s = suite_create("sidechan");
    TCase *t = tcase_create("loopback");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_sc_join);
    tcase_add_test(t, test_sc_strangers);
    tcase_add_test(t, test_sc_silent_flood);
    tcase_add_test(t, test_sc_squatter);
    tcase_add_test(t, test_sc_dropped_rank_dials_again);
    tcase_add_test(t, test_sc_slow_prover_told_again);
    tcase_add_test(t, test_sc_reset_is_a_refusal);
    tcase_add_test(t, test_sc_setup_errors);
    tcase_add_test(t, test_sc_gone_named);
    tcase_add_test(t, test_sc_abort_reason_one_line);
    suite_add_tcase(s, t);
    return s;
}
