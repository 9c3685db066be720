/* SPDX-License-Identifier: MIT */
/*
 * A sweep's result as sweep.json and back, and shards merged (rg_sweep.h). The file holds what
 * a point is (its plan entry) and what became of it, one row a point run, so a merge is a
 * union checked for one plan, and the merged file is the one an unsharded sweep writes. A
 * file that is not one this writes is refused at its first bad field, never half-read.
 */
#include "sweep/rg_sweep.h"

#include "base/rg_base.h"
#include "result/rg_result.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[RG_SW_STATES] = {
    [RG_SW_PASSED] = "pass",
    [RG_SW_NOT_FIRED] = "not fired",
    [RG_SW_FLAKY] = "flaky",
    [RG_SW_FAILED] = "FAIL",
};

const char *rg_sw_state_name(rg_sw_state s)
{
    return (unsigned)s < RG_SW_STATES ? state_names[s] : "?";
}

/* FNV-1a 64 over a string and a newline, into h. */
static uint64_t fnv(uint64_t h, const char *c)
{
    return rg_fnv(rg_fnv(h, c, strlen(c)), "\n", 1);
}

/* The rules and their costs: the split is a function of both, so two plans with one digest
 * split alike (a cost in hexadecimal is its exact bits). */
static uint64_t digest_of(const rg_sweep_point *p, int n, size_t stride)
{
    uint64_t h = RG_FNV_START;
    for (int i = 0; i < n; i++, p = (const rg_sweep_point *)((const char *)p + stride)) {
        char cost[40];
        snprintf(cost, sizeof(cost), "%a", p->cost);
        h = fnv(fnv(h, p->rule), cost);
    }
    return h;
}

void rg_sweep_digest(const rg_sweep_point *pts, int n, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)digest_of(pts, n, sizeof(pts[0])));
}

/* A row's shrunk program is its own file in the sweep's points/, or none: a path from a file
 * is never trusted further (a merge copies it). */
static bool shrunk_ok(const rg_sw_row *w)
{
    char want[sizeof(w->shrunk)];
    snprintf(want, sizeof(want), "points/%04d-shrunk.yaml", w->n);
    return !w->shrunk[0] || !strcmp(w->shrunk, want);
}

static json_t *row_json(const rg_sw_row *w)
{
    const rg_sweep_point *p = &w->p;
    return json_pack("{s:i,s:s,s:i,s:s,s:i,s:i,s:I,s:f,s:s,s:s,s:s,s:s,s:s}", "n", w->n, "rule",
                     p->rule, "rank", p->rank, "op", fi_op_name(p->op), "step", p->step, "rep",
                     p->rep, "nth", (json_int_t)p->nth, "cost", p->cost, "state",
                     rg_sw_state_name(w->state), "verdicts", w->verdicts, "first", w->first,
                     "shrunk", w->shrunk, "site", w->site);
}

/* A site key as rg_sweep_site_key writes it: frames of a file name (no '/'), "+0x" and
 * lower-case hex digits, '<' between them; written back the same. */
static bool site_ok(const char *s)
{
    char again[RG_SW_SITE_MAX];
    if (strchr(s, '/') || rg_sweep_site_key(s, FI_SITE_DEPTH, again, sizeof(again)) < 1)
        return false;
    return !strcmp(again, s);
}

static const char *const site_verbs[] = {"poll", "post_send", "post_recv"};

static json_t *sites_json(const rg_sw_result *r)
{
    if (r->nsites < 0)
        return json_null();
    json_t *a = json_array();
    for (int i = 0; i < r->nsites; i++) {
        const rg_sw_site *s = &r->sites[i];
        json_t *ops = json_array();
        for (int op = FI_OP_ANY; op <= FI_OP_ATOMIC; op++)
            if (s->ops & (1u << op))
                json_array_append_new(ops, json_string(fi_op_name((enum fi_op)op)));
        json_t *o = json_pack("{s:s,s:s,s:o,s:i,s:s,s:s}", "site", s->site, "verb", s->verb, "ops",
                              ops, "rank", s->rank, "function", s->func, "where", s->where);
        if (!o || json_array_append_new(a, o) != 0) { /* a name that is not UTF-8 */
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* The sites as sweep.json and plan.json hold them; NULL when one cannot be written, with
 * `other` (what the file would have held beside them) freed and err said. */
static json_t *sites_or_fail(const rg_sw_result *r, json_t *other, const char *path, char *err,
                             size_t errlen)
{
    json_t *sites = sites_json(r);
    if (!sites) {
        json_decref(other);
        snprintf(err, errlen, "%s: a call site cannot be written (bad UTF-8?)", path);
    }
    return sites;
}

int rg_sw_save(const rg_sw_result *r, const char *path, char *err, size_t errlen)
{
    json_t *rows = json_array();
    for (int i = 0; i < r->nrows; i++)
        if (json_array_append_new(rows, row_json(&r->rows[i])) != 0) {
            json_decref(rows);
            snprintf(err, errlen, "%s: point %d's row cannot be written (bad UTF-8?)", path,
                     r->rows[i].n);
            return -1;
        }
    json_t *sites = sites_or_fail(r, rows, path, err, errlen);
    if (!sites)
        return -1;
    json_t *j =
        json_pack("{s:s,s:s,s:s,s:i,s:s,s:[i,i],s:f,s:o,s:o,s:s}", "scenario", r->scenario, "name",
                  r->name, "kind", rg_sweep_kind_name(r->kind), "points", r->npoints, "digest",
                  r->digest, "shard", r->shard_k, r->shard_n, "seconds", r->seconds, "rows", rows,
                  "sites", sites, "sites_why", r->sites_why);
    if (j)
        json_object_set_new(j, "site_depth", json_integer(r->site_depth));
    if (!j) {
        snprintf(err, errlen, "%s: a call site cannot be written (bad UTF-8?)", path);
        return -1;
    }
    return rg_json_write(j, path, err, errlen);
}

void rg_sw_free(rg_sw_result *r)
{
    free(r->rows);
    r->rows = NULL;
    r->nrows = 0;
    free(r->sites);
    r->sites = NULL;
    r->nsites = 0;
}

/* A string field into dst (len bytes): 0, or -1 when absent, not a string or too long. */
static int str(json_t *o, const char *key, char *dst, size_t len)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s || strlen(s) >= len)
        return -1;
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

/* An integer field lo..hi: 0, or -1. */
static int num(json_t *o, const char *key, long long lo, long long hi, long long *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return -1;
    *out = json_integer_value(v);
    return 0;
}

static int op_of(const char *name)
{
    for (int o = FI_OP_ANY; o <= FI_OP_ATOMIC; o++)
        if (!strcmp(name, fi_op_name((enum fi_op)o)))
            return o;
    return -1;
}

/* Row i of a, into w: NULL, or the name of the first field that is not what row_json writes. */
static const char *row_of(json_t *o, int npoints, rg_sw_row *w)
{
    long long n, rank, step, rep, nth;
    char op[16], state[16];
    memset(w, 0, sizeof(*w));
    json_t *cost = json_object_get(o, "cost");
    if (!json_is_object(o))
        return "a row";
    if (num(o, "n", 1, npoints, &n))
        return "n";
    if (str(o, "rule", w->p.rule, sizeof(w->p.rule)))
        return "rule";
    if (num(o, "rank", 0, RG_MAX_RANKS - 1, &rank))
        return "rank";
    if (str(o, "op", op, sizeof(op)) || op_of(op) < 0)
        return "op";
    if (num(o, "step", FI_PHASE_ANY, 1 << 30, &step) || num(o, "rep", FI_PHASE_ANY, 1 << 30, &rep))
        return "step";
    if (num(o, "nth", 1, (long long)1 << 62, &nth))
        return "nth";
    if (!json_is_real(cost) || !(json_real_value(cost) >= 1 && json_real_value(cost) <= 2))
        return "cost";
    if (str(o, "state", state, sizeof(state)))
        return "state";
    int s = 0;
    while (s < RG_SW_STATES && strcmp(state, state_names[s]))
        s++;
    if (s == RG_SW_STATES)
        return "state";
    if (str(o, "verdicts", w->verdicts, sizeof(w->verdicts)))
        return "verdicts";
    if (str(o, "first", w->first, sizeof(w->first)))
        return "first";
    w->n = (int)n;
    if (str(o, "shrunk", w->shrunk, sizeof(w->shrunk)) || !shrunk_ok(w))
        return "shrunk";
    /* Absent in a sweep.json written before sites were kept: no site. */
    if ((json_object_get(o, "site") && str(o, "site", w->site, sizeof(w->site))) ||
        (w->site[0] && !site_ok(w->site)))
        return "site";
    w->p.rank = (int)rank;
    w->p.op = (enum fi_op)op_of(op);
    w->p.step = (int)step;
    w->p.rep = (int)rep;
    w->p.nth = (uint64_t)nth;
    w->p.cost = json_real_value(cost);
    w->state = (rg_sw_state)s;
    w->p.fired = s != RG_SW_NOT_FIRED;
    w->p.failed = s == RG_SW_FAILED;
    w->p.flaky = s == RG_SW_FLAKY;
    return NULL;
}

/* Site i of sweep.json's "sites", into s: NULL, or the first field that is not what
 * sites_json writes. */
static const char *site_of(json_t *o, rg_sw_site *s)
{
    long long rank;
    memset(s, 0, sizeof(*s));
    if (!json_is_object(o))
        return "a site";
    if (str(o, "site", s->site, sizeof(s->site)) || !site_ok(s->site))
        return "site";
    if (str(o, "verb", s->verb, sizeof(s->verb)))
        return "verb";
    size_t v = 0;
    while (v < sizeof(site_verbs) / sizeof(site_verbs[0]) && strcmp(site_verbs[v], s->verb))
        v++;
    if (v == sizeof(site_verbs) / sizeof(site_verbs[0]))
        return "verb";
    json_t *ops = json_object_get(o, "ops");
    if (!json_is_array(ops) || json_array_size(ops) == 0)
        return "ops";
    for (size_t i = 0; i < json_array_size(ops); i++) {
        const char *name = json_string_value(json_array_get(ops, i));
        int op = name ? op_of(name) : -1;
        if (op < 0 || (s->ops & (1u << op)))
            return "ops";
        s->ops |= 1u << op;
    }
    if (num(o, "rank", 0, RG_MAX_RANKS - 1, &rank))
        return "rank";
    s->rank = (int)rank;
    if (str(o, "function", s->func, sizeof(s->func)))
        return "function";
    if (str(o, "where", s->where, sizeof(s->where)))
        return "where";
    return NULL;
}

/* sweep.json's "sites" (null: none listed) and "sites_why" into r. NULL, or what is bad. */
static const char *sites_of(json_t *j, rg_sw_result *r, char *where, size_t wlen)
{
    json_t *a = json_object_get(j, "sites");
    if (json_object_get(j, "sites_why") && str(j, "sites_why", r->sites_why, sizeof(r->sites_why)))
        return "sites_why";
    if (!a || json_is_null(a)) { /* none listed, or a sweep.json from before sites were kept */
        if (!a)
            snprintf(r->sites_why, sizeof(r->sites_why), "not kept by the sweep that wrote it");
        r->nsites = -1;
        return NULL;
    }
    if (!json_is_array(a) || json_array_size(a) > RG_SW_SITES_MAX)
        return "sites";
    r->sites = calloc(json_array_size(a) + 1, sizeof(r->sites[0]));
    if (!r->sites)
        return "sites (out of memory)";
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *bad = site_of(json_array_get(a, i), &r->sites[i]);
        for (size_t k = 0; !bad && k < i; k++)
            if (!strcmp(r->sites[k].site, r->sites[i].site))
                bad = "site (twice)";
        if (bad) {
            snprintf(where, wlen, "sites[%zu].", i);
            return bad;
        }
        r->nsites++;
    }
    return NULL;
}

/* sweep.json or plan.json loaded, r cleared, and the head both hold read into r: the
 * scenario, its name, the kind (into kind) and the digest. NULL with err when the file is not
 * JSON; else *bad is the first head field that is not what railguard sweep writes, or NULL. */
static json_t *load_head(const char *path, rg_sw_result *r, char kind[32], const char **bad,
                         char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) {
        snprintf(err, errlen, "%s: %s", path, je.text);
        return NULL;
    }
    *bad = NULL;
    if (str(j, "scenario", r->scenario, sizeof(r->scenario)))
        *bad = "scenario";
    else if (str(j, "name", r->name, sizeof(r->name)))
        *bad = "name";
    else if (str(j, "kind", kind, 32) || rg_sweep_kind_of(kind) < 0)
        *bad = "kind";
    else if (str(j, "digest", r->digest, sizeof(r->digest)) || strlen(r->digest) != 16 ||
             strspn(r->digest, "0123456789abcdef") != 16)
        *bad = "digest";
    /* Written before call paths were: every site was one frame. */
    json_t *d = json_object_get(j, "site_depth");
    r->site_depth = 1;
    if (!*bad && d &&
        (!json_is_integer(d) || json_integer_value(d) < 1 || json_integer_value(d) > FI_SITE_DEPTH))
        *bad = "site_depth";
    else if (!*bad && d)
        r->site_depth = (int)json_integer_value(d);
    return j;
}

int rg_sw_read(rg_sw_result *r, const char *path, char *err, size_t errlen)
{
    const char *bad;
    char kind[32];
    json_t *j = load_head(path, r, kind, &bad, err, errlen);
    if (!j)
        return -1;
    long long points = 0, k = 0, n = 0;
    json_t *shard = json_object_get(j, "shard"), *rows = json_object_get(j, "rows");
    json_t *secs = json_object_get(j, "seconds");
    if (!bad && num(j, "points", 0, RG_SW_POINTS_MAX, &points))
        bad = "points";
    if (!bad &&
        (!json_is_array(shard) || json_array_size(shard) != 2 ||
         !json_is_integer(json_array_get(shard, 0)) || !json_is_integer(json_array_get(shard, 1))))
        bad = "shard";
    if (!bad && (!json_is_number(secs) || !(json_number_value(secs) >= 0)))
        bad = "seconds";
    if (!bad && (!json_is_array(rows) || json_array_size(rows) > (size_t)points))
        bad = "rows";
    if (!bad) {
        k = json_integer_value(json_array_get(shard, 0));
        n = json_integer_value(json_array_get(shard, 1));
        if (n < 0 || n > RG_SW_SHARDS_MAX || (n == 0 && k != 0) || (n > 0 && (k < 1 || k > n)))
            bad = "shard";
    }
    if (!bad && json_array_size(rows)) {
        r->rows = calloc(json_array_size(rows), sizeof(r->rows[0]));
        if (!r->rows)
            bad = "rows (out of memory)";
    }
    char where[48] = "";
    for (size_t i = 0; !bad && i < json_array_size(rows); i++) {
        bad = row_of(json_array_get(rows, i), (int)points, &r->rows[i]);
        /* By n, each once: what a merge and a writer rely on. */
        if (!bad && i > 0 && r->rows[i].n <= r->rows[i - 1].n)
            bad = "n (not ascending)";
        if (bad)
            snprintf(where, sizeof(where), "rows[%zu].", i);
        else
            r->nrows++;
    }
    if (!bad)
        bad = sites_of(j, r, where, sizeof(where));
    r->seconds = bad ? 0 : json_number_value(secs); /* before j, which holds it, goes */
    json_decref(j);
    if (bad) {
        snprintf(err, errlen, "%s: %s%s is not what railguard sweep writes", path, where, bad);
        rg_sw_free(r);
        return -1;
    }
    r->kind = (rg_sw_kind)rg_sweep_kind_of(kind);
    r->npoints = (int)points;
    r->shard_k = (int)k;
    r->shard_n = (int)n;
    return 0;
}

int rg_sw_merge(const rg_sw_result *parts, int n, rg_sw_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (n < 1) {
        snprintf(err, errlen, "no shards to merge");
        return -1;
    }
    const rg_sw_result *a = &parts[0];
    static bool have[RG_SW_SHARDS_MAX + 1];
    memset(have, 0, sizeof(have));
    int total = 0;
    for (int i = 0; i < n; i++) {
        const rg_sw_result *b = &parts[i];
        const char *other = strcmp(b->name, a->name) || strcmp(b->scenario, a->scenario)
                                ? "scenario"
                            : b->kind != a->kind             ? "fault kind"
                            : b->npoints != a->npoints       ? "point count"
                            : strcmp(b->digest, a->digest)   ? "plan (digest)"
                            : b->shard_n != a->shard_n       ? "shard count"
                            : b->site_depth != a->site_depth ? "call site depth"
                                                             : NULL;
        if (other) {
            snprintf(err, errlen, "part %d (%s): another %s than part 1's (%s): not one sweep",
                     i + 1, b->scenario, other, a->scenario);
            return -1;
        }
        if (b->shard_n == 0) {
            snprintf(err, errlen, "part %d (%s) is a whole sweep, not a shard", i + 1, b->scenario);
            return -1;
        }
        if (have[b->shard_k]) {
            snprintf(err, errlen, "part %d: shard %d/%d given twice", i + 1, b->shard_k,
                     b->shard_n);
            return -1;
        }
        have[b->shard_k] = true;
        total += b->nrows;
    }
    for (int k = 1; k <= a->shard_n; k++)
        if (!have[k]) {
            snprintf(err, errlen, "shard %d/%d is missing: its points were never run", k,
                     a->shard_n);
            return -1;
        }
    if (total != a->npoints) {
        snprintf(err, errlen, "the shards hold %d rows for a plan of %d points", total, a->npoints);
        return -1;
    }
    out->rows = calloc(total ? (size_t)total : 1, sizeof(out->rows[0]));
    if (!out->rows) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* Each point once: placed at its number, a second claim is a broken shard. */
    for (int i = 0; i < n; i++)
        for (int w = 0; w < parts[i].nrows; w++) {
            const rg_sw_row *row = &parts[i].rows[w];
            if (out->rows[row->n - 1].n) {
                snprintf(err, errlen, "point %d is in two shards (%d/%d and another)", row->n,
                         parts[i].shard_k, parts[i].shard_n);
                rg_sw_free(out);
                return -1;
            }
            out->rows[row->n - 1] = *row;
        }
    /* The rows together must be the plan the parts name: their rules and costs, in order. */
    char digest[17];
    snprintf(digest, sizeof(digest), "%016llx",
             (unsigned long long)digest_of(&out->rows[0].p, total, sizeof(out->rows[0])));
    if (strcmp(digest, a->digest)) {
        snprintf(err, errlen,
                 "the shards' points together are another plan (digest %s) than they name (%s): "
                 "their counting runs differed",
                 digest, a->digest);
        rg_sw_free(out);
        return -1;
    }
    snprintf(out->scenario, sizeof(out->scenario), "%s", a->scenario);
    snprintf(out->name, sizeof(out->name), "%s", a->name);
    snprintf(out->digest, sizeof(out->digest), "%s", a->digest);
    out->kind = a->kind;
    out->site_depth = a->site_depth;
    out->npoints = a->npoints;
    out->nrows = total;
    /* The sites: every shard's counting run listed its own; together, each once, in the order
     * the parts give them. None listed anywhere: the first part's why. */
    out->nsites = -1;
    for (int i = 0; i < n; i++) /* listed by any part: a list, even an empty one */
        if (parts[i].nsites >= 0)
            out->nsites = 0;
    out->sites = calloc(RG_SW_SITES_MAX, sizeof(out->sites[0]));
    if (!out->sites) {
        snprintf(err, errlen, "out of memory");
        rg_sw_free(out);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        for (int s = 0; s < parts[i].nsites; s++) {
            const rg_sw_site *x = &parts[i].sites[s];
            int k = 0;
            while (k < out->nsites && strcmp(out->sites[k].site, x->site))
                k++;
            if (k == out->nsites && k == RG_SW_SITES_MAX) {
                snprintf(err, errlen, "the shards list more than %d call sites", RG_SW_SITES_MAX);
                rg_sw_free(out);
                return -1;
            }
            if (k == out->nsites)
                out->sites[out->nsites++] = *x;
            else
                out->sites[k].ops |= x->ops;
        }
    }
    rg_sweep_sites_sort(out->sites, out->nsites);
    for (int i = n - 1; i >= 0; i--) /* a part that listed sites says why any went unnamed */
        if (parts[i].nsites >= 0 || out->nsites < 0)
            snprintf(out->sites_why, sizeof(out->sites_why), "%s", parts[i].sites_why);
    for (int i = 0; i < n; i++)
        out->seconds = parts[i].seconds > out->seconds ? parts[i].seconds : out->seconds;
    return 0;
}

/* --- a plan, for shards to share (plan.json) ------------------------------------------------- */

int rg_sw_plan_save(const rg_sw_result *r, const rg_sweep_point *pts, const char *path, char *err,
                    size_t errlen)
{
    json_t *points = json_array();
    for (int i = 0; i < r->npoints; i++) {
        const rg_sweep_point *p = &pts[i];
        json_t *o = json_pack("{s:i,s:s,s:i,s:s,s:i,s:i,s:I,s:f}", "n", i + 1, "rule", p->rule,
                              "rank", p->rank, "op", fi_op_name(p->op), "step", p->step, "rep",
                              p->rep, "nth", (json_int_t)p->nth, "cost", p->cost);
        if (!o || json_array_append_new(points, o) != 0) {
            json_decref(points);
            snprintf(err, errlen, "%s: point %d cannot be written (bad UTF-8?)", path, i + 1);
            return -1;
        }
    }
    json_t *sites = sites_or_fail(r, points, path, err, errlen);
    if (!sites)
        return -1;
    json_t *j =
        json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:s,s:s}", "scenario", r->scenario, "name", r->name,
                  "kind", rg_sweep_kind_name(r->kind), "digest", r->digest, "points", points,
                  "sites", sites, "sites_why", r->sites_why, "baseline", r->baseline);
    if (j)
        json_object_set_new(j, "site_depth", json_integer(r->site_depth));
    json_t *objs = j && r->nobjs >= 0 ? json_array() : NULL;
    for (int i = 0; objs && i < r->nobjs; i++) {
        json_t *o = json_pack("{s:s,s:s,s:s,s:b}", "name", r->objs[i].name, "path", r->objs[i].path,
                              "code", r->objs[i].code, "transport", r->objs[i].transport);
        if (!o || json_array_append_new(objs, o) != 0) { /* a path that is not UTF-8 */
            json_decref(objs);
            objs = NULL;
            json_decref(j);
            j = NULL;
        }
    }
    if (objs)
        json_object_set_new(j, "objects", objs);
    if (!j) {
        snprintf(err, errlen, "%s: cannot be written (bad UTF-8?)", path);
        return -1;
    }
    return rg_json_write(j, path, err, errlen);
}

static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

/* plan.json's "objects" into r: absent (an older plan) is nobjs -1; the field that is not
 * what rg_sw_plan_save writes, or NULL. */
static const char *objs_of(json_t *j, rg_sw_result *r, char *where, size_t wlen)
{
    json_t *a = json_object_get(j, "objects");
    r->nobjs = -1;
    if (!a)
        return NULL;
    if (!json_is_array(a) || json_array_size(a) > RG_SW_OBJS_MAX)
        return "objects";
    r->nobjs = 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *o = json_array_get(a, i);
        rg_sw_obj *b = &r->objs[i];
        const char *bad = NULL;
        json_t *tp = json_object_get(o, "transport");
        /* Printed in one line each: no control character in either. */
        if (str(o, "name", b->name, sizeof(b->name)) || !b->name[0] || strchr(b->name, '/') ||
            has_control(b->name))
            bad = "name";
        else if (str(o, "path", b->path, sizeof(b->path)) || has_control(b->path))
            bad = "path";
        else if (!json_is_boolean(tp))
            bad = "transport";
        else if (str(o, "code", b->code, sizeof(b->code)) ||
                 (b->code[0] &&
                  (strlen(b->code) != 16 || strspn(b->code, "0123456789abcdef") != 16)))
            bad = "code";
        if (bad) {
            snprintf(where, wlen, "objects[%zu].", i);
            return bad;
        }
        b->transport = json_is_true(tp);
        r->nobjs++;
    }
    return NULL;
}

int rg_sw_plan_read(rg_sw_result *r, rg_sweep_point *pts, int cap, const char *path, char *err,
                    size_t errlen)
{
    const char *bad;
    char kind[32], where[48] = "";
    json_t *j = load_head(path, r, kind, &bad, err, errlen);
    if (!j)
        return -1;
    json_t *points = json_object_get(j, "points");
    if (!bad && (!json_is_array(points) || json_array_size(points) > (size_t)cap))
        bad = "points";
    for (size_t i = 0; !bad && i < json_array_size(points); i++) {
        /* A point is a row's first half: read as one, with the state a plan has not got. */
        json_t *o = json_deep_copy(json_array_get(points, i));
        if (json_is_object(o)) {
            json_object_set_new(o, "state", json_string(state_names[RG_SW_NOT_FIRED]));
            json_object_set_new(o, "verdicts", json_string(""));
            json_object_set_new(o, "first", json_string(""));
            json_object_set_new(o, "shrunk", json_string(""));
        }
        static rg_sw_row w;
        bad = o ? row_of(o, (int)json_array_size(points), &w) : "a point";
        json_decref(o);
        if (!bad && w.n != (int)i + 1)
            bad = "n (not 1, 2, ...)";
        if (bad)
            snprintf(where, sizeof(where), "points[%zu].", i);
        else
            pts[i] = w.p, pts[i].fired = false;
    }
    if (!bad)
        bad = sites_of(j, r, where, sizeof(where));
    if (!bad)
        bad = objs_of(j, r, where, sizeof(where));
    /* Optional (plans before it had none); a string that fits when there. */
    json_t *base = json_object_get(j, "baseline");
    r->baseline[0] = '\0';
    if (!bad && base && (!json_is_string(base) || json_string_length(base) >= sizeof(r->baseline)))
        bad = "baseline";
    else if (!bad && base)
        snprintf(r->baseline, sizeof(r->baseline), "%s", json_string_value(base));
    int npoints = (int)json_array_size(points); /* before j, which holds it, goes */
    json_decref(j);
    if (!bad) {
        r->npoints = npoints;
        char digest[17];
        rg_sweep_digest(pts, r->npoints, digest);
        if (strcmp(digest, r->digest))
            bad = "digest (not its points')";
    }
    if (bad) {
        snprintf(err, errlen, "%s: %s%s is not what railguard sweep writes", path, where, bad);
        rg_sw_free(r);
        return -1;
    }
    r->kind = (rg_sw_kind)rg_sweep_kind_of(kind);
    return 0;
}
