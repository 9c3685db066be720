/* SPDX-License-Identifier: MIT */
/*
 * The verbs call sites a sweep's kind can reach (rg_sweep.h): from the counting run's `sites`
 * rule, the sites whose calls the kind acts on, and --by-site's points, one per site and op.
 * Pure: the unit tests drive it from made-up evidence.
 */
#include "sweep/rg_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rg_sweep_site_key(const char *text, int depth, char *out, size_t len)
{
    rg_ev_frame f[FI_SITE_DEPTH];
    int n = rg_ev_path_parse(text, f, FI_SITE_DEPTH);
    size_t at = 0;
    out[0] = '\0';
    if (n < 0)
        return -1;
    if (n > depth)
        n = depth < 1 ? 1 : depth;
    for (int k = 0; k < n; k++) {
        const char *base = strrchr(f[k].obj, '/');
        int w = snprintf(out + at, len - at, "%s%s+0x%llx", k ? "<" : "",
                         base ? base + 1 : f[k].obj, (unsigned long long)f[k].off);
        if (w < 0 || (size_t)w >= len - at) {
            /* Whole frames only: the first not fitting ends the key (none: no key). */
            out[at] = '\0';
            return k ? k : -1;
        }
        at += (size_t)w;
    }
    return n;
}

/* The call a kind acts in: a poll (completions, polls) or a post of op. */
static const char *verb_of(rg_sw_kind k, enum fi_op op)
{
    switch (k) {
    case RG_SW_ERROR:
    case RG_SW_NEGPOLL:
    case RG_SW_KILL:
    case RG_SW_STOP:
        return "poll";
    case RG_SW_NOMEM:
    case RG_SW_LOSE:
    case RG_SW_LATE:
        return "post_send";
    case RG_SW_DELAY:
        return op == FI_OP_RECV ? "post_recv" : "post_send";
    case RG_SW_SWAP: /* the device list: no call site of the program's datapath */
    case RG_SW_KINDS:
        break;
    }
    return NULL;
}

/* The bits of ops the kind's events at site s happened for (negpoll: any poll at all). */
static uint32_t ops_at(const rg_sweep_spec *sp, const rg_ev_site *s)
{
    enum fi_op ops[2];
    int nops = rg_sweep_ops(sp, ops);
    uint32_t bits = 0;
    for (int o = 0; o < nops; o++) {
        const char *verb = verb_of(sp->kind, ops[o]);
        if (!verb || strcmp(verb, s->verb))
            continue;
        if (sp->kind == RG_SW_NEGPOLL) {
            bits |= s->calls ? 1u << FI_OP_ANY : 0;
        } else if (ops[o] == FI_OP_ANY) { /* nomem: every post but a receive */
            for (int x = FI_OP_SEND; x <= FI_OP_ATOMIC; x++)
                bits |= x != FI_OP_RECV && s->ops[x] ? 1u << x : 0;
        } else {
            bits |= s->ops[ops[o]] ? 1u << ops[o] : 0;
        }
    }
    return bits;
}

int rg_sweep_sites(const rg_sweep_spec *sp, const rg_evidence *ev, int ranks, rg_sw_site *out,
                   int cap, char *err, size_t errlen)
{
    int n = 0, depth = sp->site_depth < 1 ? 1 : sp->site_depth;
    for (int r = 0; r < ranks; r++) {
        const rg_evidence *e = &ev[r];
        if (sp->rank >= 0 && r != sp->rank)
            continue;
        if (!e->sites) {
            snprintf(err, errlen,
                     "rank %d's counting run listed no call sites (its shim ran no "
                     "sites rule)",
                     r);
            return -1;
        }
        if (e->sites_over || e->sites_lost) {
            snprintf(err, errlen,
                     "rank %d's counting run had more call sites than could be kept (%d over the "
                     "runner's table, calls from %llu past the shim's)",
                     r, e->sites_over, (unsigned long long)e->sites_lost);
            return -1;
        }
        for (int i = 0; i < e->nsites; i++) {
            const rg_ev_site *s = &e->site[i];
            uint32_t bits = ops_at(sp, s);
            if (!bits)
                continue;
            /* The path as deep as the sweep names sites: a counting run of that depth listed
             * them so, and a shorter one is where the unwinder found no more callers. */
            char text[FI_SITE_DEPTH * (RG_EV_OBJ_MAX + 24)], key[RG_SW_SITE_MAX];
            int nf = rg_ev_site_text(e, s, depth, false, text, sizeof(text));
            /* A name the shim's site= could not take would plan points that never fire. */
            bool long_obj = false;
            for (int k = 0; k <= s->nfrom && k < depth; k++) {
                const char *obj = e->objs[k ? s->from_obj[k - 1] : s->obj];
                const char *base = strrchr(obj, '/');
                long_obj |= strlen(base ? base + 1 : obj) >= FI_SITE_OBJ_MAX;
            }
            if (long_obj || rg_sweep_site_key(text, depth, key, sizeof(key)) != nf) {
                snprintf(err, errlen,
                         "rank %d's call site in %.60s: an object's name is too long for a "
                         "site (%d characters at most, %d in all)",
                         r, e->objs[s->obj], FI_SITE_OBJ_MAX - 1, RG_SW_SITE_MAX - 1);
                return -1;
            }
            int k = 0;
            while (k < n && strcmp(out[k].site, key))
                k++;
            if (k == n) {
                if (n == cap) {
                    snprintf(err, errlen, "more than %d call sites", cap);
                    return -1;
                }
                memset(&out[n], 0, sizeof(out[n]));
                snprintf(out[n].site, sizeof(out[n].site), "%.*s", RG_SW_SITE_MAX - 1, key);
                snprintf(out[n].verb, sizeof(out[n].verb), "%s", s->verb);
                out[n].nframes = rg_ev_path_parse(text, out[n].frame, FI_SITE_DEPTH);
                out[n].rank = r;
                n++;
            }
            /* Each op's points go to a rank where it happened there (ranks by number). */
            for (int op = FI_OP_ANY; op <= FI_OP_ATOMIC; op++)
                if ((bits & (1u << op)) && !(out[k].ops & (1u << op)))
                    out[k].op_rank[op] = r;
            out[k].ops |= bits;
        }
    }
    rg_sweep_sites_sort(out, n);
    return n;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const rg_sw_site *)a)->site, ((const rg_sw_site *)b)->site);
}

void rg_sweep_sites_sort(rg_sw_site *s, int n)
{
    if (n > 1)
        qsort(s, (size_t)n, sizeof(s[0]), by_key);
}

int rg_sweep_plan_sites(const rg_sweep_spec *sp, const rg_sw_site *s, int n, rg_sweep_point *pts,
                        int cap, char *err, size_t errlen)
{
    int np = 0;
    for (int i = 0; i < n; i++) {
        for (int op = FI_OP_ANY; op <= FI_OP_ATOMIC; op++) {
            if (!(s[i].ops & (1u << op)))
                continue;
            if (np == cap) {
                snprintf(err, errlen, "more than %d points", cap);
                return -1;
            }
            rg_sweep_point *p = &pts[np++];
            *p = (rg_sweep_point){.rank = s[i].op_rank[op],
                                  .op = (enum fi_op)op,
                                  .step = FI_PHASE_ANY,
                                  .rep = FI_PHASE_ANY,
                                  .nth = 1,
                                  .cost = 1.5}; /* where in the run it lies is not known */
            const char *on = fi_op_name((enum fi_op)op);
            char *r = p->rule;
            size_t len = sizeof(p->rule);
            switch (sp->kind) {
            case RG_SW_ERROR:
                snprintf(r, len, "error status=%s op=%s rank=%d site=%s nth=1", sp->status, on,
                         p->rank, s[i].site);
                break;
            case RG_SW_NEGPOLL: /* per=poll: the site's first poll */
                snprintf(r, len, "negpoll rank=%d site=%s nth=1", p->rank, s[i].site);
                break;
            case RG_SW_NOMEM:
                snprintf(r, len, "nomem verb=post_send op=%s rank=%d site=%s nth=1", on, p->rank,
                         s[i].site);
                break;
            case RG_SW_DELAY:
            case RG_SW_LATE:
                snprintf(r, len, "%s ms=%llu op=%s rank=%d site=%s nth=1",
                         rg_sweep_kind_name(sp->kind), (unsigned long long)sp->ms, on, p->rank,
                         s[i].site);
                break;
            default:
                snprintf(r, len, "%s op=%s rank=%d site=%s nth=1", rg_sweep_kind_name(sp->kind), on,
                         p->rank, s[i].site);
                break;
            }
        }
    }
    return np;
}

/* --- the table ------------------------------------------------------------------------------ */

const char *rg_sw_site_names(const rg_sw_site *s, char *out, size_t len)
{
    const char *f = s->func, *w = s->where;
    size_t at = 0;
    out[0] = '\0';
    while (*f && at + 1 < len) {
        const char *fe = strstr(f, " < "), *we = strstr(w, " < ");
        int fl = (int)(fe ? (size_t)(fe - f) : strlen(f)),
            wl = (int)(we ? (size_t)(we - w) : strlen(w));
        int n = snprintf(out + at, len - at, "%s%.*s at %.*s", at ? " < " : "", fl, f, wl, w);
        if (n < 0 || (size_t)n >= len - at)
            break;
        at += (size_t)n;
        f = fe ? fe + 3 : f + fl;
        w = we ? we + 3 : w + wl;
    }
    return out;
}

/* Points whose fault fired and landed at site key. */
static int reached(const rg_sw_result *r, const char *key)
{
    int n = 0;
    for (int i = 0; i < r->nrows; i++)
        n += r->rows[i].state != RG_SW_NOT_FIRED && !strcmp(r->rows[i].site, key);
    return n;
}

void rg_sw_sites_table(FILE *f, const rg_sw_result *r)
{
    if (r->nsites < 0) {
        fprintf(f, "  call sites: not listed (%s)\n", r->sites_why[0] ? r->sites_why : "no reason");
        return;
    }
    int hit = 0, fired = 0, inside = 0;
    for (int i = 0; i < r->nsites; i++)
        hit += reached(r, r->sites[i].site) > 0;
    for (int i = 0; i < r->nrows; i++)
        fired += r->rows[i].state != RG_SW_NOT_FIRED;
    fprintf(f, "  call sites %s applies to: %d of %d reached by the %d point(s) that fired\n",
            rg_sweep_kind_name(r->kind), hit, r->nsites, fired);
    for (int i = 0; i < r->nsites; i++) {
        const rg_sw_site *s = &r->sites[i];
        int n = reached(r, s->site);
        inside += n;
        char at[1100];
        if (s->func[0] && s->where[0])
            rg_sw_site_names(s, at, sizeof(at));
        else if (s->func[0]) /* a symbol, but no line: the nearest one, not the function */
            snprintf(at, sizeof(at), "no debug info, nearest symbol: %s", s->func);
        else
            snprintf(at, sizeof(at), "no debug info, no symbol");
        fprintf(f, "    %-7s %5d  %-9s %s (%s)\n", n ? "reached" : "NEVER", n, s->verb, at,
                s->site);
    }
    if (r->sites_why[0])
        fprintf(f, "    names: %s\n", r->sites_why);
    /* A fault that landed at a site the counting run did not list: said, with where. */
    int shown = 0;
    for (int i = 0; i < r->nrows && fired > inside; i++) {
        const rg_sw_row *w = &r->rows[i];
        bool listed = false;
        for (int k = 0; k < r->nsites && !listed; k++)
            listed = !strcmp(r->sites[k].site, w->site);
        if (w->state == RG_SW_NOT_FIRED || listed)
            continue;
        if (shown++ < 5)
            fprintf(f, "    elsewhere: point %d landed %s\n", w->n,
                    w->site[0] ? w->site : "in no call site (outside a verbs call)");
    }
    if (shown > 5)
        fprintf(f, "    elsewhere: %d more point(s)\n", shown - 5);
}
