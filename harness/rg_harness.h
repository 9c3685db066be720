/* SPDX-License-Identifier: MIT */
/*
 * rg_harness.h - the `railguard` command's one header: the runner, the worker it starts for each
 * rank, verdicts and reports. The harness sees transports only through the plugin ABI
 * (railguard.h's "plugin ABI" section, loaded with dlopen) and the shim only through its plan
 * grammar and environment: it links neither.
 */
#ifndef RG_HARNESS_H
#define RG_HARNESS_H

#include "railguard.h"
#include "rg_data.h"
#include "rg_scenario.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* --- verdicts (ULFM/Jepsen style), per rank -------------------------------------------------- */
typedef enum {
    RG_V_OK,                /* returned success, data verified */
    RG_V_DETECTED,          /* returned an error; the message is kept */
    RG_V_SILENT_CORRUPTION, /* returned success with wrong data or a broken guard band */
    RG_V_DEADLOCK,          /* did not finish by the deadline; killed after a backtrace */
    RG_V_CRASH,             /* died by a signal, or exited without a verdict */
    RG_V_ERROR,             /* the harness could not run it (bad transport, no memory) */
    RG_V_COUNT
} rg_verdict;

const char *rg_verdict_name(rg_verdict v);

typedef struct rg_rank_result {
    rg_verdict verdict;
    int step;        /* the program step it ended in (-1: init), or nops when it finished */
    int rep;         /* the repetition of that step */
    char where[160]; /* that step's description, e.g. "all_reduce float32 sum count 1021" */
    char detail[1024];
} rg_rank_result;

typedef struct rg_result {
    char name[RG_SC_NAME_MAX];
    char path[1024];
    char dir[1024]; /* this scenario's logs, events and backtraces */
    int ranks;
    rg_sc_expect expect[RG_MAX_RANKS];
    rg_rank_result rank[RG_MAX_RANKS];
    bool passed;
    char why[1200]; /* the first reason it failed */
    char repro[4096];
    double seconds;
} rg_result;

/* Decides passed/why from the ranks' verdicts and the expectations. Returns passed. */
bool rg_judge(rg_result *r);

/* --- reports ----------------------------------------------------------------------------- */
/* One result as JSON (the supervisor hands results to the runner this way, too). */
int rg_result_save(const rg_result *r, const char *path, char *err, size_t errlen);
int rg_result_read(rg_result *r, const char *path, char *err, size_t errlen);
int rg_report_json(const rg_result *res, int n, double total_s, const char *path, char *err,
                   size_t errlen);
int rg_report_junit(const rg_result *res, int n, double total_s, const char *path, char *err,
                    size_t errlen);
/* The summary table and the last line, "N passed, M failed". */
void rg_report_table(FILE *f, const rg_result *res, int n, double total_s);
/* The live line for one finished scenario. */
void rg_report_line(FILE *f, const rg_result *r);

/* --- the worker (one rank) ------------------------------------------------------------------ */
typedef struct rg_worker_args {
    const char *scenario;
    int rank;
    const char *coordinator;
    const char *devices_file;
    const char *transport;
    int status_fd;
    bool seed_set;
    uint64_t seed;
} rg_worker_args;

int rg_worker_main(const rg_worker_args *a);

/* --- the runner --------------------------------------------------------------------------- */
int rg_run_main(int argc, char **argv);
void rg_run_usage(FILE *f);

#endif
