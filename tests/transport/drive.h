/* SPDX-License-Identifier: MIT */
/*
 * drive - runs N ranks of the reference transport on this machine's rxe devices: writes a
 * devices file, picks a coordinator port on loopback, forks the ranks, and has each one run
 * every collective over every dtype and op it is asked for, checking each result bit-exact
 * against a reference computed independently (integer arithmetic on the logical values, then
 * encoded; never through the transport's own kernels).
 */
#ifndef RG_TEST_DRIVE_H
#define RG_TEST_DRIVE_H

#include "railguard.h"

#include <stddef.h>
#include <stdint.h>

struct drive_opts {
    int ranks; /* 2..8 */
    int rails; /* 1..RG_MAX_RAILS, taken from $RG_SOFTROCE_DEVICES in order */
    rg_qp_type qp;
    rg_algo algo;     /* RG_ALGO_AUTO by default */
    size_t counts[8]; /* element counts to run, 0-terminated */
    int all_dtypes;   /* every dtype x op; otherwise float32 sum and int32 max only */
    int cycles;       /* communicator create/destroy cycles in each rank */
    uint64_t seed;
    double timeout_s; /* per-rank communicator timeout; the parent allows this plus a margin */
    int quiet;
    int cross_rank; /* >= 0: this rank's devices file row lists its rails reversed */
    int zcopy;      /* register each call's buffers (rg_mem_register): sends go in place */
    int env_rank;   /* >= 0: this rank alone puts env_set ("NAME=VALUE") in its environment */
    const char *env_set;
};

struct drive_result {
    int failed_ranks;
    int checks;              /* results verified across all ranks */
    unsigned long long into; /* receives that landed in the caller's output in place */
    double seconds;
    char msg[512]; /* the first failure */
};

void drive_opts_default(struct drive_opts *o);
int drive_run(const struct drive_opts *o, struct drive_result *r);

#endif
