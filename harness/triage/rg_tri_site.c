/* SPDX-License-Identifier: MIT */
/*
 * Where an ignored error was handed (rg_triage.h). The shim names a poll site as its object and
 * offset ("railguard-jaccl.so+0xd1d8b"): the same in every run of one build, and a different
 * number in the next build of the same code. Two runs of one build can be told one bug by it;
 * a base and a head cannot, and a compare that matched bugs by it called every such bug of the
 * head "introduced" and the base's "fixed" (mlx 846d17622 against 3abd0fd6b: the same poll site
 * read +0xd1d8b and +0xd2f7b). So the site is named from the object's debug information, as
 * the function that made the call and its line: the line tells the sites of one build apart,
 * the function (the place) is what a base and a head share. A site with no debug information
 * keeps its offset, says so, and has no place: the nearest symbol the object exports says
 * nothing certain of which function it is, and a match on it would be a guess.
 */
#include "launch/rg_launch.h"
#include "triage/rg_triage.h"

#include <stdio.h>
#include <string.h>

/* Sites already named: addr2line on a transport with debug information takes seconds in a TCG
 * guest, and compare diagnoses every failure of every run. Most failures of a suite meet a
 * few sites; a site past the table is named again, never mistaken for another. */
#define SITE_CACHE 32
static struct {
    char obj[RG_EV_OBJ_MAX];
    uint64_t off;
    rg_sym_site s;
} g_named[SITE_CACHE];
static int g_nnamed;

static const rg_sym_site *named(const char *obj, uint64_t off)
{
    for (int i = 0; i < g_nnamed; i++)
        if (g_named[i].off == off && !strcmp(g_named[i].obj, obj))
            return &g_named[i].s;
    static rg_sym_site s;
    char why[600];
    /* An object gone or unreadable names nothing: the offset stays, honestly. */
    rg_sym_sites(obj, &off, 1, &s, why, sizeof(why));
    if (g_nnamed < SITE_CACHE) {
        snprintf(g_named[g_nnamed].obj, sizeof(g_named[g_nnamed].obj), "%s", obj);
        g_named[g_nnamed].off = off;
        g_named[g_nnamed].s = s;
        return &g_named[g_nnamed++].s;
    }
    return &s;
}

void rg_tri_poll_site(const char *caller, rg_tri_cause *c)
{
    c->site[0] = c->place[0] = '\0';
    rg_ev_frame fr[FI_SITE_DEPTH];
    if (!caller || rg_ev_path_parse(caller, fr, FI_SITE_DEPTH) < 1)
        return;
    const char *base = strrchr(fr[0].obj, '/');
    base = base ? base + 1 : fr[0].obj;
    const rg_sym_site *s = named(fr[0].obj, fr[0].off);
    if (!s->func[0] || s->nearest) {
        snprintf(c->site, sizeof(c->site), "the poll at %.200s+0x%llx", base,
                 (unsigned long long)fr[0].off);
        return;
    }
    /* FILE:LINE with its directories cut: a checkout's path is no part of the code's name. */
    const char *file = strrchr(s->where, '/');
    file = file ? file + 1 : s->where;
    snprintf(c->place, sizeof(c->place), "the poll in %.150s", s->func);
    snprintf(c->site, sizeof(c->site), "%.170s%s%.70s%s", c->place, file[0] ? " (" : "", file,
             file[0] ? ")" : "");
}

void rg_tri_cause_place_key(const rg_tri_cause *c, char *out, size_t len)
{
    if (c->proven && c->kind != RG_C_NONE && c->place[0])
        snprintf(out, len, "%s at %s", rg_cause_name(c->kind), c->place);
    else
        rg_tri_cause_key(c, out, len);
}
