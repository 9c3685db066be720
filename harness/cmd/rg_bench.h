/* SPDX-License-Identifier: MIT */
/*
 * rg_bench.h - railguard bench's own insides (cmd/ only): its options, its ranks' processes,
 * and the table of what they said. rg_bench.c is the command and the ranks' lives,
 * rg_bench_table.c reads the ranks' lines and prints and writes the table.
 */
#ifndef RG_BENCH_H
#define RG_BENCH_H

#include "cmd/rg_cmd.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bopts {
    rg_bench_spec s;
    char secret[RG_JOB_SECRET_HEX];
    char self[PATH_MAX], transport[PATH_MAX], shim[PATH_MAX], out[PATH_MAX], json[PATH_MAX];
    bool use_shim, keep_out;
    bool counting; /* --with-shim-counting: run's counting plan; else the plain pass-through */
    char devices[RG_MAX_RAILS][64];
    int ndevices;
    char label[64];
    double deadline_s;
    bool deadline_set;
    const char *devices_arg; /* --devices, as given */
    char wrap_buf[1024];
    char *wrap[RG_CMD_WORDS + 1]; /* --rank-wrapper's words */
    int nwrap;
};

struct bproc {
    pid_t pid;
    int fd;
    char buf[2048];
    size_t len;
    bool done;
    int status;
    char error[700];
    long rss_kb, pin_kb;
    double init_s;
};

/* What the ranks said, by operation, size, round and rank. */
struct btab {
    int nsizes, rounds, ranks;
    uint64_t sizes[RG_BENCH_MAX_SIZES];
    double *t;   /* [op][size][round][rank]: seconds per call, NAN until said */
    long *wrong; /* [op][size][rank]: -1 until said */
    char skip[RG_OP_COUNT][160];
};

/* The cells of the table: a round's time per call, and the wrong elements a rank counted. */
static inline double *tcell(struct btab *b, int op, int si, int round, int rank)
{
    return &b->t[(((size_t)op * b->nsizes + si) * b->rounds + round) * b->ranks + rank];
}

static inline long *wcell(struct btab *b, int op, int si, int rank)
{
    return &b->wrong[((size_t)op * b->nsizes + si) * b->ranks + rank];
}

/* Every rank's lines until each has said it is done or the deadline passed (rg_bench_table.c);
 * -1 when some rank's figures cannot be trusted. */
int bench_collect(struct btab *b, const struct bopts *o, struct bproc *ps, int n);
/* The table on stdout and, with --json, the file: the exit status (1: failed, incomplete or
 * wrong elements). */
int bench_report(struct btab *b, const struct bopts *o, const rg_tp *tp, struct bproc *ps,
                 double wall_s, bool failed);

#endif
