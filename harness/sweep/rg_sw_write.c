/* SPDX-License-Identifier: MIT */
/*
 * A sweep's result written for people and for CI (rg_sweep.h): the table (sweep.txt), JUnit
 * (junit.xml, one test case a point) and the page (index.html), each from sweep.json's
 * content alone -- no time, no host, no directory -- so a merge of shards writes what the
 * unsharded sweep writes, byte for byte. How long it took is said on the command's own lines.
 */
#include "sweep/rg_sweep.h"

#include "result/rg_result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tally {
    int n[RG_SW_STATES];
};

static struct tally count(const rg_sw_result *r)
{
    struct tally t = {{0}};
    for (int i = 0; i < r->nrows; i++)
        t.n[r->rows[i].state]++;
    return t;
}

/* "points/0007.yaml": where a point's scenario is, in the sweep's (or merge's) directory. */
static void point_file(const rg_sw_row *w, char *out, size_t len)
{
    snprintf(out, len, "points/%04d.yaml", w->n);
}

void rg_sw_table(FILE *f, const rg_sw_result *r)
{
    struct tally t = count(r);
    fprintf(f, "sweep of %s (%s), fault %s: %d point(s) run of a plan of %d (digest %s)", r->name,
            r->scenario, rg_sweep_kind_name(r->kind), r->nrows, r->npoints, r->digest);
    if (r->shard_n)
        fprintf(f, ", shard %d/%d", r->shard_k, r->shard_n);
    fprintf(f, "\n  %d pass, %d not fired, %d flaky, %d FAIL\n", t.n[RG_SW_PASSED],
            t.n[RG_SW_NOT_FIRED], t.n[RG_SW_FLAKY], t.n[RG_SW_FAILED]);
    for (int i = 0; i < r->nrows; i++) {
        const rg_sw_row *w = &r->rows[i];
        if (w->state != RG_SW_FAILED && w->state != RG_SW_FLAKY)
            continue;
        char file[32];
        point_file(w, file, sizeof(file));
        fprintf(f, "  %-5s point %d: %s: %s\n", rg_sw_state_name(w->state), w->n, w->p.rule,
                w->verdicts[0] ? w->verdicts : "no result");
        if (w->first[0])
            fprintf(f, "        %s\n", w->first);
        if (w->site[0]) { /* where in the program the fault that broke it landed */
            const rg_sw_site *s = NULL;
            for (int k = 0; k < r->nsites && !s; k++)
                s = !strcmp(r->sites[k].site, w->site) ? &r->sites[k] : NULL;
            char at[1100];
            if (s && s->func[0] && s->where[0])
                fprintf(f, "        landed at: %s (%s)\n", w->site,
                        rg_sw_site_names(s, at, sizeof(at)));
            else if (s && s->func[0])
                fprintf(f, "        landed at: %s (%s)\n", w->site, s->func);
            else
                fprintf(f, "        landed at: %s\n", w->site);
        }
        if (w->state == RG_SW_FAILED)
            fprintf(f,
                    "        reproduce (in the sweep's directory): railguard run --out repro %s\n",
                    file);
        if (w->shrunk[0])
            fprintf(f, "        shrunk: %s\n", w->shrunk);
    }
    rg_sw_sites_table(f, r);
}

static void junit(FILE *f, const rg_sw_result *r)
{
    struct tally t = count(r);
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n"
            "  <testsuite name=\"railguard.sweep.",
            r->nrows, t.n[RG_SW_FAILED], t.n[RG_SW_NOT_FIRED]);
    rg_markup_text(f, r->name);
    fprintf(f, ".%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n",
            rg_sweep_kind_name(r->kind), r->nrows, t.n[RG_SW_FAILED], t.n[RG_SW_NOT_FIRED]);
    for (int i = 0; i < r->nrows; i++) {
        const rg_sw_row *w = &r->rows[i];
        fprintf(f, "    <testcase classname=\"railguard.sweep\" name=\"point %d: ", w->n);
        rg_markup_text(f, w->p.rule);
        fputs("\">", f);
        if (w->state == RG_SW_FAILED) {
            fputs("<failure message=\"", f);
            rg_markup_text(f, w->verdicts[0] ? w->verdicts : "no result");
            fputs("\">", f);
            rg_markup_text(f, w->first);
            fputs("</failure>", f);
        } else if (w->state == RG_SW_NOT_FIRED) {
            fputs("<skipped message=\"the fault never fired: the point proves nothing\"/>", f);
        } else if (w->state == RG_SW_FLAKY) {
            fputs("<system-out>failed in its batch, passed when run again alone: ", f);
            rg_markup_text(f, w->first);
            fputs("</system-out>", f);
        }
        fputs("</testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
}

static void page(FILE *f, const rg_sw_result *r)
{
    struct tally t = count(r);
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>railguard sweep ", f);
    rg_markup_text(f, r->name);
    fputs("</title>\n<style>body{font-family:sans-serif}td{padding:0 .6em}"
          ".FAIL{background:#fdd}.flaky{background:#ffd}</style></head><body>\n<h1>Sweep of ",
          f);
    rg_markup_text(f, r->name);
    fprintf(f, ", fault %s</h1>\n<p>", rg_sweep_kind_name(r->kind));
    rg_markup_text(f, r->scenario);
    fprintf(f, ": %d point(s) of a plan of %d (digest %s)", r->nrows, r->npoints, r->digest);
    if (r->shard_n)
        fprintf(f, ", shard %d/%d", r->shard_k, r->shard_n);
    fprintf(f,
            ". <b>%d pass, %d not fired, %d flaky, %d FAIL</b>.</p>\n<table>\n<tr><th>point</th>"
            "<th>rule</th><th>verdicts</th><th>outcome</th><th>first failure</th></tr>\n",
            t.n[RG_SW_PASSED], t.n[RG_SW_NOT_FIRED], t.n[RG_SW_FLAKY], t.n[RG_SW_FAILED]);
    for (int pass = 0; pass < 2; pass++) /* failures first, then the rest, each by number */
        for (int i = 0; i < r->nrows; i++) {
            const rg_sw_row *w = &r->rows[i];
            bool bad = w->state == RG_SW_FAILED || w->state == RG_SW_FLAKY;
            if (bad != (pass == 0))
                continue;
            char file[32];
            point_file(w, file, sizeof(file));
            fprintf(f, "<tr class=\"%s\"><td><a href=\"%s\">%d</a></td><td>",
                    w->state == RG_SW_FAILED  ? "FAIL"
                    : w->state == RG_SW_FLAKY ? "flaky"
                                              : "",
                    file, w->n);
            rg_markup_text(f, w->p.rule);
            fputs("</td><td>", f);
            rg_markup_text(f, w->verdicts);
            fprintf(f, "</td><td>%s</td><td>", rg_sw_state_name(w->state));
            rg_markup_text(f, w->first);
            if (w->shrunk[0]) {
                fputs(" (<a href=\"", f);
                rg_markup_text(f, w->shrunk);
                fputs("\">shrunk</a>)", f);
            }
            fputs("</td></tr>\n", f);
        }
    fputs("</table>\n<h2>Call sites</h2>\n<pre>", f);
    /* The same table as sweep.txt's, from the same content. */
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m) {
        rg_sw_sites_table(m, r);
        fclose(m);
        rg_markup_text(f, text ? text : "");
    }
    free(text);
    fputs("</pre>\n</body></html>\n", f);
}

/* DIR/NAME written by body: 0, or -1 with err naming the file. */
static int write_file(const char *dir, const char *name, void (*body)(FILE *, const rg_sw_result *),
                      const rg_sw_result *r, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f)
        body(f, r);
    if (!f || fclose(f) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int rg_sw_write(const rg_sw_result *r, const char *dir, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/sweep.json", dir);
    if (rg_sw_save(r, path, err, errlen) != 0 ||
        write_file(dir, "sweep.txt", rg_sw_table, r, err, errlen) != 0 ||
        write_file(dir, "junit.xml", junit, r, err, errlen) != 0)
        return -1;
    return write_file(dir, "index.html", page, r, err, errlen);
}
