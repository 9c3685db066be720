/* SPDX-License-Identifier: MIT */
/*
 * A result's known signatures (rg_result.h) as JSON and back: result.json carries them so that
 * `railguard report`, judging the run again from its files, reaches the same xfail. A field an
 * entry did not name is not written, so which fields it names round-trips too.
 */
#include "result/rg_result.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *key;
    unsigned bit;
    size_t off, len;
} fields[] = {
    {"class", RG_SIG_HAS_CLS, offsetof(rg_sig, cls), sizeof(((rg_sig *)0)->cls)},
    {"op", RG_SIG_HAS_OP, offsetof(rg_sig, op), sizeof(((rg_sig *)0)->op)},
    {"algo", RG_SIG_HAS_ALGO, offsetof(rg_sig, algo), sizeof(((rg_sig *)0)->algo)},
    {"others", RG_SIG_HAS_OTHERS, offsetof(rg_sig, others), sizeof(((rg_sig *)0)->others)},
    {"faults", RG_SIG_HAS_FAULTS, offsetof(rg_sig, faults), sizeof(((rg_sig *)0)->faults)},
};
#define NFIELDS ((int)(sizeof(fields) / sizeof(fields[0])))

static json_t *strings(const char *rows, size_t width, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_string(rows + (size_t)i * width));
    return a;
}

json_t *rg_ksig_json(const rg_sc_ksig *k, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:o}", "why", k[i].why, "first", k[i].sig.first,
                              "rate", k[i].rate, "line", k[i].line, "seen",
                              strings(k[i].seen[0], sizeof(k[i].seen[0]), k[i].nseen));
        for (int f = 0; o && f < NFIELDS; f++)
            if (k[i].has & fields[f].bit)
                json_object_set_new(o, fields[f].key,
                                    json_string((const char *)&k[i].sig + fields[f].off));
        if (o && k[i].cause)
            json_object_set_new(o, "cause", json_string(rg_cause_name(k[i].cause)));
        if (o && (k[i].has & RG_SIG_HAS_FRAMES))
            json_object_set_new(
                o, "frames",
                strings(k[i].sig.frames[0], sizeof(k[i].sig.frames[0]), k[i].sig.nframes));
        json_array_append_new(a, o);
    }
    return a;
}

/* A string field into dst (len bytes): 0, or -1 when it is absent, not a string or too long. */
static int take(json_t *o, const char *key, char *dst, size_t len)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s || strlen(s) >= len)
        return -1;
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

/* A list of strings into rows: 0, or -1. */
static int take_rows(json_t *a, char *rows, size_t width, int max, int *n)
{
    if (!json_is_array(a) || json_array_size(a) > (size_t)max)
        return -1;
    *n = (int)json_array_size(a);
    for (int i = 0; i < *n; i++) {
        const char *s = json_string_value(json_array_get(a, (size_t)i));
        if (!s || strlen(s) >= width)
            return -1;
        memcpy(rows + (size_t)i * width, s, strlen(s) + 1);
    }
    return 0;
}

static int one(json_t *o, rg_sc_ksig *k)
{
    memset(k, 0, sizeof(*k));
    json_t *line = json_object_get(o, "line");
    if (!json_is_object(o) || take(o, "why", k->why, sizeof(k->why)) ||
        take(o, "first", k->sig.first, sizeof(k->sig.first)) ||
        take(o, "rate", k->rate, sizeof(k->rate)) || !json_is_integer(line) ||
        take_rows(json_object_get(o, "seen"), k->seen[0], sizeof(k->seen[0]), RG_SC_KSIG_SEEN,
                  &k->nseen))
        return -1;
    k->line = (int)json_integer_value(line);
    json_t *cause = json_object_get(o, "cause");
    int v = cause ? rg_cause_of(json_string_value(cause)) : 0;
    if (v < 0)
        return -1;
    k->cause = (rg_cause)v;
    /* first: a verdict, or "" in an entry by cause */
    v = rg_verdict_of(k->sig.first);
    if ((v < 0 && (k->sig.first[0] || !k->cause)) || v == RG_V_UNSUPPORTED || k->line < 1)
        return -1;
    for (int f = 0; f < NFIELDS; f++) {
        if (!json_object_get(o, fields[f].key))
            continue;
        k->has |= fields[f].bit;
        if (take(o, fields[f].key, (char *)&k->sig + fields[f].off, fields[f].len))
            return -1;
    }
    json_t *fr = json_object_get(o, "frames");
    if (fr) {
        k->has |= RG_SIG_HAS_FRAMES;
        if (take_rows(fr, k->sig.frames[0], sizeof(k->sig.frames[0]), RG_SIG_FRAMES,
                      &k->sig.nframes))
            return -1;
    }
    return 0;
}

int rg_ksig_read(json_t *a, rg_sc_ksig *k, int *n, const char *path, char *err, size_t errlen)
{
    *n = 0;
    if (!a)
        return 0; /* a run without a known-failures file, or older than signatures */
    if (!json_is_array(a) || json_array_size(a) > RG_SC_KSIG_MAX) {
        snprintf(err, errlen, "%s: known_signatures is not a list of at most %d", path,
                 RG_SC_KSIG_MAX);
        return -1;
    }
    for (size_t i = 0; i < json_array_size(a); i++, (*n)++)
        if (one(json_array_get(a, i), &k[i])) {
            snprintf(err, errlen,
                     "%s: known_signatures entry %zu is not one railguard writes (why, first, "
                     "rate, line, seen, and the fields and cause it names)",
                     path, i + 1);
            return -1;
        }
    return 0;
}
