/* SPDX-License-Identifier: MIT */
/*
 * A helper program run to its end or its deadline, its standard output kept (rg_base.h): what
 * the runner asks of addr2line, tc and ip. Never a shell, so no word of the command is read
 * twice; never a wait without a deadline.
 */
#include "base/rg_base.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int rg_capture(char *const argv[], double limit_s, char *out, size_t outlen, int *status, char *why,
               size_t whylen)
{
    int fds[2];
    size_t len = 0;
    if (outlen)
        out[0] = '\0';
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whylen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(fds[1], 1);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 2);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    double until = rg_now_s() + limit_s;
    bool late = false;
    for (;;) {
        double left = until - rg_now_s();
        if (left <= 0) {
            late = true;
            break;
        }
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r <= 0)
            continue; /* EINTR, or the deadline: looked at again above */
        /* Past what out holds the rest is read and dropped, so the program never blocks. */
        char sink[4096];
        bool room = len + 1 < outlen;
        ssize_t got = read(fds[0], room ? out + len : sink, room ? outlen - 1 - len : sizeof(sink));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (room)
            len += (size_t)got;
    }
    close(fds[0]);
    if (outlen)
        out[len] = '\0';
    if (late)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (late) {
        snprintf(why, whylen, "%.100s took over %g s: killed", argv[0], limit_s);
        return -1;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
        snprintf(why, whylen, "%.100s is not installed", argv[0]);
        return -1;
    }
    *status = st;
    return 0;
}
