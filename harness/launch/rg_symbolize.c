/* SPDX-License-Identifier: MIT */
/*
 * A hung rank's backtrace named from debug information (rg_launch.h). A rank's own dump comes
 * from backtrace_symbols(), which can name only exported symbols: a transport's frames read
 * "railguard-jaccl.so(+0xbd88b)", which says nothing to its authors. addr2line can name them,
 * with their file and line, from the object's debug information, and the object need not be
 * loaded: so the runner asks it once the rank is stopped, and appends what it says to the same
 * file under a marker line, in gdb's format ("#K  0x... in NAME (FULL) at FILE:LINE from OBJ",
 * NAME the demangled name without return type, template arguments or parameters). The raw dump
 * stays above it: the names are an addition, never a replacement. Signatures read the frames
 * after the marker when it is there (judge/rg_signature.c); triage names an old run's
 * backtraces the same way before it reads them.
 */
#include "launch/rg_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SYM_MAX_FRAMES 256
_Static_assert(RG_SYM_BATCH <= SYM_MAX_FRAMES, "a batch is named whole");
#define SYM_MAX_OBJS 8
#define SYM_OUT_MAX (1u << 20)
/* addr2line on a large object with debug information takes seconds in a TCG guest. */
#define SYM_DEADLINE_S 30.0

struct frame {
    char obj[512];  /* the object's path as the dump named it */
    char name[256]; /* the dump's own symbol, "" when it gave an offset only */
    unsigned long long off;
    int dump;           /* which dump (a header line between frames starts the next) */
    char full[512];     /* addr2line's demangled name, "" unnamed */
    char where[512];    /* addr2line's FILE:LINE, "" unknown */
    char inl[6][512];   /* functions this frame's code was inlined into, innermost first */
    char inlat[6][512]; /* and where */
    int ninl;
};

/* The frames being named: 2 MB, taken from the heap at the first use and kept (a leak check
 * reads .bss whole at every exit of every process that links this). */
static struct frame *g_fr;

static bool frames_ready(void)
{
    if (!g_fr)
        g_fr = calloc(SYM_MAX_FRAMES, sizeof(*g_fr));
    return g_fr != NULL;
}

/* "/path/obj(+0x1a)[0x..]" or "/path/obj(sym+0x1a)[0x..]": false for any other line. */
static bool parse_symbols_line(const char *line, struct frame *f)
{
    const char *open = strchr(line, '(');
    const char *close = open ? strchr(open, ')') : NULL;
    if (line[0] != '/' || !open || !close || !strchr(close, '[') ||
        (size_t)(open - line) >= sizeof(f->obj))
        return false;
    memset(f, 0, sizeof(*f));
    memcpy(f->obj, line, (size_t)(open - line));
    const char *plus = memchr(open, '+', (size_t)(close - open));
    size_t nlen = plus ? (size_t)(plus - open - 1) : (size_t)(close - open - 1);
    if (nlen >= sizeof(f->name))
        nlen = sizeof(f->name) - 1;
    memcpy(f->name, open + 1, nlen);
    if (plus) {
        char *end;
        f->off = strtoull(plus + 1, &end, 16);
        if (end == plus + 1)
            return false;
    }
    return true;
}

void rg_sym_norm(const char *full, char *out, size_t len)
{
    char a[1024];
    size_t n = 0;
    /* "(anonymous namespace)" would read as a parameter list: it is "{anon}". */
    for (const char *p = full; *p && n < sizeof(a) - 8;) {
        if (!strncmp(p, "(anonymous namespace)", 21)) {
            memcpy(a + n, "{anon}", 6);
            n += 6;
            p += 21;
        } else {
            a[n++] = *p++;
        }
    }
    a[n] = '\0';
    /* Template arguments out; the parameters and what follows them cut; the return type (the
     * words before the name) dropped. {lambda()#1} keeps its parentheses. */
    char b[1024];
    size_t m = 0;
    int angle = 0, brace = 0;
    for (size_t i = 0; a[i] && m < sizeof(b) - 8; i++) {
        char c = a[i];
        /* operator(), operator<, operator[] ...: their brackets are the name, not arguments. */
        if (!angle && !strncmp(a + i, "operator", 8)) {
            memcpy(b + m, "operator", 8);
            m += 8;
            i += 8;
            if (a[i] == '(' && a[i + 1] == ')') {
                b[m++] = a[i++];
                b[m++] = a[i++];
            } else {
                while (a[i] && strchr("<>=!+-*/%&|^~[],", a[i]) && m < sizeof(b) - 2)
                    b[m++] = a[i++];
            }
            i--;
            continue;
        }
        if (c == '<') {
            angle++;
            continue;
        }
        if (c == '>' && angle) {
            angle--;
            continue;
        }
        if (angle)
            continue;
        if (c == '{')
            brace++;
        if (c == '}' && brace)
            brace--;
        if (c == '(' && !brace)
            break;
        b[m++] = c;
    }
    b[m] = '\0';
    const char *start = b;
    brace = 0;
    for (size_t i = 0; i < m; i++) {
        if (b[i] == '{')
            brace++;
        else if (b[i] == '}' && brace)
            brace--;
        else if (b[i] == ' ' && !brace && i + 1 < m)
            start = b + i + 1;
    }
    size_t k = 0;
    for (const char *p = start; *p && k + 1 < len; p++)
        out[k++] = (*p == ' ' || *p == '(' || *p == ')') ? '_' : *p;
    out[k] = '\0';
    if (!k && len > 2)
        snprintf(out, len, "??");
}

/* Runs addr2line on one object for the given frames' offsets and fills their names. Returns 0,
 * or -1 with why (not found, timed out, failed). */
static int name_object(const char *obj, int *idx, int n, char *why, size_t whylen)
{
    char *argv[SYM_MAX_FRAMES + 8];
    static char addrs[SYM_MAX_FRAMES][300];
    int a = 0;
    argv[a++] = "addr2line";
    argv[a++] = "-C";
    argv[a++] = "-f";
    argv[a++] = "-i";
    argv[a++] = "-a";
    argv[a++] = "-e";
    argv[a++] = (char *)obj;
    for (int i = 0; i < n; i++) {
        /* A return address is past its call: the call's line is the byte before it. A frame
         * the dump named is asked by its symbol (addr2line takes SYM+OFF). */
        const struct frame *f = &g_fr[idx[i]];
        unsigned long long off = f->off ? f->off - 1 : 0;
        if (f->name[0])
            snprintf(addrs[i], sizeof(addrs[i]), "%s+0x%llx", f->name, off);
        else
            snprintf(addrs[i], sizeof(addrs[i]), "0x%llx", off);
        argv[a++] = addrs[i];
    }
    argv[a] = NULL;
    char *out = malloc(SYM_OUT_MAX + 1);
    if (!out) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    int st = 0, rc = rg_capture(argv, SYM_DEADLINE_S, out, SYM_OUT_MAX + 1, &st, why, whylen);
    if (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
        snprintf(why, whylen, "addr2line failed on %.400s", obj);
        rc = -1;
    } else if (rc != 0 && strstr(why, "not installed")) {
        snprintf(why, whylen, "addr2line is not installed (Debian: binutils)");
    } else if (rc != 0 && strstr(why, "killed")) {
        snprintf(why, whylen, "addr2line on %.400s took over %.0f s: killed", obj, SYM_DEADLINE_S);
    }
    /* "0xADDR\nFUNC\nFILE:LINE\n[FUNC\nFILE:LINE\n]..." per address, the innermost (inlined)
     * function first. No function or file name starts "0x": such a line is the next address. */
    int cur = -1, pos = 0;
    for (char *line = out; rc == 0 && line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (!strncmp(line, "0x", 2)) {
            cur++;
            pos = 0;
        } else if (cur >= 0 && cur < n) {
            struct frame *f = &g_fr[idx[cur]];
            int depth = pos / 2;
            bool func = pos % 2 == 0;
            pos++;
            char *dst = NULL;
            if (depth == 0)
                dst = func ? f->full : f->where;
            else if (depth <= 6)
                dst = func ? f->inl[depth - 1] : f->inlat[depth - 1];
            if (dst && strncmp(line, "??", 2) != 0 && line[0] != ':') {
                snprintf(dst, 512, "%s", line);
                if (depth > f->ninl)
                    f->ninl = depth;
            }
        }
        line = end ? end + 1 : NULL;
    }
    free(out);
    return rc;
}

/* The frames of a file's dumps, in order: their count. */
static int read_frames(const char *text)
{
    int n = 0, dump = 0;
    bool in_dump = false;
    for (const char *line = text; line && *line && n < SYM_MAX_FRAMES;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1200];
        if (len >= sizeof(buf))
            len = sizeof(buf) - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = end ? end + 1 : NULL;
        if (parse_symbols_line(buf, &g_fr[n])) {
            g_fr[n].dump = dump;
            in_dump = true;
            n++;
        } else if (in_dump) {
            dump++;
            in_dump = false;
        }
    }
    return n;
}

static void write_frame(FILE *f, const struct frame *fr, int k)
{
    char norm[256];
    if (fr->full[0]) {
        rg_sym_norm(fr->full, norm, sizeof(norm));
        fprintf(f, "#%d  0x%llx in %s (%s)%s%s from %s\n", k, fr->off, norm, fr->full,
                fr->where[0] ? " at " : "", fr->where, fr->obj);
    } else if (fr->name[0]) {
        fprintf(f, "#%d  0x%llx in %s () from %s\n", k, fr->off, fr->name, fr->obj);
    } else {
        fprintf(f, "#%d  0x%llx in ?? () from %s\n", k, fr->off, fr->obj);
    }
    /* Where the code above was inlined: each a frame of its own, as gdb shows them. */
    for (int i = 0; i < fr->ninl; i++) {
        if (!fr->inl[i][0])
            continue;
        rg_sym_norm(fr->inl[i], norm, sizeof(norm));
        fprintf(f, "#%d  0x%llx in %s (%s)%s%s from %s\n", k, fr->off, norm, fr->inl[i],
                fr->inlat[i][0] ? " at " : "", fr->inlat[i], fr->obj);
    }
}

int rg_bt_symbolize(const char *path, char *why, size_t whylen)
{
    why[0] = '\0';
    FILE *in = fopen(path, "r");
    if (!in)
        return 0; /* no backtrace: nothing to name */
    char *text = malloc(SYM_OUT_MAX + 1);
    size_t len = text ? fread(text, 1, SYM_OUT_MAX, in) : 0;
    fclose(in);
    if (!text || !frames_ready()) {
        free(text);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    text[len] = '\0';
    if (strstr(text, RG_BT_NAMED_MARK)) {
        free(text);
        return 0; /* named before */
    }
    int n = read_frames(text);
    free(text);
    if (n == 0)
        return 0; /* gdb's dump, or none: names are there already or nowhere */
    /* One addr2line per object. */
    char objs[SYM_MAX_OBJS][512];
    int nobj = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int o = 0; o < nobj; o++)
            seen |= !strcmp(objs[o], g_fr[i].obj);
        if (!seen && nobj < SYM_MAX_OBJS)
            snprintf(objs[nobj++], sizeof(objs[0]), "%.511s", g_fr[i].obj);
    }
    for (int o = 0; o < nobj; o++) {
        int idx[SYM_MAX_FRAMES], k = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(g_fr[i].obj, objs[o]))
                idx[k++] = i;
        char w[600];
        if (name_object(objs[o], idx, k, w, sizeof(w)) != 0 && !why[0]) {
            snprintf(why, whylen, "%s", w);
            rc = -1;
        }
    }
    FILE *f = fopen(path, "a");
    if (!f)
        return -1;
    int dump = -1, k = 0;
    for (int i = 0; i < n; i++) {
        if (g_fr[i].dump != dump) {
            dump = g_fr[i].dump;
            k = 0;
            fprintf(f, "%s (dump %d)%s%s\n", RG_BT_NAMED_MARK, dump + 1, why[0] ? "; " : "", why);
        }
        write_frame(f, &g_fr[i], k++);
    }
    return fclose(f) == 0 ? rc : -1;
}

/* Whether FILE:LINE is inside the verbs header, whose inline functions make the calls. */
static bool in_verbs_header(const char *where)
{
    return strstr(where, "infiniband/verbs.h:") != NULL;
}

int rg_sym_sites(const char *obj, const uint64_t *off, int n, rg_sym_site *out, char *why,
                 size_t whylen)
{
    why[0] = '\0';
    if (n > SYM_MAX_FRAMES) { /* past one batch: unnamed, and said, never another's name */
        for (int i = SYM_MAX_FRAMES; i < n; i++)
            memset(&out[i], 0, sizeof(out[i]));
        n = SYM_MAX_FRAMES;
    }
    if (!frames_ready()) {
        for (int i = 0; i < n; i++)
            memset(&out[i], 0, sizeof(out[i]));
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    int idx[SYM_MAX_FRAMES];
    for (int i = 0; i < n; i++) {
        memset(&g_fr[i], 0, sizeof(g_fr[i]));
        snprintf(g_fr[i].obj, sizeof(g_fr[i].obj), "%s", obj);
        g_fr[i].off = off[i];
        idx[i] = i;
        memset(&out[i], 0, sizeof(out[i]));
    }
    if (n <= 0)
        return 0;
    int rc = name_object(obj, idx, n, why, whylen);
    for (int i = 0; i < n; i++) {
        const struct frame *f = &g_fr[i];
        const char *fn = f->full, *at = f->where;
        /* Innermost first: step out of the header's inline functions. */
        for (int k = 0; in_verbs_header(at) && k < f->ninl; k++) {
            fn = f->inl[k];
            at = f->inlat[k];
        }
        if (!fn[0] || in_verbs_header(at))
            continue;
        rg_sym_norm(fn, out[i].func, sizeof(out[i].func));
        out[i].nearest = !at[0];
        snprintf(out[i].where, sizeof(out[i].where), "%.*s", (int)sizeof(out[i].where) - 1, at);
        char *d = strstr(out[i].where, " (discriminator"); /* which block of the line: noise */
        if (d)
            *d = '\0';
    }
    return rc;
}

void rg_sym_site_text(const rg_sym_site *s, const char *obj, uint64_t off, char *out, size_t len)
{
    const char *base = strrchr(obj, '/');
    base = base ? base + 1 : obj;
    if (s->func[0] && !s->nearest)
        snprintf(out, len, "%s%s%s (%s+0x%llx)", s->func, s->where[0] ? " at " : "", s->where, base,
                 (unsigned long long)off);
    else if (s->func[0])
        snprintf(out, len, "%s+0x%llx (no debug info; nearest symbol: %s)", base,
                 (unsigned long long)off, s->func);
    else
        snprintf(out, len, "%s+0x%llx (no debug info, no symbol)", base, (unsigned long long)off);
}
