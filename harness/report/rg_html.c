/* SPDX-License-Identifier: MIT */
/*
 * The run page: index.html in a run's directory. One static file, no script, no fetch: the
 * table of scenarios (failures first) with every rank's verdict, the first failure, each fault
 * rule's fired counts, the reproduce command and links to the logs, events and trace; and for
 * each failing scenario a small inline SVG of its ranks' timelines (calls, fired faults, the
 * verdict), the picture that says who failed first and who was left waiting. Everything that
 * comes from a scenario file, a transport or the network is escaped on the way out.
 */
#include "judge/rg_judge.h"
#include "report/rg_report.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Text into HTML, for element content and for attribute values in double quotes. */
static void esc(FILE *f, const char *s)
{
    rg_markup_text(f, s);
}

/* A path relative to the page, for href: the scenario's directory is beside index.html (only
 * the last part of r->dir is used, percent-encoded where it is not a plain name), or is the
 * page's own (`inside`: an external launch's merged page). */
static void href(FILE *f, const rg_result *r, const char *file, bool inside)
{
    if (inside) {
        fputs(file, f);
        return;
    }
    const char *base = strrchr(r->dir, '/');
    base = base ? base + 1 : r->dir;
    for (const char *s = base; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-_.", c))
            fputc(c, f);
        else
            fprintf(f, "%%%02X", c);
    }
    fprintf(f, "/%s", file);
}

static bool failing(const rg_result *r)
{
    return !r->passed || r->known_state == RG_KNOWN_XPASS;
}

/* A verdict's colour class: ok and the planned endings quiet, failures loud. */
static const char *vclass(rg_verdict v)
{
    switch (v) {
    case RG_V_OK:
        return "ok";
    case RG_V_UNSUPPORTED:
        return "skip";
    case RG_V_DETECTED:
    case RG_V_KILLED:
        return "det";
    case RG_V_LEAK:
        return "warn";
    default:
        return "bad";
    }
}

static const char *span_fill(const char *result)
{
    if (!strcmp(result, "ok"))
        return "#8fb3d9";
    if (!strcmp(result, "detected") || !strcmp(result, "unsupported") || !strcmp(result, "killed"))
        return "#f0b25a";
    return "#d9534f";
}

static void svg_timeline(FILE *f, const rg_result *r, rg_tl_rank *t)
{
    const double W = 860, lane = 26, left = 60, top = 18;
    double end = r->seconds > 0 ? r->seconds : 1;
    double h = top + lane * r->ranks + 24;
    fprintf(f,
            "<svg class=\"tl\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "role=\"img\" aria-label=\"timeline of ",
            left + W + 10, h, left + W + 10, h);
    esc(f, r->name);
    fputs("\">\n", f);
    fprintf(f, "<text x=\"%.0f\" y=\"12\" class=\"ax\">0 s</text>", left);
    fprintf(f, "<text x=\"%.0f\" y=\"12\" class=\"ax\" text-anchor=\"end\">%.2f s</text>\n",
            left + W, end);
    int first = rg_first_failure(r);
    double first_t = first >= 0 ? r->rank[first].t_s : -1;
    for (int k = 0; k < r->ranks; k++) {
        double y = top + lane * k;
        fprintf(f, "<text x=\"4\" y=\"%.0f\" class=\"lab\">rank %d</text>", y + 15, k);
        fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" class=\"lane\"/>\n", left,
                left + W, y + 11, y + 11);
        if (rg_timeline_load(r, k, t) != 0)
            continue;
        for (int i = 0; i < t->nspans; i++) {
            const rg_tl_span *s = &t->span[i];
            double x0 = left + W * (s->t0_s < 0 ? 0 : s->t0_s) / end;
            double x1 = left + W * (s->t1_s > end ? end : s->t1_s) / end;
            if (x1 - x0 < 1)
                x1 = x0 + 1;
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"16\" fill=\"%s\" "
                    "class=\"span\"><title>",
                    x0, y + 3, x1 - x0, span_fill(s->result));
            fprintf(f, "rank %d step %d.%d ", k, s->step, s->rep);
            esc(f, s->label);
            fprintf(f, ": %.3f-%.3f s, ", s->t0_s, s->t1_s);
            esc(f, s->result);
            fputs("</title></rect>\n", f);
        }
        for (int i = 0; i < t->nmarks; i++) {
            double x = left + W * t->mark[i].t_s / end;
            fprintf(f,
                    "<path d=\"M%.1f %.0f l-5 -8 h10 z\" class=\"fault\"><title>fault at %.3f "
                    "s: ",
                    x, y + 3, t->mark[i].t_s);
            esc(f, t->mark[i].text);
            fputs("</title></path>\n", f);
        }
        const rg_rank_result *rk = &r->rank[k];
        double vt = rk->t_s >= 0 ? rk->t_s : end;
        double x = left + W * (vt > end ? end : vt) / end;
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.0f\" r=\"5\" class=\"v %s\"><title>", x, y + 11,
                vclass(rk->verdict));
        fprintf(f, "rank %d %s at %.3f s: ", k, rg_verdict_name(rk->verdict), vt);
        esc(f, rk->detail);
        fputs("</title></circle>\n", f);
    }
    if (first >= 0) {
        double x = left + W * first_t / end;
        /* The label reads leftwards from a line near the right edge, so it stays inside. */
        bool right = x > left + W * 0.7;
        fprintf(f,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" class=\"first\"/>"
                "<text x=\"%.1f\" y=\"%.0f\" class=\"ax\" text-anchor=\"%s\">first failure: "
                "rank %d at %.2f s</text>\n",
                x, x, top - 4, h - 14, right ? x - 3 : x + 3, h - 4, right ? "end" : "start", first,
                first_t);
    }
    fputs("</svg>\n", f);
}

static void rules_cell(FILE *f, const rg_result *r)
{
    for (int i = 0; i < r->nrules; i++) {
        const rg_rule_result *u = &r->rule[i];
        if (u->counting)
            continue;
        fputs("<div class=\"rule\"><code>", f);
        esc(f, u->rule);
        fprintf(f, "</code> (line %d): fired %llu", u->line, (unsigned long long)u->fired);
        if (u->fired) {
            fputs(" [", f);
            for (int k = 0; k < r->ranks; k++)
                fprintf(f, "%sr%d %u", k ? ", " : "", k, u->fired_by[k]);
            fputc(']', f);
        }
        if (!u->fired && !u->optional)
            fputs(" <b class=\"bad\">never fired</b>", f);
        if (u->rx_pkts >= 0 && u->rx_dup >= 0 && u->rx_oos >= 0)
            fprintf(f, "; received: %lld packets, %lld duplicates discarded, %lld out of sequence",
                    (long long)u->rx_pkts, (long long)u->rx_dup, (long long)u->rx_oos);
        fputs("</div>", f);
    }
}

static void scenario_row(FILE *f, const rg_result *r, int id, bool inside)
{
    const char *word = rg_result_word(r);
    fprintf(f, "<tr class=\"%s\" id=\"s%d\"><td class=\"res %s\">%s</td><td class=\"name\">",
            failing(r) ? "failrow" : "passrow", id, failing(r) ? "bad" : "ok", word);
    esc(f, r->name);
    fputs("</td><td class=\"ranks\">", f);
    for (int k = 0; k < r->ranks; k++) {
        fprintf(f, "<span class=\"chip %s\" title=\"", vclass(r->rank[k].verdict));
        esc(f, r->rank[k].detail);
        fprintf(f, "\">r%d %s</span> ", k, rg_verdict_name(r->rank[k].verdict));
    }
    fputs("</td><td class=\"why\">", f);
    esc(f, r->why[0] ? r->why : r->first);
    if (r->slow_note[0]) { /* judged on a second attempt: said beside whatever it came to */
        fputs(r->why[0] || r->first[0] ? "<br>" : "", f);
        esc(f, r->slow_note);
    }
    if (r->sites_note[0]) { /* an each_site scenario: its points, said whatever it came to */
        fputs(r->why[0] || r->first[0] || r->slow_note[0] ? "<br>" : "", f);
        esc(f, r->sites_note);
    }
    if (r->uc_as_rc) { /* --uc-as-rc changed what ran: said on every row */
        char said[200];
        fputs(r->why[0] || r->first[0] || r->slow_note[0] || r->sites_note[0] ? "<br>" : "", f);
        esc(f, rg_result_as_rc_said(r, said, sizeof(said)));
    }
    if (r->fit_note[0]) { /* ran in the transport's shape: said on its row */
        fputs(r->why[0] || r->first[0] || r->slow_note[0] || r->sites_note[0] || r->uc_as_rc
                  ? "<br>"
                  : "",
              f);
        esc(f, r->fit_note);
    }
    fputs("</td><td class=\"rules\">", f);
    rules_cell(f, r);
    fputs("</td><td class=\"links\">", f);
    const char *files[] = {"trace.json", "result.json"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        fputs("<a href=\"", f);
        href(f, r, files[i], inside);
        fprintf(f, "\">%s</a> ", files[i]);
    }
    for (int k = 0; k < r->ranks; k++) {
        char name[48];
        snprintf(name, sizeof(name), "rank%d.log", k);
        fputs("<a href=\"", f);
        href(f, r, name, inside);
        fprintf(f, "\">log %d</a> ", k);
        snprintf(name, sizeof(name), "rank%d.events.jsonl", k);
        fputs("<a href=\"", f);
        href(f, r, name, inside);
        fprintf(f, "\">events %d</a> ", k);
    }
    fputs("</td></tr>\n", f);
}

static const char STYLE[] =
    "body{font:14px/1.4 sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;width:100%}"
    "td,th{border-bottom:1px solid #ddd;padding:4px 6px;vertical-align:top;text-align:left}"
    ".chip{display:inline-block;padding:0 5px;margin:1px;border-radius:3px;font-size:12px}"
    ".ok{background:#dff0d8}.skip{background:#eee}.det{background:#fcf0d2}"
    ".warn{background:#fde2c5}.bad{background:#f5c6c6}"
    ".res.bad{font-weight:bold}.name{font-family:monospace}td.why{max-width:30em;font-size:12px}"
    ".rule code{font-size:12px}.links a{font-size:12px;margin-right:4px}"
    "pre{white-space:pre-wrap;background:#f6f6f6;padding:6px}"
    "svg.tl{border:1px solid #ccc;background:#fff;margin:4px 0 12px}"
    ".lab,.ax{font:11px sans-serif;fill:#333}.lane{stroke:#eee}"
    ".fault{fill:#a00}.first{stroke:#a00;stroke-dasharray:4 3}"
    "circle.v{stroke:#333}circle.ok{fill:#5cb85c}circle.det{fill:#f0ad4e}"
    "circle.skip{fill:#bbb}circle.warn{fill:#f0ad4e}circle.bad{fill:#d9534f}";

#define PAGE_END "</body></html>\n"
#define TRIAGE_BEGIN "<!-- railguard triage -->\n"

/* The run's triage section, triage/section.html beside the page, as railguard triage wrote
 * it (escaped there), so a page written again (railguard report) keeps it. */
static void triage_part(FILE *f, const char *page)
{
    char path[PATH_MAX + 64];
    const char *slash = strrchr(page, '/');
    snprintf(path, sizeof(path), "%.*s%striage/section.html", slash ? (int)(slash - page) : 0, page,
             slash ? "/" : "");
    FILE *in = fopen(path, "r");
    if (!in)
        return;
    char buf[4096];
    size_t n;
    fputs(TRIAGE_BEGIN, f);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        fwrite(buf, 1, n, f);
    fclose(in);
}

int rg_html_triage(const char *page, char *err, size_t errlen)
{
    FILE *f = fopen(page, "r");
    char *text = NULL;
    size_t len = 0;
    if (!f) {
        snprintf(err, errlen, "%s: cannot read the run page: %s", page, strerror(errno));
        return -1;
    }
    FILE *m = open_memstream(&text, &len);
    char buf[4096];
    size_t n;
    while (m && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, m);
    fclose(f);
    if (!m || fclose(m) != 0) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* The page up to its triage part, or to its end: the new part goes there. */
    char *cut = strstr(text, TRIAGE_BEGIN);
    if (!cut)
        cut = strstr(text, PAGE_END);
    if (!cut) {
        free(text);
        snprintf(err, errlen, "%s: not a run page railguard wrote (no end)", page);
        return -1;
    }
    /* Written beside it and renamed over it: a write that fails leaves the page as it was. */
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof(tmp), "%s.new", page);
    f = fopen(tmp, "w");
    if (!f) {
        free(text);
        snprintf(err, errlen, "cannot write %s", tmp);
        return -1;
    }
    fwrite(text, 1, (size_t)(cut - text), f);
    triage_part(f, page);
    fputs(PAGE_END, f);
    free(text);
    if (fclose(f) != 0 || rename(tmp, page) != 0) {
        unlink(tmp);
        snprintf(err, errlen, "cannot write %s", page);
        return -1;
    }
    return 0;
}

int rg_html_write(const rg_result *res, int n, double total_s, const rg_run_info *info,
                  const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    rg_tl_rank *t = malloc(sizeof(*t));
    int *order = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!t || !order) {
        fclose(f);
        free(t);
        free(order);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int nfail = 0, k = 0;
    for (int i = 0; i < n; i++)
        nfail += failing(&res[i]);
    for (int i = 0; i < n; i++) /* failures first, each group in run order */
        if (failing(&res[i]))
            order[k++] = i;
    for (int i = 0; i < n; i++)
        if (!failing(&res[i]))
            order[k++] = i;
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>railguard run</title><style>%s</style></head><body>\n",
            STYLE);
    fprintf(f, "<h1>railguard run: <span id=\"summary\">%d scenario(s), %d failed</span></h1>\n", n,
            nfail);
    fputs("<p class=\"info\">", f);
    if (info) {
        fputs("railguard ", f);
        esc(f, info->railguard);
        fputs("; transport ", f);
        esc(f, info->transport_name);
        fputs("; kernel ", f);
        esc(f, info->kernel);
        fputs("; seed ", f);
        esc(f, info->seed);
        fputs("; ", f);
    }
    fprintf(f,
            "%.1f s in all. Open a scenario's trace.json in the Perfetto UI "
            "(ui.perfetto.dev, \"Open trace file\") or chrome://tracing.</p>\n",
            total_s);
    fputs("<table id=\"scenarios\"><thead><tr><th>result</th><th>scenario</th><th>ranks</th>"
          "<th>first failure</th><th>fault rules</th><th>files</th></tr></thead><tbody>\n",
          f);
    /* The page in a scenario's own directory: links to its files need no directory. */
    const char *slash = strrchr(path, '/');
    size_t pdir = slash ? (size_t)(slash - path) : 0;
    for (int i = 0; i < n; i++) {
        const rg_result *r = &res[order[i]];
        scenario_row(f, r, order[i], strlen(r->dir) == pdir && !strncmp(r->dir, path, pdir));
    }
    fputs("</tbody></table>\n", f);
    if (nfail)
        fputs("<h2>Failing scenarios</h2>\n", f);
    for (int i = 0; i < nfail; i++) {
        const rg_result *r = &res[order[i]];
        fprintf(f, "<section class=\"failure\" id=\"f%d\"><h3><a href=\"#s%d\">", order[i],
                order[i]);
        esc(f, r->name);
        fputs("</a></h3>\n<p class=\"why\">", f);
        esc(f, r->why);
        fputs("</p>\n", f);
        svg_timeline(f, r, t);
        if (r->repro[0]) {
            fputs("<p>Reproduce:</p><pre class=\"repro\">", f);
            esc(f, r->repro);
            fputs("</pre>\n", f);
        }
        fputs("</section>\n", f);
    }
    triage_part(f, path);
    fputs(PAGE_END, f);
    free(t);
    free(order);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    return 0;
}

int rg_report_run_dir(const char *dir)
{
    char path[PATH_MAX + 600], err[1024];
    char **names = NULL;
    int n = rg_result_dir_names(dir, &names), st = 0;
    if (n < 0) {
        fprintf(stderr, "railguard report: %s: %s\n", dir, strerror(errno));
        return 2;
    }
    rg_result *res = calloc((size_t)(n ? n : 1), sizeof(rg_result));
    double total = 0;
    int got = 0;
    for (int i = 0; res && i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s/result.json", dir, names[i]);
        if (rg_result_read(&res[got], path, err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard report: %s\n", err);
            st = 2;
            continue;
        }
        /* Where it is now: a run's directory moves (a CI artifact, a copy). */
        snprintf(res[got].dir, sizeof(res[got].dir), "%s/%s", dir, names[i]);
        rg_judge(&res[got]);
        snprintf(path, sizeof(path), "%s/%s/trace.json", dir, names[i]);
        if (rg_trace_write(&res[got], path, err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard report: %s\n", err);
            st = 2;
        }
        total += res[got].seconds;
        got++;
    }
    /* What ran, as the run recorded it in report.json, for the page's first line. */
    static rg_run_info info;
    bool have_info = false;
    snprintf(path, sizeof(path), "%s/report.json", dir);
    json_t *rep = json_load_file(path, 0, NULL), *run = json_object_get(rep, "run");
    if (json_is_object(run)) {
        const char *v;
        have_info = true;
        if ((v = json_string_value(json_object_get(run, "railguard"))))
            snprintf(info.railguard, sizeof(info.railguard), "%s", v);
        if ((v = json_string_value(json_object_get(run, "kernel"))))
            snprintf(info.kernel, sizeof(info.kernel), "%s", v);
        if ((v = json_string_value(json_object_get(run, "seed"))))
            snprintf(info.seed, sizeof(info.seed), "%s", v);
        json_t *tp = json_object_get(run, "transport");
        if ((v = json_string_value(json_object_get(tp, "name"))))
            snprintf(info.transport_name, sizeof(info.transport_name), "%s", v);
    }
    json_decref(rep);
    snprintf(path, sizeof(path), "%s/index.html", dir);
    if (!res ||
        rg_html_write(res, got, total, have_info ? &info : NULL, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard report: %s\n", res ? err : "out of memory");
        st = 2;
    } else {
        printf("railguard report: %s: %d scenario(s), traces and index.html written\n", dir, got);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(res);
    return st;
}
