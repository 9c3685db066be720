/* SPDX-License-Identifier: MIT */
/* Messages that name the line of the value at fault, and the typed readers of scalar values
 * (rg_sc_parse.h): every refusal one line. */
#include "rg_sc_parse.h"
#include "data/rg_data.h"
#include "fi_plan.h"
#include "rg_parse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* --- messages ------------------------------------------------------------------------------ */

size_t sc_line_of(const yaml_node_t *n)
{
    return n->start_mark.line + 1;
}

/* Writes "PATH:LINE: what" (no line when 0), made one line whatever the input held; -1. */
int sc_fail(const struct ctx *c, size_t line, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    if (!c->err || c->errlen == 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line)
        snprintf(c->err, c->errlen, "%s:%zu: %s", c->path, line, msg);
    else
        snprintf(c->err, c->errlen, "%s: %s", c->path, msg);
    for (char *s = c->err; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            *s = '?';
    return -1;
}

static struct shown show(const yaml_node_t *n)
{
    struct shown sh;

    if (n->type == YAML_SEQUENCE_NODE) {
        bool empty = n->data.sequence.items.top == n->data.sequence.items.start;
        strcpy(sh.s, empty ? "[]" : "[...]");
    } else if (n->type == YAML_MAPPING_NODE) {
        bool empty = n->data.mapping.pairs.top == n->data.mapping.pairs.start;
        strcpy(sh.s, empty ? "{}" : "{...}");
    } else if (n->type == YAML_SCALAR_NODE) {
        const char *v = (const char *)n->data.scalar.value;
        size_t len = n->data.scalar.length, k = len;
        if (len > SC__SHOWN) {
            /* Cut on a character boundary, so the message stays valid UTF-8. */
            k = SC__SHOWN;
            while (k > 0 && ((unsigned char)v[k] & 0xc0) == 0x80)
                k--;
        }
        /* A quoted "\0" puts a NUL inside the value; it must not end the message early. */
        for (size_t i = 0; i < k; i++)
            sh.s[i] = (unsigned char)v[i] < 0x20 || (unsigned char)v[i] == 0x7f ? '?' : v[i];
        strcpy(sh.s + k, k < len ? "..." : "");
    } else {
        strcpy(sh.s, "?");
    }
    return sh;
}

/* "PATH:LINE: what 'token'", LINE and token those of node n. */
int sc_bad(const struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char what[160];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return sc_fail(c, sc_line_of(n), "%s '%s'", what, show(n).s);
}

/* libyaml's own problem text, at its line. */
int sc_yaml_fail(const struct ctx *c, const yaml_parser_t *p, const char *text, size_t len)
{
    size_t line = p->problem_mark.line + 1;

    if (p->error == YAML_READER_ERROR) {
        /* The reader reports a byte offset, not a mark: count the lines up to it. */
        size_t end = p->problem_offset < len ? p->problem_offset : len;
        line = 1;
        for (size_t i = 0; i < end; i++)
            line += text[i] == '\n';
    }
    if (p->error == YAML_MEMORY_ERROR)
        return sc_fail(c, line, "YAML: out of memory");
    return sc_fail(c, line, "YAML: %s", p->problem ? p->problem : "unknown error");
}

/* --- values -------------------------------------------------------------------------------- */

yaml_node_t *sc_node_at(const struct ctx *c, int index)
{
    return yaml_document_get_node(c->doc, index);
}

bool sc_is_scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE;
}

/* Numbers and booleans are plain scalars: "2" in quotes is a string in YAML. */
bool sc_is_plain(const yaml_node_t *n)
{
    return sc_is_scalar(n) && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* Compares by length, so a value with a NUL inside never matches a shorter name. */
bool sc_scalar_is(const yaml_node_t *n, const char *s)
{
    size_t len = strlen(s);
    return sc_is_scalar(n) && n->data.scalar.length == len &&
           memcmp(n->data.scalar.value, s, len) == 0;
}

/* The index of the name n spells in names[0..count), or -1. */
int sc_lookup(const yaml_node_t *n, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (names[i] && sc_scalar_is(n, names[i]))
            return i;
    return -1;
}

/*
 * "0" or [1-9][0-9]*, or with hex_ok 0x and hex digits, read by the shared parser
 * (rg_parse_uint: no blanks, signs or junk). A leading zero is refused because YAML 1.1 reads
 * "010" as octal 8.
 */
int sc_digits_u64(const char *v, size_t len, bool hex_ok, uint64_t *out)
{
    char buf[32];
    /* YAML 1.1 reads "010" as octal 8: a leading zero is refused here, not read either way. */
    if (len >= sizeof(buf) || memchr(v, '\0', len) ||
        (len > 1 && v[0] == '0' && !(hex_ok && (v[1] == 'x' || v[1] == 'X'))))
        return -1;
    memcpy(buf, v, len);
    buf[len] = '\0';
    return rg_parse_uint(buf, hex_ok, 0, UINT64_MAX, out);
}

int sc_plain_u64(const yaml_node_t *n, bool hex_ok, uint64_t *out)
{
    if (!sc_is_plain(n))
        return -1;
    return sc_digits_u64((const char *)n->data.scalar.value, n->data.scalar.length, hex_ok, out);
}

/* An integer lo..hi, else "<what> must be lo..hi 'value'". */
int sc_get_int(const struct ctx *c, const yaml_node_t *n, const char *what, long lo, long hi,
               long *out)
{
    uint64_t u;

    if (sc_plain_u64(n, false, &u) || u < (uint64_t)lo || u > (uint64_t)hi)
        return sc_bad(c, n, "%s must be %ld..%ld", what, lo, hi);
    *out = (long)u;
    return 0;
}

/* Seconds in (0, max], as rg_parse_seconds reads them everywhere: digits and a point. */
int sc_get_seconds(const struct ctx *c, const yaml_node_t *n, const char *what, double max,
                   double *out)
{
    char buf[64];
    double v = 0;
    size_t len = sc_is_plain(n) ? n->data.scalar.length : 0;
    if (len > 0 && len < sizeof(buf)) {
        memcpy(buf, n->data.scalar.value, len);
        buf[len] = '\0';
    } else {
        buf[0] = '\0';
    }
    if (rg_parse_seconds(buf, 0, max, &v) || !(v > 0))
        return sc_bad(c, n, "%s must be in (0, %.0f]", what, max);
    *out = v;
    return 0;
}

int sc_get_name(const struct ctx *c, const yaml_node_t *n, const char *what,
                const char *const *names, int count, int *out)
{
    int i = sc_lookup(n, names, count);
    if (i < 0)
        return sc_bad(c, n, "bad %s", what);
    *out = i;
    return 0;
}

/*
 * A scenario name: it ends up in file names and reports, so a conservative alphabet, and not
 * "." or "..", which would name a directory instead.
 */
bool sc_valid_name(const char *s, size_t len)
{
    if (len == 0 || len >= RG_SC_NAME_MAX || (len <= 2 && strspn(s, ".") >= len))
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-'))
            return false;
    }
    return true;
}

/* The file name without its directory and a .yaml or .yml extension. */
int sc_default_name(const struct ctx *c, char *name)
{
    const char *base = strrchr(c->path, '/');
    base = base ? base + 1 : c->path;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".yaml") == 0)
        len -= 5;
    else if (len > 4 && strcmp(base + len - 4, ".yml") == 0)
        len -= 4;
    if (!sc_valid_name(base, len)) {
        char shown[SC__SHOWN + 4];
        snprintf(shown, sizeof(shown), "%.*s%s", (int)(len > SC__SHOWN ? SC__SHOWN : len), base,
                 len > SC__SHOWN ? "..." : "");
        return sc_fail(c, 1, "no name, and the file name is not a valid one '%s'", shown);
    }
    memcpy(name, base, len);
    name[len] = '\0';
    return 0;
}

/*
 * Matches every key of mapping m against names: a key that is not a scalar, not among the
 * names or seen twice is the error. vals[k] is key k's value node, keys[k] the key node (both
 * NULL when absent).
 */
int sc_collect(const struct ctx *c, const yaml_node_t *m, const char *const *names, int count,
               yaml_node_t **keys, yaml_node_t **vals)
{
    for (int k = 0; k < count; k++)
        keys[k] = vals[k] = NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *key = sc_node_at(c, p->key), *val = sc_node_at(c, p->value);
        if (!key || !val)
            return sc_fail(c, sc_line_of(m), "YAML: broken document");
        if (!sc_is_scalar(key))
            return sc_bad(c, key, "a key must be a scalar, not");
        int k = sc_lookup(key, names, count);
        if (k < 0)
            return sc_bad(c, key, "unknown key");
        if (keys[k])
            return sc_bad(c, key, "duplicate key");
        keys[k] = key;
        vals[k] = val;
    }
    return 0;
}
