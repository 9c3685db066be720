/* SPDX-License-Identifier: MIT */
/* `railguard run`'s options (rg_run.h): parsed once, each refusal one line; and what every
 * reproduce line and seed is made of, so a local and an external run never disagree. */
#include "rg_run.h"
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

/* snprintf for messages and paths that are cut short rather than refused when too long. */
void rg_run_fmt(char *dst, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(dst, len, f, ap);
    va_end(ap);
}

char *rg_run_abs_path(const char *p)
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
    char *a = rg_run_abs_path(path);
    if (a)
        snprintf(path, len, "%s", a);
    free(a);
}

/* The seed a scenario runs with: --seed when given, else the scenario's own. */
uint64_t rg_run_seed(const struct run_opts *o, const rg_scenario *sc)
{
    return o->seed_set ? o->seed : sc->seed;
}

/*
 * The reproduce line of one scenario: `railguard run`, then `where` (how the ranks meet: local
 * devices, or an external launch's coordinator), then what every run passes on — seed,
 * transport, shim, output, rank wrapper, --no-ownership — and the scenario's file. One builder,
 * so a local and an external line never disagree on what reproduces a run.
 */
void rg_run_repro_line(char *buf, size_t len, const struct run_opts *o, const char *const *where,
                       const char *out, const rg_scenario *sc, const char *path)
{
    char seed[24];
    const char *args[40];
    int na = 0;
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)rg_run_seed(o, sc));
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
    char scale[16];
    if (o->slow_scale != RG_RUN_SLOW_SCALE) {
        snprintf(scale, sizeof(scale), "%d", o->slow_scale);
        args[na++] = "--slow-scale";
        args[na++] = scale;
    }
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
            "                     [--fork-server] [--slow-scale F]\n"
            "                     [SCENARIO|DIR...]  (none: the stock suite)\n"
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

int rg_run_parse_opts(int argc, char **argv, struct run_opts *o, int *first)
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
                                          {"slow-scale", required_argument, NULL, 'L'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *devs = getenv("RG_SOFTROCE_DEVICES");
    const char *devs_from = "RG_SOFTROCE_DEVICES";
    int c;

    memset(o, 0, sizeof(*o));
    o->jobs = 1;
    o->slow_scale = RG_RUN_SLOW_SCALE;
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
        case 'L':
            if (rg_parse_int(optarg, 1, 100, &v)) {
                fprintf(stderr, "railguard run: --slow-scale: must be 1..100 '%s'\n",
                        rg_parse_show(optarg, shown, sizeof(shown)));
                return 2;
            }
            o->slow_scale = (int)v;
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
