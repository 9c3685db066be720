/* SPDX-License-Identifier: MIT */
/* A transport's known-failures file (rg_sc_parse.h). */
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

/* --- known-failures files ------------------------------------------------------------------ */

/*
 * transport: NAME (optional: the file is refused for another transport), known: a mapping of
 * scenario name to the scenario's known: block (parse_known's grammar), and signatures:
 * failures known by signature for every scenario (rg_sc_ksig.c). An entry replaces
 * the scenario's own; one naming a scenario not in this run is noted, not an error (a run of
 * part of the suite).
 */
static int parse_known_file(const struct ctx *cc, const yaml_node_t *root)
{
    struct ctx c = *cc;
    const yaml_node_t *known = NULL, *sigs = NULL;
    bool named = false;
    if (root->type != YAML_MAPPING_NODE)
        return sc_bad(&c, root, "a known-failures file must be a mapping (transport, known), not");
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *key = sc_node_at(&c, p->key), *val = sc_node_at(&c, p->value);
        if (!key || !val)
            return sc_fail(&c, sc_line_of(root), "YAML: broken document");
        if (sc_scalar_is(key, "transport") && !named) {
            named = true;
            if (!sc_is_scalar(val) || !val->data.scalar.length)
                return sc_bad(&c, val, "transport must be the plugin's name, not");
            if (c.transport && strcmp((const char *)val->data.scalar.value, c.transport))
                return sc_bad(&c, val, "transport: the run's is '%s', the file's", c.transport);
        } else if (sc_scalar_is(key, "known") && !known) {
            known = val;
        } else if (sc_scalar_is(key, "signatures") && !sigs) {
            sigs = val;
        } else {
            return sc_bad(&c, key, "unknown or repeated key (transport, known, signatures)");
        }
    }
    if (!known && !sigs)
        return sc_fail(&c, sc_line_of(root), "missing key 'known' (or 'signatures')");
    if (sigs) {
        /* Read whole before any scenario takes them: a bad entry changes nothing. */
        static rg_sc_ksig ks[RG_SC_KSIG_MAX];
        int nks = 0;
        if (sc_parse_ksigs(&c, sigs, ks, &nks))
            return -1;
        for (int i = 0; i < c.nall; i++) {
            memcpy(c.all[i]->ksig, ks, sizeof(ks[0]) * (size_t)nks);
            c.all[i]->nksig = nks;
        }
    }
    if (!known)
        return 0;
    if (known->type != YAML_MAPPING_NODE)
        return sc_bad(&c, known, "known must map scenario names to their known failure, not");
    for (yaml_node_pair_t *p = known->data.mapping.pairs.start; p < known->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *key = sc_node_at(&c, p->key), *val = sc_node_at(&c, p->value);
        if (!key || !val)
            return sc_fail(&c, sc_line_of(known), "YAML: broken document");
        if (!sc_is_scalar(key) ||
            !sc_valid_name((const char *)key->data.scalar.value, key->data.scalar.length))
            return sc_bad(&c, key,
                          "a scenario name must be 1..%d characters of [A-Za-z0-9._-], not",
                          RG_SC_NAME_MAX - 1);
        rg_scenario *sc = NULL;
        for (int i = 0; i < c.nall && !sc; i++)
            if (!strcmp(c.all[i]->name, (const char *)key->data.scalar.value))
                sc = c.all[i];
        if (!sc) {
            size_t u = c.notes ? strlen(c.notes) : 0;
            if (c.notes && u + 1 < c.noteslen)
                snprintf(c.notes + u, c.noteslen - u, "%s:%zu: no scenario '%s' in this run\n",
                         c.path, sc_line_of(key), (const char *)key->data.scalar.value);
            continue;
        }
        /* Checked against that scenario's ranks, into a copy: a bad entry changes nothing. */
        rg_scenario tmp = *sc;
        c.sc = &tmp;
        if (sc_parse_known(&c, val))
            return -1;
        memcpy(sc->known, tmp.known, sizeof(sc->known));
        memcpy(sc->known_why, tmp.known_why, sizeof(sc->known_why));
    }
    return 0;
}

int rg_known_load(const char *path, const char *transport, rg_scenario *const *scs, int n,
                  char *notes, size_t noteslen, char *err, size_t errlen)
{
    struct ctx c = {.path = path ? path : "<known>",
                    .err = err,
                    .errlen = errlen,
                    .all = scs,
                    .nall = n,
                    .transport = transport,
                    .notes = notes,
                    .noteslen = noteslen};
    char *buf = NULL;
    size_t len = 0;
    int rc = -1;
    if (err && errlen)
        err[0] = '\0';
    if (notes && noteslen)
        notes[0] = '\0';
    if (!path)
        sc_fail(&c, 0, "rg_known_load: no path");
    else if (sc_read_small(&c, path, &buf, &len) == 0)
        rc = sc_parse_doc(&c, buf, len, "empty known-failures file", parse_known_file);
    free(buf);
    return rc;
}
