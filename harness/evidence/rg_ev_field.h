/* SPDX-License-Identifier: MIT */
/*
 * rg_ev_field.h - reading the shim's event lines, shared by evidence/'s readers (the rank's
 * evidence, rg_evidence.c, and its verbs trace, rg_trace.c): each line checked as the shim
 * writes it, each field for its type and range. What is not as the shim writes it makes the
 * line unreadable, which the reader counts and names; nothing is read as a quiet 0.
 */
#ifndef RG_EV_FIELD_H
#define RG_EV_FIELD_H

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

/*
 * Reads the events file at path, handing each line that is a JSON object to take (which may
 * find it unreadable with rg_ev_bad). Lines that are not the shim's (too long, cut short, a
 * NUL, not JSON) are unreadable too. *bad_lines counts them, and the first is described in
 * first ("line N: why: 'the line'", printable ASCII). 1 when read, 0 when there is no such
 * file, -1 with err when it cannot be read.
 */
int rg_ev_each(const char *path, void (*take)(rg_ev_line *l, json_t *o, void *arg), void *arg,
               int *bad_lines, char *first, size_t firstlen, char *err, size_t errlen);

#endif
