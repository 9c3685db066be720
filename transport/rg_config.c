/* SPDX-License-Identifier: MIT */
/*
 * The configuration: the devices file (JACCL's N x N JSON matrix, read with jansson) reduced
 * to one rank's row, and the environment variables railguard shares with MLX and JACCL.
 */
#include "rg_config.h"
#include "rg_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A devices file is a few KiB even for 64 ranks; anything past this is not one. */
#define RG__DEVICES_FILE_MAX (1024 * 1024)

/*
 * A timeout longer than this is a typo, and keeping it bounded means later conversions to
 * nanoseconds can never overflow.
 */
#define RG__TIMEOUT_MAX_S 1e6

/* Messages show at most this much of a path, so the cell that follows it is never cut off. */
#define RG__SOURCE_SHOWN 120

/* --- messages ------------------------------------------------------------------------------ */

/* Replaces control characters, so a message from any input stays on one line. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            *s = '?';
}

static rg_status fail(struct rg_err *e, rg_status st, const char *fmt, ...) RG__PRINTF(3, 4);

/* Formats a message, makes it one line, and records it through rg__err_set (first one wins). */
static rg_status fail(struct rg_err *e, rg_status st, const char *fmt, ...)
{
    char msg[sizeof(((struct rg_err *)0)->msg)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    one_line(msg);
    return rg__err_set(e, st, "%s", msg);
}

/* The tail of a long path, marked with "...", so the message still has room for the cell. */
static const char *shown_source(const char *source, char *buf, size_t n)
{
    size_t len = strlen(source);

    if (len < n)
        return source;
    snprintf(buf, n, "...%s", source + len - (n - 4));
    return buf;
}

/* How a JSON value reads in a message: "got a number". */
static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "an unknown value";
}

/* --- the devices matrix -------------------------------------------------------------------- */

static int name_char_ok(unsigned char c)
{
    /* Spelled out rather than isalnum(), whose answer depends on the locale. */
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

/*
 * Checks one device name; `where` is its cell ("[1][2]" or "[1][2][0]"). The name is copied
 * into dst when dst is not NULL.
 */
static rg_status check_name(const json_t *v, const char *src, const char *where, char *dst,
                            struct rg_err *e)
{
    if (!json_is_string(v))
        return fail(e, RG_ERR_CONFIG, "%s: %s: expected a device name, got %s", src, where,
                    json_kind(v));
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len == 0)
        return fail(e, RG_ERR_CONFIG, "%s: %s: empty device name", src, where);
    if (len >= RG_DEVNAME_MAX)
        return fail(e, RG_ERR_CONFIG, "%s: %s: device name of %zu characters, at most %d", src,
                    where, len, RG_DEVNAME_MAX - 1);
    for (size_t i = 0; i < len; i++)
        if (!name_char_ok((unsigned char)s[i]))
            return fail(e, RG_ERR_CONFIG,
                        "%s: %s: device name \"%s\" has a character outside [A-Za-z0-9_.-] at "
                        "offset %zu",
                        src, where, s, i);
    if (dst)
        memcpy(dst, s, len + 1);
    return RG_OK;
}

/*
 * Checks cell [i][j] and stores its rail count in *nrails. When dst is not NULL (the cell is
 * in the row being kept) the names are copied there, one per rail.
 */
static rg_status check_cell(const json_t *cell, const char *src, int i, int j,
                            char (*dst)[RG_DEVNAME_MAX], int *nrails, struct rg_err *e)
{
    char where[32];
    rg_status st;

    snprintf(where, sizeof(where), "[%d][%d]", i, j);
    if (i == j) {
        /* A rank has no link to itself; JACCL writes null there and so must the file. */
        if (!json_is_null(cell))
            return fail(e, RG_ERR_CONFIG, "%s: %s: the diagonal must be null, got %s", src, where,
                        json_kind(cell));
        *nrails = 0;
        return RG_OK;
    }
    if (json_is_null(cell))
        return fail(e, RG_ERR_CONFIG,
                    "%s: %s: null off the diagonal: rank %d has no device toward rank %d", src,
                    where, i, j);
    if (json_is_string(cell)) {
        st = check_name(cell, src, where, dst ? dst[0] : NULL, e);
        if (st)
            return st;
        *nrails = 1;
        return RG_OK;
    }
    if (!json_is_array(cell))
        return fail(e, RG_ERR_CONFIG, "%s: %s: expected a device name or a list of names, got %s",
                    src, where, json_kind(cell));

    size_t n = json_array_size(cell);
    if (n == 0)
        return fail(e, RG_ERR_CONFIG, "%s: %s: empty list of devices, expected 1 to %d names", src,
                    where, RG_MAX_RAILS);
    if (n > RG_MAX_RAILS)
        return fail(e, RG_ERR_CONFIG, "%s: %s: %zu rails, at most %d", src, where, n, RG_MAX_RAILS);
    for (size_t k = 0; k < n; k++) {
        const json_t *v = json_array_get(cell, k);
        char rail_where[48];
        snprintf(rail_where, sizeof(rail_where), "%s[%zu]", where, k);
        st = check_name(v, src, rail_where, dst ? dst[k] : NULL, e);
        if (st)
            return st;
        /* Two rails on one device would be one wire counted twice. */
        for (size_t m = 0; m < k; m++)
            if (strcmp(json_string_value(json_array_get(cell, m)), json_string_value(v)) == 0)
                return fail(e, RG_ERR_CONFIG,
                            "%s: %s: device \"%s\" listed twice (rails %zu and %zu)", src, where,
                            json_string_value(v), m, k);
    }
    *nrails = (int)n;
    return RG_OK;
}

/* Validates the decoded matrix as a whole and fills out with row `rank`. */
static rg_status check_matrix(const json_t *root, const char *src, int rank, struct rg_devices *out,
                              struct rg_err *e)
{
    /* Rail counts of every cell, for the symmetry check; 16 KiB, fine on the stack. */
    int counts[RG_MAX_RANKS][RG_MAX_RANKS];
    rg_status st;

    if (!json_is_array(root))
        return fail(e, RG_ERR_CONFIG, "%s: expected an array of rows (an N x N matrix), got %s",
                    src, json_kind(root));
    size_t n = json_array_size(root);
    if (n < 2)
        return fail(e, RG_ERR_CONFIG, "%s: %zu rank%s, need at least 2", src, n, n == 1 ? "" : "s");
    if (n > RG_MAX_RANKS)
        return fail(e, RG_ERR_CONFIG, "%s: %zu ranks, at most %d", src, n, RG_MAX_RANKS);

    /* The shape first: a ragged matrix is reported as such, not as a cell error inside it. */
    for (size_t i = 0; i < n; i++) {
        const json_t *row = json_array_get(root, i);
        if (!json_is_array(row))
            return fail(e, RG_ERR_CONFIG, "%s: row %zu is %s, expected an array of %zu cells", src,
                        i, json_kind(row), n);
        if (json_array_size(row) != n)
            return fail(e, RG_ERR_CONFIG, "%s: row %zu has %zu cells, expected %zu", src, i,
                        json_array_size(row), n);
    }
    if (rank < 0 || (size_t)rank >= n)
        return fail(e, RG_ERR_CONFIG, "%s: rank %d out of range 0..%zu", src, rank, n - 1);

    /*
     * Every row is checked, not only ours: a file that is wrong for another rank would make
     * that rank fail or, worse, wire its rails differently from ours.
     */
    for (int i = 0; i < (int)n; i++) {
        const json_t *row = json_array_get(root, (size_t)i);
        for (int j = 0; j < (int)n; j++) {
            st = check_cell(json_array_get(row, (size_t)j), src, i, j,
                            i == rank ? out->names[j] : NULL, &counts[i][j], e);
            if (st)
                return st;
            /*
             * Row-major order means [j][i] is already known when j < i. Both ends of a link
             * must agree on its rail count, or a cable is crossed or missing.
             */
            if (j < i && counts[j][i] != counts[i][j])
                return fail(e, RG_ERR_CONFIG,
                            "%s: [%d][%d] has %d rail%s but [%d][%d] has %d: a crossed or "
                            "missing link",
                            src, j, i, counts[j][i], counts[j][i] == 1 ? "" : "s", i, j,
                            counts[i][j]);
        }
    }
    out->size = (int)n;
    out->rank = rank;
    for (size_t j = 0; j < n; j++)
        out->nrails[j] = counts[rank][j];
    return RG_OK;
}

rg_status rg__devices_parse(const char *text, const char *source, int rank, struct rg_devices *out,
                            struct rg_err *e)
{
    char buf[RG__SOURCE_SHOWN];
    const char *src = shown_source(source ? source : "devices", buf, sizeof(buf));
    json_error_t jerr;
    rg_status st;

    if (!text || !out)
        return fail(e, RG_ERR_INVALID, "%s: no devices text or no output to fill", src);
    memset(out, 0, sizeof(*out));

    /* JSON_DECODE_ANY so that a bare number or string gets our "expected an array" message. */
    json_t *root = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (!root) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return fail(e, RG_ERR_NOMEM, "%s: out of memory while parsing JSON", src);
        if (jerr.line > 0)
            return fail(e, RG_ERR_CONFIG, "%s:%d:%d: invalid JSON: %s", src, jerr.line, jerr.column,
                        jerr.text);
        return fail(e, RG_ERR_CONFIG, "%s: invalid JSON: %s", src, jerr.text);
    }
    st = check_matrix(root, src, rank, out, e);
    json_decref(root);
    /* A caller that ignores the status must not find half a row. */
    if (st)
        memset(out, 0, sizeof(*out));
    return st;
}

rg_status rg__devices_load(const char *path, int rank, struct rg_devices *out, struct rg_err *e)
{
    char buf[RG__SOURCE_SHOWN];
    char *text = NULL;
    const char *nul;
    size_t len = 0;
    int fd = -1;
    rg_status st;

    if (!path || !out)
        return fail(e, RG_ERR_INVALID, "devices file: no path or no output to fill");
    memset(out, 0, sizeof(*out));
    const char *src = shown_source(path, buf, sizeof(buf));
    if (!*path)
        return fail(e, RG_ERR_CONFIG, "devices file: no path given");

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        st = fail(e, RG_ERR_CONFIG, "%s: cannot open: %s", src, strerror(errno));
        goto out;
    }
    /*
     * One byte past the limit tells "exactly 1 MiB" from "more"; when the file fits, that byte
     * holds the terminating NUL.
     */
    text = malloc(RG__DEVICES_FILE_MAX + 1);
    if (!text) {
        st = fail(e, RG_ERR_NOMEM, "%s: no memory for a 1 MiB read buffer", src);
        goto out;
    }
    while (len <= RG__DEVICES_FILE_MAX) {
        ssize_t r = read(fd, text + len, RG__DEVICES_FILE_MAX + 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            st = fail(e, RG_ERR_CONFIG, "%s: cannot read: %s", src, strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    if (len > RG__DEVICES_FILE_MAX) {
        st = fail(e, RG_ERR_CONFIG, "%s: larger than 1 MiB: not a devices file", src);
        goto out;
    }
    /* jansson would stop at a NUL byte and silently ignore the rest of the file. */
    nul = memchr(text, '\0', len);
    if (nul) {
        st = fail(e, RG_ERR_CONFIG, "%s: NUL byte at offset %td: not a text file", src, nul - text);
        goto out;
    }
    text[len] = '\0';
    st = rg__devices_parse(text, path, rank, out, e);

out:
    free(text);
    if (fd >= 0)
        close(fd);
    return st;
}

/* --- rg_config ----------------------------------------------------------------------------- */

void rg_config_init(rg_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->rank = -1;
    cfg->size = 0;
    cfg->qp_type = RG_QPT_UC;
    cfg->timeout_s = 0;
    cfg->algo = RG_ALGO_AUTO;
}

/* The first of names[] set to a non-empty value; an empty variable counts as unset. */
static const char *env_first(const char *const *names, size_t n, const char **which)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            *which = names[i];
            return v;
        }
    }
    return NULL;
}

static rg_status env_fail(char *err, size_t errlen, const char *name, const char *value,
                          const char *fmt, ...) RG__PRINTF(5, 6);

/*
 * Writes "NAME='value': why" into err. The value is cut at 64 characters so the reason always
 * fits, and control characters become '?' so the message stays one line.
 */
static rg_status env_fail(char *err, size_t errlen, const char *name, const char *value,
                          const char *fmt, ...)
{
    char shown[72], why[160];
    va_list ap;

    if (strlen(value) > 64)
        snprintf(shown, sizeof(shown), "%.61s...", value);
    else
        snprintf(shown, sizeof(shown), "%s", value);
    one_line(shown);
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (err && errlen > 0)
        snprintf(err, errlen, "%s='%s': %s", name, shown, why);
    return RG_ERR_CONFIG;
}

/* Digits only (rg_parse_int): no blanks, no sign, no base. */
static int parse_rank(const char *s, int *rank)
{
    int64_t v;
    if (rg_parse_int(s, 0, INT_MAX, &v))
        return -1;
    *rank = (int)v;
    return 0;
}

/* Digits and a point only (rg_parse_seconds): no exponent, no hex ("0x10"), no inf or nan, and
 * no locale. Range checks are the caller's, for their own messages. */
static int parse_seconds(const char *s, double *out)
{
    return rg_parse_seconds(s, 0, 1e15, out);
}

rg_status rg__secret_from_env(char *out, char *err, size_t errlen)
{
    _Static_assert(RG_SECRET_MIN == RG_PARSE_SECRET_MIN && RG_SECRET_MAX == RG_PARSE_SECRET_MAX,
                   "one secret, one grammar");
    return rg_parse_secret_env(out, err, errlen) ? RG_ERR_CONFIG : RG_OK;
}

/* Who this rank is and where rank 0 is: the rank, the coordinator, the secret, the devices
 * file, each only where the caller left it unset. */
static rg_status env_place(rg_config *c, char *err, size_t errlen)
{
    static const char *const rank_vars[] = {"RG_RANK", "MLX_RANK", "JACCL_RANK"};
    static const char *const coord_vars[] = {"RG_COORDINATOR", "MLX_JACCL_COORDINATOR",
                                             "JACCL_COORDINATOR"};
    static const char *const dev_vars[] = {"RG_DEVICES_FILE", "MLX_IBV_DEVICES",
                                           "JACCL_IBV_DEVICES"};
    const char *name, *v;
    if (c->rank < 0 && (v = env_first(rank_vars, 3, &name))) {
        if (parse_rank(v, &c->rank))
            return env_fail(err, errlen, name, v, "not a rank number");
        if (c->rank >= RG_MAX_RANKS)
            return env_fail(err, errlen, name, v, "rank out of range 0..%d", RG_MAX_RANKS - 1);
    }
    if (!c->coordinator[0] && (v = env_first(coord_vars, 3, &name))) {
        const char *why = rg_parse_hostport_problem(v);
        if (strlen(v) >= sizeof(c->coordinator))
            why = "longer than 255 characters";
        if (why)
            return env_fail(err, errlen, name, v, "%s", why);
        memcpy(c->coordinator, v, strlen(v) + 1);
    }
    if (!c->secret[0]) {
        rg_status st = rg__secret_from_env(c->secret, err, errlen);
        if (st)
            return st;
    }
    if (!c->devices_file[0] && (v = env_first(dev_vars, 3, &name))) {
        if (strlen(v) >= sizeof(c->devices_file))
            return env_fail(err, errlen, name, v, "path longer than %zu characters",
                            sizeof(c->devices_file) - 1);
        memcpy(c->devices_file, v, strlen(v) + 1);
    }
    return RG_OK;
}

/* How it runs: the QP type, the timeout and the algorithm. */
static rg_status env_how(rg_config *c, char *err, size_t errlen)
{
    static const char *const ring_vars[] = {"MLX_JACCL_RING", "JACCL_RING"};
    const char *name, *v;
    /* UC is both the default and a choice, so an unset qp_type cannot be told apart from a
     * chosen one: the variable, when present, decides. */
    if ((v = env_first((const char *const[]){"RG_QP_TYPE"}, 1, &name))) {
        if (!strcasecmp(v, "uc"))
            c->qp_type = RG_QPT_UC;
        else if (!strcasecmp(v, "rc"))
            c->qp_type = RG_QPT_RC;
        else
            return env_fail(err, errlen, name, v, "expected uc or rc");
    }
    if (c->timeout_s == 0 && (v = env_first((const char *const[]){"RG_TIMEOUT"}, 1, &name))) {
        double t;
        if (parse_seconds(v, &t) || !isfinite(t))
            return env_fail(err, errlen, name, v, "not a number of seconds");
        if (!(t > 0))
            return env_fail(err, errlen, name, v, "the timeout must be more than 0 seconds");
        if (t > RG__TIMEOUT_MAX_S)
            return env_fail(err, errlen, name, v, "the timeout must be at most %.0f seconds",
                            RG__TIMEOUT_MAX_S);
        c->timeout_s = t;
    }
    if (c->algo != RG_ALGO_AUTO)
        return RG_OK;
    /* RG_ALGO, even "auto", is the first name found, so the MLX and JACCL ones are not read. */
    if ((v = env_first((const char *const[]){"RG_ALGO"}, 1, &name))) {
        if (!strcasecmp(v, "auto"))
            c->algo = RG_ALGO_AUTO;
        else if (!strcasecmp(v, "ring"))
            c->algo = RG_ALGO_RING;
        else if (!strcasecmp(v, "mesh"))
            c->algo = RG_ALGO_MESH;
        else
            return env_fail(err, errlen, name, v, "expected auto, ring or mesh");
    } else if ((v = env_first(ring_vars, 2, &name))) {
        if (!strcmp(v, "1"))
            c->algo = RG_ALGO_RING;
        else if (!strcmp(v, "0"))
            c->algo = RG_ALGO_MESH;
        else
            return env_fail(err, errlen, name, v, "expected 1 (ring) or 0 (mesh)");
    }
    return RG_OK;
}

rg_status rg_config_from_env(rg_config *cfg, char *err, size_t errlen)
{
    if (err && errlen > 0)
        err[0] = '\0';
    if (!cfg) {
        if (err && errlen > 0)
            snprintf(err, errlen, "rg_config_from_env: no configuration to fill");
        return RG_ERR_INVALID;
    }
    /* Work on a copy so a bad variable leaves the caller's configuration as it was. */
    rg_config c = *cfg;
    rg_status st = env_place(&c, err, errlen);
    if (!st)
        st = env_how(&c, err, errlen);
    if (!st)
        *cfg = c;
    return st;
}
