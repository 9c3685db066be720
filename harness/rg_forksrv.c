/* SPDX-License-Identifier: MIT */
/*
 * The fork server: one process per rank slot, started once by `railguard run --fork-server`
 * (the sweep's batches) under the shim with the transport loaded and libibverbs' providers
 * warmed, that forks a rank per scenario instead of exec'ing one. Measured in the guest, a
 * rank's exec, dynamic linking and provider loading were about 0.25 s of a 2-rank point's
 * 0.73 s; a fork costs milliseconds.
 *
 * Both ends live here. The runner sends one SOCK_SEQPACKET message per rank: items joined by
 * NUL bytes -- "E" KEY=VALUE (set in the rank's environment), "U" KEY (unset), "A" WORD (the
 * worker's options) -- with three descriptors (its log, status pipe and go pipe). The server
 * forks an intermediate that forks the rank and sends back "pid N", then exits: the rank is
 * orphaned to the runner, a child subreaper (PR_SET_CHILD_SUBREAPER), so the runner waits
 * for it, sees it stop and reaps it exactly as it does a rank it exec'd. The rank calls the
 * shim's restart (its plan, log and rank from the environment it was given) before its first
 * verbs call, then runs the worker as `railguard worker` would. No device is opened in the
 * server, so no verbs state crosses the fork.
 */
#include "rg_faultinject.h"
#include "rg_harness.h"

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

#define SRV__MSG_MAX 16384
#define SRV__ITEMS_MAX 64
#define SRV__FDS 3

/* --- the runner's end ---------------------------------------------------------------------- */

int rg_forksrv_start(rg_forksrv *s, const char *self, const char *shim, const char *transport,
                     char *err, size_t errlen)
{
    int sv[2];
    s->pid = -1;
    s->sock = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "fork server: socketpair: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork server: fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        /* The server's socket at 3; nothing of a rank's in its environment yet. */
        if (dup2(sv[1], 3) < 0)
            _exit(127);
        char sig[16];
        snprintf(sig, sizeof(sig), "%d", rg_proc_snapshot_signal());
        setenv("RG_FI_SNAPSHOT_SIGNAL", sig, 1); /* installed at load: the server's is the ranks' */
        setenv("LD_PRELOAD", shim, 1);
        unsetenv("RG_FI_PLAN");
        unsetenv("RG_FI_PLAN_FILE");
        unsetenv("RG_FI_LOG");
        unsetenv("RG_FI_RANK");
        char *argv[] = {(char *)self,  "worker",          "--serve", "3",
                        "--transport", (char *)transport, NULL};
        execv(self, argv);
        _exit(127);
    }
    close(sv[1]);
    s->pid = pid;
    s->sock = sv[0];
    return 0;
}

void rg_forksrv_stop(rg_forksrv *s)
{
    if (s->sock >= 0)
        close(s->sock); /* the server's recv sees the end and it exits */
    if (s->pid > 0) {
        int st;
        double until = rg_now_s() + 2;
        while (waitpid(s->pid, &st, WNOHANG) == 0 && rg_now_s() < until)
            usleep(5000);
        if (waitpid(s->pid, &st, WNOHANG) == 0) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &st, 0);
        }
    }
    s->pid = -1;
    s->sock = -1;
}

static int add_item(char *msg, size_t *len, char kind, const char *text)
{
    size_t n = strlen(text);
    if (*len + n + 2 > SRV__MSG_MAX)
        return -1;
    msg[(*len)++] = kind;
    memcpy(msg + *len, text, n + 1);
    *len += n + 1;
    return 0;
}

pid_t rg_forksrv_spawn(rg_forksrv *s, const char *const *env, const char *const *args,
                       const int fds[3], double timeout_s, char *err, size_t errlen)
{
    static char msg[SRV__MSG_MAX];
    size_t len = 0;
    if (s->sock < 0) {
        snprintf(err, errlen, "fork server: not running");
        return -1;
    }
    for (int i = 0; env[i]; i++)
        if (add_item(msg, &len, strchr(env[i], '=') ? 'E' : 'U', env[i]) != 0)
            goto too_long;
    for (int i = 0; args[i]; i++)
        if (add_item(msg, &len, 'A', args[i]) != 0)
            goto too_long;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(SRV__FDS * sizeof(int))];
    } c;
    memset(&c, 0, sizeof(c));
    struct iovec iov = {.iov_base = msg, .iov_len = len};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(SRV__FDS * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, SRV__FDS * sizeof(int));
    if (sendmsg(s->sock, &mh, MSG_NOSIGNAL) != (ssize_t)len) {
        snprintf(err, errlen, "fork server %d: send: %s", (int)s->pid, strerror(errno));
        return -1;
    }
    /* Its answer: "pid N", from the intermediate, within the deadline. */
    char ans[64];
    struct pollfd pf = {.fd = s->sock, .events = POLLIN};
    int ms = (int)(timeout_s * 1000);
    if (poll(&pf, 1, ms) != 1) {
        snprintf(err, errlen, "fork server %d: no answer within %.1f s", (int)s->pid, timeout_s);
        return -1;
    }
    ssize_t n = recv(s->sock, ans, sizeof(ans) - 1, 0);
    long pid = 0;
    char *end = NULL;
    if (n > 4 && !memcmp(ans, "pid ", 4)) {
        ans[n] = '\0';
        pid = strtol(ans + 4, &end, 10);
    }
    if (n <= 4 || !end || *end || pid <= 1) {
        snprintf(err, errlen, "fork server %d: a bad answer (%zd bytes)", (int)s->pid, n);
        return -1;
    }
    /* The rank is ours once the intermediate has exited: until then waitpid would not see it. */
    double until = rg_now_s() + timeout_s;
    for (;;) {
        siginfo_t si = {0};
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT) == 0)
            return (pid_t)pid;
        if (errno != ECHILD || rg_now_s() > until)
            break;
        usleep(1000);
    }
    snprintf(err, errlen, "fork server %d: rank %ld was never handed over: %s", (int)s->pid, pid,
             strerror(errno));
    kill((pid_t)pid, SIGKILL);
    return -1;
too_long:
    snprintf(err, errlen, "fork server: a rank's options are longer than %d bytes", SRV__MSG_MAX);
    return -1;
}

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
    char *argv[SRV__ITEMS_MAX + 2];
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
        char buf[CMSG_SPACE(SRV__FDS * sizeof(int))];
    } c;
    struct iovec iov = {.iov_base = msg, .iov_len = SRV__MSG_MAX};
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
        int tmp[SRV__FDS + 8];
        memcpy(tmp, CMSG_DATA(cm), (size_t)(k < SRV__FDS + 8 ? k : SRV__FDS + 8) * sizeof(int));
        for (int i = 0; i < k && i < SRV__FDS + 8; i++) {
            if (got < SRV__FDS)
                fds[got] = tmp[i];
            else
                close(tmp[i]);
            got++;
        }
    }
    bool ok = got == SRV__FDS && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && msg[n - 1] == '\0';
    *nitems = 0;
    for (ssize_t o = 0; ok && o < n;) {
        char *it = msg + o;
        size_t l = strlen(it);
        ok = *nitems < SRV__ITEMS_MAX && l >= 2 &&
             (it[0] == 'A' || it[0] == 'U' || (it[0] == 'E' && strchr(it + 2, '=')));
        items[(*nitems)++] = it;
        o += (ssize_t)l + 1;
    }
    if (!ok) {
        for (int i = 0; i < got && i < SRV__FDS; i++)
            close(fds[i]);
        return -1;
    }
    return 1;
}

int rg_worker_serve(int sock, const char *transport)
{
    static char msg[SRV__MSG_MAX];
    char *items[SRV__ITEMS_MAX];
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
