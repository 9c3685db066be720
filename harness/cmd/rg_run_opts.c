/* SPDX-License-Identifier: MIT */
/* `railguard run`'s options (rg_run.h): parsed once, each refusal one line; and what every
 * reproduce line and seed is made of, so a local and an external run never disagree. */
#include "rg_run.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
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
    if (o->uc_as_rc)
        args[na++] = "--uc-as-rc";
    if (o->trace)
        args[na++] = "--trace";
    if (o->hang_at_deadline)
        args[na++] = "--hang-at-deadline";
    char scale[16];
    if (o->slow_scale != RG_RUN_SLOW_SCALE) {
        snprintf(scale, sizeof(scale), "%d", o->slow_scale);
        args[na++] = "--slow-scale";
        args[na++] = scale;
    }
    char cut[32];
    if (o->deadline_cut > 0) {
        snprintf(cut, sizeof(cut), "%.17g", o->deadline_cut);
        args[na++] = "--deadline";
        args[na++] = cut;
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

static int usage(const char *msg)
{
    fprintf(stderr, "railguard run: %s\n", msg);
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
 * --rank-wrapper 'valgrind --error-exitcode=99': words as a shell splits them (quotes, no
 * expansion), at most RG_CMD_WORDS, the first a program found on PATH now, so a typo is one line
 * here and not a CRASH in every rank. The ranks keep their pid (a wrapper must exec the worker, as
 * valgrind does, or its signals and backtraces reach the wrapper).
 */
static int take_wrapper(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct run_opts *o = opts;
    (void)opt;
    snprintf(o->wrap_arg, sizeof(o->wrap_arg), "%s", val);
    o->nwrap =
        rg_command_words(val, o->wrap_buf, sizeof(o->wrap_buf), o->wrap, RG_CMD_WORDS, why, len);
    return o->nwrap < 0 ? -1 : 0;
}

/* Decimal ("010" is ten) or 0x hex; no blanks or signs (" -1" once wrapped). */
/*
 * --hosts a,b,...: host names as ssh takes them ([user@]host), each one word that cannot be
 * read as an option or by the remote shell; a name may repeat (two ranks on one host).
 */
static int take_hosts(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct run_opts *o = opts;
    (void)opt;
    snprintf(o->hosts_arg, sizeof(o->hosts_arg), "%s", val);
    o->nhosts = 0;
    for (const char *p = val;;) {
        size_t n = strcspn(p, ",");
        if (!n || n >= sizeof(o->host[0]) || p[0] == '-' ||
            strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_@:[]") <
                n) {
            snprintf(why, len, "host %d '%.*s': not a host name ([user@]host, no blanks)",
                     o->nhosts + 1, (int)(n < 64 ? n : 64), p);
            return -1;
        }
        if (o->nhosts == RG_MAX_RANKS)
            return snprintf(why, len, "more than %d hosts", RG_MAX_RANKS), -1;
        snprintf(o->host[o->nhosts++], sizeof(o->host[0]), "%.*s", (int)n, p);
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

static int take_seed(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct run_opts *o = opts;
    char shown[72];
    (void)opt;
    if (rg_parse_uint(val, true, 0, UINT64_MAX, &o->seed)) {
        snprintf(why, len, "not a number 0..2^64-1 '%s'", rg_parse_show(val, shown, sizeof(shown)));
        return -1;
    }
    return 0;
}

#define RO(f) offsetof(struct run_opts, f)
#define RL(f) sizeof(((struct run_opts *)0)->f)
static const rg_opt run_table[] = {
    {.name = "transport",
     .kind = RG_OPT_PATH,
     .arg = "SO",
     .help = "The transport's plugin (default: the reference transport installed beside).",
     .off = RO(transport),
     .len = RL(transport)},
    {.name = "shim",
     .kind = RG_OPT_PATH,
     .arg = "SO",
     .help = "The fault-injection shim (default: the one installed beside).",
     .off = RO(shim),
     .len = RL(shim)},
    {.name = "devices",
     .kind = RG_OPT_TEXT,
     .arg = "DEV,...",
     .help = "RDMA devices to run on, one a rail (default $RG_SOFTROCE_DEVICES).",
     .off = RO(devices_arg)},
    {.name = "out",
     .letter = 'o',
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "Logs, the shim's events, backtraces, result.json per scenario, report.json, "
             "junit.xml and "
             "index.html (default railguard-out).",
     .off = RO(out),
     .len = RL(out) - 200},
    {.name = "junit",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "junit.xml written here too.",
     .off = RO(junit),
     .len = RL(junit)},
    {.name = "json",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "report.json written here too.",
     .off = RO(json),
     .len = RL(json)},
    {.name = "tally",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "Appends \"conformance PASSED FAILED\" (make check's summary).",
     .off = RO(tally),
     .len = RL(tally)},
    {.name = "known",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help =
         "The transport's known failures (per scenario, by signature, or by a cause the failure's "
         "own files prove): a failure so known is xfail, a scenario that stops failing xpass.",
     .off = RO(known),
     .len = RL(known)},
    {.name = "triage",
     .kind = RG_OPT_INT,
     .arg = "N",
     .help = "After the run, its failures grouped into distinct defects with a report each in "
             "OUT/triage, as railguard triage does: each group's smallest case run N more "
             "times for its rate and then minimised (0: grouping only).",
     .off = RO(triage_rerun),
     .len = RL(triage_rerun),
     .lo = 0,
     .hi = 100,
     .given = RO(triage) + 1},
    {.name = "seed",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "The inputs' seed (default: one per scenario); every reproduce line carries it.",
     .call = take_seed,
     .given = RO(seed_set) + 1},
    {.name = "jobs",
     .letter = 'j',
     .kind = RG_OPT_INT,
     .arg = "N",
     .help = "Scenarios at once (default 1).",
     .off = RO(jobs),
     .lo = 1,
     .hi = 64},
    {.name = "external",
     .kind = RG_OPT_FLAG,
     .help =
         "This process is one rank of a launch (mpirun, srun): it runs and judges that rank alone.",
     .off = RO(external)},
    {.name = "hosts",
     .kind = RG_OPT_CALL,
     .arg = "HOST,...",
     .help = "Launches the ranks itself, without mpirun: rank r on the r-th host (round robin), "
             "started over ssh (BatchMode) as an --external run of this railguard, transport "
             "and shim at the same paths there; the ranks' results are brought back where the "
             "hosts do not share --out, and judged together as railguard report does. Needs "
             "--coordinator and --devices-file.",
     .call = take_hosts},
    {.name = "coordinator",
     .kind = RG_OPT_PATH,
     .arg = "HOST:PORT",
     .help = "With --external or --hosts: rank 0's address.",
     .off = RO(coordinator),
     .len = RL(coordinator)},
    {.name = "devices-file",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "With --external or --hosts: the site's JACCL devices file, the same on every "
             "rank.",
     .off = RO(devices_file),
     .len = RL(devices_file)},
    {.name = "rank-wrapper",
     .kind = RG_OPT_CALL,
     .arg = "'CMD ARG...'",
     .help = "Every rank runs under this command (valgrind, strace, numactl), which must exec the "
             "worker "
             "in the same process.",
     .call = take_wrapper},
    {.name = "no-ownership",
     .kind = RG_OPT_FLAG,
     .help = "The ownership sanitizer off in every scenario.",
     .off = RO(no_ownership)},
    {.name = "uc-as-rc",
     .kind = RG_OPT_FLAG,
     .help = "The shim creates every UC QP the transport asks for as an RC one (RNR retry without "
             "limit), so a send that arrives before its receive is retried instead of dropped: a "
             "dominant UC race taken out, to see what else fails. Every report of the run says so, "
             "with the QPs it changed.",
     .off = RO(uc_as_rc)},
    {.name = "trace",
     .kind = RG_OPT_FLAG,
     .help = "The shim's verbs trace on in every scenario without faults (as `trace: true`), so "
             "the causes only a trace proves can be (a UC send dropped for want of a receive, a "
             "wait for a message never sent), and a failed run can still prove a UC drop absent "
             "from it: what compare and bisect read. A line of evidence a post and a completion, "
             "to the shim's cap. compare and bisect give it to every run they make.",
     .off = RO(trace)},
    {.name = "fail-fast",
     .kind = RG_OPT_FLAG,
     .help = "No scenario started after the first that failed: the run ends with the ones "
             "begun, the rest listed as not run (a mutant's check, a PR job's quick no). Not "
             "with --fork-server, --external or --hosts.",
     .off = RO(fail_fast)},
    {.name = "hang-at-deadline",
     .kind = RG_OPT_FLAG,
     .help = "A hang waits for the deadline. By default a run whose every rank is inside a call "
             "and none has posted, taken a completion, begun a step or sent a packet (nor a "
             "fault holds one) for longer than the transport's timeout and its margin is judged "
             "DEADLOCK then, with the same evidence and backtraces.",
     .off = RO(hang_at_deadline)},
    {.name = "fork-server",
     .kind = RG_OPT_FLAG,
     .help = "Ranks forked from a server per rank slot started once, not exec'd; with -j N, N "
             "scenarios at once, each slot with servers of its own.",
     .off = RO(fork_server)},
    {.name = "slow-scale",
     .kind = RG_OPT_INT,
     .arg = "F",
     .help =
         "A scenario that ran out of time on a machine that measurably held it back runs once more "
         "with every time in it F times (default 4; 1: never); SLOW, too slow to judge, if it runs "
         "out again.",
     .off = RO(slow_scale),
     .lo = 1,
     .hi = 100},
    {.name = "deadline",
     .kind = RG_OPT_SECONDS,
     .arg = "S",
     .help = "Every scenario's deadline cut to S seconds, or to twice its timeout when that is "
             "more (never lengthened): a rank still in its call then is a DEADLOCK at S, not at "
             "the scenario's own 30-120 s. For quick looks and triage's re-runs; a transport "
             "given T seconds to report a failure has had 2T. Not with --external or --hosts.",
     .off = RO(deadline_cut),
     .lo = 1,
     .hi = 86400},
};
#undef RO
#undef RL

const rg_cli rg_run_cli = {
    .cmd = "run",
    .synopsis =
        "[options] [SCENARIO|DIR...]\n       railguard run --external --coordinator HOST:PORT "
        "--devices-file FILE [options] SCENARIO",
    .about =
        "Runs scenarios (none named: the stock suite) against a transport on soft-RoCE or real "
        "RDMA devices, each rank a worker under the fault-injection shim, and judges every rank "
        "from "
        "what it said, how it ended and the shim's evidence. Under mpirun or srun, --external runs "
        "one rank per process; railguard report judges them together.",
    .opts = run_table,
    .nopts = (int)(sizeof(run_table) / sizeof(run_table[0])),
};

int rg_run_parse_opts(int argc, char **argv, struct run_opts *o, int *first)
{
    const char *devs = getenv("RG_SOFTROCE_DEVICES");
    const char *devs_from = "RG_SOFTROCE_DEVICES";

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
    int rc = rg_cli_parse(&rg_run_cli, argc, argv, o, first);
    if (rc)
        return rc;
    if (o->devices_arg) {
        devs = o->devices_arg;
        devs_from = "--devices";
    }
    if (o->fork_server && (o->external || o->nwrap)) {
        fprintf(stderr,
                "railguard run: --fork-server runs its scenarios in ranks it forks itself: not "
                "with %s\n",
                o->external ? "--external" : "--rank-wrapper");
        return 2;
    }
    if (o->fail_fast && (o->fork_server || o->external || o->nhosts)) {
        fprintf(stderr,
                "railguard run: --fail-fast is for scenarios run one by one here: not "
                "with %s\n",
                o->fork_server ? "--fork-server"
                : o->external  ? "--external"
                               : "--hosts");
        return 2;
    }
    const char *launch = o->external ? "--external" : "--hosts";
    if ((o->external || o->nhosts) && o->deadline_cut > 0) {
        /* railguard report judges the ranks by the scenario's file, whose deadline is its own. */
        fprintf(stderr, "railguard run: --deadline is for a local run, not with %s\n", launch);
        return 2;
    }
    if (o->nhosts && (o->external || o->jobs > 1 || o->fork_server)) {
        fprintf(stderr,
                "railguard run: --hosts starts its ranks on the hosts one scenario at a "
                "time: not with %s\n",
                o->external   ? "--external"
                : o->jobs > 1 ? "-j above 1"
                              : "--fork-server");
        return 2;
    }
    /* Each launch's reports are its own directory's, written as report writes them. */
    if (o->nhosts && (o->junit[0] || o->json[0] || o->tally[0] || o->triage)) {
        fprintf(stderr,
                "railguard run: --hosts writes each scenario's reports into OUT/<name>: not "
                "with %s\n",
                o->junit[0]   ? "--junit"
                : o->json[0]  ? "--json"
                : o->tally[0] ? "--tally"
                              : "--triage");
        return 2;
    }
    if (o->external || o->nhosts) {
        /* The devices file is the site's: every rank must name the same links. */
        if (!o->coordinator[0] || !o->devices_file[0]) {
            fprintf(stderr,
                    "railguard run: %s needs --coordinator HOST:PORT (rank 0's "
                    "address) and --devices-file FILE\n",
                    launch);
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
        make_abs(o->devices_file, sizeof(o->devices_file)); /* the ranks' command names it */
    } else if (o->coordinator[0] || o->devices_file[0]) {
        fprintf(stderr, "railguard run: --coordinator and --devices-file are for --external or "
                        "--hosts; a local run makes its own\n");
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
    return 0;
}
