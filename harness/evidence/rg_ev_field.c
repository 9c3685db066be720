/* SPDX-License-Identifier: MIT */
/* Reading the shim's event lines (rg_ev_field.h). The file is the shim's, written by a process
 * the runner may have killed: a torn last line is unreadable, and nothing in a line is trusted
 * to be in range. */
#include "evidence/rg_ev_field.h"
#include "rg_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* An event is at most 1 KiB (fi_event.c); a line longer than this is not the shim's. */
#define EV__LINE_MAX 4096

void rg_ev_bad(rg_ev_line *l, const char *fmt, ...)
{
    if (l->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->why, sizeof(l->why), fmt, ap);
    va_end(ap);
}

/* Identifiers (wr_id) are RG_HEX64 strings, read back exactly; counts are JSON integers. */
uint64_t rg_ev_u64(rg_ev_line *l, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    uint64_t x;
    if (!v)
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        return (uint64_t)json_integer_value(v);
    if (json_is_string(v) && !rg_parse_uint(json_string_value(v), true, 0, UINT64_MAX, &x) &&
        !strncmp(json_string_value(v), "0x", 2))
        return x;
    rg_ev_bad(l, "\"%s\" is not an unsigned 64-bit value", key);
    return 0;
}

double rg_ev_ms(rg_ev_line *l, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return -1;
    if (json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) < 1e15)
        return json_number_value(v);
    rg_ev_bad(l, "\"%s\" is not a time in ms", key);
    return -1;
}

const char *rg_ev_str(rg_ev_line *l, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (v && !json_is_string(v))
        rg_ev_bad(l, "\"%s\" is not a string", key);
    return json_is_string(v) ? json_string_value(v) : "";
}

bool rg_ev_bool(rg_ev_line *l, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (v && !json_is_boolean(v))
        rg_ev_bad(l, "\"%s\" is not true or false", key);
    return json_is_true(v);
}

static int each(const char *path, void (*take)(rg_ev_line *l, json_t *o, void *arg), void *arg,
                int *bad_lines, char *first, size_t firstlen, char *err, size_t errlen, bool shim)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    rg_ev_line l = {0};
    while ((n = getline(&line, &cap, f)) > 0) {
        l.no++;
        l.why[0] = '\0';
        if (n > EV__LINE_MAX) {
            rg_ev_bad(&l, "%zd bytes long, more than an event can be", n);
        } else if (line[n - 1] != '\n') {
            rg_ev_bad(&l, "cut short (no newline at the end of the file)");
        } else if (strlen(line) != (size_t)n) {
            rg_ev_bad(&l, "holds a NUL byte");
        } else {
            json_error_t je;
            json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
            if (!o)
                rg_ev_bad(&l, "not JSON: %s at column %d", je.text, je.column);
            else if (!json_is_object(o))
                rg_ev_bad(&l, "not a JSON object");
            else if (!shim || rg_ev_check(&l, o))
                take(&l, o, arg);
            json_decref(o);
        }
        if (l.why[0] && !(*bad_lines)++) {
            char shown[72];
            rg_parse_show(line, shown, sizeof(shown));
            snprintf(first, firstlen, "line %d: %s: '%s'", l.no, l.why, shown);
            /* jansson's message quotes the bytes it choked on: printable ASCII only, so the
             * finding stays one line and valid in report.json and the page. */
            for (char *p = first; *p; p++)
                if ((unsigned char)*p < ' ' || (unsigned char)*p >= 0x7f)
                    *p = '?';
        }
    }
    free(line);
    /* A read that stopped on an error, not at the end, left lines unread: not a whole file. */
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        snprintf(err, errlen, "%s: cannot read it to the end", path);
        return -1;
    }
    return 1;
}

int rg_ev_each(const char *path, void (*take)(rg_ev_line *l, json_t *o, void *arg), void *arg,
               int *bad_lines, char *first, size_t firstlen, char *err, size_t errlen)
{
    return each(path, take, arg, bad_lines, first, firstlen, err, errlen, false);
}

int rg_ev_each_shim(const char *path, void (*take)(rg_ev_line *l, json_t *o, void *arg), void *arg,
                    int *bad_lines, char *first, size_t firstlen, char *err, size_t errlen)
{
    return each(path, take, arg, bad_lines, first, firstlen, err, errlen, true);
}
