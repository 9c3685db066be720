/* SPDX-License-Identifier: MIT */
/*
 * The code a plan's call sites point into (rg_sweep_cmd.h). A site is an object's file name and
 * an offset; a site point's rule fires only where a call returns to that offset. A plan carried
 * to another build (a shard's machine, a transport rebuilt since the plan was made) keeps its
 * offsets while the instructions move, and its site points then read "not fired" with nothing
 * to say why. So the plan keeps each object's code digest, and a sweep given the plan compares
 * it with the object it will load, saying so in one line when they differ or cannot be
 * compared. Different code warns rather than refuses: the per-event points are the same
 * whatever the build, and a site point that still fires still proves what it proves.
 */
#include "rg_sweep_cmd.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The transport this sweep's runs load: the last --transport (as railguard run takes it), else
 * the one beside railguard. */
static void transport_path(const struct sweep_opts *o, char *out, size_t len)
{
    rg_beside(out, len, o->self, "railguard-transport.so");
    for (int i = 0; i + 1 < o->npass; i += 2)
        if (!strcmp(o->pass[i], "--transport"))
            snprintf(out, len, "%s", o->pass[i + 1]);
}

int sweep_objs_of(const struct sweep_opts *o, const rg_sw_site *sites, int nsites, rg_sw_obj *objs)
{
    char tp[4096];
    transport_path(o, tp, sizeof(tp));
    int n = 0;
    for (int i = 0; i < nsites; i++)
        for (int k = 0; k < sites[i].nframes; k++) {
            const char *path = sites[i].frame[k].obj;
            int j = 0;
            while (j < n && strcmp(objs[j].path, path))
                j++;
            if (j < n)
                continue;
            if (n == RG_SW_OBJS_MAX) { /* a later sweep says so of each site in it */
                printf("railguard sweep: the plan keeps no code of %s: more than %d objects\n",
                       base_name(path), RG_SW_OBJS_MAX);
                continue;
            }
            rg_sw_obj *b = &objs[n++];
            snprintf(b->name, sizeof(b->name), "%s", base_name(path));
            snprintf(b->path, sizeof(b->path), "%s", path);
            b->transport = !strcmp(b->name, base_name(tp));
            char err[600];
            if (rg_obj_code(path, b->code, err, sizeof(err)) != 0)
                printf("railguard sweep: the plan keeps no code of %s: %s\n", b->name, err);
        }
    return n;
}

/* The objects the plan's site keys name that it keeps no code of, one line each. */
static int unkept(const rg_sw_result *p)
{
    static char seen[RG_SW_SITES_MAX][RG_EV_OBJ_MAX]; /* 100 KB: not on the stack */
    int nseen = 0, odd = 0;
    for (int i = 0; i < p->nsites; i++) {
        rg_ev_frame fr[FI_SITE_DEPTH];
        int nf = rg_ev_path_parse(p->sites[i].site, fr, FI_SITE_DEPTH);
        for (int k = 0; k < nf; k++) {
            const char *name = fr[k].obj; /* a key's frames are file names already */
            bool kept = false;
            for (int j = 0; j < p->nobjs && !kept; j++)
                kept = !strcmp(p->objs[j].name, name);
            for (int j = 0; j < nseen && !kept; j++)
                kept = !strcmp(seen[j], name);
            if (kept || nseen == RG_SW_SITES_MAX)
                continue;
            snprintf(seen[nseen++], sizeof(seen[0]), "%.*s", (int)sizeof(seen[0]) - 1, name);
            printf("railguard sweep: --plan: the call sites in %s are not checked against this "
                   "build: the plan keeps no code of it\n",
                   name);
            odd++;
        }
    }
    return odd;
}

int sweep_objs_check(const struct sweep_opts *o, const rg_sw_result *p)
{
    if (p->nsites <= 0)
        return 0;
    if (p->nobjs < 0) {
        printf("railguard sweep: --plan: %s keeps no code of the objects its call sites are in "
               "(written before plans did): its site points are not checked against this build\n",
               o->plan);
        return 1;
    }
    char tp[4096];
    transport_path(o, tp, sizeof(tp));
    int odd = unkept(p);
    for (int i = 0; i < p->nobjs; i++) {
        const rg_sw_obj *b = &p->objs[i];
        /* The transport wherever this sweep takes it from, railguard itself where this one
         * runs, any other object (a program under exec, a library) where it was loaded. */
        const char *path = b->transport                           ? tp
                           : !strcmp(b->name, base_name(o->self)) ? o->self
                                                                  : b->path;
        char code[17], err[600];
        if (b->transport && strcmp(base_name(tp), b->name)) {
            printf("railguard sweep: --plan: the plan's call sites are in the transport %s; this "
                   "sweep loads %s: no site point can fire in another file\n",
                   b->name, tp);
            odd++;
        } else if (rg_obj_code(path, code, err, sizeof(err)) != 0) {
            printf("railguard sweep: --plan: the call sites in %s are not checked against this "
                   "build: %s\n",
                   b->name, err);
            odd++;
        } else if (!b->code[0]) {
            printf("railguard sweep: --plan: the call sites in %s are not checked against this "
                   "build: the plan keeps no code of it\n",
                   b->name);
            odd++;
        } else if (strcmp(code, b->code)) {
            printf("railguard sweep: --plan: %s is not the code the plan's call sites were found "
                   "in (code %s, planned on %s): its site points aim at other instructions and "
                   "may read \"not fired\"; plan again with this build (railguard sweep --list)\n",
                   path, code, b->code);
            odd++;
        }
    }
    return odd;
}
