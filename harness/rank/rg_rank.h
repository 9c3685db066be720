/* SPDX-License-Identifier: MIT */
/*
 * rg_rank.h - one rank's process: a transport loaded through the plugin ABI
 * (rg_transport.c), the worker that runs a scenario's program on it and checks every output
 * (rg_worker.c, rg_worker_step.c), the fork server's end that forks ranks (rg_serve.c), and
 * a bench rank (rg_bench_rank.c) with the bench's option grammar (rg_bench_spec.c).
 */
#ifndef RG_RANK_H
#define RG_RANK_H

#include "base/rg_base.h"
#include "result/rg_result.h"
#include "data/rg_data.h"
#include "scenario/rg_scenario.h"
#include "railguard/plugin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- a transport, through the plugin ABI (rg_transport.c) ------------------------------------ */
/*
 * One loaded plugin: a version 2 table, or a version 1 table seen through the same calls (its
 * capabilities are the operations it has; its errors carry RG_TP_V1_ERROR, no status).
 */
#define RG_TP_V1_ERROR 1
typedef struct rg_tp {
    void *so;
    int abi; /* 1 or 2 */
    const rg_plugin *v2;
    const rg_plugin_ops *v1;
    const char *name, *version; /* version NULL when the plugin gives none */
    rg_plugin_caps caps;
    bool has_mem, has_last_call;
} rg_tp;

/* Loads the plugin and checks its table; -1 with one line in err. */
int rg_tp_open(rg_tp *tp, const char *path, char *err, size_t len);
/* 1 with the reason in why when the transport declares it cannot run the scenario at all (its
 * QP type, algorithm, ranks, rails, zero_copy), or this step (operation, dtype, redop,
 * in-place); else 0. */
int rg_tp_lacks_scenario(const rg_tp *tp, const rg_scenario *sc, char *why, size_t len);
int rg_tp_lacks_step(const rg_tp *tp, const rg_sc_op *op, char *why, size_t len);
/* The operations: a status of the one table, or RG_TP_V1_ERROR from a v1 plugin. */
int rg_tp_init(rg_tp *tp, const rg_plugin_args *a, void **h, char *err, size_t len);
int rg_tp_all_reduce(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt,
                     rg_redop op);
int rg_tp_all_gather(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt);
int rg_tp_reduce_scatter(const rg_tp *tp, void *h, const void *s, void *r, size_t n, rg_dtype dt,
                         rg_redop op);
int rg_tp_broadcast(const rg_tp *tp, void *h, void *b, size_t n, rg_dtype dt, int root);
int rg_tp_send(const rg_tp *tp, void *h, const void *b, size_t n, rg_dtype dt, int peer);
int rg_tp_recv(const rg_tp *tp, void *h, void *b, size_t n, rg_dtype dt, int peer);
int rg_tp_barrier(const rg_tp *tp, void *h);
int rg_tp_finalize(const rg_tp *tp, void *h);
const char *rg_tp_last_error(const rg_tp *tp, void *h);
int rg_tp_mem_register(const rg_tp *tp, void *h, void *buf, size_t len, void **mem);
int rg_tp_mem_deregister(const rg_tp *tp, void *h, void *mem);
/* What the last call ran (AUTO and 0 when the plugin cannot say: RG_ERR_UNSUPPORTED then). */
int rg_tp_last_call(const rg_tp *tp, void *h, rg_algo *algo, int *rails);
/* "RG_ERR_TIMEOUT", or "status N (...)" outside the table (a v1 plugin's error is worded by
 * the worker, which knows the plugin's ABI). */
const char *rg_tp_status(int st, char *buf, size_t len);

/* --- the worker (one rank) ------------------------------------------------------------------ */
typedef struct rg_worker_args {
    const char *scenario;
    int rank;
    const char *coordinator;
    const char *devices_file;
    const char *transport;
    int status_fd;
    int go_fd; /* -1, or where the runner's go byte comes once every rank is ready (loaded) */
    const char *backtrace_file; /* where a crash or RG_BACKTRACE_SIGNAL writes a backtrace */
    bool seed_set;
    uint64_t seed;
    int time_scale; /* --time-scale: the scenario's times multiplied by this (rg_scenario_scale) */
} rg_worker_args;

int rg_worker_main(const rg_worker_args *a);
/* The worker's command line (argv[0] and argv[1] "worker" first); returns its exit status. */
int rg_worker_cli(int argc, char **argv);

/* --- the worker's status lines, read back (rg_status.c) ------------------------------------- */
/* What a line said of the rank's state rather than its findings. */
typedef struct rg_status_said {
    bool ready;     /* "ready": loaded, waiting for go */
    bool verdict;   /* it said its verdict */
    unsigned steps; /* "step" lines read: one began a call of the transport's */
    unsigned lines; /* lines of ours read: each says the rank moved */
    bool error;     /* that verdict was "error": the worker then exits 3 */
} rg_status_said;
/* One status line folded into the rank's result k (its step, status, calls, findings) and
 * said; times are seconds from t0_ms (CLOCK_MONOTONIC ms). A line not ours is left alone. */
void rg_status_take(rg_rank_result *k, rg_status_said *said, char *line, double t0_ms);
/* One status line on fd, stamped with CLOCK_MONOTONIC in ms: the worker's side. */
void rg_status_say(int fd, const char *fmt, va_list ap);

/*
 * The fork server (launch/rg_forksrv.c the runner's end, rg_serve.c the server's): one
 * SOCK_SEQPACKET message per rank, items joined by NUL bytes -- "E" KEY=VALUE (set in the
 * rank's environment), "U" KEY (unset), "A" WORD (the worker's options) -- with exactly
 * RG_FORKSRV_FDS descriptors (its log, status pipe and go pipe).
 */
#define RG_FORKSRV_MSG_MAX 16384
#define RG_FORKSRV_ITEMS_MAX 64
#define RG_FORKSRV_FDS 3
/* The server's loop, in `railguard worker --serve`: until the runner closes the socket. */
int rg_worker_serve(int sock, const char *transport);

/* --- railguard bench (rg_bench_spec.c pure, rg_bench.c the command, rg_bench_rank.c a rank) -- */
/*
 * nccl-tests' conventions: sizes from -b to -e, times -f (or plus -i); -n timed iterations
 * per round after -w warmup ones; -d dtype, -o redop, -r root, -c check, -a how the ranks'
 * times combine (0 rank 0, 1 mean, 2 min, 3 max). A size is the bytes of the larger buffer
 * (all_gather's output, reduce_scatter's input), so busbw compares across operations.
 */
#define RG_BENCH_MAX_SIZES 64
#define RG_BENCH_MAX_ROUNDS 1000
typedef struct rg_bench_spec {
    uint32_t ops; /* RG_BIT(rg_plugin_op) among all_reduce..sendrecv */
    uint64_t min_bytes, max_bytes;
    int factor;          /* -f: the next size is this times the last (0 with -i) */
    uint64_t step_bytes; /* -i: the next size is the last plus this */
    int iters, warmup, rounds;
    rg_dtype dtype;
    rg_redop redop;
    int root;
    bool check;
    bool reg;    /* -R 1: the buffers registered with the transport (mem_register) */
    int average; /* -a */
    int ranks, rails;
    rg_qp_type qp;
    rg_algo algo;
    double timeout_s; /* the transport's deadline for every wait; the bench's is a bit longer */
} rg_bench_spec;

/* The operations a bench runs, by rg_plugin_op (barrier none). */
#define RG_BENCH_OPS                                                                               \
    (RG_BIT(RG_OP_ALL_REDUCE) | RG_BIT(RG_OP_ALL_GATHER) | RG_BIT(RG_OP_REDUCE_SCATTER) |          \
     RG_BIT(RG_OP_BROADCAST) | RG_BIT(RG_OP_SENDRECV))

void rg_bench_defaults(rg_bench_spec *s);
/*
 * One option shared by `railguard bench` and its ranks (long option name without "--", or a
 * one-letter nccl-tests flag): 0 taken, 1 not a bench option, -1 after one line on stderr
 * naming the flag and its value. rg_bench_args writes the spec back as such options.
 */
int rg_bench_option(rg_bench_spec *s, const char *name, const char *val);
/*
 * The bench's spec as option-table entries (base's rg_opt), shared by `railguard bench` and
 * its ranks: each is an RG_OPT_CALL into rg_bench_option, on options whose first member is
 * the rg_bench_spec (both commands' options begin with it).
 */
int rg_bench_take(void *opts, const rg_opt *o, const char *val, char *why, size_t len);
#define RG_BENCH_SPEC_NOPTS 19
extern const rg_opt rg_bench_spec_opts[RG_BENCH_SPEC_NOPTS];
int rg_bench_args(const rg_bench_spec *s, char *buf, size_t len, char **argv, int max);
/* The sizes -b..-e make; their number (at most max). */
int rg_bench_sizes(const rg_bench_spec *s, uint64_t *sizes, int max);
/* Elements per rank's call for `bytes` of op at n ranks (0: too small to run), and the bytes
 * that count really moves (the size column). */
size_t rg_bench_count(rg_plugin_op op, uint64_t bytes, size_t esz, int n);
uint64_t rg_bench_bytes(rg_plugin_op op, size_t count, size_t esz, int n);
/* nccl-tests' bus bandwidth factor: all_reduce 2(n-1)/n, all_gather and reduce_scatter
 * (n-1)/n, broadcast and sendrecv 1. */
double rg_bench_bus_factor(rg_plugin_op op, int n);
const char *rg_bench_op_name(rg_plugin_op op);
int rg_bench_op_of(const char *name);
/* The median of v[0..n) (sorts v); the ranks' times combined as -a says. */
double rg_bench_median(double *v, int n);
double rg_bench_combine(const double *t, int n, int average);
/* One rank: `railguard worker --bench ...` (argv[0] "worker"). */
int rg_bench_rank_main(int argc, char **argv);

#endif
