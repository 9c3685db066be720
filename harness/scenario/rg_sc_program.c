/* SPDX-License-Identifier: MIT */
/* A scenario's program, step by step, and an exec scenario's commands (rg_sc_parse.h). */
#include "rg_sc_parse.h"
#include "base/rg_base.h"
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

/* --- program ------------------------------------------------------------------------------- */

/* One step; *live says whether the communicator exists (create and destroy change it). */
/* One key of a step into op (the step's kind allows it, checked by the caller). 0, or -1
 * after one line. */
static int step_key(const struct ctx *c, int k, const yaml_node_t *val, rg_sc_op *op)
{
    int i = 0, last_rank = c->sc->ranks - 1;
    long v = 0;
    switch (k) {
    case S_DTYPE:
        if (sc_get_name(c, val, "dtype", rg_data_dtype_names, RG_DTYPE_COUNT, &i))
            return -1;
        op->dtype = (rg_dtype)i;
        return 0;
    case S_REDOP:
        if (sc_get_name(c, val, "redop", rg_data_redop_names, RG_REDOP_COUNT, &i))
            return -1;
        op->redop = (rg_redop)i;
        return 0;
    case S_COUNT:
        if (sc_get_int(c, val, "count", 1, RG_SC_COUNT_MAX, &v))
            return -1;
        op->count = (size_t)v;
        return 0;
    case S_ROOT:
    case S_FROM:
    case S_TO:
        if (sc_get_int(c, val, sc_step_keys[k], 0, last_rank, &v))
            return -1;
        *(k == S_ROOT ? &op->root : k == S_FROM ? &op->from : &op->to) = (int)v;
        return 0;
    case S_REPEAT:
        if (sc_get_int(c, val, "repeat", 1, SC__REPEAT_MAX, &v))
            return -1;
        op->repeat = (int)v;
        return 0;
    case S_INPLACE:
        if (!sc_is_plain(val) || !(sc_scalar_is(val, "true") || sc_scalar_is(val, "false")))
            return sc_bad(c, val, "inplace must be true or false");
        op->inplace = sc_scalar_is(val, "true");
        return 0;
    case S_VALUES:
        if (sc_get_name(c, val, "values", rg_data_values_names, RG_VALUES_COUNT, &i))
            return -1;
        op->values = i;
        return 0;
    default:
        return 0;
    }
}

/* What holds across a step's keys, and the communicator's life (live: it exists here). */
static int check_step(const struct ctx *c, yaml_node_t *const *vals, rg_sc_op *op, bool *live)
{
    /* Checked once dtype and redop are known, whatever order the keys came in. */
    if (vals[S_VALUES]) {
        const char *why = rg_data_values_problem((rg_values)op->values, op->dtype, op->redop);
        if (why)
            return sc_bad(c, vals[S_VALUES], "%s: %s %s", why, rg_data_dtype_name(op->dtype),
                          rg_data_redop_name(op->redop));
    }
    if (op->kind == RG_SC_SENDRECV) {
        if (!vals[S_FROM])
            return sc_fail(c, (size_t)op->line, "sendrecv without key 'from'");
        if (!vals[S_TO])
            return sc_fail(c, (size_t)op->line, "sendrecv without key 'to'");
        if (op->from == op->to)
            return sc_bad(c, vals[S_TO], "from and to must differ");
    }
    /* As the transport's rg_redop_supported(): complex numbers have no order. */
    if (op->dtype == RG_COMPLEX64 && (op->redop == RG_MAX || op->redop == RG_MIN))
        return sc_bad(c, vals[S_REDOP], "complex64 cannot reduce with");
    if (op->kind == RG_SC_CREATE) {
        if (*live)
            return sc_bad(c, vals[S_OP], "the communicator already exists, cannot");
        *live = true;
    } else if (!*live) {
        return sc_bad(c, vals[S_OP], "no communicator (destroyed above) for");
    } else if (op->kind == RG_SC_DESTROY) {
        *live = false;
    }
    return 0;
}

static int parse_step(const struct ctx *c, const yaml_node_t *step, rg_sc_op *op, bool *live)
{
    yaml_node_t *keys[S_KEYS], *vals[S_KEYS];
    int i = 0;
    if (step->type != YAML_MAPPING_NODE)
        return sc_bad(c, step, "a step must be a mapping, not");
    if (sc_collect(c, step, sc_step_keys, S_KEYS, keys, vals))
        return -1;
    if (!vals[S_OP])
        return sc_fail(c, sc_line_of(step), "step without key 'op'");
    if (sc_get_name(c, vals[S_OP], "op", sc_kind_names, RG_SC_KIND_COUNT, &i))
        return -1;
    *op = (rg_sc_op){.kind = (rg_sc_kind)i,
                     .dtype = RG_FLOAT32,
                     .redop = RG_SUM,
                     .count = 1,
                     .root = 0,
                     /* Not a rank: the ops other than sendrecv have no sender or receiver. */
                     .from = -1,
                     .to = -1,
                     .repeat = 1,
                     .inplace = false,
                     .values = RG_VALUES_EXACT,
                     .line = (int)sc_line_of(keys[S_OP])};
    /* In file order, so the first wrong value in the step is the one reported. */
    for (yaml_node_pair_t *p = step->data.mapping.pairs.start; p < step->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = sc_node_at(c, p->key);
        int k = sc_lookup(key, sc_step_keys, S_KEYS);
        if (k == S_OP)
            continue;
        if (!(sc_kind_keys[op->kind] & B(k)))
            return sc_bad(c, key, "%s does not take", sc_kind_names[op->kind]);
        if (step_key(c, k, sc_node_at(c, p->value), op))
            return -1;
    }
    return check_step(c, vals, op, live);
}

int sc_parse_program(const struct ctx *c, const yaml_node_t *n)
{
    /* The program starts with the communicator created. */
    bool live = true;

    if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top == n->data.sequence.items.start)
        return sc_bad(c, n, "program must be a non-empty sequence of steps, not");
    int nops = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        const yaml_node_t *step = sc_node_at(c, *it);
        if (!step)
            return sc_fail(c, sc_line_of(n), "YAML: broken document");
        if (nops == RG_SC_OPS_MAX)
            return sc_fail(c, sc_line_of(step), "program of more than %d steps", RG_SC_OPS_MAX);
        if (parse_step(c, step, &c->sc->ops[nops], &live))
            return -1;
        nops++;
    }
    c->sc->nops = nops;
    return 0;
}

/* --- exec ---------------------------------------------------------------------------------- */

/* One command string: words as a shell splits them (rg_split_words), at least one. Whether
 * the program exists is the runner's to say, on the machine that runs it. */
static int get_command(const struct ctx *c, const yaml_node_t *n, const char *what, char *out)
{
    if (!sc_is_scalar(n))
        return sc_bad(c, n, "exec: %s must be a string, not", what);
    const char *v = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    if (len >= RG_SC_EXEC_MAX)
        return sc_bad(c, n, "exec: %s longer than %d characters", what, RG_SC_EXEC_MAX - 1);
    if (strlen(v) != len)
        return sc_bad(c, n, "exec: %s: control character in", what);
    static char buf[RG_SC_EXEC_MAX + 2];
    char *words[RG_CMD_WORDS + 1], why[200];
    int nw = rg_split_words(v, buf, sizeof(buf), words, RG_CMD_WORDS, why, sizeof(why));
    if (nw < 0)
        return sc_fail(c, sc_line_of(n), "exec: %s: %s", what, why);
    if (!nw)
        return sc_bad(c, n, "exec: %s is empty", what);
    memcpy(out, v, len);
    out[len] = '\0';
    return 0;
}

int sc_parse_exec(const struct ctx *c, const yaml_node_t *n)
{
    rg_sc_exec *x = &c->sc->exec;
    const yaml_node_t *cmd = NULL, *server = NULL, *client = NULL, *after = NULL, *svc = NULL,
                      *grace = NULL, *launcher = NULL;
    if (n->type != YAML_MAPPING_NODE)
        return sc_bad(c, n,
                      "exec must be a mapping (command, server and client, or launcher), not");
    x->on = true;
    x->client_after = -1;
    x->services = 0;
    x->service_grace = 5;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = sc_node_at(c, p->key), *val = sc_node_at(c, p->value);
        if (!key || !val)
            return sc_fail(c, sc_line_of(n), "YAML: broken document");
        if (sc_scalar_is(key, "command") && !cmd) {
            cmd = val;
            if (get_command(c, val, "command", x->command))
                return -1;
        } else if (sc_scalar_is(key, "server") && !server) {
            server = val;
            if (get_command(c, val, "server", x->server))
                return -1;
        } else if (sc_scalar_is(key, "client") && !client) {
            client = val;
            if (get_command(c, val, "client", x->client))
                return -1;
        } else if (sc_scalar_is(key, "launcher") && !launcher) {
            launcher = val;
            if (get_command(c, val, "launcher", x->launcher))
                return -1;
        } else if (sc_scalar_is(key, "client_after") && !after) {
            after = val;
            if (sc_get_seconds(c, val, "exec: client_after", 3600, &x->client_after))
                return -1;
        } else if (sc_scalar_is(key, "service") && !svc) {
            svc = val;
            if (val->type != YAML_SEQUENCE_NODE)
                return sc_bad(c, val, "exec: service is a list of ranks, [0] say, not");
            for (yaml_node_item_t *it = val->data.sequence.items.start;
                 it < val->data.sequence.items.top; it++) {
                const yaml_node_t *rn = sc_node_at(c, *it);
                uint64_t r;
                if (!rn || !sc_is_plain(rn) ||
                    sc_digits_u64((const char *)rn->data.scalar.value, rn->data.scalar.length,
                                  false, &r) ||
                    r >= (uint64_t)c->sc->ranks)
                    return sc_bad(c, rn ? rn : val, "exec: service: a rank is 0..%d, not",
                                  c->sc->ranks - 1);
                if (x->services & (UINT64_C(1) << r))
                    return sc_bad(c, rn, "exec: service: rank named twice:");
                x->services |= UINT64_C(1) << r;
            }
        } else if (sc_scalar_is(key, "service_grace") && !grace) {
            grace = val;
            if (sc_get_seconds(c, val, "exec: service_grace", 600, &x->service_grace))
                return -1;
        } else {
            return sc_bad(c, key,
                          "exec: unknown or repeated key (command, server, client, launcher, "
                          "client_after, service, service_grace)");
        }
    }
    if (cmd && (server || client))
        return sc_bad(c, cmd, "exec: command, or server and client, not both:");
    if (launcher && (cmd || server || client))
        return sc_bad(c, launcher,
                      "exec: a launcher starts every rank; no command, server or "
                      "client beside it:");
    if (!cmd && !launcher && !(server && client))
        return sc_fail(c, sc_line_of(n), "exec: needs command, server and client, or launcher");
    /* The runner waits for its launcher, not for the ranks, which are the launcher's. */
    if (launcher && svc)
        return sc_bad(c, svc, "exec: service is for ranks the runner starts, not a launcher's:");
    if (after && !server)
        return sc_bad(c, after, "exec: client_after goes with server and client, not");
    /* A service is stopped once the others end: some rank must end by itself. */
    if (svc && x->services == (c->sc->ranks >= 64 ? UINT64_MAX : (UINT64_C(1) << c->sc->ranks) - 1))
        return sc_bad(c, svc, "exec: service: every rank a service leaves none to end the run:");
    if (grace && !svc)
        return sc_bad(c, grace, "exec: service_grace goes with service, not");
    return 0;
}
