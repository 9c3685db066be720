/* SPDX-License-Identifier: MIT */
/*
 * The sweep's pure half (rg_sweep.h): which points a counting run gives (rg_sweep_plan), how
 * they split into shards (rg_sweep_shard) and the candidates a failing point is shrunk through
 * (rg_sweep_shrink_step; counts are halved by scenario/rg_sc_halve_counts). No process, no
 * file: the unit tests (tests/harness/sweep/test_sweep.c) drive it from made-up evidence. The
 * driver that runs the points is cmd/rg_sweep.c.
 */
#include "sweep/rg_sweep.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[RG_SW_KINDS] = {
    [RG_SW_ERROR] = "error", [RG_SW_NEGPOLL] = "negpoll", [RG_SW_LOSE] = "lose",
    [RG_SW_NOMEM] = "nomem", [RG_SW_DELAY] = "delay",     [RG_SW_KILL] = "kill",
    [RG_SW_STOP] = "stop",   [RG_SW_LATE] = "late",       [RG_SW_SWAP] = "swap_rails",
};

const char *rg_sweep_kind_name(rg_sw_kind k)
{
    return (unsigned)k < RG_SW_KINDS ? kind_names[k] : "?";
}

int rg_sweep_kind_of(const char *name)
{
    for (int k = 0; k < RG_SW_KINDS; k++)
        if (name && !strcmp(name, kind_names[k]))
            return k;
    return -1;
}

/* What a counting run saw, over the whole run or in one phase. */
struct counts {
    const uint64_t *posts, *cqe; /* by enum fi_op */
};

/* How many events rule kind/op would count. */
static uint64_t events_of(const rg_sweep_spec *sp, enum fi_op op, const struct counts *e)
{
    switch (sp->kind) {
    case RG_SW_ERROR:
    case RG_SW_KILL:
    case RG_SW_STOP:
        return e->cqe[op];
    case RG_SW_NEGPOLL: /* per=cqe: one point after each completion of the op */
        return e->cqe[op];
    case RG_SW_NOMEM: {
        uint64_t n = 0;
        for (int o = FI_OP_SEND; o <= FI_OP_ATOMIC; o++)
            n += o == FI_OP_RECV ? 0 : e->posts[o];
        return n;
    }
    case RG_SW_LOSE:
    case RG_SW_DELAY:
    case RG_SW_LATE:
        return e->posts[op];
    case RG_SW_SWAP: /* once, at the device list, whatever the program does */
        return 1;
    case RG_SW_KINDS:
        break;
    }
    return 0;
}

/* The ops a kind is swept over: the one asked for, or the kind's own. */
int rg_sweep_ops(const rg_sweep_spec *sp, enum fi_op *ops)
{
    if (sp->kind == RG_SW_NOMEM || sp->kind == RG_SW_SWAP) {
        ops[0] = FI_OP_ANY;
        return 1;
    }
    if (sp->op != FI_OP_ANY) {
        ops[0] = sp->op;
        return 1;
    }
    switch (sp->kind) {
    case RG_SW_ERROR:
    case RG_SW_NEGPOLL: /* data completions: how many credit writes complete depends on timing */
    case RG_SW_KILL:
    case RG_SW_STOP:
        ops[0] = FI_OP_RECV;
        ops[1] = FI_OP_SEND;
        return 2;
    case RG_SW_LOSE:
    case RG_SW_LATE:
        ops[0] = FI_OP_SEND;
        return 1;
    default:
        ops[0] = FI_OP_RECV;
        return 1;
    }
}

static void point_rule(const rg_sweep_spec *sp, rg_sweep_point *p)
{
    char *r = p->rule;
    size_t n = sizeof(p->rule);
    char where[48] = "";
    if (p->step == FI_PHASE_INIT)
        snprintf(where, sizeof(where), " step=init");
    else if (p->step != FI_PHASE_ANY)
        snprintf(where, sizeof(where), " step=%d rep=%d", p->step, p->rep);
    switch (sp->kind) {
    case RG_SW_ERROR:
        snprintf(r, n, "error status=%s op=%s rank=%d%s nth=%llu", sp->status, fi_op_name(p->op),
                 p->rank, where, (unsigned long long)p->nth);
        break;
    case RG_SW_NEGPOLL:
        snprintf(r, n, "negpoll per=cqe op=%s rank=%d%s nth=%llu", fi_op_name(p->op), p->rank,
                 where, (unsigned long long)p->nth);
        break;
    case RG_SW_NOMEM:
        snprintf(r, n, "nomem verb=post_send rank=%d%s nth=%llu", p->rank, where,
                 (unsigned long long)p->nth);
        break;
    case RG_SW_LOSE: /* the kinds with an op and no parameter */
    case RG_SW_KILL:
    case RG_SW_STOP:
        snprintf(r, n, "%s op=%s rank=%d%s nth=%llu", kind_names[sp->kind], fi_op_name(p->op),
                 p->rank, where, (unsigned long long)p->nth);
        break;
    case RG_SW_DELAY: /* the kinds with an op and a time */
    case RG_SW_LATE:
        snprintf(r, n, "%s ms=%llu op=%s rank=%d%s nth=%llu", kind_names[sp->kind],
                 (unsigned long long)sp->ms, fi_op_name(p->op), p->rank, where,
                 (unsigned long long)p->nth);
        break;
    case RG_SW_SWAP:
        snprintf(r, n, "swap_rails rank=%d", p->rank);
        break;
    case RG_SW_KINDS:
        r[0] = '\0';
        break;
    }
}

/* Where a series lies in its rank's run, for its points' expected cost: `before` of the rank's
 * `total` events of the kind come before the series' first. */
struct span {
    uint64_t before, total;
};

/* One series: every stride-th of `events` (at most max, spread out), appended at pts[*n]. */
static int series(const rg_sweep_spec *sp, int r, enum fi_op op, int step, int rep, uint64_t events,
                  struct span at, rg_sweep_point *pts, int cap, int *n, char *err, size_t errlen)
{
    uint64_t stride = sp->stride ? sp->stride : 1;
    if (sp->max && events / stride > sp->max)
        stride = (events + sp->max - 1) / sp->max;
    for (uint64_t k = 1; k <= events; k += stride) {
        if (*n == cap) {
            snprintf(err, errlen,
                     "more than %d points: raise --stride or lower --max (%llu events on rank "
                     "%d)",
                     cap, (unsigned long long)events, r);
            return -1;
        }
        /* A point runs the program up to its event, then (fired) to wherever the fault ends
         * it: its cost grows with how far in its event lies. One run is the unit. */
        double far = (double)(at.before + k) / (double)(at.total > 0 ? at.total : 1);
        double cost = 1.0 + (far < 1 ? far : 1); /* phases never hold more than the run */
        pts[*n] =
            (rg_sweep_point){.rank = r, .op = op, .step = step, .rep = rep, .nth = k, .cost = cost};
        point_rule(sp, &pts[*n]);
        (*n)++;
    }
    return 0;
}

int rg_sweep_plan(const rg_sweep_spec *sp, const rg_evidence *ev, int ranks, rg_sweep_point *pts,
                  int cap, char *err, size_t errlen)
{
    enum fi_op ops[2];
    int nops = rg_sweep_ops(sp, ops), n = 0;
    for (int r = 0; r < ranks; r++) {
        if (sp->rank >= 0 && r != sp->rank)
            continue;
        const rg_evidence *e = &ev[r];
        /* Phases past the table would be points silently never planned. */
        if (!sp->whole && sp->kind != RG_SW_SWAP && e->phases_lost) {
            snprintf(err, errlen,
                     "rank %d's counting run marked %d phases, more than the %d a sweep plans "
                     "from: sweep with --whole, or split the program",
                     r, e->nphases + e->phases_lost, RG_EV_PHASES_MAX);
            return -1;
        }
        for (int o = 0; o < nops; o++) {
            struct counts all = {e->op_posts, e->op_cqe};
            struct span at = {0, events_of(sp, ops[o], &all)};
            if (sp->whole || e->nphases == 0 || sp->kind == RG_SW_SWAP) {
                if (series(sp, r, ops[o], FI_PHASE_ANY, FI_PHASE_ANY, at.total, at, pts, cap, &n,
                           err, errlen))
                    return -1;
                continue;
            }
            for (int f = 0; f < e->nphases; f++) {
                const struct rg_ev_phase *ph = &e->phase[f];
                struct counts c = {ph->posts, ph->cqe};
                uint64_t events = events_of(sp, ops[o], &c);
                if (series(sp, r, ops[o], ph->step, ph->rep, events, at, pts, cap, &n, err, errlen))
                    return -1;
                at.before += events;
            }
        }
    }
    return n;
}

/* --- shards --------------------------------------------------------------------------------- */

int rg_sweep_shard(const rg_sweep_point *pts, int n, int k, int nshards, bool *mine)
{
    if (nshards < 1 || k < 1 || k > nshards || n < 0 || n > RG_SW_POINTS_MAX)
        return -1;
    /* Longest expected cost first, each to the shard with the least so far (ties: the lower
     * index, the lower shard): every shard computes the same split from the same plan, and
     * no shard ends with more than one point's cost above another's. */
    static int order[RG_SW_POINTS_MAX];
    double load[RG_SW_SHARDS_MAX] = {0};
    if (nshards > RG_SW_SHARDS_MAX)
        return -1;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++) { /* insertion sort: stable, and n is at most a few thousand */
        int x = order[i], j = i;
        while (j > 0 && pts[order[j - 1]].cost < pts[x].cost) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    int mine_n = 0;
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int s = 1; s < nshards; s++)
            if (load[s] < load[best])
                best = s;
        load[best] += pts[order[i]].cost;
        mine[order[i]] = best == k - 1;
        mine_n += best == k - 1;
    }
    return mine_n;
}

/* --- shrinking ------------------------------------------------------------------------------ */

/* The rule with its anchor replaced by `where` (" step=0 rep=0", " step=init", ...). */
static void reanchor(const char *rule, const char *where, char *out, size_t len)
{
    char buf[RG_SC_RULE_MAX];
    size_t o = 0;
    /* Drop the old step=/rep= words; put the new anchor before nth=. */
    for (const char *w = rule; *w;) {
        while (*w == ' ')
            w++;
        const char *e = w;
        while (*e && *e != ' ')
            e++;
        if (e == w)
            break;
        bool anchor = !strncmp(w, "step=", 5) || !strncmp(w, "rep=", 4);
        if (!anchor && !strncmp(w, "nth=", 4))
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s", where);
        if (!anchor && o < sizeof(buf))
            o +=
                (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%.*s", o ? " " : "", (int)(e - w), w);
        if (o >= sizeof(buf))
            o = sizeof(buf) - 1;
        w = e;
    }
    buf[o] = '\0';
    snprintf(out, len, "%s", buf);
}

static void one_rule(rg_scenario *out, const char *rule)
{
    out->nfaults = 1;
    snprintf(out->fault[0].rule, sizeof(out->fault[0].rule), "%s", rule);
    out->fault[0].line = 0;
    out->fault[0].optional = false;
    snprintf(out->faults, sizeof(out->faults), "%s", rule);
    for (int r = 0; r < out->ranks; r++) {
        out->expect[r] = RG_SC_EXPECT_ANY;
        out->expect_at[r] = RG_SC_AT_ANY;
        out->expect_cls[r] = 0;
    }
}

int rg_sweep_shrink_step(const rg_scenario *sc, const rg_sweep_point *p, rg_scenario *out)
{
    if (p->step == FI_PHASE_ANY || sc->nops < 1)
        return -1;
    int keep;
    const char *where;
    if (p->step == FI_PHASE_INIT) {
        keep = 0;
        where = " step=init";
    } else if (p->step >= sc->nops) {
        keep = sc->nops - 1;
        where = " step=1 rep=0";
    } else {
        keep = p->step;
        where = " step=0 rep=0";
    }
    const rg_sc_op *op = &sc->ops[keep];
    if (op->kind == RG_SC_CREATE || op->kind == RG_SC_DESTROY)
        return -1;
    if (sc->nops == 1 && op->repeat == 1)
        return -1; /* nothing to cut */
    *out = *sc;
    out->nops = 1;
    out->ops[0] = *op;
    out->ops[0].repeat = 1;
    char rule[RG_SC_RULE_MAX];
    reanchor(p->rule, where, rule, sizeof(rule));
    one_rule(out, rule);
    return 0;
}
