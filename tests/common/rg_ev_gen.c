/* SPDX-License-Identifier: MIT */
/* Edge-valued records of the evidence schema, and their comparison (rg_ev_gen.h). */
#include "common/rg_ev_gen.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static uint64_t edge_u(uint64_t d)
{
    static const uint64_t e[] = {0, 1, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX};
    return d % 8 < 5 ? e[d % 8] : d >> 3;
}

static int64_t edge_i(uint64_t d)
{
    static const int64_t e[] = {0, -1, INT64_MIN, INT64_MAX, 1};
    return d % 8 < 5 ? e[d % 8] : (int64_t)(d >> 3) - (int64_t)(UINT64_MAX >> 4);
}

/* A string of the bytes a reader could get wrong, or drawn ones (any byte but NUL). */
static const char *edge_s(uint64_t d, rg_ev_draw draw, void *st, char **room, size_t *left)
{
    static const char *const e[] = {
        "",        "plain", "a\"quote\\and\\\\back", "\x01\x1f\x7f", "\x80\xc3\xa9\xff",
        "unknown", "0x10"};
    size_t n = d % 10;
    char tmp[48];
    const char *s;
    if (n < sizeof(e) / sizeof(e[0])) {
        s = e[n];
    } else {
        size_t len = (size_t)(draw(st) % (sizeof(tmp) - 1));
        for (size_t i = 0; i < len; i++) {
            tmp[i] = (char)(draw(st) % 255 + 1);
        }
        tmp[len] = '\0';
        s = tmp;
    }
    size_t l = strlen(s) + 1;
    if (l > *left)
        return "";
    char *out = *room;
    memcpy(out, s, l);
    *room += l;
    *left -= l;
    return out;
}

void rg_ev_gen(enum rg_ev_kind kind, void *rec, rg_ev_draw draw, void *st, char *strs, size_t len)
{
    rg_ev_gen_k(&rg_ev_kinds[kind], rec, draw, st, strs, len);
}

void rg_ev_gen_k(const rg_ev_kdef *k, void *rec, rg_ev_draw draw, void *st, char *strs, size_t len)
{
    memset(rec, 0, k->size);
    char *room = strs;
    size_t left = len;
    uint32_t has = 0;
    for (int i = 0; i < k->nf; i++) {
        const rg_ev_fdef *f = &k->f[i];
        void *at = (char *)rec + f->off;
        uint64_t d = draw(st);
        if (!f->required && (d & 1))
            continue; /* absent */
        if (!f->required)
            has |= 1u << i;
        d >>= 1;
        switch ((enum rg_ev_type)f->type) {
        case RG_EVT_U:
        case RG_EVT_X:
            *(uint64_t *)at = edge_u(d);
            break;
        case RG_EVT_I:
            *(int64_t *)at = edge_i(d);
            break;
        case RG_EVT_S:
            *(const char **)at = edge_s(d, draw, st, &room, &left);
            break;
        case RG_EVT_B:
            *(bool *)at = d & 1;
            break;
        case RG_EVT_MS: {
            static const double e[] = {0, 0.001, 999999999999.999};
            *(double *)at = d % 4 < 3 ? e[d % 4] : (double)((d >> 2) % 1000000000) / 1000.0;
            break;
        }
        case RG_EVT_N: {
            rg_ev_n *n = at;
            n->known = d % 3 != 0;
            n->v = n->known ? edge_u(d / 3) : 0;
            break;
        }
        case RG_EVT_OPS:
            for (int j = 0; j < 5; j++)
                ((rg_ev_ops *)at)->op[j] = edge_u(draw(st));
            break;
        case RG_EVT_WRS: {
            rg_ev_wrs *w = at;
            w->n = (int)(d % (RG_EV_WRS_MAX + 2)) - 1;
            for (int j = 0; j < w->n; j++) {
                w->e[j].wr_id = edge_u(draw(st));
                w->e[j].len = edge_u(draw(st));
            }
            break;
        }
        }
    }
    *(uint32_t *)rec = has;
}

int rg_ev_same(enum rg_ev_kind kind, const void *a, const void *b, char *why, size_t whylen)
{
    return rg_ev_same_k(&rg_ev_kinds[kind], a, b, why, whylen);
}

int rg_ev_same_k(const rg_ev_kdef *k, const void *a, const void *b, char *why, size_t whylen)
{
    uint32_t ha = *(const uint32_t *)a, hb = *(const uint32_t *)b;
    for (int i = 0; i < k->nf; i++) {
        const rg_ev_fdef *f = &k->f[i];
        bool pa = f->required || (ha & (1u << i)), pb = f->required || (hb & (1u << i));
        if (pa != pb) {
            snprintf(why, whylen, "%s.%s: present %d, read back %d", k->name, f->name, pa, pb);
            return -1;
        }
        if (!pa)
            continue;
        const void *x = (const char *)a + f->off, *y = (const char *)b + f->off;
        bool same = true;
        switch ((enum rg_ev_type)f->type) {
        case RG_EVT_U:
        case RG_EVT_X:
            same = *(const uint64_t *)x == *(const uint64_t *)y;
            break;
        case RG_EVT_I:
            same = *(const int64_t *)x == *(const int64_t *)y;
            break;
        case RG_EVT_S: {
            /* NULL is written as "" */
            const char *s = *(const char *const *)x, *t = *(const char *const *)y;
            same = !strcmp(s ? s : "", t ? t : "");
            break;
        }
        case RG_EVT_B:
            same = *(const bool *)x == *(const bool *)y;
            break;
        case RG_EVT_MS:
            same = fabs(*(const double *)x - *(const double *)y) < 0.0006;
            break;
        case RG_EVT_N: {
            const rg_ev_n *m = x, *n = y;
            same = m->known == n->known && (!m->known || m->v == n->v);
            break;
        }
        case RG_EVT_OPS:
            same = !memcmp(x, y, sizeof(rg_ev_ops));
            break;
        case RG_EVT_WRS: {
            const rg_ev_wrs *m = x, *n = y;
            same = m->n == n->n;
            for (int j = 0; same && j < m->n; j++)
                same = m->e[j].wr_id == n->e[j].wr_id && m->e[j].len == n->e[j].len;
            break;
        }
        }
        if (!same) {
            snprintf(why, whylen, "%s.%s: not read back as written", k->name, f->name);
            return -1;
        }
    }
    return 0;
}
