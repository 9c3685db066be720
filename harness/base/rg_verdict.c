/* SPDX-License-Identifier: MIT */
/* The one verdict table's names and meanings (the table itself is in rg_base.h). */
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
