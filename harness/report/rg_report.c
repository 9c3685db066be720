/* SPDX-License-Identifier: MIT */
/*
 * Verdict logic and the reports: JSON (jansson), JUnit XML (what CI systems read), the live
 * line per scenario and the summary table. Pure apart from the files they write, so the unit
 * tests cover them without a device.
 */
#include "report/rg_report.h"

#include "launch/rg_launch.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count_passed(const rg_result *res, int n)
{
    int p = 0;
    for (int i = 0; i < n; i++)
        p += res[i].passed;
    return p;
}

static int count_slow(const rg_result *res, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += !res[i].passed && res[i].too_slow;
    return s;
}

/* Why a skipped scenario did not run, as its first unsupported rank said it ("qp uc not
 * declared"), without the rank, the time and the transport's name. */
static const char *skip_reason(const rg_result *r)
{
    const char *w = strstr(r->why, ": not run: ");
    if (w) {
        w += strlen(": not run: ");
        /* The transport's name first when the whole scenario was refused ("jaccl: qp rc not
         * declared"), a step's refusal starts with the step ("all_gather int64 ...: dtype
         * ..."): either way what follows the first ": " is the reason (the step's label would
         * make each refused step a reason of its own). */
        const char *c = strstr(w, ": ");
        return c ? c + 2 : w;
    }
    return r->why; /* every unsupported finding says "not run: "; whole if one did not */
}

/* How many scenarios ran in the transport's shape rather than as written (rg_sc_fit), and
 * why each skipped one could not run at all, by reason. */
static void shape_lines(FILE *f, const rg_result *res, int n)
{
    int fit = 0, rc = 0, rails = 0;
    for (int i = 0; i < n; i++) {
        if (!res[i].fit_note[0] || (res[i].passed && res[i].skipped))
            continue;
        fit++;
        rc += strstr(res[i].fit_note, "as rc") != NULL;
        rails += strstr(res[i].fit_note, "rail") != NULL;
    }
    if (fit)
        fprintf(f,
                "in the transport's shape: %d scenario(s) that state none (%d as rc, %d on fewer "
                "rails)\n",
                fit, rc, rails);
    enum { REASONS = 8 };
    const char *why[REASONS];
    int count[REASONS], nwhy = 0, other = 0, any = 0;
    for (int i = 0; i < n; i++) {
        if (!res[i].passed || !res[i].skipped)
            continue;
        const char *w = skip_reason(&res[i]);
        int k = 0;
        while (k < nwhy && strcmp(why[k], w))
            k++;
        if (k == nwhy && nwhy < REASONS) {
            why[nwhy] = w;
            count[nwhy++] = 0;
        }
        if (k < nwhy)
            count[k]++;
        else
            other++;
        any++;
    }
    if (!any)
        return;
    fputs("could not run:", f);
    for (int k = 0; k < nwhy; k++)
        fprintf(f, "%s %d %s", k ? ";" : "", count[k], why[k]);
    if (other)
        fprintf(f, "; %d for other reasons", other);
    fputc('\n', f);
}

static int count_skipped(const rg_result *res, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += res[i].passed && res[i].skipped;
    return s;
}

static json_t *info_json(const rg_run_info *info)
{
    json_t *devs = json_array();
    for (int i = 0; i < info->ndevices; i++) {
        json_t *gids = json_array();
        for (int g = 0; g < info->dev[i].ngids; g++)
            json_array_append_new(gids, json_string(info->dev[i].gids[g]));
        json_array_append_new(devs, json_pack("{s:s,s:s,s:o}", "name", info->dev[i].name, "state",
                                              info->dev[i].state, "gids", gids));
    }
    return json_pack("{s:s,s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s},s:o,s:s}", "railguard",
                     info->railguard, "kernel", info->kernel, "libibverbs", info->verbs, "shim",
                     "path", info->shim, "build_id", info->shim_build_id, "transport", "path",
                     info->transport, "build_id", info->transport_build_id, "name",
                     info->transport_name, "says", info->transport_says, "devices", devs, "seed",
                     info->seed);
}

int rg_report_json(const rg_result *res, int n, double total_s, const rg_run_info *info,
                   const char *path, char *err, size_t errlen)
{
    json_t *all = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(all, rg_result_json(&res[i]));
    int passed = count_passed(res, n);
    json_t *top = json_pack("{s:i,s:i,s:f,s:o}", "passed", passed, "failed", n - passed, "seconds",
                            total_s, "scenarios", all);
    /* The phases summed, and in how many scenarios each was not measured. */
    rg_phases sum;
    int unknown[RG_PHASES];
    rg_phases_sum(res, n, &sum, unknown);
    json_t *un = json_object();
    for (int i = 0; un && i < RG_PHASES; i++) {
        char key[32];
        snprintf(key, sizeof(key), "%s_s", rg_phase_names[i]);
        json_object_set_new(un, key, json_integer(unknown[i]));
    }
    if (top && (json_object_set_new(top, "phases", rg_phases_json(&sum)) != 0 ||
                json_object_set_new(top, "phases_not_measured", un) != 0)) {
        json_decref(top);
        top = NULL;
    }
    if (top && info)
        json_object_set_new(top, "run", info_json(info));
    return rg_json_write(top, path, err, errlen);
}

static void junit_property(FILE *f, const char *name, const char *value)
{
    fprintf(f, "      <property name=\"%s\" value=\"", name);
    rg_markup_text(f, value);
    fputs("\"/>\n", f);
}

static void junit_properties(FILE *f, const rg_run_info *info)
{
    char name[80], gids[256]; /* "device." and a 64-byte name */
    fputs("    <properties>\n", f);
    junit_property(f, "railguard", info->railguard);
    junit_property(f, "kernel", info->kernel);
    junit_property(f, "libibverbs", info->verbs);
    junit_property(f, "shim", info->shim);
    junit_property(f, "shim.build_id", info->shim_build_id);
    junit_property(f, "transport", info->transport);
    junit_property(f, "transport.build_id", info->transport_build_id);
    junit_property(f, "transport.name", info->transport_says);
    junit_property(f, "seed", info->seed);
    for (int i = 0; i < info->ndevices; i++) {
        size_t o = 0;
        gids[0] = '\0';
        for (int g = 0; g < info->dev[i].ngids && o < sizeof(gids); g++)
            o += (size_t)snprintf(gids + o, sizeof(gids) - o, "%s%s", g ? " " : "",
                                  info->dev[i].gids[g]);
        snprintf(name, sizeof(name), "device.%s", info->dev[i].name);
        junit_property(f, name, gids);
    }
    fputs("    </properties>\n", f);
}

int rg_report_junit(const rg_result *res, int n, double total_s, const rg_run_info *info,
                    const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    int slow = count_slow(res, n), failed = n - count_passed(res, n) - slow;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    int skipped = 0;
    for (int i = 0; i < n; i++)
        skipped += res[i].passed && (res[i].skipped || res[i].known_state == RG_KNOWN_XFAIL);
    /* Too slow to judge is an error (the test could not conclude), not a failure. */
    fprintf(f,
            "<testsuites tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
            "time=\"%.3f\">\n",
            n, failed, slow, skipped, total_s);
    fprintf(f,
            "  <testsuite name=\"railguard\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
            "skipped=\"%d\" time=\"%.3f\">\n",
            n, failed, slow, skipped, total_s);
    if (info)
        junit_properties(f, info);
    for (int i = 0; i < n; i++) {
        const rg_result *r = &res[i];
        fputs("    <testcase classname=\"railguard.scenarios\" name=\"", f);
        rg_markup_text(f, r->name);
        fprintf(f, "\" time=\"%.3f\"", r->seconds);
        if (r->passed && (r->known_state == RG_KNOWN_XFAIL || r->skipped)) {
            /* A known failure, or steps the transport lacks: skipped, never a pass, and not a
             * failure either. */
            fputs(">\n      <skipped message=\"", f);
            rg_markup_text(f, r->why);
            fputs("\"/>\n    </testcase>\n", f);
            continue;
        }
        if (r->passed) {
            fputs("/>\n", f);
            continue;
        }
        const char *elem = r->too_slow ? "error" : "failure";
        fprintf(f, ">\n      <%s message=\"", elem);
        rg_markup_text(f, r->why);
        fputs("\">", f);
        for (int k = 0; k < r->ranks; k++) {
            char want[RG_SC_EXPECT_STR_MAX], cls[32];
            fprintf(f, "rank %d: %s%s%s (expected %s) in ", k, rg_verdict_name(r->rank[k].verdict),
                    r->rank[k].status ? ":" : "", rg_rank_class(&r->rank[k], cls, sizeof(cls)),
                    rg_sc_expect_str(r->expect[k], r->expect_at[k], r->expect_cls[k], want,
                                     sizeof(want)));
            rg_markup_text(f, r->rank[k].where);
            fputs(": ", f);
            rg_markup_text(f, r->rank[k].detail);
            fputc('\n', f);
        }
        fputs("reproduce: ", f);
        rg_markup_text(f, r->repro);
        fputs("\nlogs: ", f);
        rg_markup_text(f, r->dir);
        fprintf(f, "</%s>\n    </testcase>\n", elem);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* --- terminal -------------------------------------------------------------------------------- */
/* "detected@3:timeout,ok": a rank that failed in a call of the transport's (it has a status)
 * shows where (init or the step) and the status's class; a program run by exec has neither. */
static void verdicts(char *out, size_t len, const rg_result *r)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < r->ranks && o < len; i++) {
        const rg_rank_result *k = &r->rank[i];
        char where[48] = "", cls[32];
        if (k->verdict == RG_V_DETECTED && k->status) {
            if (k->step < 0)
                snprintf(where, sizeof(where), "@init:%s", rg_rank_class(k, cls, sizeof(cls)));
            else
                snprintf(where, sizeof(where), "@%d:%s", k->step,
                         rg_rank_class(k, cls, sizeof(cls)));
        }
        o += (size_t)snprintf(out + o, len - o, "%s%s%s", i ? "," : "", rg_verdict_name(k->verdict),
                              where);
    }
}

/* Each injecting rule's fired count over all ranks, "1/3"; "-" when the plan injects nothing. */
static const char *fired_list(char *out, size_t len, const rg_result *r)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < r->nrules && o < len; i++)
        if (!r->rule[i].counting)
            o += (size_t)snprintf(out + o, len - o, "%s%llu", o ? "/" : "",
                                  (unsigned long long)r->rule[i].fired);
    if (!out[0])
        snprintf(out, len, "-");
    return out;
}

/* Where each rule of a failing run first fired, named from the program's debug information:
 * the line a maintainer opens first. */
static void landed(FILE *f, const rg_result *r)
{
    for (int i = 0; i < r->nrules; i++) {
        rg_ev_frame fr[FI_SITE_DEPTH];
        int n = r->rule[i].site[0] ? rg_ev_path_parse(r->rule[i].site, fr, FI_SITE_DEPTH) : -1;
        for (int k = 0; k < n; k++) {
            rg_sym_site name;
            char why[600], text[800];
            rg_sym_sites(fr[k].obj, &fr[k].off, 1, &name, why, sizeof(why));
            rg_sym_site_text(&name, fr[k].obj, fr[k].off, text, sizeof(text));
            /* The call, then who called it: the path the shim unwound, innermost first. */
            if (k)
                fprintf(f, "        called from %s\n", text);
            else
                fprintf(f, "      fault %d landed at %s\n", i + 1, text);
        }
    }
}

/* A wire rule's proof from the far end: what the devices that took in its packets said. */
static void received(FILE *f, const rg_result *r)
{
    for (int i = 0; i < r->nrules; i++) {
        const rg_rule_result *u = &r->rule[i];
        if (u->rx_pkts < 0 || u->rx_dup < 0 || u->rx_oos < 0)
            continue;
        fprintf(f,
                "      faults item %d, the receiving devices' own counters: %lld packets taken, "
                "%lld duplicates discarded, %lld requests out of sequence\n",
                i + 1, (long long)u->rx_pkts, (long long)u->rx_dup, (long long)u->rx_oos);
    }
}

void rg_report_line(FILE *f, const rg_result *r)
{
    char v[512], fired[256];
    verdicts(v, sizeof(v), r);
    fprintf(f, "%s  %-36s %2d ranks %7.1f s  %s  fired %s\n", rg_result_word(r), r->name, r->ranks,
            r->seconds, v, fired_list(fired, sizeof(fired), r));
    if (r->known_state != RG_KNOWN_NONE || r->skipped)
        fprintf(f, "      %s\n", r->why);
    if (r->slow_note[0])
        fprintf(f, "      %s\n", r->slow_note);
    if (r->sites_note[0])
        fprintf(f, "      %s\n", r->sites_note);
    if (r->uc_as_rc) {
        char said[200];
        fprintf(f, "      %s\n", rg_result_as_rc_said(r, said, sizeof(said)));
    }
    if (r->fit_note[0] && !(r->passed && r->skipped))
        fprintf(f, "      %s\n", r->fit_note);
    received(f, r);
    if (!r->passed) {
        fprintf(f, "      %s\n", r->first[0] ? r->first : r->why);
        landed(f, r);
        fprintf(f, "      reproduce: %s\n      logs: %s\n", r->repro, r->dir);
    }
    fflush(f);
}

void rg_report_table(FILE *f, const rg_result *res, int n, double total_s)
{
    int passed = count_passed(res, n);
    int by[RG_V_COUNT] = {0};
    fprintf(f, "\n%-36s %-6s %5s %8s %-9s %s\n", "scenario", "result", "ranks", "seconds", "fired",
            "verdicts by rank");
    for (int i = 0; i < n; i++) {
        char v[512], fired[256];
        verdicts(v, sizeof(v), &res[i]);
        char word[8];
        snprintf(word, sizeof(word), "%s", rg_result_word(&res[i]));
        if (res[i].passed) /* pass, xfail, xpass in lower case; FAIL stands out */
            for (char *c = word; *c; c++)
                *c = (char)(*c - 'A' + 'a');
        fprintf(f, "%-36s %-6s %5d %8.1f %-9s %s\n", res[i].name, word, res[i].ranks,
                res[i].seconds, fired_list(fired, sizeof(fired), &res[i]), v);
        for (int k = 0; k < res[i].ranks; k++)
            by[res[i].rank[k].verdict]++;
    }
    fprintf(f, "\nranks:");
    for (int v = 0; v < RG_V_COUNT; v++)
        fprintf(f, " %s %d%s", rg_verdict_name((rg_verdict)v), by[v],
                v + 1 < RG_V_COUNT ? "," : "");
    int xfail = 0, xpass = 0;
    for (int i = 0; i < n; i++) {
        xfail += res[i].passed && res[i].known_state == RG_KNOWN_XFAIL;
        xpass += res[i].passed && res[i].known_state == RG_KNOWN_XPASS;
    }
    fprintf(f, "\nwall time %.1f s\n", total_s);
    rg_phases_line(f, res, n);
    if (xfail || xpass)
        fprintf(f, "known failures: %d xfail, %d xpass (counted as passed)\n", xfail, xpass);
    int skipped = count_skipped(res, n), slow = count_slow(res, n), again = 0;
    for (int i = 0; i < n; i++)
        again += res[i].attempts > 1;
    if (again)
        fprintf(f,
                "judged on a second attempt with scaled times: %d (the machine held the first "
                "back)\n",
                again);
    /* Before the counts, which stay the last line (scripts read it). */
    shape_lines(f, res, n);
    fprintf(f, "%d passed, %d failed", passed - skipped, n - passed - slow);
    if (skipped)
        fprintf(f, ", %d skipped (unsupported by the transport)", skipped);
    if (slow)
        fprintf(f, ", %d too slow to judge", slow);
    fputc('\n', f);
    fflush(f);
}
