/* SPDX-License-Identifier: MIT */
/*
 * The scenario parser's own declarations, shared by its files (internal to harness/):
 *   rg_scenario.c    the document: read, screened, its top level checked, rg_scenario_load
 *   rg_sc_names.c    the names of kinds, expectations, QP types, algorithms and keys
 *   rg_sc_values.c   messages naming a line, and the typed readers of scalar values
 *   rg_sc_program.c  the program's steps and an exec scenario's commands
 *   rg_sc_faults.c   faults, the per-rank expectation and a scenario's known failure
 *   rg_sc_known.c    a transport's known-failures file
 *   rg_sc_ksig.c     its failures known by signature
 *   rg_sc_shrink.c   smaller scenarios, for minimising a failure
 *   rg_sc_write.c    a scenario written back as YAML
 */
#ifndef RG_SC_PARSE_H
#define RG_SC_PARSE_H

#include "base/rg_base.h"
#include "scenario/rg_scenario.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yaml.h>

/* Nothing here is seen outside the railguard binary (it is linked -rdynamic). */
#pragma GCC visibility push(hidden)

/* A scenario is a few KiB; anything past this is not one. */
#define SC__FILE_MAX (1024 * 1024)
/* Messages show this much of a value or key, then "...". */
#define SC__SHOWN 40
/*
 * A scenario nests four levels (top, program, step, value). libyaml's scanner spends time
 * proportional to the flow depth on every token and its composer compares every anchor with
 * all earlier ones, so 1 MiB of '[' takes many minutes to be refused: a first pass over the
 * events refuses such input cheaply, before the document is built.
 */
#define SC__DEPTH_MAX 16
#define SC__ANCHORS_MAX 256
#define SC__ALIASES_MAX 4096

#define SC__TIMEOUT_MAX 3600.0
#define SC__DEADLINE_MAX 86400.0
#define SC__REPEAT_MAX 100000

#define SC__PRINTF(f, a) __attribute__((format(printf, f, a)))

#define SC__COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The keys, top level and per step; the enums index the tables and the bit masks. */
enum {
    T_NAME,
    T_RANKS,
    T_RAILS,
    T_QP,
    T_ALGORITHM,
    T_TIMEOUT,
    T_DEADLINE,
    T_SEED,
    T_FAULTS,
    T_PROGRAM,
    T_EXPECT,
    T_ZERO_COPY,
    T_OWNERSHIP,
    T_EXEC,
    T_KNOWN,
    T_EXCLUSIVE,
    T_TRACE,
    T_ENV,
    T_EACH_SITE,
    T_KEYS
};

enum {
    S_OP,
    S_DTYPE,
    S_COUNT,
    S_REDOP,
    S_ROOT,
    S_FROM,
    S_TO,
    S_REPEAT,
    S_INPLACE,
    S_VALUES,
    S_KEYS
};

#define B(k) (1u << (k))
#define DATA (B(S_DTYPE) | B(S_COUNT) | B(S_REPEAT))

/* The names and keys (rg_sc_names.c), keyed by their enums. */
extern const char *const sc_qp_names[RG_QPT_COUNT];
extern const char *const sc_algo_names[RG_ALGO_COUNT];
extern const char *const sc_kind_names[RG_SC_KIND_COUNT];
extern const char *const sc_top_keys[T_KEYS];
extern const char *const sc_step_keys[S_KEYS];
extern const unsigned sc_kind_keys[RG_SC_KIND_COUNT];

/* What every check sees: where messages go, the document, the scenario being filled. */
struct ctx {
    const char *path;
    char *err;
    size_t errlen;
    yaml_document_t *doc;
    rg_scenario *sc;
    /* A known-failures file: the run's scenarios, its transport, and where notes go. */
    rg_scenario *const *all;
    int nall;
    const char *transport;
    char *notes;
    size_t noteslen;
};

/* A node as a message shows it: a scalar cut at SC__SHOWN bytes, a collection as [...]. */
struct shown {
    char s[SC__SHOWN + 4];
};

/* What one file calls in another. */
/* rg_scenario.c */
int sc_parse_doc(struct ctx *c, const char *text, size_t len, const char *empty,
                 int (*top)(const struct ctx *, const yaml_node_t *));
int sc_read_small(const struct ctx *c, const char *path, char **buf, size_t *n);

/* rg_sc_values.c */
size_t sc_line_of(const yaml_node_t *n);
int sc_fail(const struct ctx *c, size_t line, const char *fmt, ...) SC__PRINTF(3, 4);
int sc_bad(const struct ctx *c, const yaml_node_t *n, const char *fmt, ...) SC__PRINTF(3, 4);
int sc_yaml_fail(const struct ctx *c, const yaml_parser_t *p, const char *text, size_t len);
yaml_node_t *sc_node_at(const struct ctx *c, int index);
bool sc_is_scalar(const yaml_node_t *n);
bool sc_is_plain(const yaml_node_t *n);
bool sc_scalar_is(const yaml_node_t *n, const char *s);
int sc_lookup(const yaml_node_t *n, const char *const *names, int count);
int sc_digits_u64(const char *v, size_t len, bool hex_ok, uint64_t *out);
int sc_plain_u64(const yaml_node_t *n, bool hex_ok, uint64_t *out);
int sc_get_int(const struct ctx *c, const yaml_node_t *n, const char *what, long lo, long hi,
               long *out);
int sc_get_seconds(const struct ctx *c, const yaml_node_t *n, const char *what, double max,
                   double *out);
int sc_get_name(const struct ctx *c, const yaml_node_t *n, const char *what,
                const char *const *names, int count, int *out);
bool sc_valid_name(const char *s, size_t len);
int sc_default_name(const struct ctx *c, char *name);
int sc_collect(const struct ctx *c, const yaml_node_t *m, const char *const *names, int count,
               yaml_node_t **keys, yaml_node_t **vals);

/* rg_sc_env.c */
int sc_parse_env(const struct ctx *c, const yaml_node_t *n);

/* rg_sc_program.c */
int sc_parse_program(const struct ctx *c, const yaml_node_t *n);
int sc_parse_exec(const struct ctx *c, const yaml_node_t *n);

/* rg_sc_faults.c */
int sc_parse_faults(const struct ctx *c, const yaml_node_t *n);
int sc_parse_known(const struct ctx *c, const yaml_node_t *n);
/* rg_sc_ksig.c: a known-failures file's signatures: list into out[0..*nout). */
int sc_parse_ksigs(const struct ctx *c, const yaml_node_t *n, rg_sc_ksig *out, int *nout);
int sc_parse_expect(const struct ctx *c, const yaml_node_t *n);

#pragma GCC visibility pop

#endif
