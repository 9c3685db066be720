/* SPDX-License-Identifier: MIT */
/* `railguard run --external` (rg_run.h): this process is one rank of a launcher's job. */
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

/* The launcher's rank and size: railguard's own (run --hosts), Open MPI, PMI (MPICH, srun
 * --mpi=pmi2), then Slurm. */
static int launcher_rank(int *rank, int *size, const char **from)
{
    static const char *const vars[][2] = {{"RG_RANK", "RG_SIZE"},
                                          {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
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
    fprintf(stderr, "railguard run: --external: no launcher rank (RG_RANK, OMPI_COMM_WORLD_RANK, "
                    "PMI_RANK or SLURM_PROCID); start it with mpirun, srun or run --hosts\n");
    return -1;
}

/*
 * External launch: this process is one rank, started by mpirun or srun on some node. It runs
 * its rank under the shim as a local run would, judges it against the scenario's expectation
 * for that rank, and exits 0 or 1, so the launcher's exit status is the scenario's verdict.
 * Each rank writes <out>/<name>/rankR.* (on a shared file system, one directory holds all).
 */
/* The runners meet at the coordinator before the workers do: each rank's clock against rank
 * 0's, so a report of ranks on several hosts can order them (rg_clock.c). Said on stdout. */
static void measure_clock(const struct run_opts *o, const struct sc_entry *e, int rank, int size,
                          rg_clock *clk)
{
    char err[512];
    char secret[RG_PARSE_SECRET_MAX + 1];
    if (rg_parse_secret_env(secret, err, sizeof(err)) != 0) {
        memset(clk, 0, sizeof(*clk));
        snprintf(clk->why, sizeof(clk->why), "%.199s", err);
    } else {
        rg_clock_sync(o->coordinator, secret, rank, size, rg_now_s() + e->sc.timeout_s, clk);
    }
    explicit_bzero(secret, sizeof(secret));
    if (clk->measured && rank)
        printf("rank %d: clock %+.3f ms from rank 0's (within +-%.3f ms, the least delayed of %d "
               "round trips)\n",
               rank, clk->offset_ms, clk->err_ms, clk->rounds);
    else if (!clk->measured || clk->why[0])
        printf("rank %d: clock: %s%s\n", rank, clk->measured ? "" : "not measured: ", clk->why);
    fflush(stdout);
}

/* This rank's own view of the scenario, as `railguard report` merges them: its rank as rank 0
 * (self_rank names it), its expectation, its rules' counts, its clock. */
static void view_of(const struct sc_entry *e, const rg_result *res, int rank, const rg_clock *clk,
                    rg_result *view)
{
    memset(view, 0, sizeof(*view));
    rg_run_fmt(view->name, sizeof(view->name), "%s[rank %d]", e->sc.name, rank);
    snprintf(view->path, sizeof(view->path), "%s", e->path);
    snprintf(view->dir, sizeof(view->dir), "%s", res->dir);
    view->ranks = 1;
    view->rank[0] = res->rank[rank];
    view->rank[0].clock = *clk;
    view->expect[0] = e->sc.expect[rank];
    view->expect_at[0] = e->sc.expect_at[rank];
    view->expect_cls[0] = e->sc.expect_cls[rank];
    for (int i = 0; i < RG_MAX_RANKS; i++)
        view->known[i] = i ? 0 : e->sc.known[rank];
    snprintf(view->known_why, sizeof(view->known_why), "%s", e->sc.known_why);
    view->nrules = res->nrules;
    for (int i = 0; i < res->nrules; i++) {
        view->rule[i] = res->rule[i];
        memset(view->rule[i].fired_by, 0, sizeof(view->rule[i].fired_by));
        view->rule[i].fired_by[0] = res->rule[i].fired_by[rank];
    }
    view->seconds = res->seconds;
    view->t0_mono_ms = res->t0_mono_ms;
    view->self_rank = rank;
    snprintf(view->host, sizeof(view->host), "%s", res->host);
}

int rg_run_external(const struct run_opts *o, const struct sc_entry *e)
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
    rg_run_fmt(res.dir, sizeof(res.dir), "%s/%s", o->out, e->sc.name);
    mkdir(res.dir, 0755);
    char plan[PATH_MAX + 64], pdir[PATH_MAX + 32];
    /* Each rank its own plan file: ranks may share the directory on a shared file system. */
    rg_run_fmt(pdir, sizeof(pdir), "%s/rank%d", res.dir, rank);
    mkdir(pdir, 0755);
    if (rg_proc_write_plan(pdir, &e->sc, plan, sizeof(plan)) != 0) {
        fprintf(stderr, "railguard run: %s: cannot write the plan: %s\n", plan, strerror(errno));
        return 2;
    }
    rg_clock clk;
    measure_clock(o, e, rank, size, &clk);
    rg_run_ranks(o, e, &res, rank, rank + 1, o->coordinator, o->devices_file, plan, false);
    /* A launcher ends the whole job once any rank exits non-zero (mpirun sends SIGTERM, then
     * SIGKILL a while later): this rank's verdict must be on disk first. Its worker has ended;
     * what is left takes milliseconds, and a deferred SIGTERM still ends the process after. */
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigaddset(&term, SIGHUP);
    sigaddset(&term, SIGINT);
    sigprocmask(SIG_BLOCK, &term, NULL);

    view_of(e, &res, rank, &clk, &view);
    char cmd[sizeof(view.repro) - 64];
    rg_run_repro_line(cmd, sizeof(cmd), o,
                      (const char *const[]){"--external", "--coordinator", o->coordinator,
                                            "--devices-file", o->devices_file, NULL},
                      o->out, &e->sc, e->path);
    rg_run_fmt(view.repro, sizeof(view.repro), "(rank %d of %d, under the same launcher) %s", rank,
               size, cmd);
    rg_judge(&view);
    rg_run_fmt(path, sizeof(path), "%s/rank%d.result.json", res.dir, rank);
    if (rg_result_save(&view, path, err, sizeof(err)) != 0)
        fprintf(stderr, "railguard run: %s\n", err);
    rg_report_line(stdout, &view);
    printf("rank %d judged alone; with every rank's result in %s, 'railguard report %s' "
           "applies the rules that look across ranks\n",
           rank, res.dir, res.dir);
    printf("%d passed, %d failed\n", view.passed, !view.passed);
    return view.passed ? 0 : 1;
}
