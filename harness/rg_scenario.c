/* SPDX-License-Identifier: MIT */
/*
 * Scenario files: YAML read with libyaml's document API, then checked node by node so every
 * message names the line of the value at fault. The harness does not link librailguard, so the
 * names of dtypes, reductions, QP types and algorithms are spelled out here, keyed by the
 * public header's enums.
 */
#include "rg_scenario.h"
#include "rg_harness.h"
#include "rg_data.h"
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

/* --- names --------------------------------------------------------------------------------- */

/*
 * Keyed by the enum values, so a reordering in railguard.h cannot skew a name. A value added
 * there and not here stays NULL and cannot be named in a scenario until it is added.
 */
static const char *const qp_names[] = {[RG_QPT_UC] = "uc", [RG_QPT_RC] = "rc"};

static const char *const algo_names[] = {
    [RG_ALGO_AUTO] = "auto",
    [RG_ALGO_RING] = "ring",
    [RG_ALGO_MESH] = "mesh",
};

static const char *const kind_names[RG_SC_KIND_COUNT] = {
    [RG_SC_ALL_REDUCE] = "all_reduce",
    [RG_SC_ALL_GATHER] = "all_gather",
    [RG_SC_REDUCE_SCATTER] = "reduce_scatter",
    [RG_SC_BROADCAST] = "broadcast",
    [RG_SC_SENDRECV] = "sendrecv",
    [RG_SC_BARRIER] = "barrier",
    [RG_SC_CREATE] = "create",
    [RG_SC_DESTROY] = "destroy",
};

static const char *const expect_names[] = {
    [RG_SC_EXPECT_OK] = "ok",
    [RG_SC_EXPECT_DETECTED] = "detected",
    [RG_SC_EXPECT_ANY] = "any",
    [RG_SC_EXPECT_KILLED] = "killed",
};

#define SC__COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *rg_sc_kind_name(rg_sc_kind k)
{
    return (unsigned)k < RG_SC_KIND_COUNT ? kind_names[k] : "?";
}

const char *rg_sc_expect_name(rg_sc_expect e)
{
    return (unsigned)e < (unsigned)SC__COUNT_OF(expect_names) ? expect_names[e] : "?";
}

/* A class is a status's name without RG_ERR_, in lower case: RG_ERR_PEER_ABORT, peer_abort. */
const char *rg_sc_class_name(int st, char *buf, size_t len)
{
    const char *n = rg_plugin_status_name(st);
    size_t i = 0;
    if (!n || st >= 0) {
        snprintf(buf, len, "?");
        return buf;
    }
    n += strlen("RG_ERR_");
    for (; n[i] && i + 1 < len; i++)
        buf[i] = (char)tolower((unsigned char)n[i]);
    buf[i] = '\0';
    return buf;
}

int rg_sc_class_of(const char *s, size_t len)
{
    char name[32];
    for (int st = -1; st > -RG_SC_CLASS_BITS; st--) {
        if (!rg_plugin_status_name(st))
            continue;
        rg_sc_class_name(st, name, sizeof(name));
        if (strlen(name) == len && !memcmp(name, s, len))
            return st;
    }
    return 0;
}

const char *rg_sc_expect_str(rg_sc_expect e, int at, uint32_t cls, char *buf, size_t len)
{
    size_t o;
    if (e != RG_SC_EXPECT_DETECTED || at == RG_SC_AT_ANY)
        o = (size_t)snprintf(buf, len, "%s", rg_sc_expect_name(e));
    else if (at == RG_SC_AT_INIT)
        o = (size_t)snprintf(buf, len, "detected@init");
    else
        o = (size_t)snprintf(buf, len, "detected@%d", at);
    const char *sep = ":";
    for (int b = 1; e == RG_SC_EXPECT_DETECTED && b < RG_SC_CLASS_BITS && o < len; b++) {
        char name[32];
        if (!(cls & (1u << b)))
            continue;
        o += (size_t)snprintf(buf + o, len - o, "%s%s", sep,
                              rg_sc_class_name(-b, name, sizeof(name)));
        sep = "|";
    }
    return buf;
}

int rg_sc_expect_parse(const char *s, size_t len, rg_sc_expect *e, int *at, uint32_t *cls)
{
    *at = RG_SC_AT_ANY;
    *cls = 0;
    /* detected[@init|@N][:class[|class...]] */
    const char *colon = memchr(s, ':', len);
    size_t head = colon ? (size_t)(colon - s) : len;
    const char *sep = memchr(s, '@', head);
    size_t name_len = sep ? (size_t)(sep - s) : head;
    int i = 0;
    for (; i < SC__COUNT_OF(expect_names); i++)
        if (strlen(expect_names[i]) == name_len && !memcmp(expect_names[i], s, name_len))
            break;
    if (i == SC__COUNT_OF(expect_names))
        return -1;
    *e = (rg_sc_expect)i;
    /* Only an error has a place it must come from, and a class. */
    if ((sep || colon) && i != RG_SC_EXPECT_DETECTED)
        return -1;
    if (sep) {
        const char *w = sep + 1;
        size_t wl = head - name_len - 1;
        if (wl == 0)
            return -1;
        if (wl == 4 && !memcmp(w, "init", 4)) {
            *at = RG_SC_AT_INIT;
        } else {
            int v = 0;
            for (size_t k = 0; k < wl; k++) {
                if (w[k] < '0' || w[k] > '9' || v > RG_SC_OPS_MAX)
                    return -1;
                v = v * 10 + (w[k] - '0');
            }
            *at = v;
        }
    }
    if (!colon)
        return 0;
    const char *c = colon + 1, *end = s + len;
    for (;;) {
        const char *bar = memchr(c, '|', (size_t)(end - c));
        const char *stop = bar ? bar : end;
        int st = rg_sc_class_of(c, (size_t)(stop - c));
        if (!st || (*cls & (1u << -st)))
            return -1; /* unknown or repeated */
        *cls |= 1u << -st;
        if (!bar)
            return 0;
        c = bar + 1;
    }
}

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
    T_KEYS
};

static const char *const top_keys[T_KEYS] = {
    [T_NAME] = "name",           [T_RANKS] = "ranks",
    [T_RAILS] = "rails",         [T_QP] = "qp",
    [T_ALGORITHM] = "algorithm", [T_TIMEOUT] = "timeout",
    [T_DEADLINE] = "deadline",   [T_SEED] = "seed",
    [T_FAULTS] = "faults",       [T_PROGRAM] = "program",
    [T_EXPECT] = "expect",       [T_ZERO_COPY] = "zero_copy",
    [T_OWNERSHIP] = "ownership", [T_EXEC] = "exec",
    [T_KNOWN] = "known",
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

static const char *const step_keys[S_KEYS] = {
    [S_OP] = "op",           [S_DTYPE] = "dtype",   [S_COUNT] = "count", [S_REDOP] = "redop",
    [S_ROOT] = "root",       [S_FROM] = "from",     [S_TO] = "to",       [S_REPEAT] = "repeat",
    [S_INPLACE] = "inplace", [S_VALUES] = "values",
};

#define B(k) (1u << (k))
#define DATA (B(S_DTYPE) | B(S_COUNT) | B(S_REPEAT))
/*
 * The keys each op takes besides "op". A key an op would ignore is refused, so a scenario
 * never reads as testing something it does not: broadcast has one buffer (always in place),
 * sendrecv two distinct ranks' buffers, and create and destroy happen once each where listed.
 */
static const unsigned kind_keys[RG_SC_KIND_COUNT] = {
    [RG_SC_ALL_REDUCE] = DATA | B(S_REDOP) | B(S_INPLACE) | B(S_VALUES),
    [RG_SC_ALL_GATHER] = DATA | B(S_INPLACE),
    [RG_SC_REDUCE_SCATTER] = DATA | B(S_REDOP) | B(S_INPLACE) | B(S_VALUES),
    [RG_SC_BROADCAST] = DATA | B(S_ROOT),
    [RG_SC_SENDRECV] = DATA | B(S_FROM) | B(S_TO),
    [RG_SC_BARRIER] = B(S_REPEAT),
    [RG_SC_CREATE] = 0,
    [RG_SC_DESTROY] = 0,
};

/* --- messages ------------------------------------------------------------------------------ */

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

static size_t line_of(const yaml_node_t *n)
{
    return n->start_mark.line + 1;
}

static int fail(const struct ctx *c, size_t line, const char *fmt, ...) SC__PRINTF(3, 4);

/* Writes "PATH:LINE: what" (no line when 0), made one line whatever the input held; -1. */
static int fail(const struct ctx *c, size_t line, const char *fmt, ...)
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

/* A node as a message shows it: a scalar cut at SC__SHOWN bytes, a collection as [...]. */
struct shown {
    char s[SC__SHOWN + 4];
};

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

static int bad(const struct ctx *c, const yaml_node_t *n, const char *fmt, ...) SC__PRINTF(3, 4);

/* "PATH:LINE: what 'token'", LINE and token those of node n. */
static int bad(const struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char what[160];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return fail(c, line_of(n), "%s '%s'", what, show(n).s);
}

/* libyaml's own problem text, at its line. */
static int yaml_fail(const struct ctx *c, const yaml_parser_t *p, const char *text, size_t len)
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
        return fail(c, line, "YAML: out of memory");
    return fail(c, line, "YAML: %s", p->problem ? p->problem : "unknown error");
}

/* --- values -------------------------------------------------------------------------------- */

static yaml_node_t *node_at(const struct ctx *c, int index)
{
    return yaml_document_get_node(c->doc, index);
}

static bool is_scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE;
}

/* Numbers and booleans are plain scalars: "2" in quotes is a string in YAML. */
static bool is_plain(const yaml_node_t *n)
{
    return is_scalar(n) && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* Compares by length, so a value with a NUL inside never matches a shorter name. */
static bool scalar_is(const yaml_node_t *n, const char *s)
{
    size_t len = strlen(s);
    return is_scalar(n) && n->data.scalar.length == len &&
           memcmp(n->data.scalar.value, s, len) == 0;
}

/* The index of the name n spells in names[0..count), or -1. */
static int lookup(const yaml_node_t *n, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (names[i] && scalar_is(n, names[i]))
            return i;
    return -1;
}

/*
 * "0" or [1-9][0-9]*, or with hex_ok 0x and hex digits, read by the shared parser
 * (rg_parse_uint: no blanks, signs or junk). A leading zero is refused because YAML 1.1 reads
 * "010" as octal 8.
 */
static int digits_u64(const char *v, size_t len, bool hex_ok, uint64_t *out)
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

static int plain_u64(const yaml_node_t *n, bool hex_ok, uint64_t *out)
{
    if (!is_plain(n))
        return -1;
    return digits_u64((const char *)n->data.scalar.value, n->data.scalar.length, hex_ok, out);
}

/* An integer lo..hi, else "<what> must be lo..hi 'value'". */
static int get_int(const struct ctx *c, const yaml_node_t *n, const char *what, long lo, long hi,
                   long *out)
{
    uint64_t u;

    if (plain_u64(n, false, &u) || u < (uint64_t)lo || u > (uint64_t)hi)
        return bad(c, n, "%s must be %ld..%ld", what, lo, hi);
    *out = (long)u;
    return 0;
}

/* Seconds in (0, max], as rg_parse_seconds reads them everywhere: digits and a point. */
static int get_seconds(const struct ctx *c, const yaml_node_t *n, const char *what, double max,
                       double *out)
{
    char buf[64];
    double v = 0;
    size_t len = is_plain(n) ? n->data.scalar.length : 0;
    if (len > 0 && len < sizeof(buf)) {
        memcpy(buf, n->data.scalar.value, len);
        buf[len] = '\0';
    } else {
        buf[0] = '\0';
    }
    if (rg_parse_seconds(buf, 0, max, &v) || !(v > 0))
        return bad(c, n, "%s must be in (0, %.0f]", what, max);
    *out = v;
    return 0;
}

static int get_name(const struct ctx *c, const yaml_node_t *n, const char *what,
                    const char *const *names, int count, int *out)
{
    int i = lookup(n, names, count);
    if (i < 0)
        return bad(c, n, "bad %s", what);
    *out = i;
    return 0;
}

/*
 * A scenario name: it ends up in file names and reports, so a conservative alphabet, and not
 * "." or "..", which would name a directory instead.
 */
static bool valid_name(const char *s, size_t len)
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
static int default_name(const struct ctx *c, char *name)
{
    const char *base = strrchr(c->path, '/');
    base = base ? base + 1 : c->path;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".yaml") == 0)
        len -= 5;
    else if (len > 4 && strcmp(base + len - 4, ".yml") == 0)
        len -= 4;
    if (!valid_name(base, len)) {
        char shown[SC__SHOWN + 4];
        snprintf(shown, sizeof(shown), "%.*s%s", (int)(len > SC__SHOWN ? SC__SHOWN : len), base,
                 len > SC__SHOWN ? "..." : "");
        return fail(c, 1, "no name, and the file name is not a valid one '%s'", shown);
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
static int collect(const struct ctx *c, const yaml_node_t *m, const char *const *names, int count,
                   yaml_node_t **keys, yaml_node_t **vals)
{
    for (int k = 0; k < count; k++)
        keys[k] = vals[k] = NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *key = node_at(c, p->key), *val = node_at(c, p->value);
        if (!key || !val)
            return fail(c, line_of(m), "YAML: broken document");
        if (!is_scalar(key))
            return bad(c, key, "a key must be a scalar, not");
        int k = lookup(key, names, count);
        if (k < 0)
            return bad(c, key, "unknown key");
        if (keys[k])
            return bad(c, key, "duplicate key");
        keys[k] = key;
        vals[k] = val;
    }
    return 0;
}

/* --- program ------------------------------------------------------------------------------- */

/* One step; *live says whether the communicator exists (create and destroy change it). */
static int parse_step(const struct ctx *c, const yaml_node_t *step, rg_sc_op *op, bool *live)
{
    yaml_node_t *keys[S_KEYS], *vals[S_KEYS];
    int i = 0;
    long v = 0;

    if (step->type != YAML_MAPPING_NODE)
        return bad(c, step, "a step must be a mapping, not");
    if (collect(c, step, step_keys, S_KEYS, keys, vals))
        return -1;
    if (!vals[S_OP])
        return fail(c, line_of(step), "step without key 'op'");
    if (get_name(c, vals[S_OP], "op", kind_names, RG_SC_KIND_COUNT, &i))
        return -1;

    op->kind = (rg_sc_kind)i;
    op->dtype = RG_FLOAT32;
    op->redop = RG_SUM;
    op->count = 1;
    op->root = 0;
    /* Not a rank: the ops other than sendrecv have no sender or receiver. */
    op->from = op->to = -1;
    op->repeat = 1;
    op->inplace = false;
    op->values = RG_VALUES_EXACT;
    op->line = (int)line_of(keys[S_OP]);

    const char *kind = kind_names[op->kind];
    int last_rank = c->sc->ranks - 1;
    /* In file order, so the first wrong value in the step is the one reported. */
    for (yaml_node_pair_t *p = step->data.mapping.pairs.start; p < step->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = node_at(c, p->key), *val = node_at(c, p->value);
        int k = lookup(key, step_keys, S_KEYS);
        if (k == S_OP)
            continue;
        if (!(kind_keys[op->kind] & B(k)))
            return bad(c, key, "%s does not take", kind);
        switch (k) {
        case S_DTYPE:
            if (get_name(c, val, "dtype", rg_data_dtype_names, RG_DTYPE_COUNT, &i))
                return -1;
            op->dtype = (rg_dtype)i;
            break;
        case S_REDOP:
            if (get_name(c, val, "redop", rg_data_redop_names, RG_REDOP_COUNT, &i))
                return -1;
            op->redop = (rg_redop)i;
            break;
        case S_COUNT:
            if (get_int(c, val, "count", 1, RG_SC_COUNT_MAX, &v))
                return -1;
            op->count = (size_t)v;
            break;
        case S_ROOT:
            if (get_int(c, val, "root", 0, last_rank, &v))
                return -1;
            op->root = (int)v;
            break;
        case S_FROM:
            if (get_int(c, val, "from", 0, last_rank, &v))
                return -1;
            op->from = (int)v;
            break;
        case S_TO:
            if (get_int(c, val, "to", 0, last_rank, &v))
                return -1;
            op->to = (int)v;
            break;
        case S_REPEAT:
            if (get_int(c, val, "repeat", 1, SC__REPEAT_MAX, &v))
                return -1;
            op->repeat = (int)v;
            break;
        case S_INPLACE:
            if (!is_plain(val) || !(scalar_is(val, "true") || scalar_is(val, "false")))
                return bad(c, val, "inplace must be true or false");
            op->inplace = scalar_is(val, "true");
            break;
        case S_VALUES:
            if (get_name(c, val, "values", rg_data_values_names, RG_VALUES_COUNT, &i))
                return -1;
            op->values = i;
            break;
        }
    }
    /* Checked once dtype and redop are known, whatever order the keys came in. */
    if (vals[S_VALUES]) {
        const char *why = rg_data_values_problem((rg_values)op->values, op->dtype, op->redop);
        if (why)
            return bad(c, vals[S_VALUES], "%s: %s %s", why, rg_data_dtype_name(op->dtype),
                       rg_data_redop_name(op->redop));
    }

    if (op->kind == RG_SC_SENDRECV) {
        if (!vals[S_FROM])
            return fail(c, (size_t)op->line, "sendrecv without key 'from'");
        if (!vals[S_TO])
            return fail(c, (size_t)op->line, "sendrecv without key 'to'");
        if (op->from == op->to)
            return bad(c, vals[S_TO], "from and to must differ");
    }
    /* As the transport's rg_redop_supported(): complex numbers have no order. */
    if (op->dtype == RG_COMPLEX64 && (op->redop == RG_MAX || op->redop == RG_MIN))
        return bad(c, vals[S_REDOP], "complex64 cannot reduce with");

    if (op->kind == RG_SC_CREATE) {
        if (*live)
            return bad(c, vals[S_OP], "the communicator already exists, cannot");
        *live = true;
    } else if (!*live) {
        return bad(c, vals[S_OP], "no communicator (destroyed above) for");
    } else if (op->kind == RG_SC_DESTROY) {
        *live = false;
    }
    return 0;
}

static int parse_program(const struct ctx *c, const yaml_node_t *n)
{
    /* The program starts with the communicator created. */
    bool live = true;

    if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top == n->data.sequence.items.start)
        return bad(c, n, "program must be a non-empty sequence of steps, not");
    int nops = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        const yaml_node_t *step = node_at(c, *it);
        if (!step)
            return fail(c, line_of(n), "YAML: broken document");
        if (nops == RG_SC_OPS_MAX)
            return fail(c, line_of(step), "program of more than %d steps", RG_SC_OPS_MAX);
        if (parse_step(c, step, &c->sc->ops[nops], &live))
            return -1;
        nops++;
    }
    c->sc->nops = nops;
    return 0;
}

/* --- exec ---------------------------------------------------------------------------------- */

/* One command string: not empty, no control character, at most 16 blank-separated words. */
static int get_command(const struct ctx *c, const yaml_node_t *n, const char *what, char *out)
{
    if (!is_scalar(n))
        return bad(c, n, "exec: %s must be a string, not", what);
    const char *v = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    int words = 0;
    if (len >= RG_SC_EXEC_MAX)
        return bad(c, n, "exec: %s longer than %d characters", what, RG_SC_EXEC_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)v[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return bad(c, n, "exec: %s: control character in", what);
        words += ch != ' ' && ch != '\t' && (i == 0 || v[i - 1] == ' ' || v[i - 1] == '\t');
    }
    if (!words)
        return bad(c, n, "exec: %s is empty", what);
    if (words > 16)
        return bad(c, n, "exec: %s has more than 16 words", what);
    memcpy(out, v, len);
    out[len] = '\0';
    return 0;
}

static int parse_exec(const struct ctx *c, const yaml_node_t *n)
{
    rg_sc_exec *x = &c->sc->exec;
    const yaml_node_t *cmd = NULL, *server = NULL, *client = NULL, *after = NULL;
    if (n->type != YAML_MAPPING_NODE)
        return bad(c, n, "exec must be a mapping (command, or server and client), not");
    x->on = true;
    x->client_after = -1;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = node_at(c, p->key), *val = node_at(c, p->value);
        if (!key || !val)
            return fail(c, line_of(n), "YAML: broken document");
        if (scalar_is(key, "command") && !cmd) {
            cmd = val;
            if (get_command(c, val, "command", x->command))
                return -1;
        } else if (scalar_is(key, "server") && !server) {
            server = val;
            if (get_command(c, val, "server", x->server))
                return -1;
        } else if (scalar_is(key, "client") && !client) {
            client = val;
            if (get_command(c, val, "client", x->client))
                return -1;
        } else if (scalar_is(key, "client_after") && !after) {
            after = val;
            if (get_seconds(c, val, "exec: client_after", 3600, &x->client_after))
                return -1;
        } else {
            return bad(c, key,
                       "exec: unknown or repeated key (command, server, client, client_after)");
        }
    }
    if (cmd && (server || client))
        return bad(c, cmd, "exec: command, or server and client, not both:");
    if (!cmd && !(server && client))
        return fail(c, line_of(n), "exec: needs command, or server and client");
    if (after && cmd)
        return bad(c, after, "exec: client_after goes with server and client, not");
    return 0;
}

/* --- faults, expect ------------------------------------------------------------------------ */

/* The one fault rule an item holds, checked alone by the plan library (the shim's own parser). */
static int parse_fault_rule(const struct ctx *c, const yaml_node_t *f, int item, rg_sc_fault *out)
{
    struct fi_plan plan;
    char err[320];
    const char *v = (const char *)f->data.scalar.value;
    size_t len = f->data.scalar.length;
    bool blank = true;

    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)v[i];
        /* Items are joined one per line: any of these would end or cut a rule of the plan. */
        if (ch == ';')
            return bad(c, f, "faults item %d: one rule per item, no ';' in", item);
        if (ch < 0x20 || ch == 0x7f)
            return bad(c, f, "faults item %d: control character in", item);
        if (ch == '#' && (i == 0 || v[i - 1] == ' '))
            return bad(c, f, "faults item %d: no comments in a rule ('#' starts one)", item);
        blank = blank && ch == ' ';
    }
    if (blank)
        return bad(c, f, "faults item %d: empty rule", item);
    if (len >= sizeof(out->rule))
        return bad(c, f, "faults item %d: longer than %zu characters", item, sizeof(out->rule) - 1);
    memcpy(out->rule, v, len);
    out->rule[len] = '\0';
    out->line = (int)line_of(f);
    if (fi_plan_parse(out->rule, "", &plan, err, sizeof(err)) != 0) {
        /* The library says ":1: what 'token'"; the line that matters is the file's. */
        const char *what = strstr(err, ": ");
        return fail(c, line_of(f), "faults item %d: %s", item, what ? what + 2 : err);
    }
    if (plan.nrules != 1)
        return bad(c, f, "faults item %d: one rule per item, not %d in", item, plan.nrules);
    out->kind = (int)plan.rules[0].kind;
    if (out->kind == FI_OWNERSHIP)
        return bad(c, f,
                   "faults item %d: the sanitizer is the scenario's key 'ownership', not a "
                   "fault:",
                   item);
    return 0;
}

/*
 * Each item is one rule: a string, or a mapping {rule: STRING, optional: true|false} for a rule
 * the scenario allows never to fire. The rules are joined one per line, as the plan file each
 * rank is given holds them, and the joined plan is parsed whole once more, so a limit that only
 * the whole plan can break (the number of rules) is caught here, before anything runs.
 */
static int parse_faults(const struct ctx *c, const yaml_node_t *n)
{
    rg_scenario *sc = c->sc;
    char *out = sc->faults;
    size_t used = 0;
    struct fi_plan plan;
    char err[320];

    if (n->type != YAML_SEQUENCE_NODE)
        return bad(c, n, "faults must be a sequence of rules, not");
    sc->nfaults = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        const yaml_node_t *f = node_at(c, *it), *rule = f;
        int item = sc->nfaults + 1;
        bool optional = false;
        if (!f)
            return fail(c, line_of(n), "YAML: broken document");
        if (sc->nfaults == FI_MAX_RULES)
            return bad(c, f, "faults: at most %d rules, item %d is one more", FI_MAX_RULES, item);
        if (f->type == YAML_MAPPING_NODE) {
            rule = NULL;
            for (yaml_node_pair_t *p = f->data.mapping.pairs.start; p < f->data.mapping.pairs.top;
                 p++) {
                const yaml_node_t *key = node_at(c, p->key), *val = node_at(c, p->value);
                if (!key || !val)
                    return fail(c, line_of(f), "YAML: broken document");
                if (scalar_is(key, "rule") && !rule) {
                    rule = val;
                } else if (scalar_is(key, "optional")) {
                    if (!is_plain(val) || !(scalar_is(val, "true") || scalar_is(val, "false")))
                        return bad(c, val, "faults item %d: optional must be true or false", item);
                    optional = scalar_is(val, "true");
                } else {
                    return bad(c, key, "faults item %d: unknown or repeated key (rule, optional)",
                               item);
                }
            }
            if (!rule)
                return fail(c, line_of(f), "faults item %d: missing key 'rule'", item);
        }
        if (!is_scalar(rule))
            return bad(c, rule, "faults item %d: a rule must be a string, not", item);
        rg_sc_fault *fl = &sc->fault[sc->nfaults];
        if (parse_fault_rule(c, rule, item, fl))
            return -1;
        fl->optional = optional;
        size_t len = strlen(fl->rule), sep = used ? 1 : 0;
        if (used + sep + len >= RG_SC_FAULTS_MAX)
            return bad(c, rule, "faults longer than %d characters in all at", RG_SC_FAULTS_MAX - 1);
        memcpy(out + used, "\n", sep);
        memcpy(out + used + sep, fl->rule, len);
        used += sep + len;
        out[used] = '\0';
        sc->nfaults++;
    }
    if (fi_plan_parse(out, c->path, &plan, err, sizeof(err)) != 0)
        return fail(c, line_of(n), "faults: the joined plan: %s", err);
    if (plan.nrules != sc->nfaults)
        return fail(c, line_of(n), "faults: the joined plan has %d rules for %d items", plan.nrules,
                    sc->nfaults);
    return 0;
}

/*
 * known: a failure verdict per rank ("all" or a rank), and why (required, one line): the
 * scenario's known failure, which the judge reports as xfail rather than failing the run.
 */
static int parse_known(const struct ctx *c, const yaml_node_t *n)
{
    rg_scenario *sc = c->sc;
    int all = -1, per_rank[RG_MAX_RANKS];
    bool named[RG_MAX_RANKS] = {false}, seen_all = false, seen_why = false;
    if (n->type != YAML_MAPPING_NODE)
        return bad(c, n, "known must be a mapping (why, and verdicts by rank or all), not");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = node_at(c, p->key), *val = node_at(c, p->value);
        uint64_t r = 0;
        if (!key || !val)
            return fail(c, line_of(n), "YAML: broken document");
        if (scalar_is(key, "why")) {
            size_t len = is_scalar(val) ? val->data.scalar.length : 0;
            const char *v = is_scalar(val) ? (const char *)val->data.scalar.value : "";
            if (seen_why)
                return bad(c, key, "known: duplicate key");
            if (!len || len >= sizeof(sc->known_why))
                return bad(c, val, "known: why must be 1..%zu characters, not",
                           sizeof(sc->known_why) - 1);
            for (size_t i = 0; i < len; i++)
                if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
                    return bad(c, val, "known: why must be one line, not");
            memcpy(sc->known_why, v, len);
            sc->known_why[len] = '\0';
            seen_why = true;
            continue;
        }
        bool is_all = scalar_is(key, "all");
        if (!is_all &&
            (!is_scalar(key) ||
             digits_u64((const char *)key->data.scalar.value, key->data.scalar.length, false, &r) ||
             r >= (uint64_t)sc->ranks))
            return bad(c, key, "known: a key is why, all or a rank 0..%d, not", sc->ranks - 1);
        if (is_all ? seen_all : named[r])
            return bad(c, key, "known: duplicate key");
        char name[40] = "";
        if (is_scalar(val) && val->data.scalar.length < sizeof(name))
            memcpy(name, val->data.scalar.value, val->data.scalar.length);
        int v = rg_verdict_of(name);
        if (v <= RG_V_KILLED)
            return bad(c, val,
                       "known: a failure verdict (NOT_EXERCISED ... SILENT_CORRUPTION), not");
        if (is_all) {
            seen_all = true;
            all = v;
        } else {
            named[r] = true;
            per_rank[r] = v;
        }
    }
    if (!seen_why)
        return fail(c, line_of(n), "known: needs why (the reason, or an upstream link)");
    if (!seen_all) {
        bool any = false;
        for (int r = 0; r < sc->ranks; r++)
            any |= named[r];
        if (!any)
            return fail(c, line_of(n), "known: names no verdict (all, or a rank)");
    }
    for (int r = 0; r < sc->ranks; r++)
        sc->known[r] = named[r] ? per_rank[r] : all < 0 ? 0 : all;
    return 0;
}

/* "all" first, then the ranks named, whatever their order in the file. */
static int parse_expect(const struct ctx *c, const yaml_node_t *n)
{
    const yaml_node_t *all_key = NULL, *rank_key[RG_MAX_RANKS] = {NULL};
    int all = RG_SC_EXPECT_OK, per_rank[RG_MAX_RANKS] = {0};
    int all_at = RG_SC_AT_ANY, at_rank[RG_MAX_RANKS];
    uint32_t all_cls = 0, cls_rank[RG_MAX_RANKS];
    int ranks = c->sc->ranks;

    if (n->type != YAML_MAPPING_NODE)
        return bad(c, n, "expect must be a mapping, not");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = node_at(c, p->key), *val = node_at(c, p->value);
        uint64_t r = 0;
        int e = 0;
        if (!key || !val)
            return fail(c, line_of(n), "YAML: broken document");
        if (!is_scalar(key))
            return bad(c, key, "a key must be a scalar, not");
        bool is_all = scalar_is(key, "all");
        /* Plain or quoted alike: a key is a name here, not a number to compute with. */
        if (!is_all) {
            if (digits_u64((const char *)key->data.scalar.value, key->data.scalar.length, false,
                           &r))
                return bad(c, key, "unknown key");
            if (r >= (uint64_t)ranks)
                return bad(c, key, "expect rank must be 0..%d", ranks - 1);
        }
        if (is_all ? all_key != NULL : rank_key[r] != NULL)
            return bad(c, key, "duplicate key");
        rg_sc_expect ev;
        int at;
        uint32_t cls;
        if (!is_scalar(val) || rg_sc_expect_parse((const char *)val->data.scalar.value,
                                                  val->data.scalar.length, &ev, &at, &cls) != 0)
            return bad(c, val, "expect must be " RG_SC_EXPECT_FORMS ", not");
        e = (int)ev;
        if (cls && !c->sc->expect_cls_line)
            c->sc->expect_cls_line = (int)line_of(val);
        if (at > c->sc->expect_at_max) {
            c->sc->expect_at_max = at;
            c->sc->expect_at_line = (int)line_of(val);
        }
        if (is_all) {
            all_key = key;
            all = e;
            all_at = at;
            all_cls = cls;
            continue;
        }
        rank_key[r] = key;
        per_rank[r] = e;
        at_rank[r] = at;
        cls_rank[r] = cls;
    }
    for (int r = 0; r < ranks; r++) {
        c->sc->expect[r] = (rg_sc_expect)(rank_key[r] ? per_rank[r] : all);
        c->sc->expect_at[r] = rank_key[r] ? at_rank[r] : all_at;
        c->sc->expect_cls[r] = rank_key[r] ? cls_rank[r] : all_cls;
    }
    return 0;
}

/* --- the document -------------------------------------------------------------------------- */

static int parse_top(const struct ctx *c, const yaml_node_t *root)
{
    yaml_node_t *keys[T_KEYS], *vals[T_KEYS];
    rg_scenario *sc = c->sc;
    long v = 0;
    int i = 0;

    if (root->type != YAML_MAPPING_NODE)
        return bad(c, root, "a scenario must be a mapping, not");
    if (collect(c, root, top_keys, T_KEYS, keys, vals))
        return -1;

    sc->rails = 1;
    sc->qp = RG_QPT_UC;
    sc->algo = RG_ALGO_AUTO;
    sc->timeout_s = 10;
    sc->deadline_s = 60;
    sc->seed = 1;
    sc->faults[0] = '\0';
    sc->nfaults = 0;
    sc->zero_copy = false;
    sc->ownership = true;
    for (int r = 0; r < RG_MAX_RANKS; r++) {
        sc->expect[r] = RG_SC_EXPECT_OK;
        sc->expect_at[r] = RG_SC_AT_ANY;
        sc->expect_cls[r] = 0;
    }
    sc->expect_at_max = RG_SC_AT_ANY;
    sc->expect_at_line = 0;
    sc->expect_cls_line = 0;
    sc->known_why[0] = '\0';

    /* ranks first: root, from, to and expect's keys are checked against it wherever it is. */
    if (!vals[T_RANKS])
        return fail(c, line_of(root), "missing key 'ranks'");
    /* A program under exec may be one process (a loopback tool); collectives need two. */
    if (get_int(c, vals[T_RANKS], "ranks", vals[T_EXEC] ? 1 : 2, RG_MAX_RANKS, &v))
        return -1;
    sc->ranks = (int)v;

    /* The rest in file order, so the first wrong value in the file is the one reported. */
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *val = node_at(c, p->value);
        int rc = 0;
        switch (lookup(node_at(c, p->key), top_keys, T_KEYS)) {
        case T_NAME:
            if (!is_scalar(val) ||
                !valid_name((const char *)val->data.scalar.value, val->data.scalar.length))
                return bad(c, val, "name must be 1..%d characters of [A-Za-z0-9._-]",
                           RG_SC_NAME_MAX - 1);
            memcpy(sc->name, val->data.scalar.value, val->data.scalar.length);
            sc->name[val->data.scalar.length] = '\0';
            break;
        case T_RAILS:
            if (get_int(c, val, "rails", 1, RG_MAX_RAILS, &v))
                return -1;
            sc->rails = (int)v;
            break;
        case T_QP:
            if (get_name(c, val, "qp", qp_names, SC__COUNT_OF(qp_names), &i))
                return -1;
            sc->qp = (rg_qp_type)i;
            break;
        case T_ALGORITHM:
            if (get_name(c, val, "algorithm", algo_names, SC__COUNT_OF(algo_names), &i))
                return -1;
            sc->algo = (rg_algo)i;
            break;
        case T_TIMEOUT:
            rc = get_seconds(c, val, "timeout", SC__TIMEOUT_MAX, &sc->timeout_s);
            break;
        case T_DEADLINE:
            rc = get_seconds(c, val, "deadline", SC__DEADLINE_MAX, &sc->deadline_s);
            break;
        case T_SEED:
            if (plain_u64(val, true, &sc->seed))
                return bad(c, val, "seed must be 0..2^64-1 (decimal or 0x hex)");
            break;
        case T_FAULTS:
            rc = parse_faults(c, val);
            break;
        case T_PROGRAM:
            rc = parse_program(c, val);
            break;
        case T_EXPECT:
            rc = parse_expect(c, val);
            break;
        case T_ZERO_COPY:
            if (!is_plain(val) || !(scalar_is(val, "true") || scalar_is(val, "false")))
                return bad(c, val, "zero_copy must be true or false");
            sc->zero_copy = scalar_is(val, "true");
            break;
        case T_OWNERSHIP:
            if (!is_plain(val) || !(scalar_is(val, "true") || scalar_is(val, "false")))
                return bad(c, val, "ownership must be true or false");
            sc->ownership = scalar_is(val, "true");
            break;
        case T_KNOWN:
            rc = parse_known(c, val);
            break;
        case T_EXEC:
            rc = parse_exec(c, val);
            sc->exec.line = (int)line_of(node_at(c, p->key)); /* the line of "exec:" */
            break;
        default: /* T_RANKS, read above */
            break;
        }
        if (rc)
            return -1;
    }

    if (vals[T_EXEC]) {
        /* A program brings its own transport settings: a key it would ignore is refused. */
        static const int theirs[] = {T_PROGRAM, T_RAILS, T_QP, T_ALGORITHM, T_TIMEOUT, T_ZERO_COPY};
        for (size_t k = 0; k < SC__COUNT_OF(theirs); k++)
            if (vals[theirs[k]])
                return fail(c, line_of(vals[theirs[k]]),
                            "'%s' is for program steps; an exec program has its own",
                            top_keys[theirs[k]]);
        if (sc->exec.server[0] && sc->ranks != 2)
            return bad(c, vals[T_RANKS], "exec: a server and a client are 2 ranks, not");
        /* No communicator timeout: SLOW_DETECTION's bound is half the deadline. */
        sc->timeout_s = sc->deadline_s;
    } else if (!vals[T_PROGRAM]) {
        return fail(c, line_of(root), "missing key 'program' (or exec)");
    }
    if (sc->expect_at_max >= sc->nops)
        return fail(c, (size_t)sc->expect_at_line,
                    "expect: detected@%d names no step (the program has %d, from 0)",
                    sc->expect_at_max, sc->nops);
    /* A program run by exec has no calls of ours to carry a status. */
    if (sc->exec.on && sc->expect_cls_line)
        return fail(c, (size_t)sc->expect_cls_line,
                    "expect: an exec program reports no status: a class (detected:CLASS) "
                    "needs a program of steps");
    /* The runner's deadline must leave the transport time to report its own timeout. */
    if (!sc->exec.on && sc->deadline_s <= sc->timeout_s) {
        if (vals[T_DEADLINE])
            return bad(c, vals[T_DEADLINE], "deadline must be more than timeout");
        return bad(c, vals[T_TIMEOUT], "timeout must be less than the deadline (default %.0f)",
                   sc->deadline_s);
    }
    /* The runner adds the sanitizer's rule to the plan it hands the ranks. */
    if (sc->ownership && sc->nfaults >= FI_MAX_RULES)
        return bad(c, vals[T_FAULTS],
                   "faults: %d rules and the ownership sanitizer's make more "
                   "than %d (set ownership: false) at",
                   sc->nfaults, FI_MAX_RULES);
    if (!vals[T_NAME])
        return default_name(c, sc->name);
    return 0;
}

/*
 * The first pass: libyaml's events, before any document is built. Refuses what no scenario
 * needs and what would make the composer slow (see SC__DEPTH_MAX), and a second document,
 * which yaml_parser_load would silently leave unread.
 */
static int screen(const struct ctx *c, const char *text, size_t len)
{
    yaml_parser_t p;
    int depth = 0, anchors = 0, aliases = 0, docs = 0, rc = 1;

    if (!yaml_parser_initialize(&p))
        return fail(c, 0, "YAML: out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (rc > 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = yaml_fail(c, &p, text, len);
            break;
        }
        size_t line = ev.start_mark.line + 1;
        const yaml_char_t *anchor = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            rc = 0;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = fail(c, line, "more than one YAML document");
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            anchor = ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                                          : ev.data.mapping_start.anchor;
            if (++depth > SC__DEPTH_MAX)
                rc = fail(c, line, "YAML: nested deeper than %d levels", SC__DEPTH_MAX);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_SCALAR_EVENT:
            anchor = ev.data.scalar.anchor;
            break;
        case YAML_ALIAS_EVENT:
            if (++aliases > SC__ALIASES_MAX)
                rc = fail(c, line, "YAML: more than %d aliases", SC__ALIASES_MAX);
            break;
        default:
            break;
        }
        if (rc > 0 && anchor && ++anchors > SC__ANCHORS_MAX)
            rc = fail(c, line, "YAML: more than %d anchors", SC__ANCHORS_MAX);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/*
 * Parses text as one YAML document of plain values (no tags) and hands its root to `top`:
 * the one way every file here is read, scenarios and known-failures files alike.
 */
static int parse_doc(struct ctx *c, const char *text, size_t len, const char *empty,
                     int (*top)(const struct ctx *, const yaml_node_t *))
{
    yaml_parser_t parser;
    yaml_document_t doc;
    bool parser_up = false, doc_up = false;
    int rc = -1;

    if (screen(c, text, len))
        goto done;
    if (!yaml_parser_initialize(&parser)) {
        fail(c, 0, "YAML: out of memory");
        goto done;
    }
    parser_up = true;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    /* On failure yaml_parser_load has deleted the document itself. */
    if (!yaml_parser_load(&parser, &doc)) {
        yaml_fail(c, &parser, text, len);
        goto done;
    }
    doc_up = true;
    /*
     * No tags: libyaml gives "!!str 2" the same tag as a plain 2, so "ranks: !!str 2" would
     * read as the number a YAML reader elsewhere takes for a string. A node whose text starts
     * with '!' carries a tag; every value here is plain.
     */
    for (yaml_node_t *n = doc.nodes.start; n < doc.nodes.top; n++) {
        size_t at = n->start_mark.index;
        if (at < len && text[at] == '!') {
            size_t k = at;
            while (k < len && k - at < 24 && text[k] != ' ' && text[k] != '\n')
                k++;
            fail(c, n->start_mark.line + 1,
                 "a YAML tag is not allowed here: values are plain '%.*s'", (int)(k - at),
                 text + at);
            goto done;
        }
    }

    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    /* No document, or one that is only "---": YAML's null. */
    if (!root || (is_plain(root) && root->data.scalar.length == 0)) {
        fail(c, 1, "%s", empty);
        goto done;
    }
    c->doc = &doc;
    rc = top(c, root);
    c->doc = NULL;

done:
    if (doc_up)
        yaml_document_delete(&doc);
    if (parser_up)
        yaml_parser_delete(&parser);
    return rc;
}

int rg_scenario_parse(const char *text, size_t len, const char *path, rg_scenario *sc, char *err,
                      size_t errlen)
{
    struct ctx c = {.path = path ? path : "<scenario>", .err = err, .errlen = errlen};
    rg_scenario *out = NULL;
    int rc = -1;

    if (err && errlen > 0)
        err[0] = '\0';
    if (!sc || (!text && len)) {
        fail(&c, 0, "rg_scenario_parse: no scenario to fill or no text");
        goto done;
    }
    if (!text)
        text = "";
    /*
     * Parsed into a copy: on failure the caller's scenario is cleared (below), never left half
     * filled with defaults and the values read before the error.
     */
    out = calloc(1, sizeof(*out));
    if (!out) {
        fail(&c, 0, "out of memory");
        goto done;
    }
    c.sc = out;
    rc = parse_doc(&c, text, len, "empty scenario", parse_top);

done:
    if (sc) {
        if (rc == 0)
            *sc = *out;
        else
            memset(sc, 0, sizeof(*sc));
    }
    free(out);
    return rc;
}

/* Reads a small regular file whole (at most 1 MiB): 0 with *buf (the caller frees it). */
static int read_small(const struct ctx *c, const char *path, char **buf, size_t *n)
{
    *buf = NULL;
    *n = 0;
    /* Non-blocking, and regular files only: a FIFO or a device would block or never end. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0)
        return fail(c, 0, "cannot open: %s", strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return fail(c, 0, "not a regular file");
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return fail(c, 0, "cannot open: %s", strerror(e));
    }
    /* One byte past the limit tells a file at the limit from a larger one, even an endless one. */
    char *b = malloc(SC__FILE_MAX + 1);
    size_t got = b ? fread(b, 1, SC__FILE_MAX + 1, f) : 0;
    int read_errno = errno, read_failed = b && ferror(f);
    fclose(f);
    if (!b)
        return fail(c, 0, "out of memory");
    if (read_failed || got > SC__FILE_MAX) {
        free(b);
        return read_failed ? fail(c, 0, "cannot read: %s", strerror(read_errno))
                           : fail(c, 0, "larger than 1 MiB");
    }
    *buf = b;
    *n = got;
    return 0;
}

int rg_scenario_load(const char *path, rg_scenario *sc, char *err, size_t errlen)
{
    struct ctx c = {.path = path ? path : "<scenario>", .err = err, .errlen = errlen};
    char *buf = NULL;
    size_t n = 0;
    int rc = -1;

    if (err && errlen > 0)
        err[0] = '\0';
    if (!path)
        fail(&c, 0, "rg_scenario_load: no path");
    else if (read_small(&c, path, &buf, &n) == 0)
        rc = rg_scenario_parse(buf, n, path, sc, err, errlen);
    if (rc && sc)
        memset(sc, 0, sizeof(*sc));
    free(buf);
    return rc;
}

/* --- known-failures files ------------------------------------------------------------------ */

/*
 * transport: NAME (optional: the file is refused for another transport), and known: a mapping
 * of scenario name to the scenario's known: block (parse_known's grammar). An entry replaces
 * the scenario's own; one naming a scenario not in this run is noted, not an error (a run of
 * part of the suite).
 */
static int parse_known_file(const struct ctx *cc, const yaml_node_t *root)
{
    struct ctx c = *cc;
    const yaml_node_t *known = NULL;
    bool named = false;
    if (root->type != YAML_MAPPING_NODE)
        return bad(&c, root, "a known-failures file must be a mapping (transport, known), not");
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *key = node_at(&c, p->key), *val = node_at(&c, p->value);
        if (!key || !val)
            return fail(&c, line_of(root), "YAML: broken document");
        if (scalar_is(key, "transport") && !named) {
            named = true;
            if (!is_scalar(val) || !val->data.scalar.length)
                return bad(&c, val, "transport must be the plugin's name, not");
            if (c.transport && strcmp((const char *)val->data.scalar.value, c.transport))
                return bad(&c, val, "transport: the run's is '%s', the file's", c.transport);
        } else if (scalar_is(key, "known") && !known) {
            known = val;
        } else {
            return bad(&c, key, "unknown or repeated key (transport, known)");
        }
    }
    if (!known)
        return fail(&c, line_of(root), "missing key 'known'");
    if (known->type != YAML_MAPPING_NODE)
        return bad(&c, known, "known must map scenario names to their known failure, not");
    for (yaml_node_pair_t *p = known->data.mapping.pairs.start; p < known->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *key = node_at(&c, p->key), *val = node_at(&c, p->value);
        if (!key || !val)
            return fail(&c, line_of(known), "YAML: broken document");
        if (!is_scalar(key) ||
            !valid_name((const char *)key->data.scalar.value, key->data.scalar.length))
            return bad(&c, key, "a scenario name must be 1..%d characters of [A-Za-z0-9._-], not",
                       RG_SC_NAME_MAX - 1);
        rg_scenario *sc = NULL;
        for (int i = 0; i < c.nall && !sc; i++)
            if (!strcmp(c.all[i]->name, (const char *)key->data.scalar.value))
                sc = c.all[i];
        if (!sc) {
            size_t u = c.notes ? strlen(c.notes) : 0;
            if (c.notes && u + 1 < c.noteslen)
                snprintf(c.notes + u, c.noteslen - u, "%s:%zu: no scenario '%s' in this run\n",
                         c.path, line_of(key), (const char *)key->data.scalar.value);
            continue;
        }
        /* Checked against that scenario's ranks, into a copy: a bad entry changes nothing. */
        rg_scenario tmp = *sc;
        c.sc = &tmp;
        if (parse_known(&c, val))
            return -1;
        memcpy(sc->known, tmp.known, sizeof(sc->known));
        memcpy(sc->known_why, tmp.known_why, sizeof(sc->known_why));
    }
    return 0;
}

int rg_known_load(const char *path, const char *transport, rg_scenario *const *scs, int n,
                  char *notes, size_t noteslen, char *err, size_t errlen)
{
    struct ctx c = {.path = path ? path : "<known>",
                    .err = err,
                    .errlen = errlen,
                    .all = scs,
                    .nall = n,
                    .transport = transport,
                    .notes = notes,
                    .noteslen = noteslen};
    char *buf = NULL;
    size_t len = 0;
    int rc = -1;
    if (err && errlen)
        err[0] = '\0';
    if (notes && noteslen)
        notes[0] = '\0';
    if (!path)
        fail(&c, 0, "rg_known_load: no path");
    else if (read_small(&c, path, &buf, &len) == 0)
        rc = parse_doc(&c, buf, len, "empty known-failures file", parse_known_file);
    free(buf);
    return rc;
}

/* --- writing ------------------------------------------------------------------------------- */

/* Rules are the plan grammar's words: quoted, since a rule may hold "#" (qp=#2). */
static void write_quoted(FILE *f, const char *str)
{
    fputc('"', f);
    for (; *str; str++) {
        if (*str == '"' || *str == '\\')
            fputc('\\', f);
        fputc(*str, f);
    }
    fputc('"', f);
}

int rg_scenario_write(FILE *f, const rg_scenario *sc, const char *comment)
{
    char want[RG_SC_EXPECT_STR_MAX];
    if (comment && *comment)
        fprintf(f, "# %s\n", comment);
    fprintf(f, "name: %s\nranks: %d\n", sc->name, sc->ranks);
    /* %.17g: the seconds read back as the same double. */
    if (!sc->exec.on)
        fprintf(f, "rails: %d\nqp: %s\nalgorithm: %s\ntimeout: %.17g\nzero_copy: %s\n", sc->rails,
                qp_names[sc->qp], algo_names[sc->algo], sc->timeout_s,
                sc->zero_copy ? "true" : "false");
    fprintf(f, "deadline: %.17g\nseed: %llu\nownership: %s\n", sc->deadline_s,
            (unsigned long long)sc->seed, sc->ownership ? "true" : "false");
    if (sc->nfaults) {
        fputs("faults:\n", f);
        for (int i = 0; i < sc->nfaults; i++) {
            fputs("  - {rule: ", f);
            write_quoted(f, sc->fault[i].rule);
            fprintf(f, ", optional: %s}\n", sc->fault[i].optional ? "true" : "false");
        }
    }
    if (sc->exec.on) {
        static const char *const keys[] = {"command", "server", "client"};
        const char *vals[] = {sc->exec.command, sc->exec.server, sc->exec.client};
        fputs("exec:\n", f);
        for (int k = 0; k < 3; k++) {
            if (!vals[k][0])
                continue;
            fprintf(f, "  %s: ", keys[k]);
            write_quoted(f, vals[k]);
            fputc('\n', f);
        }
        if (sc->exec.client_after >= 0)
            fprintf(f, "  client_after: %.17g\n", sc->exec.client_after);
    } else {
        fputs("program:\n", f);
    }
    for (int i = 0; i < sc->nops; i++) {
        const rg_sc_op *op = &sc->ops[i];
        unsigned keys = kind_keys[op->kind];
        fprintf(f, "  - {op: %s", kind_names[op->kind]);
        if (keys & B(S_DTYPE))
            fprintf(f, ", dtype: %s", rg_data_dtype_name(op->dtype));
        if (keys & B(S_COUNT))
            fprintf(f, ", count: %zu", op->count);
        if (keys & B(S_REDOP))
            fprintf(f, ", redop: %s", rg_data_redop_name(op->redop));
        if (keys & B(S_ROOT))
            fprintf(f, ", root: %d", op->root);
        if (keys & B(S_FROM))
            fprintf(f, ", from: %d, to: %d", op->from, op->to);
        if (keys & B(S_REPEAT))
            fprintf(f, ", repeat: %d", op->repeat);
        if (keys & B(S_INPLACE))
            fprintf(f, ", inplace: %s", op->inplace ? "true" : "false");
        if ((keys & B(S_VALUES)) && op->values != RG_VALUES_EXACT)
            fprintf(f, ", values: %s", rg_data_values_names[op->values]);
        fputs("}\n", f);
    }
    fputs("expect:\n", f);
    for (int r = 0; r < sc->ranks; r++)
        fprintf(f, "  %d: %s\n", r,
                rg_sc_expect_str(sc->expect[r], sc->expect_at[r], sc->expect_cls[r], want,
                                 sizeof(want)));
    return ferror(f) ? -1 : 0;
}
