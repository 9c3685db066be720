/* SPDX-License-Identifier: MIT */
/*
 * The processes of a run, whatever they run (a worker of `railguard run`, a program under
 * `railguard exec`): the signals that ask a hung one for the shim's summary and a backtrace,
 * gdb when it gives none, how one that ended early is judged (its own kill, stop or exit
 * fault, or a crash), and the tail of its log for a finding.
 */
#include "rg_harness.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* gdb needs ~20 s per process under emulation; all hung ranks get theirs at once. */
#define RG_BACKTRACE_S 60.0
/* How long the ranks get to answer the snapshot and backtrace signals themselves. */
#define RG_INPROC_WAIT_S 3.0

double rg_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The signals a rank still running at the deadline is sent before it is killed: the shim
 * writes its summary, the worker its backtrace. Real-time ones, which no verbs stack uses. */
int rg_proc_snapshot_signal(void)
{
    return SIGRTMIN + 2;
}

int rg_proc_backtrace_signal(void)
{
    return SIGRTMIN + 3;
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

/* gdb in batch mode on one process, in the background: the fallback when the rank gave no
 * backtrace of its own (a stopped process, a handler replaced by the transport). */
static pid_t gdb_start(const char *dir, int rank, pid_t pid)
{
    char out[1200], pidstr[32];
    snprintf(out, sizeof(out), "%s/rank%d.backtrace", dir, rank);
    snprintf(pidstr, sizeof(pidstr), "%ld", (long)pid);
    pid_t g = fork();
    if (g == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execlp("gdb", "gdb", "-batch", "-nx", "-p", pidstr, "-ex", "thread apply all bt",
               (char *)NULL);
        _exit(127);
    }
    return g;
}

/*
 * Every rank still running at the deadline is asked, all at once, for the shim's summary and
 * its own backtrace (`inproc`: a worker, which writes one; a program under exec is asked for
 * none, since a real-time signal it does not handle would end it); those that gave no
 * backtrace within a few seconds get gdb, all in parallel. Then they are killed. A hang's report so
 * comes seconds after the deadline, however many ranks hang.
 */
void rg_proc_stop_hung(struct rg_proc *procs, int lo, int hi, const char *dir, bool inproc)
{
    char path[1200], evp[1200], err[256];
    static rg_evidence ev;
    bool asked[RG_MAX_RANKS] = {false};
    int hung = 0;
    for (int r = lo; r < hi; r++) {
        if (procs[r].pid <= 0 || procs[r].exited)
            continue;
        hung++;
        if (inproc)
            kill(procs[r].pid, rg_proc_backtrace_signal());
        /* Only a shim that said it handles the snapshot signal is sent it: to any other
         * process a real-time signal is fatal, and the backtrace would be lost with it. */
        snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", dir, r);
        if (rg_evidence_read(evp, &ev, err, sizeof(err)) == 0 &&
            ev.snapshot_signal == rg_proc_snapshot_signal()) {
            kill(procs[r].pid, rg_proc_snapshot_signal());
            asked[r] = true;
        }
        /* A rank is a process tree: each other process of it that said it handles the signal
         * and is still in the rank's own process group (a program under exec leads one) is
         * asked too, so a hung child's queues are in the evidence. The group check keeps a
         * pid reused by a stranger out of reach. */
        for (int k = 1; asked[r] && k < ev.nprocs && k < RG_EV_PROCS - 1; k++)
            if (ev.proc[k].snapshot_signal == rg_proc_snapshot_signal() &&
                getpgid((pid_t)ev.proc[k].pid) == procs[r].pid)
                kill((pid_t)ev.proc[k].pid, rg_proc_snapshot_signal());
    }
    if (!hung)
        return;
    double until = rg_now_s() + RG_INPROC_WAIT_S;
    for (bool all = false; !all && rg_now_s() < until;) {
        usleep(50000);
        all = true;
        for (int r = lo; r < hi; r++) {
            if (procs[r].pid <= 0 || procs[r].exited)
                continue;
            snprintf(path, sizeof(path), "%s/rank%d.backtrace", dir, r);
            snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", dir, r);
            all = all && (!inproc || rg_file_has(path, NULL)) &&
                  (!asked[r] || rg_file_has(evp, "\"why\":\"snapshot\""));
        }
    }
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &procs[r];
        p->gdb = -1;
        if (p->pid <= 0 || p->exited)
            continue;
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", dir, r);
        if (!rg_file_has(path, NULL))
            p->gdb = gdb_start(dir, r, p->pid);
    }
    until = rg_now_s() + RG_BACKTRACE_S;
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &procs[r];
        while (p->gdb > 0) {
            int st;
            if (waitpid(p->gdb, &st, WNOHANG) == p->gdb)
                break;
            if (rg_now_s() > until) {
                kill(p->gdb, SIGKILL);
                waitpid(p->gdb, &st, 0);
                break;
            }
            usleep(50000);
        }
    }
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &procs[r];
        if (p->pid <= 0 || p->exited)
            continue;
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &p->status, 0);
    }
}

/* Ended without a verdict of its own in a way a fault can cause (stopped, SIGKILL, an exit
 * before its verdict): judge_ended decides whether its own fault did it. */
bool rg_proc_ended_early(const struct rg_proc *p)
{
    return p->stopped || (WIFSIGNALED(p->status) && WTERMSIG(p->status) == SIGKILL) ||
           (WIFEXITED(p->status) && !p->verdict);
}

/*
 * A rank that stopped, died by SIGKILL or exited before its verdict: planned when its own shim
 * says a stop (kill, exit) rule fired there, which it writes before acting; else a crash (an
 * OOM kill, a stranger's signal, a stop nobody planned, a transport that called exit).
 */
void rg_proc_judge_ended(rg_rank_result *k, const struct rg_proc *p, const rg_scenario *sc,
                         const rg_evidence *e, const char *dir, int r)
{
    bool exited = !p->stopped && WIFEXITED(p->status);
    int want = p->stopped ? FI_STOP : exited ? FI_EXIT : FI_KILL;
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++)
        if (sc->fault[i].kind == want && e->fired[i] > 0) {
            if (exited)
                rg_rank_find(k, RG_V_KILLED, k->left_t_s,
                             "left early by its exit fault (faults item %d, line %d) in %s, with "
                             "status %d",
                             i + 1, sc->fault[i].line, k->where, WEXITSTATUS(p->status));
            else if (p->stopped)
                rg_rank_find(k, RG_V_KILLED, p->stop_t_s,
                             "stopped by its stop fault (faults item %d, line %d) at %.2f s in "
                             "%s; ended by the runner once the other ranks had ended",
                             i + 1, sc->fault[i].line, p->stop_t_s, k->where);
            else
                rg_rank_find(k, RG_V_KILLED, k->left_t_s,
                             "killed by its kill fault (faults item %d, line %d) in %s", i + 1,
                             sc->fault[i].line, k->where);
            return;
        }
    if (exited) {
        char logp[1200], tail[400];
        snprintf(logp, sizeof(logp), "%s/rank%d.log", dir, r);
        rg_log_tail(logp, tail, sizeof(tail));
        rg_rank_find(k, RG_V_CRASH, k->left_t_s, "exited with status %d without a verdict%s%s",
                     WEXITSTATUS(p->status), tail[0] ? "; last output: " : "", tail);
    } else if (p->stopped)
        rg_rank_find(k, RG_V_CRASH, p->stop_t_s,
                     "stopped by a signal no planned fault raised, at %.2f s in %s", p->stop_t_s,
                     k->where);
    else
        rg_rank_find(k, RG_V_CRASH, k->left_t_s,
                     "killed by signal %d (%s), not by a planned fault; backtrace in "
                     "%s/rank%d.backtrace",
                     SIGKILL, strsignal(SIGKILL), dir, r);
}

/* The plan every process reads (RG_FI_PLAN_FILE): the scenario's rules one a line, as checked,
 * and after them the sanitizer's (rule numbers in the events stay the scenario's). */
int rg_proc_write_plan(const char *dir, const rg_scenario *sc, char *path, size_t len)
{
    if ((size_t)snprintf(path, len, "%s/plan", dir) >= len)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "%s\n%s", sc->faults[0] ? sc->faults : "count", sc->ownership ? "ownership\n" : "");
    return fclose(f);
}

void rg_proc_shim_env(const char *shim, const char *planfile, const char *events, int rank,
                      bool keep_preload, int time_scale)
{
    char buf[8192], num[16];
    const char *old = getenv("LD_PRELOAD");
    if (keep_preload && old && *old &&
        (size_t)snprintf(buf, sizeof(buf), "%s:%s", shim, old) < sizeof(buf))
        setenv("LD_PRELOAD", buf, 1);
    else
        setenv("LD_PRELOAD", shim, 1);
    /* The plan as the runner checked it, from one file: no faults still counts, and the events
     * then say what each process did. */
    unsetenv("RG_FI_PLAN");
    setenv("RG_FI_PLAN_FILE", planfile, 1);
    setenv("RG_FI_LOG", events, 1);
    snprintf(num, sizeof(num), "%d", rank);
    setenv("RG_FI_RANK", num, 1);
    snprintf(num, sizeof(num), "%d", rg_proc_snapshot_signal());
    setenv("RG_FI_SNAPSHOT_SIGNAL", num, 1);
    /* Always said, so a scale in the caller's environment never reaches a rank by accident. */
    snprintf(num, sizeof(num), "%d", time_scale > 1 ? time_scale : 1);
    setenv("RG_FI_TIME_SCALE", num, 1);
}

bool rg_proc_executable(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0;
    const char *path = getenv("PATH");
    char cand[PATH_MAX];
    for (const char *d = path ? path : ""; *d;) {
        size_t n = strcspn(d, ":");
        if (n && snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, d, name) < (int)sizeof(cand) &&
            access(cand, X_OK) == 0)
            return true;
        d += n + (d[n] == ':');
    }
    return false;
}

int rg_command_words(const char *arg, char *buf, size_t buflen, char **words, int max, char *err,
                     size_t errlen)
{
    char shown[72];
    int n = 0;
    if (snprintf(buf, buflen, "%s", arg) >= (int)buflen) {
        snprintf(err, errlen, "longer than %zu bytes", buflen - 1);
        return -1;
    }
    for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == max) {
            snprintf(err, errlen, "more than %d words", max);
            return -1;
        }
        for (const char *c = w; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) {
                snprintf(err, errlen, "a control character in '%s'",
                         rg_parse_show(arg, shown, sizeof(shown)));
                return -1;
            }
        words[n++] = w;
    }
    words[n] = NULL;
    if (!n) {
        snprintf(err, errlen, "empty");
        return -1;
    }
    if (!rg_proc_executable(words[0])) {
        snprintf(err, errlen,
                 strchr(words[0], '/') ? "'%s' is not an executable file"
                                       : "'%s' not found on PATH",
                 rg_parse_show(words[0], shown, sizeof(shown)));
        return -1;
    }
    return n;
}

/* A TCP port on loopback that no one held a moment ago (0 lets the kernel pick). */
int rg_proc_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Whether a TCP socket listens on `port` (any address, IPv4 or IPv6): /proc/net/tcp{,6} say so
 * without connecting, which would take a one-shot server's only accept. */
bool rg_proc_listening(int port)
{
    static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        FILE *f = fopen(files[i], "r");
        char line[512];
        if (!f)
            continue;
        while (fgets(line, sizeof(line), f)) {
            char local[128];
            unsigned st;
            /* "  0: 0100007F:1F90 00000000:0000 0A ...": local address:port, remote, state */
            if (sscanf(line, " %*d: %127s %*s %x", local, &st) != 2 || st != 0x0A)
                continue;
            const char *colon = strrchr(local, ':');
            if (colon && strtol(colon + 1, NULL, 16) == port) {
                fclose(f);
                return true;
            }
        }
        fclose(f);
    }
    return false;
}

int rg_opt_path(const char *cmd, const char *flag, const char *v, char *dst, size_t len)
{
    char shown[72];
    if (!v || !*v || strlen(v) >= len) {
        fprintf(stderr, "railguard %s: %s: bad or too long value '%s'\n", cmd, flag,
                rg_parse_show(v ? v : "", shown, sizeof(shown)));
        return -1;
    }
    snprintf(dst, len, "%s", v);
    return 0;
}

/* The directory of the railguard executable SELF. */
static void self_dir(char *dir, size_t len, const char *self)
{
    snprintf(dir, len, "%s", self);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
}

void rg_beside(char *out, size_t len, const char *self, const char *name)
{
    /* An install keeps them in lib/railguard/, the build tree in lib/: the install's when it
     * is there, else lib/'s (whose absence the caller's check then names). */
    static const char *const under[] = {"../lib/", "../lib/railguard/"};
    char dir[PATH_MAX];
    self_dir(dir, sizeof(dir), self);
    char real[PATH_MAX];
    for (int i = 1; i >= 0; i--) {
        if ((size_t)snprintf(out, len, "%s/%s%s", dir, under[i], name) >= len)
            out[0] = '\0';
        else if (i && access(out, R_OK) == 0)
            break;
    }
    /* Reports name the file, not the way to it. */
    if (out[0] && realpath(out, real) && strlen(real) < len)
        memcpy(out, real, strlen(real) + 1);
}

int rg_stock_scenarios(char *out, size_t len, const char *self)
{
    /* Installed: PREFIX/share/railguard/scenarios; the build tree: build/FLAVOUR/bin's repo. */
    static const char *const where[] = {"../share/railguard/scenarios", "../../../scenarios"};
    char dir[PATH_MAX];
    struct stat sb;
    self_dir(dir, sizeof(dir), self);
    for (int i = 0; i < 2; i++)
        if ((size_t)snprintf(out, len, "%s/%s", dir, where[i]) < len && stat(out, &sb) == 0 &&
            S_ISDIR(sb.st_mode))
            return 0;
    out[0] = '\0';
    return -1;
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

int rg_devices_write(const char *path, int ranks, int rails, const char (*devices)[64])
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputc('[', f);
    for (int i = 0; i < ranks; i++) {
        fputs(i ? ",\n [" : "[", f);
        for (int j = 0; j < ranks; j++) {
            fputs(j ? "," : "", f);
            if (i == j) {
                fputs("null", f);
                continue;
            }
            fputc('[', f);
            for (int k = 0; k < rails; k++)
                fprintf(f, "%s\"%s\"", k ? "," : "", devices[k]);
            fputc(']', f);
        }
        fputc(']', f);
    }
    fputs("]\n", f);
    return fclose(f);
}

int rg_devices_parse(const char *cmd, const char *list, const char *from, char (*devices)[64],
                     int *n)
{
    char buf[512], shown[72];
    *n = 0;
    if (!list || strlen(list) >= sizeof(buf)) {
        fprintf(stderr, "railguard %s: %s: bad device list\n", cmd, from);
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (*n == RG_MAX_RAILS || strlen(t) >= 64) {
            fprintf(stderr, "railguard %s: %s: at most %d devices of < 64 characters: '%s'\n", cmd,
                    from, RG_MAX_RAILS, rg_parse_show(t, shown, sizeof(shown)));
            return -1;
        }
        snprintf(devices[(*n)++], 64, "%s", t);
    }
    if (!*n) {
        fprintf(stderr, "railguard %s: %s: no device named\n", cmd, from);
        return -1;
    }
    return 0;
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
