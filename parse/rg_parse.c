/* SPDX-License-Identifier: MIT */
/* The value parsers every part shares (rg_parse.h). Digits are read by hand: strtol and strtod
 * accept blanks, signs, bases and locales that no railguard input means. */
#include "rg_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Decimal digits s[0..) to the end, within max; -1 on anything else or overflow. */
static int decimal(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (!digit(*s))
            return -1;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int rg_parse_uint(const char *s, bool hex, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v = 0;
    if (!s)
        return -1;
    if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        const char *p = s + 2;
        if (!*p || strlen(p) > 16)
            return -1;
        for (; *p; p++) {
            int d = digit(*p)                  ? *p - '0'
                    : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10
                    : (*p >= 'A' && *p <= 'F') ? *p - 'A' + 10
                                               : -1;
            if (d < 0)
                return -1;
            v = v << 4 | (uint64_t)d;
        }
    } else if (decimal(s, UINT64_MAX, &v)) {
        return -1;
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int rg_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    uint64_t mag;
    if (!s)
        return -1;
    if (s[0] == '-') {
        if (lo >= 0 || decimal(s + 1, (uint64_t)INT64_MAX + 1, &mag))
            return -1;
        int64_t v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        if (v < lo || v > hi)
            return -1;
        *out = v;
        return 0;
    }
    if (decimal(s, (uint64_t)INT64_MAX, &mag) || (int64_t)mag < lo || (int64_t)mag > hi)
        return -1;
    *out = (int64_t)mag;
    return 0;
}

int rg_parse_seconds(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s)
        return -1;
    double v = 0, scale = 1;
    int seen = 0, dot = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (!digit(*p) || seen > 15) /* beyond 15 digits a double stops being exact */
            return -1;
        seen++;
        if (dot) {
            scale /= 10;
            v += (*p - '0') * scale;
        } else {
            v = v * 10 + (*p - '0');
        }
    }
    if (!seen || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int rg_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char num[32];
    unsigned shift = 0;
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= sizeof(num))
        return -1;
    memcpy(num, s, n + 1);
    switch (num[n - 1]) {
    case 'K':
        shift = 10;
        break;
    case 'M':
        shift = 20;
        break;
    case 'G':
        shift = 30;
        break;
    default:
        break;
    }
    if (shift)
        num[n - 1] = '\0';
    uint64_t v;
    if (decimal(num, UINT64_MAX >> shift, &v))
        return -1;
    v <<= shift;
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int rg_parse_bool(const char *s, bool *out)
{
    if (!s || (strcmp(s, "0") && strcmp(s, "1")))
        return -1;
    *out = s[0] == '1';
    return 0;
}

const char *rg_parse_show(const char *s, char *out, size_t len)
{
    if (!len)
        return out;
    if (strlen(s) > 64)
        snprintf(out, len, "%.61s...", s);
    else
        snprintf(out, len, "%s", s);
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < ' ' || (unsigned char)*p == 0x7f)
            *p = '?';
    return out;
}

const char *rg_parse_hostport_problem(const char *s)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    int64_t port;

    if (!colon)
        return "expected host:port";
    if (colon == s)
        return "empty host, expected host:port";
    for (const char *p = s; p < colon; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p == 0x7f)
            return "the host has a blank or control character";
    /* An IPv6 address has colons of its own; brackets say where the port starts. */
    if (memchr(s, ':', (size_t)(colon - s)) && (s[0] != '[' || colon[-1] != ']'))
        return "an IPv6 host needs brackets, as in [::1]:port";
    if (rg_parse_int(colon + 1, 1, 65535, &port))
        return "the port must be a number 1..65535";
    return NULL;
}

/* NULL when s (n bytes) is a usable secret, else why not. */
static const char *secret_problem(const char *s, size_t n)
{
    if (n < RG_PARSE_SECRET_MIN)
        return "a secret needs at least 16 characters";
    if (n > RG_PARSE_SECRET_MAX)
        return "a secret has at most 256 characters";
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
            return "a secret is printable ASCII with no blanks";
    return NULL;
}

static int secret_fail(char *err, size_t errlen, const char *name, const char *value,
                       const char *why)
{
    char shown[72];
    if (err && errlen)
        snprintf(err, errlen, "%s='%s': %s", name, rg_parse_show(value, shown, sizeof(shown)), why);
    return -1;
}

int rg_parse_secret_env(char *out, char *err, size_t errlen)
{
    const char *v = getenv("RG_SECRET"), *why;
    out[0] = '\0';
    if (v && *v) {
        /* Never echo a secret, even a bad one, into a log. */
        if ((why = secret_problem(v, strlen(v))))
            return secret_fail(err, errlen, "RG_SECRET", "...", why);
        memcpy(out, v, strlen(v) + 1);
        return 0;
    }
    if (!(v = getenv("RG_SECRET_FILE")) || !*v)
        return 0;
    char buf[RG_PARSE_SECRET_MAX + 3]; /* the secret, its newline, and one byte to see more */
    struct stat sb;
    int fd = open(v, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), rc = -1;
    if (fd < 0)
        return secret_fail(err, errlen, "RG_SECRET_FILE", v, strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        secret_fail(err, errlen, "RG_SECRET_FILE", v, "not a regular file");
        goto out;
    }
    /* Like ssh with a private key: a secret others can read is no secret. */
    if (sb.st_mode & 077) {
        secret_fail(err, errlen, "RG_SECRET_FILE", v, "group or others may read it (chmod 600)");
        goto out;
    }
    ssize_t got = read(fd, buf, sizeof(buf) - 1);
    if (got < 0) {
        secret_fail(err, errlen, "RG_SECRET_FILE", v, strerror(errno));
        goto out;
    }
    buf[got] = '\0';
    /* One line, its newline optional; a NUL or a second line is refused, never cut. */
    size_t n = strcspn(buf, "\n");
    if (memchr(buf, '\0', (size_t)got))
        why = "the file holds a NUL byte";
    else if ((size_t)got != n && !((size_t)got == n + 1 && buf[n] == '\n'))
        why = "the file must hold the secret on one line";
    else
        why = secret_problem(buf, n);
    if (why) {
        secret_fail(err, errlen, "RG_SECRET_FILE", v, why);
        goto out;
    }
    memcpy(out, buf, n);
    out[n] = '\0';
    rc = 0;
out:
    explicit_bzero(buf, sizeof(buf));
    close(fd);
    return rc;
}
