/* SPDX-License-Identifier: MIT */
/*
 * A scenario's env: (rg_sc_parse.h): variables every rank starts with, besides the ones railguard
 * sets itself -- the transport's tuning, as a run on real hardware would set it. A name, its
 * value and the count are checked here, so a rank never starts with something the file did
 * not mean: a name railguard sets (its rank, secret, the shim's plan) is refused, since one of
 * the two would silently lose.
 */
#include "rg_sc_parse.h"

#include <stdio.h>
#include <string.h>
#include <yaml.h>

/* Set by the runner or the launcher for every rank, or meaning the scenario's own keys. */
static const char *const reserved[] = {
    "RG_RANK",
    "RG_SIZE",
    "RG_SECRET",
    "RG_SECRET_FILE",
    "RG_COORDINATOR",
    "RG_DEVICES_FILE",
    "RG_QP_TYPE",
    "RG_ALGO",
    "RG_TIMEOUT",
    "RG_BACKTRACE_SIGNAL",
    "MLX_IBV_DEVICES",
    "JACCL_IBV_DEVICES",
    "MLX_JACCL_COORDINATOR",
    "JACCL_COORDINATOR",
    "MLX_JACCL_RING",
    "JACCL_RING",
    "MLX_RANK",
    "JACCL_RANK",
};
static const char *const reserved_prefix[] = {"RG_FI_", "LD_", "RG_SOFTROCE_"};

/* [A-Z_][A-Z0-9_]*, shorter than RG_SC_ENV_NAME_MAX: what a shell exports as it is. */
static bool env_name(const char *s, size_t len)
{
    if (!len || len >= RG_SC_ENV_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

static bool is_reserved(const char *name)
{
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (!strcmp(name, reserved[i]))
            return true;
    for (size_t i = 0; i < sizeof(reserved_prefix) / sizeof(reserved_prefix[0]); i++)
        if (!strncmp(name, reserved_prefix[i], strlen(reserved_prefix[i])))
            return true;
    return false;
}

int sc_parse_env(const struct ctx *c, const yaml_node_t *n)
{
    rg_scenario *sc = c->sc;
    if (n->type != YAML_MAPPING_NODE)
        return sc_bad(c, n, "env must be a mapping of NAME: value, not");
    sc->nenv = 0;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = sc_node_at(c, p->key), *val = sc_node_at(c, p->value);
        if (!sc_is_plain(key) ||
            !env_name((const char *)key->data.scalar.value, key->data.scalar.length))
            return sc_bad(c, key, "env: a name is [A-Z_][A-Z0-9_]*, shorter than %d, not",
                          RG_SC_ENV_NAME_MAX);
        const char *name = (const char *)key->data.scalar.value;
        if (is_reserved(name))
            return sc_bad(c, key,
                          "env: railguard sets this for every rank itself (or a key of the "
                          "scenario does)");
        for (int i = 0; i < sc->nenv; i++)
            if (!strcmp(sc->env[i].name, name))
                return sc_bad(c, key, "env: named twice");
        if (sc->nenv == RG_SC_ENV_MAX)
            return sc_bad(c, key, "env: more than %d variables at", RG_SC_ENV_MAX);
        if (!sc_is_scalar(val))
            return sc_bad(c, val, "env: %s's value must be one scalar, not", name);
        const char *v = (const char *)val->data.scalar.value;
        size_t len = val->data.scalar.length;
        if (len >= RG_SC_ENV_VALUE_MAX)
            return sc_bad(c, val, "env: %s's value is longer than %d characters", name,
                          RG_SC_ENV_VALUE_MAX - 1);
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
                return sc_bad(c, val, "env: %s's value holds a character that is not printable",
                              name);
        rg_sc_env *e = &sc->env[sc->nenv++];
        snprintf(e->name, sizeof(e->name), "%s", name);
        memcpy(e->value, v, len);
        e->value[len] = '\0';
    }
    return 0;
}
