/* SPDX-License-Identifier: MIT */
/*
 * The runner's small tools, below everything else in harness/: the one clock every deadline is
 * read on, files and logs, status lines, directories, the job secret.
 */
#include "base/rg_base.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

double rg_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whether the file's last 64 KiB hold needle (or, with NULL, whether it has any byte): what
 * is looked for was just appended, and an events file can be far longer. */
bool rg_file_has(const char *path, const char *needle)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        fseek(f, end > (long)sizeof(buf) - 1 ? end - (long)sizeof(buf) + 1 : 0, SEEK_SET);
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return needle ? strstr(buf, needle) != NULL : n > 0;
}

/* The last `max` bytes of a rank's log, cut at a line start, made one line for a finding. */
void rg_log_tail(const char *path, char *out, size_t max)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        long from = end > (long)max - 1 ? end - (long)max + 1 : 0;
        if (fseek(f, from, SEEK_SET) == 0) {
            size_t n = fread(out, 1, max - 1, f);
            out[n] = '\0';
        }
    }
    fclose(f);
    char *p = out;
    if (strlen(out) == max - 1 && (p = strchr(out, '\n')))
        memmove(out, p + 1, strlen(p + 1) + 1);
    size_t n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
        out[--n] = '\0';
    for (p = out; *p; p++)
        if (*p == '\n')
            *p = '|';
        else if ((unsigned char)*p < 0x20)
            *p = '?';
}

int rg_mkdirs(const char *path)
{
    char p[PATH_MAX];
    if ((size_t)snprintf(p, sizeof(p), "%s", path) >= sizeof(p)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int rg_job_secret(char *hex)
{
    unsigned char b[32];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(b); i++)
        snprintf(hex + 2 * i, 3, "%02x", b[i]);
    explicit_bzero(b, sizeof(b));
    return 0;
}

void rg_say_line(int fd, const char *prefix, const char *fmt, va_list ap)
{
    char line[1024];
    int at = snprintf(line, sizeof(line), "%s", prefix ? prefix : "");
    if (at < 0 || (size_t)at >= sizeof(line) - 2)
        at = 0;
    int n = vsnprintf(line + at, sizeof(line) - 1 - (size_t)at, fmt, ap);
    if (n < 0)
        return;
    n += at;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    for (int i = 0; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t k = write(fd, line + off, (size_t)(n - off));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        off += (int)k;
    }
}

void rg_child_output(const char *log)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    dup2(fd, 1);
    dup2(fd, 2);
    if (fd > 2)
        close(fd);
}

int rg_child_wait(int pid, double limit_s, bool group, int *st)
{
    double end = rg_now_s() + limit_s;
    for (;;) {
        pid_t w = waitpid(pid, st, WNOHANG);
        if (w == pid)
            return 0;
        if ((w < 0 && errno != EINTR) || rg_now_s() > end) {
            kill(group ? -pid : pid, SIGKILL);
            waitpid(pid, st, 0);
            return -1;
        }
        usleep(20000);
    }
}
