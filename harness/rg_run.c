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
#include "rg_parse.h"

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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RG_RUN_MAX_SCENARIOS 512

struct run_opts {
    char self[PATH_MAX];
    char transport[PATH_MAX];
    char shim[PATH_MAX];
    char out[PATH_MAX];
    char junit[PATH_MAX];
    char json[PATH_MAX];
    char tally[PATH_MAX]; /* --tally: append "conformance P F" for make check's summary */
    char known[PATH_MAX]; /* --known: the transport's known-failures file */
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
    bool no_ownership; /* --no-ownership: the sanitizer off in every scenario */
    bool fork_server;  /* --fork-server: ranks forked from a server per slot (rg_forksrv.c) */
    /* --rank-wrapper: a command each rank runs under (valgrind, strace, numactl ...) */
    char wrap_arg[1024]; /* as given, for the reproduce line */
    char wrap_buf[1024];
    char *wrap[17];
    int nwrap;
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

static char *abs_path(const char *p)
{
    char *r = realpath(p, NULL);
    return r ? r : strdup(p);
}

/* words[] as one command line, each word quoted for the shell where it needs it. */
static void command_line(char *buf, size_t len, const char *const *words)
{
    buf[0] = '\0';
    for (int i = 0; words[i]; i++)
        if (rg_shell_word(buf, len, words[i]) != 0)
            break;
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
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

/*
 * The reproduce line of one scenario: `railguard run`, then `where` (how the ranks meet: local
 * devices, or an external launch's coordinator), then what every run passes on — seed,
 * transport, shim, output, rank wrapper, --no-ownership — and the scenario's file. One builder,
 * so a local and an external line never disagree on what reproduces a run.
 */
static void repro_line(char *buf, size_t len, const struct run_opts *o, const char *const *where,
                       const char *out, const rg_scenario *sc, const char *path)
{
    char seed[24];
    const char *args[32];
    int na = 0;
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)scenario_seed(o, sc));
    args[na++] = o->self;
    args[na++] = "run";
    for (; *where && na < 16; where++)
        args[na++] = *where;
    const char *tail[] = {"--seed", seed,    "--transport", o->transport,
                          "--shim", o->shim, "--out",       out};
    for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
        args[na++] = tail[i];
    if (o->nwrap) {
        args[na++] = "--rank-wrapper";
        args[na++] = o->wrap_arg;
    }
    if (o->no_ownership)
        args[na++] = "--no-ownership";
    if (o->known[0]) {
        /* A known failure reproduced without its file would read FAIL, not XFAIL. */
        args[na++] = "--known";
        args[na++] = o->known;
    }
    args[na++] = path;
    args[na] = NULL;
    command_line(buf, len, args);
}

void rg_run_usage(FILE *f)
{
    fprintf(f,
            "usage: railguard run [--transport SO] [--shim SO] [--devices rxe0,rxe1] [--out DIR]\n"
            "                     [--junit FILE] [--json FILE] [--tally FILE] [--seed N] [-j N]\n"
            "                     [--rank-wrapper 'CMD ARG...'] [--no-ownership] [--known FILE]\n"
            "                     [--fork-server] [SCENARIO|DIR...]  (none: the stock suite)\n"
            "       railguard run --external --coordinator HOST:PORT --devices-file FILE\n"
            "                     [--transport SO] [--shim SO] [--out DIR] [--seed N] SCENARIO\n"
            "                     (one rank per process, under mpirun or srun)\n"
            "       railguard report DIR\n"
            "                     (an external launch's ranks judged together: DIR is its\n"
            "                     --out DIR/<scenario name>)\n");
}

static int usage(const char *msg)
{
    fprintf(stderr, "railguard run: %s\n", msg);
    rg_run_usage(stderr);
    return 2;
}

static int parse_devices(struct run_opts *o, const char *list, const char *from)
{
    if (rg_devices_parse("run", list, from, o->devices, &o->ndevices))
        return -1;
    size_t off = 0;
    for (int i = 0; i < o->ndevices; i++)
        off += (size_t)snprintf(o->devlist + off, sizeof(o->devlist) - off, "%s%s", i ? "," : "",
                                o->devices[i]);
    return 0;
}

/*
 * --rank-wrapper 'valgrind --error-exitcode=99': blank-separated words (no quoting), at most
 * 16, the first a program found on PATH now, so a typo is one line here and not a CRASH in
 * every rank. The ranks keep their pid (a wrapper must exec the worker, as valgrind does, or
 * its signals and backtraces reach the wrapper).
 */
static int parse_wrapper(struct run_opts *o, const char *arg)
{
    char err[200];
    snprintf(o->wrap_arg, sizeof(o->wrap_arg), "%s", arg);
    o->nwrap =
        rg_command_words(arg, o->wrap_buf, sizeof(o->wrap_buf), o->wrap, 16, err, sizeof(err));
    if (o->nwrap < 0) {
        fprintf(stderr, "railguard run: --rank-wrapper: %s\n", err);
        return -1;
    }
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
                                          {"tally", required_argument, NULL, 'T'},
                                          {"known", required_argument, NULL, 'K'},
                                          {"seed", required_argument, NULL, 'e'},
                                          {"jobs", required_argument, NULL, 'j'},
                                          {"external", no_argument, NULL, 'x'},
                                          {"coordinator", required_argument, NULL, 'c'},
                                          {"devices-file", required_argument, NULL, 'f'},
                                          {"rank-wrapper", required_argument, NULL, 'W'},
                                          {"no-ownership", no_argument, NULL, 'N'},
                                          {"fork-server", no_argument, NULL, 'F'},
                                          {"help", no_argument, NULL, 'h'},
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
    rg_beside(o->transport, sizeof(o->transport), o->self, "railguard-transport.so");
    rg_beside(o->shim, sizeof(o->shim), o->self, "railguard-fi.so");
    snprintf(o->out, sizeof(o->out), "railguard-out");
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "j:o:", longs, NULL)) != -1) {
        char shown[72];
        int64_t v;
        switch (c) {
        case 't':
            if (rg_opt_path("run", "--transport", optarg, o->transport, sizeof(o->transport)))
                return 2;
            break;
        case 's':
            if (rg_opt_path("run", "--shim", optarg, o->shim, sizeof(o->shim)))
                return 2;
            break;
        case 'o':
            if (rg_opt_path("run", "--out", optarg, o->out, sizeof(o->out) - 200))
                return 2;
            break;
        case 'J':
            if (rg_opt_path("run", "--junit", optarg, o->junit, sizeof(o->junit)))
                return 2;
            break;
        case 'S':
            if (rg_opt_path("run", "--json", optarg, o->json, sizeof(o->json)))
                return 2;
            break;
        case 'K':
            if (rg_opt_path("run", "--known", optarg, o->known, sizeof(o->known)))
                return 2;
            break;
        case 'T':
            if (rg_opt_path("run", "--tally", optarg, o->tally, sizeof(o->tally)))
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
            if (rg_opt_path("run", "--coordinator", optarg, o->coordinator, sizeof(o->coordinator)))
                return 2;
            break;
        case 'f':
            if (rg_opt_path("run", "--devices-file", optarg, o->devices_file,
                            sizeof(o->devices_file)))
                return 2;
            break;
        case 'e':
            /* Decimal ("010" is ten) or 0x hex; no blanks or signs (" -1" once wrapped). */
            if (rg_parse_uint(optarg, true, 0, UINT64_MAX, &o->seed)) {
                fprintf(stderr, "railguard run: --seed: not a number 0..2^64-1 '%s'\n",
                        rg_parse_show(optarg, shown, sizeof(shown)));
                return 2;
            }
            o->seed_set = true;
            break;
        case 'j':
            if (rg_parse_int(optarg, 1, 64, &v)) {
                fprintf(stderr, "railguard run: -j: must be 1..64 '%s'\n",
                        rg_parse_show(optarg, shown, sizeof(shown)));
                return 2;
            }
            o->jobs = (int)v;
            break;
        case 'W':
            if (parse_wrapper(o, optarg))
                return 2;
            break;
        case 'N':
            o->no_ownership = true;
            break;
        case 'F':
            o->fork_server = true;
            break;
        case 'h':
            rg_run_usage(stdout);
            return 1;
        default:
            fprintf(stderr, "railguard run: unknown or incomplete option '%s'\n", argv[optind - 1]);
            return 2;
        }
    }
    if (o->fork_server && (o->external || o->nwrap || o->jobs > 1)) {
        fprintf(stderr,
                "railguard run: --fork-server runs one scenario at a time in ranks it "
                "forks itself: not with %s\n",
                o->external ? "--external"
                : o->nwrap  ? "--rank-wrapper"
                            : "-j above 1");
        return 2;
    }
    if (o->external) {
        /* The devices file is the site's: every rank must name the same links. */
        if (!o->coordinator[0] || !o->devices_file[0]) {
            fprintf(stderr, "railguard run: --external needs --coordinator HOST:PORT (rank 0's "
                            "address) and --devices-file FILE\n");
            return 2;
        }
        const char *why = rg_parse_hostport_problem(o->coordinator);
        if (why) {
            char shown[72];
            fprintf(stderr, "railguard run: --coordinator '%s': %s\n",
                    rg_parse_show(o->coordinator, shown, sizeof(shown)), why);
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
    if (o->known[0])
        make_abs(o->known, sizeof(o->known)); /* the reproduce line names it */
    /* Before anything runs: an --out that is a file would lose every result at the end. */
    struct stat sb;
    if (stat(o->out, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "railguard run: --out '%s' exists and is not a directory\n", o->out);
        return 2;
    }
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

/*
 * The most a rank registers of the caller's memory at once: zero_copy scenarios register each
 * call's buffers (input and output). The transport's own staging is its business; only what
 * the scenarios add is checked against the locked-memory limit.
 */
static uint64_t registered_bytes(const struct sc_entry *e, int n)
{
    uint64_t most = 0;
    for (int i = 0; i < n; i++) {
        const rg_scenario *sc = &e[i].sc;
        for (int k = 0; sc->zero_copy && k < sc->nops; k++) {
            const rg_sc_op *op = &sc->ops[k];
            uint64_t one = (uint64_t)op->count * rg_data_size(op->dtype);
            uint64_t wide = op->kind == RG_SC_ALL_GATHER || op->kind == RG_SC_REDUCE_SCATTER
                                ? one * (uint64_t)sc->ranks
                                : one;
            if (one + wide > most)
                most = one + wide;
        }
    }
    return most;
}

/* --- one scenario ---------------------------------------------------------------------------- */
/* Seconds from t0 (CLOCK_MONOTONIC ms) to a rank's stamp, which the worker took on that clock. */
static double since(double t0_ms, double at_ms)
{
    return (at_ms - t0_ms) / 1000.0;
}

/* One status line from a rank: "<mono ms> step ..." or "<mono ms> verdict ...". */
static void take_line(rg_rank_result *k, struct rg_proc *p, char *line, double t0_ms)
{
    int step, rep, off = 0;
    double at;
    if (sscanf(line, "%lf %n", &at, &off) != 1 || off <= 0)
        return; /* not ours */
    line += off;
    double t = since(t0_ms, at);
    if (sscanf(line, "step %d %d %n", &step, &rep, &off) == 2 && off > 0) {
        k->step = step;
        k->rep = rep;
        k->step_t_s = t;
        snprintf(k->where, sizeof(k->where), "%s", line + off);
        return;
    }
    if (!strcmp(line, "ready")) {
        p->ready = true;
        return;
    }
    if (!strncmp(line, "leak ", 5)) {
        rg_rank_find(k, RG_V_LEAK, t, "%s", line + 5);
        return;
    }
    if (!strncmp(line, "notfailstop ", 12)) {
        rg_rank_find(k, RG_V_NOT_FAIL_STOP, t, "%s", line + 12);
        return;
    }
    if (!strncmp(line, "unsupported ", 12)) {
        /* "unsupported STEP REP LABEL: why": a step skipped, the rank goes on. */
        int o2 = 0;
        const char *u = line + 12;
        if (sscanf(u, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0)
            u += o2;
        rg_rank_find(k, RG_V_UNSUPPORTED, t, "not run: %s", u);
        return;
    }
    if (!strncmp(line, "status ", 7)) {
        /* The failed call's status, before its verdict: "status -8", or "status v1". */
        long st = 0;
        char *end;
        if (!strcmp(line + 7, "v1"))
            k->status = RG_STATUS_V1;
        else if ((st = strtol(line + 7, &end, 10)) < 0 && st > -RG_SC_CLASS_BITS && !*end)
            k->status = (int)st;
        return;
    }
    if (!strncmp(line, "calls ", 6)) {
        snprintf(k->calls, sizeof(k->calls), "%s", line + 6);
        return;
    }
    if (strncmp(line, "verdict ", 8) != 0)
        return;
    const char *v = line + 8;
    p->verdict = true;
    if (!strcmp(v, "ok")) {
        rg_rank_find(k, RG_V_OK, t, "%s", "");
    } else if (!strncmp(v, "detected ", 9) || !strncmp(v, "corrupt ", 8)) {
        bool det = v[0] == 'd';
        int o2 = 0;
        v += det ? 9 : 8;
        if (sscanf(v, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0) {
            k->step = step;
            k->rep = rep;
            v += o2;
        }
        rg_rank_find(k, det ? RG_V_DETECTED : RG_V_SILENT_CORRUPTION, t, "%s", v);
    } else if (!strncmp(v, "unsupported ", 12)) {
        int o2 = 0;
        v += 12;
        if (sscanf(v, "%d %d %n", &step, &rep, &o2) == 2 && o2 > 0)
            v += o2;
        rg_rank_find(k, RG_V_UNSUPPORTED, t, "not run: %s", v);
    } else if (!strncmp(v, "error ", 6)) {
        p->said_error = true;
        rg_rank_find(k, RG_V_ERROR, t, "%s", v + 6);
    }
}

static void drain(rg_rank_result *k, struct rg_proc *p, double t0_ms)
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
            if (p->tl >= 0 && write(p->tl, start, (size_t)(nl + 1 - start)) < 0) {
                close(p->tl); /* the timeline is evidence, not the verdict: go on without */
                p->tl = -1;
            }
            *nl = '\0';
            take_line(k, p, start, t0_ms);
            start = nl + 1;
        }
        p->len = strlen(start);
        memmove(p->buf, start, p->len + 1);
        if (p->len == sizeof(p->buf) - 1)
            p->len = 0; /* a line this long is not ours: drop it */
    }
}

/* "rank 1 left with SILENT_CORRUPTION at 0.42 s in all_reduce ...": the first peer to end. */
static void first_to_leave(const rg_result *res, int lo, int hi, int self, char *out, size_t len)
{
    int first = -1;
    out[0] = '\0';
    for (int r = lo; r < hi; r++) {
        if (r == self || res->rank[r].left_t_s < 0)
            continue;
        if (first < 0 || res->rank[r].left_t_s < res->rank[first].left_t_s)
            first = r;
    }
    if (first >= 0)
        snprintf(out, len, "; waiting since rank %d left with %s at %.2f s in %s", first,
                 rg_verdict_name(res->rank[first].verdict), res->rank[first].left_t_s,
                 res->rank[first].where);
}

/*
 * Sends every rank its go byte once all are ready (or gone: the others then go on and fail
 * on their own), or at once with `now`. Returns whether they were released.
 */
static bool release_ranks(struct rg_proc *procs, int lo, int hi, bool now)
{
    for (int r = lo; r < hi && !now; r++)
        if (procs[r].pid > 0 && !procs[r].ready && !procs[r].exited && !procs[r].stopped)
            return false;
    /* A rank that died has no reader left: EPIPE, not a SIGPIPE that ends the supervisor. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    for (int r = lo; r < hi; r++) {
        if (procs[r].go < 0)
            continue;
        ssize_t k;
        do
            k = write(procs[r].go, "g", 1);
        while (k < 0 && errno == EINTR);
        close(procs[r].go);
        procs[r].go = -1;
    }
    sigaction(SIGPIPE, &old, NULL);
    return true;
}

/*
 * Runs ranks lo..hi-1 of a scenario here and follows them to their verdicts: all of them when
 * local, this process's one rank when launched externally.
 */
/* The worker's options for one rank, after "railguard worker": one list for both ways a rank is
 * started (exec'd, or forked by a fork server). */
#define RUN__WORKER_OPTS 18
static void worker_opts(const char *opts[RUN__WORKER_OPTS + 1], const struct run_opts *o,
                        const struct sc_entry *e, const char *rank, const char *coord,
                        const char *devfile, const char *bt, const char *seed)
{
    const char *v[RUN__WORKER_OPTS] = {
        "--scenario",     e->path, "--rank",           rank,         "--coordinator", coord,
        "--devices-file", devfile, "--transport",      o->transport, "--status-fd",   "3",
        "--go-fd",        "4",     "--backtrace-file", bt,           "--seed",        seed};
    memcpy(opts, v, sizeof(v));
    opts[RUN__WORKER_OPTS] = NULL;
}

/* --fork-server: one server per rank slot, started at the first scenario that needs it. */
static rg_forksrv g_srv[RG_MAX_RANKS];
static bool g_srv_up[RG_MAX_RANKS];

static void servers_stop(void)
{
    for (int r = 0; r < RG_MAX_RANKS; r++)
        if (g_srv_up[r]) {
            rg_forksrv_stop(&g_srv[r]);
            g_srv_up[r] = false;
        }
}

/*
 * Rank r of this scenario through its fork server: the same worker options, environment and
 * descriptors a rank exec'd below gets. Returns whether it started; if not, the server is
 * stopped (said once) and the rank is exec'd as always.
 */
static bool served_rank(const struct run_opts *o, const struct sc_entry *e, rg_result *res, int r,
                        const char *coord, const char *devfile, const char *planfile,
                        const char *secret, const char *btsig, struct rg_proc *p)
{
    char err[512], log[1200], evp[1200], bt[1200], rank[16], seed[32], fisig[16];
    char e_plan[1300], e_log[1300], e_rank[32], e_bt[48], e_fisig[48], e_secret[160];
    if (!g_srv_up[r]) {
        if (rg_forksrv_start(&g_srv[r], o->self, o->shim, o->transport, err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard run: %s: exec'ing ranks instead\n", err);
            return false;
        }
        g_srv_up[r] = true;
    }
    snprintf(log, sizeof(log), "%s/rank%d.log", res->dir, r);
    snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", res->dir, r);
    snprintf(bt, sizeof(bt), "%s/rank%d.backtrace", res->dir, r);
    snprintf(rank, sizeof(rank), "%d", r);
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)scenario_seed(o, &e->sc));
    snprintf(fisig, sizeof(fisig), "%d", rg_proc_snapshot_signal());
    unlink(evp);
    unlink(bt);
    snprintf(e_plan, sizeof(e_plan), "RG_FI_PLAN_FILE=%s", planfile);
    snprintf(e_log, sizeof(e_log), "RG_FI_LOG=%s", evp);
    snprintf(e_rank, sizeof(e_rank), "RG_FI_RANK=%d", r);
    snprintf(e_fisig, sizeof(e_fisig), "RG_FI_SNAPSHOT_SIGNAL=%s", fisig);
    snprintf(e_bt, sizeof(e_bt), "RG_BACKTRACE_SIGNAL=%s", btsig);
    snprintf(e_secret, sizeof(e_secret), "RG_SECRET=%s", secret);
    /* The secret as an exec'd rank gets it: set, and no file, when the run made one (with
     * none the list ends at the NULL, leaving both as the server inherited them). */
    const char *env[] = {
        "RG_FI_PLAN",     e_plan, e_log, e_rank, e_fisig, e_bt, secret[0] ? e_secret : NULL,
        "RG_SECRET_FILE", NULL};
    const char *args[RUN__WORKER_OPTS + 1];
    worker_opts(args, o, e, rank, coord, devfile, bt, seed);
    int sp[2], gp[2];
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (lfd < 0)
        return false;
    if (pipe2(sp, O_CLOEXEC) != 0) {
        close(lfd);
        return false;
    }
    if (pipe2(gp, O_CLOEXEC) != 0) {
        close(lfd);
        close(sp[0]);
        close(sp[1]);
        return false;
    }
    const int fds[3] = {lfd, sp[1], gp[0]};
    pid_t pid = rg_forksrv_spawn(&g_srv[r], env, args, fds, 10, err, sizeof(err));
    close(lfd);
    close(sp[1]);
    close(gp[0]);
    if (pid < 0) {
        fprintf(stderr, "railguard run: %s: exec'ing ranks instead\n", err);
        rg_forksrv_stop(&g_srv[r]);
        close(sp[0]);
        close(gp[1]);
        return false;
    }
    fcntl(sp[0], F_SETFL, O_NONBLOCK);
    p->pid = pid;
    p->fd = sp[0];
    p->go = gp[1];
    return true;
}

static void run_ranks(const struct run_opts *o, const struct sc_entry *e, rg_result *res, int lo,
                      int hi, const char *coord, const char *devfile, const char *planfile,
                      bool whole)
{
    const rg_scenario *sc = &e->sc;
    static struct rg_proc procs[RG_MAX_RANKS];
    static rg_evidence ev[RG_MAX_RANKS];
    double t0 = rg_now_s(), t0_ms = t0 * 1000.0;
    char btsig[16];

    snprintf(btsig, sizeof(btsig), "%d", rg_proc_backtrace_signal());
    /* A fresh secret for each run's side channel, so no stray process (nor a rank of another
     * run) can join it. External ranks keep the one their launcher gave them all. */
    char secret[RG_JOB_SECRET_HEX] = "";
    if (whole && rg_job_secret(secret) != 0) /* the ranks then say they have no secret */
        fprintf(stderr, "railguard run: no random bytes for the side channel's secret: %s\n",
                strerror(errno));
    for (int r = lo; r < hi; r++) {
        int fds[2];
        /* Until a rank says otherwise it is where it started. */
        res->rank[r] = (rg_rank_result){.t_s = -1, .step = -1, .step_t_s = 0, .left_t_s = -1};
        snprintf(res->rank[r].where, sizeof(res->rank[r].where), "start");
        procs[r] = (struct rg_proc){.pid = -1, .fd = -1, .go = -1, .tl = -1};
        /* Every line the rank says, kept as it comes: its timeline (trace.json, the run page)
         * then survives a rank that is killed or hangs. */
        char tlp[1200];
        snprintf(tlp, sizeof(tlp), "%s/rank%d.status", res->dir, r);
        procs[r].tl = open(tlp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (o->fork_server &&
            served_rank(o, e, res, r, coord, devfile, planfile, secret, btsig, &procs[r]))
            continue;
        int gfds[2];
        if (pipe(fds) != 0)
            continue;
        if (pipe(gfds) != 0) {
            close(fds[0]);
            close(fds[1]);
            continue;
        }
        pid_t pid = fork();
        if (pid == 0) {
            char log[1200], evp[1200], bt[1200], rank[16], seed[32], pre[PATH_MAX + 16];
            snprintf(log, sizeof(log), "%s/rank%d.log", res->dir, r);
            snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", res->dir, r);
            snprintf(bt, sizeof(bt), "%s/rank%d.backtrace", res->dir, r);
            snprintf(rank, sizeof(rank), "%d", r);
            snprintf(seed, sizeof(seed), "%llu", (unsigned long long)scenario_seed(o, sc));
            snprintf(pre, sizeof(pre), "%s", o->shim);
            int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (lfd >= 0) {
                dup2(lfd, 1);
                dup2(lfd, 2);
            }
            close(fds[0]);
            close(gfds[1]);
            /* The status pipe at 3, the go pipe at 4: out of each other's way first. */
            int sfd = fcntl(fds[1], F_DUPFD, 10), gfd = fcntl(gfds[0], F_DUPFD, 10);
            if (sfd < 0 || gfd < 0 || dup2(sfd, 3) < 0 || dup2(gfd, 4) < 0)
                _exit(127);
            close(sfd);
            close(gfd);
            if (fds[1] != 3 && fds[1] != 4)
                close(fds[1]);
            if (gfds[0] != 3 && gfds[0] != 4)
                close(gfds[0]);
            unlink(evp); /* a rerun into the same directory must not read old evidence */
            unlink(bt);
            rg_proc_shim_env(pre, planfile, evp, r, false);
            setenv("RG_BACKTRACE_SIGNAL", btsig, 1);
            if (secret[0]) {
                setenv("RG_SECRET", secret, 1);
                unsetenv("RG_SECRET_FILE");
            }
            const char *argv[RUN__WORKER_OPTS + 3] = {o->self, "worker"};
            worker_opts(argv + 2, o, e, rank, coord, devfile, bt, seed);
            if (o->nwrap) {
                /* The wrapper's words, then the worker's: one argv for execvp. */
                char *wargv[17 + sizeof(argv) / sizeof(argv[0])];
                int n = 0;
                for (int w = 0; w < o->nwrap; w++)
                    wargv[n++] = o->wrap[w];
                for (size_t a = 0; a < sizeof(argv) / sizeof(argv[0]); a++)
                    wargv[n++] = (char *)argv[a];
                execvp(wargv[0], wargv);
            } else {
                execv(o->self, (char *const *)argv);
            }
            _exit(127);
        }
        close(fds[1]);
        close(gfds[0]);
        if (pid < 0) {
            close(fds[0]);
            close(gfds[1]);
            continue;
        }
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        fcntl(gfds[1], F_SETFD, FD_CLOEXEC);
        procs[r].pid = pid;
        procs[r].fd = fds[0];
        procs[r].go = gfds[1];
    }
    bool released = false;

    double deadline = t0 + sc->deadline_s;
    for (;;) {
        struct pollfd pfds[RG_MAX_RANKS];
        int np = 0, live = 0, leaving = 0;
        for (int r = lo; r < hi; r++) {
            bool running = procs[r].pid > 0 && !procs[r].exited && !procs[r].stopped;
            if (procs[r].fd >= 0)
                pfds[np++] = (struct pollfd){.fd = procs[r].fd, .events = POLLIN};
            /* A stopped rank waits for nobody: once only stopped ones are left, the run ends. */
            live += running;
            /* Its status pipe closed: it is exiting, and nothing left would wake the poll. */
            leaving += running && procs[r].fd < 0;
        }
        if (!live)
            break;
        double left = deadline - rg_now_s();
        if (left <= 0)
            break;
        int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
        poll(pfds, (nfds_t)np, leaving && ms > 2 ? 2 : ms);
        for (int r = lo; r < hi; r++) {
            drain(&res->rank[r], &procs[r], t0_ms);
            int st;
            if (procs[r].pid > 0 && !procs[r].exited && !procs[r].stopped &&
                waitpid(procs[r].pid, &st, WNOHANG | WUNTRACED) == procs[r].pid) {
                if (WIFSTOPPED(st)) {
                    procs[r].stopped = true;
                    procs[r].stop_t_s = rg_now_s() - t0;
                    continue;
                }
                procs[r].status = st;
                procs[r].exited = true;
                res->rank[r].left_t_s = rg_now_s() - t0;
                drain(&res->rank[r], &procs[r], t0_ms);
            }
        }
        if (!released)
            released = release_ranks(procs, lo, hi, false);
    }
    release_ranks(procs, lo, hi, true);
    /* Stopped ranks are ended first, so the deadline's backtraces are only the hung ones'. */
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &procs[r];
        if (p->pid > 0 && !p->exited && p->stopped) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &p->status, 0);
            p->exited = true;
            res->rank[r].left_t_s = p->stop_t_s;
            drain(&res->rank[r], p, t0_ms);
        }
    }
    rg_proc_stop_hung(procs, lo, hi, res->dir, true);
    for (int r = lo; r < hi; r++) {
        struct rg_proc *p = &procs[r];
        rg_rank_result *k = &res->rank[r];
        char logp[1200], tail[400];
        snprintf(logp, sizeof(logp), "%s/rank%d.log", res->dir, r);
        if (p->pid > 0 && !p->exited) {
            p->exited = true;
            drain(k, p, t0_ms);
            p->hung = true; /* judged below, once the evidence says what its queues held */
        } else if (p->pid < 0) {
            rg_rank_find(k, RG_V_ERROR, 0, "could not start the rank");
        } else if (rg_proc_ended_early(p)) {
            /* judged below: the rank's own kill, stop or exit fault, or a crash */
        } else if (WIFSIGNALED(p->status)) {
            rg_log_tail(logp, tail, sizeof(tail));
            rg_rank_find(k, RG_V_CRASH, k->left_t_s,
                         "killed by signal %d (%s); backtrace in %s/rank%d.backtrace%s%s",
                         WTERMSIG(p->status), strsignal(WTERMSIG(p->status)), res->dir, r,
                         tail[0] ? "; last output: " : "", tail);
        } else if (WEXITSTATUS(p->status) != (p->said_error ? 3 : 0)) {
            /* After its verdict the worker only exits: a status there is a crash at exit (a
             * destructor, a sanitizer's report), which the verdict cannot have seen. */
            rg_log_tail(logp, tail, sizeof(tail));
            rg_rank_find(k, RG_V_CRASH, k->left_t_s, "exited with status %d after its verdict%s%s",
                         WEXITSTATUS(p->status), tail[0] ? "; last output: " : "", tail);
        }
        if (p->fd >= 0)
            close(p->fd);
        if (p->tl >= 0)
            close(p->tl);
        p->tl = -1;
    }
    res->seconds = rg_now_s() - t0;

    /* The shim's evidence, now that every rank has ended: what it saw, what fired and when. */
    for (int r = lo; r < hi; r++) {
        char evp[1200], err[512];
        snprintf(evp, sizeof(evp), "%s/rank%d.events.jsonl", res->dir, r);
        if (rg_evidence_read(evp, &ev[r], err, sizeof(err)) != 0)
            rg_rank_find(&res->rank[r], RG_V_ERROR, -1, "%s", err);
    }
    for (int r = lo; r < hi; r++)
        if (procs[r].pid > 0 && !procs[r].hung && rg_proc_ended_early(&procs[r]))
            rg_proc_judge_ended(&res->rank[r], &procs[r], sc, &ev[r], res->dir, r);
    rg_evidence_apply(res, sc, ev, lo, hi, t0_ms, whole ? RG_EV_RANK | RG_EV_CROSS : RG_EV_RANK);
    res->t0_mono_ms = t0_ms;
    gethostname(res->host, sizeof(res->host) - 1);

    /* A hang is explained by who left first, and by the work its queues still held. */
    for (int r = lo; r < hi; r++) {
        rg_rank_result *k = &res->rank[r];
        if (!procs[r].hung)
            continue;
        char peer[400], text[sizeof(k->detail)];
        first_to_leave(res, lo, hi, r, peer, sizeof(peer));
        fmt(text, sizeof(text),
            "still running after the %.0f s deadline, in %s since %.2f s%s%s%s; backtrace "
            "in %s/rank%d.backtrace",
            sc->deadline_s, k->where, k->step_t_s, peer, ev[r].queues[0] ? "; " : "", ev[r].queues,
            res->dir, r);
        rg_rank_find(k, RG_V_DEADLOCK, sc->deadline_s, "%s", text);
    }
}

static void run_scenario(const struct run_opts *o, const struct sc_entry *e, rg_result *res)
{
    const rg_scenario *sc = &e->sc;
    char devfile[1200], coord[64], plan[1200];

    if (sc->exec.on) {
        rg_exec_scenario(sc, o->shim, o->wrap, o->nwrap, res);
        rg_judge(res);
        return;
    }
    fmt(devfile, sizeof(devfile), "%s/devices.json", res->dir);
    int port = rg_proc_free_port();
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", port);
    if (port < 0 || rg_devices_write(devfile, sc->ranks, sc->rails, o->devices) != 0 ||
        rg_proc_write_plan(res->dir, sc, plan, sizeof(plan)) != 0) {
        for (int r = 0; r < sc->ranks; r++) {
            res->rank[r] = (rg_rank_result){.t_s = -1, .step = -1, .left_t_s = -1};
            snprintf(res->rank[r].where, sizeof(res->rank[r].where), "start");
            rg_rank_find(&res->rank[r], RG_V_ERROR, 0, "could not set up (port %d, %s, %s): %s",
                         port, devfile, plan, strerror(errno));
        }
    } else {
        run_ranks(o, e, res, 0, sc->ranks, coord, devfile, plan, true);
    }
    rg_judge(res);
}

/* The supervisor: one process per scenario, so -j scenarios never share anything. */
/* One scenario, judged, into DIR/NNN-name/result.json. Returns 0, or 1 if it could not save. */
static int scenario_once(const struct run_opts *o, const struct sc_entry *e, int index)
{
    char dir[1024];
    fmt(dir, sizeof(dir), "%s/%03d-%s", o->out, index, e->sc.name);
    static rg_result res;
    char err[512], path[1200];
    memset(&res, 0, sizeof(res));
    snprintf(res.name, sizeof(res.name), "%s", e->sc.name);
    snprintf(res.path, sizeof(res.path), "%s", e->path);
    snprintf(res.dir, sizeof(res.dir), "%s", dir);
    res.ranks = e->sc.ranks;
    res.self_rank = -1;
    memcpy(res.expect, e->sc.expect, sizeof(res.expect));
    memcpy(res.expect_at, e->sc.expect_at, sizeof(res.expect_at));
    memcpy(res.expect_cls, e->sc.expect_cls, sizeof(res.expect_cls));
    memcpy(res.known, e->sc.known, sizeof(res.known));
    snprintf(res.known_why, sizeof(res.known_why), "%s", e->sc.known_why);
    char repro_out[PATH_MAX + 8];
    snprintf(repro_out, sizeof(repro_out), "%s/repro", o->out);
    repro_line(res.repro, sizeof(res.repro), o,
               (const char *const[]){"--devices", o->devlist, NULL}, repro_out, &e->sc, e->path);
    mkdir(dir, 0755);
    run_scenario(o, e, &res);
    snprintf(path, sizeof(path), "%s/result.json", dir);
    if (rg_result_save(&res, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard run: %s\n", err);
        return 1;
    }
    /* The timeline is for people to look at; the verdicts stand without it. */
    snprintf(path, sizeof(path), "%s/trace.json", dir);
    if (rg_trace_write(&res, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    return 0;
}

static pid_t start_scenario(const struct run_opts *o, const struct sc_entry *e, int index)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    _exit(scenario_once(o, e, index));
}

/* A scenario's result as its supervisor saved it (or why there is none), and its line. */
static void take_result(const struct run_opts *o, const struct sc_entry *e, int idx, rg_result *r)
{
    char path[1200], err[512];
    fmt(path, sizeof(path), "%s/%03d-%s/result.json", o->out, idx, e->sc.name);
    if (rg_result_read(r, path, err, sizeof(err)) != 0) {
        memset(r, 0, sizeof(*r));
        snprintf(r->name, sizeof(r->name), "%s", e->sc.name);
        snprintf(r->why, sizeof(r->why), "the scenario's supervisor died: %s", err);
        r->passed = false;
    }
    rg_report_line(stdout, r);
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
    char plan[PATH_MAX + 64], pdir[PATH_MAX + 32];
    /* Each rank its own plan file: ranks may share the directory on a shared file system. */
    fmt(pdir, sizeof(pdir), "%s/rank%d", res.dir, rank);
    mkdir(pdir, 0755);
    if (rg_proc_write_plan(pdir, &e->sc, plan, sizeof(plan)) != 0) {
        fprintf(stderr, "railguard run: %s: cannot write the plan: %s\n", plan, strerror(errno));
        return 2;
    }
    /* The runners meet at the coordinator before the workers do: each rank's clock against
     * rank 0's, so a report of ranks on several hosts can order them (rg_clock.c). */
    rg_clock clk;
    char secret[RG_PARSE_SECRET_MAX + 1];
    if (rg_parse_secret_env(secret, err, sizeof(err)) != 0) {
        memset(&clk, 0, sizeof(clk));
        snprintf(clk.why, sizeof(clk.why), "%.199s", err);
    } else {
        rg_clock_sync(o->coordinator, secret, rank, size, rg_now_s() + e->sc.timeout_s, &clk);
    }
    explicit_bzero(secret, sizeof(secret));
    if (clk.measured && rank)
        printf("rank %d: clock %+.3f ms from rank 0's (within +-%.3f ms, the least delayed of %d "
               "round trips)\n",
               rank, clk.offset_ms, clk.err_ms, clk.rounds);
    else if (!clk.measured || clk.why[0])
        printf("rank %d: clock: %s%s\n", rank, clk.measured ? "" : "not measured: ", clk.why);
    fflush(stdout);
    run_ranks(o, e, &res, rank, rank + 1, o->coordinator, o->devices_file, plan, false);
    /* A launcher ends the whole job once any rank exits non-zero (mpirun sends SIGTERM, then
     * SIGKILL a while later): this rank's verdict must be on disk first. Its worker has ended;
     * what is left takes milliseconds, and a deferred SIGTERM still ends the process after. */
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigaddset(&term, SIGHUP);
    sigaddset(&term, SIGINT);
    sigprocmask(SIG_BLOCK, &term, NULL);

    memset(&view, 0, sizeof(view));
    fmt(view.name, sizeof(view.name), "%s[rank %d]", e->sc.name, rank);
    snprintf(view.path, sizeof(view.path), "%s", e->path);
    snprintf(view.dir, sizeof(view.dir), "%s", res.dir);
    view.ranks = 1;
    view.rank[0] = res.rank[rank];
    view.rank[0].clock = clk;
    view.expect[0] = e->sc.expect[rank];
    view.expect_at[0] = e->sc.expect_at[rank];
    view.expect_cls[0] = e->sc.expect_cls[rank];
    for (int i = 0; i < RG_MAX_RANKS; i++)
        view.known[i] = i ? 0 : e->sc.known[rank];
    snprintf(view.known_why, sizeof(view.known_why), "%s", e->sc.known_why);
    view.nrules = res.nrules;
    for (int i = 0; i < res.nrules; i++) {
        view.rule[i] = res.rule[i];
        memset(view.rule[i].fired_by, 0, sizeof(view.rule[i].fired_by));
        view.rule[i].fired_by[0] = res.rule[i].fired_by[rank];
    }
    view.seconds = res.seconds;
    view.t0_mono_ms = res.t0_mono_ms;
    view.self_rank = rank;
    snprintf(view.host, sizeof(view.host), "%s", res.host);
    char cmd[sizeof(view.repro) - 64];
    repro_line(cmd, sizeof(cmd), o,
               (const char *const[]){"--external", "--coordinator", o->coordinator,
                                     "--devices-file", o->devices_file, NULL},
               o->out, &e->sc, e->path);
    fmt(view.repro, sizeof(view.repro), "(rank %d of %d, under the same launcher) %s", rank, size,
        cmd);
    rg_judge(&view);
    fmt(path, sizeof(path), "%s/rank%d.result.json", res.dir, rank);
    if (rg_result_save(&view, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    rg_report_line(stdout, &view);
    printf("rank %d judged alone; with every rank's result in %s, 'railguard report %s' "
           "applies the rules that look across ranks\n",
           rank, res.dir, res.dir);
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
        return rc == 1 ? 0 : rc; /* 1: --help, said */
    /* No scenario named: the stock collective suite (installed, or the source tree's). */
    char stock[PATH_MAX];
    if (first >= argc && rg_stock_scenarios(stock, sizeof(stock), o.self) != 0) {
        fprintf(stderr, "railguard run: no scenario named, and no stock scenarios beside %s\n",
                o.self);
        goto out;
    }
    if (first >= argc && collect(stock, paths, &n) != 0)
        goto out;
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
        if (o.no_ownership)
            e->sc.ownership = false;
        if (e->sc.exec.on && o.external) {
            fprintf(stderr,
                    "railguard run: %s: an exec scenario runs its own processes, not under "
                    "--external\n",
                    paths[i]);
            goto out;
        }
        if (e->sc.exec.on && rg_exec_check(&e->sc, err, sizeof(err)) != 0) {
            fprintf(stderr, "%s:%d: %s\n", paths[i], e->sc.exec.line, err);
            goto out;
        }
        /* External runs take their rails from the site's devices file. */
        if (!o.external && e->sc.rails > o.ndevices) {
            fprintf(stderr, "%s: needs %d rails, but only %d devices are given (%s)\n", paths[i],
                    e->sc.rails, o.ndevices, o.devlist);
            goto out;
        }
    }
    if (o.external && n != 1) {
        fprintf(stderr, "railguard run: --external runs one scenario per launch (%d given)\n", n);
        goto out;
    }
    /* Preflight: a run that cannot inject or cannot reach a device stops here, before any
     * scenario could pass for the wrong reason. */
    static rg_run_info info;
    if (rg_preflight(o.shim, o.transport, o.devices, o.external ? 0 : o.ndevices, &info, err,
                     sizeof(err)) != 0 ||
        rg_preflight_memlock(registered_bytes(entries, n), err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard run: preflight: %s\n", err);
        goto out;
    }
    if (o.seed_set)
        snprintf(info.seed, sizeof(info.seed), "%llu", (unsigned long long)o.seed);
    else
        snprintf(info.seed, sizeof(info.seed), "per scenario");
    /* The transport's known failures, once its name is known (a file may be for one only). */
    if (o.known[0]) {
        static rg_scenario *scs[RG_RUN_MAX_SCENARIOS];
        char notes[2048];
        for (int i = 0; i < n; i++)
            scs[i] = &entries[i].sc;
        if (rg_known_load(o.known, info.transport_name, scs, n, notes, sizeof(notes), err,
                          sizeof(err)) != 0) {
            fprintf(stderr, "%s\n", err);
            goto out;
        }
        fputs(notes, stdout);
    }
    if (rg_mkdirs(o.out) != 0) {
        fprintf(stderr, "railguard run: --out %s: %s\n", o.out, strerror(errno));
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

    double t0 = rg_now_s();
    pid_t running[64];
    int slot_of[64], next = 0, done = 0, inflight = 0;
    if (o.fork_server && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        fprintf(stderr, "railguard run: --fork-server: cannot become a child subreaper: %s\n",
                strerror(errno));
        goto out;
    }
    while (o.fork_server && done < n) {
        /* One at a time in this process: the servers' ranks are handed to it. */
        scenario_once(&o, &entries[next], next);
        take_result(&o, &entries[next], next, &results[next]);
        next++;
        done++;
    }
    if (o.fork_server) {
        servers_stop();
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ; /* any rank a server handed over and a scenario left behind */
    }
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
            take_result(&o, &entries[idx], idx, &results[idx]);
            running[k] = running[inflight - 1];
            slot_of[k] = slot_of[inflight - 1];
            inflight--;
            done++;
            break;
        }
    }
    double total = rg_now_s() - t0;
    char path[PATH_MAX + 32];
    /* DIR/report.json and DIR/junit.xml always, as documented; --json and --junit are extra
     * copies where a CI system looks for them (they once replaced the DIR ones). */
    snprintf(path, sizeof(path), "%s/report.json", o.out);
    const char *json_to[] = {path, o.json[0] ? o.json : NULL};
    for (int k = 0; k < 2 && json_to[k]; k++)
        if (rg_report_json(results, n, total, &info, json_to[k], err, sizeof(err)) != 0)
            fprintf(stderr, "railguard run: %s\n", err);
    char jpath[PATH_MAX + 32];
    snprintf(jpath, sizeof(jpath), "%s/junit.xml", o.out);
    const char *junit_to[] = {jpath, o.junit[0] ? o.junit : NULL};
    for (int k = 0; k < 2 && junit_to[k]; k++)
        if (rg_report_junit(results, n, total, &info, junit_to[k], err, sizeof(err)) != 0)
            fprintf(stderr, "railguard run: %s\n", err);
    snprintf(jpath, sizeof(jpath), "%s/index.html", o.out);
    if (rg_html_write(results, n, total, &info, jpath, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    rg_report_table(stdout, results, n, total);
    st = 0;
    int passed = 0;
    for (int i = 0; i < n; i++) {
        st |= !results[i].passed;
        /* A skip (steps the transport lacks) is not a pass: the tally leaves it out. */
        passed += results[i].passed && !results[i].skipped;
    }
    if (o.tally[0]) {
        FILE *t = fopen(o.tally, "a");
        int failed = 0;
        for (int i = 0; i < n; i++)
            failed += !results[i].passed;
        if (!t || fprintf(t, "conformance %d %d\n", passed, failed) < 0 || fclose(t) != 0) {
            fprintf(stderr, "railguard run: --tally %s: cannot append: %s\n", o.tally,
                    strerror(errno));
            st = 1;
        }
    }
out:
    for (int i = 0; i < n; i++)
        free(paths[i]);
    return st;
}
