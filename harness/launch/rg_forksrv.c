/* SPDX-License-Identifier: MIT */
/*
 * The fork server: one process per rank slot, started once by `railguard run --fork-server`
 * (the sweep's batches) under the shim with the transport loaded and libibverbs' providers
 * warmed, that forks a rank per scenario instead of exec'ing one. Measured in the guest, a
 * rank's exec, dynamic linking and provider loading were about 0.25 s of a 2-rank point's
 * 0.73 s; a fork costs milliseconds.
 *
 * This is the runner's end; rank/rg_serve.c is the server's. The runner sends one SOCK_SEQPACKET
 * message per rank: items joined by NUL bytes -- "E" KEY=VALUE (set in the rank's environment), "U"
 * KEY (unset), "A" WORD (the worker's options) -- with three descriptors (its log, status pipe and
 * go pipe). The server forks an intermediate that forks the rank and sends back "pid N", then
 * exits: the rank is orphaned to the runner, a child subreaper (PR_SET_CHILD_SUBREAPER), so the
 * runner waits for it, sees it stop and reaps it exactly as it does a rank it exec'd. The rank
 * calls the shim's restart (its plan, log and rank from the environment it was given) before its
 * first verbs call, then runs the worker as `railguard worker` would. No device is opened in the
 * server, so no verbs state crosses the fork.
 */
#include "launch/rg_launch.h"

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
    if (*len + n + 2 > RG_FORKSRV_MSG_MAX)
        return -1;
    msg[(*len)++] = kind;
    memcpy(msg + *len, text, n + 1);
    *len += n + 1;
    return 0;
}

int rg_forksrv_send(rg_forksrv *s, const char *const *env, const char *const *args,
                    const int fds[3], char *err, size_t errlen)
{
    static char msg[RG_FORKSRV_MSG_MAX];
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
        char buf[CMSG_SPACE(RG_FORKSRV_FDS * sizeof(int))];
    } c;
    memset(&c, 0, sizeof(c));
    struct iovec iov = {.iov_base = msg, .iov_len = len};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(RG_FORKSRV_FDS * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, RG_FORKSRV_FDS * sizeof(int));
    if (sendmsg(s->sock, &mh, MSG_NOSIGNAL) != (ssize_t)len) {
        snprintf(err, errlen, "fork server %d: send: %s", (int)s->pid, strerror(errno));
        return -1;
    }
    return 0;
too_long:
    snprintf(err, errlen, "fork server: a rank's options are longer than %d bytes",
             RG_FORKSRV_MSG_MAX);
    return -1;
}

pid_t rg_forksrv_take(rg_forksrv *s, double timeout_s, char *err, size_t errlen)
{
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
}
