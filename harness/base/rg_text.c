/* SPDX-License-Identifier: MIT */
/* Text for other readers: a word for a POSIX shell (the reproduce lines), text for HTML or XML
 * (the run page, JUnit), and railguard's version. */
#include "base/rg_base.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Written by make from `git describe` (build/gen/rg_version.h). */
#if __has_include("rg_version.h")
#include "rg_version.h"
#endif
#ifndef RG_VERSION
#define RG_VERSION "unknown"
#endif

#ifndef RG_RELEASE
#define RG_RELEASE "0"
#endif

const char *rg_version(void)
{
    return RG_RELEASE " (git " RG_VERSION ")";
}

const char *rg_version_git(void)
{
    return RG_VERSION;
}

/* --- JUnit XML ----------------------------------------------------------------------------- */
void rg_markup_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            /* XML 1.0 forbids most control characters even escaped. */
            fputc(c < 0x20 && c != '\t' && c != '\n' ? '?' : c, f);
        }
    }
}

int rg_shell_word(char *buf, size_t len, const char *word)
{
    size_t n = strlen(buf);
    bool plain = *word != '\0';
    for (const char *p = word; *p && plain; p++)
        plain = isalnum((unsigned char)*p) || strchr("_-./,:=+@%", *p);
    if (n + 2 > len)
        return -1;
    buf[n++] = ' ';
    if (!plain)
        buf[n++] = '\'';
    for (const char *p = word; *p; p++) {
        const char *piece = *p == '\'' && !plain ? "'\\''" : NULL;
        size_t k = piece ? 4 : 1;
        if (n + k + 2 > len) {
            buf[n] = '\0';
            return -1;
        }
        memcpy(buf + n, piece ? piece : p, k);
        n += k;
    }
    if (!plain)
        buf[n++] = '\'';
    buf[n] = '\0';
    return 0;
}

/* Copies as much of src as fits: findings and lines are cut, never refused. */
void rg_cut(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

uint64_t rg_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
