/* SPDX-License-Identifier: MIT */
/*
 * What a `railguard bench` measures: its options (one parser for the command and its ranks, so
 * the two cannot read a flag differently), the sizes, counts and nccl-tests' bandwidth
 * arithmetic. Pure: the unit tests link it.
 */
#include "rank/rg_rank.h"
#include "rg_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[RG_OP_COUNT] = {"all_reduce", "all_gather", "reduce_scatter",
                                                  "broadcast",  "sendrecv",   "barrier"};

const char *rg_bench_op_name(rg_plugin_op op)
{
    return (unsigned)op < RG_OP_COUNT ? op_names[op] : "?";
}

int rg_bench_op_of(const char *name)
{
    for (int i = 0; i < RG_OP_COUNT; i++)
        if ((RG_BENCH_OPS & RG_BIT(i)) && !strcmp(name, op_names[i]))
            return i;
    return -1;
}

void rg_bench_defaults(rg_bench_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->ops = RG_BIT(RG_OP_ALL_REDUCE);
    s->min_bytes = 8;
    s->max_bytes = 1 << 20;
    s->factor = 2;
    s->iters = 20;
    s->warmup = 5;
    s->rounds = 5;
    s->dtype = RG_FLOAT32;
    s->redop = RG_SUM;
    s->check = true;
    s->average = 1;
    s->ranks = 2;
    s->rails = 1;
    s->qp = RG_QPT_RC;
    s->algo = RG_ALGO_AUTO;
    s->timeout_s = 30;
}

static int bad(const char *name, const char *val, const char *what)
{
    char shown[72];
    fprintf(stderr, "railguard bench: %s%s '%s': %s\n", name[1] ? "--" : "-", name,
            rg_parse_show(val ? val : "", shown, sizeof(shown)), what);
    return -1;
}

static int is(const char *name, const char *letter, const char *word)
{
    return (letter && !strcmp(name, letter)) || !strcmp(name, word);
}

static int ops_of(const char *list, uint32_t *out)
{
    char buf[256];
    uint32_t got = 0;
    if (strlen(list) >= sizeof(buf))
        return -1;
    if (!strcmp(list, "all")) {
        *out = RG_BENCH_OPS;
        return 0;
    }
    snprintf(buf, sizeof(buf), "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int op = rg_bench_op_of(t);
        if (op < 0)
            return -1;
        got |= RG_BIT(op);
    }
    if (!got)
        return -1;
    *out = got;
    return 0;
}

static int name_of(const char *val, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (names[i] && !strcmp(val, names[i]))
            return i;
    return -1;
}

int rg_bench_option(rg_bench_spec *s, const char *name, const char *val)
{
    int64_t v;
    uint64_t u;
    int i;
    if (!strcmp(name, "ops")) {
        if (!val || ops_of(val, &s->ops))
            return bad(name, val,
                       "a comma-separated list of all_reduce, all_gather, reduce_scatter, "
                       "broadcast, sendrecv, or all");
    } else if (is(name, "b", "minbytes")) {
        if (!val || rg_parse_size(val, 1, 1ULL << 32, &s->min_bytes))
            return bad(name, val, "a size from 1 to 4G (K, M, G allowed)");
    } else if (is(name, "e", "maxbytes")) {
        if (!val || rg_parse_size(val, 1, 1ULL << 32, &s->max_bytes))
            return bad(name, val, "a size from 1 to 4G (K, M, G allowed)");
    } else if (is(name, "f", "stepfactor")) {
        if (!val || rg_parse_int(val, 2, 1024, &v))
            return bad(name, val, "a whole factor from 2 to 1024");
        s->factor = (int)v;
        s->step_bytes = 0;
    } else if (is(name, "i", "stepbytes")) {
        if (!val || rg_parse_size(val, 1, 1ULL << 32, &u))
            return bad(name, val, "a size from 1 to 4G");
        s->step_bytes = u;
        s->factor = 0;
    } else if (is(name, "n", "iters")) {
        if (!val || rg_parse_int(val, 1, 1000000, &v))
            return bad(name, val, "a count from 1 to 1000000");
        s->iters = (int)v;
    } else if (is(name, "w", "warmup_iters")) {
        if (!val || rg_parse_int(val, 0, 1000000, &v))
            return bad(name, val, "a count from 0 to 1000000");
        s->warmup = (int)v;
    } else if (is(name, "N", "rounds")) {
        if (!val || rg_parse_int(val, 1, RG_BENCH_MAX_ROUNDS, &v))
            return bad(name, val, "a count from 1 to 1000");
        s->rounds = (int)v;
    } else if (is(name, "d", "datatype")) {
        if (!val || (i = name_of(val, rg_data_dtype_names, RG_DTYPE_COUNT)) < 0)
            return bad(name, val, "a dtype (float32, int32, bfloat16, ...)");
        s->dtype = (rg_dtype)i;
    } else if (is(name, "o", "op")) {
        if (!val || (i = name_of(val, rg_data_redop_names, RG_REDOP_COUNT)) < 0)
            return bad(name, val, "sum, prod, max or min");
        s->redop = (rg_redop)i;
    } else if (is(name, "r", "root")) {
        if (!val || rg_parse_int(val, 0, RG_MAX_RANKS - 1, &v))
            return bad(name, val, "a rank");
        s->root = (int)v;
    } else if (is(name, "c", "check")) {
        if (!val || rg_parse_bool(val, &s->check))
            return bad(name, val, "0 or 1");
    } else if (is(name, "R", "register")) {
        if (!val || rg_parse_bool(val, &s->reg))
            return bad(name, val, "0 or 1");
    } else if (is(name, "a", "average")) {
        if (!val || rg_parse_int(val, 0, 3, &v))
            return bad(name, val, "0 (rank 0), 1 (mean), 2 (min) or 3 (max)");
        s->average = (int)v;
    } else if (!strcmp(name, "ranks")) {
        if (!val || rg_parse_int(val, 2, RG_MAX_RANKS, &v))
            return bad(name, val, "a count from 2 to 64");
        s->ranks = (int)v;
    } else if (!strcmp(name, "rails")) {
        if (!val || rg_parse_int(val, 1, RG_MAX_RAILS, &v))
            return bad(name, val, "a count from 1 to 4");
        s->rails = (int)v;
    } else if (!strcmp(name, "qp")) {
        if (!val || (strcmp(val, "uc") && strcmp(val, "rc")))
            return bad(name, val, "uc or rc");
        s->qp = !strcmp(val, "rc") ? RG_QPT_RC : RG_QPT_UC;
    } else if (!strcmp(name, "algo")) {
        static const char *const algos[] = {"auto", "ring", "mesh"};
        if (!val || (i = name_of(val, algos, 3)) < 0)
            return bad(name, val, "auto, ring or mesh");
        s->algo = (rg_algo)i;
    } else if (!strcmp(name, "timeout")) {
        if (!val || rg_parse_seconds(val, 0.1, 3600, &s->timeout_s))
            return bad(name, val, "seconds from 0.1 to 3600");
    } else {
        return 1;
    }
    return 0;
}

int rg_bench_take(void *opts, const rg_opt *o, const char *val, char *why, size_t len)
{
    /* One-letter flags are nccl-tests' spelling: a bad value is named by its letter. */
    char letter[2] = {o->letter, '\0'};
    (void)why;
    (void)len;
    return rg_bench_option(opts, o->letter ? letter : o->name, val) != 0 ? -1 : 0;
}

const rg_opt rg_bench_spec_opts[] = {
    {.name = "ops",
     .kind = RG_OPT_CALL,
     .arg = "OP,...",
     .help = "all_reduce, all_gather, reduce_scatter, broadcast, sendrecv, or all (default "
             "all_reduce).",
     .call = rg_bench_take},
    {.name = "minbytes",
     .letter = 'b',
     .kind = RG_OPT_CALL,
     .arg = "SIZE",
     .help = "The smallest size (K, M, G allowed; default 8).",
     .call = rg_bench_take},
    {.name = "maxbytes",
     .letter = 'e',
     .kind = RG_OPT_CALL,
     .arg = "SIZE",
     .help = "The largest size (default 1M).",
     .call = rg_bench_take},
    {.name = "stepfactor",
     .letter = 'f',
     .kind = RG_OPT_CALL,
     .arg = "F",
     .help = "Each size F times the last (default 2).",
     .call = rg_bench_take},
    {.name = "stepbytes",
     .letter = 'i',
     .kind = RG_OPT_CALL,
     .arg = "SIZE",
     .help = "Each size SIZE more than the last, instead of -f.",
     .call = rg_bench_take},
    {.name = "iters",
     .letter = 'n',
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Timed calls a round (default 20).",
     .call = rg_bench_take},
    {.name = "warmup_iters",
     .letter = 'w',
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Untimed calls before the first round of each size (default 5).",
     .call = rg_bench_take},
    {.name = "rounds",
     .letter = 'N',
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Rounds (default 5), each a barrier, one untimed call, then the timed calls; the "
             "table shows the median, min and max over them.",
     .call = rg_bench_take},
    {.name = "datatype",
     .letter = 'd',
     .kind = RG_OPT_CALL,
     .arg = "DTYPE",
     .help = "float32, int32, bfloat16, ... (default float32).",
     .call = rg_bench_take},
    {.name = "op",
     .letter = 'o',
     .kind = RG_OPT_CALL,
     .arg = "sum|prod|max|min",
     .help = "The reduction (default sum).",
     .call = rg_bench_take},
    {.name = "root",
     .letter = 'r',
     .kind = RG_OPT_CALL,
     .arg = "R",
     .help = "broadcast's root (default 0).",
     .call = rg_bench_take},
    {.name = "check",
     .letter = 'c',
     .kind = RG_OPT_CALL,
     .arg = "0|1",
     .help = "Every output checked bit-exact (default 1).",
     .call = rg_bench_take},
    {.name = "register",
     .letter = 'R',
     .kind = RG_OPT_CALL,
     .arg = "0|1",
     .help = "Buffers registered with the transport (default 0).",
     .call = rg_bench_take},
    {.name = "average",
     .letter = 'a',
     .kind = RG_OPT_CALL,
     .arg = "0|1|2|3",
     .help = "How the ranks' times combine: rank 0, mean, min or max (default 1).",
     .call = rg_bench_take},
    {.name = "ranks",
     .kind = RG_OPT_CALL,
     .arg = "N",
     .help = "Ranks (default 2).",
     .call = rg_bench_take},
    {.name = "rails",
     .kind = RG_OPT_CALL,
     .arg = "R",
     .help = "Rails (default 1).",
     .call = rg_bench_take},
    {.name = "qp",
     .kind = RG_OPT_CALL,
     .arg = "rc|uc",
     .help = "The QP type (default rc).",
     .call = rg_bench_take},
    {.name = "algo",
     .kind = RG_OPT_CALL,
     .arg = "auto|ring|mesh",
     .help = "The algorithm (default auto).",
     .call = rg_bench_take},
    {.name = "timeout",
     .kind = RG_OPT_CALL,
     .arg = "S",
     .help = "The transport's deadline for every wait (default 30).",
     .call = rg_bench_take},
};
/* rg_rank.h declares it with RG_BENCH_SPEC_NOPTS entries: another count does not compile. */

int rg_bench_args(const rg_bench_spec *s, char *buf, size_t len, char **argv, int max)
{
    static const char *const algos[] = {"auto", "ring", "mesh"};
    char ops[128] = "";
    for (int i = 0; i < RG_OP_COUNT; i++)
        if (s->ops & RG_BIT(i))
            snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s", ops[0] ? "," : "",
                     op_names[i]);
    char step[48];
    if (s->factor)
        snprintf(step, sizeof(step), "-f\n%d", s->factor);
    else
        snprintf(step, sizeof(step), "-i\n%llu", (unsigned long long)s->step_bytes);
    int n = snprintf(buf, len,
                     "--ops\n%s\n-b\n%llu\n-e\n%llu\n%s\n-n\n%d\n-w\n%d\n-N\n%d\n-d\n%s\n-o\n%s\n"
                     "-r\n%d\n-c\n%d\n-R\n%d\n-a\n%d\n--ranks\n%d\n--rails\n%d\n--qp\n%s\n"
                     "--algo\n%s\n--timeout\n%.3f",
                     ops, (unsigned long long)s->min_bytes, (unsigned long long)s->max_bytes, step,
                     s->iters, s->warmup, s->rounds, rg_data_dtype_name(s->dtype),
                     rg_data_redop_name(s->redop), s->root, s->check, s->reg, s->average, s->ranks,
                     s->rails, s->qp == RG_QPT_RC ? "rc" : "uc", algos[s->algo], s->timeout_s);
    if (n < 0 || (size_t)n >= len)
        return -1;
    int k = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
        if (k == max - 1)
            return -1;
        argv[k++] = t;
    }
    argv[k] = NULL;
    return k;
}

int rg_bench_sizes(const rg_bench_spec *s, uint64_t *sizes, int max)
{
    int n = 0;
    for (uint64_t b = s->min_bytes; b <= s->max_bytes && n < max;
         b = s->factor ? b * (uint64_t)s->factor : b + s->step_bytes)
        sizes[n++] = b;
    return n;
}

size_t rg_bench_count(rg_plugin_op op, uint64_t bytes, size_t esz, int n)
{
    if (!esz || n < 1)
        return 0;
    if (op == RG_OP_ALL_GATHER || op == RG_OP_REDUCE_SCATTER)
        return (size_t)(bytes / (esz * (uint64_t)n));
    return (size_t)(bytes / esz);
}

uint64_t rg_bench_bytes(rg_plugin_op op, size_t count, size_t esz, int n)
{
    uint64_t b = (uint64_t)count * esz;
    return op == RG_OP_ALL_GATHER || op == RG_OP_REDUCE_SCATTER ? b * (uint64_t)n : b;
}

double rg_bench_bus_factor(rg_plugin_op op, int n)
{
    switch (op) {
    case RG_OP_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case RG_OP_ALL_GATHER:
    case RG_OP_REDUCE_SCATTER:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rg_bench_median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double rg_bench_combine(const double *t, int n, int average)
{
    if (n <= 0)
        return NAN;
    double r = t[0], sum = 0;
    for (int i = 0; i < n; i++) {
        sum += t[i];
        if (average == 2 && t[i] < r)
            r = t[i];
        if (average == 3 && t[i] > r)
            r = t[i];
    }
    return average == 1 ? sum / n : r;
}
