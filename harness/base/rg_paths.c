/* SPDX-License-Identifier: MIT */
/*
 * Paths and commands: an executable on PATH, a command given as one argument, a path-like
 * option's value, and what lives beside the railguard executable (its libraries, the stock
 * scenarios).
 */
#include "base/rg_base.h"
#include "rg_parse.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool rg_executable(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0;
    const char *path = getenv("PATH");
    char cand[PATH_MAX];
    for (const char *d = path ? path : ""; *d;) {
        size_t n = strcspn(d, ":");
        if (n && snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, d, name) < (int)sizeof(cand) &&
            access(cand, X_OK) == 0)
            return true;
        d += n + (d[n] == ':');
    }
    return false;
}

int rg_split_words(const char *arg, char *buf, size_t buflen, char **words, int max, char *err,
                   size_t errlen)
{
    char shown[72];
    size_t o = 0;
    int n = 0;
    bool in_word = false;
    char quote = 0;
    for (const char *p = arg;; p++) {
        unsigned char c = (unsigned char)*p;
        if (!c) {
            if (quote) {
                snprintf(err, errlen, "an unclosed %s quote in '%s'",
                         quote == '\'' ? "single" : "double",
                         rg_parse_show(arg, shown, sizeof(shown)));
                return -1;
            }
            break;
        }
        if ((c < 0x20 && c != '\t' && !(c == '\n' && p > arg && p[-1] == '\\')) || c == 0x7f) {
            snprintf(err, errlen, "a control character in '%s'",
                     rg_parse_show(arg, shown, sizeof(shown)));
            return -1;
        }
        if (!quote && (c == ' ' || c == '\t')) {
            if (in_word) {
                buf[o++] = '\0';
                in_word = false;
            }
            continue;
        }
        if (!in_word) {
            if (n == max) {
                snprintf(err, errlen, "more than %d words", max);
                return -1;
            }
            if (o + 1 >= buflen)
                goto too_long;
            words[n++] = buf + o;
            in_word = true;
        }
        if (quote == '\'' && c != '\'') {
            /* literal */
        } else if (c == '\'' && quote != '"') {
            quote = quote ? 0 : '\'';
            continue;
        } else if (c == '"') {
            quote = quote ? 0 : '"';
            continue;
        } else if (c == '\\' && p[1]) {
            char next = p[1];
            if (quote == '"' && !strchr("\"\\$`\n", next)) {
                /* a backslash in double quotes before anything else is itself */
            } else {
                p++;
                if (next == '\n')
                    continue; /* a line joined */
                c = (unsigned char)next;
            }
        }
        if (o + 1 >= buflen)
            goto too_long;
        buf[o++] = (char)c;
    }
    if (in_word)
        buf[o] = '\0'; /* o < buflen: each byte was taken with room for this one */
    words[n] = NULL;
    return n;
too_long:
    snprintf(err, errlen, "longer than %zu bytes", buflen - 1);
    return -1;
}

int rg_command_words(const char *arg, char *buf, size_t buflen, char **words, int max, char *err,
                     size_t errlen)
{
    char shown[72];
    int n = rg_split_words(arg, buf, buflen, words, max, err, errlen);
    if (n < 0)
        return -1;
    if (!n) {
        snprintf(err, errlen, "empty");
        return -1;
    }
    if (!rg_executable(words[0])) {
        snprintf(err, errlen,
                 strchr(words[0], '/') ? "'%s' is not an executable file"
                                       : "'%s' not found on PATH",
                 rg_parse_show(words[0], shown, sizeof(shown)));
        return -1;
    }
    return n;
}

int rg_opt_path(const char *cmd, const char *flag, const char *v, char *dst, size_t len)
{
    char shown[72];
    if (!v || !*v || strlen(v) >= len) {
        fprintf(stderr, "railguard %s: %s: bad or too long value '%s'\n", cmd, flag,
                rg_parse_show(v ? v : "", shown, sizeof(shown)));
        return -1;
    }
    snprintf(dst, len, "%s", v);
    return 0;
}

/* The directory of the railguard executable SELF. */
static void self_dir(char *dir, size_t len, const char *self)
{
    snprintf(dir, len, "%s", self);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
}

void rg_beside(char *out, size_t len, const char *self, const char *name)
{
    /* An install keeps them in lib/railguard/, the build tree in lib/: the install's when it
     * is there, else lib/'s (whose absence the caller's check then names). */
    static const char *const under[] = {"../lib/", "../lib/railguard/"};
    char dir[PATH_MAX];
    self_dir(dir, sizeof(dir), self);
    char real[PATH_MAX];
    for (int i = 1; i >= 0; i--) {
        if ((size_t)snprintf(out, len, "%s/%s%s", dir, under[i], name) >= len)
            out[0] = '\0';
        else if (i && access(out, R_OK) == 0)
            break;
    }
    /* Reports name the file, not the way to it. */
    if (out[0] && realpath(out, real) && strlen(real) < len)
        memcpy(out, real, strlen(real) + 1);
}

int rg_stock_scenarios(char *out, size_t len, const char *self)
{
    /* Installed: PREFIX/share/railguard/scenarios; the build tree: build/FLAVOUR/bin's repo. */
    static const char *const where[] = {"../share/railguard/scenarios", "../../../scenarios"};
    char dir[PATH_MAX];
    struct stat sb;
    self_dir(dir, sizeof(dir), self);
    for (int i = 0; i < 2; i++)
        if ((size_t)snprintf(out, len, "%s/%s", dir, where[i]) < len && stat(out, &sb) == 0 &&
            S_ISDIR(sb.st_mode))
            return 0;
    out[0] = '\0';
    return -1;
}
