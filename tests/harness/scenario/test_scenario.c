/* SPDX-License-Identifier: MIT */
/*
 * Scenario files: every field parses with its defaults, every op takes exactly its keys, a
 * malformed file is refused with one exact line naming the file, the line and the value, and
 * no input, random or mangled, crashes the parser or leaves a half-filled scenario behind.
 */
#include "common/rg_check.h"
#include "data/rg_data.h"
#include "scenario/rg_scenario.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------------------------- */

static const rg_scenario zero_sc;

/* Parses text as "scenarios/test.yaml" and expects success with an empty err. */
static void parse_ok(const char *text, rg_scenario *sc)
{
    char err[512] = "untouched";

    int rc = rg_scenario_parse(text, strlen(text), "scenarios/test.yaml", sc, err, sizeof(err));
    ck_assert_msg(rc == 0, "refused: %s\n--- text:\n%s", err, text);
    ck_assert_str_eq(err, "");
}

/* Parses text as `path`, expects a refusal and a cleared scenario; returns the message. */
static const char *parse_bad_as(const char *text, size_t len, const char *path)
{
    static char err[512];
    static rg_scenario sc;

    memset(&sc, 0x5a, sizeof(sc));
    int rc = rg_scenario_parse(text, len, path, &sc, err, sizeof(err));
    ck_assert_msg(rc == -1, "accepted:\n%s", text);
    ck_assert_msg(strchr(err, '\n') == NULL, "message spans lines: '%s'", err);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "no path in '%s'", err);
    /* A refused file leaves nothing behind that a careless caller could run. */
    ck_assert_msg(memcmp(&sc, &zero_sc, sizeof(sc)) == 0, "scenario not cleared: '%s'", err);
    return err;
}

static const char *parse_bad(const char *text)
{
    return parse_bad_as(text, strlen(text), "x.yaml");
}

static void expect_bad(const char *text, const char *want)
{
    const char *got = parse_bad(text);
    ck_assert_msg(strcmp(got, want) == 0, "got  '%s'\nwant '%s'\n--- text:\n%s", got, want, text);
}

/* Everything a successful parse promises, whatever the input was. */
static void check_invariants(const rg_scenario *sc)
{
    ck_assert(memchr(sc->name, '\0', sizeof(sc->name)) != NULL);
    ck_assert_uint_gt(strlen(sc->name), 0);
    ck_assert_uint_eq(strspn(sc->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789._-"),
                      strlen(sc->name));
    ck_assert_int_ge(sc->ranks, 2);
    ck_assert_int_le(sc->ranks, RG_MAX_RANKS);
    ck_assert_int_ge(sc->rails, 1);
    ck_assert_int_le(sc->rails, RG_MAX_RAILS);
    ck_assert(sc->qp == RG_QPT_UC || sc->qp == RG_QPT_RC);
    ck_assert(sc->algo == RG_ALGO_AUTO || sc->algo == RG_ALGO_RING || sc->algo == RG_ALGO_MESH);
    ck_assert(sc->timeout_s > 0 && sc->timeout_s <= 3600);
    ck_assert(sc->deadline_s > sc->timeout_s && sc->deadline_s <= 86400);
    ck_assert(memchr(sc->faults, '\0', sizeof(sc->faults)) != NULL);
    ck_assert_int_le(sc->nfaults, FI_MAX_RULES);
    {
        int lines = sc->faults[0] ? 1 : 0;
        for (const char *p = sc->faults; (p = strchr(p, '\n')); p++)
            lines++;
        ck_assert_int_eq(lines, sc->nfaults); /* one rule a line, rule i on line i + 1 */
    }
    ck_assert_int_ge(sc->nops, 1);
    ck_assert_int_le(sc->nops, RG_SC_OPS_MAX);
    for (int i = 0; i < sc->nops; i++) {
        const rg_sc_op *op = &sc->ops[i];
        ck_assert_int_lt(op->kind, RG_SC_KIND_COUNT);
        ck_assert_int_lt(op->dtype, RG_DTYPE_COUNT);
        ck_assert_int_lt(op->redop, RG_REDOP_COUNT);
        ck_assert_uint_ge(op->count, 1);
        ck_assert_uint_le(op->count, RG_SC_COUNT_MAX);
        ck_assert(op->root >= 0 && op->root < sc->ranks);
        ck_assert(op->repeat >= 1 && op->repeat <= 100000);
        ck_assert_int_ge(op->line, 1);
        if (op->kind == RG_SC_SENDRECV) {
            ck_assert(op->from >= 0 && op->from < sc->ranks);
            ck_assert(op->to >= 0 && op->to < sc->ranks);
            ck_assert_int_ne(op->from, op->to);
        }
        ck_assert(!(op->dtype == RG_COMPLEX64 && (op->redop == RG_MAX || op->redop == RG_MIN)));
    }
    for (int r = 0; r < RG_MAX_RANKS; r++)
        ck_assert_int_le(sc->expect[r], RG_SC_EXPECT_ANY);
}

/* A small deterministic generator (splitmix64): a failing case can be replayed. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(uint64_t *s, size_t n)
{
    return (size_t)(rng_next(s) % n);
}

/* --- valid scenarios ----------------------------------------------------------------------- */

static const char full_text[] =
    "# every field, most not at their default\n"           /* 1 */
    "name: full-scenario_1.0\n"                            /* 2 */
    "ranks: 4\n"                                           /* 3 */
    "rails: 2\n"                                           /* 4 */
    "qp: rc\n"                                             /* 5 */
    "algorithm: mesh\n"                                    /* 6 */
    "timeout: 2.5\n"                                       /* 7 */
    "deadline: 30\n"                                       /* 8 */
    "seed: 0xdeadBEEF\n"                                   /* 9 */
    "faults:\n"                                            /* 10 */
    "  - error status=WR_FLUSH_ERR op=recv rank=1 nth=3\n" /* 11 */
    "  - \"delay ms=5 rank=2\"\n"                          /* 12 */
    "program:\n"                                           /* 13 */
    "  - op: all_reduce\n"                                 /* 14 */
    "    dtype: bfloat16\n"                                /* 15 */
    "    count: 1021\n"                                    /* 16 */
    "    redop: max\n"                                     /* 17 */
    "    repeat: 3\n"                                      /* 18 */
    "    inplace: true\n"                                  /* 19 */
    "  - {op: all_gather, dtype: int8, count: 7, inplace: false}\n"
    "  - {op: reduce_scatter, dtype: complex64, count: 9, redop: prod}\n"
    "  - {op: broadcast, dtype: uint64, count: 3, root: 3}\n"
    "  - {op: sendrecv, dtype: bool, count: 5, from: 2, to: 0}\n"
    "  - {op: barrier, repeat: 2}\n" /* 24 */
    "  - {op: destroy}\n"
    "  - {op: create}\n"
    "expect:\n" /* 27 */
    "  all: any\n"
    "  1: detected\n"
    "  3: ok\n"
    "zero_copy: true\n";

START_TEST(test_full)
{
    rg_scenario sc;

    parse_ok(full_text, &sc);
    check_invariants(&sc);
    ck_assert_str_eq(sc.name, "full-scenario_1.0");
    ck_assert_int_eq(sc.ranks, 4);
    ck_assert_int_eq(sc.rails, 2);
    ck_assert_int_eq(sc.qp, RG_QPT_RC);
    ck_assert_int_eq(sc.algo, RG_ALGO_MESH);
    ck_assert(sc.timeout_s == 2.5);
    ck_assert(sc.deadline_s == 30);
    ck_assert_uint_eq(sc.seed, 0xdeadbeefu);
    ck_assert_str_eq(sc.faults,
                     "error status=WR_FLUSH_ERR op=recv rank=1 nth=3\ndelay ms=5 rank=2");
    ck_assert_int_eq(sc.nfaults, 2);
    ck_assert_int_eq(sc.fault[0].line, 11);
    ck_assert_int_eq(sc.fault[1].line, 12);
    ck_assert_str_eq(sc.fault[1].rule, "delay ms=5 rank=2");
    ck_assert(!sc.fault[0].optional && !sc.fault[1].optional);
    ck_assert_int_eq(sc.nops, 8);

    const rg_sc_op *op = &sc.ops[0];
    ck_assert_int_eq(op->kind, RG_SC_ALL_REDUCE);
    ck_assert_int_eq(op->dtype, RG_BFLOAT16);
    ck_assert_uint_eq(op->count, 1021);
    ck_assert_int_eq(op->redop, RG_MAX);
    ck_assert_int_eq(op->repeat, 3);
    ck_assert(op->inplace);
    ck_assert_int_eq(op->line, 14);

    op = &sc.ops[1];
    ck_assert_int_eq(op->kind, RG_SC_ALL_GATHER);
    ck_assert_int_eq(op->dtype, RG_INT8);
    ck_assert_uint_eq(op->count, 7);
    ck_assert(!op->inplace);
    ck_assert_int_eq(op->line, 20);

    op = &sc.ops[2];
    ck_assert_int_eq(op->kind, RG_SC_REDUCE_SCATTER);
    ck_assert_int_eq(op->dtype, RG_COMPLEX64);
    ck_assert_int_eq(op->redop, RG_PROD);
    ck_assert_uint_eq(op->count, 9);

    op = &sc.ops[3];
    ck_assert_int_eq(op->kind, RG_SC_BROADCAST);
    ck_assert_int_eq(op->dtype, RG_UINT64);
    ck_assert_int_eq(op->root, 3);

    op = &sc.ops[4];
    ck_assert_int_eq(op->kind, RG_SC_SENDRECV);
    ck_assert_int_eq(op->dtype, RG_BOOL);
    ck_assert_uint_eq(op->count, 5);
    ck_assert_int_eq(op->from, 2);
    ck_assert_int_eq(op->to, 0);
    ck_assert_int_eq(op->line, 23);

    ck_assert_int_eq(sc.ops[5].kind, RG_SC_BARRIER);
    ck_assert_int_eq(sc.ops[5].repeat, 2);
    ck_assert_int_eq(sc.ops[6].kind, RG_SC_DESTROY);
    ck_assert_int_eq(sc.ops[7].kind, RG_SC_CREATE);
    ck_assert_int_eq(sc.ops[7].line, 26);

    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_ANY);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_DETECTED);
    ck_assert_int_eq(sc.expect[2], RG_SC_EXPECT_ANY);
    ck_assert_int_eq(sc.expect[3], RG_SC_EXPECT_OK);
    ck_assert(sc.zero_copy);
    ck_assert(sc.ownership);
}
END_TEST

START_TEST(test_defaults)
{
    rg_scenario sc;

    memset(&sc, 0x5a, sizeof(sc));
    parse_ok("ranks: 2\nprogram:\n  - op: all_reduce\n  - op: sendrecv\n    from: 1\n    to: 0\n",
             &sc);
    check_invariants(&sc);
    ck_assert_str_eq(sc.name, "test");
    ck_assert_int_eq(sc.ranks, 2);
    ck_assert_int_eq(sc.rails, 1);
    ck_assert_int_eq(sc.qp, RG_QPT_UC);
    ck_assert_int_eq(sc.algo, RG_ALGO_AUTO);
    ck_assert(sc.timeout_s == 10);
    ck_assert(sc.deadline_s == 60);
    ck_assert_uint_eq(sc.seed, 1);
    ck_assert_str_eq(sc.faults, "");
    ck_assert(!sc.zero_copy);
    ck_assert(sc.ownership); /* the sanitizer is on unless a scenario says otherwise */
    ck_assert_int_eq(sc.nops, 2);
    for (int r = 0; r < RG_MAX_RANKS; r++)
        ck_assert_int_eq(sc.expect[r], RG_SC_EXPECT_OK);

    const rg_sc_op *op = &sc.ops[0];
    ck_assert_int_eq(op->kind, RG_SC_ALL_REDUCE);
    ck_assert_int_eq(op->dtype, RG_FLOAT32);
    ck_assert_int_eq(op->redop, RG_SUM);
    ck_assert_uint_eq(op->count, 1);
    ck_assert_int_eq(op->root, 0);
    ck_assert_int_eq(op->from, -1);
    ck_assert_int_eq(op->to, -1);
    ck_assert_int_eq(op->repeat, 1);
    ck_assert(!op->inplace);
    ck_assert_int_eq(op->line, 3);

    op = &sc.ops[1];
    ck_assert_int_eq(op->kind, RG_SC_SENDRECV);
    ck_assert_int_eq(op->dtype, RG_FLOAT32);
    ck_assert_uint_eq(op->count, 1);
    ck_assert_int_eq(op->from, 1);
    ck_assert_int_eq(op->to, 0);
    ck_assert_int_eq(op->line, 4);

    /* The entries for the ranks a scenario does not have stay ok too. */
    parse_ok("expect: {all: detected}\nranks: 3\nprogram: [{op: barrier}]\n", &sc);
    ck_assert_int_eq(sc.expect[2], RG_SC_EXPECT_DETECTED);
    ck_assert_int_eq(sc.expect[3], RG_SC_EXPECT_OK);
}
END_TEST

static const struct {
    const char *step;
    rg_sc_kind kind;
} op_cases[] = {
    {"{op: all_reduce, dtype: int16, count: 3, redop: min, repeat: 2, inplace: true}",
     RG_SC_ALL_REDUCE},
    {"{op: all_reduce, dtype: bfloat16, count: 3, redop: prod, repeat: 2, values: rounding}",
     RG_SC_ALL_REDUCE},
    {"{op: reduce_scatter, dtype: float16, count: 3, redop: max, repeat: 2, values: special}",
     RG_SC_REDUCE_SCATTER},
    {"{op: all_gather, dtype: uint16, count: 3, repeat: 2, inplace: true}", RG_SC_ALL_GATHER},
    {"{op: reduce_scatter, dtype: int64, count: 3, redop: prod, repeat: 2, inplace: true}",
     RG_SC_REDUCE_SCATTER},
    {"{op: broadcast, dtype: float16, count: 3, root: 2, repeat: 2}", RG_SC_BROADCAST},
    {"{op: sendrecv, dtype: float64, count: 3, from: 2, to: 1, repeat: 2}", RG_SC_SENDRECV},
    {"{op: barrier, repeat: 2}", RG_SC_BARRIER},
    {"{op: destroy}", RG_SC_DESTROY},
    {"{op: create}", RG_SC_CREATE},
};

/* Each op alone with every key it takes (create after a destroy, as it must come). */
START_TEST(test_every_op)
{
    char text[512];
    rg_scenario sc;
    rg_sc_kind k = op_cases[_i].kind;

    snprintf(text, sizeof(text), "ranks: 3\nprogram:\n  - %s\n  - %s\n",
             k == RG_SC_CREATE ? "{op: destroy}" : "{op: barrier}", op_cases[_i].step);
    parse_ok(text, &sc);
    check_invariants(&sc);
    ck_assert_int_eq(sc.nops, 2);
    ck_assert_int_eq(sc.ops[1].kind, k);
    ck_assert_int_eq(sc.ops[1].line, 4);
    ck_assert_int_eq(sc.ops[1].repeat, k == RG_SC_CREATE || k == RG_SC_DESTROY ? 1 : 2);
    /* The step names its op first: "{op: NAME, ..." or "{op: NAME}". */
    char name[32];
    ck_assert_int_eq(sscanf(op_cases[_i].step, "{op: %31[a-z_]", name), 1);
    ck_assert_str_eq(rg_sc_kind_name(k), name);
}
END_TEST

START_TEST(test_every_op_details)
{
    rg_scenario sc;

    parse_ok("ranks: 3\nprogram:\n"
             "  - {op: all_reduce, dtype: int16, count: 3, redop: min, repeat: 2, inplace: true}\n"
             "  - {op: all_gather, dtype: uint16, count: 4, repeat: 3, inplace: true}\n"
             "  - {op: reduce_scatter, dtype: int64, count: 5, redop: prod, inplace: true}\n"
             "  - {op: broadcast, dtype: float16, count: 6, root: 2, repeat: 4}\n"
             "  - {op: sendrecv, dtype: float64, count: 7, from: 2, to: 1, repeat: 5}\n"
             "  - {op: barrier, repeat: 6}\n"
             "  - {op: destroy}\n"
             "  - {op: create}\n"
             "  - {op: barrier}\n",
             &sc);
    check_invariants(&sc);
    ck_assert_int_eq(sc.nops, 9);
    static const rg_sc_kind kinds[] = {RG_SC_ALL_REDUCE, RG_SC_ALL_GATHER, RG_SC_REDUCE_SCATTER,
                                       RG_SC_BROADCAST,  RG_SC_SENDRECV,   RG_SC_BARRIER,
                                       RG_SC_DESTROY,    RG_SC_CREATE,     RG_SC_BARRIER};
    for (int i = 0; i < 9; i++) {
        ck_assert_int_eq(sc.ops[i].kind, kinds[i]);
        ck_assert_int_eq(sc.ops[i].line, 3 + i);
    }
    ck_assert_int_eq(sc.ops[0].dtype, RG_INT16);
    ck_assert_int_eq(sc.ops[0].redop, RG_MIN);
    ck_assert_int_eq(sc.ops[0].repeat, 2);
    ck_assert(sc.ops[0].inplace);
    ck_assert_int_eq(sc.ops[1].dtype, RG_UINT16);
    ck_assert_uint_eq(sc.ops[1].count, 4);
    ck_assert(sc.ops[1].inplace);
    ck_assert_int_eq(sc.ops[2].redop, RG_PROD);
    ck_assert_int_eq(sc.ops[3].dtype, RG_FLOAT16);
    ck_assert_int_eq(sc.ops[3].root, 2);
    ck_assert_int_eq(sc.ops[3].repeat, 4);
    ck_assert_int_eq(sc.ops[4].dtype, RG_FLOAT64);
    ck_assert_int_eq(sc.ops[4].from, 2);
    ck_assert_int_eq(sc.ops[4].to, 1);
    ck_assert_int_eq(sc.ops[4].repeat, 5);
    ck_assert_int_eq(sc.ops[5].repeat, 6);
    ck_assert_int_eq(sc.ops[8].repeat, 1);
}
END_TEST

START_TEST(test_names)
{
    static const char *const kinds[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                        "sendrecv",   "barrier",    "create",         "destroy"};
    ck_assert_int_eq(sizeof(kinds) / sizeof(kinds[0]), RG_SC_KIND_COUNT);
    for (int k = 0; k < RG_SC_KIND_COUNT; k++)
        ck_assert_str_eq(rg_sc_kind_name((rg_sc_kind)k), kinds[k]);
    ck_assert_str_eq(rg_sc_kind_name(RG_SC_KIND_COUNT), "?");
    ck_assert_str_eq(rg_sc_kind_name((rg_sc_kind)-1), "?");
    ck_assert_str_eq(rg_sc_expect_name(RG_SC_EXPECT_OK), "ok");
    ck_assert_str_eq(rg_sc_expect_name(RG_SC_EXPECT_DETECTED), "detected");
    ck_assert_str_eq(rg_sc_expect_name(RG_SC_EXPECT_ANY), "any");
    ck_assert_str_eq(rg_sc_expect_name(RG_SC_EXPECT_KILLED), "killed");
    ck_assert_str_eq(rg_sc_expect_name(RG_SC_EXPECT_OK_OR_DETECTED), "ok|detected");
    ck_assert_str_eq(rg_sc_expect_name((rg_sc_expect)5), "?");
    ck_assert_str_eq(rg_sc_expect_name((rg_sc_expect)-1), "?");
}
END_TEST

static const char *const dtype_names[RG_DTYPE_COUNT] = {
    "bool",  "int8",   "uint8",   "int16",    "uint16",  "int32",   "uint32",
    "int64", "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
};
static const char *const redop_names[RG_REDOP_COUNT] = {"sum", "prod", "max", "min"};

/* Every dtype with every reduction: accepted exactly where the transport defines them. */
START_TEST(test_every_dtype_redop)
{
    char text[256];
    rg_scenario sc;
    static const rg_dtype dts[RG_DTYPE_COUNT] = {
        RG_BOOL,  RG_INT8,   RG_UINT8,   RG_INT16,    RG_UINT16,  RG_INT32,   RG_UINT32,
        RG_INT64, RG_UINT64, RG_FLOAT16, RG_BFLOAT16, RG_FLOAT32, RG_FLOAT64, RG_COMPLEX64};

    for (int d = 0; d < RG_DTYPE_COUNT; d++) {
        for (int o = 0; o < RG_REDOP_COUNT; o++) {
            snprintf(text, sizeof(text),
                     "ranks: 2\nprogram:\n  - {op: reduce_scatter, dtype: %s, redop: %s}\n",
                     dtype_names[d], redop_names[o]);
            if (dts[d] == RG_COMPLEX64 && (o == RG_MAX || o == RG_MIN)) {
                char want[96];
                snprintf(want, sizeof(want), "x.yaml:3: complex64 cannot reduce with '%s'",
                         redop_names[o]);
                expect_bad(text, want);
                continue;
            }
            parse_ok(text, &sc);
            ck_assert_int_eq(sc.ops[0].dtype, dts[d]);
            ck_assert_int_eq(sc.ops[0].redop, (rg_redop)o);
        }
        /* Without a reduction any dtype goes, complex64 included. */
        snprintf(text, sizeof(text), "ranks: 2\nprogram:\n  - {op: broadcast, dtype: %s}\n",
                 dtype_names[d]);
        parse_ok(text, &sc);
        ck_assert_int_eq(sc.ops[0].dtype, dts[d]);
    }
}
END_TEST

START_TEST(test_expect)
{
    rg_scenario sc;

    /* Per rank wins over all wherever it stands. */
    parse_ok("ranks: 4\nprogram: [{op: barrier}]\nexpect:\n  2: ok\n  0: detected\n  all: any\n",
             &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_DETECTED);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_ANY);
    ck_assert_int_eq(sc.expect[2], RG_SC_EXPECT_OK);
    ck_assert_int_eq(sc.expect[3], RG_SC_EXPECT_ANY);

    parse_ok("ranks: 3\nprogram: [{op: barrier}]\nexpect: {1: any}\n", &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_OK);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_ANY);
    ck_assert_int_eq(sc.expect[2], RG_SC_EXPECT_OK);

    /* A quoted rank is the same key. */
    parse_ok("ranks: 2\nprogram: [{op: barrier}]\nexpect: {\"1\": detected, all: any}\n", &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_ANY);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_DETECTED);

    /* The victim of a kill or stop fault; it takes no place (it is not the transport's error). */
    parse_ok("ranks: 3\nprogram: [{op: barrier}]\nexpect: {2: killed, all: detected}\n", &sc);
    ck_assert_int_eq(sc.expect[2], RG_SC_EXPECT_KILLED);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_DETECTED);

    parse_ok("ranks: 64\nprogram: [{op: barrier}]\nexpect: {63: detected}\n", &sc);
    ck_assert_int_eq(sc.expect[63], RG_SC_EXPECT_DETECTED);
    ck_assert_int_eq(sc.expect[62], RG_SC_EXPECT_OK);

    parse_ok("ranks: 2\nprogram: [{op: barrier}]\nexpect: {}\n", &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_OK);
}
END_TEST

/* ranks may come last: the values that depend on it are still checked against it. */
START_TEST(test_ranks_after_program)
{
    static const char text[] = "program:\n"                           /* 1 */
                               "  - {op: broadcast, root: 3}\n"       /* 2 */
                               "  - {op: sendrecv, from: 3, to: 2}\n" /* 3 */
                               "expect:\n"                            /* 4 */
                               "  3: detected\n"                      /* 5 */
                               "ranks: %d\n";                         /* 6 */
    char buf[256];
    rg_scenario sc;

    snprintf(buf, sizeof(buf), text, 4);
    parse_ok(buf, &sc);
    ck_assert_int_eq(sc.ranks, 4);
    ck_assert_int_eq(sc.ops[0].root, 3);
    ck_assert_int_eq(sc.ops[1].from, 3);
    ck_assert_int_eq(sc.expect[3], RG_SC_EXPECT_DETECTED);

    snprintf(buf, sizeof(buf), text, 3);
    expect_bad(buf, "x.yaml:2: root must be 0..2 '3'");
    snprintf(buf, sizeof(buf), text, 70);
    expect_bad(buf, "x.yaml:6: ranks must be 2..64 '70'");

    expect_bad("expect: {2: ok}\nprogram: [{op: barrier}]\nranks: 2\n",
               "x.yaml:1: expect rank must be 0..1 '2'");
    expect_bad("program: [{op: sendrecv, from: 0, to: 2}]\nranks: 2\n",
               "x.yaml:1: to must be 0..1 '2'");
}
END_TEST

START_TEST(test_limits_accepted)
{
    rg_scenario sc;

    parse_ok("ranks: 64\nrails: 4\ntimeout: 3600\ndeadline: 86400\n"
             "seed: 18446744073709551615\n"
             "program:\n  - {op: all_gather, count: 67108864, repeat: 100000}\n"
             "  - {op: broadcast, root: 63}\n  - {op: sendrecv, from: 63, to: 0}\n",
             &sc);
    check_invariants(&sc);
    ck_assert_int_eq(sc.ranks, 64);
    ck_assert_int_eq(sc.rails, 4);
    ck_assert(sc.timeout_s == 3600);
    ck_assert(sc.deadline_s == 86400);
    ck_assert_uint_eq(sc.seed, UINT64_MAX);
    ck_assert_uint_eq(sc.ops[0].count, RG_SC_COUNT_MAX);
    ck_assert_int_eq(sc.ops[0].repeat, 100000);
    ck_assert_int_eq(sc.ops[1].root, 63);

    parse_ok("ranks: 2\nseed: 0xFFFFFFFFFFFFFFFF\nprogram: [{op: barrier}]\n", &sc);
    ck_assert_uint_eq(sc.seed, UINT64_MAX);
    parse_ok("ranks: 2\nseed: 0\nprogram: [{op: barrier}]\n", &sc);
    ck_assert_uint_eq(sc.seed, 0);
    parse_ok("ranks: 2\nseed: 0x0\nprogram: [{op: barrier}]\n", &sc);
    ck_assert_uint_eq(sc.seed, 0);

    /* Fractions; the deadline only has to be later than the timeout. Seconds are read by the
     * parser the command line and the environment use too: no exponents. */
    parse_ok("ranks: 2\ntimeout: .25\ndeadline: 0.5\nprogram: [{op: barrier}]\n", &sc);
    ck_assert(sc.timeout_s == 0.25);
    ck_assert(sc.deadline_s == 0.5);
    parse_ok("ranks: 2\ntimeout: 10.\ndeadline: 150\nprogram: [{op: barrier}]\n", &sc);
    ck_assert(sc.timeout_s == 10);
    ck_assert(sc.deadline_s == 150);
    parse_ok("ranks: 2\ntimeout: 59.99\nprogram: [{op: barrier}]\n", &sc);
    ck_assert(sc.timeout_s == 59.99);

    /* Exactly RG_SC_OPS_MAX steps. */
    size_t cap = 64 + RG_SC_OPS_MAX * 20, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, cap, "ranks: 2\nprogram:\n");
    for (int i = 0; i < RG_SC_OPS_MAX; i++)
        len += (size_t)snprintf(text + len, cap - len, "  - op: barrier\n");
    ck_assert_uint_lt(len, cap - 1);
    parse_ok(text, &sc);
    ck_assert_int_eq(sc.nops, RG_SC_OPS_MAX);
    ck_assert_int_eq(sc.ops[RG_SC_OPS_MAX - 1].line, 2 + RG_SC_OPS_MAX);

    /* One more is refused at its line. */
    snprintf(text + len, cap - len, "  - op: barrier\n");
    char want[64];
    snprintf(want, sizeof(want), "x.yaml:%d: program of more than %d steps", 3 + RG_SC_OPS_MAX,
             RG_SC_OPS_MAX);
    expect_bad(text, want);
    free(text);
}
END_TEST

/* Written and read back, a scenario is the same scenario: the sweep's point files rely on it. */
START_TEST(test_write_round_trip)
{
    static rg_scenario a, b;
    char *buf = NULL;
    size_t len = 0;
    parse_ok(full_text, &a);
    /* A rule with a quote, a backslash-free "#" and an optional flag survives too. */
    snprintf(a.fault[1].rule, sizeof(a.fault[1].rule), "error qp=#2 nth=4");
    a.fault[1].optional = true;
    /* A step's values survive (the first step is an all_reduce). */
    ck_assert_int_eq(a.ops[0].kind, RG_SC_ALL_REDUCE);
    a.ops[0].dtype = RG_BFLOAT16;
    a.ops[0].values = RG_VALUES_ROUNDING;
    a.ownership = false; /* and a scenario that turned the sanitizer off */
    a.trace = true;      /* ... and the verbs trace on */
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rg_scenario_write(f, &a, "a comment"), 0);
    fclose(f);
    parse_ok(buf, &b);
    ck_assert_str_eq(b.name, a.name);
    ck_assert_int_eq(b.ranks, a.ranks);
    ck_assert_int_eq(b.rails, a.rails);
    ck_assert_int_eq(b.qp, a.qp);
    ck_assert_int_eq(b.algo, a.algo);
    ck_assert(b.timeout_s == a.timeout_s && b.deadline_s == a.deadline_s);
    ck_assert_uint_eq(b.seed, a.seed);
    ck_assert_int_eq(b.zero_copy, a.zero_copy);
    ck_assert_int_eq(b.ownership, a.ownership);
    ck_assert_int_eq(b.trace, a.trace);
    ck_assert_int_eq(b.nfaults, a.nfaults);
    for (int i = 0; i < a.nfaults; i++) {
        ck_assert_str_eq(b.fault[i].rule, a.fault[i].rule);
        ck_assert_int_eq(b.fault[i].optional, a.fault[i].optional);
    }
    ck_assert_int_eq(b.nops, a.nops);
    for (int i = 0; i < a.nops; i++) {
        const rg_sc_op *x = &a.ops[i], *y = &b.ops[i];
        ck_assert_int_eq(y->kind, x->kind);
        ck_assert_int_eq(y->dtype, x->dtype);
        ck_assert_int_eq(y->redop, x->redop);
        ck_assert_uint_eq(y->count, x->count);
        ck_assert_int_eq(y->root, x->root);
        ck_assert_int_eq(y->from, x->from);
        ck_assert_int_eq(y->to, x->to);
        ck_assert_int_eq(y->repeat, x->repeat);
        ck_assert_int_eq(y->inplace, x->inplace);
        ck_assert_int_eq(y->values, x->values);
    }
    for (int r = 0; r < a.ranks; r++) {
        ck_assert_int_eq(b.expect[r], a.expect[r]);
        ck_assert_int_eq(b.expect_at[r], a.expect_at[r]);
    }
    ck_assert_ptr_nonnull(strstr(buf, "# a comment\n"));
    free(buf);
}
END_TEST

/*
 * The transport's shape: an unstated qp becomes rc on a transport without uc, "rails: up to N"
 * the declared maximum when that is fewer; what a file states is kept; the note says what
 * changed; a written copy keeps the shape as the file had it; "up to" is refused where it
 * cannot hold.
 */
START_TEST(test_fit)
{
    static rg_scenario a, b;
    const uint32_t uc = RG_BIT(RG_QPT_UC), rc = RG_BIT(RG_QPT_RC);
    parse_ok("ranks: 2\nrails: up to 2\nprogram:\n  - {op: barrier}\n", &a);
    ck_assert(a.qp_fit && a.rails_fit);
    ck_assert_int_eq(a.rails, 2);
    ck_assert_int_eq(a.qp, RG_QPT_UC);
    b = a; /* a transport with both, and rails enough: nothing changes */
    ck_assert_int_eq(rg_sc_fit(&b, uc | rc, 4), 0);
    ck_assert_int_eq(b.qp, RG_QPT_UC);
    ck_assert_int_eq(b.rails, 2);
    ck_assert_str_eq(b.fit_note, "");
    b = a; /* RC only, one rail: both fitted */
    ck_assert_int_eq(rg_sc_fit(&b, rc, 1), 1);
    ck_assert_int_eq(b.qp, RG_QPT_RC);
    ck_assert_int_eq(b.rails, 1);
    ck_assert_str_eq(b.fit_note, "ran as rc on 1 rail (up to 2 asked)");
    ck_assert_int_eq(rg_sc_fit(&b, rc, 1), 0); /* fitted twice is fitted once */
    ck_assert_int_eq(b.qp, RG_QPT_RC);
    /* Its written copy says the shape as the file did: "up to 2", no qp. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rg_scenario_write(f, &b, NULL), 0);
    fclose(f);
    ck_assert_msg(strstr(buf, "rails: up to 2\n") && !strstr(buf, "qp:"), "%s", buf);
    static rg_scenario c;
    parse_ok(buf, &c);
    ck_assert(c.qp_fit && c.rails_fit && c.rails == 2 && c.qp == RG_QPT_UC);
    free(buf);
    b = a; /* UC only, 3 rails: the qp stays, rails stay 2 */
    ck_assert_int_eq(rg_sc_fit(&b, uc, 3), 0);
    b = a; /* a transport that declares neither: nothing to fit to, the runner skips it */
    ck_assert_int_eq(rg_sc_fit(&b, 0, 1), 1);
    ck_assert_int_eq(b.qp, RG_QPT_UC);
    ck_assert_str_eq(b.fit_note, "ran on 1 rail (up to 2 asked)");
    /* Stated: kept, whatever the transport. */
    parse_ok("ranks: 2\nrails: 2\nqp: uc\nprogram:\n  - {op: barrier}\n", &a);
    ck_assert(!a.qp_fit && !a.rails_fit);
    b = a;
    ck_assert_int_eq(rg_sc_fit(&b, rc, 1), 0);
    ck_assert_int_eq(b.qp, RG_QPT_UC);
    ck_assert_int_eq(b.rails, 2);
    /* A later "rails: N" is not possible (duplicate keys are refused), and bad forms are. */
    expect_bad("ranks: 2\nrails: up to 5\nprogram:\n  - {op: barrier}\n",
               "x.yaml:2: rails must be 1..4 or \"up to\" 1..4 'up to 5'");
    expect_bad("ranks: 2\nrails: up to two\nprogram:\n  - {op: barrier}\n",
               "x.yaml:2: rails must be 1..4 or \"up to\" 1..4 'up to two'");
    expect_bad("ranks: 2\nrails: up to 2\nfaults:\n  - link_down rank=1 rail=1 step=0\n"
               "program:\n  - {op: barrier}\n",
               "x.yaml:4: faults item 1: rail=1 needs its rails stated (rails: 2), not \"up "
               "to\"");
}
END_TEST

/* known: a failure verdict per rank (all, then ranks named over it) and why. */
START_TEST(test_known)
{
    static rg_scenario a;
    static const char text[] =
        "ranks: 3\nprogram: [{op: barrier}]\n"
        "known: {why: 'mlx#9999: hangs', all: ERROR_SWALLOWED, 1: DEADLOCK}\n";
    parse_ok(text, &a);
    ck_assert_str_eq(a.known_why, "mlx#9999: hangs");
    ck_assert_int_eq(a.known[0], RG_V_ERROR_SWALLOWED);
    ck_assert_int_eq(a.known[1], RG_V_DEADLOCK);
    ck_assert_int_eq(a.known[2], RG_V_ERROR_SWALLOWED);
    parse_ok("ranks: 2\nprogram: [{op: barrier}]\n", &a);
    ck_assert_int_eq(a.known[0], 0); /* none */
    ck_assert_str_eq(a.known_why, "");
}
END_TEST

/*
 * A transport's known-failures file: entries replace the named scenarios' own, are checked
 * against each one's ranks, and one naming a scenario not in the run is a note; a bad entry or
 * a file for another transport is one line naming the file and line.
 */
START_TEST(test_known_file)
{
    static rg_scenario a, b;
    parse_ok("name: three\nranks: 3\nprogram: [{op: barrier}]\n"
             "known: {why: 'its own', all: DEADLOCK}\n",
             &a);
    parse_ok("name: two\nranks: 2\nprogram: [{op: barrier}]\n", &b);
    rg_scenario *scs[] = {&a, &b};
    char path[PATH_MAX], notes[512], err[512];
    static const char good[] = "# jaccl's\ntransport: jaccl\nknown:\n"
                               "  three:\n    why: 'mlx#4193: ring all_gather'\n"
                               "    all: SILENT_CORRUPTION\n    2: DEADLOCK\n"
                               "  gone:\n    why: x\n    all: CRASH\n"
                               "  two: {why: y, 1: ERROR_SWALLOWED}\n";
    rg_check_write_temp(path, good, strlen(good));
    ck_assert_int_eq(rg_known_load(path, "jaccl", scs, 2, notes, sizeof(notes), err, sizeof(err)),
                     0);
    ck_assert_str_eq(a.known_why, "mlx#4193: ring all_gather");
    ck_assert_int_eq(a.known[0], RG_V_SILENT_CORRUPTION);
    ck_assert_int_eq(a.known[2], RG_V_DEADLOCK);
    ck_assert_int_eq(b.known[0], 0);
    ck_assert_int_eq(b.known[1], RG_V_ERROR_SWALLOWED);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof(want), "%s:8: no scenario 'gone' in this run\n", path);
    ck_assert_str_eq(notes, want);
    /* Another transport's file. */
    ck_assert_int_eq(
        rg_known_load(path, "railguard", scs, 2, notes, sizeof(notes), err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s:2: transport: the run's is 'railguard', the file's 'jaccl'",
             path);
    ck_assert_str_eq(err, want);
    /* A rank the scenario does not have; a verdict that is no failure; no known key. */
    static const char *const bad[][2] = {
        {"known:\n  two: {why: z, 2: CRASH}\n", ":2: known: a key is why, all or a rank 0..1"},
        {"known:\n  two: {why: z, all: ok}\n", ":2: known: a failure verdict"},
        {"transport: jaccl\n", ":1: missing key 'known'"},
        {"known: [a, b]\n", ":1: known must map scenario names"},
        {"knwon: {}\n", ":1: unknown or repeated key (transport, known, signatures)"},
        {"transport: a\ntransport: b\nknown: {}\n",
         ":2: unknown or repeated key (transport, known, signatures) 'transport'"},
        /* Signatures: each field checked as the judge compares it. */
        {"signatures: {why: x}\n", ":1: signatures must be a list"},
        {"signatures:\n  - {first: DEADLOCK}\n", ":2: a signature needs why, and first or cause"},
        {"signatures:\n  - {why: x}\n", ":2: a signature needs why, and first or cause"},
        {"signatures:\n  - {why: x, cause: uc-drop}\n",
         ":2: cause must be error-ignored, buffer-reused, uc-send-without-receive, "
         "wait-never-sent or wait-without-deadline, not 'uc-drop'"},
        {"signatures:\n  - {why: x, cause: wait-never-sent, first: hung}\n",
         ":2: first must be a verdict (not unsupported), not 'hung'"},
        /* Entries that could never match: a cause proven only for another first failure, a
         * trace's cause where a fault fired. */
        {"signatures:\n  - {why: x, cause: error-ignored, first: DEADLOCK}\n",
         ":2: cause error-ignored is proven only for first ERROR_SWALLOWED, not 'DEADLOCK'"},
        {"signatures:\n  - {why: x, cause: wait-without-deadline, first: LEAK}\n",
         ":2: cause wait-without-deadline is proven only for first DEADLOCK, not 'LEAK'"},
        {"signatures:\n  - {why: x, cause: uc-send-without-receive, faults: error}\n",
         ":2: cause uc-send-without-receive is proven only where no fault fired, not 'error'"},
        {"signatures:\n  - {why: x, first: hung}\n",
         ":2: first must be a verdict (not unsupported), not 'hung'"},
        {"signatures:\n  - {why: x, first: unsupported}\n",
         ":2: first must be a verdict (not unsupported), not 'unsupported'"},
        {"signatures:\n  - {why: x, first: DEADLOCK, class: timout}\n",
         ":2: class must be a status class, v1 or empty, not 'timout'"},
        {"signatures:\n  - {why: x, first: DEADLOCK, others: DEADLOCK+hung}\n",
         ":2: others: 'hung' is no verdict in 'DEADLOCK+hung'"},
        {"signatures:\n  - {why: x, first: DEADLOCK, frames: [a, b, c, d, e]}\n",
         ":2: frames: at most 4 entries; one too many 'e'"},
        {"signatures:\n  - {why: x, first: DEADLOCK, colour: red}\n", ":2: unknown key 'colour'"},
        {"signatures:\n  - {why: \"two\\nlines\", first: DEADLOCK}\n", ":2: why must be one line"},
        {"signatures:\n  - {why: x, first: DEADLOCK, op: ''}\n", ":2: op must be 1..47 characters"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rg_check_write_temp(path, bad[i][0], strlen(bad[i][0]));
        ck_assert_int_eq(rg_known_load(path, NULL, scs, 2, notes, sizeof(notes), err, sizeof(err)),
                         -1);
        ck_assert_msg(!strncmp(err, path, strlen(path)) && strstr(err, bad[i][1]), "case %zu: '%s'",
                      i, err);
    }
    /* Signatures alone make a file; every scenario of the run takes them, fields as named. */
    static const char sigs[] = "signatures:\n"
                               "  - why: one rank waits forever\n"
                               "    first: DEADLOCK\n"
                               "    class: timeout\n"
                               "    others: ''\n"
                               "    frames: [b, a]\n"
                               "    rate: 2 of 5\n"
                               "    seen: [one]\n"
                               "  - {why: wrong sums, first: SILENT_CORRUPTION, op: all_reduce}\n";
    rg_check_write_temp(path, sigs, strlen(sigs));
    ck_assert_msg(rg_known_load(path, NULL, scs, 2, notes, sizeof(notes), err, sizeof(err)) == 0,
                  "%s", err);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(scs[i]->nksig, 2);
        const rg_sc_ksig *k = &scs[i]->ksig[0];
        ck_assert_str_eq(k->why, "one rank waits forever");
        ck_assert_str_eq(k->sig.first, "DEADLOCK");
        ck_assert_uint_eq(k->has, RG_SIG_HAS_CLS | RG_SIG_HAS_OTHERS | RG_SIG_HAS_FRAMES);
        ck_assert_int_eq(k->sig.nframes, 2);
        ck_assert_str_eq(k->sig.frames[1], "a");
        ck_assert_str_eq(k->rate, "2 of 5");
        ck_assert_int_eq(k->nseen, 1);
        ck_assert_int_eq(k->line, 2);
        ck_assert_uint_eq(scs[i]->ksig[1].has, RG_SIG_HAS_OP);
        ck_assert_int_eq(scs[i]->ksig[1].line, 9);
    }
    /* An entry by cause needs no first: a race's one bug shows as any verdict. */
    static const char by_cause[] =
        "signatures:\n"
        "  - {why: drops, cause: uc-send-without-receive, seen: [a]}\n"
        "  - {why: hangs, cause: wait-without-deadline, op: barrier}\n"
        "  - {why: y, cause: wait-never-sent, first: LEAK, faults: ''}\n";
    rg_check_write_temp(path, by_cause, strlen(by_cause));
    ck_assert_msg(rg_known_load(path, NULL, scs, 2, notes, sizeof(notes), err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_int_eq(scs[1]->nksig, 3);
    ck_assert_int_eq(scs[1]->ksig[0].cause, RG_C_UC_NO_RECV);
    ck_assert_str_eq(scs[1]->ksig[0].sig.first, "");
    ck_assert_uint_eq(scs[1]->ksig[0].has, 0);
    ck_assert_int_eq(scs[1]->ksig[1].cause, RG_C_NO_DEADLINE);
    ck_assert_uint_eq(scs[1]->ksig[1].has, RG_SIG_HAS_OP);
    ck_assert_int_eq(scs[1]->ksig[1].line, 3);
    /* The first rank to miss its expectation may have ended ok (a detection was expected),
     * and triage writes what it saw; a name that is no scenario name still reads, quoted. */
    static const char ok_first[] = "signatures:\n  - {why: y, first: ok, seen: [\"a, b: c\"]}\n";
    rg_check_write_temp(path, ok_first, strlen(ok_first));
    ck_assert_msg(rg_known_load(path, NULL, scs, 2, notes, sizeof(notes), err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_str_eq(scs[0]->ksig[0].sig.first, "ok");
    ck_assert_str_eq(scs[0]->ksig[0].seen[0], "a, b: c");
    /* RG_SC_KSIG_MAX signatures read (upstream JACCL's triage has 21 groups); one more is
     * refused at its line. */
    static char many[(RG_SC_KSIG_MAX + 1) * 48 + 16];
    size_t at = (size_t)snprintf(many, sizeof(many), "signatures:\n");
    for (int i = 0; i <= RG_SC_KSIG_MAX; i++)
        at +=
            (size_t)snprintf(many + at, sizeof(many) - at, "  - {why: bug %d, first: CRASH}\n", i);
    char *last = strrchr(many, '-') - 2;
    rg_check_write_temp(path, many, (size_t)(last - many));
    ck_assert_msg(rg_known_load(path, NULL, scs, 2, notes, sizeof(notes), err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_int_eq(scs[0]->nksig, RG_SC_KSIG_MAX);
    ck_assert_int_ge(RG_SC_KSIG_MAX, 32);
    rg_check_write_temp(path, many, strlen(many));
    ck_assert_int_eq(rg_known_load(path, NULL, scs, 2, notes, sizeof(notes), err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s:%d: signatures: at most %d; one too many", path,
             RG_SC_KSIG_MAX + 2, RG_SC_KSIG_MAX);
    ck_assert_msg(strstr(err, want) == err, "%s", err);
    ck_assert_int_eq(
        rg_known_load("/nonexistent/k.yaml", NULL, scs, 2, notes, sizeof(notes), err, sizeof(err)),
        -1);
    ck_assert_str_eq(err, "/nonexistent/k.yaml: cannot open: No such file or directory");
}
END_TEST

/*
 * One default for every rank `expect` does not name, exec or program alike, faults before or
 * after it in the file: ok when every fault must be ridden out, any when some fault may be
 * reported (a client that reports its server's hang is right, not the failure).
 */
START_TEST(test_expect_default)
{
    static rg_scenario sc;
    parse_ok("ranks: 2\nexec: {command: 'p'}\n", &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_OK);
    ck_assert_int_eq(rg_sc_expect_default(&sc), RG_SC_EXPECT_OK);
    parse_ok("ranks: 2\nexec: {command: 'p'}\nfaults: [error op=recv nth=2]\n", &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_ANY);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_ANY);
    /* expect before the faults that decide the default */
    parse_ok("ranks: 3\nexpect: {1: ok}\nprogram: [{op: barrier}]\nfaults: [kill rank=2 nth=1]\n",
             &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_ANY);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_OK);
    ck_assert_int_eq(sc.expect[2], RG_SC_EXPECT_ANY);
    ck_assert(!sc.expect_named[0] && sc.expect_named[1]);
    /* all: names every rank */
    parse_ok("ranks: 2\nexpect: {all: ok}\nprogram: [{op: barrier}]\nfaults: [lose nth=1]\n", &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_OK);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_OK);
    /* Faults a correct program rides out keep ok. */
    parse_ok("ranks: 2\nprogram: [{op: barrier}]\nfaults:\n  - delay ms=10 op=recv nth=1\n"
             "  - delay_first ms=10\n  - stall ms=10 nth=1\n  - late ms=10 op=send nth=1\n"
             "  - count\n",
             &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_OK);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_OK);
    static const char *const reported[] = {
        "error nth=1",   "negpoll nth=1", "lose nth=1", "nomem verb=reg_mr nth=1",
        "corrupt nth=1", "kill nth=1",    "stop nth=1", "exit nth=1"};
    for (size_t i = 0; i < sizeof(reported) / sizeof(reported[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text),
                 "ranks: 2\nprogram: [{op: barrier}]\nfaults:\n  - delay ms=1 nth=1\n  - %s\n",
                 reported[i]);
        parse_ok(text, &sc);
        ck_assert_msg(sc.expect[0] == RG_SC_EXPECT_ANY, "%s: expect %d", reported[i], sc.expect[0]);
    }
    /* The wire: RC rides out a lossy, reordering, duplicating or corrupting wire (it
     * retransmits); UC may report it; a link down may be reported on either. */
    parse_ok("ranks: 2\nqp: rc\nprogram: [{op: barrier}]\nfaults:\n"
             "  - wire loss=1% delay=5 jitter=1 reorder=10% duplicate=1% corrupt=1%\n",
             &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_OK);
    parse_ok("ranks: 2\nqp: uc\nprogram: [{op: barrier}]\nfaults: ['wire loss=1%']\n", &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_ANY);
    parse_ok("ranks: 2\nqp: rc\nprogram: [{op: barrier}]\nfaults: [link_down rail=0 up=100]\n",
             &sc);
    ck_assert_int_eq(sc.expect[1], RG_SC_EXPECT_ANY);
}
END_TEST

/* a written out by rg_scenario_write and read back into b. */
static void written_back(const rg_scenario *a, rg_scenario *b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rg_scenario_write(f, a, NULL), 0);
    fclose(f);
    parse_ok(buf, b);
    free(buf);
}

/* env: in file order, any scalar as its text, and the same again once written back. */
START_TEST(test_env)
{
    static rg_scenario a, b;
    parse_ok("ranks: 2\nenv:\n  RG_IB_TIMEOUT: 16\n  RG_CHUNK_BYTES: '64K'\n"
             "  MY_TOOL_OPTS: \"a 'b' \\\"c\\\" \\\\d\"\nprogram: [{op: barrier}]\n",
             &a);
    ck_assert_int_eq(a.nenv, 3);
    ck_assert_str_eq(a.env[0].name, "RG_IB_TIMEOUT");
    ck_assert_str_eq(a.env[0].value, "16");
    ck_assert_str_eq(a.env[1].value, "64K");
    ck_assert_str_eq(a.env[2].name, "MY_TOOL_OPTS");
    ck_assert_str_eq(a.env[2].value, "a 'b' \"c\" \\d");
    written_back(&a, &b);
    ck_assert_int_eq(b.nenv, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(b.env[i].name, a.env[i].name);
        ck_assert_str_eq(b.env[i].value, a.env[i].value);
    }
    parse_ok("ranks: 2\nprogram: [{op: barrier}]\n", &a);
    ck_assert_int_eq(a.nenv, 0);
}
END_TEST

/* exec: service: ranks that serve until stopped; refused where it cannot mean anything. */
START_TEST(test_exec_service)
{
    static rg_scenario a, b;
    parse_ok("ranks: 2\nexec:\n  server: 'srv -p {port}'\n  client: 'cli -p {port} {host}'\n"
             "  service: [0]\n",
             &a);
    ck_assert_uint_eq(a.exec.services, 1);
    ck_assert(a.exec.service_grace == 5);
    parse_ok("ranks: 3\nexec: {command: 'p', service: [2, 0], service_grace: 0.5}\n", &a);
    ck_assert_uint_eq(a.exec.services, 5);
    ck_assert(a.exec.service_grace == 0.5);
    written_back(&a, &b);
    ck_assert_uint_eq(b.exec.services, a.exec.services);
    ck_assert(b.exec.service_grace == a.exec.service_grace);
    expect_bad("ranks: 2\nexec: {command: 'p', service: [2]}\n",
               "x.yaml:2: exec: service: a rank is 0..1, not '2'");
    expect_bad("ranks: 2\nexec: {command: 'p', service: [0, 1]}\n",
               "x.yaml:2: exec: service: every rank a service leaves none to end the run: '[...]'");
    expect_bad("ranks: 2\nexec: {command: 'p', service: 0}\n",
               "x.yaml:2: exec: service is a list of ranks, [0] say, not '0'");
    expect_bad("ranks: 2\nexec: {command: 'p', service: [1, 1]}\n",
               "x.yaml:2: exec: service: rank named twice: '1'");
    expect_bad("ranks: 2\nexec: {command: 'p', service_grace: 3}\n",
               "x.yaml:2: exec: service_grace goes with service, not '3'");
}
END_TEST

/* exec: launcher: one command that starts every rank itself; written back. */
START_TEST(test_exec_launcher)
{
    static rg_scenario a, b;
    parse_ok("ranks: 2\nexec:\n  launcher: \"mpirun -np 2 -x 'A=b c' ./prog 20\"\n", &a);
    ck_assert(a.exec.on);
    ck_assert_str_eq(a.exec.launcher, "mpirun -np 2 -x 'A=b c' ./prog 20");
    ck_assert_str_eq(a.exec.command, "");
    written_back(&a, &b);
    ck_assert_str_eq(b.exec.launcher, a.exec.launcher);
    ck_assert_int_eq(b.ranks, 2);
}
END_TEST

/* exclusive: a resource no two scenarios hold at once under -j; written back. */
START_TEST(test_exclusive)
{
    static rg_scenario a, b;
    parse_ok("ranks: 2\nexclusive: udaddy-port-7174\nexec: {server: 's', client: 'c', "
             "client_after: 1}\n",
             &a);
    ck_assert_str_eq(a.exclusive, "udaddy-port-7174");
    written_back(&a, &b);
    ck_assert_str_eq(b.exclusive, "udaddy-port-7174");
    parse_ok("ranks: 2\nprogram: [{op: barrier}]\n", &a);
    ck_assert_str_eq(a.exclusive, "");
    written_back(&a, &b);
    ck_assert_str_eq(b.exclusive, "");
    expect_bad("ranks: 2\nexclusive: 'a port'\nprogram: [{op: barrier}]\n",
               "x.yaml:2: exclusive must be 1..127 characters of [A-Za-z0-9._-] 'a port'");
    expect_bad("ranks: 2\nexclusive: [x]\nprogram: [{op: barrier}]\n",
               "x.yaml:2: exclusive must be 1..127 characters of [A-Za-z0-9._-] '[...]'");
}
END_TEST

/* each_site: a sweep's points instead of one run. Never written back: the sweep's counting run
 * and its points are written from the scenario, and one that still said each_site would start
 * a sweep of its own from inside the sweep. */
START_TEST(test_each_site)
{
    static rg_scenario a, b;
    parse_ok("ranks: 2\neach_site: error\nprogram: [{op: barrier}]\n", &a);
    ck_assert_int_eq(a.each_site, RG_SC_EACH_ERROR);
    ck_assert_int_eq(a.each_site_line, 2);
    written_back(&a, &b);
    ck_assert_int_eq(b.each_site, RG_SC_EACH_NONE);
    parse_ok("ranks: 2\neach_site: negpoll\nprogram: [{op: barrier}]\n", &a);
    ck_assert_int_eq(a.each_site, RG_SC_EACH_NEGPOLL);
    parse_ok("ranks: 2\nprogram: [{op: barrier}]\n", &a);
    ck_assert_int_eq(a.each_site, RG_SC_EACH_NONE);
    expect_bad("ranks: 2\neach_site: delay\nprogram: [{op: barrier}]\n",
               "x.yaml:2: each_site must be error or negpoll, not 'delay'");
    expect_bad("ranks: 2\neach_site: ''\nprogram: [{op: barrier}]\n",
               "x.yaml:2: each_site must be error or negpoll, not ''");
    expect_bad("ranks: 2\neach_site: [error]\nprogram: [{op: barrier}]\n",
               "x.yaml:2: each_site must be error or negpoll, not '[...]'");
    expect_bad("ranks: 2\neach_site: error\nfaults: ['error rank=0 nth=1']\n"
               "program: [{op: barrier}]\n",
               "x.yaml:3: 'faults' cannot be given with each_site: it plans one fault at each "
               "call site and judges each point as a sweep does");
    expect_bad("ranks: 2\nprogram: [{op: barrier}]\nexpect: {all: ok}\neach_site: negpoll\n",
               "x.yaml:3: 'expect' cannot be given with each_site: it plans one fault at each "
               "call site and judges each point as a sweep does");
}
END_TEST

/* exec: a program instead of steps, one command or a server and a client; written back. */
START_TEST(test_exec)
{
    static rg_scenario a, b;
    static const char one[] = "ranks: 1\ndeadline: 9\nfaults: [error op=recv nth=2]\n"
                              "exec: {command: 'rg-fi-probe --msgs 3'}\n";
    parse_ok(one, &a);
    ck_assert(a.exec.on);
    ck_assert_int_eq(a.ranks, 1);
    ck_assert_int_eq(a.nops, 0);
    ck_assert_str_eq(a.exec.command, "rg-fi-probe --msgs 3");
    ck_assert_str_eq(a.exec.server, "");
    ck_assert(a.exec.client_after == -1);
    ck_assert(a.timeout_s == 9); /* no communicator: the deadline bounds SLOW_DETECTION */
    static const char two[] = "ranks: 2\nexec:\n  server: \"pp -p {port}\"\n"
                              "  client: \"pp -p {port} {host}\"\n  client_after: 0.5\n"
                              "expect: {1: detected}\n";
    parse_ok(two, &a);
    ck_assert_str_eq(a.exec.server, "pp -p {port}");
    ck_assert_str_eq(a.exec.client, "pp -p {port} {host}");
    ck_assert(a.exec.client_after == 0.5);
    ck_assert_int_eq(a.exec.line, 2); /* the key's line, not its value's */
    ck_assert_int_eq(a.expect[1], RG_SC_EXPECT_DETECTED);
    written_back(&a, &b);
    ck_assert(b.exec.on);
    ck_assert_str_eq(b.exec.server, a.exec.server);
    ck_assert_str_eq(b.exec.client, a.exec.client);
    ck_assert(b.exec.client_after == a.exec.client_after);
    ck_assert(b.deadline_s == a.deadline_s);
    ck_assert_int_eq(b.expect[1], a.expect[1]);
}
END_TEST

START_TEST(test_expect_at)
{
    rg_scenario sc;
    char buf[RG_SC_EXPECT_STR_MAX];
    parse_ok("ranks: 3\nprogram: [{op: barrier}, {op: barrier}]\n"
             "expect: {all: detected@init, 1: detected@1, 2: detected}\n",
             &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_DETECTED);
    ck_assert_int_eq(sc.expect_at[0], RG_SC_AT_INIT);
    ck_assert_int_eq(sc.expect_at[1], 1);
    ck_assert_int_eq(sc.expect_at[2], RG_SC_AT_ANY);
    ck_assert_str_eq(rg_sc_expect_str(sc.expect[0], sc.expect_at[0], 0, buf, sizeof(buf)),
                     "detected@init");
    ck_assert_str_eq(rg_sc_expect_str(sc.expect[1], sc.expect_at[1], 0, buf, sizeof(buf)),
                     "detected@1");
    ck_assert_str_eq(rg_sc_expect_str(RG_SC_EXPECT_ANY, RG_SC_AT_ANY, 0, buf, sizeof(buf)), "any");
    /* Every spelling reads back as itself; classes in the status table's order. */
    static const char *const forms[] = {"ok",
                                        "any",
                                        "detected",
                                        "detected@init",
                                        "detected@0",
                                        "detected@255",
                                        "killed",
                                        "detected:timeout",
                                        "detected@init:rail_mismatch",
                                        "detected@3:completion|poll|timeout|peer_abort",
                                        "ok|detected",
                                        "ok|detected@0:peer_abort",
                                        "ok|detected@init:timeout|peer_abort",
                                        "detected:invalid|nomem|nodev|config|verbs|side_channel|"
                                        "protocol|poisoned|unsupported"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        rg_sc_expect e;
        int at;
        uint32_t cls;
        ck_assert_int_eq(rg_sc_expect_parse(forms[i], strlen(forms[i]), &e, &at, &cls), 0);
        ck_assert_str_eq(rg_sc_expect_str(e, at, cls, buf, sizeof(buf)), forms[i]);
    }
}
END_TEST

/* Every known-failures file an adapter ships loads against the whole stock suite: a file
 * make check's gate reads would otherwise be found bad only in the guest. */
START_TEST(test_shipped_known_files_load)
{
    glob_t g, k;
    ck_assert_int_eq(glob("scenarios/*.yaml", 0, NULL, &g), 0);
    ck_assert_int_eq(glob("adapters/*/known-failures.yaml", 0, NULL, &k), 0);
    static rg_scenario sc[64];
    rg_scenario *scs[64];
    int n = 0;
    for (size_t i = 0; i < g.gl_pathc && n < 64; i++, n++) {
        char err[512];
        ck_assert_msg(rg_scenario_load(g.gl_pathv[i], &sc[n], err, sizeof(err)) == 0, "%s", err);
        scs[n] = &sc[n];
    }
    for (size_t i = 0; i < k.gl_pathc; i++) {
        char notes[4096], err[512];
        notes[0] = err[0] = '\0';
        int rc = rg_known_load(k.gl_pathv[i], NULL, scs, n, notes, sizeof(notes), err, sizeof(err));
        ck_assert_msg(rc == 0, "%s", err);
        /* Every scenario an entry says it was seen in is one of the suite's: a name that is
         * not would never read XPASS. */
        ck_assert_int_gt(sc[0].nksig, 0);
        for (int e = 0; e < sc[0].nksig; e++)
            for (int j = 0; j < sc[0].ksig[e].nseen; j++) {
                bool found = false;
                for (int m = 0; m < n && !found; m++)
                    found = !strcmp(sc[m].name, sc[0].ksig[e].seen[j]);
                ck_assert_msg(found, "%s: line %d: seen '%s' is no stock scenario", k.gl_pathv[i],
                              sc[0].ksig[e].line, sc[0].ksig[e].seen[j]);
            }
    }
    ck_assert_int_ge((int)k.gl_pathc, 2); /* jaccl's and gloo's */
    globfree(&g);
    globfree(&k);
}
END_TEST

/* Every scenario the project ships parses (the tests run from the top of the tree): a stock
 * file the parser refuses would otherwise be found only in the guest. */
START_TEST(test_stock_scenarios_parse)
{
    glob_t g;
    int n = 0;
    ck_assert_int_eq(glob("scenarios/*.yaml", 0, NULL, &g), 0);
    ck_assert_int_eq(glob("scenarios/*/*.yaml", GLOB_APPEND, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        static rg_scenario sc;
        char err[512];
        int rc = rg_scenario_load(g.gl_pathv[i], &sc, err, sizeof(err));
        ck_assert_msg(rc == 0, "%s", err);
        n++;
    }
    globfree(&g);
    ck_assert_int_ge(n, 60); /* the suite, exec, regression, sweep and memcheck programs */
}
END_TEST

/* A class names a status of the one table: what a rank's status line carries. */
START_TEST(test_expect_class)
{
    rg_scenario sc;
    char name[32];
    parse_ok("ranks: 3\nprogram: [{op: barrier}, {op: barrier}]\n"
             "expect: {all: 'detected@1:peer_abort|timeout', 0: 'detected:completion', 2: any}\n",
             &sc);
    ck_assert_uint_eq(sc.expect_cls[0], 1u << -RG_ERR_COMPLETION);
    ck_assert_int_eq(sc.expect_at[0], RG_SC_AT_ANY);
    ck_assert_uint_eq(sc.expect_cls[1], (1u << -RG_ERR_PEER_ABORT) | (1u << -RG_ERR_TIMEOUT));
    ck_assert_int_eq(sc.expect_at[1], 1);
    ck_assert_uint_eq(sc.expect_cls[2], 0);
    ck_assert_str_eq(rg_sc_class_name(RG_ERR_RAIL_MISMATCH, name, sizeof(name)), "rail_mismatch");
    ck_assert_str_eq(rg_sc_class_name(RG_OK, name, sizeof(name)), "?");
    ck_assert_str_eq(rg_sc_class_name(-99, name, sizeof(name)), "?");
    ck_assert_int_eq(rg_sc_class_of("side_channel", 12), RG_ERR_SIDE_CHANNEL);
    ck_assert_int_eq(rg_sc_class_of("side", 4), 0);
    ck_assert_int_eq(rg_sc_class_of("success", 7), 0);
}
END_TEST

START_TEST(test_faults)
{
    rg_scenario sc;

    parse_ok("ranks: 2\nfaults: []\nprogram: [{op: barrier}]\n", &sc);
    ck_assert_str_eq(sc.faults, "");
    ck_assert_int_eq(sc.nfaults, 0);
    /* Folded lines are one line; "qp=#2" is a key's value, not a comment. */
    parse_ok("ranks: 2\nfaults:\n  - lose op=send\n    rank=0\n  - 'error qp=#2 nth=4'\n"
             "  - {rule: 'delay ms=5 rank=1', optional: true}\n"
             "  - {optional: false, rule: count}\n"
             "program: [{op: barrier}]\n",
             &sc);
    ck_assert_str_eq(sc.faults, "lose op=send rank=0\nerror qp=#2 nth=4\ndelay ms=5 rank=1\ncount");
    ck_assert_int_eq(sc.nfaults, 4);
    ck_assert_int_eq(sc.fault[0].line, 3);
    ck_assert_int_eq(sc.fault[1].line, 5);
    ck_assert_int_eq(sc.fault[2].line, 6);
    ck_assert(!sc.fault[0].optional && !sc.fault[1].optional && sc.fault[2].optional &&
              !sc.fault[3].optional);
    check_invariants(&sc);

    /* FI_MAX_RULES items fit; one more is refused at its own line, before anything runs. The
     * sanitizer's rule counts too: with it on, the last place is its own. */
    char *text = malloc(64 * 1024);
    ck_assert_ptr_nonnull(text);
    size_t len = (size_t)snprintf(
        text, 64 * 1024, "ranks: 2\nprogram: [{op: barrier}]\nownership: false\nfaults:\n");
    for (int i = 0; i < FI_MAX_RULES; i++)
        len += (size_t)snprintf(text + len, 64 * 1024 - len, "  - error nth=%d\n", i + 1);
    parse_ok(text, &sc);
    ck_assert_int_eq(sc.nfaults, FI_MAX_RULES);
    check_invariants(&sc);
    memcpy(strstr(text, "ownership: false"), "ownership: true ", 16);
    expect_bad(text, "x.yaml:5: faults: 32 rules and the ownership sanitizer's make more than 32 "
                     "(set ownership: false) at '[...]'");
    /* The trace's rule likewise (here with the sanitizer's: it is on unless said otherwise). */
    memcpy(strstr(text, "ownership: true "), "trace: true     ", 16);
    expect_bad(text, "x.yaml:5: faults: 32 rules and the sanitizer's and the trace's make more "
                     "than 32 (set ownership: false) at '[...]'");
    memcpy(strstr(text, "trace: true     "), "ownership: false", 16);
    snprintf(text + len, 64 * 1024 - len, "  - lose\n");
    expect_bad(text, "x.yaml:37: faults: at most 32 rules, item 33 is one more 'lose'");

    /* The longest rule fits whole; a longer one is refused, not cut. */
    char rule[RG_SC_RULE_MAX + 1];
    memset(rule, ' ', sizeof(rule));
    memcpy(rule, "count", 5);
    rule[RG_SC_RULE_MAX - 2] = 'x'; /* quoted, so YAML keeps the blanks before it */
    rule[RG_SC_RULE_MAX - 1] = '\0';
    snprintf(text, 64 * 1024, "ranks: 2\nprogram: [{op: barrier}]\nfaults: ['%s']\n", rule);
    ck_assert_str_eq(parse_bad(text), "x.yaml:3: faults item 1: expected key=value 'x'");
    rule[RG_SC_RULE_MAX - 1] = 'y';
    rule[RG_SC_RULE_MAX] = '\0';
    snprintf(text, 64 * 1024, "ranks: 2\nprogram: [{op: barrier}]\nfaults: ['%s']\n", rule);
    ck_assert_ptr_nonnull(strstr(parse_bad(text), "faults item 1: longer than 511 characters"));
    free(text);
}
END_TEST

START_TEST(test_aliases)
{
    rg_scenario sc;

    /* Anchors are YAML's own way to repeat a step; the document API resolves them. */
    parse_ok("ranks: 2\nprogram:\n  - &ar {op: all_reduce, count: 5}\n  - *ar\n  - *ar\n", &sc);
    ck_assert_int_eq(sc.nops, 3);
    ck_assert_uint_eq(sc.ops[2].count, 5);
    ck_assert_int_eq(sc.ops[2].line, 3);
    expect_bad("ranks: 2\nprogram:\n  - *nowhere\n", "x.yaml:3: YAML: found undefined alias");
}
END_TEST

START_TEST(test_default_name)
{
    static const struct {
        const char *path, *name;
    } cases[] = {
        {"scenarios/flush-on-recv.yaml", "flush-on-recv"},
        {"/abs/dir/x.yml", "x"},
        {"noext", "noext"},
        {"a.yaml.yaml", "a.yaml"},
        {"dir.yaml/v1.2_b", "v1.2_b"},
        {"x.YAML", "x.YAML"},
        {"dir/.yaml", ".yaml"},
        {"...", "..."},
    };
    static const char text[] = "ranks: 2\nprogram: [{op: barrier}]\n";
    rg_scenario sc;
    char err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = rg_scenario_parse(text, strlen(text), cases[i].path, &sc, err, sizeof(err));
        ck_assert_msg(rc == 0, "%s: %s", cases[i].path, err);
        ck_assert_str_eq(sc.name, cases[i].name);
    }

    const char *e = parse_bad_as(text, strlen(text), "dir/my scenario.yaml");
    ck_assert_str_eq(e, "dir/my scenario.yaml:1: no name, and the file name is not a valid one "
                        "'my scenario'");
    e = parse_bad_as(text, strlen(text), "dir/..yml");
    ck_assert_str_eq(e, "dir/..yml:1: no name, and the file name is not a valid one '.'");
    e = parse_bad_as(text, strlen(text), "...yaml");
    ck_assert_str_eq(e, "...yaml:1: no name, and the file name is not a valid one '..'");
    e = parse_bad_as(text, strlen(text), "dir/");
    ck_assert_str_eq(e, "dir/:1: no name, and the file name is not a valid one ''");

    /* A name: key makes the file name irrelevant. */
    static const char named[] = "name: fine\nranks: 2\nprogram: [{op: barrier}]\n";
    ck_assert_int_eq(
        rg_scenario_parse(named, strlen(named), "dir/my scenario.yaml", &sc, err, sizeof(err)), 0);
    ck_assert_str_eq(sc.name, "fine");
    ck_assert_int_eq(rg_scenario_parse(named, strlen(named), NULL, &sc, err, sizeof(err)), 0);
}
END_TEST

/* --- refusals ------------------------------------------------------------------------------ */

#define P "\nprogram: [{op: barrier}]\n"
#define R "ranks: 2\n"

static const struct bad_case {
    const char *text, *want;
} bad_cases[] = {
    /* structure */
    {"rnaks: 2" P, "x.yaml:1: unknown key 'rnaks'"},
    {R "Ranks: 3" P, "x.yaml:2: unknown key 'Ranks'"},
    {R "ranks: 3" P, "x.yaml:2: duplicate key 'ranks'"},
    {"program: [{op: barrier}]\n", "x.yaml:1: missing key 'ranks'"},
    {"# hello\n\nname: x\nseed: 2\n", "x.yaml:3: missing key 'ranks'"},
    {R "seed: 2\n", "x.yaml:1: missing key 'program' (or exec)"},
    {"- ranks: 2\n", "x.yaml:1: a scenario must be a mapping, not '[...]'"},
    {"hello\n", "x.yaml:1: a scenario must be a mapping, not 'hello'"},
    {"[]\n", "x.yaml:1: a scenario must be a mapping, not '[]'"},
    {R "[a, b]: 1" P, "x.yaml:2: a key must be a scalar, not '[...]'"},
    {R "---\nranks: 3\n", "x.yaml:2: more than one YAML document"},
    /* ranks, rails, qp, algorithm */
    {"ranks: 1" P, "x.yaml:1: ranks must be 2..64 '1'"},
    {"ranks: 65" P, "x.yaml:1: ranks must be 2..64 '65'"},
    {"ranks: 1.5" P, "x.yaml:1: ranks must be 2..64 '1.5'"},
    {"ranks: \"2\"" P, "x.yaml:1: ranks must be 2..64 '2'"},
    {"ranks: +2" P, "x.yaml:1: ranks must be 2..64 '+2'"},
    {"ranks: 02" P, "x.yaml:1: ranks must be 2..64 '02'"},
    {"ranks: -2" P, "x.yaml:1: ranks must be 2..64 '-2'"},
    {"ranks: 0x2" P, "x.yaml:1: ranks must be 2..64 '0x2'"},
    {"ranks: [2]" P, "x.yaml:1: ranks must be 2..64 '[...]'"},
    {"ranks:" P, "x.yaml:1: ranks must be 2..64 ''"},
    {"ranks: 99999999999999999999999" P, "x.yaml:1: ranks must be 2..64 '99999999999999999999999'"},
    {R "rails: 0" P, "x.yaml:2: rails must be 1..4 '0'"},
    {R "rails: 5" P, "x.yaml:2: rails must be 1..4 '5'"},
    {R "qp: ud" P, "x.yaml:2: bad qp 'ud'"},
    {R "qp: UC" P, "x.yaml:2: bad qp 'UC'"},
    {R "algorithm: tree" P, "x.yaml:2: bad algorithm 'tree'"},
    {R "algorithm: {ring: 1}" P, "x.yaml:2: bad algorithm '{...}'"},
    /* timeout, deadline, seed, name */
    {R "timeout: 0" P, "x.yaml:2: timeout must be in (0, 3600] '0'"},
    {R "timeout: 0.0" P, "x.yaml:2: timeout must be in (0, 3600] '0.0'"},
    {R "timeout: 3600.5" P, "x.yaml:2: timeout must be in (0, 3600] '3600.5'"},
    {R "timeout: -1" P, "x.yaml:2: timeout must be in (0, 3600] '-1'"},
    {R "timeout: .inf" P, "x.yaml:2: timeout must be in (0, 3600] '.inf'"},
    {R "timeout: nan" P, "x.yaml:2: timeout must be in (0, 3600] 'nan'"},
    {R "timeout: 1e400" P, "x.yaml:2: timeout must be in (0, 3600] '1e400'"},
    {R "timeout: 0x10" P, "x.yaml:2: timeout must be in (0, 3600] '0x10'"},
    {R "timeout: 5s" P, "x.yaml:2: timeout must be in (0, 3600] '5s'"},
    {R "timeout: 1e1" P, "x.yaml:2: timeout must be in (0, 3600] '1e1'"},
    {R "timeout: '5'" P, "x.yaml:2: timeout must be in (0, 3600] '5'"},
    {R "deadline: 86401" P, "x.yaml:2: deadline must be in (0, 86400] '86401'"},
    {R "deadline: 30\ntimeout: 30" P, "x.yaml:2: deadline must be more than timeout '30'"},
    {R "timeout: 60" P, "x.yaml:2: timeout must be less than the deadline (default 60) '60'"},
    {R "seed: -1" P, "x.yaml:2: seed must be 0..2^64-1 (decimal or 0x hex) '-1'"},
    {R "seed: 18446744073709551616" P,
     "x.yaml:2: seed must be 0..2^64-1 (decimal or 0x hex) '18446744073709551616'"},
    {R "seed: 0x10000000000000000" P,
     "x.yaml:2: seed must be 0..2^64-1 (decimal or 0x hex) '0x10000000000000000'"},
    {R "seed: 0x" P, "x.yaml:2: seed must be 0..2^64-1 (decimal or 0x hex) '0x'"},
    {R "seed: 0x1g" P, "x.yaml:2: seed must be 0..2^64-1 (decimal or 0x hex) '0x1g'"},
    {R "seed: 1.0" P, "x.yaml:2: seed must be 0..2^64-1 (decimal or 0x hex) '1.0'"},
    {R "zero_copy: yes" P, "x.yaml:2: zero_copy must be true or false 'yes'"},
    {R "ownership: off" P, "x.yaml:2: ownership must be true or false 'off'"},
    {R "faults: [uc_as_rc]" P,
     "x.yaml:2: faults item 1: uc_as_rc is the run's --uc-as-rc, not a fault: 'uc_as_rc'"},
    {R "faults: [ownership]" P,
     "x.yaml:2: faults item 1: the sanitizer is the scenario's key 'ownership', not a fault: "
     "'ownership'"},
    {R "faults: [trace]" P,
     "x.yaml:2: faults item 1: the verbs trace is the scenario's key 'trace', not a fault: "
     "'trace'"},
    {R "trace: 1" P, "x.yaml:2: trace must be true or false '1'"},
    {R "zero_copy: [true]" P, "x.yaml:2: zero_copy must be true or false '[...]'"},
    {R "zero_copy: \"true\"" P, "x.yaml:2: zero_copy must be true or false 'true'"},
    {R "name: a b" P, "x.yaml:2: name must be 1..127 characters of [A-Za-z0-9._-] 'a b'"},
    {R "name: ''" P, "x.yaml:2: name must be 1..127 characters of [A-Za-z0-9._-] ''"},
    {R "name: .." P, "x.yaml:2: name must be 1..127 characters of [A-Za-z0-9._-] '..'"},
    {R "name: x/y" P, "x.yaml:2: name must be 1..127 characters of [A-Za-z0-9._-] 'x/y'"},
    {R "name: [x]" P, "x.yaml:2: name must be 1..127 characters of [A-Za-z0-9._-] '[...]'"},
    /* faults */
    {R "faults: lose" P, "x.yaml:2: faults must be a sequence of rules, not 'lose'"},
    {R "faults:" P, "x.yaml:2: faults must be a sequence of rules, not ''"},
    {R "faults: ['lose; stall']" P,
     "x.yaml:2: faults item 1: one rule per item, no ';' in 'lose; stall'"},
    {R "faults:\n  - lose\n  - |\n    stall\n    ms=1" P,
     "x.yaml:4: faults item 2: control character in 'stall?ms=1?'"},
    {R "faults: [\"lose\\tx\"]" P, "x.yaml:2: faults item 1: control character in 'lose?x'"},
    {R "faults: [\"lose\\0x\"]" P, "x.yaml:2: faults item 1: control character in 'lose?x'"},
    {R "faults: ['']" P, "x.yaml:2: faults item 1: empty rule ''"},
    {R "faults: ['   ']" P, "x.yaml:2: faults item 1: empty rule '   '"},
    {R "faults: [[lose]]" P, "x.yaml:2: faults item 1: a rule must be a string, not '[...]'"},
    /* a '#' would comment out the items after it once they are joined */
    {R "faults: ['count #note', 'error nth=5']" P,
     "x.yaml:2: faults item 1: no comments in a rule ('#' starts one) 'count #note'"},
    {R "faults: ['# only a comment']" P,
     "x.yaml:2: faults item 1: no comments in a rule ('#' starts one) '# only a comment'"},
    /* the plan library's own grammar, at the item's line */
    {R "faults:\n  - lose\n  - flush op=recv" P, "x.yaml:4: faults item 2: unknown fault 'flush'"},
    {R "faults: ['error status=SUCCESS']" P,
     "x.yaml:2: faults item 1: error status=SUCCESS injects nothing"},
    {R "faults: ['not a fault at all']" P, "x.yaml:2: faults item 1: unknown fault 'not'"},
    {R "faults: [{optional: true}]" P, "x.yaml:2: faults item 1: missing key 'rule'"},
    {R "faults: [{rule: lose, optional: yes}]" P,
     "x.yaml:2: faults item 1: optional must be true or false 'yes'"},
    {R "faults: [{rule: lose, why: x}]" P,
     "x.yaml:2: faults item 1: unknown or repeated key (rule, optional) 'why'"},
    {R "faults: [{rule: lose, rule: count}]" P,
     "x.yaml:2: faults item 1: unknown or repeated key (rule, optional) 'rule'"},
    {R "faults: [{rule: [lose]}]" P,
     "x.yaml:2: faults item 1: a rule must be a string, not '[...]'"},
    /* program and steps */
    {R "program: []\n", "x.yaml:2: program must be a non-empty sequence of steps, not '[]'"},
    {R "program: {op: barrier}\n",
     "x.yaml:2: program must be a non-empty sequence of steps, not '{...}'"},
    {R "program:\n", "x.yaml:2: program must be a non-empty sequence of steps, not ''"},
    {R "program:\n  - barrier\n", "x.yaml:3: a step must be a mapping, not 'barrier'"},
    {R "program:\n  - {op: barrier}\n  - {dtype: int8}\n", "x.yaml:4: step without key 'op'"},
    {R "program:\n  - {op: allreduce}\n", "x.yaml:3: bad op 'allreduce'"},
    {R "program:\n  - {op: barrier, cnt: 1}\n", "x.yaml:3: unknown key 'cnt'"},
    {R "program:\n  - op: all_reduce\n    count: 2\n    count: 3\n",
     "x.yaml:5: duplicate key 'count'"},
    {R "program:\n  - op: barrier\n    op: barrier\n", "x.yaml:4: duplicate key 'op'"},
    {R "program:\n  - {op: all_reduce, dtype: float128}\n", "x.yaml:3: bad dtype 'float128'"},
    {R "program:\n  - {op: all_reduce, dtype: Float32}\n", "x.yaml:3: bad dtype 'Float32'"},
    {R "program:\n  - {op: all_reduce, dtype: \"float32\\0x\"}\n",
     "x.yaml:3: bad dtype 'float32?x'"},
    {R "program:\n  - {op: all_reduce, redop: avg}\n", "x.yaml:3: bad redop 'avg'"},
    {R "program:\n  - {op: all_reduce, count: 0}\n", "x.yaml:3: count must be 1..67108864 '0'"},
    {R "program:\n  - {op: all_reduce, count: 67108865}\n",
     "x.yaml:3: count must be 1..67108864 '67108865'"},
    {R "program:\n  - {op: all_reduce, count: 1e3}\n", "x.yaml:3: count must be 1..67108864 '1e3'"},
    {R "program:\n  - {op: all_reduce, root: 0}\n", "x.yaml:3: all_reduce does not take 'root'"},
    {"ranks: !!str 2\nprogram:\n  - {op: barrier}\n",
     "x.yaml:1: a YAML tag is not allowed here: values are plain '!!str'"},
    {"ranks: 2\nprogram: !!seq\n  - {op: barrier}\n",
     "x.yaml:2: a YAML tag is not allowed here: values are plain '!!seq'"},
    {R "program:\n  - {op: all_reduce, count: !!int 5}\n",
     "x.yaml:3: a YAML tag is not allowed here: values are plain '!!int'"},
    {R "program:\n  - {op: all_gather, values: rounding}\n",
     "x.yaml:3: all_gather does not take 'values'"},
    {R "program:\n  - {op: all_reduce, values: fuzzy}\n", "x.yaml:3: bad values 'fuzzy'"},
    {R "program:\n  - {op: all_reduce, values: rounding, dtype: int32}\n",
     "x.yaml:3: rounding needs a floating dtype: int32 sum 'rounding'"},
    {R "program:\n  - {op: reduce_scatter, dtype: float64, redop: prod,\n     values: rounding}\n",
     "x.yaml:4: rounding has no prod for float64 or complex64: float64 prod 'rounding'"},
    {R "program:\n  - {op: all_reduce, dtype: complex64, values: special}\n",
     "x.yaml:3: special needs float16, bfloat16, float32 or float64: complex64 sum 'special'"},
    {R "program:\n  - op: broadcast\n    count: 4\n    redop: sum\n",
     "x.yaml:5: broadcast does not take 'redop'"},
    {R "program:\n  - {op: broadcast, inplace: true}\n",
     "x.yaml:3: broadcast does not take 'inplace'"},
    {R "program:\n  - {op: barrier, count: 1}\n", "x.yaml:3: barrier does not take 'count'"},
    {R "program:\n  - {op: barrier, dtype: int8}\n", "x.yaml:3: barrier does not take 'dtype'"},
    {R "program:\n  - {op: destroy, count: 1}\n", "x.yaml:3: destroy does not take 'count'"},
    {R "program:\n  - {op: destroy, repeat: 2}\n", "x.yaml:3: destroy does not take 'repeat'"},
    {R "program:\n  - {op: destroy}\n  - {op: create, dtype: int8}\n",
     "x.yaml:4: create does not take 'dtype'"},
    {R "program:\n  - {op: all_gather, from: 0}\n", "x.yaml:3: all_gather does not take 'from'"},
    {R "program:\n  - {op: reduce_scatter, to: 1}\n",
     "x.yaml:3: reduce_scatter does not take 'to'"},
    {R "program:\n  - {op: sendrecv, from: 0, to: 1, inplace: true}\n",
     "x.yaml:3: sendrecv does not take 'inplace'"},
    {R "program:\n  - {op: sendrecv, from: 0, to: 1, redop: sum}\n",
     "x.yaml:3: sendrecv does not take 'redop'"},
    {R "program:\n  - {op: broadcast, root: 2}\n", "x.yaml:3: root must be 0..1 '2'"},
    {R "program:\n  - {op: broadcast, root: -1}\n", "x.yaml:3: root must be 0..1 '-1'"},
    {R "program:\n  - {op: sendrecv, to: 1}\n", "x.yaml:3: sendrecv without key 'from'"},
    {R "program:\n  - op: sendrecv\n    from: 1\n", "x.yaml:3: sendrecv without key 'to'"},
    {R "program:\n  - op: sendrecv\n    from: 1\n    to: 1\n",
     "x.yaml:5: from and to must differ '1'"},
    {R "program:\n  - {op: sendrecv, from: 5, to: 0}\n", "x.yaml:3: from must be 0..1 '5'"},
    {R "program:\n  - {op: barrier, repeat: 0}\n", "x.yaml:3: repeat must be 1..100000 '0'"},
    {R "program:\n  - {op: barrier, repeat: 100001}\n",
     "x.yaml:3: repeat must be 1..100000 '100001'"},
    {R "program:\n  - {op: all_gather, inplace: yes}\n",
     "x.yaml:3: inplace must be true or false 'yes'"},
    {R "program:\n  - {op: all_gather, inplace: True}\n",
     "x.yaml:3: inplace must be true or false 'True'"},
    {R "program:\n  - {op: all_gather, inplace: 'true'}\n",
     "x.yaml:3: inplace must be true or false 'true'"},
    {R "program:\n  - {op: all_gather, inplace: 1}\n",
     "x.yaml:3: inplace must be true or false '1'"},
    {R "program:\n  - op: all_reduce\n    redop: max\n    dtype: complex64\n",
     "x.yaml:4: complex64 cannot reduce with 'max'"},
    {R "program:\n  - {op: create}\n",
     "x.yaml:3: the communicator already exists, cannot 'create'"},
    {R "program:\n  - {op: destroy}\n  - {op: destroy}\n",
     "x.yaml:4: no communicator (destroyed above) for 'destroy'"},
    {R "program:\n  - {op: destroy}\n  - {op: all_reduce}\n",
     "x.yaml:4: no communicator (destroyed above) for 'all_reduce'"},
    /* expect */
    {R "expect: ok" P, "x.yaml:2: expect must be a mapping, not 'ok'"},
    {R "expect: {all: fine}" P, "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'fine'"},
    {R "expect: {all: OK}" P, "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'OK'"},
    {R "expect:\n  1: [ok]" P, "x.yaml:3: expect must be " RG_SC_EXPECT_FORMS ", not '[...]'"},
    {R "expect: {all: ok@init}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'ok@init'"},
    {R "expect: {all: detected@}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected@'"},
    {R "expect: {all: ok|killed}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'ok|killed'"},
    {R "expect: {all: detected|ok}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected|ok'"},
    {R "expect: {all: killed@1}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'killed@1'"},
    {R "expect: {all: detected@x}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected@x'"},
    {R "expect: {all: detected@-1}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected@-1'"},
    {R "expect: {all: detected:nonsense}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected:nonsense'"},
    {R "expect: {all: 'detected:'}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected:'"},
    {R "expect: {all: 'detected:timeout|'}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected:timeout|'"},
    {R "expect: {all: 'detected:timeout|timeout'}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected:timeout|timeout'"},
    {R "expect: {all: 'detected:TIMEOUT'}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected:TIMEOUT'"},
    {R "expect: {all: 'detected:RG_ERR_TIMEOUT'}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected:RG_ERR_TIMEOUT'"},
    {R "expect: {all: 'detected:ok'}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected:ok'"},
    {R "expect: {all: 'ok:timeout'}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'ok:timeout'"},
    {R "expect: {all: 'detected:timeout@1'}" P,
     "x.yaml:2: expect must be " RG_SC_EXPECT_FORMS ", not 'detected:timeout@1'"},
    {R "expect: {0: detected@1}" P,
     "x.yaml:2: expect: detected@1 names no step (the program has 1, from 0)"},
    {R "expect: {2: ok}" P, "x.yaml:2: expect rank must be 0..1 '2'"},
    {R "rails: 2\nfaults:\n  - wire loss=1%\n  - link_down rail=2" P,
     "x.yaml:5: faults item 2: rail=2 names no rail (the program has 2, from 0)"},
    {R "faults: ['wire loss=1']" P,
     "x.yaml:2: faults item 1: loss is a percentage like 1% or 0.5% '1'"},
    {R "expect: {foo: ok}" P, "x.yaml:2: unknown key 'foo'"},
    {R "expect: {01: ok}" P, "x.yaml:2: unknown key '01'"},
    {R "expect: {-1: ok}" P, "x.yaml:2: unknown key '-1'"},
    {R "expect:\n  1: ok\n  \"1\": any" P, "x.yaml:4: duplicate key '1'"},
    {R "expect:\n  all: ok\n  all: any" P, "x.yaml:4: duplicate key 'all'"},
    {R "expect:\n  foo: bar" P, "x.yaml:3: unknown key 'foo'"},
    {R "expect:\n  [1]: ok" P, "x.yaml:3: a key must be a scalar, not '[...]'"},
    /* shown tokens: control characters and long values */
    {R "\"a\\x01b\": 1" P, "x.yaml:2: unknown key 'a?b'"},
    {R "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddde: 1" P,
     "x.yaml:2: unknown key 'aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd...'"},
    {R "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd: 1" P,
     "x.yaml:2: unknown key 'aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd'"},
    {R "qp: aaaaaaaaaabbbbbbbbbbcccccccccc\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" P,
     "x.yaml:2: bad qp 'aaaaaaaaaabbbbbbbbbbcccccccccc\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9'"},
    {R "qp: aaaaaaaaaabbbbbbbbbbccccccccccd\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" P,
     "x.yaml:2: bad qp 'aaaaaaaaaabbbbbbbbbbccccccccccd\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...'"},
/* exec: a program instead of steps */
#define X "exec: {command: probe}\n"
    {"ranks: 0\n" X, "x.yaml:1: ranks must be 1..64 '0'"},
    {"ranks: 1\nprogram: [{op: barrier}]\n", "x.yaml:1: ranks must be 2..64 '1'"},
    {R X P, "x.yaml:4: 'program' is for program steps; an exec program has its own"},
    {R X "qp: rc\n", "x.yaml:3: 'qp' is for program steps; an exec program has its own"},
    {R X "timeout: 3\n", "x.yaml:3: 'timeout' is for program steps; an exec program has its own"},
    {R "exec: probe\n",
     "x.yaml:2: exec must be a mapping (command, server and client, or launcher), not 'probe'"},
    {R "exec: {}\n", "x.yaml:2: exec: needs command, server and client, or launcher"},
    {R "exec: {server: a}\n", "x.yaml:2: exec: needs command, server and client, or launcher"},
    {R "exec: {launcher: 'mpirun -np 2 p', command: p}\n",
     "x.yaml:2: exec: a launcher starts every rank; no command, server or client beside it: "
     "'mpirun -np 2 p'"},
    {R "exec: {launcher: 'mpirun p', service: [0]}\n",
     "x.yaml:2: exec: service is for ranks the runner starts, not a launcher's: '[...]'"},
    {R "exec: {launcher: 'mpirun p', client_after: 1}\n",
     "x.yaml:2: exec: client_after goes with server and client, not '1'"},
    {R "exec: {launcher: ''}\n", "x.yaml:2: exec: launcher is empty ''"},
    {R "exec: {command: a, client: b}\n",
     "x.yaml:2: exec: command, or server and client, not both: 'a'"},
    {R "exec: {command: ''}\n", "x.yaml:2: exec: command is empty ''"},
    {R "exec: {command: [a]}\n", "x.yaml:2: exec: command must be a string, not '[...]'"},
    {R "exec: {command: \"a\\tb\\u0001\"}\n",
     "x.yaml:2: exec: command: a control character in 'a?b?'"},
    {R "exec: {command: \"sh -c 'echo hi\"}\n",
     "x.yaml:2: exec: command: an unclosed single quote in 'sh -c 'echo hi'"},
    {R "exec: {server: 'a \"b'}\n", "x.yaml:2: exec: server: an unclosed double quote in 'a \"b'"},
    {R "exec: {command: a, command: b}\n",
     "x.yaml:2: exec: unknown or repeated key (command, server, client, launcher, client_after, "
     "service, service_grace) 'command'"},
    {R "exec: {command: a, client_after: 1}\n",
     "x.yaml:2: exec: client_after goes with server and client, not '1'"},
    {"ranks: 3\nexec: {server: a, client: b}\n",
     "x.yaml:1: exec: a server and a client are 2 ranks, not '3'"},
    {R "exec: {server: a, client: b, client_after: -1}\n",
     "x.yaml:2: exec: client_after must be in (0, 3600] '-1'"},
    {R X "expect: {0: 'detected:timeout'}\n",
     "x.yaml:3: expect: an exec program reports no status: a class (detected:CLASS) needs a "
     "program of steps"},
    {R X "expect: {0: detected@0}\n",
     "x.yaml:3: expect: detected@0 names no step (the program has 0, from 0)"},
    /* env: names a shell exports, none railguard sets itself, printable values. */
    {R "env: [RG_SLOTS]\n" P, "x.yaml:2: env must be a mapping of NAME: value, not '[...]'"},
    {R "env: {rg_slots: 4}\n" P,
     "x.yaml:2: env: a name is [A-Z_][A-Z0-9_]*, shorter than 64, not 'rg_slots'"},
    {R "env: {RG_RANK: 1}\n" P,
     "x.yaml:2: env: railguard sets this for every rank itself (or a key of the scenario does) "
     "'RG_RANK'"},
    {R "env: {LD_PRELOAD: x.so}\n" P,
     "x.yaml:2: env: railguard sets this for every rank itself (or a key of the scenario does) "
     "'LD_PRELOAD'"},
    {R "env: {RG_SLOTS: 4, RG_SLOTS: 8}\n" P, "x.yaml:2: env: named twice 'RG_SLOTS'"},
    {R "env: {RG_SLOTS: [4]}\n" P,
     "x.yaml:2: env: RG_SLOTS's value must be one scalar, not '[...]'"},
    {R "env: {RG_SLOTS: \"4\\t\"}\n" P,
     "x.yaml:2: env: RG_SLOTS's value holds a character that is not printable '4?'"},
    /* A wire fault on an exec program would act on nothing: refused at its line. */
    {R X "faults:\n  - error nth=1\n  - wire loss=1%\n",
     "x.yaml:5: faults item 2: " RG_SC_EXEC_NO_WIRE},
    {R X "faults: [link_down rail=0]\n", "x.yaml:3: faults item 1: " RG_SC_EXEC_NO_WIRE},
#undef X
    /* known: a known failure */
    {R "known: {all: ERROR_SWALLOWED}" P,
     "x.yaml:2: known: needs why (the reason, or an upstream link)"},
    {R "known: {why: x}" P, "x.yaml:2: known: names no verdict (all, or a rank)"},
    {R "known: {why: x, all: detected}" P,
     "x.yaml:2: known: a failure verdict (NOT_EXERCISED ... SILENT_CORRUPTION), not 'detected'"},
    {R "known: {why: x, 2: DEADLOCK}" P,
     "x.yaml:2: known: a key is why, all or a rank 0..1, not '2'"},
    {R "known: {why: x, 1: DEADLOCK, 1: CRASH}" P, "x.yaml:2: known: duplicate key '1'"},
    {R "known: {why: '', all: DEADLOCK}" P,
     "x.yaml:2: known: why must be 1..255 characters, not ''"},
    {R "known: [DEADLOCK]" P,
     "x.yaml:2: known must be a mapping (why, and verdicts by rank or all), not '[...]'"},
    /* empty and YAML's own errors */
    {"", "x.yaml:1: empty scenario"},
    {"# nothing but a comment\n\n", "x.yaml:1: empty scenario"},
    {"---\n", "x.yaml:1: empty scenario"},
    {"--- # a comment\n...\n", "x.yaml:1: empty scenario"},
    {"...\n", "x.yaml:1: YAML: did not find expected node content"},
    {R "program: [{op: barrier}\n", "x.yaml:3: YAML: did not find expected ',' or ']'"},
    {R "qp: uc: rc" P, "x.yaml:2: YAML: mapping values are not allowed in this context"},
    {R "qp: @uc" P, "x.yaml:2: YAML: found character that cannot start any token"},
    {R "qp: \"uc" P, "x.yaml:4: YAML: found unexpected end of stream"},
    {R "qp: &a uc\nrails: &a 1" P, "x.yaml:3: YAML: second occurrence"},
    {R "qp: uc\x01" P, "x.yaml:2: YAML: control characters are not allowed"},
    {R "qp: \xff" P, "x.yaml:2: YAML: invalid leading UTF-8 octet"},
};

START_TEST(test_rejects)
{
    expect_bad(bad_cases[_i].text, bad_cases[_i].want);
}
END_TEST

/* A NUL byte is a control character to YAML: refused, not a silent end of the file. */
START_TEST(test_rejects_nul_byte)
{
    static const char text[] = "ranks: 2\nprogram: [{op: barrier}]\n\0rails: 9\n";
    const char *e = parse_bad_as(text, sizeof(text) - 1, "x.yaml");
    ck_assert_str_eq(e, "x.yaml:3: YAML: control characters are not allowed");
}
END_TEST

/* Deep nesting is refused on the first pass, quickly, however deep the file goes. */
START_TEST(test_rejects_deep_nesting)
{
    size_t len = 1024 * 1024;
    char *text = malloc(len);
    ck_assert_ptr_nonnull(text);

    memset(text, '[', len);
    ck_assert_str_eq(parse_bad_as(text, len, "x.yaml"),
                     "x.yaml:1: YAML: nested deeper than 16 levels");
    memset(text, '{', len);
    ck_assert_str_eq(parse_bad_as(text, len, "x.yaml"),
                     "x.yaml:1: YAML: nested deeper than 16 levels");
    for (size_t i = 0; i < len; i += 2)
        memcpy(text + i, "- ", 2);
    ck_assert_str_eq(parse_bad_as(text, len, "x.yaml"),
                     "x.yaml:1: YAML: nested deeper than 16 levels");

    /* Sixteen levels are YAML enough; the scenario check then refuses the shape. */
    static const char ok16[] =
        "ranks: 2\nprogram: [{op: barrier}]\nname: [[[[[[[[[[[[[[x]]]]]]]]]]]]]]\n";
    ck_assert_str_eq(parse_bad(ok16),
                     "x.yaml:3: name must be 1..127 characters of [A-Za-z0-9._-] '[...]'");
    static const char deep17[] =
        "ranks: 2\nprogram: [{op: barrier}]\nname: [[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]\n";
    ck_assert_str_eq(parse_bad(deep17), "x.yaml:3: YAML: nested deeper than 16 levels");
    free(text);
}
END_TEST

START_TEST(test_rejects_many_anchors)
{
    size_t cap = 64 * 1024, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);

    len += (size_t)snprintf(text, cap, "ranks: 2\nprogram: [{op: barrier}]\nfaults: [");
    for (int i = 0; i < 300; i++)
        len += (size_t)snprintf(text + len, cap - len, "&a%d x, ", i);
    snprintf(text + len, cap - len, "]\n");
    ck_assert_str_eq(parse_bad(text), "x.yaml:3: YAML: more than 256 anchors");

    len = (size_t)snprintf(text, cap, "ranks: 2\nprogram: [{op: barrier}]\nfaults: [&a x, ");
    for (int i = 0; i < 5000; i++)
        len += (size_t)snprintf(text + len, cap - len, "*a, ");
    snprintf(text + len, cap - len, "]\n");
    ck_assert_str_eq(parse_bad(text), "x.yaml:3: YAML: more than 4096 aliases");
    free(text);
}
END_TEST

/* The message is cut to the buffer, never overrun, and the result holds without one. */
START_TEST(test_small_err_buffer)
{
    static const char text[] = "ranks: 1\nprogram: [{op: barrier}]\n";
    rg_scenario sc;
    char err[8];

    memset(err, 'z', sizeof(err));
    ck_assert_int_eq(rg_scenario_parse(text, strlen(text), "x.yaml", &sc, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "x.yaml:");
    ck_assert_int_eq(rg_scenario_parse(text, strlen(text), "x.yaml", &sc, NULL, 0), -1);
    ck_assert_int_eq(rg_scenario_parse(text, strlen(text), "x.yaml", NULL, err, sizeof(err)), -1);
    ck_assert_int_eq(rg_scenario_parse(NULL, 5, "x.yaml", &sc, err, sizeof(err)), -1);
    /* No text at all is an empty scenario, as is an empty string. */
    char big[64];
    ck_assert_int_eq(rg_scenario_parse(NULL, 0, "x.yaml", &sc, big, sizeof(big)), -1);
    ck_assert_str_eq(big, "x.yaml:1: empty scenario");
}
END_TEST

/* --- fuzz ---------------------------------------------------------------------------------- */

/* Parses one input: whatever it holds, the result is a clean success or one clean line. */
static void parse_any(const char *text, size_t len, int *accepted)
{
    static rg_scenario sc;
    char err[512];

    memset(&sc, 0x5a, sizeof(sc));
    memset(err, 'z', sizeof(err));
    int rc = rg_scenario_parse(text, len, "fuzz.yaml", &sc, err, sizeof(err));
    if (rc == 0) {
        ck_assert_str_eq(err, "");
        check_invariants(&sc);
        (*accepted)++;
        return;
    }
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(memchr(err, '\0', sizeof(err)) != NULL, "message not terminated");
    ck_assert_msg(strncmp(err, "fuzz.yaml:", 10) == 0, "'%s'", err);
    for (const char *s = err; *s; s++)
        ck_assert_msg((unsigned char)*s >= 0x20 && *s != 0x7f, "control character in '%s'", err);
    ck_assert_msg(memcmp(&sc, &zero_sc, sizeof(sc)) == 0, "not cleared after '%s'", err);
}

/* Bytes YAML gives meaning to, and the words a scenario uses, so the fuzz gets past the lexer. */
static const char yaml_bytes[] = "-:,[]{}#&*!|>'\"%@` \n\t0123456789.x";

START_TEST(test_fuzz_random_bytes)
{
    uint64_t seed = 0x5ce7a210;
    char buf[256];
    int accepted = 0;

    for (int n = 0; n < 5000; n++) {
        size_t len = rng_below(&seed, sizeof(buf));
        bool yamlish = n % 2;
        for (size_t i = 0; i < len; i++)
            buf[i] = yamlish ? yaml_bytes[rng_below(&seed, sizeof(yaml_bytes) - 1)]
                             : (char)rng_below(&seed, 256);
        parse_any(buf, len, &accepted);
    }
    /* Random bytes are not scenarios. */
    ck_assert_int_eq(accepted, 0);
}
END_TEST

static const char *const mutation_words[] = {
    "ranks", "rails", "op",  "count", "root", "from", "to",        "repeat",   "inplace", "expect",
    "all",   "ok",    "any", "true",  "0",    "1",    "3",         "64",       "-",       ": ",
    "\n  ",  "\n",    "&a ", "*a",    "[",    "]",    "{",         "}",        ", ",      "---\n",
    "#",     "'",     "\"",  ";",     "sum",  "max",  "complex64", "sendrecv", "destroy", "create"};

START_TEST(test_fuzz_mutated_documents)
{
    uint64_t seed = 0xd0c5;
    size_t base_len = strlen(full_text);
    char *buf = malloc(base_len * 2 + 256);
    int accepted = 0;
    ck_assert_ptr_nonnull(buf);

    for (int n = 0; n < 5000; n++) {
        size_t len = base_len;
        memcpy(buf, full_text, len);
        int edits = 1 + (int)rng_below(&seed, 4);
        for (int e = 0; e < edits; e++) {
            size_t at = rng_below(&seed, len + 1);
            switch (rng_below(&seed, 4)) {
            case 0: /* overwrite one byte */
                if (at < len)
                    buf[at] = (char)rng_below(&seed, 256);
                break;
            case 1: /* delete a run */
                if (at < len) {
                    size_t k = 1 + rng_below(&seed, 8);
                    k = k > len - at ? len - at : k;
                    memmove(buf + at, buf + at + k, len - at - k);
                    len -= k;
                }
                break;
            default: { /* insert a word the format uses */
                const char *w = mutation_words[rng_below(&seed, sizeof(mutation_words) /
                                                                    sizeof(mutation_words[0]))];
                size_t k = strlen(w);
                if (len + k > base_len * 2 + 200)
                    break;
                memmove(buf + at + k, buf + at, len - at);
                memcpy(buf + at, w, k);
                len += k;
                break;
            }
            }
        }
        parse_any(buf, len, &accepted);
    }
    /* Some mutations keep a valid scenario (a changed number, a comment): both paths ran. */
    ck_assert_int_gt(accepted, 0);
    ck_assert_int_lt(accepted, 5000);
    free(buf);
}
END_TEST

/* --- rg_scenario_load ---------------------------------------------------------------------- */

START_TEST(test_load_round_trip)
{
    char path[64];
    rg_scenario sc;
    char err[256];

    rg_check_write_temp(path, full_text, strlen(full_text));
    ck_assert_int_eq(rg_scenario_load(path, &sc, err, sizeof(err)), 0);
    ck_assert_str_eq(err, "");
    ck_assert_str_eq(sc.name, "full-scenario_1.0");
    ck_assert_int_eq(sc.nops, 8);
    unlink(path);

    /* Without a name: key, the temporary file's own name. */
    static const char text[] = "ranks: 2\nprogram: [{op: barrier}]\n";
    rg_check_write_temp(path, text, strlen(text));
    ck_assert_int_eq(rg_scenario_load(path, &sc, err, sizeof(err)), 0);
    ck_assert_str_eq(sc.name, strrchr(path, '/') + 1);
    unlink(path);
}
END_TEST

START_TEST(test_load_errors_name_path)
{
    static const char text[] = "ranks: 2\nprogram:\n  - {op: barrier, count: 1}\n";
    char path[64], want[128], err[256];
    rg_scenario sc;

    rg_check_write_temp(path, text, strlen(text));
    memset(&sc, 0x5a, sizeof(sc));
    ck_assert_int_eq(rg_scenario_load(path, &sc, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s:3: barrier does not take 'count'", path);
    ck_assert_str_eq(err, want);
    ck_assert(memcmp(&sc, &zero_sc, sizeof(sc)) == 0);
    unlink(path);
}
END_TEST

START_TEST(test_load_missing_file)
{
    rg_scenario sc;
    char err[256];

    memset(&sc, 0x5a, sizeof(sc));
    ck_assert_int_eq(rg_scenario_load("/nonexistent/rg/x.yaml", &sc, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "/nonexistent/rg/x.yaml: cannot open: No such file or directory");
    ck_assert(memcmp(&sc, &zero_sc, sizeof(sc)) == 0);
    ck_assert_int_eq(rg_scenario_load(NULL, &sc, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_load_directory)
{
    rg_scenario sc;
    char err[256];

    ck_assert_int_eq(rg_scenario_load("/tmp", &sc, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "/tmp: not a regular file");
    /* A FIFO with no writer: refused at once, where reading it used to block forever. */
    char fifo[64];
    snprintf(fifo, sizeof(fifo), "/tmp/rg-sc-fifo.%d", (int)getpid());
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    int rc = rg_scenario_load(fifo, &sc, err, sizeof(err));
    unlink(fifo);
    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_nonnull(strstr(err, ": not a regular file"));
    ck_assert_int_eq(rg_scenario_load("/dev/null", &sc, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "/dev/null: not a regular file");
}
END_TEST

/* 1 MiB is accepted (a valid scenario padded with a comment); one byte more is not. */
START_TEST(test_load_size_limit)
{
    static const char head[] = "ranks: 2\nprogram: [{op: barrier}]\n#";
    size_t max = 1024 * 1024;
    char *text = malloc(max + 2), path[64], want[128], err[256];
    rg_scenario sc;
    ck_assert_ptr_nonnull(text);

    memset(text, 'c', max + 1);
    memcpy(text, head, strlen(head));
    text[max - 1] = '\n';
    rg_check_write_temp(path, text, max);
    ck_assert_int_eq(rg_scenario_load(path, &sc, err, sizeof(err)), 0);
    ck_assert_int_eq(sc.ranks, 2);
    unlink(path);

    text[max - 1] = 'c';
    text[max] = '\n';
    rg_check_write_temp(path, text, max + 1);
    memset(&sc, 0x5a, sizeof(sc));
    ck_assert_int_eq(rg_scenario_load(path, &sc, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s: larger than 1 MiB", path);
    ck_assert_str_eq(err, want);
    ck_assert(memcmp(&sc, &zero_sc, sizeof(sc)) == 0);
    unlink(path);
    free(text);
}
END_TEST

/*
 * The candidates a failure is minimised through, in order, each one the runner would take: a
 * rank fewer only where no root, peer or rank= needs the last one; a step cut only where no
 * fault is anchored to it, later anchors renumbered.
 */
START_TEST(test_shrink_candidates)
{
    static rg_scenario sc, cand;
    parse_ok("ranks: 3\nrails: 2\ntimeout: 2\nprogram:\n"
             "  - {op: all_reduce, count: 8}\n"
             "  - {op: broadcast, count: 5, root: 2}\n"
             "  - {op: all_gather, count: 4}\n"
             "faults:\n  - stall rank=1 step=2 nth=1 ms=10\n  - error rank=0 nth=3\n",
             &sc);
    static const char *const want[] = {
        "without faults",
        "1 rail(s)",
        "counts halved",
        "without step 1 (broadcast)",
        "without step 0 (all_reduce)",
        "without fault 'error rank=0 nth=3'",
        "without fault 'stall rank=1 step=2 nth=1 ms=10'",
    };
    char what[200];
    int cursor = 0;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        ck_assert_int_eq(rg_sc_shrink_next(&sc, &cursor, &cand, what, sizeof(what)), 0);
        ck_assert_str_eq(what, want[i]);
        if (i == 0)
            ck_assert(cand.nfaults == 0 && !cand.faults[0]);
        if (i == 3) {
            ck_assert_int_eq(cand.nops, 2);
            ck_assert_str_eq(cand.fault[0].rule, "stall rank=1 step=1 nth=1 ms=10");
            ck_assert_str_eq(cand.faults, "stall rank=1 step=1 nth=1 ms=10\nerror rank=0 nth=3");
        }
        if (i == 2)
            ck_assert_uint_eq(cand.ops[1].count, 3);
    }
    ck_assert_int_eq(rg_sc_shrink_next(&sc, &cursor, &cand, what, sizeof(what)), -1);
    /* With the root on rank 0, a rank fewer comes first. */
    parse_ok("ranks: 3\nprogram:\n  - {op: broadcast, count: 1, root: 0}\n", &sc);
    cursor = 0;
    ck_assert_int_eq(rg_sc_shrink_next(&sc, &cursor, &cand, what, sizeof(what)), 0);
    ck_assert_str_eq(what, "2 ranks");
    ck_assert_int_eq(cand.ranks, 2);
    /* One fault alone is cut once, by the first candidate, and with it what the file
     * expected of it: without faults every rank is held to ok. */
    parse_ok("ranks: 2\nprogram:\n  - {op: barrier}\nfaults:\n  - error nth=1\n"
             "expect:\n  0: detected@0:completion\n  1: detected\n",
             &sc);
    ck_assert_int_eq(sc.expect[0], RG_SC_EXPECT_DETECTED);
    cursor = 0;
    ck_assert_int_eq(rg_sc_shrink_next(&sc, &cursor, &cand, what, sizeof(what)), 0);
    ck_assert_str_eq(what, "without faults");
    for (int r = 0; r < 2; r++) {
        ck_assert_int_eq(cand.expect[r], RG_SC_EXPECT_OK);
        ck_assert_int_eq(cand.expect_at[r], RG_SC_AT_ANY);
        ck_assert_uint_eq(cand.expect_cls[r], 0);
    }
    ck_assert_int_eq(rg_sc_shrink_next(&sc, &cursor, &cand, what, sizeof(what)), -1);
    /* Nothing smaller than one rank pair, one rail, count 1, one step and no fault. */
    parse_ok("ranks: 2\nprogram:\n  - {op: barrier}\n", &sc);
    cursor = 0;
    ck_assert_int_eq(rg_sc_shrink_next(&sc, &cursor, &cand, what, sizeof(what)), -1);
}
END_TEST

Suite *rg_suite_scenario(void)
{
    Suite *s = suite_create("scenario");

    TCase *tc = tcase_create("valid");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_env);
    tcase_add_loop_test(tc, test_every_op, 0, (int)(sizeof(op_cases) / sizeof(op_cases[0])));
    tcase_add_test(tc, test_every_op_details);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_every_dtype_redop);
    tcase_add_test(tc, test_expect);
    tcase_add_test(tc, test_ranks_after_program);
    tcase_add_test(tc, test_limits_accepted);
    tcase_add_test(tc, test_faults);
    tcase_add_test(tc, test_expect_at);
    tcase_add_test(tc, test_expect_class);
    tcase_add_test(tc, test_stock_scenarios_parse);
    tcase_add_test(tc, test_shipped_known_files_load);
    tcase_add_test(tc, test_exec);
    tcase_add_test(tc, test_expect_default);
    tcase_add_test(tc, test_exec_service);
    tcase_add_test(tc, test_exec_launcher);
    tcase_add_test(tc, test_exclusive);
    tcase_add_test(tc, test_each_site);
    tcase_add_test(tc, test_known_file);
    tcase_add_test(tc, test_known);
    tcase_add_test(tc, test_write_round_trip);
    tcase_add_test(tc, test_aliases);
    tcase_add_test(tc, test_default_name);
    suite_add_tcase(s, tc);

    tc = tcase_create("rejects");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_rejects, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
    tcase_add_test(tc, test_rejects_nul_byte);
    tcase_add_test(tc, test_rejects_deep_nesting);
    tcase_add_test(tc, test_rejects_many_anchors);
    tcase_add_test(tc, test_small_err_buffer);
    suite_add_tcase(s, tc);

    tc = tcase_create("fuzz");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fuzz_random_bytes);
    tcase_add_test(tc, test_fuzz_mutated_documents);
    suite_add_tcase(s, tc);

    tc = tcase_create("load");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_load_round_trip);
    tcase_add_test(tc, test_load_errors_name_path);
    tcase_add_test(tc, test_load_missing_file);
    tcase_add_test(tc, test_load_directory);
    tcase_add_test(tc, test_load_size_limit);
    tcase_add_test(tc, test_shrink_candidates);
    tcase_add_test(tc, test_fit);
    suite_add_tcase(s, tc);
    return s;
}
