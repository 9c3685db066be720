/* SPDX-License-Identifier: MIT */
/*
 * A result as JSON and back (jansson): how a supervisor hands its result to the runner, how an
 * external launch's ranks leave theirs for `railguard report`, and what result.json holds.
 * Every value read back is checked: a file that says what no writer wrote is refused, named.
 */
#include "result/rg_result.h"

#include <errno.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A rank's class as the report spells it: "timeout", "v1" (its ABI carries none), "" none. */
const char *rg_rank_class(const rg_rank_result *k, char *buf, size_t len)
{
    if (k->status < 0)
        return rg_sc_class_name(k->status, buf, len);
    snprintf(buf, len, "%s", k->status == RG_STATUS_V1 ? "v1" : "");
    return buf;
}

/* --- JSON ---------------------------------------------------------------------------------- */
static json_t *rank_json(const rg_result *r, int i)
{
    const rg_rank_result *k = &r->rank[i];
    char want[RG_SC_EXPECT_STR_MAX], cls[32];
    json_t *findings = json_array();
    for (int f = 0; f < k->nfindings; f++)
        json_array_append_new(findings, json_pack("{s:s,s:f,s:s}", "verdict",
                                                  rg_verdict_name(k->finding[f].verdict), "t",
                                                  k->finding[f].t_s, "text", k->finding[f].text));
    json_t *j = json_pack(
        "{s:i,s:s,s:s,s:f,s:i,s:i,s:s,s:f,s:f,s:s,s:s,s:s,s:s,s:o}", "rank", i, "verdict",
        rg_verdict_name(k->verdict), "expect",
        rg_sc_expect_str(r->expect[i], r->expect_at[i], r->expect_cls[i], want, sizeof(want)), "t",
        k->t_s, "step", k->step, "rep", k->rep, "class", rg_rank_class(k, cls, sizeof(cls)),
        "step_t", k->step_t_s, "left_t", k->left_t_s, "where", k->where, "detail", k->detail,
        "ownership", k->ownership, "calls", k->calls, "findings", findings);
    if (j && k->service)
        json_object_set_new(j, "service", json_true());
    /* null: not counted, never a number that means it */
    if (j && json_object_set_new(j, "sockets",
                                 k->sockets_known ? json_integer(k->sockets) : json_null())) {
        json_decref(j);
        return NULL;
    }
    if (j && (json_object_set_new(j, "start_s", json_real(k->start_s)) ||
              json_object_set_new(j, "start_unseen", json_boolean(k->start_unseen)) ||
              json_object_set_new(j, "cpu_wait_s", json_real(k->cpu_wait_s)))) {
        json_decref(j);
        return NULL;
    }
    /* Only an external launch's ranks have a clock to report. */
    if (j && (k->clock.measured || k->clock.why[0]))
        json_object_set_new(j, "clock",
                            json_pack("{s:b,s:f,s:f,s:i,s:s}", "measured", k->clock.measured,
                                      "offset_ms", k->clock.offset_ms, "err_ms", k->clock.err_ms,
                                      "rounds", k->clock.rounds, "why", k->clock.why));
    return j;
}

static json_t *rule_json(const rg_result *r, int i)
{
    const rg_rule_result *u = &r->rule[i];
    json_t *by = json_array();
    for (int k = 0; k < r->ranks; k++)
        json_array_append_new(by, json_integer(u->fired_by[k]));
    json_t *o = json_pack("{s:i,s:s,s:i,s:b,s:b,s:I,s:I,s:o,s:s}", "item", i + 1, "rule", u->rule,
                          "line", u->line, "optional", u->optional, "counting", u->counting,
                          "fired", (json_int_t)u->fired, "matched", (json_int_t)u->matched,
                          "fired_by_rank", by, "site", u->site);
    /* Only what a receiving device said: absent reads back as -1, "not said". */
    if (o && u->rx_pkts >= 0 && u->rx_dup >= 0 && u->rx_oos >= 0)
        json_object_set_new(o, "rx",
                            json_pack("{s:I,s:I,s:I}", "pkts", (json_int_t)u->rx_pkts, "duplicates",
                                      (json_int_t)u->rx_dup, "out_of_seq", (json_int_t)u->rx_oos));
    return o;
}

json_t *rg_result_json(const rg_result *r)
{
    json_t *ranks = json_array(), *rules = json_array();
    for (int i = 0; i < r->ranks; i++)
        json_array_append_new(ranks, rank_json(r, i));
    for (int i = 0; i < r->nrules; i++)
        json_array_append_new(rules, rule_json(r, i));
    json_t *known = json_array();
    for (int i = 0; i < r->ranks; i++)
        json_array_append_new(known, r->known[i] > RG_V_KILLED
                                         ? json_string(rg_verdict_name((rg_verdict)r->known[i]))
                                         : json_null());
    static const char *const states[] = {"", "xfail", "xpass"};
    json_t *j = json_pack("{s:s,s:s,s:s,s:b,s:s,s:s,s:s,s:f,s:o,s:o,s:f,s:s,s:i,s:b}", "name",
                          r->name, "path", r->path, "dir", r->dir, "passed", r->passed, "why",
                          r->why, "first_failure", r->first, "repro", r->repro, "seconds",
                          r->seconds, "ranks", ranks, "rules", rules, "t0_mono_ms", r->t0_mono_ms,
                          "host", r->host, "self_rank", r->self_rank, "leak_ok", r->leak_ok);
    if (j && json_object_set_new(j, "known", known) == 0 &&
        json_object_set_new(j, "known_why", json_string(r->known_why)) == 0 &&
        json_object_set_new(j, "known_state", json_string(states[r->known_state])) == 0 &&
        (!r->nksig ||
         json_object_set_new(j, "known_signatures", rg_ksig_json(r->ksig, r->nksig)) == 0) &&
        (!r->cause || json_object_set_new(j, "cause",
                                          json_pack("{s:s,s:s}", "name", rg_cause_name(r->cause),
                                                    "text", r->cause_text)) == 0) &&
        /* Whose failure the judge named first: a signature's origin, which a reread result
         * must give as the judged one did (null: none failed). */
        json_object_set_new(j, "first_rank",
                            r->first_rank >= 0 ? json_integer(r->first_rank) : json_null()) == 0 &&
        json_object_set_new(j, "skipped", json_boolean(r->skipped)) == 0 &&
        json_object_set_new(j, "lag_s", json_real(r->lag_s)) == 0 &&
        json_object_set_new(j, "time_scale", json_integer(r->time_scale > 1 ? r->time_scale : 1)) ==
            0 &&
        json_object_set_new(j, "attempts", json_integer(r->attempts > 1 ? r->attempts : 1)) == 0 &&
        json_object_set_new(j, "slow_note", json_string(r->slow_note)) == 0 &&
        json_object_set_new(j, "sites_note", json_string(r->sites_note)) == 0 &&
        (!r->uc_as_rc || (json_object_set_new(j, "uc_as_rc", json_true()) == 0 &&
                          json_object_set_new(j, "as_rc_qps", json_integer(r->as_rc_qps)) == 0)) &&
        (!r->fit_note[0] || json_object_set_new(j, "fit_note", json_string(r->fit_note)) == 0) &&
        json_object_set_new(j, "too_slow", json_boolean(r->too_slow)) == 0 &&
        json_object_set_new(j, "phases", rg_phases_json(&r->phases)) == 0 &&
        (!(r->deadline_cut_s > 0) ||
         json_object_set_new(j, "deadline_cut_s", json_real(r->deadline_cut_s)) == 0) &&
        (!r->clock_placed ||
         (json_object_set_new(j, "clock_placed", json_true()) == 0 &&
          json_object_set_new(j, "clock_err_ms", json_real(r->clock_err_ms)) == 0)))
        return j;
    json_decref(j);
    return NULL;
}

int rg_json_write(json_t *j, const char *path, char *err, size_t errlen)
{
    if (!j) {
        snprintf(err, errlen, "%s: could not build the report (bad UTF-8 in a message?)", path);
        return -1;
    }
    /* Written beside and renamed over: a reader (railguard report, a CI step) sees the whole
     * file or none, even when the writer is killed midway (mpirun ending a launch). */
    char tmp[4200];
    int rc = -1;
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) < sizeof(tmp)) {
        rc = json_dump_file(j, tmp, JSON_INDENT(1) | JSON_SORT_KEYS);
        if (!rc && rename(tmp, path) != 0)
            rc = -1;
        if (rc)
            unlink(tmp);
    }
    json_decref(j);
    if (rc) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int rg_result_save(const rg_result *r, const char *path, char *err, size_t errlen)
{
    return rg_json_write(rg_result_json(r), path, err, errlen);
}

static void copy_str(char *dst, size_t len, json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    snprintf(dst, len, "%s", s ? s : "");
}

static double num_or(json_t *o, const char *key, double dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* A rank's clock as its runner saved it: every number in range, or -1. */
static int clock_of(json_t *c, rg_clock *out)
{
    if (!c)
        return 0; /* not an external launch's rank */
    out->measured = json_is_true(json_object_get(c, "measured"));
    out->offset_ms = num_or(c, "offset_ms", NAN);
    out->err_ms = num_or(c, "err_ms", NAN);
    json_t *n = json_object_get(c, "rounds");
    out->rounds = json_is_integer(n) ? (int)json_integer_value(n) : -1;
    copy_str(out->why, sizeof(out->why), c, "why");
    if (!json_is_object(c) || !(fabs(out->offset_ms) <= RG_CLOCK_OFFSET_MAX_MS) ||
        !(out->err_ms >= 0 && out->err_ms <= RG_CLOCK_ERR_MAX_MS) || out->rounds < 0 ||
        out->rounds > RG_CLOCK_ROUNDS)
        return -1;
    return 0;
}

static int expect_of(const char *name, int *at, uint32_t *cls)
{
    rg_sc_expect e;
    return name && rg_sc_expect_parse(name, strlen(name), &e, at, cls) == 0 ? (int)e : -1;
}

/* class_str's reverse; a name it cannot read is no status. */
static int status_of(const char *cls)
{
    if (!cls)
        return 0;
    return !strcmp(cls, "v1") ? RG_STATUS_V1 : rg_sc_class_of(cls, strlen(cls));
}

/* The result's own fields (not its ranks or rules). 0, or -1 with err. */
static int read_top(rg_result *r, json_t *j, const char *path, char *err, size_t errlen)
{
    copy_str(r->name, sizeof(r->name), j, "name");
    copy_str(r->path, sizeof(r->path), j, "path");
    copy_str(r->dir, sizeof(r->dir), j, "dir");
    copy_str(r->why, sizeof(r->why), j, "why");
    copy_str(r->first, sizeof(r->first), j, "first_failure");
    copy_str(r->repro, sizeof(r->repro), j, "repro");
    r->passed = json_is_true(json_object_get(j, "passed"));
    r->t0_mono_ms = num_or(j, "t0_mono_ms", 0);
    copy_str(r->host, sizeof(r->host), j, "host");
    r->self_rank = (int)num_or(j, "self_rank", -1);
    r->clock_placed = json_is_true(json_object_get(j, "clock_placed"));
    r->clock_err_ms = num_or(j, "clock_err_ms", 0);
    r->leak_ok = json_is_true(json_object_get(j, "leak_ok"));
    r->skipped = json_is_true(json_object_get(j, "skipped"));
    r->lag_s = num_or(j, "lag_s", 0);
    r->time_scale = (int)num_or(j, "time_scale", 1);
    r->attempts = (int)num_or(j, "attempts", 1);
    copy_str(r->slow_note, sizeof(r->slow_note), j, "slow_note");
    copy_str(r->sites_note, sizeof(r->sites_note), j, "sites_note");
    r->uc_as_rc = json_is_true(json_object_get(j, "uc_as_rc"));
    r->as_rc_qps = (int64_t)num_or(j, "as_rc_qps", 0);
    copy_str(r->fit_note, sizeof(r->fit_note), j, "fit_note");
    r->too_slow = json_is_true(json_object_get(j, "too_slow"));
    r->deadline_cut_s = num_or(j, "deadline_cut_s", 0);
    if (rg_phases_read(json_object_get(j, "phases"), &r->phases, path, err, errlen) != 0)
        return -1;
    /* Absent from a result written before it was kept: -1, and a signature's origin is then
     * the first rank judged unacceptable, as it was read then. */
    json_t *fr = json_object_get(j, "first_rank");
    json_int_t first = fr && json_is_integer(fr) ? json_integer_value(fr) : -1;
    r->first_rank = (int)(first >= 0 && first < RG_MAX_RANKS ? first : -1);
    if (fr && !json_is_null(fr) && (!json_is_integer(fr) || r->first_rank < 0)) {
        snprintf(err, errlen, "%s: first_rank is not a rank number or null", path);
        return -1;
    }
    const char *bad = !(r->lag_s >= 0 && r->lag_s < 1e9)                     ? "lag_s"
                      : r->time_scale < 1 || r->time_scale > 100             ? "time_scale"
                      : r->attempts < 1 || r->attempts > 2                   ? "attempts"
                      : !(r->deadline_cut_s >= 0 && r->deadline_cut_s < 1e9) ? "deadline_cut_s"
                      : r->as_rc_qps < 0 || r->as_rc_qps > 1000000000        ? "as_rc_qps"
                                                                             : NULL;
    if (bad) {
        snprintf(err, errlen, "%s: %s out of range", path, bad);
        return -1;
    }
    copy_str(r->known_why, sizeof(r->known_why), j, "known_why");
    const char *ks = json_string_value(json_object_get(j, "known_state"));
    r->known_state = ks && !strcmp(ks, "xfail")   ? RG_KNOWN_XFAIL
                     : ks && !strcmp(ks, "xpass") ? RG_KNOWN_XPASS
                                                  : RG_KNOWN_NONE;
    json_t *kn = json_object_get(j, "known");
    for (int i = 0; i < RG_MAX_RANKS; i++) {
        const char *v = json_string_value(json_array_get(kn, (size_t)i));
        r->known[i] = v && rg_verdict_of(v) > RG_V_KILLED ? rg_verdict_of(v) : 0;
    }
    r->seconds = json_number_value(json_object_get(j, "seconds"));
    json_t *cause = json_object_get(j, "cause");
    if (cause) {
        const char *name = json_string_value(json_object_get(cause, "name"));
        const char *text = json_string_value(json_object_get(cause, "text"));
        int c = rg_cause_of(name);
        if (c < 0 || !text || strlen(text) >= sizeof(r->cause_text)) {
            snprintf(err, errlen, "%s: cause is not one railguard writes (name, text)", path);
            return -1;
        }
        r->cause = (rg_cause)c;
        snprintf(r->cause_text, sizeof(r->cause_text), "%s", text);
    }
    return rg_ksig_read(json_object_get(j, "known_signatures"), r->ksig, &r->nksig, path, err,
                        errlen);
}

/* Rank i's verdict, expectation, times, clock and findings from k. 0, or -1 with err. */
static int read_rank(rg_result *r, int i, json_t *k, const char *path, char *err, size_t errlen)
{
    rg_rank_result *q = &r->rank[i];
    int v = rg_verdict_of(json_string_value(json_object_get(k, "verdict")));
    int at = RG_SC_AT_ANY;
    uint32_t cls = 0;
    int e = expect_of(json_string_value(json_object_get(k, "expect")), &at, &cls);
    if (v < 0 || e < 0) {
        snprintf(err, errlen, "%s: rank %d has a bad verdict or expectation", path, i);
        return -1;
    }
    q->verdict = (rg_verdict)v;
    r->expect[i] = (rg_sc_expect)e;
    r->expect_at[i] = at;
    r->expect_cls[i] = cls;
    q->status = status_of(json_string_value(json_object_get(k, "class")));
    q->step = (int)json_integer_value(json_object_get(k, "step"));
    q->rep = (int)json_integer_value(json_object_get(k, "rep"));
    copy_str(q->where, sizeof(q->where), k, "where");
    copy_str(q->detail, sizeof(q->detail), k, "detail");
    copy_str(q->ownership, sizeof(q->ownership), k, "ownership");
    copy_str(q->calls, sizeof(q->calls), k, "calls");
    q->t_s = num_or(k, "t", -1);
    q->step_t_s = num_or(k, "step_t", -1);
    q->left_t_s = num_or(k, "left_t", -1);
    q->service = json_is_true(json_object_get(k, "service"));
    q->start_s = num_or(k, "start_s", -1);
    q->cpu_wait_s = num_or(k, "cpu_wait_s", -1);
    q->start_unseen = json_is_true(json_object_get(k, "start_unseen"));
    json_t *so = json_object_get(k, "sockets");
    q->sockets_known = so && json_is_integer(so);
    q->sockets = q->sockets_known ? (int)json_integer_value(so) : 0;
    if (so && !json_is_null(so) && !(q->sockets_known && q->sockets >= 0 && q->sockets < 65536)) {
        snprintf(err, errlen, "%s: rank %d's sockets is not a count (0..65535 or null)", path, i);
        return -1;
    }
    if (!(q->start_s >= -1 && q->start_s < 1e9) || !(q->cpu_wait_s >= -1 && q->cpu_wait_s < 1e9)) {
        snprintf(err, errlen, "%s: rank %d's start_s or cpu_wait_s is out of range", path, i);
        return -1;
    }
    if (clock_of(json_object_get(k, "clock"), &q->clock)) {
        snprintf(err, errlen, "%s: rank %d's clock is not a measurement (a number out of range)",
                 path, r->self_rank >= 0 ? r->self_rank : i);
        return -1;
    }
    json_t *fs = json_object_get(k, "findings");
    for (size_t f = 0; f < json_array_size(fs) && f < RG_MAX_FINDINGS; f++) {
        json_t *fo = json_array_get(fs, f);
        rg_finding *fd = &q->finding[q->nfindings];
        int fv = rg_verdict_of(json_string_value(json_object_get(fo, "verdict")));
        if (fv < 0)
            continue;
        fd->verdict = (rg_verdict)fv;
        fd->t_s = num_or(fo, "t", -1);
        copy_str(fd->text, sizeof(fd->text), fo, "text");
        q->nfindings++;
    }
    return 0;
}

/* An integer field, or dflt when it is absent or not an integer. */
static int64_t int_or(json_t *v, int64_t dflt)
{
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

/* Each fault rule's counts. */
static void read_rules(rg_result *r, json_t *j)
{
    json_t *rules = json_object_get(j, "rules");
    for (size_t i = 0; i < json_array_size(rules) && i < FI_MAX_RULES; i++) {
        json_t *u = json_array_get(rules, i), *by = json_object_get(u, "fired_by_rank");
        rg_rule_result *rr = &r->rule[r->nrules++];
        copy_str(rr->rule, sizeof(rr->rule), u, "rule");
        rr->line = (int)json_integer_value(json_object_get(u, "line"));
        rr->optional = json_is_true(json_object_get(u, "optional"));
        rr->counting = json_is_true(json_object_get(u, "counting"));
        rr->fired = (uint64_t)json_integer_value(json_object_get(u, "fired"));
        rr->matched = (int64_t)json_integer_value(json_object_get(u, "matched"));
        copy_str(rr->site, sizeof(rr->site), u, "site");
        /* All three counts from 0, or none: a partial "rx" is not said. */
        json_t *rx = json_object_get(u, "rx");
        rr->rx_pkts = int_or(json_object_get(rx, "pkts"), -1);
        rr->rx_dup = int_or(json_object_get(rx, "duplicates"), -1);
        rr->rx_oos = int_or(json_object_get(rx, "out_of_seq"), -1);
        if (rr->rx_pkts < 0 || rr->rx_dup < 0 || rr->rx_oos < 0)
            rr->rx_pkts = rr->rx_dup = rr->rx_oos = -1;
        for (size_t k = 0; k < json_array_size(by) && k < RG_MAX_RANKS; k++)
            rr->fired_by[k] = (uint32_t)json_integer_value(json_array_get(by, k));
    }
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
    int rc = -1;
    if (!json_is_array(ranks) || json_array_size(ranks) > RG_MAX_RANKS) {
        snprintf(err, errlen, "%s: no ranks array", path);
        goto out;
    }
    if (read_top(r, j, path, err, errlen) != 0)
        goto out;
    r->ranks = (int)json_array_size(ranks);
    for (int i = 0; i < r->ranks; i++)
        if (read_rank(r, i, json_array_get(ranks, (size_t)i), path, err, errlen) != 0)
            goto out;
    read_rules(r, j);
    rc = 0;
out:
    json_decref(j);
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int rg_result_dir_names(const char *dir, char ***names_p)
{
    char path[2200];
    char **names = NULL;
    int n = 0, cap = 0;
    DIR *d = opendir(dir);
    *names_p = NULL;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));) {
        snprintf(path, sizeof(path), "%s/%s/result.json", dir, e->d_name);
        /* F_OK, not R_OK: one that cannot be read is the reader's finding, never a skip. */
        if (e->d_name[0] == '.' || access(path, F_OK) != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, sizeof(char *) * (size_t)cap);
            if (!nn)
                break;
            names = nn;
        }
        if ((names[n] = strdup(e->d_name)))
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, (size_t)n, sizeof(char *), cmp_name);
    *names_p = names;
    return n;
}
