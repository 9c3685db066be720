/* SPDX-License-Identifier: MIT */
/*
 * One option table per command (rg_base.h, "options"): getopt_long's tables, --help, the man
 * page's option list and the shell's completion all come from it, so a flag cannot be parsed
 * in one place and documented differently in another. Every bad value is one line naming the
 * flag as it was typed and the value, and exit status 2.
 */
#include "base/rg_base.h"
#include "rg_parse.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's answer for entry i: its letter, or a value above every character. */
#define OPT__LONG 0x100
#define OPT__MAX 64

static int count(const rg_cli *cli)
{
    return cli->nopts + cli->nshared;
}

static const rg_opt *at(const rg_cli *cli, int i)
{
    return i < cli->nopts ? &cli->opts[i] : &cli->shared[i - cli->nopts];
}

static int code_of(const rg_opt *o, int i)
{
    return o->letter ? (unsigned char)o->letter : OPT__LONG + i;
}

static void *field(void *opts, size_t off)
{
    return (char *)opts + off;
}

static int take(const rg_cli *cli, const rg_opt *o, const char *flag, const char *val, void *opts)
{
    char shown[72], why[300] = "";
    int64_t v;
    switch (o->kind) {
    case RG_OPT_FLAG:
        *(bool *)field(opts, o->off) = true;
        break;
    case RG_OPT_PATH:
        if (rg_opt_path(cli->cmd, flag, val, field(opts, o->off), o->len))
            return -1;
        break;
    case RG_OPT_TEXT:
        *(const char **)field(opts, o->off) = val;
        break;
    case RG_OPT_INT:
        if (rg_parse_int(val, (int64_t)o->lo, (int64_t)o->hi, &v) != 0) {
            fprintf(stderr, "railguard %s: %s: must be %lld..%lld '%s'\n", cli->cmd, flag,
                    (long long)o->lo, (long long)o->hi, rg_parse_show(val, shown, sizeof(shown)));
            return -1;
        }
        *(int *)field(opts, o->off) = (int)v;
        break;
    case RG_OPT_SECONDS:
        if (rg_parse_seconds(val, o->lo, o->hi, (double *)field(opts, o->off)) != 0) {
            fprintf(stderr, "railguard %s: %s: not seconds in %g..%g '%s'\n", cli->cmd, flag, o->lo,
                    o->hi, rg_parse_show(val, shown, sizeof(shown)));
            return -1;
        }
        break;
    case RG_OPT_CALL:
        if (o->call(opts, o, val, why, sizeof(why)) != 0) {
            /* An empty why: the call said its one line itself. */
            if (why[0])
                fprintf(stderr, "railguard %s: %s: %s\n", cli->cmd, flag, why);
            return -1;
        }
        break;
    }
    if (o->given)
        *(bool *)field(opts, o->given - 1) = true;
    return 0;
}

int rg_cli_parse(const rg_cli *cli, int argc, char **argv, void *opts, int *first)
{
    struct option longs[OPT__MAX + 2];
    char shorts[3 + 2 * OPT__MAX + 2];
    size_t ns = 0;
    int n = count(cli);
    if (n > OPT__MAX)
        return 2;
    if (cli->stop_at_word)
        shorts[ns++] = '+'; /* options end at the first word that is not one: a command's own */
    shorts[ns++] = ':';     /* a missing value is told apart from an unknown option */
    for (int i = 0; i < n; i++) {
        const rg_opt *o = at(cli, i);
        bool arg = o->arg != NULL; /* a call without a value's name is a flag too */
        longs[i] =
            (struct option){o->name, arg ? required_argument : no_argument, NULL, code_of(o, i)};
        if (o->letter) {
            shorts[ns++] = o->letter;
            if (arg)
                shorts[ns++] = ':';
        }
    }
    longs[n] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n + 1] = (struct option){NULL, 0, NULL, 0};
    shorts[ns++] = 'h';
    shorts[ns] = '\0';
    opterr = 0;
    optind = 0; /* 0, not 1: glibc then reads the table's '+' afresh (a second parse too) */
    for (;;) {
        int li = -1, c = getopt_long(argc, argv, shorts, longs, &li);
        if (c == -1)
            break;
        char shown[72];
        if (c == 'h') {
            rg_cli_help(cli, stdout);
            return 1;
        }
        if (c == ':' || c == '?') {
            /* optopt: the letter, or for a long option the code it maps to (0 unknown). */
            const char *tok = argv[optind - 1 < argc ? optind - 1 : argc - 1];
            if (c == ':')
                fprintf(stderr, "railguard %s: %s needs a value\n", cli->cmd,
                        rg_parse_show(tok, shown, sizeof(shown)));
            else
                fprintf(stderr, "railguard %s: unknown option '%s'\n", cli->cmd,
                        rg_parse_show(tok, shown, sizeof(shown)));
            return 2;
        }
        int i = c >= OPT__LONG ? c - OPT__LONG : -1;
        for (int k = 0; i < 0 && k < n; k++)
            if (at(cli, k)->letter && (unsigned char)at(cli, k)->letter == c)
                i = k;
        if (i < 0 || i >= n)
            return 2;
        char flag[72];
        if (li >= 0)
            snprintf(flag, sizeof(flag), "--%s", at(cli, i)->name);
        else
            snprintf(flag, sizeof(flag), "-%c", at(cli, i)->letter);
        if (take(cli, at(cli, i), flag, optarg, opts) != 0)
            return 2;
    }
    if (first)
        *first = optind;
    return 0;
}

/* "--name ARG" or "-l, --name ARG", as --help shows it. */
static void spelled(const rg_opt *o, char *out, size_t len)
{
    int n = 0;
    if (o->letter)
        n = snprintf(out, len, "-%c, ", o->letter);
    snprintf(out + n, len - (size_t)n, "--%s%s%s", o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
}

/* Text folded at `width` columns, each line after `indent` blanks. */
static void folded(FILE *f, const char *text, int indent, int width)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        int room = width - indent, n = 0, cut = 0;
        while (p[n] && p[n] != '\n' && n < room) {
            if (p[n] == ' ')
                cut = n;
            n++;
        }
        if (p[n] && p[n] != '\n' && cut > 0)
            n = cut;
        fprintf(f, "%*s%.*s\n", indent, "", n, p);
        p += n;
        if (*p == '\n')
            p++;
    }
}

void rg_cli_help(const rg_cli *cli, FILE *f)
{
    fprintf(f, "usage: railguard %s %s\n", cli->cmd, cli->synopsis);
    if (cli->about)
        folded(f, cli->about, 2, 96);
    fprintf(f, "options:\n");
    for (int i = 0; i < count(cli); i++) {
        char sp[96];
        spelled(at(cli, i), sp, sizeof(sp));
        fprintf(f, "  %s\n", sp);
        folded(f, at(cli, i)->help, 6, 96);
    }
    fprintf(f, "  -h, --help\n      this text\n");
}

/* Text for troff: a line that would start with '.' or '\'' is escaped, as is every '\' and
 * every '-' (a hyphen in a flag must not be typeset as a minus). */
static void troff(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

void rg_cli_man(const rg_cli *cli, FILE *f)
{
    fprintf(f, ".SS \"railguard %s\"\n", cli->cmd);
    fputs(".B railguard ", f);
    troff(f, cli->cmd);
    fputs("\n", f);
    /* One synopsis a line, each starting the line. */
    for (const char *p = cli->synopsis; *p;) {
        size_t n = strcspn(p, "\n");
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)n, p);
        if (p != cli->synopsis)
            fputs(".br\n", f);
        troff(f, line + strspn(line, " "));
        fputs("\n", f);
        p += n + (p[n] == '\n');
    }
    if (cli->about) {
        fputs(".PP\n\\&", f);
        troff(f, cli->about);
        fputs("\n", f);
    }
    for (int i = 0; i < count(cli); i++) {
        const rg_opt *o = at(cli, i);
        fputs(o->arg ? ".TP\n.BI \"" : ".TP\n.B \"", f);
        if (o->letter)
            fprintf(f, "\\-%c, ", o->letter);
        fputs("\\-\\-", f);
        troff(f, o->name);
        fputs("\"", f);
        if (o->arg) {
            fputs(" \" ", f);
            troff(f, o->arg);
            fputs("\"", f);
        }
        fputs("\n\\&", f);
        troff(f, o->help);
        fputs("\n", f);
    }
}

void rg_cli_words(const rg_cli *cli, FILE *f, bool newline)
{
    for (int i = 0; i < count(cli); i++) {
        fprintf(f, "%s--%s", i ? " " : "", at(cli, i)->name);
        if (at(cli, i)->letter)
            fprintf(f, " -%c", at(cli, i)->letter);
    }
    fprintf(f, " --help%s", newline ? "\n" : "");
}

const rg_opt *rg_cli_find(const rg_cli *cli, const char *name)
{
    for (int i = 0; i < count(cli); i++)
        if (!strcmp(at(cli, i)->name, name))
            return at(cli, i);
    return NULL;
}
