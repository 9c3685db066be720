/* SPDX-License-Identifier: MIT */
/*
 * rg_ev_field.h - reading the shim's event lines, shared by evidence/'s readers (the rank's
 * evidence, rg_evidence.c, and its verbs trace, rg_trace.c): each line checked as the shim
 * writes it, each field for its type and range. What is not as the shim writes it makes the
 * line unreadable, which the reader counts and names; nothing is read as a quiet 0.
 */
#ifndef RG_EV_FIELD_H
#define RG_EV_FIELD_H

#include "rg_fi_events.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The line being read, and the first thing in it that is not as the shim writes it. */
typedef struct rg_ev_line {
    int no;
    char why[160];
} rg_ev_line;

void rg_ev_bad(rg_ev_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An unsigned field: absent is 0; present, a JSON integer from 0 or an RG_HEX64 string. */
uint64_t rg_ev_u64(rg_ev_line *l, json_t *o, const char *key);
/* A time in ms (mono_ms, at_ms): absent is -1; present, a number from 0. */
double rg_ev_ms(rg_ev_line *l, json_t *o, const char *key);
/* A string field: absent is "". */
const char *rg_ev_str(rg_ev_line *l, json_t *o, const char *key);
/* A boolean field: absent is false. */
bool rg_ev_bool(rg_ev_line *l, json_t *o, const char *key);

/* A count the shim may not know (schema type N): absent is a known 0; "unknown" is unknown. */
rg_ev_n rg_ev_count(rg_ev_line *l, json_t *o, const char *key);

/* The schema's kind named name (its enum in *kind when not NULL), or NULL. */
const rg_ev_kdef *rg_ev_kind_of(const char *name, enum rg_ev_kind *kind);
/*
 * One line of the shim's against the schema (rg_fi_events.h): its event a kind of it, every
 * field one of the head's or the kind's and of its type. A field may be absent (a hand-made
 * line, a shim older than the field): the accessors above say what absent reads as. False, with
 * the line unreadable, otherwise.
 */
bool rg_ev_check(rg_ev_line *l, json_t *o);
/*
 * The line decoded into its kind's record (struct rg_evr_<kind>, *kind says which), every
 * field the schema requires present; `has` has a bit for each field present. Strings are
 * copied, byte for byte as the shim had them, into strs. 0, or -1 with the line unreadable.
 */
int rg_ev_decode(rg_ev_line *l, json_t *o, enum rg_ev_kind *kind, void *rec, char *strs,
                 size_t strslen);

/* A schema: the fields every line has and each kind's (the shim's, rg_fi_events.h; the runner's
 * wire evidence, rg_ev_wire.h), and whose lines they are, for what a refused line says. */
typedef struct rg_ev_table {
    const char *who;
    const rg_ev_fdef *head;
    int nhead;
    const rg_ev_kdef *kinds;
    int nkinds;
} rg_ev_table;
extern const rg_ev_table rg_ev_shim_table, rg_ev_wire_table;
/* rg_ev_decode against table t: *kind is the index of the line's kind in t's kinds. */
int rg_ev_decode_in(const rg_ev_table *t, rg_ev_line *l, json_t *o, int *kind, void *rec,
                    char *strs, size_t strslen);

/*
 * Reads the events file at path, handing each line that is a JSON object to take (which may
 * find it unreadable with rg_ev_bad). Lines that are not the shim's (too long, cut short, a
 * NUL, not JSON) are unreadable too. *bad_lines counts them, and the first is described in
 * first ("line N: why: 'the line'", printable ASCII). 1 when read, 0 when there is no such
 * file, -1 with err when it cannot be read.
 */
int rg_ev_each(const char *path, void (*take)(rg_ev_line *l, json_t *o, void *arg), void *arg,
               int *bad_lines, char *first, size_t firstlen, char *err, size_t errlen);
/* The same for a file of the shim's: each line rg_ev_check'ed before take sees it. */
int rg_ev_each_shim(const char *path, void (*take)(rg_ev_line *l, json_t *o, void *arg), void *arg,
                    int *bad_lines, char *first, size_t firstlen, char *err, size_t errlen);

#endif
