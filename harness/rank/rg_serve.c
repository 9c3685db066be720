/* SPDX-License-Identifier: MIT */
/*
 * The fork server's end (launch/rg_forksrv.c is the runner's, and says why it exists): in
 * `railguard worker --serve`, one message per rank -- items and three descriptors, the format
 * in rg_rank.h -- answered by forking an intermediate that forks the rank and says "pid N",
 * so the rank is orphaned to the runner, its child subreaper. The rank calls the shim's restart
 * before its first verbs call, then runs the worker as `railguard worker` would.
 */
#include "rank/rg_rank.h"
#include "rg_faultinject.h"
#include "rg_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- the server's end ---------------------------------------------------------------------- */

/* Moves fd to want (which must be free of the others: they go above 10 first). */
static int place(int fd, int want)
{
    if (fd == want)
        return fcntl(fd, F_SETFD, 0);
    return dup2(fd, want) < 0 ? -1 : 0;
}

/* In the rank: its descriptors, its environment, the shim anew, then the worker. */
static void rank_run(char **items, int nitems, const int fds[3])
{
    char *argv[RG_FORKSRV_ITEMS_MAX + 2];
    int argc = 0;
    int hi[3];
    argv[argc++] = "railguard";
    argv[argc++] = "worker";
    for (int i = 0; i < 3; i++)
        if ((hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) < 0)
            _exit(127);
    if (place(hi[0], 1) || place(hi[0], 2) || place(hi[1], 3) || place(hi[2], 4))
        _exit(127);
    for (int i = 0; i < 3; i++) {
        close(hi[i]);
        if (fds[i] > 4) /* as received: the copies at 1-4 are the rank's */
            close(fds[i]);
    }
    for (int i = 0; i < nitems; i++) {
        char *v = items[i] + 1;
        if (items[i][0] == 'A') {
            argv[argc++] = v;
        } else if (items[i][0] == 'U') {
            unsetenv(v);
        } else {
            char *eq = strchr(v, '=');
            *eq = '\0';
            setenv(v, eq + 1, 1);
        }
    }
    argv[argc] = NULL;
    const struct rg_fi_control_v1 *fi = rg_fi_control();
    char err[512];
    if (!fi || fi->size < offsetof(struct rg_fi_control_v1, restart) + sizeof(fi->restart) ||
        fi->restart(err, sizeof(err)) != 0) {
        dprintf(3, "%.3f verdict error the fork server's rank could not restart the shim: %s\n",
                rg_now_s() * 1000, fi ? err : "the shim is not loaded");
        _exit(3);
    }
    exit(rg_worker_cli(argc, argv));
}

/* One message: its items (checked: kinds, NUL ends, E has '=') and exactly three fds. */
static int take(int sock, char *msg, char **items, int *nitems, int fds[3])
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(RG_FORKSRV_FDS * sizeof(int))];
    } c;
    struct iovec iov = {.iov_base = msg, .iov_len = RG_FORKSRV_MSG_MAX};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf)};
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return 0; /* the runner is gone */
    int got = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int tmp[RG_FORKSRV_FDS + 8];
        memcpy(tmp, CMSG_DATA(cm),
               (size_t)(k < RG_FORKSRV_FDS + 8 ? k : RG_FORKSRV_FDS + 8) * sizeof(int));
        for (int i = 0; i < k && i < RG_FORKSRV_FDS + 8; i++) {
            if (got < RG_FORKSRV_FDS)
                fds[got] = tmp[i];
            else
                close(tmp[i]);
            got++;
        }
    }
    bool ok =
        got == RG_FORKSRV_FDS && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && msg[n - 1] == '\0';
    *nitems = 0;
    for (ssize_t o = 0; ok && o < n;) {
        char *it = msg + o;
        size_t l = strlen(it);
        ok = *nitems < RG_FORKSRV_ITEMS_MAX && l >= 2 &&
             (it[0] == 'A' || it[0] == 'U' || (it[0] == 'E' && strchr(it + 2, '=')));
        items[(*nitems)++] = it;
        o += (ssize_t)l + 1;
    }
    if (!ok) {
        for (int i = 0; i < got && i < RG_FORKSRV_FDS; i++)
            close(fds[i]);
        return -1;
    }
    return 1;
}

int rg_worker_serve(int sock, const char *transport)
{
    static char msg[RG_FORKSRV_MSG_MAX];
    char *items[RG_FORKSRV_ITEMS_MAX];
    int nitems, fds[3];
    char err[512];
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the runner */
    if (getppid() == 1)
        return 0;
    fcntl(sock, F_SETFD, FD_CLOEXEC);
    /* What each rank would load: the transport (the rank's own dlopen then finds it loaded)
     * and the verbs providers. */
    static rg_tp tp;
    if (rg_tp_open(&tp, transport, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard worker --serve: %s (each rank will say so)\n", err);
    const struct rg_fi_control_v1 *fi = rg_fi_control();
    if (fi && fi->size >= offsetof(struct rg_fi_control_v1, warm) + sizeof(fi->warm))
        fi->warm();
    /* And libcrypto: OpenSSL sets itself up at its first use (its configuration read, its
     * providers loaded, the digest fetched), which a rank's side-channel proof would otherwise
     * pay every time -- 4.4 % of a 4-rank sweep's CPU in the guest's profile. */
    uint8_t z[RG_PROOF_NONCE] = {0}, mac[RG_PROOF_MAC];
    rg_proof_mac("warm", "warm", z, z, 0, 1, 0, mac);
    for (;;) {
        int t = take(sock, msg, items, &nitems, fds);
        if (t == 0)
            return 0;
        if (t < 0) {
            fprintf(stderr, "railguard worker --serve: a malformed request: refused\n");
            send(sock, "bad", 3, MSG_NOSIGNAL);
            continue;
        }
        pid_t mid = fork();
        if (mid == 0) {
            pid_t r = fork();
            if (r == 0) {
                close(sock);
                rank_run(items, nitems, fds);
            }
            char ans[32];
            int n = snprintf(ans, sizeof(ans), "pid %d", (int)r);
            send(sock, ans, (size_t)n, MSG_NOSIGNAL);
            _exit(r < 0);
        }
        for (int i = 0; i < 3; i++)
            close(fds[i]);
        if (mid < 0) {
            send(sock, "bad", 3, MSG_NOSIGNAL);
            continue;
        }
        int st;
        while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
            ;
    }
}
