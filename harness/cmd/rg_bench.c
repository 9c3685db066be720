/* SPDX-License-Identifier: MIT */
/*
 * railguard bench: nccl-tests' table for any transport, through the plugin ABI. It starts one
 * `railguard worker --bench` per rank (rg_bench_rank.c), optionally under the shim (its
 * pass-through, or run's counting plan), reads their per-round times and checks, and prints per
 * operation and size the median, min and max over rounds of the ranks' combined time per call,
 * algbw, busbw and the count of wrong elements over every rank; JSON with --json.
 */
#include "rg_bench.h"
#include "rg_parse.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int take_shim_mode(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct bopts *o = opts;
    (void)val, (void)why, (void)len;
    o->use_shim = true;
    o->counting = !strcmp(opt->name, "with-shim-counting");
    return 0;
}

static int take_label(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct bopts *o = opts;
    (void)opt;
    if (!*val || strlen(val) >= sizeof(o->label))
        return snprintf(why, len, "1 to %zu characters", sizeof(o->label) - 1), -1;
    snprintf(o->label, sizeof(o->label), "%s", val);
    return 0;
}

static int take_wrapper(void *opts, const rg_opt *opt, const char *val, char *why, size_t len)
{
    struct bopts *o = opts;
    (void)opt;
    o->nwrap =
        rg_command_words(val, o->wrap_buf, sizeof(o->wrap_buf), o->wrap, RG_CMD_WORDS, why, len);
    return o->nwrap < 1 ? -1 : 0;
}

#define BO(f) offsetof(struct bopts, f)
#define BL(f) sizeof(((struct bopts *)0)->f)
static const rg_opt bench_table[] = {
    {.name = "transport",
     .kind = RG_OPT_PATH,
     .arg = "SO",
     .help = "The transport's plugin (default: the reference transport installed beside).",
     .off = BO(transport),
     .len = BL(transport)},
    {.name = "with-shim",
     .kind = RG_OPT_CALL,
     .help = "Every rank under the shim's pass-through (what the shim itself costs).",
     .call = take_shim_mode},
    {.name = "with-shim-counting",
     .kind = RG_OPT_CALL,
     .help = "Every rank under the shim with railguard run's counting plan.",
     .call = take_shim_mode},
    {.name = "shim",
     .kind = RG_OPT_PATH,
     .arg = "SO",
     .help = "The shim (implies --with-shim).",
     .off = BO(shim),
     .len = BL(shim),
     .given = BO(use_shim) + 1},
    {.name = "devices",
     .kind = RG_OPT_TEXT,
     .arg = "DEV,...",
     .help = "RDMA devices, one a rail (default $RG_SOFTROCE_DEVICES).",
     .off = BO(devices_arg)},
    {.name = "rank-wrapper",
     .kind = RG_OPT_CALL,
     .arg = "'CMD ARG...'",
     .help = "Every rank runs under this command.",
     .call = take_wrapper},
    {.name = "json",
     .kind = RG_OPT_PATH,
     .arg = "FILE",
     .help = "The table as JSON too.",
     .off = BO(json),
     .len = BL(json)},
    {.name = "out",
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "The ranks' logs kept here (default: a directory removed after).",
     .off = BO(out),
     .len = BL(out),
     .given = BO(keep_out) + 1},
    {.name = "label",
     .kind = RG_OPT_CALL,
     .arg = "TEXT",
     .help = "A name for this bench in the JSON.",
     .call = take_label},
    {.name = "deadline",
     .kind = RG_OPT_SECONDS,
     .arg = "S",
     .help = "The whole bench's deadline (default: four times --timeout, at least 120).",
     .off = BO(deadline_s),
     .lo = 1,
     .hi = 86400,
     .given = BO(deadline_set) + 1},
};
#undef BO
#undef BL

const rg_cli rg_bench_cli = {
    .cmd = "bench",
    .synopsis = "[options] [nccl-tests flags]",
    .about =
        "nccl-tests' table for any transport, through the plugin ABI: per operation and size the "
        "median, min and max over rounds of the ranks' time per call, algbw, busbw, and the count "
        "of "
        "wrong elements (every output checked bit-exact). The one-letter flags are nccl-tests'.",
    .opts = bench_table,
    .nopts = (int)(sizeof(bench_table) / sizeof(bench_table[0])),
    .shared = rg_bench_spec_opts,
    .nshared = RG_BENCH_SPEC_NOPTS,
};

static int parse(struct bopts *o, int argc, char **argv)
{
    const char *devs = getenv("RG_SOFTROCE_DEVICES"), *devs_from = "RG_SOFTROCE_DEVICES";
    rg_bench_defaults(&o->s);
    ssize_t n = readlink("/proc/self/exe", o->self, sizeof(o->self) - 1);
    if (n <= 0) {
        fprintf(stderr, "railguard bench: cannot find my own executable\n");
        return 2;
    }
    o->self[n] = '\0';
    rg_beside(o->transport, sizeof(o->transport), o->self, "railguard-transport.so");
    rg_beside(o->shim, sizeof(o->shim), o->self, "railguard-fi.so");
    int first, rc = rg_cli_parse(&rg_bench_cli, argc, argv, o, &first);
    if (rc)
        return rc;
    if (first < argc) {
        char shown[72];
        fprintf(stderr, "railguard bench: unexpected argument '%s'\n",
                rg_parse_show(argv[first], shown, sizeof(shown)));
        return 2;
    }
    if (o->devices_arg) {
        devs = o->devices_arg;
        devs_from = "--devices";
    }
    if (o->s.min_bytes > o->s.max_bytes) {
        fprintf(stderr, "railguard bench: -b %llu is above -e %llu\n",
                (unsigned long long)o->s.min_bytes, (unsigned long long)o->s.max_bytes);
        return 2;
    }
    if (o->s.root >= o->s.ranks) {
        fprintf(stderr, "railguard bench: -r %d is not a rank of %d\n", o->s.root, o->s.ranks);
        return 2;
    }
    if (!devs || !*devs) {
        fprintf(stderr, "railguard bench: no devices: pass --devices rxe0,rxe1 or set "
                        "RG_SOFTROCE_DEVICES (ci/softroce exec does)\n");
        return 2;
    }
    if (rg_devices_parse("bench", devs, devs_from, o->devices, &o->ndevices))
        return 2;
    if (o->ndevices < o->s.rails) {
        fprintf(stderr, "railguard bench: --rails %d but %s names %d device(s)\n", o->s.rails,
                devs_from, o->ndevices);
        return 2;
    }
    if (!o->deadline_set)
        o->deadline_s = o->s.timeout_s * 4 > 120 ? o->s.timeout_s * 4 : 120;
    return 0;
}

static void start_rank(const struct bopts *o, int r, const char *devfile, const char *coord,
                       int wfd)
{
    char log[PATH_MAX + 32], plan[PATH_MAX + 8], events[PATH_MAX + 32], rank[16], argbuf[1024];
    char *spec[48], *args[RG_CMD_WORDS + 64];
    int na = 0;
    snprintf(log, sizeof(log), "%s/rank%d.log", o->out, r);
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (lfd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0)
        _exit(127);
    if (wfd == 3)
        fcntl(3, F_SETFD, 0);
    else if (dup2(wfd, 3) < 0)
        _exit(127);
    if (o->use_shim) {
        snprintf(plan, sizeof(plan), "%s/plan", o->out);
        snprintf(events, sizeof(events), "%s/rank%d.events.jsonl", o->out, r);
        rg_proc_shim_env(o->shim, plan, events, r, false, 1);
        /* No plan at all is the shim's pass-through: a load, a test and a tail call a verb. */
        if (!o->counting)
            unsetenv("RG_FI_PLAN_FILE");
    }
    /* The side channel's job secret, as run hands it to the ranks it starts. */
    setenv("RG_SECRET", o->secret, 1);
    unsetenv("RG_SECRET_FILE");
    snprintf(rank, sizeof(rank), "%d", r);
    int ns = rg_bench_args(&o->s, argbuf, sizeof(argbuf), spec, 48);
    if (ns < 0)
        _exit(127);
    const char *fixed[] = {
        o->self,  "worker",      "--bench",       "--status-fd", "3",
        "--rank", rank,          "--coordinator", coord,         "--devices-file",
        devfile,  "--transport", o->transport,
    };
    for (int i = 0; i < o->nwrap; i++)
        args[na++] = o->wrap[i];
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        args[na++] = (char *)fixed[i];
    for (int i = 0; i < ns; i++)
        args[na++] = spec[i];
    args[na] = NULL;
    if (o->nwrap)
        execvp(args[0], args);
    else
        execv(o->self, args);
    fprintf(stderr, "railguard bench: cannot run %s: %s\n", args[0], strerror(errno));
    _exit(127);
}

/* What the transport declares, read once here, so a bench it cannot run at all is one line
 * before any rank starts. 0, or 2 after it. */
static int check_caps(const struct bopts *o, rg_tp *tp)
{
    char err[512];
    if (rg_tp_open(tp, o->transport, err, sizeof(err))) {
        fprintf(stderr, "railguard bench: %s\n", err);
        return 2;
    }
    const rg_plugin_caps *c = &tp->caps;
    const rg_bench_spec *s = &o->s;
    const char *why = s->ranks > c->max_ranks                    ? "more ranks than it declares"
                      : s->rails > c->max_rails                  ? "more rails than it declares"
                      : !(c->qp_types & RG_BIT(s->qp))           ? "the QP type is not declared"
                      : s->algo && !(c->algos & RG_BIT(s->algo)) ? "the algo is not declared"
                      : s->reg && !tp->has_mem ? "-R 1, but it has no mem_register"
                                               : NULL;
    if (why) {
        fprintf(stderr, "railguard bench: %s cannot run this bench: %s\n", tp->name, why);
        return 2;
    }
    return 0;
}

/* --out (or a directory of our own), the devices file, a port, the counting plan, the job
 * secret. 0, or 2 after one line. */
static int prepare(struct bopts *o, char *devfile, size_t dlen, char *coord, size_t clen)
{
    if (o->keep_out) {
        if (rg_mkdirs(o->out)) {
            fprintf(stderr, "railguard bench: --out: cannot make '%s': %s\n", o->out,
                    strerror(errno));
            return 2;
        }
    } else {
        const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(o->out, sizeof(o->out), "%s/railguard-bench.XXXXXX", tmp);
        if (!mkdtemp(o->out)) {
            fprintf(stderr, "railguard bench: cannot make a directory in %s: %s\n", tmp,
                    strerror(errno));
            return 2;
        }
    }
    snprintf(devfile, dlen, "%s/devices.json", o->out);
    int port = rg_free_port();
    if (port < 0 ||
        rg_devices_write(devfile, o->s.ranks, o->s.rails, (const char(*)[64])o->devices)) {
        fprintf(stderr, "railguard bench: %s\n",
                port < 0 ? "no free TCP port on loopback" : strerror(errno));
        return 2;
    }
    if (o->use_shim && o->counting) {
        /* run's counting plan: the shim as every scenario runs under it, with no fault. */
        char plan[PATH_MAX + 8];
        snprintf(plan, sizeof(plan), "%s/plan", o->out);
        FILE *f = fopen(plan, "w");
        if (!f || fputs("count\n", f) < 0 || fclose(f)) {
            fprintf(stderr, "railguard bench: cannot write '%s'\n", plan);
            return 2;
        }
    }
    if (rg_job_secret(o->secret)) {
        fprintf(stderr, "railguard bench: no randomness for the job secret\n");
        return 2;
    }
    snprintf(coord, clen, "127.0.0.1:%d", port);
    return 0;
}

/* The table's cells, each unsaid (NAN, -1) until a rank says it. 0, or 2 after one line. */
static int table_alloc(struct btab *b, const rg_bench_spec *s)
{
    b->nsizes = rg_bench_sizes(s, b->sizes, RG_BENCH_MAX_SIZES);
    b->rounds = s->rounds;
    b->ranks = s->ranks;
    size_t cells = (size_t)RG_OP_COUNT * b->nsizes * b->rounds * b->ranks;
    size_t wcells = (size_t)RG_OP_COUNT * b->nsizes * b->ranks;
    b->t = malloc(cells * sizeof(*b->t));
    b->wrong = malloc(wcells * sizeof(*b->wrong));
    if (!b->t || !b->wrong) {
        fprintf(stderr, "railguard bench: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < cells; i++)
        b->t[i] = NAN;
    for (size_t i = 0; i < wcells; i++)
        b->wrong[i] = -1;
    return 0;
}

/* Every rank forked, its status pipe kept. false when one could not be. */
static bool start_ranks(const struct bopts *o, struct bproc *ps, const char *devfile,
                        const char *coord)
{
    fflush(NULL);
    memset(ps, 0, sizeof(*ps) * (size_t)o->s.ranks);
    for (int r = 0; r < o->s.ranks; r++) {
        int fds[2];
        ps[r].fd = -1;
        if (pipe2(fds, O_CLOEXEC)) {
            snprintf(ps[r].error, sizeof(ps[r].error), "pipe: %s", strerror(errno));
            return false;
        }
        ps[r].pid = fork();
        if (ps[r].pid == 0)
            start_rank(o, r, devfile, coord, fds[1]);
        close(fds[1]);
        ps[r].fd = fds[0];
        if (ps[r].pid < 0) {
            snprintf(ps[r].error, sizeof(ps[r].error), "fork: %s", strerror(errno));
            close(fds[0]);
            ps[r].fd = -1;
            return false;
        }
    }
    return true;
}

/* Every status descriptor is closed: each rank reaped, one that lingers past the deadline
 * killed, and under the shim its events there (they are the evidence it was). false when a
 * rank did not finish as it should. */
static bool end_ranks(const struct bopts *o, struct bproc *ps)
{
    bool ok = true;
    double until = rg_now_s() + o->s.timeout_s + 10;
    for (int r = 0; r < o->s.ranks; r++) {
        if (ps[r].pid <= 0)
            continue;
        while (waitpid(ps[r].pid, &ps[r].status, WNOHANG) == 0) {
            if (rg_now_s() > until) {
                kill(ps[r].pid, SIGKILL);
                waitpid(ps[r].pid, &ps[r].status, 0);
                snprintf(ps[r].error, sizeof(ps[r].error), "did not exit: killed");
                break;
            }
            usleep(10000);
        }
        if (!ps[r].done || !WIFEXITED(ps[r].status) || WEXITSTATUS(ps[r].status)) {
            ok = false;
            if (!ps[r].error[0])
                snprintf(ps[r].error, sizeof(ps[r].error), "ended (%s %d) without finishing",
                         WIFSIGNALED(ps[r].status) ? "signal" : "exit",
                         WIFSIGNALED(ps[r].status) ? WTERMSIG(ps[r].status)
                                                   : WEXITSTATUS(ps[r].status));
        }
    }
    for (int r = 0; o->use_shim && r < o->s.ranks; r++) {
        char ev[PATH_MAX + 32];
        snprintf(ev, sizeof(ev), "%s/rank%d.events.jsonl", o->out, r);
        if (!rg_file_has(ev, NULL)) {
            ok = false;
            if (!ps[r].error[0])
                snprintf(ps[r].error, sizeof(ps[r].error),
                         "the shim wrote no events: it was not preloaded");
        }
    }
    return ok;
}

/* Our own mkdtemp directory, nothing in it but what this bench and its ranks wrote. */
static void remove_dir(const struct bopts *o, const char *devfile)
{
    char f[PATH_MAX + 32];
    for (int r = 0; r < o->s.ranks; r++) {
        snprintf(f, sizeof(f), "%s/rank%d.log", o->out, r);
        unlink(f);
        snprintf(f, sizeof(f), "%s/rank%d.events.jsonl", o->out, r);
        unlink(f);
    }
    unlink(devfile);
    snprintf(f, sizeof(f), "%s/plan", o->out);
    unlink(f);
    rmdir(o->out);
}

int rg_bench_main(int argc, char **argv)
{
    static struct bopts o;
    static struct bproc ps[RG_MAX_RANKS];
    struct btab b = {0};
    rg_tp tp;
    char devfile[PATH_MAX + 16], coord[64];
    int rc = parse(&o, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = check_caps(&o, &tp)) ||
        (rc = prepare(&o, devfile, sizeof(devfile), coord, sizeof(coord))) ||
        (rc = table_alloc(&b, &o.s)))
        goto out;
    double t0 = rg_now_s();
    bool failed = !start_ranks(&o, ps, devfile, coord);
    failed |= bench_collect(&b, &o, ps, o.s.ranks) != 0;
    failed |= !end_ranks(&o, ps);
    rc = bench_report(&b, &o, &tp, ps, rg_now_s() - t0, failed);
    for (int r = 0; r < o.s.ranks; r++)
        if (ps[r].error[0])
            fprintf(stderr, "railguard bench: rank %d: %s (log: %s/rank%d.log)\n", r, ps[r].error,
                    o.out, r);
    if (!rc && !o.keep_out)
        remove_dir(&o, devfile);
out:
    free(b.t);
    free(b.wrong);
    return rc;
}
