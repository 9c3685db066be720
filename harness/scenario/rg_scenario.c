/* SPDX-License-Identifier: MIT */
/*
 * Scenario files: YAML read with libyaml's document API, then checked node by node so every
 * message names the line of the value at fault. The harness does not link librailguard, so the
 * names of dtypes, reductions, QP types and algorithms are spelled out here, keyed by the
 * public header's enums.
 */
#include "rg_sc_parse.h"
#include "data/rg_data.h"
#include "fi_plan.h"
#include "rg_parse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* --- the document -------------------------------------------------------------------------- */

/* A name-like word (a scenario's name, an exclusive resource) into dst, RG_SC_NAME_MAX bytes:
 * 0, or -1 after its line. */
static int get_word(const struct ctx *c, const yaml_node_t *val, const char *key, char *dst)
{
    if (!sc_is_scalar(val) ||
        !sc_valid_name((const char *)val->data.scalar.value, val->data.scalar.length))
        return sc_bad(c, val, "%s must be 1..%d characters of [A-Za-z0-9._-]", key,
                      RG_SC_NAME_MAX - 1);
    memcpy(dst, val->data.scalar.value, val->data.scalar.length);
    dst[val->data.scalar.length] = '\0';
    return 0;
}

/* Every key's default, before the file says otherwise. */
static void top_defaults(rg_scenario *sc)
{
    sc->rails = 1;
    sc->qp = RG_QPT_UC;
    sc->qp_fit = true; /* until the file states one */
    sc->rails_fit = false;
    sc->fit_note[0] = '\0';
    sc->algo = RG_ALGO_AUTO;
    sc->timeout_s = 10;
    sc->deadline_s = 60;
    sc->seed = 1;
    sc->faults[0] = '\0';
    sc->nfaults = 0;
    sc->zero_copy = false;
    sc->ownership = true;
    sc->nenv = 0;
    for (int r = 0; r < RG_MAX_RANKS; r++) {
        sc->expect[r] = RG_SC_EXPECT_OK;
        sc->expect_at[r] = RG_SC_AT_ANY;
        sc->expect_cls[r] = 0;
        sc->expect_named[r] = false;
    }
    sc->expect_at_max = RG_SC_AT_ANY;
    sc->expect_at_line = 0;
    sc->expect_cls_line = 0;
    sc->known_why[0] = '\0';
    sc->each_site = RG_SC_EACH_NONE;
    sc->each_site_line = 0;
}

/* "true" or "false" into *out; -1 after one line naming the key. */
static int get_bool(const struct ctx *c, const yaml_node_t *val, const char *key, bool *out)
{
    if (!sc_is_plain(val) || !(sc_scalar_is(val, "true") || sc_scalar_is(val, "false")))
        return sc_bad(c, val, "%s must be true or false", key);
    *out = sc_scalar_is(val, "true");
    return 0;
}

/* "rails: N" (exactly N: the scenario is about them) or "rails: up to N" (as many as the
 * transport has, at most N). 0, or -1 after one line. */
static int get_rails(const struct ctx *c, const yaml_node_t *val)
{
    static const char up[] = "up to ";
    const size_t n = sizeof(up) - 1;
    long v = 0;
    rg_scenario *sc = c->sc;
    if (sc_is_plain(val) && val->data.scalar.length > n && !memcmp(val->data.scalar.value, up, n)) {
        const char *d = (const char *)val->data.scalar.value + n;
        size_t len = val->data.scalar.length - n;
        if (len != 1 || d[0] < '1' || d[0] > '0' + RG_MAX_RAILS)
            return sc_bad(c, val, "rails must be 1..%d or \"up to\" 1..%d", RG_MAX_RAILS,
                          RG_MAX_RAILS);
        sc->rails = sc->rails_asked = d[0] - '0';
        sc->rails_fit = true;
        return 0;
    }
    if (sc_get_int(c, val, "rails", 1, RG_MAX_RAILS, &v))
        return -1;
    sc->rails = (int)v;
    sc->rails_fit = false;
    return 0;
}

/* One top-level key's value (not ranks, read first). 0, or -1 after one line. */
static int parse_key(const struct ctx *c, int key, const yaml_node_t *keynode, yaml_node_t *val)
{
    rg_scenario *sc = c->sc;
    int i = 0;
    switch (key) {
    case T_NAME:
        return get_word(c, val, "name", sc->name);
    case T_RAILS:
        return get_rails(c, val);
    case T_QP:
        if (sc_get_name(c, val, "qp", sc_qp_names, SC__COUNT_OF(sc_qp_names), &i))
            return -1;
        sc->qp = (rg_qp_type)i;
        sc->qp_fit = false;
        return 0;
    case T_ALGORITHM:
        if (sc_get_name(c, val, "algorithm", sc_algo_names, SC__COUNT_OF(sc_algo_names), &i))
            return -1;
        sc->algo = (rg_algo)i;
        return 0;
    case T_TIMEOUT:
        return sc_get_seconds(c, val, "timeout", SC__TIMEOUT_MAX, &sc->timeout_s);
    case T_DEADLINE:
        return sc_get_seconds(c, val, "deadline", SC__DEADLINE_MAX, &sc->deadline_s);
    case T_SEED:
        if (sc_plain_u64(val, true, &sc->seed))
            return sc_bad(c, val, "seed must be 0..2^64-1 (decimal or 0x hex)");
        return 0;
    case T_FAULTS:
        return sc_parse_faults(c, val);
    case T_PROGRAM:
        return sc_parse_program(c, val);
    case T_EXPECT:
        return sc_parse_expect(c, val);
    case T_ZERO_COPY:
        return get_bool(c, val, "zero_copy", &sc->zero_copy);
    case T_OWNERSHIP:
        return get_bool(c, val, "ownership", &sc->ownership);
    case T_TRACE:
        return get_bool(c, val, "trace", &sc->trace);
    case T_KNOWN:
        return sc_parse_known(c, val);
    case T_EXCLUSIVE:
        return get_word(c, val, "exclusive", sc->exclusive);
    case T_ENV:
        return sc_parse_env(c, val);
    case T_EACH_SITE:
        /* "" (NONE) is no value a file can give: the names from 1 on. */
        if ((i = sc_lookup(val, rg_sc_each_names + 1, RG_SC_EACH_COUNT - 1)) < 0)
            return sc_bad(c, val, "each_site must be error or negpoll, not");
        sc->each_site = (rg_sc_each)(i + 1);
        sc->each_site_line = (int)sc_line_of(keynode);
        return 0;
    case T_EXEC: {
        int rc = sc_parse_exec(c, val);
        sc->exec.line = (int)sc_line_of(keynode); /* the line of "exec:" */
        return rc;
    }
    default: /* T_RANKS, read first */
        return 0;
    }
}

/* What holds across keys, once all are read. 0, or -1 after one line. */
static int check_whole(const struct ctx *c, const yaml_node_t *root, yaml_node_t *const *vals)
{
    rg_scenario *sc = c->sc;
    rg_sc_expect_defaults(sc); /* now that every fault is known */
    if (vals[T_EXEC]) {
        /* A program brings its own transport settings: a key it would ignore is refused. */
        static const int theirs[] = {T_PROGRAM, T_RAILS, T_QP, T_ALGORITHM, T_TIMEOUT, T_ZERO_COPY};
        for (size_t k = 0; k < SC__COUNT_OF(theirs); k++)
            if (vals[theirs[k]])
                return sc_fail(c, sc_line_of(vals[theirs[k]]),
                               "'%s' is for program steps; an exec program has its own",
                               sc_top_keys[theirs[k]]);
        if (sc->exec.server[0] && sc->ranks != 2)
            return sc_bad(c, vals[T_RANKS], "exec: a server and a client are 2 ranks, not");
        /* No communicator timeout: SLOW_DETECTION's bound is half the deadline. */
        sc->timeout_s = sc->deadline_s;
    } else if (!vals[T_PROGRAM]) {
        return sc_fail(c, sc_line_of(root), "missing key 'program' (or exec)");
    }
    if (sc->expect_at_max >= sc->nops)
        return sc_fail(c, (size_t)sc->expect_at_line,
                       "expect: detected@%d names no step (the program has %d, from 0)",
                       sc->expect_at_max, sc->nops);
    /* A program run by exec has no calls of ours to carry a status. */
    if (sc->exec.on && sc->expect_cls_line)
        return sc_fail(c, (size_t)sc->expect_cls_line,
                       "expect: an exec program reports no status: a class (detected:CLASS) "
                       "needs a program of steps");
    /* Wire faults are done by the runner of railguard's own ranks, on their rails' devices; an
     * exec program picks its devices itself and its runner does none: such a rule could only
     * ever read NOT_EXERCISED, for a reason that is not the program's. */
    for (int i = 0; i < sc->nfaults && sc->exec.on; i++)
        if (fi_kind_wire((enum fi_kind)sc->fault[i].kind))
            return sc_fail(c, (size_t)sc->fault[i].line, "faults item %d: %s", i + 1,
                           RG_SC_EXEC_NO_WIRE);
    /* The runner's deadline must leave the transport time to report its own timeout. */
    if (!sc->exec.on && sc->deadline_s <= sc->timeout_s) {
        if (vals[T_DEADLINE])
            return sc_bad(c, vals[T_DEADLINE], "deadline must be more than timeout");
        return sc_bad(c, vals[T_TIMEOUT], "timeout must be less than the deadline (default %.0f)",
                      sc->deadline_s);
    }
    /* A wire fault on a rail the program does not have would act on no device. */
    for (int i = 0; i < sc->nfaults && !sc->exec.on; i++) {
        struct fi_plan one;
        if (!fi_kind_wire((enum fi_kind)sc->fault[i].kind) ||
            fi_plan_parse(sc->fault[i].rule, "", &one, NULL, 0) != 0 || one.nrules != 1)
            continue;
        if (one.rules[0].rail >= sc->rails)
            return sc_fail(c, (size_t)sc->fault[i].line,
                           "faults item %d: rail=%d names no rail (the program has %d, from 0)",
                           i + 1, one.rules[0].rail, sc->rails);
        /* "up to" may become one rail on a transport with one: such a fault is about rails. */
        if (sc->rails_fit && one.rules[0].rail > 0)
            return sc_fail(c, (size_t)sc->fault[i].line,
                           "faults item %d: rail=%d needs its rails stated (rails: %d), not "
                           "\"up to\"",
                           i + 1, one.rules[0].rail, sc->rails);
    }
    /* The runner adds the sanitizer's rule and the trace's to the plan it hands the ranks. */
    if (sc->nfaults + sc->ownership + sc->trace > FI_MAX_RULES)
        return sc_bad(c, vals[T_FAULTS],
                      "faults: %d rules and the %s make more than %d (set %s: false) at",
                      sc->nfaults,
                      sc->ownership && sc->trace ? "sanitizer's and the trace's"
                      : sc->ownership            ? "ownership sanitizer's"
                                                 : "trace's",
                      FI_MAX_RULES, sc->ownership ? "ownership" : "trace");
    /* each_site plans its own faults, one a site, and judges every point as a sweep does
     * (fired, and every rank ok, detected or killed): a plan or an expect of the file's would
     * be silently set aside. */
    static const int not_with_each[] = {T_FAULTS, T_EXPECT, T_KNOWN};
    for (size_t k = 0; sc->each_site && k < SC__COUNT_OF(not_with_each); k++)
        if (vals[not_with_each[k]])
            return sc_fail(c, sc_line_of(vals[not_with_each[k]]),
                           "'%s' cannot be given with each_site: it plans one fault at each call "
                           "site and judges each point as a sweep does",
                           sc_top_keys[not_with_each[k]]);
    if (!vals[T_NAME])
        return sc_default_name(c, sc->name);
    return 0;
}

static int parse_top(const struct ctx *c, const yaml_node_t *root)
{
    yaml_node_t *keys[T_KEYS], *vals[T_KEYS];
    rg_scenario *sc = c->sc;
    long v = 0;
    if (root->type != YAML_MAPPING_NODE)
        return sc_bad(c, root, "a scenario must be a mapping, not");
    if (sc_collect(c, root, sc_top_keys, T_KEYS, keys, vals))
        return -1;
    top_defaults(sc);
    /* ranks first: root, from, to and expect's keys are checked against it wherever it is. */
    if (!vals[T_RANKS])
        return sc_fail(c, sc_line_of(root), "missing key 'ranks'");
    /* A program under exec may be one process (a loopback tool); collectives need two. */
    if (sc_get_int(c, vals[T_RANKS], "ranks", vals[T_EXEC] ? 1 : 2, RG_MAX_RANKS, &v))
        return -1;
    sc->ranks = (int)v;
    /* The rest in file order, so the first wrong value in the file is the one reported. */
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = sc_node_at(c, p->key);
        if (parse_key(c, sc_lookup(key, sc_top_keys, T_KEYS), key, sc_node_at(c, p->value)))
            return -1;
    }
    return check_whole(c, root, vals);
}

/*
 * The first pass: libyaml's events, before any document is built. Refuses what no scenario
 * needs and what would make the composer slow (see SC__DEPTH_MAX), and a second document,
 * which yaml_parser_load would silently leave unread.
 */
static int screen(const struct ctx *c, const char *text, size_t len)
{
    yaml_parser_t p;
    int depth = 0, anchors = 0, aliases = 0, docs = 0, rc = 1;

    if (!yaml_parser_initialize(&p))
        return sc_fail(c, 0, "YAML: out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (rc > 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = sc_yaml_fail(c, &p, text, len);
            break;
        }
        size_t line = ev.start_mark.line + 1;
        const yaml_char_t *anchor = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            rc = 0;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = sc_fail(c, line, "more than one YAML document");
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            anchor = ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                                          : ev.data.mapping_start.anchor;
            if (++depth > SC__DEPTH_MAX)
                rc = sc_fail(c, line, "YAML: nested deeper than %d levels", SC__DEPTH_MAX);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_SCALAR_EVENT:
            anchor = ev.data.scalar.anchor;
            break;
        case YAML_ALIAS_EVENT:
            if (++aliases > SC__ALIASES_MAX)
                rc = sc_fail(c, line, "YAML: more than %d aliases", SC__ALIASES_MAX);
            break;
        default:
            break;
        }
        if (rc > 0 && anchor && ++anchors > SC__ANCHORS_MAX)
            rc = sc_fail(c, line, "YAML: more than %d anchors", SC__ANCHORS_MAX);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/*
 * Parses text as one YAML document of plain values (no tags) and hands its root to `top`:
 * the one way every file here is read, scenarios and known-failures files alike.
 */
int sc_parse_doc(struct ctx *c, const char *text, size_t len, const char *empty,
                 int (*top)(const struct ctx *, const yaml_node_t *))
{
    yaml_parser_t parser;
    yaml_document_t doc;
    bool parser_up = false, doc_up = false;
    int rc = -1;

    if (screen(c, text, len))
        goto done;
    if (!yaml_parser_initialize(&parser)) {
        sc_fail(c, 0, "YAML: out of memory");
        goto done;
    }
    parser_up = true;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    /* On failure yaml_parser_load has deleted the document itself. */
    if (!yaml_parser_load(&parser, &doc)) {
        sc_yaml_fail(c, &parser, text, len);
        goto done;
    }
    doc_up = true;
    /*
     * No tags: libyaml gives "!!str 2" the same tag as a plain 2, so "ranks: !!str 2" would
     * read as the number a YAML reader elsewhere takes for a string. A node whose text starts
     * with '!' carries a tag; every value here is plain.
     */
    for (yaml_node_t *n = doc.nodes.start; n < doc.nodes.top; n++) {
        size_t at = n->start_mark.index;
        if (at < len && text[at] == '!') {
            size_t k = at;
            while (k < len && k - at < 24 && text[k] != ' ' && text[k] != '\n')
                k++;
            sc_fail(c, n->start_mark.line + 1,
                    "a YAML tag is not allowed here: values are plain '%.*s'", (int)(k - at),
                    text + at);
            goto done;
        }
    }

    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    /* No document, or one that is only "---": YAML's null. */
    if (!root || (sc_is_plain(root) && root->data.scalar.length == 0)) {
        sc_fail(c, 1, "%s", empty);
        goto done;
    }
    c->doc = &doc;
    rc = top(c, root);
    c->doc = NULL;

done:
    if (doc_up)
        yaml_document_delete(&doc);
    if (parser_up)
        yaml_parser_delete(&parser);
    return rc;
}

int rg_scenario_parse(const char *text, size_t len, const char *path, rg_scenario *sc, char *err,
                      size_t errlen)
{
    struct ctx c = {.path = path ? path : "<scenario>", .err = err, .errlen = errlen};
    rg_scenario *out = NULL;
    int rc = -1;

    if (err && errlen > 0)
        err[0] = '\0';
    if (!sc || (!text && len)) {
        sc_fail(&c, 0, "rg_scenario_parse: no scenario to fill or no text");
        goto done;
    }
    if (!text)
        text = "";
    /*
     * Parsed into a copy: on failure the caller's scenario is cleared (below), never left half
     * filled with defaults and the values read before the error.
     */
    out = calloc(1, sizeof(*out));
    if (!out) {
        sc_fail(&c, 0, "out of memory");
        goto done;
    }
    c.sc = out;
    rc = sc_parse_doc(&c, text, len, "empty scenario", parse_top);

done:
    if (sc) {
        if (rc == 0)
            *sc = *out;
        else
            memset(sc, 0, sizeof(*sc));
    }
    free(out);
    return rc;
}

/* Reads a small regular file whole (at most 1 MiB): 0 with *buf (the caller frees it). */
int sc_read_small(const struct ctx *c, const char *path, char **buf, size_t *n)
{
    *buf = NULL;
    *n = 0;
    /* Non-blocking, and regular files only: a FIFO or a device would block or never end. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0)
        return sc_fail(c, 0, "cannot open: %s", strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return sc_fail(c, 0, "not a regular file");
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return sc_fail(c, 0, "cannot open: %s", strerror(e));
    }
    /* One byte past the limit tells a file at the limit from a larger one, even an endless one. */
    char *b = malloc(SC__FILE_MAX + 1);
    size_t got = b ? fread(b, 1, SC__FILE_MAX + 1, f) : 0;
    int read_errno = errno, read_failed = b && ferror(f);
    fclose(f);
    if (!b)
        return sc_fail(c, 0, "out of memory");
    if (read_failed || got > SC__FILE_MAX) {
        free(b);
        return read_failed ? sc_fail(c, 0, "cannot read: %s", strerror(read_errno))
                           : sc_fail(c, 0, "larger than 1 MiB");
    }
    *buf = b;
    *n = got;
    return 0;
}

int rg_scenario_load(const char *path, rg_scenario *sc, char *err, size_t errlen)
{
    struct ctx c = {.path = path ? path : "<scenario>", .err = err, .errlen = errlen};
    char *buf = NULL;
    size_t n = 0;
    int rc = -1;

    if (err && errlen > 0)
        err[0] = '\0';
    if (!path)
        sc_fail(&c, 0, "rg_scenario_load: no path");
    else if (sc_read_small(&c, path, &buf, &n) == 0)
        rc = rg_scenario_parse(buf, n, path, sc, err, errlen);
    if (rc && sc)
        memset(sc, 0, sizeof(*sc));
    free(buf);
    return rc;
}

double rg_scenario_cut_deadline(rg_scenario *sc, double s)
{
    double to = s > 2 * sc->timeout_s ? s : 2 * sc->timeout_s;
    if (s <= 0 || to >= sc->deadline_s) /* an exec scenario's timeout is its deadline */
        return 0;
    sc->deadline_s = to;
    return to;
}

void rg_scenario_scale(rg_scenario *sc, int f)
{
    sc->time_scale = f;
    sc->timeout_s *= f;
    sc->deadline_s *= f;
    if (sc->exec.client_after > 0)
        sc->exec.client_after *= f;
    sc->exec.service_grace *= f;
}
