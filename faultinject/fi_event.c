/* SPDX-License-Identifier: MIT */
/*
 * The shim's evidence: one JSON object per line, written with a single write() each so lines
 * from several ranks appending to one file stay whole (O_APPEND writes below PIPE_BUF don't
 * interleave on a local file system). Formatting is on the stack: events may be written from
 * the datapath, where the shim allocates nothing.
 */
#include "fi_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_fd = 2;

int fi_event_open(char *err, size_t errlen)
{
    const char *spec = getenv("RG_FI_LOG");
    char path[4096];
    size_t o = 0;

    if (g_fd > 2)
        close(g_fd);
    g_fd = 2;
    if (!spec || !*spec)
        return 0;
    for (const char *p = spec; *p && o + 24 < sizeof(path); p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(path + o, sizeof(path) - o, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == 'r') {
            /* The process's rank (a launcher's processes each take theirs, so each rank of an
             * MPI job has a file of its own); "none" for one without (the launcher itself). */
            int r = fi_rank();
            o += r >= 0 ? (size_t)snprintf(path + o, sizeof(path) - o, "%d", r)
                        : (size_t)snprintf(path + o, sizeof(path) - o, "none");
            p++;
        } else {
            path[o++] = *p;
        }
    }
    path[o] = '\0';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "RG_FI_LOG: cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    g_fd = fd;
    return 0;
}

int fi_event_logged(void)
{
    return g_fd > 2;
}

void fi_ev(enum rg_ev_kind kind, const void *rec)
{
    char line[4096];   /* a fault event with its call path: FI_SITE_DEPTH object paths */
    int saved = errno; /* events are written inside wrapped calls: the program's errno stays */
    /* mono_ms is CLOCK_MONOTONIC itself, shared by every rank on the host: a runner orders
     * faults and verdicts of different ranks with it. t_ms is relative to this rank's load. */
    struct fi_ev_head h = {fi_rank(), (long)getpid(), fi_elapsed_ms(), (double)fi_now_ns() / 1e6};
    size_t n = fi_ev_format(line, sizeof(line), kind, rec, &h);
    for (size_t off = 0; off < n;) {
        ssize_t w = write(g_fd, line + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    errno = saved;
}
