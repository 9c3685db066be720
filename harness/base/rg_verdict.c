/* SPDX-License-Identifier: MIT */
/* The verdict and cause tables' names and meanings (the tables themselves are in rg_base.h). */
#include "base/rg_base.h"

#include <string.h>

#define RG__VERDICT_NAME(id, name, what) [RG_V_##id] = name,
#define RG__VERDICT_WHAT(id, name, what) [RG_V_##id] = what,
static const char *const verdict_names[RG_V_COUNT] = {RG_VERDICTS(RG__VERDICT_NAME)};
static const char *const verdict_meanings[RG_V_COUNT] = {RG_VERDICTS(RG__VERDICT_WHAT)};

const char *rg_verdict_name(rg_verdict v)
{
    return (unsigned)v < RG_V_COUNT ? verdict_names[v] : "?";
}

const char *rg_verdict_meaning(rg_verdict v)
{
    return (unsigned)v < RG_V_COUNT ? verdict_meanings[v] : "?";
}

int rg_verdict_of(const char *name)
{
    for (int v = 0; v < RG_V_COUNT; v++)
        if (name && !strcmp(name, verdict_names[v]))
            return v;
    return -1;
}

#define RG__CAUSE_NAME(id, name, title, trace, verdict) [RG_C_##id] = name,
#define RG__CAUSE_TITLE(id, name, title, trace, verdict) [RG_C_##id] = title,
#define RG__CAUSE_TRACE(id, name, title, trace, verdict) [RG_C_##id] = trace,
#define RG__CAUSE_VERDICT(id, name, title, trace, verdict) [RG_C_##id] = verdict,
static const char *const cause_names[RG_C_COUNT] = {[RG_C_NONE] = "", RG_CAUSES(RG__CAUSE_NAME)};
static const char *const cause_titles[RG_C_COUNT] = {[RG_C_NONE] = "", RG_CAUSES(RG__CAUSE_TITLE)};
static const bool cause_traced[RG_C_COUNT] = {RG_CAUSES(RG__CAUSE_TRACE)};
static const rg_verdict cause_verdict[RG_C_COUNT] = {[RG_C_NONE] = RG_V_COUNT,
                                                     RG_CAUSES(RG__CAUSE_VERDICT)};

const char *rg_cause_name(rg_cause c)
{
    return (unsigned)c < RG_C_COUNT ? cause_names[c] : "";
}

const char *rg_cause_title(rg_cause c)
{
    return (unsigned)c < RG_C_COUNT ? cause_titles[c] : "";
}

bool rg_cause_needs_trace(rg_cause c)
{
    return (unsigned)c < RG_C_COUNT && cause_traced[c];
}

int rg_cause_verdict(rg_cause c)
{
    return (unsigned)c < RG_C_COUNT && cause_verdict[c] != RG_V_COUNT ? (int)cause_verdict[c] : -1;
}

int rg_cause_of(const char *name)
{
    for (int c = RG_C_NONE + 1; c < RG_C_COUNT; c++)
        if (name && !strcmp(name, cause_names[c]))
            return c;
    return -1;
}
