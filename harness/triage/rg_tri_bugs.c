/* SPDX-License-Identifier: MIT */
/*
 * Bugs, not groups (rg_triage.h). A signature keeps what a failure looked like: one defect of a
 * transport -- a race that drops a UC send, a wait with no deadline -- shows under as many
 * signatures as there are collectives, verdicts and neighbours' reactions to it, and a
 * maintainer handed one report per signature gets several reports for one bug. Where the
 * evidence proves each group's cause, and the cause names where the defect is (a call site,
 * the frame a wait hangs in, the role of the QP a message was lost on), groups with the same
 * cause at the same place are one bug: merged, titled by that cause, every signature kept.
 * A group whose cause is not proven, or names no place, stands apart and says why: a merge on
 * a likeness the evidence does not prove would be a guess.
 */
#include "triage/rg_triage.h"

#include <stdio.h>
#include <string.h>

void rg_tri_role(int n, int from, int to, const char *what, char *out, size_t len)
{
    const char *who = "another rank";
    if (n == 2 && to != from)
        who = "its peer";
    else if (n > 2 && to == (from + 1) % n)
        who = "the next rank";
    else if (n > 2 && to == (from + n - 1) % n)
        who = "the previous rank";
    snprintf(out, len, "%s %s", what, who);
}

void rg_tri_cause_key(const rg_tri_cause *c, char *out, size_t len)
{
    if (!c->proven || c->kind == RG_C_NONE || !c->site[0])
        snprintf(out, len, "%s", "");
    else
        snprintf(out, len, "%s at %s", rg_cause_name(c->kind), c->site);
}

int rg_tri_bugs(rg_tri_run *run, char *err, size_t errlen)
{
    int merged = 0;
    for (int a = 0; a < run->ngroups; a++) {
        rg_tri_group *ga = &run->groups[a];
        char ka[400];
        rg_tri_cause_key(&ga->cause, ka, sizeof(ka));
        if (!ka[0]) {
            ga->is_bug = false;
            if (!ga->cause.proven)
                snprintf(ga->bug, sizeof(ga->bug),
                         "not merged with any other group: its cause is not proven, and a "
                         "likeness the evidence does not prove is no ground to call two groups "
                         "one bug");
            else
                snprintf(ga->bug, sizeof(ga->bug),
                         "not merged with any other group: its cause (%s) is proven, but the "
                         "evidence names no site, frame or QP role to tell it the same defect "
                         "as another's",
                         rg_cause_title(ga->cause.kind));
            continue;
        }
        ga->is_bug = true;
        char with[700] = "";
        for (int b = a + 1; b < run->ngroups;) {
            char kb[400];
            rg_tri_cause_key(&run->groups[b].cause, kb, sizeof(kb));
            if (strcmp(ka, kb) != 0) {
                b++;
                continue;
            }
            if (rg_tri_absorb(run, a, b, with, sizeof(with), err, errlen) != 0)
                return -1;
            merged++;
        }
        if (with[0]) {
            snprintf(ga->bug, sizeof(ga->bug),
                     "one bug with %.450s: each group's own evidence proves %.60s, %.200s", with,
                     rg_cause_title(ga->cause.kind), ga->cause.site);
            snprintf(ga->title, sizeof(ga->title), "%.60s: %.130s", rg_cause_title(ga->cause.kind),
                     ga->cause.site);
        } else {
            snprintf(ga->bug, sizeof(ga->bug),
                     "one bug: no other group's evidence proves %.60s at the same place (%.200s)",
                     rg_cause_title(ga->cause.kind), ga->cause.site);
        }
    }
    return rg_tri_renumber(run, err, errlen) != 0 ? -1 : merged;
}
