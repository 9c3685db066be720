/* SPDX-License-Identifier: MIT */
/*
 * The shim's dlopen and dlmopen: programs that look verbs up on their own handle. A handle to
 * the libibverbs the shim wraps is swapped for the shim's own, so dlsym on it reaches the
 * wrappers; a bare name is searched for as the loader would for the caller. Split from
 * fi_shim.c: it needs nothing of the shim's tables, only where the shim and libibverbs are.
 */
#include "fi_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_self[4096];  /* the shim as loaded, for dlopen(RTLD_NOLOAD) of itself */
static char g_verbs[4096]; /* realpath of the libibverbs holding the real ibv_open_device */

/* The next dlopen and dlmopen, found on first use: a constructor that runs before the shim's
 * may call them. */
typedef void *(*dlopen_fn)(const char *, int);
typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);

static dlopen_fn fi_real_dlopen(void)
{
    static dlopen_fn f;
    if (!f)
        *(void **)&f = dlsym(RTLD_NEXT, "dlopen");
    return f;
}

static dlmopen_fn fi_real_dlmopen(void)
{
    static dlmopen_fn f;
    if (!f)
        *(void **)&f = dlsym(RTLD_NEXT, "dlmopen");
    return f;
}

int fi_dl_init(const char *self_path, const char *verbs_path)
{
    snprintf(g_self, sizeof(g_self), "%s", self_path ? self_path : "");
    snprintf(g_verbs, sizeof(g_verbs), "%s", verbs_path ? verbs_path : "");
    return fi_real_dlopen() && fi_real_dlmopen() ? 0 : -1;
}

/*
 * Whether a handle is the libibverbs the shim wraps. Decided on the object the loader opened,
 * never on the name asked for: a symlink, an absolute path or the fully versioned file name all
 * lead to the same object, and a name check let any of them bypass every fault. A lookup of
 * ibv_open_device on the handle would not do either: it also succeeds on a library that merely
 * depends on libibverbs (librdmacm).
 */
static bool fi_is_verbs_handle(void *h)
{
    struct link_map *lm = NULL;
    char path[PATH_MAX];
    if (!g_verbs[0] || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !lm->l_name[0])
        return false;
    return realpath(lm->l_name, path) && strcmp(path, g_verbs) == 0;
}

/*
 * The shim's handle in place of libibverbs': dlsym on it searches the shim, then its dependency
 * libibverbs, so the program gets the wrappers. The real handle is closed again (libibverbs
 * stays loaded: the shim depends on it), so the program's dlclose balances the shim's count.
 */
static void *fi_dl_swap(void *h, const char *call, const char *file, long lmid)
{
    int saved = errno;
    if (h && file && g_self[0] && fi_is_verbs_handle(h)) {
        void *self = fi_real_dlopen()(g_self, RTLD_NOW | RTLD_NOLOAD);
        if (self) {
            FI_EV(dlopen, .call = call, .file = file, .lmid = lmid);
            dlclose(h);
            h = self;
        }
    }
    errno = saved;
    return h;
}

/*
 * A bare name is searched for as the loader would for the program's own call: in the
 * directories of the object that called dlopen (its DT_RPATH or DT_RUNPATH, such as $ORIGIN),
 * LD_LIBRARY_PATH and the system's. Without this, every dlopen the shim wraps searched as if
 * the shim had called it, and an adapter that finds a library beside itself through $ORIGIN
 * (JACCL's librdma.dylib) ran under railguard without it, and crashed. NULL when not found
 * there; the caller then tries the plain call (the loader's cache).
 */
/* How many of si's last directories libc's search list ends with too: the defaults. */
static unsigned fi_common_tail(const Dl_serinfo *si)
{
    Dl_serinfo size, *ref = NULL;
    unsigned n = 0;
    void *libc = fi_real_dlopen()("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!libc || dlinfo(libc, RTLD_DI_SERINFOSIZE, &size) != 0 || !size.dls_size ||
        !(ref = malloc(size.dls_size)))
        goto out;
    *ref = size;
    if (dlinfo(libc, RTLD_DI_SERINFO, ref) != 0)
        goto out;
    while (n < si->dls_cnt && n < ref->dls_cnt &&
           !strcmp(si->dls_serpath[si->dls_cnt - 1 - n].dls_name,
                   ref->dls_serpath[ref->dls_cnt - 1 - n].dls_name))
        n++;
out:
    free(ref);
    if (libc)
        dlclose(libc);
    return n;
}

static void *fi_dlopen_as(const void *caller, const char *file, int flags, bool *tried)
{
    Dl_info info;
    struct link_map *lm = NULL;
    Dl_serinfo size, *si = NULL;
    void *self = NULL, *h = NULL;
    char path[PATH_MAX];

    if (!caller || !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return NULL;
    /* The caller's own handle: "" is the program itself. */
    self =
        fi_real_dlopen()(lm->l_name && lm->l_name[0] ? lm->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (!self || dlinfo(self, RTLD_DI_SERINFOSIZE, &size) != 0 || !size.dls_size)
        goto out;
    si = malloc(size.dls_size);
    if (!si)
        goto out;
    *si = size;
    if (dlinfo(self, RTLD_DI_SERINFO, si) != 0)
        goto out;
    /* Only the caller's RPATH, LD_LIBRARY_PATH and RUNPATH: after them the loader reads
     * ld.so.cache before the default directories, which the plain call below does in the same
     * order. glibc leaves dls_flags 0, so the default directories are told apart as the tail
     * this list shares with libc's, which has no paths of its own. The first file that exists
     * decides, as for the loader: one there that fails to load is the answer, not a reason to
     * look further. */
    unsigned own = si->dls_cnt - fi_common_tail(si);
    for (unsigned i = 0; i < own && !*tried; i++) {
        const char *dir = si->dls_serpath[i].dls_name;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir[0] ? dir : ".", file) >=
                sizeof(path) ||
            access(path, F_OK) != 0)
            continue;
        *tried = true;
        h = fi_real_dlopen()(path, flags);
    }
out:
    free(si);
    if (self)
        dlclose(self);
    return h;
}

FI_EXPORT void *dlopen(const char *file, int flags)
{
    void *h = NULL;
    bool tried = false;
    /* Already loaded under that name (or soname): no search, as the loader does. A caller's
     * own RTLD_NOLOAD must never load anything, so it gets the plain call. */
    if (file && !strchr(file, '/') && !(flags & RTLD_NOLOAD)) {
        if (!(h = fi_real_dlopen()(file, flags | RTLD_NOLOAD)))
            h = fi_dlopen_as(__builtin_return_address(0), file, flags, &tried);
        if (h)
            (void)dlerror(); /* the probes' misses are not the program's error */
    }
    if (!h && !tried) /* a candidate that failed keeps its dlerror: no other copy instead */
        h = fi_real_dlopen()(file, flags);
    return fi_dl_swap(h, "dlopen", file, (long)LM_ID_BASE);
}

/*
 * dlmopen of libibverbs in another namespace would load a second copy the shim never patched.
 * It gets the shim's handle too, so its lookups reach the wrappers and the one libibverbs they
 * wrap; the copy it opened is closed again.
 */
FI_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int flags)
{
    return fi_dl_swap(fi_real_dlmopen()(lmid, file, flags), "dlmopen", file, (long)lmid);
}
