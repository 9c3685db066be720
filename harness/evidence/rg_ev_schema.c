/* SPDX-License-Identifier: MIT */
/*
 * The shim's event lines checked against the schema they were written from
 * (faultinject/rg_fi_events.h), and decoded into the same records the writer formats: the
 * reader's half of the one table. A line whose event is not a kind of the schema, that has a
 * field its kind does not, or a value not of its field's type, is unreadable, and says which.
 */
#include "evidence/rg_ev_field.h"
#include "evidence/rg_ev_wire.h"
#include "rg_parse.h"

#include <stdio.h>
#include <string.h>

/* The shim's events (rg_fi_events.h) and the runner's wire evidence (rg_ev_wire.h): the same
 * form, each line's head its own. */
static const rg_ev_fdef wire_head[] = {{"event", RG_EVT_S, RG_EVP_R, 0}};
const rg_ev_table rg_ev_shim_table = {"the shim", rg_ev_head, RG_EV_HEAD_N, rg_ev_kinds,
                                      RG_EVK_COUNT};
const rg_ev_table rg_ev_wire_table = {"the runner's wire", wire_head, 1, rg_wire_kinds,
                                      RG_WIREK_COUNT};

static const rg_ev_kdef *kind_in(const rg_ev_table *t, const char *name, int *kind)
{
    for (int k = 0; name && k < t->nkinds; k++)
        if (!strcmp(t->kinds[k].name, name)) {
            if (kind)
                *kind = k;
            return &t->kinds[k];
        }
    return NULL;
}

const rg_ev_kdef *rg_ev_kind_of(const char *name, enum rg_ev_kind *kind)
{
    int k;
    const rg_ev_kdef *d = kind_in(&rg_ev_shim_table, name, &k);
    if (d && kind)
        *kind = (enum rg_ev_kind)k;
    return d;
}

static const rg_ev_fdef *field_of(const rg_ev_table *t, const rg_ev_kdef *k, const char *name,
                                  int *idx)
{
    for (int i = 0; i < t->nhead; i++)
        if (!strcmp(t->head[i].name, name)) {
            *idx = -1;
            return &t->head[i];
        }
    for (int i = 0; i < k->nf; i++)
        if (!strcmp(k->f[i].name, name)) {
            *idx = i;
            return &k->f[i];
        }
    return NULL;
}

/* X: an RG_HEX64 string. */
static bool read_x(json_t *v, uint64_t *out)
{
    return json_is_string(v) && !strncmp(json_string_value(v), "0x", 2) &&
           !rg_parse_uint(json_string_value(v), true, 0, UINT64_MAX, out);
}

/* U: a JSON integer from 0, or above 2^63 - 1 an X. */
static bool read_u(json_t *v, uint64_t *out)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return true;
    }
    return read_x(v, out);
}

static bool is_unknown(json_t *v)
{
    return json_is_string(v) && !strcmp(json_string_value(v), "unknown");
}

/* The writer's bytes back from jansson's UTF-8: each code point below 0x100 is the byte it
 * escaped (rg_fi_events.h, S). NULL when a code point is above that (no writer of ours) or the
 * room runs out. */
static const char *read_s(json_t *v, char **room, size_t *left)
{
    const unsigned char *s = (const unsigned char *)json_string_value(v);
    size_t n = json_string_length(v);
    char *out = *room;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        if (c >= 0x80) {
            if ((c & 0xfe) != 0xc2 || i + 1 >= n)
                return NULL;
            c = ((c & 0x03) << 6) | (s[++i] & 0x3f);
        }
        if (o + 1 >= *left)
            return NULL;
        out[o++] = (char)c;
    }
    out[o++] = '\0';
    *room += o;
    *left -= o;
    return out;
}

static const char *const ev_ops[5] = {"send", "recv", "write", "read", "atomic"};

/* One value of type t into out (NULL: checked only). False when it is not of the type. */
static bool read_value(json_t *v, enum rg_ev_type t, void *out, char **room, size_t *left)
{
    uint64_t u;
    switch (t) {
    case RG_EVT_U:
        if (!read_u(v, &u))
            return false;
        if (out)
            *(uint64_t *)out = u;
        return true;
    case RG_EVT_I:
        if (!json_is_integer(v))
            return false;
        if (out)
            *(int64_t *)out = (int64_t)json_integer_value(v);
        return true;
    case RG_EVT_X:
        if (!read_x(v, &u))
            return false;
        if (out)
            *(uint64_t *)out = u;
        return true;
    case RG_EVT_S: {
        if (!json_is_string(v))
            return false;
        if (!out)
            return true;
        const char *s = read_s(v, room, left);
        *(const char **)out = s;
        return s != NULL;
    }
    case RG_EVT_B:
        if (!json_is_boolean(v))
            return false;
        if (out)
            *(bool *)out = json_is_true(v);
        return true;
    case RG_EVT_MS:
        if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) >= 1e15)
            return false;
        if (out)
            *(double *)out = json_number_value(v);
        return true;
    case RG_EVT_N: {
        rg_ev_n n = {false, 0};
        if (!is_unknown(v) && !(n.known = read_u(v, &n.v)))
            return false;
        if (out)
            *(rg_ev_n *)out = n;
        return true;
    }
    case RG_EVT_OPS: {
        rg_ev_ops o = {{0}};
        if (!json_is_object(v) || json_object_size(v) != 5)
            return false;
        for (int i = 0; i < 5; i++)
            if (!read_u(json_object_get(v, ev_ops[i]), &o.op[i]))
                return false;
        if (out)
            *(rg_ev_ops *)out = o;
        return true;
    }
    case RG_EVT_WRS: {
        rg_ev_wrs w = {.n = -1};
        if (!is_unknown(v)) {
            if (!json_is_array(v) || json_array_size(v) > RG_EV_WRS_MAX)
                return false;
            w.n = (int)json_array_size(v);
            for (int i = 0; i < w.n; i++) {
                json_t *e = json_array_get(v, (size_t)i);
                if (!json_is_object(e) || json_object_size(e) != 2 ||
                    !read_x(json_object_get(e, "wr_id"), &w.e[i].wr_id) ||
                    !read_u(json_object_get(e, "len"), &w.e[i].len))
                    return false;
            }
        }
        if (out)
            *(rg_ev_wrs *)out = w;
        return true;
    }
    }
    return false;
}

static const char *const type_text[] = {
    [RG_EVT_U] = "an unsigned 64-bit value",
    [RG_EVT_I] = "an integer",
    [RG_EVT_X] = "a 64-bit identifier (\"0x...\")",
    [RG_EVT_S] = "a string",
    [RG_EVT_B] = "true or false",
    [RG_EVT_MS] = "a time in ms",
    [RG_EVT_N] = "a count or \"unknown\"",
    [RG_EVT_OPS] = "counts by op",
    [RG_EVT_WRS] = "a list of requests or \"unknown\"",
};

/* Checks o against table t, decoding into rec (NULL: checked only). */
static const rg_ev_kdef *check(const rg_ev_table *t, rg_ev_line *l, json_t *o, int *kind, void *rec,
                               char *strs, size_t strslen)
{
    json_t *ev = json_object_get(o, "event");
    const rg_ev_kdef *k = json_is_string(ev) ? kind_in(t, json_string_value(ev), kind) : NULL;
    if (!k) {
        rg_ev_bad(l, "\"event\" is not an event %s writes", t->who);
        return NULL;
    }
    if (rec)
        memset(rec, 0, k->size);
    const char *key;
    json_t *v;
    char *room = strs;
    size_t left = strslen;
    json_object_foreach(o, key, v)
    {
        int idx;
        const rg_ev_fdef *f = field_of(t, k, key, &idx);
        if (!f) {
            rg_ev_bad(l, "\"%.40s\" is not a field of a %s event", key, k->name);
            return NULL;
        }
        void *at = rec && idx >= 0 ? (char *)rec + f->off : NULL;
        if (!read_value(v, (enum rg_ev_type)f->type, at, &room, &left)) {
            rg_ev_bad(l, "\"%s\" is not %s", key, type_text[f->type]);
            return NULL;
        }
        if (at)
            *(uint32_t *)rec |= 1u << idx;
    }
    return k;
}

bool rg_ev_check(rg_ev_line *l, json_t *o)
{
    int kind;
    return check(&rg_ev_shim_table, l, o, &kind, NULL, NULL, 0) != NULL;
}

int rg_ev_decode_in(const rg_ev_table *t, rg_ev_line *l, json_t *o, int *kind, void *rec,
                    char *strs, size_t strslen)
{
    const rg_ev_kdef *k = check(t, l, o, kind, rec, strs, strslen);
    if (!k)
        return -1;
    for (int i = 0; i < k->nf; i++)
        if (k->f[i].required && !(*(uint32_t *)rec & (1u << i))) {
            rg_ev_bad(l, "a %s event without \"%s\"", k->name, k->f[i].name);
            return -1;
        }
    return 0;
}

int rg_ev_decode(rg_ev_line *l, json_t *o, enum rg_ev_kind *kind, void *rec, char *strs,
                 size_t strslen)
{
    int k = 0;
    int rc = rg_ev_decode_in(&rg_ev_shim_table, l, o, &k, rec, strs, strslen);
    *kind = (enum rg_ev_kind)k;
    return rc;
}

rg_ev_n rg_ev_count(rg_ev_line *l, json_t *o, const char *key)
{
    rg_ev_n n = {true, 0};
    json_t *v = json_object_get(o, key);
    if (v && !read_value(v, RG_EVT_N, &n, NULL, NULL))
        rg_ev_bad(l, "\"%s\" is not %s", key, type_text[RG_EVT_N]);
    return n;
}
