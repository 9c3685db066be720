/* SPDX-License-Identifier: MIT */
/* A comparison written: the table on a terminal, JSON for programs, Markdown for a PR comment
 * or a job summary. Each from the same decided items, so they never disagree. */
#include "rg_compare.h"
#include "result/rg_result.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *const side_names[RG_CMP_SIDES] = {"base", "head"};

/* "3/4" or "0/5": failing runs of runs. */
static const char *rate(const rg_cmp_item *it, int s, char *buf, size_t len)
{
    snprintf(buf, len, "%d/%d", it->k[s], it->n[s]);
    return buf;
}

/* What an item's state rests on, in words: "absent from 5 head runs; at the base's 3/3 it would
 * have shown with 100.0 % probability" and the like. */
static void basis(const rg_compare *c, const rg_cmp_item *it, char *out, size_t len)
{
    int shown = it->k[RG_CMP_BASE] ? RG_CMP_BASE : RG_CMP_HEAD, quiet = RG_CMP_SIDES - 1 - shown;
    switch (it->state) {
    case RG_CMP_STILL:
        snprintf(out, len, "fails on both sides");
        return;
    case RG_CMP_FIXED:
    case RG_CMP_INTRODUCED:
        snprintf(out, len,
                 "absent from %d %s run(s); at the %s's rate (%d/%d) it would have shown in "
                 "them with probability >= %.0f %%",
                 it->n[quiet], side_names[quiet], side_names[shown], it->k[shown], it->n[shown],
                 100 * c->confidence);
        return;
    default:
        if (!it->ran[quiet])
            snprintf(out, len, "its scenarios did not run on the %s side", side_names[quiet]);
        else if (!it->n[quiet])
            snprintf(out, len,
                     "each of its scenarios' %d %s run(s) failed otherwise first, which could "
                     "hide it: %d clean run(s) would settle it",
                     it->ran[quiet], side_names[quiet], it->more);
        else
            snprintf(out, len,
                     "absent from %d %s run(s), too few at the %s's rate (%d/%d): %d more would "
                     "settle it",
                     it->n[quiet], side_names[quiet], side_names[shown], it->k[shown], it->n[shown],
                     it->more);
        return;
    }
}

static void scenarios(const rg_compare *c, const rg_cmp_item *it, char *out, size_t len)
{
    out[0] = '\0';
    for (int j = 0; j < it->nseen; j++) {
        size_t at = strlen(out);
        snprintf(out + at, len - at, "%s%s", j ? ", " : "", c->sc[it->seen[j]].name);
    }
}

static int runs_of(const rg_compare *c, int s)
{
    int most = 0;
    for (int i = 0; i < c->nsc; i++)
        most = c->sc[i].runs[s] + c->sc[i].skipped[s] > most
                   ? c->sc[i].runs[s] + c->sc[i].skipped[s]
                   : most;
    return most;
}

void rg_cmp_table(FILE *f, const rg_compare *c)
{
    char a[32], b[32], why[600], scs[2000];
    for (int s = 0; s < RG_CMP_SIDES; s++) {
        fprintf(f, "railguard compare: %s: %d run directory(ies), up to %d run(s) a scenario\n",
                side_names[s], c->ndirs[s], runs_of(c, s));
        fprintf(f, "  %s's ", side_names[s]);
        rg_phases_said(f, &c->phases[s], c->unmeasured[s], c->results[s]);
    }
    fprintf(f, "\n%-14s %-9s %-9s %s\n", "", "base", "head", "failure");
    for (int i = 0; i < c->nitems; i++) {
        const rg_cmp_item *it = &c->items[i];
        basis(c, it, why, sizeof(why));
        scenarios(c, it, scs, sizeof(scs));
        if (it->cause[0])
            fprintf(f, "%-14s %-9s %-9s %s\n", rg_cmp_state_name(it->state),
                    rate(it, RG_CMP_BASE, a, sizeof(a)), rate(it, RG_CMP_HEAD, b, sizeof(b)),
                    it->cause);
        else
            fprintf(f, "%-14s %-9s %-9s %s in %s\n", rg_cmp_state_name(it->state),
                    rate(it, RG_CMP_BASE, a, sizeof(a)), rate(it, RG_CMP_HEAD, b, sizeof(b)),
                    it->verdict, it->op[0] ? it->op : "?");
        fprintf(f, "      %s\n      scenarios: %s\n      %s: %s\n", why, scs,
                it->cause[0] ? "matched by its proven cause; first signature" : "signature",
                it->key);
        for (int s = 0; s < RG_CMP_SIDES; s++)
            if (it->example[s][0])
                fprintf(f, "      %s: %s\n", side_names[s], it->example[s]);
    }
    fprintf(f, "\ncompare: %d fixed, %d introduced, %d still failing, %d not settled\n",
            c->by[RG_CMP_FIXED], c->by[RG_CMP_INTRODUCED], c->by[RG_CMP_STILL],
            c->by[RG_CMP_NOT_SETTLED]);
}

int rg_cmp_json(const rg_compare *c, const char *path, char *err, size_t errlen)
{
    json_t *j = json_object(), *items = json_array(), *sides = json_object();
    char why[600];
    int bad = !j || !items || !sides;
    for (int s = 0; s < RG_CMP_SIDES && !bad; s++) {
        json_t *d = json_array();
        for (int k = 0; k < c->ndirs[s] && d; k++)
            json_array_append_new(d, json_string(c->dirs[s][k]));
        bad |= !d || json_object_set_new(sides, side_names[s], d) != 0;
    }
    for (int i = 0; i < c->nitems && !bad; i++) {
        const rg_cmp_item *it = &c->items[i];
        json_t *o = json_object(), *scs = json_array();
        bad |= !o || !scs;
        for (int k = 0; k < it->nseen && !bad; k++)
            json_array_append_new(scs, json_string(c->sc[it->seen[k]].name));
        basis(c, it, why, sizeof(why));
        bad |= bad || json_object_set_new(o, "state", json_string(rg_cmp_state_name(it->state))) ||
               json_object_set_new(o, "signature", json_string(it->key)) ||
               json_object_set_new(o, "cause", json_string(it->cause)) ||
               json_object_set_new(o, "verdict", json_string(it->verdict)) ||
               json_object_set_new(o, "op", json_string(it->op)) ||
               json_object_set_new(o, "basis", json_string(why)) ||
               json_object_set_new(o, "scenarios", scs);
        for (int s = 0; s < RG_CMP_SIDES && !bad; s++)
            bad |= json_object_set_new(o, side_names[s],
                                       json_pack("{s:i,s:i,s:s}", "failed", it->k[s], "runs",
                                                 it->n[s], "example", it->example[s])) != 0;
        if (!bad && it->state == RG_CMP_NOT_SETTLED && it->more > 0)
            bad |= json_object_set_new(o, "more_runs",
                                       json_pack("{s:s,s:i}", "side", side_names[it->more_side],
                                                 "runs", it->more)) != 0;
        bad |= bad || json_array_append_new(items, o) != 0;
    }
    if (!bad)
        bad = json_object_set_new(j, "confidence", json_real(c->confidence)) ||
              json_object_set_new(j, "runs", sides) || json_object_set_new(j, "failures", items) ||
              json_object_set_new(j, "phases",
                                  json_pack("{s:o,s:o}", "base",
                                            rg_phases_json(&c->phases[RG_CMP_BASE]), "head",
                                            rg_phases_json(&c->phases[RG_CMP_HEAD]))) ||
              json_object_set_new(j, "counts",
                                  json_pack("{s:i,s:i,s:i,s:i}", "fixed", c->by[RG_CMP_FIXED],
                                            "introduced", c->by[RG_CMP_INTRODUCED], "still_failing",
                                            c->by[RG_CMP_STILL], "not_settled",
                                            c->by[RG_CMP_NOT_SETTLED]));
    if (bad) {
        json_decref(j);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return rg_json_write(j, path, err, errlen);
}

/* A Markdown table cell: '|' and newlines would end it. */
static void cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s == '\n' ? ' ' : *s, f);
    }
}

int rg_cmp_markdown(const rg_compare *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    char a[32], b[32], why[600], scs[2000];
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f,
            "### railguard compare\n\n**%d fixed, %d introduced, %d still failing, %d not "
            "settled** (base: %d run directory(ies), head: %d)\n\n",
            c->by[RG_CMP_FIXED], c->by[RG_CMP_INTRODUCED], c->by[RG_CMP_STILL],
            c->by[RG_CMP_NOT_SETTLED], c->ndirs[RG_CMP_BASE], c->ndirs[RG_CMP_HEAD]);
    if (c->nitems)
        fprintf(f, "| | failure | base | head | why | scenarios |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < c->nitems; i++) {
        const rg_cmp_item *it = &c->items[i];
        basis(c, it, why, sizeof(why));
        scenarios(c, it, scs, sizeof(scs));
        fprintf(f, "| %s | ", rg_cmp_state_name(it->state));
        if (it->cause[0])
            cell(f, it->cause);
        else
            fprintf(f, "%s in %s", it->verdict, it->op[0] ? it->op : "?");
        fprintf(f, " | %s | %s | ", rate(it, RG_CMP_BASE, a, sizeof(a)),
                rate(it, RG_CMP_HEAD, b, sizeof(b)));
        cell(f, why);
        fputs(" | ", f);
        cell(f, scs);
        fputs(" |\n", f);
    }
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
