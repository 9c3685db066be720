/* SPDX-License-Identifier: MIT */
/*
 * `railguard run`: loads every scenario first (a bad file stops the run before anything
 * starts), then runs each one in a supervisor process of its own, up to -j at a time. A
 * supervisor writes the devices file, picks a free coordinator port, starts one worker per
 * rank with the shim preloaded and the scenario's fault plan, follows each rank's status
 * lines, and at the deadline takes a backtrace of every rank still running (gdb in batch
 * mode) before killing it. Its verdicts go to result.json in the scenario's directory, which
 * the runner reads back for the live line, the table and the reports.
 */
#include "rg_harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RG_RUN_MAX_SCENARIOS 512
#define RG_BACKTRACE_S 30.0

struct run_opts {
    char self[PATH_MAX];
    char transport[PATH_MAX];
    char shim[PATH_MAX];
    char out[PATH_MAX];
    char junit[PATH_MAX];
    char json[PATH_MAX];
    char devices[RG_MAX_RAILS][64];
    int ndevices;
    char devlist[RG_MAX_RAILS * 65];
    int jobs;
    bool seed_set;
    uint64_t seed;
    /* external launch: one rank per process, started by mpirun/srun */
    bool external;
    char coordinator[256];
    char devices_file[PATH_MAX];
};

/* snprintf for messages and paths that are cut short rather than refused when too long. */
static void fmt(char *dst, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *dst, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(dst, len, f, ap);
    va_end(ap);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *abs_path(const char *p)
{
    char *r = realpath(p, NULL);
    return r ? r : strdup(p);
}

/* Absolute, so the reproduce line works from anywhere; left as it is if it can't be. */
static void make_abs(char *path, size_t len)
{
    char *a = abs_path(path);
    if (a)
        snprintf(path, len, "%s", a);
    free(a);
}

/* The seed a scenario runs with: --seed when given, else the scenario's own. */
static uint64_t scenario_seed(const struct run_opts *o, const rg_scenario *sc)
{
    return o->seed_set ? o->seed : sc->seed;
}

void rg_run_usage(FILE *f)
{
    fprintf(f,
            "usage: railguard run [--transport SO] [--shim SO] [--devices rxe0,rxe1] [--out DIR]\n"
            "                     [--junit FILE] [--json FILE] [--seed N] [-j N] SCENARIO|DIR...\n"
            "       railguard run --external --coordinator HOST:PORT --devices-file FILE\n"
            "                     [--transport SO] [--shim SO] [--out DIR] [--seed N] SCENARIO\n"
            "                     (one rank per process, under mpirun or srun)\n");
}

static int usage(const char *msg)
{
    fprintf(stderr, "railguard run: %s\n", msg);
    rg_run_usage(stderr);
    return 2;
}

/* bin/railguard -> ../lib/<name> */
static void beside(char *out, size_t len, const char *self, const char *name)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", self);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    if ((size_t)snprintf(out, len, "%s/../lib/%s", dir, name) >= len)
        out[0] = '\0';
}

static int set_path(char *dst, size_t len, const char *v, const char *flag)
{
    if (!v || !*v || strlen(v) >= len) {
        fprintf(stderr, "railguard run: %s: bad or too long value '%s'\n", flag, v ? v : "");
        return -1;
    }
    snprintf(dst, len, "%s", v);
    return 0;
}

static int parse_devices(struct run_opts *o, const char *list, const char *from)
{
    char buf[512];
    o->ndevices = 0;
    if (!list || strlen(list) >= sizeof(buf)) {
        fprintf(stderr, "railguard run: %s: bad device list\n", from);
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (o->ndevices == RG_MAX_RAILS || strlen(t) >= sizeof(o->devices[0])) {
            fprintf(stderr, "railguard run: %s: at most %d devices of < 64 characters: '%s'\n",
                    from, RG_MAX_RAILS, t);
            return -1;
        }
        snprintf(o->devices[o->ndevices++], sizeof(o->devices[0]), "%s", t);
    }
    if (!o->ndevices) {
        fprintf(stderr, "railguard run: %s: no device named\n", from);
        return -1;
    }
    size_t off = 0;
    for (int i = 0; i < o->ndevices; i++)
        off += (size_t)snprintf(o->devlist + off, sizeof(o->devlist) - off, "%s%s", i ? "," : "",
                                o->devices[i]);
    return 0;
}

static int parse_opts(int argc, char **argv, struct run_opts *o, int *first)
{
    static const struct option longs[] = {{"transport", required_argument, NULL, 't'},
                                          {"shim", required_argument, NULL, 's'},
                                          {"devices", required_argument, NULL, 'd'},
                                          {"out", required_argument, NULL, 'o'},
                                          {"junit", required_argument, NULL, 'J'},
                                          {"json", required_argument, NULL, 'S'},
                                          {"seed", required_argument, NULL, 'e'},
                                          {"jobs", required_argument, NULL, 'j'},
                                          {"external", no_argument, NULL, 'x'},
                                          {"coordinator", required_argument, NULL, 'c'},
                                          {"devices-file", required_argument, NULL, 'f'},
                                          {NULL, 0, NULL, 0}};
    const char *devs = getenv("RG_SOFTROCE_DEVICES");
    const char *devs_from = "RG_SOFTROCE_DEVICES";
    int c;

    memset(o, 0, sizeof(*o));
    o->jobs = 1;
    ssize_t n = readlink("/proc/self/exe", o->self, sizeof(o->self) - 1);
    if (n <= 0)
        return usage("cannot find my own executable");
    o->self[n] = '\0';
    beside(o->transport, sizeof(o->transport), o->self, "railguard-transport.so");
    beside(o->shim, sizeof(o->shim), o->self, "railguard-fi.so");
    snprintf(o->out, sizeof(o->out), "railguard-out");
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "j:o:", longs, NULL)) != -1) {
        char *end;
        switch (c) {
        case 't':
            if (set_path(o->transport, sizeof(o->transport), optarg, "--transport"))
                return 2;
            break;
        case 's':
            if (set_path(o->shim, sizeof(o->shim), optarg, "--shim"))
                return 2;
            break;
        case 'o':
            if (set_path(o->out, sizeof(o->out) - 200, optarg, "--out"))
                return 2;
            break;
        case 'J':
            if (set_path(o->junit, sizeof(o->junit), optarg, "--junit"))
                return 2;
            break;
        case 'S':
            if (set_path(o->json, sizeof(o->json), optarg, "--json"))
                return 2;
            break;
        case 'd':
            devs = optarg;
            devs_from = "--devices";
            break;
        case 'x':
            o->external = true;
            break;
        case 'c':
            if (set_path(o->coordinator, sizeof(o->coordinator), optarg, "--coordinator"))
                return 2;
            break;
        case 'f':
            if (set_path(o->devices_file, sizeof(o->devices_file), optarg, "--devices-file"))
                return 2;
            break;
        case 'e':
            errno = 0;
            o->seed = strtoull(optarg, &end, 0);
            if (errno || !*optarg || *end || *optarg == '-') {
                fprintf(stderr, "railguard run: --seed: not a number '%s'\n", optarg);
                return 2;
            }
            o->seed_set = true;
            break;
        case 'j':
            errno = 0;
            o->jobs = (int)strtol(optarg, &end, 10);
            if (errno || *end || o->jobs < 1 || o->jobs > 64) {
                fprintf(stderr, "railguard run: -j: must be 1..64 '%s'\n", optarg);
                return 2;
            }
            break;
        default:
            fprintf(stderr, "railguard run: unknown or incomplete option '%s'\n", argv[optind - 1]);
            return 2;
        }
    }
    if (o->external) {
        /* The devices file is the site's: every rank must name the same links. */
        if (!o->coordinator[0] || !o->devices_file[0]) {
            fprintf(stderr, "railguard run: --external needs --coordinator HOST:PORT (rank 0's "
                            "address) and --devices-file FILE\n");
            return 2;
        }
        if (access(o->devices_file, R_OK)) {
            fprintf(stderr, "railguard run: --devices-file: cannot read '%s': %s\n",
                    o->devices_file, strerror(errno));
            return 2;
        }
        snprintf(o->devlist, sizeof(o->devlist), "(devices file)");
    } else if (o->coordinator[0] || o->devices_file[0]) {
        fprintf(stderr, "railguard run: --coordinator and --devices-file are for --external; "
                        "a local run makes its own\n");
        return 2;
    } else if (!devs || !*devs) {
        fprintf(stderr, "railguard run: no devices: pass --devices rxe0,rxe1 or set "
                        "RG_SOFTROCE_DEVICES (ci/softroce exec does)\n");
        return 2;
    } else if (parse_devices(o, devs, devs_from)) {
        return 2;
    }
    if (access(o->transport, R_OK) || access(o->shim, R_OK)) {
        fprintf(stderr, "railguard run: cannot read %s\n",
                access(o->transport, R_OK) ? o->transport : o->shim);
        return 2;
    }
    make_abs(o->transport, sizeof(o->transport));
    make_abs(o->shim, sizeof(o->shim));
    if (optind >= argc)
        return usage("no scenario named");
    *first = optind;
    return 0;
}

/* --- scenarios --------------------------------------------------------------------------- */
struct sc_entry {
    char path[1024];
    rg_scenario sc;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_yaml(const char *name)
{
    size_t n = strlen(name);
    return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml"));
}

/* Appends the scenario files named by `arg` (a file, or a directory's *.yaml, sorted). */
static int collect(const char *arg, char **paths, int *n)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        fprintf(stderr, "railguard run: %s: %s\n", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (*n == RG_RUN_MAX_SCENARIOS) {
            fprintf(stderr, "railguard run: more than %d scenarios\n", RG_RUN_MAX_SCENARIOS);
            return -1;
        }
        paths[(*n)++] = strdup(arg);
        return 0;
    }
    DIR *d = opendir(arg);
    if (!d) {
        fprintf(stderr, "railguard run: %s: %s\n", arg, strerror(errno));
        return -1;
    }
    int start = *n;
    for (struct dirent *e; (e = readdir(d));) {
        char p[1024];
        if (e->d_name[0] == '.' || !is_yaml(e->d_name))
            continue;
        if (*n == RG_RUN_MAX_SCENARIOS) {
            closedir(d);
            fprintf(stderr, "railguard run: more than %d scenarios\n", RG_RUN_MAX_SCENARIOS);
            return -1;
        }
        snprintf(p, sizeof(p), "%s/%s", arg, e->d_name);
        paths[(*n)++] = strdup(p);
    }
    closedir(d);
    qsort(paths + start, (size_t)(*n - start), sizeof(char *), cmp_str);
    return 0;
}

/* Runs a program, its output to `out_path` (or discarded); -1 when killed at the deadline. */
static int run_cmd(char *const argv[], char *const envp_extra[], const char *out_path,
                   double timeout_s, char *capture, size_t caplen)
{
    int fds[2] = {-1, -1};
    if (capture && pipe(fds) != 0)
        return -2;
    pid_t pid = fork();
    if (pid < 0)
        return -2;
    if (pid == 0) {
        int fd = capture
                     ? fds[1]
                     : open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        for (int i = 0; envp_extra && envp_extra[i]; i++)
            putenv(envp_extra[i]);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (capture)
        close(fds[1]);
    double end = now_s() + timeout_s;
    size_t got = 0;
    int st = 0;
    for (;;) {
        if (capture && fds[0] >= 0) {
            struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
            if (poll(&pfd, 1, 50) > 0) {
                ssize_t k = read(fds[0], capture + got, caplen - 1 - got);
                if (k <= 0) {
                    close(fds[0]);
                    fds[0] = -1;
                } else {
                    got += (size_t)k;
                }
            }
        } else {
            usleep(20000);
        }
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (now_s() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            st = -1;
            break;
        }
    }
    if (capture) {
        if (fds[0] >= 0)
            close(fds[0]);
        capture[got] = '\0';
    }
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Asks the shim whether each fault rule is well formed: the plan grammar has one owner. */
static int check_faults(const struct run_opts *o, const struct sc_entry *e)
{
    char buf[RG_SC_FAULTS_MAX];
    snprintf(buf, sizeof(buf), "%s", e->sc.faults);
    int item = 0;
    for (char *save = NULL, *rule = strtok_r(buf, ";", &save); rule;
         rule = strtok_r(NULL, ";", &save)) {
        char pre[PATH_MAX + 16], plan[RG_SC_FAULTS_MAX + 16], out[1024];
        while (*rule == ' ')
            rule++;
        snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", o->shim);
        snprintf(plan, sizeof(plan), "RG_FI_PLAN=%s", rule);
        char *env[] = {pre, plan, "RG_FI_LOG=/dev/null", NULL};
        char *argv[] = {"true", NULL};
        int rc = run_cmd(argv, env, NULL, 30, out, sizeof(out));
        if (rc != 0) {
            char *nl = strchr(out, '\n');
            if (nl)
                *nl = '\0';
            fprintf(stderr, "%s: faults item %d: %s\n", e->path, item + 1,
                    out[0] ? out : "the shim refused the rule");
            return -1;
        }
        item++;
    }
    return 0;
}

/* --- one scenario ---------------------------------------------------------------------------- */
struct rankproc {
    pid_t pid;
    int fd;
    char buf[4096];
    size_t len;
    bool exited;
    bool verdict;
    int status;
};

static int free_port(void)
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

static int write_devices(const struct run_opts *o, const rg_scenario *sc, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputc('[', f);
    for (int i = 0; i < sc->ranks; i++) {
        fputs(i ? ",\n [" : "[", f);
        for (int j = 0; j < sc->ranks; j++) {
            fputs(j ? "," : "", f);
            if (i == j) {
                fputs("null", f);
                continue;
            }
            fputc('[', f);
            for (int k = 0; k < sc->rails; k++)
                fprintf(f, "%s\"%s\"", k ? "," : "", o->devices[k]);
            fputc(']', f);
        }
        fputc(']', f);
    }
    fputs("]\n", f);
    return fclose(f);
}

/* One status line from a rank. */
static void take_line(rg_rank_result *k, struct rankproc *p, char *line)
{
    int step, rep, off = 0;
    if (sscanf(line, "step %d %d %n", &step, &rep, &off) == 2 && off > 0) {
        k->step = step;
        k->rep = rep;
        snprintf(k->where, sizeof(k->where), "%s", line + off);
        return;
    }
    if (strncmp(line, "verdict ", 8) != 0)
        return;
    const char *v = line + 8;
    p->verdict = true;
    if (!strcmp(v, "ok")) {
        k->verdict = RG_V_OK;
        k->detail[0] = '\0';
    } else if (!strncmp(v, "detected ", 9) || !strncmp(v, "corrupt ", 8)) {
        bool det = v[0] == 'd';
        int o2 = 0;
        v += det ? 9 : 8;
        if (sscanf(v, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0) {
            k->step = step;
            k->rep = rep;
            v += o2;
        }
        k->verdict = det ? RG_V_DETECTED : RG_V_SILENT_CORRUPTION;
        snprintf(k->detail, sizeof(k->detail), "%s", v);
    } else if (!strncmp(v, "error ", 6)) {
        k->verdict = RG_V_ERROR;
        snprintf(k->detail, sizeof(k->detail), "%s", v + 6);
    }
}

static void drain(rg_rank_result *k, struct rankproc *p)
{
    for (;;) {
        if (p->fd < 0)
            return;
        ssize_t n = read(p->fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            close(p->fd);
            p->fd = -1;
            return;
        }
        p->len += (size_t)n;
        p->buf[p->len] = '\0';
        char *start = p->buf, *nl;
        while ((nl = strchr(start, '\n'))) {
            *nl = '\0';
            take_line(k, p, start);
            start = nl + 1;
        }
        p->len = strlen(start);
        memmove(p->buf, start, p->len + 1);
        if (p->len == sizeof(p->buf) - 1)
            p->len = 0; /* a line this long is not ours: drop it */
    }
}

static void backtrace(const char *dir, int rank, pid_t pid)
{
    char out[1200], pidstr[32];
    snprintf(out, sizeof(out), "%s/rank%d.backtrace", dir, rank);
    snprintf(pidstr, sizeof(pidstr), "%ld", (long)pid);
    char *argv[] = {"gdb", "-batch", "-nx", "-p", pidstr, "-ex", "thread apply all bt", NULL};
    run_cmd(argv, NULL, out, RG_BACKTRACE_S, NULL, 0);
}

/*
 * Runs ranks lo..hi-1 of a scenario here and follows them to their verdicts: all of them when
 * local, this process's one rank when launched externally.
 */
static void run_ranks(const struct run_opts *o, const struct sc_entry *e, rg_result *res, int lo,
                      int hi, const char *coord, const char *devfile)
{
    const rg_scenario *sc = &e->sc;
    struct rankproc procs[RG_MAX_RANKS];
    double t0 = now_s();

    for (int r = lo; r < hi; r++) {
        int fds[2];
        /* Until a rank says otherwise it is where it started, and silence is a crash. */
        res->rank[r].verdict = RG_V_CRASH;
        res->rank[r].step = -1;
        snprintf(res->rank[r].where, sizeof(res->rank[r].where), "start");
        procs[r] = (struct rankproc){.pid = -1, .fd = -1};
        if (pipe(fds) != 0)
            continue;
        pid_t pid = fork();
        if (pid == 0) {
            char log[1200], ev[1200], rank[16], seed[32], pre[PATH_MAX + 16];
            snprintf(log, sizeof(log), "%s/rank%d.log", res->dir, r);
            snprintf(ev, sizeof(ev), "%s/rank%d.events.jsonl", res->dir, r);
            snprintf(rank, sizeof(rank), "%d", r);
            snprintf(seed, sizeof(seed), "%llu", (unsigned long long)scenario_seed(o, sc));
            snprintf(pre, sizeof(pre), "%s", o->shim);
            int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (lfd >= 0) {
                dup2(lfd, 1);
                dup2(lfd, 2);
            }
            close(fds[0]);
            if (fds[1] != 3) {
                dup2(fds[1], 3);
                close(fds[1]);
            }
            setenv("LD_PRELOAD", pre, 1);
            /* No faults still counts: the events then say what each rank did. */
            setenv("RG_FI_PLAN", sc->faults[0] ? sc->faults : "count", 1);
            unsetenv("RG_FI_PLAN_FILE");
            setenv("RG_FI_LOG", ev, 1);
            setenv("RG_FI_RANK", rank, 1);
            char *argv[] = {(char *)o->self,
                            "worker",
                            "--scenario",
                            (char *)e->path,
                            "--rank",
                            rank,
                            "--coordinator",
                            (char *)coord,
                            "--devices-file",
                            (char *)devfile,
                            "--transport",
                            (char *)o->transport,
                            "--status-fd",
                            "3",
                            "--seed",
                            seed,
                            NULL};
            execv(o->self, argv);
            _exit(127);
        }
        close(fds[1]);
        if (pid < 0) {
            close(fds[0]);
            continue;
        }
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        procs[r].pid = pid;
        procs[r].fd = fds[0];
    }

    double deadline = t0 + sc->deadline_s;
    for (;;) {
        struct pollfd pfds[RG_MAX_RANKS];
        int np = 0, live = 0;
        for (int r = lo; r < hi; r++) {
            if (procs[r].fd >= 0)
                pfds[np++] = (struct pollfd){.fd = procs[r].fd, .events = POLLIN};
            live += procs[r].pid > 0 && !procs[r].exited;
        }
        if (!live)
            break;
        double left = deadline - now_s();
        if (left <= 0)
            break;
        poll(pfds, (nfds_t)np, left > 0.2 ? 200 : (int)(left * 1000) + 1);
        for (int r = lo; r < hi; r++) {
            drain(&res->rank[r], &procs[r]);
            if (procs[r].pid > 0 && !procs[r].exited &&
                waitpid(procs[r].pid, &procs[r].status, WNOHANG) == procs[r].pid) {
                procs[r].exited = true;
                drain(&res->rank[r], &procs[r]);
            }
        }
    }
    /* Whoever is still running at the deadline is deadlocked: say where, then stop it. */
    for (int r = lo; r < hi; r++) {
        struct rankproc *p = &procs[r];
        rg_rank_result *k = &res->rank[r];
        if (p->pid > 0 && !p->exited) {
            char had[64] = "";
            if (p->verdict)
                snprintf(had, sizeof(had), " (after reporting %s)", rg_verdict_name(k->verdict));
            backtrace(res->dir, r, p->pid);
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &p->status, 0);
            p->exited = true;
            drain(k, p);
            k->verdict = RG_V_DEADLOCK;
            fmt(k->detail, sizeof(k->detail),
                "still running after the %.0f s deadline%s; backtrace in %s/rank%d.backtrace",
                sc->deadline_s, had, res->dir, r);
        } else if (p->pid < 0) {
            k->verdict = RG_V_ERROR;
            snprintf(k->detail, sizeof(k->detail), "could not start the rank");
        } else if (WIFSIGNALED(p->status)) {
            k->verdict = RG_V_CRASH;
            snprintf(k->detail, sizeof(k->detail), "killed by signal %d (%s)", WTERMSIG(p->status),
                     strsignal(WTERMSIG(p->status)));
        } else if (!p->verdict) {
            k->verdict = RG_V_CRASH;
            snprintf(k->detail, sizeof(k->detail), "exited with status %d without a verdict",
                     WEXITSTATUS(p->status));
        }
        if (p->fd >= 0)
            close(p->fd);
    }
    res->seconds = now_s() - t0;
}

static void run_scenario(const struct run_opts *o, const struct sc_entry *e, rg_result *res)
{
    const rg_scenario *sc = &e->sc;
    char devfile[1200], coord[64];

    fmt(devfile, sizeof(devfile), "%s/devices.json", res->dir);
    int port = free_port();
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", port);
    if (port < 0 || write_devices(o, sc, devfile) != 0) {
        for (int r = 0; r < sc->ranks; r++) {
            res->rank[r].verdict = RG_V_ERROR;
            res->rank[r].step = -1;
            snprintf(res->rank[r].where, sizeof(res->rank[r].where), "start");
            fmt(res->rank[r].detail, sizeof(res->rank[r].detail), "could not set up (port %d, %s)",
                port, devfile);
        }
    } else {
        run_ranks(o, e, res, 0, sc->ranks, coord, devfile);
    }
    rg_judge(res);
}

/* The supervisor: one process per scenario, so -j scenarios never share anything. */
static pid_t start_scenario(const struct run_opts *o, const struct sc_entry *e, int index)
{
    char dir[1024];
    fmt(dir, sizeof(dir), "%s/%03d-%s", o->out, index, e->sc.name);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    static rg_result res;
    char err[512], path[1200];
    memset(&res, 0, sizeof(res));
    snprintf(res.name, sizeof(res.name), "%s", e->sc.name);
    snprintf(res.path, sizeof(res.path), "%s", e->path);
    snprintf(res.dir, sizeof(res.dir), "%s", dir);
    res.ranks = e->sc.ranks;
    memcpy(res.expect, e->sc.expect, sizeof(res.expect));
    fmt(res.repro, sizeof(res.repro),
        "%s run --seed %llu --transport %s --shim %s --devices %s --out %s/repro %s", o->self,
        (unsigned long long)scenario_seed(o, &e->sc), o->transport, o->shim, o->devlist, o->out,
        e->path);
    mkdir(dir, 0755);
    run_scenario(o, e, &res);
    snprintf(path, sizeof(path), "%s/result.json", dir);
    if (rg_result_save(&res, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard run: %s\n", err);
        _exit(1);
    }
    _exit(0);
}

/* The launcher's rank and size: Open MPI, PMI (MPICH, srun --mpi=pmi2), then Slurm. */
static int launcher_rank(int *rank, int *size, const char **from)
{
    static const char *const vars[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                          {"PMI_RANK", "PMI_SIZE"},
                                          {"SLURM_PROCID", "SLURM_NTASKS"}};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *r = getenv(vars[i][0]), *n = getenv(vars[i][1]);
        char *e1 = NULL, *e2 = NULL;
        if (!r || !*r)
            continue;
        *from = vars[i][0];
        if (!n || !*n) {
            fprintf(stderr, "railguard run: %s is set but %s is not\n", vars[i][0], vars[i][1]);
            return -1;
        }
        errno = 0;
        long rv = strtol(r, &e1, 10), nv = strtol(n, &e2, 10);
        if (errno || *e1 || *e2 || rv < 0 || nv < 1 || rv >= nv || nv > RG_MAX_RANKS) {
            fprintf(stderr, "railguard run: %s=%s, %s=%s: not a rank within a size of 1..%d\n",
                    vars[i][0], r, vars[i][1], n, RG_MAX_RANKS);
            return -1;
        }
        *rank = (int)rv;
        *size = (int)nv;
        return 0;
    }
    fprintf(stderr, "railguard run: --external: no launcher rank (OMPI_COMM_WORLD_RANK, "
                    "PMI_RANK or SLURM_PROCID); start it with mpirun or srun\n");
    return -1;
}

/*
 * External launch: this process is one rank, started by mpirun or srun on some node. It runs
 * its rank under the shim as a local run would, judges it against the scenario's expectation
 * for that rank, and exits 0 or 1, so the launcher's exit status is the scenario's verdict.
 * Each rank writes <out>/<name>/rankR.* (on a shared file system, one directory holds all).
 */
static int run_external(const struct run_opts *o, const struct sc_entry *e)
{
    static rg_result res, view;
    int rank, size;
    const char *from = "";
    char err[512], path[PATH_MAX + 64];

    if (launcher_rank(&rank, &size, &from))
        return 2;
    if (size != e->sc.ranks) {
        fprintf(stderr, "%s: the scenario has %d ranks, the launcher started %d (%s)\n", e->path,
                e->sc.ranks, size, from);
        return 2;
    }
    memset(&res, 0, sizeof(res));
    res.ranks = e->sc.ranks;
    fmt(res.dir, sizeof(res.dir), "%s/%s", o->out, e->sc.name);
    mkdir(res.dir, 0755);
    run_ranks(o, e, &res, rank, rank + 1, o->coordinator, o->devices_file);

    memset(&view, 0, sizeof(view));
    fmt(view.name, sizeof(view.name), "%s[rank %d]", e->sc.name, rank);
    snprintf(view.path, sizeof(view.path), "%s", e->path);
    snprintf(view.dir, sizeof(view.dir), "%s", res.dir);
    view.ranks = 1;
    view.rank[0] = res.rank[rank];
    view.expect[0] = e->sc.expect[rank];
    view.seconds = res.seconds;
    fmt(view.repro, sizeof(view.repro),
        "(rank %d of %d, under the same launcher) %s run --external --coordinator %s "
        "--devices-file %s --seed %llu --transport %s --shim %s --out %s %s",
        rank, size, o->self, o->coordinator, o->devices_file,
        (unsigned long long)scenario_seed(o, &e->sc), o->transport, o->shim, o->out, e->path);
    rg_judge(&view);
    fmt(path, sizeof(path), "%s/rank%d.result.json", res.dir, rank);
    if (rg_result_save(&view, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    rg_report_line(stdout, &view);
    printf("%d passed, %d failed\n", view.passed, !view.passed);
    return view.passed ? 0 : 1;
}

int rg_run_main(int argc, char **argv)
{
    static struct run_opts o;
    static char *paths[RG_RUN_MAX_SCENARIOS];
    static struct sc_entry entries[RG_RUN_MAX_SCENARIOS];
    static rg_result results[RG_RUN_MAX_SCENARIOS];
    int first, n = 0, st = 2;
    char err[1024];

    int rc = parse_opts(argc, argv, &o, &first);
    if (rc)
        return rc;
    for (int i = first; i < argc; i++)
        if (collect(argv[i], paths, &n) != 0)
            goto out;
    if (!n) {
        fprintf(stderr, "railguard run: no scenario files (*.yaml) in the paths given\n");
        goto out;
    }
    /* Every scenario is checked before any runs: a typo found late wastes a whole run. */
    for (int i = 0; i < n; i++) {
        struct sc_entry *e = &entries[i];
        char *ap = abs_path(paths[i]);
        snprintf(e->path, sizeof(e->path), "%s", ap);
        free(ap);
        if (rg_scenario_load(paths[i], &e->sc, err, sizeof(err)) != 0) {
            fprintf(stderr, "%s\n", err);
            goto out;
        }
        /* External runs take their rails from the site's devices file. */
        if (!o.external && e->sc.rails > o.ndevices) {
            fprintf(stderr, "%s: needs %d rails, but only %d devices are given (%s)\n", paths[i],
                    e->sc.rails, o.ndevices, o.devlist);
            goto out;
        }
        if (check_faults(&o, e) != 0)
            goto out;
    }
    if (o.external && n != 1) {
        fprintf(stderr, "railguard run: --external runs one scenario per launch (%d given)\n", n);
        goto out;
    }
    if (mkdir(o.out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "railguard run: %s: %s\n", o.out, strerror(errno));
        goto out;
    }
    {
        char *ao = abs_path(o.out);
        snprintf(o.out, sizeof(o.out), "%s", ao);
        free(ao);
    }
    if (o.external) {
        st = run_external(&o, &entries[0]);
        goto out;
    }
    printf("railguard run: %d scenario(s), transport %s, devices %s, -j %d, logs in %s\n", n,
           o.transport, o.devlist, o.jobs, o.out);
    fflush(stdout);

    double t0 = now_s();
    pid_t running[64];
    int slot_of[64], next = 0, done = 0, inflight = 0;
    while (done < n) {
        while (inflight < o.jobs && next < n) {
            pid_t pid = start_scenario(&o, &entries[next], next);
            if (pid < 0) {
                fprintf(stderr, "railguard run: fork: %s\n", strerror(errno));
                goto out;
            }
            running[inflight] = pid;
            slot_of[inflight++] = next++;
        }
        int wst;
        pid_t w = wait(&wst);
        if (w < 0)
            break;
        for (int k = 0; k < inflight; k++) {
            if (running[k] != w)
                continue;
            int idx = slot_of[k];
            char path[1200];
            fmt(path, sizeof(path), "%s/%03d-%s/result.json", o.out, idx, entries[idx].sc.name);
            rg_result *r = &results[idx];
            if (rg_result_read(r, path, err, sizeof(err)) != 0) {
                memset(r, 0, sizeof(*r));
                snprintf(r->name, sizeof(r->name), "%s", entries[idx].sc.name);
                snprintf(r->why, sizeof(r->why), "the scenario's supervisor died: %s", err);
                r->passed = false;
            }
            rg_report_line(stdout, r);
            running[k] = running[inflight - 1];
            slot_of[k] = slot_of[inflight - 1];
            inflight--;
            done++;
            break;
        }
    }
    double total = now_s() - t0;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/report.json", o.out);
    if (rg_report_json(results, n, total, o.json[0] ? o.json : path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    snprintf(path, sizeof(path), "%s/junit.xml", o.out);
    if (rg_report_junit(results, n, total, o.junit[0] ? o.junit : path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    rg_report_table(stdout, results, n, total);
    st = 0;
    for (int i = 0; i < n; i++)
        st |= !results[i].passed;
out:
    for (int i = 0; i < n; i++)
        free(paths[i]);
    return st;
}
