/* SPDX-License-Identifier: MIT */
/*
 * railguard bench's table: each rank's lines read (its per-round times, its check, its
 * memory), and per operation and size the median, min and max over rounds of the ranks'
 * combined time per call, algbw, busbw and the wrong elements, printed and written as JSON.
 */
#include "rg_bench.h"
#include "rg_parse.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Which size index `bytes` of op came from; -1 when none. */
static int size_index(const struct btab *b, const rg_bench_spec *s, int op, uint64_t bytes)
{
    size_t esz = rg_data_size(s->dtype);
    for (int i = 0; i < b->nsizes; i++) {
        size_t c = rg_bench_count((rg_plugin_op)op, b->sizes[i], esz, s->ranks);
        if (c && rg_bench_bytes((rg_plugin_op)op, c, esz, s->ranks) == bytes)
            return i;
    }
    return -1;
}

/* One line from rank r. What does not parse is an error of the rank's: the bench says it and
 * stops trusting that rank's figures. */
static void take(struct btab *b, const rg_bench_spec *s, struct bproc *p, int r, char *line)
{
    char opn[32], shown[72];
    unsigned long long bytes;
    int round, off = 0, op, si;
    double sec;
    long a, c;
    if (sscanf(line, "time %31s %llu %d %lf%n", opn, &bytes, &round, &sec, &off) == 4 &&
        !line[off] && (op = rg_bench_op_of(opn)) >= 0 && (si = size_index(b, s, op, bytes)) >= 0 &&
        round >= 0 && round < b->rounds && isfinite(sec) && sec >= 0) {
        *tcell(b, op, si, round, r) = sec;
        return;
    }
    if (sscanf(line, "wrong %31s %llu %ld%n", opn, &bytes, &a, &off) == 3 && !line[off] &&
        (op = rg_bench_op_of(opn)) >= 0 && (si = size_index(b, s, op, bytes)) >= 0 && a >= 0) {
        *wcell(b, op, si, r) = a;
        return;
    }
    if (sscanf(line, "mem %ld %ld%n", &a, &c, &off) == 2 && !line[off]) {
        p->rss_kb = a;
        p->pin_kb = c;
        return;
    }
    if (sscanf(line, "init %lf%n", &sec, &off) == 1 && !line[off] && isfinite(sec)) {
        p->init_s = sec;
        return;
    }
    if (!strncmp(line, "skip ", 5) && sscanf(line + 5, "%31s %n", opn, &off) == 1 &&
        (op = rg_bench_op_of(opn)) >= 0) {
        snprintf(b->skip[op], sizeof(b->skip[op]), "%s",
                 rg_parse_show(line + 5 + off, shown, sizeof(shown)));
        return;
    }
    if (!strcmp(line, "done")) {
        p->done = true;
        return;
    }
    if (!strncmp(line, "error ", 6)) {
        if (!p->error[0])
            snprintf(p->error, sizeof(p->error), "%s", line + 6);
        return;
    }
    if (!p->error[0])
        snprintf(p->error, sizeof(p->error), "said something unreadable: '%s'",
                 rg_parse_show(line, shown, sizeof(shown)));
}

static void drain(struct btab *b, const rg_bench_spec *s, struct bproc *p, int r)
{
    ssize_t n = read(p->fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
    if (n <= 0) {
        if (n < 0 && errno == EINTR)
            return;
        close(p->fd);
        p->fd = -1;
        return;
    }
    p->len += (size_t)n;
    p->buf[p->len] = '\0';
    char *line = p->buf, *nl;
    while ((nl = strchr(line, '\n'))) {
        *nl = '\0';
        take(b, s, p, r, line);
        line = nl + 1;
    }
    p->len = strlen(line);
    memmove(p->buf, line, p->len);
    if (p->len == sizeof(p->buf) - 1) { /* a line longer than any the rank writes */
        if (!p->error[0])
            snprintf(p->error, sizeof(p->error), "said a line over %zu bytes", p->len);
        p->len = 0;
    }
}

/* Reads every rank until all have closed their status descriptor, or none said anything for
 * the deadline: then every rank still running is killed. 0, or -1 on the deadline. */
int bench_collect(struct btab *b, const struct bopts *o, struct bproc *ps, int n)
{
    double last = rg_now_s();
    for (;;) {
        struct pollfd pf[RG_MAX_RANKS];
        int idx[RG_MAX_RANKS], k = 0;
        for (int r = 0; r < n; r++)
            if (ps[r].fd >= 0) {
                pf[k] = (struct pollfd){.fd = ps[r].fd, .events = POLLIN};
                idx[k++] = r;
            }
        if (!k)
            return 0;
        double left = o->deadline_s - (rg_now_s() - last);
        if (left <= 0) {
            for (int r = 0; r < n; r++)
                if (ps[r].fd >= 0 && !ps[r].error[0])
                    snprintf(ps[r].error, sizeof(ps[r].error),
                             "said nothing for %.0f s (--deadline): killed", o->deadline_s);
            for (int r = 0; r < n; r++)
                if (ps[r].pid > 0)
                    kill(ps[r].pid, SIGKILL);
            return -1;
        }
        int rc = poll(pf, (nfds_t)k, (int)(left * 1000) + 1);
        if (rc < 0 && errno != EINTR)
            return -1;
        for (int i = 0; rc > 0 && i < k; i++)
            if (pf[i].revents) {
                drain(b, &o->s, &ps[idx[i]], idx[i]);
                last = rg_now_s();
            }
    }
}

static const char *average_name(int a)
{
    static const char *const n[] = {"rank 0's", "the mean over ranks of their",
                                    "the least over ranks of their",
                                    "the most over ranks of their"};
    return n[a & 3];
}

struct row {
    uint64_t bytes;
    size_t count;
    double med, min, max, algbw, busbw;
    long wrong;
    double rounds[RG_BENCH_MAX_ROUNDS];
};

/* One row from every rank's figures: 0, 1 when the size is too small for op, -1 when some
 * rank did not give every round and its check. */
static int make_row(struct btab *b, const rg_bench_spec *s, int op, int si, struct row *w)
{
    size_t esz = rg_data_size(s->dtype);
    double per[RG_MAX_RANKS], sorted[RG_BENCH_MAX_ROUNDS];
    w->count = rg_bench_count((rg_plugin_op)op, b->sizes[si], esz, s->ranks);
    if (!w->count)
        return 1;
    w->bytes = rg_bench_bytes((rg_plugin_op)op, w->count, esz, s->ranks);
    for (int round = 0; round < b->rounds; round++) {
        for (int r = 0; r < b->ranks; r++)
            if (isnan(per[r] = *tcell(b, op, si, round, r)))
                return -1;
        w->rounds[round] = rg_bench_combine(per, b->ranks, s->average);
        sorted[round] = w->rounds[round];
    }
    w->med = rg_bench_median(sorted, b->rounds);
    w->min = sorted[0];
    w->max = sorted[b->rounds - 1];
    w->algbw = w->med > 0 ? (double)w->bytes / w->med / 1e9 : 0;
    w->busbw = w->algbw * rg_bench_bus_factor((rg_plugin_op)op, s->ranks);
    w->wrong = 0;
    for (int r = 0; s->check && r < b->ranks; r++) {
        long x = *wcell(b, op, si, r);
        if (x < 0)
            return -1;
        w->wrong += x;
    }
    return 0;
}

static const char *const bench_algos[] = {"auto", "ring", "mesh"};

/* What ran, in the table's head. */
static void print_head(const struct bopts *o, const rg_tp *tp)
{
    const rg_bench_spec *s = &o->s;
    printf("# railguard bench %s: %s%s%s, %d ranks, %d rail(s), %s, algo %s%s%s\n", rg_version(),
           tp->name, tp->version ? " " : "", tp->version ? tp->version : "", s->ranks, s->rails,
           s->qp == RG_QPT_RC ? "RC" : "UC", bench_algos[s->algo],
           o->use_shim ? (o->counting ? ", under the shim (counting plan)"
                                      : ", under the shim (pass-through)")
                       : "",
           s->reg ? ", buffers registered (-R 1)" : "");
    printf("# %d timed calls a round after %d warmup, %d rounds; a round's time is %s "
           "time per call; median, min and max over rounds; check %s\n",
           s->iters, s->warmup, s->rounds, average_name(s->average), s->check ? "on" : "off");
    printf("#\n# %-14s %12s %10s %9s %6s %4s %10s %10s %10s %11s %11s %7s\n", "op", "size", "count",
           "type", "redop", "root", "time(us)", "min(us)", "max(us)", "algbw(GB/s)", "busbw(GB/s)",
           "#wrong");
}

/* One row printed and added to the JSON's results. */
static void put_row(struct btab *b, const rg_bench_spec *s, int op, int si, const struct row *w,
                    json_t *rows)
{
    bool red = op == RG_OP_ALL_REDUCE || op == RG_OP_REDUCE_SCATTER;
    const char *name = rg_bench_op_name((rg_plugin_op)op);
    char wr[24], root[16] = "-";
    snprintf(wr, sizeof(wr), s->check ? "%ld" : "N/A", w->wrong);
    if (op == RG_OP_BROADCAST)
        snprintf(root, sizeof(root), "%d", s->root);
    printf("  %-14s %12llu %10zu %9s %6s %4s %10.1f %10.1f %10.1f %11.4f %11.4f %7s\n", name,
           (unsigned long long)w->bytes, w->count, rg_data_dtype_name(s->dtype),
           red ? rg_data_redop_name(s->redop) : "none", root, w->med * 1e6, w->min * 1e6,
           w->max * 1e6, w->algbw, w->busbw, wr);
    json_t *rj = json_array(), *wj = json_array();
    for (int i = 0; i < b->rounds; i++)
        json_array_append_new(rj, json_real(w->rounds[i] * 1e6));
    for (int r = 0; r < b->ranks; r++)
        json_array_append_new(wj, json_integer(s->check ? *wcell(b, op, si, r) : -1));
    json_array_append_new(
        rows, json_pack("{s:s,s:I,s:I,s:s,s:s,s:i,s:{s:f,s:f,s:f,s:o},s:f,s:f,s:f,s:I,s:o}", "op",
                        name, "size", (json_int_t)w->bytes, "count", (json_int_t)w->count, "type",
                        rg_data_dtype_name(s->dtype), "redop",
                        red ? rg_data_redop_name(s->redop) : "none", "root",
                        op == RG_OP_BROADCAST ? s->root : -1, "time_us", "median", w->med * 1e6,
                        "min", w->min * 1e6, "max", w->max * 1e6, "rounds", rj, "algbw_gbs",
                        w->algbw, "busbw_gbs", w->busbw, "bus_factor",
                        rg_bench_bus_factor((rg_plugin_op)op, s->ranks), "wrong",
                        (json_int_t)(s->check ? w->wrong : -1), "wrong_per_rank", wj));
}

/* Each rank's memory and error, printed and as the JSON's ranks_memory. */
static json_t *put_ranks(const rg_bench_spec *s, const struct bproc *ps)
{
    json_t *mem = json_array();
    for (int r = 0; r < s->ranks; r++) {
        if (ps[r].rss_kb > 0)
            printf("# rank %d: peak RSS %.1f MiB, pinned (registered) %.1f MiB, init %.3f s\n", r,
                   ps[r].rss_kb / 1024.0, ps[r].pin_kb / 1024.0, ps[r].init_s);
        if (ps[r].error[0])
            printf("# rank %d: FAILED: %s\n", r, ps[r].error);
        json_array_append_new(mem, json_pack("{s:i,s:I,s:I,s:f,s:s}", "rank", r, "peak_rss_kib",
                                             (json_int_t)ps[r].rss_kb, "pinned_kib",
                                             (json_int_t)ps[r].pin_kb, "init_s", ps[r].init_s,
                                             "error", ps[r].error));
    }
    return mem;
}

/* --json: what ran and every row. Takes rows, skips and mem. 0, or -1 after one line. */
static int write_json(const struct bopts *o, const rg_tp *tp, json_t *rows, json_t *skips,
                      json_t *mem, double wall_s, bool ok)
{
    const rg_bench_spec *s = &o->s;
    json_t *top = json_pack(
        "{s:s,s:s,s:{s:s,s:s?,s:s},s:s,s:i,s:i,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:b,s:s,s:b,"
        "s:o,s:o,s:o,s:f,s:b}",
        "railguard", rg_version(), "label", o->label, "transport", "name", tp->name, "version",
        tp->version, "path", o->transport, "devices", o->devices[0], "ranks", s->ranks, "rails",
        s->rails, "qp", s->qp == RG_QPT_RC ? "rc" : "uc", "algo", bench_algos[s->algo], "dtype",
        rg_data_dtype_name(s->dtype), "redop", rg_data_redop_name(s->redop), "iters", s->iters,
        "warmup", s->warmup, "rounds", s->rounds, "average",
        (const char *[]){"rank0", "mean", "min", "max"}[s->average & 3], "check", s->check, "shim",
        o->use_shim ? (o->counting ? "counting" : "pass-through") : "off", "registered", s->reg,
        "results", rows, "skipped", skips, "ranks_memory", mem, "seconds", wall_s, "ok", ok);
    int rc = 0;
    if (!top || json_dump_file(top, o->json, JSON_INDENT(1)) != 0) {
        fprintf(stderr, "railguard bench: --json: cannot write '%s'\n", o->json);
        rc = -1;
    }
    json_decref(top);
    return rc;
}

int bench_report(struct btab *b, const struct bopts *o, const rg_tp *tp, struct bproc *ps,
                 double wall_s, bool failed)
{
    const rg_bench_spec *s = &o->s;
    json_t *rows = json_array(), *skips = json_array();
    long wrong_total = 0;
    double bus_sum = 0;
    int bus_n = 0, incomplete = 0;
    static struct row w;
    print_head(o, tp);
    for (int op = 0; op < RG_OP_COUNT; op++) {
        if (!(s->ops & RG_BIT(op)))
            continue;
        const char *name = rg_bench_op_name((rg_plugin_op)op);
        if (b->skip[op][0]) {
            printf("# %-14s skipped: %s\n", name, b->skip[op]);
            json_array_append_new(skips, json_pack("{s:s,s:s}", "op", name, "why", b->skip[op]));
            continue;
        }
        for (int si = 0; si < b->nsizes; si++) {
            int rc = make_row(b, s, op, si, &w);
            incomplete += rc < 0;
            if (rc)
                continue;
            put_row(b, s, op, si, &w, rows);
            wrong_total += w.wrong;
            bus_sum += w.busbw;
            bus_n++;
        }
    }
    printf("# wrong elements: %ld%s\n", wrong_total,
           s->check ? (wrong_total ? " FAILED" : " OK") : " (not checked: -c 0)");
    if (bus_n)
        printf("# average bus bandwidth: %.4f GB/s\n", bus_sum / bus_n);
    json_t *mem = put_ranks(s, ps);
    if (incomplete && !failed)
        printf("# %d row(s) left out: some rank did not give every round%s\n", incomplete,
               s->check ? " and its check" : "");
    printf("# %.1f s in all\n", wall_s);
    int rc = failed || incomplete || wrong_total ? 1 : 0;
    if (o->json[0]) {
        if (write_json(o, tp, rows, skips, mem, wall_s, !rc) != 0)
            rc = 1;
    } else {
        json_decref(rows);
        json_decref(skips);
        json_decref(mem);
    }
    return rc;
}
