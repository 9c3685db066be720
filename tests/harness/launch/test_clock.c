/* SPDX-License-Identifier: MIT */
/*
 * The clock exchange of an external launch's runners (harness/rg_clock.c), over loopback TCP
 * between forked ranks: on one host the measured offset must be zero within its own bound; a
 * rank in a time namespace (its CLOCK_MONOTONIC moved by a known amount, as another host's
 * would be) must be measured at that amount; strangers, a wrong secret and a squatter on the
 * port are refused, each with one line, and nobody waits past the deadline.
 */
#include "common/rg_check.h"
#include "launch/rg_launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static const char secret[] = "clock-test-secret-0123";

/* A loopback port nobody listens on now (bound, learned, closed). */
static int free_port(char *coord, size_t len)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    close(fd);
    int port = ntohs(a.sin_port);
    snprintf(coord, len, "127.0.0.1:%d", port);
    return port;
}

/* Forks a rank that syncs and writes its rg_clock to the pipe. monotonic_s != 0: it runs in a
 * new time namespace whose CLOCK_MONOTONIC is that many seconds ahead. */
static pid_t start_rank(const char *coord, const char *sec, int rank, int size, double timeout,
                        long monotonic_s, int wfd)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid)
        return pid;
    if (monotonic_s) {
        /* The namespace is for this process's children: its first child enters it. */
        if (unshare(CLONE_NEWTIME) != 0)
            _exit(10);
        int fd = open("/proc/self/timens_offsets", O_WRONLY);
        char off[64];
        int n = snprintf(off, sizeof(off), "monotonic %ld 0\n", monotonic_s);
        if (fd < 0 || write(fd, off, (size_t)n) != n)
            _exit(11);
        close(fd);
        pid_t c = fork();
        if (c < 0)
            _exit(12);
        if (c) {
            int st;
            waitpid(c, &st, 0);
            _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 13);
        }
    }
    rg_clock c;
    rg_clock_sync(coord, sec, rank, size, rg_now_s() + timeout, &c);
    _exit(write(wfd, &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 14);
}

/* A rank's clock from the pipe (the parent's write end closed), then its exit. */
static void take_rank(pid_t pid, int rfd, rg_clock *c)
{
    int st;
    ssize_t n = read(rfd, c, sizeof(*c));
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(n == (ssize_t)sizeof(*c) && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "rank %d: no clock, exit %d%s", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                  WIFEXITED(st) && WEXITSTATUS(st) == 10
                      ? ": no time namespace here (needs root and CONFIG_TIME_NS, as CI has)"
                      : "");
}

/* Rank 0 here with its stderr in a file; the file's text in log. */
static void root_logged(const char *coord, const char *sec, int size, double timeout, rg_clock *c,
                        char *log, size_t len)
{
    char path[] = "/tmp/rg-clock-log-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    dup2(fd, 2);
    double t0 = rg_now_s();
    rg_clock_sync(coord, sec, 0, size, t0 + timeout, c);
    ck_assert_double_le(rg_now_s() - t0, timeout + 3.0); /* its deadline, and a release */
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, log, len - 1, 0);
    log[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
}

/* Rank 1 (with sec1, monotonic_s ahead) against rank 0 here, both of a size of 2. */
static void pair(const char *sec1, double timeout, long monotonic_s, rg_clock *c0, rg_clock *c1,
                 char *log, size_t len)
{
    char coord[64];
    int p[2];
    free_port(coord, sizeof(coord));
    ck_assert_int_eq(pipe(p), 0);
    pid_t r1 = start_rank(coord, sec1, 1, 2, timeout, monotonic_s, p[1]);
    close(p[1]);
    root_logged(coord, secret, 2, timeout, c0, log, len);
    take_rank(r1, p[0], c1);
    close(p[0]);
}

static int count_lines(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

START_TEST(test_clock_one_host)
{
    char coord[64], log[4096];
    int port = free_port(coord, sizeof(coord)), p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t r1 = start_rank(coord, secret, 1, 3, 10, 0, p[1]);
    pid_t r2 = start_rank(coord, secret, 2, 3, 10, 0, p[1]);
    close(p[1]);
    rg_clock c0, c[2];
    root_logged(coord, secret, 3, 10, &c0, log, sizeof(log));
    ck_assert_str_eq(log, "");
    ck_assert(c0.measured && c0.offset_ms == 0 && !c0.why[0]);
    take_rank(r1, p[0], &c[0]);
    take_rank(r2, p[0], &c[1]);
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(c[i].measured, "%s", c[i].why);
        ck_assert_int_eq(c[i].rounds, RG_CLOCK_ROUNDS);
        /* One clock: the true offset is 0, and the bound must hold it. */
        ck_assert_msg(c[i].offset_ms <= c[i].err_ms && -c[i].offset_ms <= c[i].err_ms,
                      "offset %.6f ms beyond +-%.6f ms", c[i].offset_ms, c[i].err_ms);
        ck_assert_double_lt(c[i].err_ms, 1000.0);
    }
    /* The port is free again for the transport, even one that binds without SO_REUSEADDR:
     * the ranks hung up first, so rank 0's side keeps no TIME_WAIT. */
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_msg(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "bind: %s", strerror(errno));
    close(fd);
    close(p[0]);
}
END_TEST

/* Another host's clock, made here: a time namespace moves CLOCK_MONOTONIC by 5000 s. */
START_TEST(test_clock_time_namespace)
{
    char log[4096];
    rg_clock c0, c1;
    pair(secret, 10, 5000, &c0, &c1, log, sizeof(log));
    ck_assert_msg(c1.measured, "%s", c1.why);
    ck_assert_msg(c1.offset_ms - 5000e3 <= c1.err_ms && 5000e3 - c1.offset_ms <= c1.err_ms,
                  "offset %.3f ms, 5000000 ms expected within +-%.3f", c1.offset_ms, c1.err_ms);
}
END_TEST

/* Bytes to rank 0's port from a stranger: refused with one line each, the rank still met. */
static void stranger(const char *coord, const void *bytes, size_t n)
{
    int port = atoi(strrchr(coord, ':') + 1);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int tries = 0; tries < 200; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
            ck_assert_int_eq(write(fd, bytes, n), (ssize_t)n);
            char b[256];
            while (read(fd, b, sizeof(b)) > 0) /* until rank 0 hangs up */
                ;
            close(fd);
            return;
        }
        close(fd);
        usleep(20000);
    }
    _exit(2); /* rank 0 never listened */
}

START_TEST(test_clock_strangers)
{
    char coord[64], log[4096];
    int p[2];
    free_port(coord, sizeof(coord));
    ck_assert_int_eq(pipe(p), 0);
    /* A header of our magic with a hello's length but a made-up proof: refused on the proof. */
    uint8_t forged[16 + 72] = {0x52, 0x47, 0x43, 0x4b, 0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 72};
    /* The strangers first, then the job's rank 1, from one process: an order, not a race. */
    pid_t r1 = fork();
    ck_assert_int_ge(r1, 0);
    if (!r1) {
        stranger(coord, "GET / HTTP/1.0\r\n\r\n", 18);
        stranger(coord, forged, sizeof(forged));
        rg_clock c;
        rg_clock_sync(coord, secret, 1, 2, rg_now_s() + 10, &c);
        _exit(write(p[1], &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 14);
    }
    close(p[1]);
    rg_clock c0, c1;
    root_logged(coord, secret, 2, 10, &c0, log, sizeof(log));
    take_rank(r1, p[0], &c1);
    ck_assert_msg(c1.measured, "%s", c1.why);
    /* Each refusal one line, naming the address and why. */
    ck_assert_int_eq(count_lines(log, "\n"), 2);
    ck_assert_int_eq(count_lines(log, "refused a connection from 127.0.0.1 port "), 2);
    ck_assert_ptr_nonnull(strstr(log, "not railguard's clock (bad magic)"));
    ck_assert_ptr_nonnull(strstr(log, "wrong proof of the job secret"));
    close(p[0]);
}
END_TEST

START_TEST(test_clock_wrong_secret)
{
    char log[4096];
    rg_clock c0, c1;
    pair("another-secret-altogether", 2, 0, &c0, &c1, log, sizeof(log));
    ck_assert(!c1.measured);
    ck_assert_ptr_nonnull(strstr(c1.why, "is the job secret the same on every rank?"));
    ck_assert_ptr_nonnull(strstr(log, "wrong proof of the job secret"));
    ck_assert(c0.measured); /* rank 0's own clock is the reference all the same */
    ck_assert_str_eq(c0.why, "rank(s) 1 did not reach rank 0's clock before its deadline");
}
END_TEST

/* A process on the port that is not this job's rank 0: one that speaks something else, and one
 * that speaks the protocol without the secret. */
START_TEST(test_clock_squatter)
{
    static const uint8_t challenge[16 + 32] = {0x52, 0x47, 0x43, 0x4b, 0, 1, 0, 1,
                                               0,    0,    0,    0,    0, 0, 0, 32};
    static const uint8_t welcome[16 + 32] = {0x52, 0x47, 0x43, 0x4b, 0, 1, 0, 3,
                                             0,    0,    0,    0,    0, 0, 0, 32};
    const struct {
        const void *a, *b;
        size_t na, nb;
        const char *why;
    } cases[] = {
        {"SSH-2.0-OpenSSH_9.2\r\n...........", NULL, 32, 0, "not railguard's clock (bad magic)"},
        {challenge, welcome, sizeof(challenge), sizeof(welcome), "did not prove the job secret"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char coord[64];
        int port = free_port(coord, sizeof(coord));
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(lfd, 4), 0);
        pid_t sq = fork();
        ck_assert_int_ge(sq, 0);
        if (!sq) {
            int fd = accept(lfd, NULL, NULL);
            char b[256];
            if (write(fd, cases[i].a, cases[i].na) < 0)
                _exit(1);
            if (cases[i].b &&
                (read(fd, b, sizeof(b)) <= 0 || write(fd, cases[i].b, cases[i].nb) < 0))
                _exit(1);
            while (read(fd, b, sizeof(b)) > 0)
                ;
            _exit(0);
        }
        close(lfd);
        rg_clock c;
        double t0 = rg_now_s();
        rg_clock_sync(coord, secret, 1, 2, t0 + 5, &c);
        ck_assert_double_lt(rg_now_s() - t0, 5.0);
        ck_assert(!c.measured);
        ck_assert_msg(strstr(c.why, cases[i].why), "%s", c.why);
        ck_assert_ptr_null(strchr(c.why, '\n'));
        int st;
        waitpid(sq, &st, 0);
    }
}
END_TEST

START_TEST(test_clock_alone)
{
    rg_clock c;
    rg_clock_sync("127.0.0.1:1", secret, 0, 1, rg_now_s() + 1, &c);
    ck_assert(c.measured && c.offset_ms == 0);
    rg_clock_sync("127.0.0.1:1", "", 1, 2, rg_now_s() + 1, &c);
    ck_assert(!c.measured);
    ck_assert_ptr_nonnull(strstr(c.why, "no job secret"));
    /* Nobody at the port: dialled until the deadline, then said. */
    double t0 = rg_now_s();
    rg_clock_sync("127.0.0.1:1", secret, 1, 2, t0 + 0.3, &c);
    ck_assert(!c.measured);
    ck_assert_ptr_nonnull(strstr(c.why, "cannot reach rank 0's runner at 127.0.0.1:1"));
    ck_assert_double_lt(rg_now_s() - t0, 10.0);
}
END_TEST

Suite *rg_suite_clock(void)
{
    Suite *s = suite_create("clock");
    TCase *t = tcase_create("exchange");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_clock_one_host);
    tcase_add_test(t, test_clock_time_namespace);
    tcase_add_test(t, test_clock_strangers);
    tcase_add_test(t, test_clock_wrong_secret);
    tcase_add_test(t, test_clock_squatter);
    tcase_add_test(t, test_clock_alone);
    suite_add_tcase(s, t);
    return s;
}
