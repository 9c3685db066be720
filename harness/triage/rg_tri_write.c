/* SPDX-License-Identifier: MIT */
/*
 * The groups written (rg_triage.h): one Markdown report per group, made to be pasted into an
 * issue tracker as it is (title, the smallest scenario inline, the command that reproduces it,
 * expected against observed per rank, the hung ranks' backtraces), triage.json with every
 * group's signature and cases for tools, and the run page's triage section.
 */
#include "judge/rg_judge.h"
#include "report/rg_report.h"
#include "triage/rg_triage.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const rg_tri_stage_names[RG_TRI_STAGES] = {"read", "reruns", "minimise", "traced",
                                                       "write"};

/* A table cell: one line, no '|', cut at max characters. */
static void cell(FILE *f, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++)
        fputc(*s == '|' ? '/' : (*s == '\n' || *s == '\r') ? ' ' : *s, f);
    if (*s)
        fputs("...", f);
}

/* Up to max_lines of a file, fenced; false when it cannot be read. */
static bool fenced_file_from(FILE *f, const char *path, const char *lang, int max_lines,
                             const char *from)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return false;
    char line[1024];
    int n = 0;
    /* From the first line that starts with `from`, when one does. */
    long start = 0;
    while (from && fgets(line, sizeof(line), in)) {
        if (!strncmp(line, from, strlen(from))) {
            start = ftell(in) - (long)strlen(line);
            break;
        }
    }
    fseek(in, start, SEEK_SET);
    fprintf(f, "```%s\n", lang);
    while (fgets(line, sizeof(line), in)) {
        if (n++ == max_lines) {
            fprintf(f, "... (the rest: %s)\n", path);
            break;
        }
        fputs(line, f);
        if (!strchr(line, '\n'))
            fputc('\n', f);
    }
    fprintf(f, "```\n");
    fclose(in);
    return true;
}

static bool fenced_file(FILE *f, const char *path, const char *lang, int max_lines)
{
    return fenced_file_from(f, path, lang, max_lines, NULL);
}

static void signature_md(FILE *f, const rg_sig *s)
{
    fprintf(f, "- **First failure**: `%s`%s%s%s in `%s`", s->first, s->cls[0] ? " (class " : "",
            s->cls, s->cls[0] ? ")" : "", s->op);
    if (s->algo[0])
        fprintf(f, ", the transport ran `%s`", s->algo);
    fprintf(f, "\n- **The other failed ranks**: %s\n", s->others[0] ? s->others : "none");
    fprintf(f, "- **Faults that fired**: %s\n", s->faults[0] ? s->faults : "none");
    if (s->nframes) {
        fprintf(f, "- **Hung ranks wait in**:");
        for (int i = 0; i < s->nframes; i++)
            fprintf(f, " `%s`", s->frames[i]);
        fprintf(f, "\n");
    }
}

static void ranks_md(FILE *f, const rg_result *r)
{
    fprintf(f, "| rank | expected | observed | in | what it said |\n|---|---|---|---|---|\n");
    for (int i = 0; i < r->ranks; i++) {
        const rg_rank_result *k = &r->rank[i];
        char want[RG_SC_EXPECT_STR_MAX];
        rg_sc_expect_str(r->expect[i], r->expect_at[i], r->expect_cls[i], want, sizeof(want));
        fprintf(f, "| %d | %s | %s%s | ", i, want, rg_verdict_name(rg_rank_judged(r, i)),
                rg_rank_acceptable(r, i) ? "" : " **(failed)**");
        cell(f, k->step == -1 ? "init" : k->where[0] ? k->where : "-", 80);
        fprintf(f, " | ");
        cell(f, k->detail[0] ? k->detail : "-", 300);
        fprintf(f, " |\n");
    }
}

void rg_tri_write_md(FILE *f, const rg_tri_run *run, int g)
{
    const rg_tri_group *gr = &run->groups[g];
    const rg_result *rep = run->cases[gr->rep].res;
    char path[1200];
    fprintf(f, "# %s\n\n", gr->title);
    fprintf(f, "- **Seen in**: %d of the run's %d failed scenario(s) (%s)\n", gr->ncases,
            run->nfail, run->dir);
    char rate[200];
    rg_tri_rate_said(&gr->rate, rate, sizeof(rate));
    fprintf(f, "- **Rate**: %s", rate);
    if (gr->rate.n && run->with.deadline_s > 0)
        fprintf(f, " (re-run with `--deadline %g`: a hang judged at %g s or twice the timeout)",
                run->with.deadline_s, run->with.deadline_s);
    fprintf(f, "\n");
    signature_md(f, &gr->sig);
    if (gr->min.path[0] && strcmp(gr->min.sig.faults, gr->sig.faults) != 0)
        fprintf(f,
                "- **Without the faults**: the minimal case fails the same way with %s%s "
                "fired: the faults are not this bug's cause\n",
                gr->min.sig.faults[0] ? "only " : "none", gr->min.sig.faults);
    if (gr->merged[0])
        fprintf(f, "- **Merged into this group**: %s -- their minimal cases fail alike\n",
                gr->merged);
    if (gr->bug[0])
        fprintf(f, "- **%s**: %s\n", gr->is_bug ? "Bug" : "Not a bug of its own yet", gr->bug);
    for (int i = 0; i < gr->nalso; i++) {
        fprintf(f, "%s `", i ? ";" : "- **Also seen as**:");
        cell(f, gr->also[i].key, sizeof(gr->also[i].key));
        fprintf(f, "`");
    }
    if (gr->nalso)
        fprintf(f, "%s\n", gr->also_over ? " (and more)" : "");
    fprintf(f, "- **Cause**: %s\n", gr->cause.text);
    if (gr->cause.nlines)
        fprintf(f, "  (the files cited are in `%s`)\n", gr->cause.from);
    for (int i = 0; i < gr->cause.nlines; i++) {
        fprintf(f, "  - `");
        cell(f, gr->cause.line[i], sizeof(gr->cause.line[i]));
        fprintf(f, "`\n");
    }
    if (gr->also_causes[0])
        fprintf(f, "- **Also proven in the same run**: %s\n", gr->also_causes);
    if (gr->traced[0])
        fprintf(f, "- **Verbs trace**: %s\n", gr->traced);
    fprintf(f, "\n");
    if (gr->min.path[0]) {
        fprintf(f, "## Reproduce\n\n```sh\n%s\n```\n\n", gr->min.repro);
        fprintf(f, "## The minimal scenario (%s: %s)\n\n", gr->min.note, gr->min.steps);
        if (!fenced_file(f, gr->min.path, "yaml", 200))
            fprintf(f, "(%s cannot be read here)\n", gr->min.path);
        fprintf(f,
                "\nThe run's smallest scenario it was minimised from, `%s`, reproduces with\n\n"
                "```sh\n%s\n```\n",
                rep->name, rep->repro[0] ? rep->repro : "(not recorded)");
    } else {
        fprintf(f, "## Reproduce\n\n```sh\n%s\n```\n\n",
                rep->repro[0] ? rep->repro : "(not recorded)");
        fprintf(f, "## The smallest scenario: %s (%d ranks%s%s)\n\n", rep->name, rep->ranks,
                gr->min.note[0] ? "; " : "", gr->min.note);
        if (!fenced_file(f, rep->path, "yaml", 200))
            fprintf(f, "(%s cannot be read here)\n", rep->path);
    }
    fprintf(f, "\n## Expected and observed, per rank\n\n");
    ranks_md(f, rep);
    fprintf(f, "\n## First failure\n\n");
    cell(f, rep->why[0] ? rep->why : "(none named)", sizeof(rep->why));
    fprintf(f, "\n");
    for (int i = 0; i < rep->ranks; i++) {
        if (rg_rank_judged(rep, i) != RG_V_DEADLOCK)
            continue;
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", rep->dir, i);
        /* Its frames as addr2line named them, when it could: the raw dump is in the file. */
        fprintf(f, "\n## Rank %d's backtrace (hung at the deadline)\n\n", i);
        if (!fenced_file_from(f, path, "", 80, RG_BT_NAMED_MARK))
            fprintf(f, "(none taken: %s is missing)\n", path);
    }
    fprintf(f, "\n## Every scenario in this group\n\n");
    for (int c = 0; c < gr->ncases; c++) {
        const rg_result *r = run->cases[gr->cases[c]].res;
        fprintf(f, "- `%s` (%d ranks): ", r->name, r->ranks);
        for (int i = 0; i < r->ranks; i++)
            fprintf(f, "%s%s", i ? "," : "", rg_verdict_name(rg_rank_judged(r, i)));
        fprintf(f, " - %s\n", r->dir);
    }
}

static json_t *sig_json(const rg_sig *s)
{
    json_t *frames = json_array();
    for (int i = 0; i < s->nframes; i++)
        json_array_append_new(frames, json_string(s->frames[i]));
    return json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:s}", "origin", s->origin, "first",
                     s->first, "class", s->cls, "op", s->op, "algo", s->algo, "others", s->others,
                     "faults", s->faults, "frames", frames, "key", s->key);
}

static json_t *group_json(const rg_tri_run *run, int g, const char *file)
{
    const rg_tri_group *gr = &run->groups[g];
    json_t *cases = json_array();
    for (int c = 0; c < gr->ncases; c++) {
        const rg_result *r = run->cases[gr->cases[c]].res;
        json_t *v = json_array();
        for (int i = 0; i < r->ranks; i++)
            json_array_append_new(v, json_string(rg_verdict_name(rg_rank_judged(r, i))));
        json_array_append_new(cases,
                              json_pack("{s:s,s:s,s:s,s:i,s:o}", "name", r->name, "dir", r->dir,
                                        "path", r->path, "ranks", r->ranks, "verdicts", v));
    }
    const rg_result *rep = run->cases[gr->rep].res;
    const rg_tri_rate *t = &gr->rate;
    json_t *rate = json_pack("{s:i,s:i,s:i,s:i,s:i,s:s,s:f}", "reruns", t->n, "same", t->same,
                             "passed", t->passed, "other", t->other, "unjudged", t->unjudged,
                             "other_key", t->other_key, "deadline_s", run->with.deadline_s);
    json_t *min = json_pack("{s:i,s:i,s:s,s:s,s:s,s:s,s:s}", "tried", gr->min.tried, "kept",
                            gr->min.kept, "path", gr->min.path, "steps", gr->min.steps, "repro",
                            gr->min.repro, "note", gr->min.note, "faults", gr->min.sig.faults);
    json_t *lines = json_array();
    for (int i = 0; i < gr->cause.nlines; i++)
        json_array_append_new(lines, json_string(gr->cause.line[i]));
    json_t *cause = json_pack("{s:b,s:s,s:s,s:s,s:o,s:s,s:s}", "proven", gr->cause.proven, "text",
                              gr->cause.text, "site", gr->cause.site, "from", gr->cause.from,
                              "evidence", lines, "traced", gr->traced, "also", gr->also_causes);
    json_t *also = json_array();
    for (int i = 0; i < gr->nalso; i++)
        json_array_append_new(also, sig_json(&gr->also[i]));
    return json_pack("{s:s,s:s,s:o,s:o,s:i,s:s,s:s,s:o,s:o,s:o,s:o,s:s,s:b,s:s}", "title",
                     gr->title, "file", file, "signature", sig_json(&gr->sig), "also_signatures",
                     also, "also_left_out", gr->also_over, "representative", rep->name, "repro",
                     rep->repro, "rate", rate, "minimal", min, "cause", cause, "cases", cases,
                     "merged", gr->merged, "bug", gr->is_bug, "bug_note", gr->bug);
}

/* A YAML double-quoted scalar: what any bytes of a title or frame need to read back as is. */
static void yq(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(f, "\\x%02x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* The run's transport, as report.json names it: "" when it does not. */
static void transport_of(const char *dir, char *out, size_t len)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/report.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    const char *name = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "run"), "transport"), "name"));
    snprintf(out, len, "%s", name ? name : "");
    json_decref(j);
}

/* A scenario's name into a seen: list, once (several runs fail in one scenario), at most
 * RG_SC_KSIG_SEEN. */
static void seen_once(FILE *f, const char *name, const char **seen, int *n)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(seen[i], name))
            return;
    if (*n == RG_SC_KSIG_SEEN)
        return;
    fprintf(f, "%s", *n ? ", " : "");
    yq(f, name);
    seen[(*n)++] = name;
}

static void known_entry(FILE *f, const rg_tri_run *run, const rg_tri_group *gr, const rg_sig *s)
{
    fprintf(f, "  - why: ");
    yq(f, gr->title);
    fprintf(f, "\n    first: %s\n    class: ", s->first);
    yq(f, s->cls);
    fprintf(f, "\n    op: ");
    yq(f, s->op);
    fprintf(f, "\n    algo: ");
    yq(f, s->algo);
    fprintf(f, "\n    others: ");
    yq(f, s->others);
    /* Faults only when every failure of the group had the same: one that showed without them
     * (merged, or its minimal case) is the same bug under any. */
    bool one = !gr->merged[0] && !gr->nalso &&
               (!gr->min.sig.key[0] || !strcmp(gr->min.sig.faults, s->faults));
    for (int c = 0; one && c < gr->ncases; c++)
        one = !strcmp(run->cases[gr->cases[c]].sig.faults, s->faults);
    if (one) {
        fprintf(f, "\n    faults: ");
        yq(f, s->faults);
    }
    fprintf(f, "\n    frames: [");
    for (int i = 0; i < s->nframes; i++) {
        fprintf(f, "%s", i ? ", " : "");
        yq(f, s->frames[i]);
    }
    fprintf(f, "]\n");
    if (gr->rate.n)
        fprintf(f, "    rate: \"%d of %d\"\n", gr->rate.same, gr->rate.n);
    fprintf(f, "    seen: [");
    const char *seen[RG_SC_KSIG_SEEN];
    int nseen = 0;
    for (int c = 0; c < gr->ncases; c++)
        seen_once(f, run->cases[gr->cases[c]].res->name, seen, &nseen);
    fprintf(f, "]\n");
}

/* Whether a signature is one under faults, and its key by fault (--known-by-fault): the fault
 * kinds and the first verdict; the frames of a hang (where it waits is the bug); the class of a
 * detected (which status told is). */
static bool fault_key(const rg_sig *s, char *key, size_t len)
{
    if (!s->faults[0])
        return false;
    bool hang = !strcmp(s->first, "DEADLOCK") || !strcmp(s->first, "NOT_FAIL_STOP");
    size_t o = (size_t)snprintf(key, len, "%s\x1f%s\x1f%s", s->first, s->faults,
                                !strcmp(s->first, "detected") ? s->cls : "");
    for (int i = 0; hang && i < s->nframes && o < len; i++)
        o += (size_t)snprintf(key + o, len - o, "\x1f%s", s->frames[i]);
    return true;
}

/* The signatures of run (each group's and its other faces), in file order, and their group. */
static const rg_sig *nth_sig(const rg_tri_run *run, int k, const rg_tri_group **gr)
{
    for (int g = 0; g < run->ngroups; g++) {
        if (k <= run->groups[g].nalso) {
            *gr = &run->groups[g];
            return k ? &run->groups[g].also[k - 1] : &run->groups[g].sig;
        }
        k -= 1 + run->groups[g].nalso;
    }
    return NULL;
}

/* One entry for every signature under faults with key: its fault kinds and first verdict (and
 * what the key holds beside), seen wherever any of them was. */
static void fault_entry(FILE *f, const rg_tri_run *run, const rg_sig *s, const char *key, int nsig)
{
    char why[sizeof(((rg_sc_ksig *)0)->why)], k2[1200];
    int faces = 0;
    const rg_tri_group *gr;
    for (int k = 0; k < nsig; k++)
        faces += fault_key(nth_sig(run, k, &gr), k2, sizeof(k2)) && !strcmp(k2, key);
    bool hang = !strcmp(s->first, "DEADLOCK") || !strcmp(s->first, "NOT_FAIL_STOP");
    bool det = !strcmp(s->first, "detected");
    char full[sizeof(why) + 256];
    snprintf(full, sizeof(full), "%s%s%s%s%s under %s, whatever else it showed (%d face%s seen)",
             s->first, det && s->cls[0] ? " " : "", det ? s->cls : "",
             hang && s->nframes ? ", waiting in " : "", hang && s->nframes ? s->frames[0] : "",
             s->faults, faces, faces == 1 ? "" : "s");
    rg_cut(why, sizeof(why), full);
    fprintf(f, "  - why: ");
    yq(f, why);
    fprintf(f, "\n    first: %s\n    faults: ", s->first);
    yq(f, s->faults);
    if (det) {
        fprintf(f, "\n    class: ");
        yq(f, s->cls);
    }
    if (hang) {
        fprintf(f, "\n    frames: [");
        for (int i = 0; i < s->nframes; i++) {
            fprintf(f, "%s", i ? ", " : "");
            yq(f, s->frames[i]);
        }
        fprintf(f, "]");
    }
    /* Seen where a failure showed this key itself: a bug's group also holds its other faces. */
    fprintf(f, "\n    seen: [");
    const char *seen[RG_SC_KSIG_SEEN];
    int nseen = 0;
    for (int c = 0; c < run->nfail; c++)
        if (fault_key(&run->cases[c].sig, k2, sizeof(k2)) && !strcmp(k2, key))
            seen_once(f, run->cases[c].res->name, seen, &nseen);
    fprintf(f, "]\n");
}

/*
 * The entry by cause for every group whose cause was proven c: a failure whose own files
 * prove c is that bug whatever it looked like this time (a race's other verdict, step or
 * frame); one proven nothing, or with no trace to prove it from, falls to the signatures.
 */
static void cause_entry(FILE *f, const rg_tri_run *run, rg_cause c)
{
    /* why must fit the entry's (rg_sc_ksig's 255 characters): the groups past what fits are
     * counted, not named. */
    char groups[120] = "", why[sizeof(((rg_sc_ksig *)0)->why)];
    int ng = 0, nseen = 0, more = 0;
    const char *seen[RG_SC_KSIG_SEEN];
    size_t used = 0;
    for (int g = 0; g < run->ngroups; g++) {
        if (!run->groups[g].cause.proven || run->groups[g].cause.kind != c)
            continue;
        char one[16];
        int w = snprintf(one, sizeof(one), "%s%d", ng++ ? ", " : "", g + 1);
        if (!more && used + (size_t)w + 8 < sizeof(groups))
            used += (size_t)snprintf(groups + used, sizeof(groups) - used, "%s", one);
        else
            more++;
    }
    if (!ng)
        return;
    if (more)
        snprintf(groups + used, sizeof(groups) - used, " +%d", more);
    snprintf(why, sizeof(why), "%s (the cause triage proved for group%s %s)", rg_cause_title(c),
             ng > 1 ? "s" : "", groups);
    fprintf(f, "  - why: ");
    yq(f, why);
    fprintf(f, "\n    cause: %s\n    seen: [", rg_cause_name(c));
    for (int g = 0; g < run->ngroups; g++) {
        const rg_tri_group *gr = &run->groups[g];
        if (!gr->cause.proven || gr->cause.kind != c)
            continue;
        for (int k = 0; k < gr->ncases; k++)
            seen_once(f, run->cases[gr->cases[k]].res->name, seen, &nseen);
    }
    fprintf(f, "]\n");
}

/* --known-by-fault: every signature under faults folded into one entry a key (fault_key), the
 * first of them where it stood; the others whole, as without it. Returns the signatures left
 * out for room. */
static int write_by_fault(const rg_tri_run *run, FILE *f, int room, int ncause)
{
    int nsig = 0, left = 0, used = 0;
    const rg_tri_group *gr;
    for (int g = 0; g < run->ngroups; g++)
        nsig += 1 + run->groups[g].nalso;
    fprintf(f, "signatures:%s\n", nsig + ncause ? "" : " []");
    for (int k = 0; k < nsig; k++) {
        const rg_sig *s = nth_sig(run, k, &gr);
        char key[1200], k2[1200];
        if (fault_key(s, key, sizeof(key))) {
            bool before = false; /* folded into an earlier one's entry */
            for (int j = 0; j < k && !before; j++)
                before = fault_key(nth_sig(run, j, &gr), k2, sizeof(k2)) && !strcmp(k2, key);
            if (before)
                continue;
            if (used < room) {
                fault_entry(f, run, s, key, nsig);
                used++;
            } else {
                left++;
            }
            continue;
        }
        if (used < room) {
            known_entry(f, run, gr, s);
            used++;
        } else {
            left++;
        }
    }
    for (int c = RG_C_NONE + 1; c < RG_C_COUNT; c++)
        cause_entry(f, run, (rg_cause)c);
    return left;
}

int rg_tri_write_known(const rg_tri_run *run, FILE *f)
{
    char transport[128];
    transport_of(run->dir, transport, sizeof(transport));
    fprintf(f,
            "# Known failures by signature and by cause, written by railguard triage from %s.\n"
            "# With railguard run --known FILE a failure of one of these signatures reads XFAIL\n"
            "# whatever its scenario, a new one still fails, and a scenario under seen: that\n"
            "# passes reads XPASS (for a flaky bug, see its rate). An entry by cause matches a\n"
            "# failure whose own files prove that cause (the run records the verbs trace when\n"
            "# the cause needs it), whatever verdict or step it showed at this time.\n",
            run->dir);
    if (run->with.by_fault)
        fprintf(f,
                "# --known-by-fault: a failure under faults is known by its fault kinds and first\n"
                "# verdict (a hang's frames, a detected's class) whatever else it showed, so a\n"
                "# new bug with the same fault and first verdict reads XFAIL too.\n");
    if (transport[0]) {
        fprintf(f, "transport: ");
        yq(f, transport);
        fprintf(f, "\n");
    }
    int ncause = 0;
    for (int c = RG_C_NONE + 1; c < RG_C_COUNT; c++)
        for (int g = 0; g < run->ngroups; g++)
            if (run->groups[g].cause.proven && run->groups[g].cause.kind == (rg_cause)c) {
                ncause++;
                break;
            }
    /* The causes first in room: each holds every group it was proven for, and more. */
    /* A bug's every signature is an entry of its own, under the bug's title: a failure with
     * any of them is that bug. A group none of whose signatures fit is left out whole. */
    int room = RG_SC_KSIG_MAX - ncause, n = 0, used = 0;
    if (run->with.by_fault)
        return write_by_fault(run, f, room, ncause);
    while (n < run->ngroups && used + 1 + run->groups[n].nalso <= room)
        used += 1 + run->groups[n++].nalso;
    fprintf(f, "signatures:%s\n", n + ncause ? "" : " []");
    for (int g = 0; g < n; g++) {
        known_entry(f, run, &run->groups[g], &run->groups[g].sig);
        for (int i = 0; i < run->groups[g].nalso; i++)
            known_entry(f, run, &run->groups[g], &run->groups[g].also[i]);
    }
    for (int c = RG_C_NONE + 1; c < RG_C_COUNT; c++)
        cause_entry(f, run, (rg_cause)c);
    return run->ngroups - n; /* groups left out: more than a file holds */
}

/* The run page's triage section (triage/section.html, spliced into index.html by report/):
 * every group with its size, rate, cause and files, escaped here once. */
static int write_section(const rg_tri_run *run, const char *dir, char *err, size_t errlen)
{
    char path[1300], said[200];
    int nbugs = 0;
    for (int g = 0; g < run->ngroups; g++)
        nbugs += run->groups[g].is_bug;
    snprintf(path, sizeof(path), "%s/section.html", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write it", path);
        return -1;
    }
    fprintf(f,
            "<section id=\"triage\"><h2>Triage: %d failure(s) in %d report(s), %d of them a "
            "proven bug</h2>\n"
            "<p>A bug is every group whose evidence proves one cause at one place; a group with no "
            "cause proven there stands alone (docs/triage.md). Each report is ready for an issue "
            "tracker. Known failures by signature and cause, for <code>railguard run "
            "--known</code>: <a href=\"triage/known-failures.yaml\">triage/known-failures.yaml"
            "</a>.</p>\n<ol>\n",
            run->nfail, run->ngroups, nbugs);
    for (int g = 0; g < run->ngroups; g++) {
        const rg_tri_group *gr = &run->groups[g];
        fprintf(f, "<li><a href=\"triage/%02d-%s.md\">", g + 1, gr->slug);
        rg_markup_text(f, gr->title);
        fprintf(f, "</a> (%d scenario(s))<br>rate: ", gr->ncases);
        rg_tri_rate_said(&gr->rate, said, sizeof(said));
        rg_markup_text(f, said);
        fputs("<br>cause: ", f);
        rg_markup_text(f, gr->cause.text);
        if (gr->also_causes[0]) {
            fputs("<br>also proven: ", f);
            rg_markup_text(f, gr->also_causes);
        }
        if (gr->bug[0]) {
            fputs(gr->is_bug ? "<br>bug: " : "<br>apart: ", f);
            rg_markup_text(f, gr->bug);
        }
        if (gr->min.path[0])
            fprintf(f,
                    "<br>minimal case: <a href=\"triage/%02d-%s.min.yaml\">triage/%02d-%s.min.yaml"
                    "</a>",
                    g + 1, gr->slug, g + 1, gr->slug);
        fputs("</li>\n", f);
    }
    fputs("</ol></section>\n", f);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: cannot write it", path);
        return -1;
    }
    /* A run directory without its page (copied results) gets none. */
    snprintf(path, sizeof(path), "%s/index.html", run->dir);
    if (access(path, F_OK) != 0)
        return 0;
    return rg_html_triage(path, err, errlen);
}

int rg_tri_write(const rg_tri_run *run, char *err, size_t errlen)
{
    char dir[1100], path[1300];
    snprintf(dir, sizeof(dir), "%s/triage", run->dir);
    if (rg_mkdirs(dir) != 0) {
        snprintf(err, errlen, "%s: cannot make it", dir);
        return -1;
    }
    json_t *groups = json_array(), *unread = json_array();
    for (int g = 0; g < run->ngroups; g++) {
        char file[96];
        snprintf(file, sizeof(file), "%02d-%s.md", g + 1, run->groups[g].slug);
        snprintf(path, sizeof(path), "%s/%s", dir, file);
        FILE *f = fopen(path, "w");
        if (!f) {
            snprintf(err, errlen, "%s: cannot write it", path);
            json_decref(groups);
            json_decref(unread);
            return -1;
        }
        rg_tri_write_md(f, run, g);
        fclose(f);
        json_array_append_new(groups, group_json(run, g, file));
    }
    for (int i = 0; i < run->nunread && i < (int)(sizeof(run->unread) / sizeof(run->unread[0]));
         i++)
        json_array_append_new(unread, json_string(run->unread[i]));
    json_t *j =
        json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:o,s:o}", "run", run->dir, "results", run->nresults,
                  "failures", run->nfail, "xpass", run->nxpass, "slow", run->nslow, "unread",
                  run->nunread, "unread_lines", unread, "groups", groups);
    /* Where its time went, a stage not run null (the writing's own is not known yet). */
    json_t *t = json_object();
    for (int s = 0; t && s < RG_TRI_STAGES; s++)
        json_object_set_new(t, rg_tri_stage_names[s],
                            run->time_s[s] >= 0 ? json_real(run->time_s[s]) : json_null());
    if (j)
        json_object_set_new(j, "time_s", t);
    else
        json_decref(t);
    snprintf(path, sizeof(path), "%s/known-failures.yaml", dir);
    FILE *kf = fopen(path, "w");
    int left = kf ? rg_tri_write_known(run, kf) : 0;
    if (!kf || fclose(kf) != 0) {
        snprintf(err, errlen, "%s: cannot write it", path);
        json_decref(j);
        return -1;
    }
    if (left)
        fprintf(stderr,
                "railguard triage: %s holds as many entries as a file can (%d); %d more %s "
                "not in it\n",
                path, RG_SC_KSIG_MAX, left,
                run->with.by_fault ? "signature(s) are" : "group(s) are");
    snprintf(path, sizeof(path), "%s/triage.json", dir);
    if (rg_json_write(j, path, err, errlen) != 0)
        return -1;
    return write_section(run, dir, err, errlen);
}
