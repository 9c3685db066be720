/* SPDX-License-Identifier: MIT */
/*
 * A failure's signature (rg_judge.h): what a bug decides, nothing a run decides. Times,
 * counts, sizes, rank numbers and addresses differ between two runs of one bug, so none of
 * them is in it; the verdicts, the error class, the operation, the algorithm, the frames
 * where hung ranks wait and the kinds of the faults that fired are the same.
 */
#include "judge/rg_judge.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- words, sorted and distinct ---------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* words[0..n) of 48 bytes each, sorted, joined by '+' into out without repeats. */
static void join_sorted(char (*words)[48], int n, char *out, size_t len)
{
    size_t used = 0;
    qsort(words, (size_t)n, sizeof(words[0]), cmp_str);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!words[i][0] || (i && !strcmp(words[i], words[i - 1])))
            continue;
        int w = snprintf(out + used, len - used, "%s%s", used ? "+" : "", words[i]);
        if (w < 0 || (size_t)w >= len - used) {
            out[used] = '\0';
            return;
        }
        used += (size_t)w;
    }
}

/* The first word of s (up to a blank, '/' or ':') into out. */
/* n bytes of s, fewer when n would end inside a UTF-8 character: a cut name must still be
 * text that the YAML and JSON it goes into take. */
static size_t utf8_cut(const char *s, size_t n)
{
    while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--; /* s[n] continues a character: cut before that character's first byte */
    return n;
}

/* The first word of s (up to one of stop) into out, cut to fit at a character boundary. */
static void first_word(const char *s, char *out, size_t len, const char *stop)
{
    size_t n = strcspn(s, stop);
    if (n >= len)
        n = utf8_cut(s, len - 1);
    memcpy(out, s, n);
    out[n] = '\0';
}

/* --- the wait frames of a hung rank -------------------------------------------------------- */

/* Frames that are never the program's own wait: the shim, the C library and threads, verbs and
 * its providers, the dynamic loader, and the runner's worker that calls the transport. */
static bool foreign(const char *fn, const char *obj)
{
    static const char *const fn_exact[] = {
        "poll", "nanosleep", "usleep", "sleep", "select", "syscall",      "sched_yield", "read",
        "recv", "raise",     "abort",  "clone", "clone3", "start_thread", "_start"};
    static const char *const fn_prefix[] = {
        "fi_",    "__",    "ibv_", "rxe_",      "siw_",   "mlx5_",     "pthread_", "epoll_",
        "clock_", "futex", "_dl_", "rg_worker", "rg_tp_", "backtrace", "bt_write", "on_backtrace"};
    static const char *const obj_part[] = {"libc.so",  "libpthread", "libibverbs",   "librxe",
                                           "libsiw",   "libmlx5",    "railguard-fi", "ld-linux",
                                           "libgcc_s", "linux-vdso"};
    for (size_t i = 0; fn && i < sizeof(fn_exact) / sizeof(fn_exact[0]); i++)
        if (!strcmp(fn, fn_exact[i]))
            return true;
    for (size_t i = 0; fn && i < sizeof(fn_prefix) / sizeof(fn_prefix[0]); i++)
        if (!strncmp(fn, fn_prefix[i], strlen(fn_prefix[i])))
            return true;
    for (size_t i = 0; obj && i < sizeof(obj_part) / sizeof(obj_part[0]); i++)
        if (strstr(obj, obj_part[i]))
            return true;
    /* The runner's own binary: the worker around the transport's calls. */
    return obj && !strcmp(obj, "railguard");
}

static const char *base_name(const char *path, size_t n, char *out, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++)
        if (path[i] == '/')
            start = i + 1;
    size_t k = n - start < len - 1 ? n - start : utf8_cut(path + start, len - 1);
    memcpy(out, path + start, k);
    out[k] = '\0';
    return out;
}

/*
 * One line of a backtrace into its function (fn, "" when unnamed) and object (obj, "" when
 * unsaid). gdb: "#3  0x00007f.. in fn (args) at f.c:12", "#0  fn (args) at ...",
 * "#1  0x.. in ?? () from /lib/x/libfoo.so". backtrace_symbols: "/path/obj(fn+0x1a) [0x..]",
 * "/path/obj(+0x123) [0x..]". Returns false for any other line.
 */
static bool parse_frame(const char *line, char *fn, size_t fnlen, char *obj, size_t objlen)
{
    fn[0] = obj[0] = '\0';
    if (line[0] == '#' && isdigit((unsigned char)line[1])) {
        const char *p = line + 1;
        while (isdigit((unsigned char)*p))
            p++;
        while (*p == ' ')
            p++;
        const char *in = strstr(p, " in ");
        if (!strncmp(p, "0x", 2) && in)
            p = in + 4;
        size_t n = strcspn(p, " (");
        if (n == 0)
            return false;
        if (strncmp(p, "??", 2) != 0)
            first_word(p, fn, n + 1 < fnlen ? n + 1 : fnlen, " (");
        const char *from = strstr(p, " from ");
        if (from)
            base_name(from + 6, strcspn(from + 6, " \n"), obj, objlen);
        return true;
    }
    const char *open = strchr(line, '(');
    const char *close = open ? strchr(open, ')') : NULL;
    if (line[0] != '/' || !open || !close || !strchr(close, '['))
        return false;
    base_name(line, (size_t)(open - line), obj, objlen);
    /* A long (C++) name is cut to fit, as gdb's are, never given up for its object's. */
    if (strcspn(open + 1, "+)"))
        first_word(open + 1, fn, fnlen, "+)");
    return true;
}

int rg_sig_frames(const char *text, char frames[][96], int max)
{
    int n = 0;
    /* Frames named from debug information (launch/rg_symbolize.c) say what the raw dump
     * above them said, better: read only them. */
    const char *named = strstr(text, RG_BT_NAMED_MARK);
    if (named)
        text = named;
    bool found = false; /* this thread's (or this dump's) frame is taken */
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024], fn[96], obj[96];
        if (len >= sizeof(buf))
            len = sizeof(buf) - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = end ? end + 1 : NULL;
        if (!strncmp(buf, "Thread ", 7) || !strncmp(buf, "---", 3)) {
            found = false; /* gdb: a thread's frames start; ours: a second dump */
            continue;
        }
        if (found || !parse_frame(buf, fn, sizeof(fn), obj, sizeof(obj)))
            continue;
        if (foreign(fn[0] ? fn : NULL, obj[0] ? obj : NULL) || (!fn[0] && !obj[0]))
            continue;
        char f[96];
        if (fn[0])
            snprintf(f, sizeof(f), "%s", fn);
        else
            snprintf(f, sizeof(f), "%.*s+?",
                     (int)utf8_cut(obj, strlen(obj) > 90 ? 90 : strlen(obj)), obj);
        found = true;
        bool dup = false;
        for (int i = 0; i < n; i++)
            dup |= !strcmp(frames[i], f);
        if (!dup && n < max)
            snprintf(frames[n++], 96, "%s", f);
    }
    return n;
}

static char *slurp(const char *path, size_t max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* --- the signature ------------------------------------------------------------------------- */

static int origin_of(const rg_result *r)
{
    if (r->first_rank >= 0 && r->first_rank < r->ranks)
        return r->first_rank;
    for (int i = 0; i < r->ranks; i++)
        if (!rg_rank_acceptable(r, i))
            return i;
    return 0;
}

/* "ring/2:3 mesh/1:2" (algorithm/rails:calls) into "mesh+ring". */
static void algos(const char *calls, char *out, size_t len)
{
    char w[16][48];
    int n = 0;
    for (const char *p = calls; *p && n < 16;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        first_word(p, w[n], sizeof(w[n]), " /:");
        n++;
        p += strcspn(p, " ");
    }
    join_sorted(w, n, out, len);
}

/*
 * The hung ranks' wait frames, from DIR/rankR.backtrace. When the first failure is itself a
 * hang, its rank's frames alone: where the others happened to be when the deadline came is
 * the run's doing (in a job stuck on one lost message each rank waits wherever it got to),
 * and a set of them would make one bug a group per timing.
 */
static void hung_frames(const rg_result *r, rg_sig *s)
{
    char all[RG_MAX_RANKS * 2][96];
    int n = 0;
    bool origin_hung = rg_rank_judged(r, s->origin) == RG_V_DEADLOCK;
    for (int i = 0; i < r->ranks && n < RG_MAX_RANKS; i++) {
        if (rg_rank_judged(r, i) != RG_V_DEADLOCK || (origin_hung && i != s->origin))
            continue;
        char path[1100];
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", r->dir, i);
        char *text = slurp(path, 1u << 20);
        if (!text)
            continue;
        n += rg_sig_frames(text, &all[n], 2);
        free(text);
    }
    qsort(all, (size_t)n, sizeof(all[0]), cmp_str);
    for (int i = 0; i < n && s->nframes < RG_SIG_FRAMES; i++)
        if (!i || strcmp(all[i], all[i - 1]))
            memcpy(s->frames[s->nframes++], all[i], sizeof(s->frames[0]));
}

void rg_signature(const rg_result *r, rg_sig *s)
{
    memset(s, 0, sizeof(*s));
    int o = s->origin = origin_of(r);
    const rg_rank_result *k = &r->rank[o];
    snprintf(s->first, sizeof(s->first), "%s", rg_verdict_name(rg_rank_judged(r, o)));
    rg_rank_class(k, s->cls, sizeof(s->cls));
    if (!strcmp(s->cls, "?"))
        s->cls[0] = '\0'; /* a status with no name reads back from result.json as none */
    if (k->step == -1)
        snprintf(s->op, sizeof(s->op), "init");
    else if (k->where[0] && !strcmp(k->where, r->name))
        snprintf(s->op, sizeof(s->op), "exec"); /* a program's rank: its step is its name */
    else if (k->where[0])
        first_word(k->where, s->op, sizeof(s->op), " ");
    else
        snprintf(s->op, sizeof(s->op), "end");
    algos(k->calls, s->algo, sizeof(s->algo));
    /* How the rest of the job took it: the other failed ranks' verdicts besides the first's own
     * -- whether a second rank of four also went wrong the first's way is the run's doing --
     * or the first's own when they all failed that way (all hung is not one hung alone). */
    char w[RG_MAX_RANKS][48];
    int n = 0, same = 0;
    for (int i = 0; i < r->ranks; i++) {
        if (i == o || rg_rank_acceptable(r, i))
            continue;
        if (rg_rank_judged(r, i) == rg_rank_judged(r, o))
            same++;
        else
            snprintf(w[n++], sizeof(w[0]), "%s", rg_verdict_name(rg_rank_judged(r, i)));
    }
    if (!n && same)
        snprintf(w[n++], sizeof(w[0]), "%s", s->first);
    join_sorted(w, n, s->others, sizeof(s->others));
    char f[FI_MAX_RULES][48];
    int nf = 0;
    for (int i = 0; i < r->nrules && nf < FI_MAX_RULES; i++)
        if (r->rule[i].fired && !r->rule[i].counting)
            first_word(r->rule[i].rule, f[nf++], sizeof(f[0]), " ;");
    join_sorted(f, nf, s->faults, sizeof(s->faults));
    hung_frames(r, s);
    size_t used = (size_t)snprintf(s->key, sizeof(s->key), "%s|%s|%s|%s|%s|%s|", s->first, s->cls,
                                   s->op, s->algo, s->others, s->faults);
    for (int i = 0; i < s->nframes && used < sizeof(s->key); i++)
        used += (size_t)snprintf(s->key + used, sizeof(s->key) - used, "%s%s", i ? ";" : "",
                                 s->frames[i]);
}

bool rg_sig_matches(const rg_sc_ksig *k, const rg_sig *s)
{
    const rg_sig *w = &k->sig;
    if (w->first[0] && strcmp(w->first, s->first) != 0) /* "": an entry by cause, unnamed */
        return false;
    if (((k->has & RG_SIG_HAS_CLS) && strcmp(w->cls, s->cls)) ||
        ((k->has & RG_SIG_HAS_OP) && strcmp(w->op, s->op)) ||
        ((k->has & RG_SIG_HAS_ALGO) && strcmp(w->algo, s->algo)) ||
        ((k->has & RG_SIG_HAS_OTHERS) && strcmp(w->others, s->others)) ||
        ((k->has & RG_SIG_HAS_FAULTS) && strcmp(w->faults, s->faults)))
        return false;
    if (!(k->has & RG_SIG_HAS_FRAMES))
        return true;
    /* As sets: s's are distinct and sorted; the file's are in any order. */
    int distinct = 0;
    for (int i = 0; i < w->nframes; i++) {
        bool in = false, again = false;
        for (int j = 0; j < s->nframes; j++)
            in |= !strcmp(w->frames[i], s->frames[j]);
        for (int j = 0; j < i; j++)
            again |= !strcmp(w->frames[i], w->frames[j]);
        if (!in)
            return false;
        distinct += !again;
    }
    return distinct == s->nframes;
}
