/* SPDX-License-Identifier: MIT */
/*
 * Where a scenario's time went (rg_result.h, rg_phases): its phases as result.json and
 * report.json hold them, read back checked, and summed into the run's summary line. A phase
 * not measured is its own value (null in JSON, -1 here), never a zero that would read as
 * "took no time".
 */
#include "result/rg_result.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

const char *const rg_phase_names[RG_PHASES] = {"start", "work", "hang", "stop", "judge", "again"};

/* How the summary line says each. */
static const char *const said[RG_PHASES] = {"start-up",
                                            "the transport's work",
                                            "waiting on hangs",
                                            "stopping hung ranks",
                                            "reading evidence and judging",
                                            "earlier attempts"};

void rg_phases_unknown(rg_phases *p)
{
    for (int i = 0; i < RG_PHASES; i++)
        p->s[i] = -1;
}

json_t *rg_phases_json(const rg_phases *p)
{
    json_t *o = json_object();
    for (int i = 0; o && i < RG_PHASES; i++) {
        char key[32];
        snprintf(key, sizeof(key), "%s_s", rg_phase_names[i]);
        if (json_object_set_new(o, key, p->s[i] >= 0 ? json_real(p->s[i]) : json_null()) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

int rg_phases_read(json_t *o, rg_phases *p, const char *path, char *err, size_t errlen)
{
    rg_phases_unknown(p);
    if (!o)
        return 0;
    if (!json_is_object(o)) {
        snprintf(err, errlen, "%s: phases is not an object", path);
        return -1;
    }
    for (int i = 0; i < RG_PHASES; i++) {
        char key[32];
        snprintf(key, sizeof(key), "%s_s", rg_phase_names[i]);
        json_t *v = json_object_get(o, key);
        if (!v || json_is_null(v))
            continue;
        double x = json_is_number(v) ? json_number_value(v) : -1;
        if (!(x >= 0 && x < 1e9)) {
            snprintf(err, errlen, "%s: phases.%s is not null nor 0..1e9 seconds", path, key);
            return -1;
        }
        p->s[i] = x;
    }
    return 0;
}

void rg_phases_sum(const rg_result *res, int n, rg_phases *sum, int *unknown)
{
    for (int i = 0; i < RG_PHASES; i++) {
        sum->s[i] = 0;
        unknown[i] = 0;
        for (int k = 0; k < n; k++) {
            if (res[k].phases.s[i] >= 0)
                sum->s[i] += res[k].phases.s[i];
            else
                unknown[i]++;
        }
    }
}

void rg_phases_said(FILE *f, const rg_phases *sum, const int *unknown, int n)
{
    fprintf(f, "time by phase, summed over %d result(s):", n);
    for (int i = 0; i < RG_PHASES; i++) {
        if (n && unknown[i] >= n)
            fprintf(f, " %s not measured", said[i]);
        else
            fprintf(f, " %s %.1f s", said[i], sum->s[i]);
        if (unknown[i] && unknown[i] < n)
            fprintf(f, " (not measured in %d)", unknown[i]);
        fputs(i + 1 < RG_PHASES ? "," : "\n", f);
    }
}

void rg_phases_line(FILE *f, const rg_result *res, int n)
{
    rg_phases sum;
    int unknown[RG_PHASES];
    rg_phases_sum(res, n, &sum, unknown);
    rg_phases_said(f, &sum, unknown, n);
}
