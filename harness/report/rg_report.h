/* SPDX-License-Identifier: MIT */
/*
 * rg_report.h - what a judged run is reported as: report.json and JUnit XML, the live line and
 * the summary table (rg_report.c), each scenario's timeline and trace.json (rg_timeline.c), and
 * the run page, index.html (rg_html.c).
 */
#ifndef RG_REPORT_H
#define RG_REPORT_H

#include "base/rg_base.h"
#include "result/rg_result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* `info` (what ran) may be NULL. */
int rg_report_json(const rg_result *res, int n, double total_s, const rg_run_info *info,
                   const char *path, char *err, size_t errlen);
int rg_report_junit(const rg_result *res, int n, double total_s, const rg_run_info *info,
                    const char *path, char *err, size_t errlen);
/* The summary table and the last line, "N passed, M failed". */
void rg_report_table(FILE *f, const rg_result *res, int n, double total_s);
/* The live line for one finished scenario. */
void rg_report_line(FILE *f, const rg_result *r);

/* --- the timeline (rg_timeline.c): trace.json, and the run page's picture --------------- */
/* One program step of a rank, from its status lines: [t0, t1] seconds from the scenario's
 * start, and how it ended ("ok" when the next step began, else the verdict's word). */
#define RG_TL_MAX_SPANS 1024
#define RG_TL_MAX_MARKS 128
#define RG_TL_MAX_QPS 64
typedef struct rg_tl_span {
    double t0_s, t1_s;
    int step, rep;
    char label[160];
    char result[32];
} rg_tl_span;
typedef struct rg_tl_mark { /* a fired fault */
    double t_s;
    char text[RG_SC_RULE_MAX + 64];
} rg_tl_mark;
/* A QP's summary from the shim: at exit, at destroy, or at the deadline ("snapshot"). */
typedef struct rg_tl_qp {
    double t_s;
    int ord;
    unsigned qpn;
    char dev[32], why[16];
    long long posts_send, posts_recv, cqe_send, cqe_recv;
    long long out_send, out_recv; /* -1: the shim could not count them (an SRQ) */
    char oldest[400]; /* at the deadline: its oldest requests still posted ("" none said) */
} rg_tl_qp;
typedef struct rg_tl_rank {
    bool have_status, have_events;
    double verdict_t_s; /* when it said its verdict; -1: never */
    char status[32];    /* the failed call's status, as the rank said it */
    int nspans, nmarks, nqps;
    rg_tl_span span[RG_TL_MAX_SPANS];
    rg_tl_mark mark[RG_TL_MAX_MARKS];
    rg_tl_qp qp[RG_TL_MAX_QPS];
} rg_tl_rank;
/* Rank `rank`'s timeline from r->dir (rankR.status, rankR.events.jsonl) and r's verdicts: 0,
 * or -1 when neither file is there. Lines it cannot read are skipped. */
int rg_timeline_load(const rg_result *r, int rank, rg_tl_rank *t);
/* The rank whose failure the judge named first (rg_result.first_rank) when its time is known,
 * else -1: the one the trace and the page mark, so they and the report agree. */
int rg_first_failure(const rg_result *r);
/* trace.json (Chrome Trace Event format): a process per rank with its calls, fired faults,
 * verdict and QP counters; the first failure marked. 0, or -1 with err. */
int rg_trace_write(const rg_result *r, const char *path, char *err, size_t errlen);

/* --- the run page (rg_html.c) ------------------------------------------------------------ */
/* index.html: every scenario (failures first) with its ranks' verdicts, first failure, fault
 * rules' fired counts, files, and a timeline picture of each failing one. info may be NULL. */
int rg_html_write(const rg_result *res, int n, double total_s, const rg_run_info *info,
                  const char *path, char *err, size_t errlen);
/* The page's triage section again, from triage/section.html beside it (railguard triage writes
 * it): whatever triage part the page had is replaced. 0, or -1 with err. */
int rg_html_triage(const char *page, char *err, size_t errlen);
/* `railguard report DIR` on a run's directory: every scenario's trace.json and the run's
 * index.html written again from the result.json files and evidence there. Exit status. */
int rg_report_run_dir(const char *dir);

#endif
