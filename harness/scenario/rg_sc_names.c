/* SPDX-License-Identifier: MIT */
/* The names a scenario spells (rg_sc_parse.h), keyed by the enums, so a reordering in the
 * headers cannot skew a name; a value with no name here cannot be named in a scenario. */
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

/* --- names --------------------------------------------------------------------------------- */

/*
 * Keyed by the enum values, so a reordering in railguard.h cannot skew a name. A value added
 * there and not here stays NULL and cannot be named in a scenario until it is added.
 */
const char *const sc_qp_names[RG_QPT_COUNT] = {[RG_QPT_UC] = "uc", [RG_QPT_RC] = "rc"};

const char *const sc_algo_names[RG_ALGO_COUNT] = {
    [RG_ALGO_AUTO] = "auto",
    [RG_ALGO_RING] = "ring",
    [RG_ALGO_MESH] = "mesh",
};

const char *const sc_kind_names[RG_SC_KIND_COUNT] = {
    [RG_SC_ALL_REDUCE] = "all_reduce",
    [RG_SC_ALL_GATHER] = "all_gather",
    [RG_SC_REDUCE_SCATTER] = "reduce_scatter",
    [RG_SC_BROADCAST] = "broadcast",
    [RG_SC_SENDRECV] = "sendrecv",
    [RG_SC_BARRIER] = "barrier",
    [RG_SC_CREATE] = "create",
    [RG_SC_DESTROY] = "destroy",
};

static const char *const expect_names[] = {
    [RG_SC_EXPECT_OK] = "ok",
    [RG_SC_EXPECT_DETECTED] = "detected",
    [RG_SC_EXPECT_ANY] = "any",
    [RG_SC_EXPECT_KILLED] = "killed",
    [RG_SC_EXPECT_OK_OR_DETECTED] = "ok|detected",
};

const char *rg_sc_kind_name(rg_sc_kind k)
{
    return (unsigned)k < RG_SC_KIND_COUNT ? sc_kind_names[k] : "?";
}

const char *rg_sc_expect_name(rg_sc_expect e)
{
    return (unsigned)e < (unsigned)SC__COUNT_OF(expect_names) ? expect_names[e] : "?";
}

/* A class is a status's name without RG_ERR_, in lower case: RG_ERR_PEER_ABORT, peer_abort. */
const char *rg_sc_class_name(int st, char *buf, size_t len)
{
    const char *n = rg_plugin_status_name(st);
    size_t i = 0;
    if (!n || st >= 0) {
        snprintf(buf, len, "?");
        return buf;
    }
    n += strlen("RG_ERR_");
    for (; n[i] && i + 1 < len; i++)
        buf[i] = (char)tolower((unsigned char)n[i]);
    buf[i] = '\0';
    return buf;
}

int rg_sc_class_of(const char *s, size_t len)
{
    char name[32];
    for (int st = -1; st > -RG_SC_CLASS_BITS; st--) {
        if (!rg_plugin_status_name(st))
            continue;
        rg_sc_class_name(st, name, sizeof(name));
        if (strlen(name) == len && !memcmp(name, s, len))
            return st;
    }
    return 0;
}

const char *rg_sc_expect_str(rg_sc_expect e, int at, uint32_t cls, char *buf, size_t len)
{
    size_t o;
    bool det = e == RG_SC_EXPECT_DETECTED || e == RG_SC_EXPECT_OK_OR_DETECTED;
    if (!det || at == RG_SC_AT_ANY)
        o = (size_t)snprintf(buf, len, "%s", rg_sc_expect_name(e));
    else if (at == RG_SC_AT_INIT)
        o = (size_t)snprintf(buf, len, "%s@init", rg_sc_expect_name(e));
    else
        o = (size_t)snprintf(buf, len, "%s@%d", rg_sc_expect_name(e), at);
    const char *sep = ":";
    for (int b = 1; det && b < RG_SC_CLASS_BITS && o < len; b++) {
        char name[32];
        if (!(cls & (1u << b)))
            continue;
        o += (size_t)snprintf(buf + o, len - o, "%s%s", sep,
                              rg_sc_class_name(-b, name, sizeof(name)));
        sep = "|";
    }
    return buf;
}

int rg_sc_expect_parse(const char *s, size_t len, rg_sc_expect *e, int *at, uint32_t *cls)
{
    *at = RG_SC_AT_ANY;
    *cls = 0;
    /* detected[@init|@N][:class[|class...]] */
    const char *colon = memchr(s, ':', len);
    size_t head = colon ? (size_t)(colon - s) : len;
    const char *sep = memchr(s, '@', head);
    size_t name_len = sep ? (size_t)(sep - s) : head;
    int i = 0;
    for (; i < SC__COUNT_OF(expect_names); i++)
        if (strlen(expect_names[i]) == name_len && !memcmp(expect_names[i], s, name_len))
            break;
    if (i == SC__COUNT_OF(expect_names))
        return -1;
    *e = (rg_sc_expect)i;
    /* Only an error has a place it must come from, and a class. */
    if ((sep || colon) && i != RG_SC_EXPECT_DETECTED && i != RG_SC_EXPECT_OK_OR_DETECTED)
        return -1;
    if (sep) {
        const char *w = sep + 1;
        size_t wl = head - name_len - 1;
        if (wl == 0)
            return -1;
        if (wl == 4 && !memcmp(w, "init", 4)) {
            *at = RG_SC_AT_INIT;
        } else {
            int v = 0;
            for (size_t k = 0; k < wl; k++) {
                if (w[k] < '0' || w[k] > '9' || v > RG_SC_OPS_MAX)
                    return -1;
                v = v * 10 + (w[k] - '0');
            }
            *at = v;
        }
    }
    if (!colon)
        return 0;
    const char *c = colon + 1, *end = s + len;
    for (;;) {
        const char *bar = memchr(c, '|', (size_t)(end - c));
        const char *stop = bar ? bar : end;
        int st = rg_sc_class_of(c, (size_t)(stop - c));
        if (!st || (*cls & (1u << -st)))
            return -1; /* unknown or repeated */
        *cls |= 1u << -st;
        if (!bar)
            return 0;
        c = bar + 1;
    }
}

const char *const rg_sc_each_names[RG_SC_EACH_COUNT] = {
    [RG_SC_EACH_NONE] = "", [RG_SC_EACH_ERROR] = "error", [RG_SC_EACH_NEGPOLL] = "negpoll"};

const char *const sc_top_keys[T_KEYS] = {
    [T_NAME] = "name",           [T_RANKS] = "ranks",
    [T_RAILS] = "rails",         [T_QP] = "qp",
    [T_ALGORITHM] = "algorithm", [T_TIMEOUT] = "timeout",
    [T_DEADLINE] = "deadline",   [T_SEED] = "seed",
    [T_FAULTS] = "faults",       [T_PROGRAM] = "program",
    [T_EXPECT] = "expect",       [T_ZERO_COPY] = "zero_copy",
    [T_OWNERSHIP] = "ownership", [T_EXEC] = "exec",
    [T_KNOWN] = "known",         [T_EXCLUSIVE] = "exclusive",
    [T_TRACE] = "trace",         [T_ENV] = "env",
    [T_EACH_SITE] = "each_site",
};

const char *const sc_step_keys[S_KEYS] = {
    [S_OP] = "op",           [S_DTYPE] = "dtype",   [S_COUNT] = "count", [S_REDOP] = "redop",
    [S_ROOT] = "root",       [S_FROM] = "from",     [S_TO] = "to",       [S_REPEAT] = "repeat",
    [S_INPLACE] = "inplace", [S_VALUES] = "values",
};

/*
 * The keys each op takes besides "op". A key an op would ignore is refused, so a scenario
 * never reads as testing something it does not: broadcast has one buffer (always in place),
 * sendrecv two distinct ranks' buffers, and create and destroy happen once each where listed.
 */
const unsigned sc_kind_keys[RG_SC_KIND_COUNT] = {
    [RG_SC_ALL_REDUCE] = DATA | B(S_REDOP) | B(S_INPLACE) | B(S_VALUES),
    [RG_SC_ALL_GATHER] = DATA | B(S_INPLACE),
    [RG_SC_REDUCE_SCATTER] = DATA | B(S_REDOP) | B(S_INPLACE) | B(S_VALUES),
    [RG_SC_BROADCAST] = DATA | B(S_ROOT),
    [RG_SC_SENDRECV] = DATA | B(S_FROM) | B(S_TO),
    [RG_SC_BARRIER] = B(S_REPEAT),
    [RG_SC_CREATE] = 0,
    [RG_SC_DESTROY] = 0,
};
