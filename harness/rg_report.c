/* SPDX-License-Identifier: MIT */
/*
 * Verdict logic and the reports: JSON (jansson), JUnit XML (what CI systems read), the live
 * line per scenario and the summary table. Pure apart from the files they write, so the unit
 * tests cover them without a device.
 */
#include "rg_harness.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rg_verdict_name(rg_verdict v)
{
    static const char *const names[RG_V_COUNT] = {
        [RG_V_OK] = "ok",
        [RG_V_DETECTED] = "detected",
        [RG_V_SILENT_CORRUPTION] = "SILENT_CORRUPTION",
        [RG_V_DEADLOCK] = "DEADLOCK",
        [RG_V_CRASH] = "CRASH",
        [RG_V_ERROR] = "ERROR",
    };
    return (unsigned)v < RG_V_COUNT ? names[v] : "?";
}

static bool acceptable(rg_verdict v, rg_sc_expect e)
{
    switch (e) {
    case RG_SC_EXPECT_OK:
        return v == RG_V_OK;
    case RG_SC_EXPECT_DETECTED:
        return v == RG_V_DETECTED;
    case RG_SC_EXPECT_ANY:
        return v == RG_V_OK || v == RG_V_DETECTED;
    }
    return false;
}

bool rg_judge(rg_result *r)
{
    r->passed = true;
    r->why[0] = '\0';
    /* The failures that are never acceptable come first: they are what a reader must see. */
    for (int pass = 0; pass < 2 && r->passed; pass++) {
        for (int i = 0; i < r->ranks; i++) {
            const rg_rank_result *k = &r->rank[i];
            bool hard = k->verdict >= RG_V_SILENT_CORRUPTION;
            if (pass == 0 ? !hard : acceptable(k->verdict, r->expect[i]))
                continue;
            r->passed = false;
            if (pass == 0)
                snprintf(r->why, sizeof(r->why), "rank %d: %s in %s: %s", i,
                         rg_verdict_name(k->verdict), k->where, k->detail);
            else
                snprintf(r->why, sizeof(r->why), "rank %d: %s, expected %s%s%s", i,
                         rg_verdict_name(k->verdict), rg_sc_expect_name(r->expect[i]),
                         k->detail[0] ? ": " : "", k->detail);
            break;
        }
    }
    return r->passed;
}

/* --- JSON ---------------------------------------------------------------------------------- */
static json_t *result_json(const rg_result *r)
{
    json_t *ranks = json_array();
    for (int i = 0; i < r->ranks; i++) {
        const rg_rank_result *k = &r->rank[i];
        json_array_append_new(ranks,
                              json_pack("{s:i,s:s,s:s,s:i,s:i,s:s,s:s}", "rank", i, "verdict",
                                        rg_verdict_name(k->verdict), "expect",
                                        rg_sc_expect_name(r->expect[i]), "step", k->step, "rep",
                                        k->rep, "where", k->where, "detail", k->detail));
    }
    return json_pack("{s:s,s:s,s:s,s:b,s:s,s:s,s:f,s:o}", "name", r->name, "path", r->path, "dir",
                     r->dir, "passed", r->passed, "why", r->why, "repro", r->repro, "seconds",
                     r->seconds, "ranks", ranks);
}

static int write_json(json_t *j, const char *path, char *err, size_t errlen)
{
    if (!j) {
        snprintf(err, errlen, "%s: could not build the report (bad UTF-8 in a message?)", path);
        return -1;
    }
    int rc = json_dump_file(j, path, JSON_INDENT(1) | JSON_SORT_KEYS);
    json_decref(j);
    if (rc) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int rg_result_save(const rg_result *r, const char *path, char *err, size_t errlen)
{
    return write_json(result_json(r), path, err, errlen);
}

static void copy_str(char *dst, size_t len, json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    snprintf(dst, len, "%s", s ? s : "");
}

static int verdict_of(const char *name)
{
    for (int v = 0; v < RG_V_COUNT; v++)
        if (name && !strcmp(name, rg_verdict_name((rg_verdict)v)))
            return v;
    return -1;
}

static int expect_of(const char *name)
{
    for (int e = RG_SC_EXPECT_OK; e <= RG_SC_EXPECT_ANY; e++)
        if (name && !strcmp(name, rg_sc_expect_name((rg_sc_expect)e)))
            return e;
    return -1;
}

int rg_result_read(rg_result *r, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    memset(r, 0, sizeof(*r));
    if (!j) {
        snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
        return -1;
    }
    json_t *ranks = json_object_get(j, "ranks");
    if (!json_is_array(ranks) || json_array_size(ranks) > RG_MAX_RANKS) {
        snprintf(err, errlen, "%s: no ranks array", path);
        json_decref(j);
        return -1;
    }
    copy_str(r->name, sizeof(r->name), j, "name");
    copy_str(r->path, sizeof(r->path), j, "path");
    copy_str(r->dir, sizeof(r->dir), j, "dir");
    copy_str(r->why, sizeof(r->why), j, "why");
    copy_str(r->repro, sizeof(r->repro), j, "repro");
    r->passed = json_is_true(json_object_get(j, "passed"));
    r->seconds = json_number_value(json_object_get(j, "seconds"));
    r->ranks = (int)json_array_size(ranks);
    for (int i = 0; i < r->ranks; i++) {
        json_t *k = json_array_get(ranks, (size_t)i);
        int v = verdict_of(json_string_value(json_object_get(k, "verdict")));
        int e = expect_of(json_string_value(json_object_get(k, "expect")));
        if (v < 0 || e < 0) {
            snprintf(err, errlen, "%s: rank %d has a bad verdict or expectation", path, i);
            json_decref(j);
            return -1;
        }
        r->rank[i].verdict = (rg_verdict)v;
        r->expect[i] = (rg_sc_expect)e;
        r->rank[i].step = (int)json_integer_value(json_object_get(k, "step"));
        r->rank[i].rep = (int)json_integer_value(json_object_get(k, "rep"));
        copy_str(r->rank[i].where, sizeof(r->rank[i].where), k, "where");
        copy_str(r->rank[i].detail, sizeof(r->rank[i].detail), k, "detail");
    }
    json_decref(j);
    return 0;
}

static int count_passed(const rg_result *res, int n)
{
    int p = 0;
    for (int i = 0; i < n; i++)
        p += res[i].passed;
    return p;
}

int rg_report_json(const rg_result *res, int n, double total_s, const char *path, char *err,
                   size_t errlen)
{
    json_t *all = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(all, result_json(&res[i]));
    int passed = count_passed(res, n);
    return write_json(json_pack("{s:i,s:i,s:f,s:o}", "passed", passed, "failed", n - passed,
                                "seconds", total_s, "scenarios", all),
                      path, err, errlen);
}

/* --- JUnit XML ----------------------------------------------------------------------------- */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
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
        default:
            /* XML 1.0 forbids most control characters even escaped. */
            fputc(c < 0x20 && c != '\t' && c != '\n' ? '?' : c, f);
        }
    }
}

int rg_report_junit(const rg_result *res, int n, double total_s, const char *path, char *err,
                    size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    int failed = n - count_passed(res, n);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites tests=\"%d\" failures=\"%d\" time=\"%.3f\">\n", n, failed, total_s);
    fprintf(f, "  <testsuite name=\"railguard\" tests=\"%d\" failures=\"%d\" time=\"%.3f\">\n", n,
            failed, total_s);
    for (int i = 0; i < n; i++) {
        const rg_result *r = &res[i];
        fputs("    <testcase classname=\"railguard.scenarios\" name=\"", f);
        xml_text(f, r->name);
        fprintf(f, "\" time=\"%.3f\"", r->seconds);
        if (r->passed) {
            fputs("/>\n", f);
            continue;
        }
        fputs(">\n      <failure message=\"", f);
        xml_text(f, r->why);
        fputs("\">", f);
        for (int k = 0; k < r->ranks; k++) {
            fprintf(f, "rank %d: %s (expected %s) in ", k, rg_verdict_name(r->rank[k].verdict),
                    rg_sc_expect_name(r->expect[k]));
            xml_text(f, r->rank[k].where);
            fputs(": ", f);
            xml_text(f, r->rank[k].detail);
            fputc('\n', f);
        }
        fputs("reproduce: ", f);
        xml_text(f, r->repro);
        fputs("\nlogs: ", f);
        xml_text(f, r->dir);
        fputs("</failure>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* --- terminal -------------------------------------------------------------------------------- */
static void verdicts(char *out, size_t len, const rg_result *r)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < r->ranks && o < len; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "," : "",
                              rg_verdict_name(r->rank[i].verdict));
}

void rg_report_line(FILE *f, const rg_result *r)
{
    char v[512];
    verdicts(v, sizeof(v), r);
    fprintf(f, "%s  %-36s %2d ranks %7.1f s  %s\n", r->passed ? "PASS" : "FAIL", r->name, r->ranks,
            r->seconds, v);
    if (!r->passed) {
        fprintf(f, "      %s\n      reproduce: %s\n      logs: %s\n", r->why, r->repro, r->dir);
    }
    fflush(f);
}

void rg_report_table(FILE *f, const rg_result *res, int n, double total_s)
{
    int passed = count_passed(res, n);
    int by[RG_V_COUNT] = {0};
    fprintf(f, "\n%-36s %-6s %5s %8s  %s\n", "scenario", "result", "ranks", "seconds",
            "verdicts by rank");
    for (int i = 0; i < n; i++) {
        char v[512];
        verdicts(v, sizeof(v), &res[i]);
        fprintf(f, "%-36s %-6s %5d %8.1f  %s\n", res[i].name, res[i].passed ? "pass" : "FAIL",
                res[i].ranks, res[i].seconds, v);
        for (int k = 0; k < res[i].ranks; k++)
            by[res[i].rank[k].verdict]++;
    }
    fprintf(f, "\nranks:");
    for (int v = 0; v < RG_V_COUNT; v++)
        fprintf(f, " %s %d%s", rg_verdict_name((rg_verdict)v), by[v],
                v + 1 < RG_V_COUNT ? "," : "");
    fprintf(f, "\nwall time %.1f s\n%d passed, %d failed\n", total_s, passed, n - passed);
    fflush(f);
}
