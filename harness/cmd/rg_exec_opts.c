/* SPDX-License-Identifier: MIT */
/*
 * railguard exec's options: its option table (rg_exec_cli: the parser, --help, the man page
 * and completion), the checks across options, and the same options from a scenario file's
 * exec: block, so railguard run runs such a scenario exactly as railguard exec would.
 */
#include "rg_exec.h"
#include "rg_parse.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(const char *msg)
{
    fprintf(stderr, "railguard exec: %s\n", msg);
    return 2;
}

/* The server's and the client's words, checked; -1 with "--server: what" in err. */
static int pair_words(struct exec_opts *o, char *err, size_t errlen)
{
    char why[200];
    o->nserver = rg_command_words(o->server_arg, o->server_buf, sizeof(o->server_buf), o->server,
                                  RG_CMD_WORDS, why, sizeof(why));
    if (o->nserver < 0) {
        snprintf(err, errlen, "--server: %s", why);
        return -1;
    }
    o->nclient = rg_command_words(o->client_arg, o->client_buf, sizeof(o->client_buf), o->client,
                                  RG_CMD_WORDS, why, sizeof(why));
    if (o->nclient < 0) {
        snprintf(err, errlen, "--client: %s", why);
        return -1;
    }
    o->ranks = 2;
    /* A server not told {port} listens where railguard cannot look (an RDMA CM port): wait 1 s. */
    if (o->client_after < 0 && !strstr(o->server_arg, "{port}"))
        o->client_after = 1.0;
    return 0;
}

/* --server and --client: both, without a command after '--' or --ranks; each checked now. */
static int client_server(struct exec_opts *o, bool cmd_too)
{
    char err[240];
    if (!o->server_arg || !o->client_arg)
        return usage("--server and --client go together");
    if (cmd_too)
        return usage("--server/--client or a command after '--', not both");
    if (o->ranks_set)
        return usage("--ranks: a server and a client are 2 ranks");
    if (pair_words(o, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard exec: %s\n", err);
        return 2;
    }
    return 0;
}

static int take_expect(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct exec_opts *o = opts;
    char shown[72];
    int at;
    uint32_t cls;
    (void)opt;
    if (rg_sc_expect_parse(val, strlen(val), &o->expect, &at, &cls) != 0 ||
        o->expect == RG_SC_EXPECT_KILLED || o->expect == RG_SC_EXPECT_OK_OR_DETECTED ||
        at != RG_SC_AT_ANY || cls) {
        snprintf(why, len, "ok, detected or any, not '%s'",
                 rg_parse_show(val, shown, sizeof(shown)));
        return -1;
    }
    return 0;
}

static int take_name(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct exec_opts *o = opts;
    char shown[72];
    size_t n = strlen(val);
    bool ok = n > 0 && n < sizeof(o->name);
    (void)opt;
    for (size_t i = 0; ok && i < n; i++)
        ok = (val[i] >= 'a' && val[i] <= 'z') || (val[i] >= 'A' && val[i] <= 'Z') ||
             (val[i] >= '0' && val[i] <= '9') || strchr("-_.", val[i]);
    if (!ok) {
        snprintf(why, len, "letters, digits, '-', '_', '.', not '%s'",
                 rg_parse_show(val, shown, sizeof(shown)));
        return -1;
    }
    snprintf(o->name, sizeof(o->name), "%s", val);
    return 0;
}

static int take_wrapper(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct exec_opts *o = opts;
    (void)opt;
    o->nwrap =
        rg_command_words(val, o->wrap_buf, sizeof(o->wrap_buf), o->wrap, RG_CMD_WORDS, why, len);
    o->wrap_of = o->wrap;
    return o->nwrap < 0 ? -1 : 0;
}

static int take_service(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct exec_opts *o = opts;
    char shown[72];
    int64_t v;
    (void)opt;
    if (rg_parse_int(val, 0, RG_MAX_RANKS - 1, &v) != 0) {
        snprintf(why, len, "not a rank in 0..%d '%s'", RG_MAX_RANKS - 1,
                 rg_parse_show(val, shown, sizeof(shown)));
        return -1;
    }
    o->services |= UINT64_C(1) << v;
    return 0;
}

#define EO(f) offsetof(struct exec_opts, f)
static const rg_opt exec_table[] = {
    {.name = "ranks",
     .kind = RG_OPT_INT,
     .arg = "N",
     .help = "N copies of the command, ranks 0..N-1 (default 1).",
     .off = EO(ranks),
     .lo = 1,
     .hi = RG_MAX_RANKS,
     .given = EO(ranks_set) + 1},
    {.name = "faults",
     .kind = RG_OPT_TEXT,
     .arg = "RULES",
     .help = "The fault plan, in the shim's grammar (rules separated by ';' or newlines).",
     .off = EO(faults)},
    {.name = "plan",
     .kind = RG_OPT_TEXT,
     .arg = "FILE",
     .help = "The fault plan from a file (at most 64 KiB).",
     .off = EO(plan)},
    {.name = "deadline",
     .kind = RG_OPT_SECONDS,
     .arg = "S",
     .help = "Every process still running after S seconds is a DEADLOCK (default 60).",
     .off = EO(deadline_s),
     .lo = 0.1,
     .hi = 86400},
    {.name = "expect",
     .kind = RG_OPT_CALL,
     .arg = "ok|detected|any",
     .help =
         "What every rank must end as. By default as a scenario's: ok when every fault is one a "
         "program must ride out (delay, delay_first, stall, late), else any.",
     .call = take_expect,
     .given = EO(expect_set) + 1},
    {.name = "leaks",
     .kind = RG_OPT_FLAG,
     .help = "Verbs objects left at exit fail the run (LEAK); without it they are a finding.",
     .off = EO(leaks)},
    {.name = "count",
     .kind = RG_OPT_FLAG,
     .help = "Also count what each process does and print it after the verdicts: posts and "
             "completions by op, per QP, and every verbs call site with its calls (a count and a "
             "sites rule join the plan). What a fault plan's op=, nth= and site= can aim at.",
     .off = EO(count)},
    {.name = "launcher",
     .kind = RG_OPT_FLAG,
     .help =
         "CMD is a launcher (mpirun, srun, ...) that starts the --ranks ranks itself: run once, "
         "and each process it starts with a launcher's rank (OMPI_COMM_WORLD_RANK, PMIX_RANK, "
         "PMI_RANK, SLURM_PROCID) is judged as that rank, from its shim's evidence and the exit "
         "its shim saw.",
     .off = EO(launcher)},
    {.name = "uc-as-rc",
     .kind = RG_OPT_FLAG,
     .help = "The shim creates every UC QP the program asks for as an RC one (RNR retry without "
             "limit): a send before its receive is retried instead of dropped. The report says so.",
     .off = EO(uc_as_rc)},
    {.name = "no-ownership",
     .kind = RG_OPT_FLAG,
     .help = "The ownership sanitizer off.",
     .off = EO(no_ownership)},
    {.name = "name",
     .kind = RG_OPT_CALL,
     .arg = "NAME",
     .help = "The scenario's name in reports (letters, digits, -_.).",
     .call = take_name},
    {.name = "out",
     .letter = 'o',
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "Each process's log, events and backtrace, result.json, report.json, junit.xml "
             "(default railguard-exec).",
     .off = EO(out),
     .len = sizeof(((struct exec_opts *)0)->out) - 300},
    {.name = "json",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "report.json written here too.",
     .off = EO(json),
     .len = sizeof(((struct exec_opts *)0)->json)},
    {.name = "junit",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "junit.xml written here too.",
     .off = EO(junit),
     .len = sizeof(((struct exec_opts *)0)->junit)},
    {.name = "shim",
     .kind = RG_OPT_PATH,
     .arg = "SO",
     .help = "The fault-injection shim (default: the one installed beside).",
     .off = EO(shim),
     .len = sizeof(((struct exec_opts *)0)->shim)},
    {.name = "server",
     .kind = RG_OPT_TEXT,
     .arg = "'CMD ARG...'",
     .help = "Rank 0, a server; its words split as a shell splits them, quotes and backslashes "
             "included, with no expansion. {port} is a free TCP port, {host} the server's address.",
     .off = EO(server_arg)},
    {.name = "client",
     .kind = RG_OPT_TEXT,
     .arg = "'CMD ARG...'",
     .help = "Rank 1, its client, started once the server listens on {port}, or --client-after S "
             "seconds after it.",
     .off = EO(client_arg)},
    {.name = "client-after",
     .kind = RG_OPT_SECONDS,
     .arg = "S",
     .help =
         "The client starts S seconds after the server instead (default: once {port} listens, or "
         "1 s when the server is not told {port}).",
     .off = EO(client_after),
     .hi = 3600},
    {.name = "rank-wrapper",
     .kind = RG_OPT_CALL,
     .arg = "'CMD ARG...'",
     .help =
         "Every process runs under this command (valgrind, strace, numactl), which must exec the "
         "program in the same process.",
     .call = take_wrapper},
    {.name = "service",
     .kind = RG_OPT_CALL,
     .arg = "R",
     .help =
         "Rank R serves until stopped: once every other rank has ended it is asked for the shim's "
         "summary, sent SIGTERM, and SIGKILL --service-grace S later; judged on what it did "
         "before. "
         "May be given for several ranks.",
     .call = take_service},
    {.name = "service-grace",
     .kind = RG_OPT_SECONDS,
     .arg = "S",
     .help = "From SIGTERM to SIGKILL for a service (default 5).",
     .off = EO(service_grace),
     .hi = 600},
    {.name = "slow-scale",
     .kind = RG_OPT_INT,
     .arg = "F",
     .help =
         "A run that ran out of its deadline on a machine that held it back runs again with every "
         "time (deadline, faults) F times (default 4; 1: never); SLOW, too slow to judge, if it "
         "runs out again.",
     .off = EO(slow_scale),
     .lo = 1,
     .hi = 100},
};
#undef EO

const rg_cli rg_exec_cli = {
    .cmd = "exec",
    .synopsis =
        "[options] -- CMD [ARG...]\n       railguard exec [options] --server 'CMD ARG...' --client "
        "'CMD ARG...'",
    .about =
        "Runs N copies of CMD under the fault-injection shim and judges each process from its exit "
        "status and the shim's evidence, with the verdicts railguard run gives a transport. Each "
        "gets RG_RANK and RG_SIZE in its environment; {rank} and {size} in an argument are "
        "replaced "
        "by them.",
    .opts = exec_table,
    .nopts = (int)(sizeof(exec_table) / sizeof(exec_table[0])),
    .stop_at_word = true,
};

int exec_parse_opts(int argc, char **argv, struct exec_opts *o)
{
    o->ranks = 1;
    o->deadline_s = 60;
    o->client_after = -1;
    o->service_grace = 5;
    o->slow_scale = 4;
    snprintf(o->out, sizeof(o->out), "railguard-exec");
    int first, rc = rg_cli_parse(&rg_exec_cli, argc, argv, o, &first);
    if (rc)
        return rc;
    if (o->faults && o->plan)
        return usage("--faults and --plan: one plan, not two");
    /* The ranks are known once every flag is read (server and client are two). */
    int nranks = o->server_arg || o->client_arg ? 2 : o->ranks;
    uint64_t every = nranks >= 64 ? UINT64_MAX : (UINT64_C(1) << nranks) - 1;
    if (o->services & ~every)
        return usage("--service names a rank past --ranks");
    if (o->services && o->services == every)
        return usage("--service: every rank a service leaves none to end the run");
    if (first < argc && !strcmp(argv[first], "--"))
        first++;
    if (o->launcher && (o->server_arg || o->client_arg || o->services))
        return usage("--launcher starts every rank: no --server, --client or --service with it");
    if (o->server_arg || o->client_arg)
        return client_server(o, first < argc);
    if (first >= argc)
        return usage("no command: give it after '--'");
    o->cmd = argv + first;
    o->ncmd = argc - first;
    if (o->ncmd > RG_EXEC_ARGS)
        return usage("more than 64 words of command");
    if (!rg_executable(o->cmd[0])) {
        char shown[72];
        fprintf(stderr, "railguard exec: '%s' %s\n", rg_parse_show(o->cmd[0], shown, sizeof(shown)),
                strchr(o->cmd[0], '/') ? "is not an executable file" : "not found on PATH");
        return 2;
    }
    return 0;
}

/* What railguard exec would have been given for a scenario file's exec:. -1 with err. */
int exec_opts_of(const rg_scenario *sc, const char *shim, struct exec_opts *o, char *err,
                 size_t errlen)
{
    char why[200];
    memset(o, 0, sizeof(*o));
    snprintf(o->shim, sizeof(o->shim), "%s", shim ? shim : "");
    o->ranks = sc->ranks;
    o->deadline_s = sc->deadline_s;
    o->client_after = sc->exec.client_after;
    if (sc->exec.server[0]) {
        o->server_arg = sc->exec.server;
        o->client_arg = sc->exec.client;
        if (pair_words(o, err, errlen) != 0)
            return -1;
    } else {
        o->launcher = sc->exec.launcher[0] != '\0';
        o->ncmd =
            rg_command_words(o->launcher ? sc->exec.launcher : sc->exec.command, o->cmd_buf,
                             sizeof(o->cmd_buf), o->cmd_words, RG_CMD_WORDS, why, sizeof(why));
        if (o->ncmd < 0) {
            snprintf(err, errlen, "exec: %s: %s", o->launcher ? "launcher" : "command", why);
            return -1;
        }
        o->cmd = o->cmd_words;
    }
    return 0;
}
