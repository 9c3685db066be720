/* SPDX-License-Identifier: MIT */
/*
 * Call sites (fi_shim.h): where in the program each verbs call comes from, so a sweep can say
 * which of a transport's verbs call sites its faults reached and which they never did. A call
 * site is the return address of the verbs call -- ibv_post_send and ibv_poll_cq are inline
 * calls through the context's ops, which the shim patched, so the address is in the program's
 * own code, not in libibverbs -- named as the object holding it and the offset from that
 * object's load address ("librailguard.so.1+0x1a2b"): the same in every run of the same build,
 * whatever the address space layout, and what addr2line takes. The runner names it with its
 * function and line from the object's debug information.
 *
 * A transport that calls every verb from one wrapper function has one site per verb that
 * way, whatever calls the wrapper: a call path of a few frames tells its callers apart. The
 * frames past the first are found by unwinding the stack (libgcc's unwinder, from the
 * objects' .eh_frame, which every x86-64 build has) up to the program's frame, whose return
 * address is the call's, and on from there; they are return addresses too, named the same way.
 *
 * Each wrapped call sets the calling thread's site on entry and clears it on the way out; what
 * costs anything (the table, the object lookup, the unwinding) runs only while the plan asks
 * for it: a `sites` rule records every site with its calls and events, a `site=` filter needs
 * the site of each call to compare. A fault event names its site and FI_SITE_DEPTH frames of
 * its path in any case, found then, once a fault.
 */
#include "fi_shim.h"

#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

#define FI_CALLERS 1024 /* a power of two: open-addressed by return address */
#define FI_CALLER_OBJS 32
#define FI_CALLER_PATH 400

/* An object's path as a site names it: quotes, backslashes and control bytes dropped, so it
 * reads the same in a site= of a plan as in the evidence. */
static void path_clean(char *dst, size_t len, const char *src)
{
    size_t o = 0;
    for (; *src && o + 1 < len; src++)
        if ((unsigned char)*src >= 0x20 && *src != '"' && *src != '\\')
            dst[o++] = *src;
    dst[o] = '\0';
}

static const char *const call_names[FI_CALL_KINDS] = {
    [FI_CALL_POLL] = "poll",           [FI_CALL_POST_SEND] = "post_send",
    [FI_CALL_POST_RECV] = "post_recv", [FI_CALL_REG_MR] = "reg_mr",
    [FI_CALL_CREATE_QP] = "create_qp", [FI_CALL_CREATE_CQ] = "create_cq",
    [FI_CALL_ALLOC_PD] = "alloc_pd",
};

const char *fi_call_name(enum fi_call v)
{
    return (unsigned)v < FI_CALL_KINDS ? call_names[v] : "?";
}

/* One call path: its frames' return addresses, ip[0] the verbs call's. */
struct fi_path {
    int n;    /* frames found, 1..FI_SITE_DEPTH */
    int want; /* the frames asked for: a plan of another depth makes other entries */
    uintptr_t ip[FI_SITE_DEPTH];
};

struct fi_caller {
    _Atomic uint32_t key; /* 0: empty; a hash of the path, claimed by compare-and-swap */
    _Atomic int ready;    /* path, obj, off and verb are written */
    struct fi_path path;
    int obj[FI_SITE_DEPTH]; /* g_cobj's index per frame, -1: in no loaded object */
    uint64_t off[FI_SITE_DEPTH];
    enum fi_call verb;
    _Atomic uint64_t calls, ev[FI_OP_ATOMIC + 1];
};

static struct fi_caller g_callers[FI_CALLERS];
static _Atomic uint64_t g_callers_lost; /* calls from sites past the table */
static char g_cobj[FI_CALLER_OBJS][FI_CALLER_PATH];
static _Atomic int g_ncobj;
static pthread_mutex_t g_cobj_lock = PTHREAD_MUTEX_INITIALIZER;

/* The calling thread's verbs call: its return address, and its table entry when kept. */
static __thread uintptr_t t_ra;
static __thread struct fi_caller *t_call;

struct find {
    uintptr_t ra;
    char path[FI_CALLER_PATH];
    uint64_t off;
    bool found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find *f = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || f->ra < lo || f->ra - lo >= ph->p_memsz)
            continue;
        f->off = f->ra - info->dlpi_addr;
        f->found = true;
        /* The main program has no name here: its path is /proc/self/exe's. */
        if (info->dlpi_name && info->dlpi_name[0]) {
            path_clean(f->path, sizeof(f->path), info->dlpi_name);
        } else {
            char p[FI_CALLER_PATH];
            ssize_t n = readlink("/proc/self/exe", p, sizeof(p) - 1);
            p[n > 0 ? n : 0] = '\0';
            path_clean(f->path, sizeof(f->path), n > 0 ? p : "?");
        }
        return 1;
    }
    return 0;
}

/* The object holding address ra and ra's offset in it: false when none holds it. */
static bool locate(uintptr_t ra, struct find *f)
{
    memset(f, 0, sizeof(*f));
    f->ra = ra;
    dl_iterate_phdr(find_object, f);
    return f->found;
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int obj_index(const char *path)
{
    int n = atomic_load(&g_ncobj);
    for (int i = 0; i < n; i++)
        if (!strcmp(g_cobj[i], path))
            return i;
    pthread_mutex_lock(&g_cobj_lock);
    n = atomic_load(&g_ncobj);
    int k = -1;
    for (int i = 0; i < n && k < 0; i++)
        if (!strcmp(g_cobj[i], path))
            k = i;
    if (k < 0 && n < FI_CALLER_OBJS) {
        snprintf(g_cobj[n], sizeof(g_cobj[n]), "%s", path);
        atomic_store(&g_ncobj, n + 1);
        k = n;
    }
    pthread_mutex_unlock(&g_cobj_lock);
    return k;
}

/* How long a call waits for another thread to finish resolving the same site, by the clock
 * (a resolver preempted on a busy machine outlasts any count of yields): resolution is a few
 * dl_iterate_phdr, but a fork in its middle leaves the child's entry never ready. */
#define FI_CALLER_WAIT_NS 1000000000ull

/* Frames the unwinder passes, inside the shim, before the program's: a few wrappers deep. */
#define FI_WALK_SKIP 32

struct walk {
    struct fi_path *p;
    int skipped;
};

/* Each frame of the stack, innermost first: the shim's until the one whose return address is
 * the verbs call's, then the program's callers. */
static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *uc, void *arg)
{
    struct walk *w = arg;
    uintptr_t ip = (uintptr_t)_Unwind_GetIP(uc);
    if (w->p->n == 1 && w->skipped >= 0) {
        if (ip != w->p->ip[0])
            return ++w->skipped < FI_WALK_SKIP ? _URC_NO_REASON : _URC_END_OF_STACK;
        w->skipped = -1; /* the program's frame: the next ones are its callers */
        return _URC_NO_REASON;
    }
    if (ip == 0)
        return _URC_END_OF_STACK;
    w->p->ip[w->p->n++] = ip;
    return w->p->n < w->p->want ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/* The path of the call whose return address is ra, want frames at most: ra alone when the
 * unwinder cannot get past the shim or the program has no unwind tables (then the callers are
 * unknown, not made up). */
static void path_of(uintptr_t ra, int want, struct fi_path *p)
{
    memset(p, 0, sizeof(*p));
    p->ip[0] = ra;
    p->n = 1;
    p->want = want < 1 ? 1 : want > FI_SITE_DEPTH ? FI_SITE_DEPTH : want;
    if (p->want > 1) {
        struct walk w = {.p = p};
        _Unwind_Backtrace(walk_frame, &w);
    }
}

static uint32_t path_hash(const struct fi_path *p)
{
    uint32_t h = fi_hash((uint64_t)p->want, (uint64_t)p->n);
    for (int i = 0; i < p->n; i++)
        h = fi_hash(p->ip[i], h);
    return h ? h : 1; /* 0 marks an empty entry */
}

static bool same_path(const struct fi_path *a, const struct fi_path *b)
{
    return a->n == b->n && a->want == b->want &&
           !memcmp(a->ip, b->ip, (size_t)a->n * sizeof(a->ip[0]));
}

/* The entry of path p, made (and resolved) at its first call; NULL when the table is full or
 * the entry never became ready (both counted as lost). */
static struct fi_caller *caller_of(const struct fi_path *p, enum fi_call v)
{
    uint32_t h = path_hash(p);
    for (uint32_t i = 0; i < FI_CALLERS; i++) {
        struct fi_caller *c = &g_callers[(h + i) & (FI_CALLERS - 1)];
        uint32_t cur = atomic_load_explicit(&c->key, memory_order_acquire);
        if (cur == 0) {
            uint32_t want = 0;
            if (!atomic_compare_exchange_strong(&c->key, &want, h)) {
                if (want != h)
                    continue;
                cur = h;
            } else {
                c->verb = v;
                c->path = *p;
                for (int k = 0; k < p->n; k++) {
                    struct find f;
                    c->obj[k] = locate(p->ip[k], &f) ? obj_index(f.path) : -1;
                    c->off[k] = f.found ? f.off : (uint64_t)p->ip[k];
                }
                atomic_store_explicit(&c->ready, 1, memory_order_release);
                return c;
            }
        }
        if (cur != h)
            continue;
        /* Another thread may be resolving it: wait, a bounded while, so this call is counted
         * and matched like every other. Two paths of one hash are told apart by their frames. */
        uint64_t until = fi_now_ns() + FI_CALLER_WAIT_NS;
        while (!atomic_load_explicit(&c->ready, memory_order_acquire) && fi_now_ns() < until)
            sched_yield();
        if (!atomic_load_explicit(&c->ready, memory_order_acquire))
            break; /* never resolved: whether it is this path is not known */
        if (same_path(&c->path, p))
            return c;
    }
    atomic_fetch_add_explicit(&g_callers_lost, 1, memory_order_relaxed);
    return NULL;
}

void fi_call_enter(void *ra, enum fi_call v)
{
    t_ra = (uintptr_t)ra;
    t_call = NULL;
    struct fi_live *lp = fi_live();
    if (!lp || (!lp->sites && !lp->m_site))
        return;
    struct fi_path p;
    path_of((uintptr_t)ra, lp->site_depth, &p);
    t_call = caller_of(&p, v);
    if (t_call && lp->sites)
        atomic_fetch_add_explicit(&t_call->calls, 1, memory_order_relaxed);
}

/* Clears, not restores: no wrapped call runs inside another (the shim calls the provider's
 * functions, never its own wrappers), so there is no outer site to give back. */
void fi_call_leave(void)
{
    t_ra = 0;
    t_call = NULL;
}

/* t_call is set only while a sites rule or a site= filter is live: no plan lookup here. */
void fi_call_count(enum fi_op op)
{
    if (t_call && (unsigned)op <= FI_OP_ATOMIC)
        atomic_fetch_add_explicit(&t_call->ev[op], 1, memory_order_relaxed);
}

/* Frames [0, n) of an entry as a site= names them: "FILE+0xOFF<FILE+0xOFF...", object file
 * names, or as the events name them (paths, when full). -1 when a frame is in no object. */
static int entry_text(const struct fi_caller *c, int from, int n, bool full, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = from; k < n; k++) {
        if (c->obj[k] < 0)
            return -1;
        const char *obj = full ? g_cobj[c->obj[k]] : base_of(g_cobj[c->obj[k]]);
        int w = snprintf(buf + at, len - at, "%s%s+0x%llx", k > from ? "<" : "", obj,
                         (unsigned long long)c->off[k]);
        if (w < 0 || (size_t)w >= len - at)
            return -1;
        at += (size_t)w;
    }
    return 0;
}

/* Compared afresh each time (not cached in the entry): the table outlives a plan the program
 * replaces through the control table, and the new plan's rules are other rules. A site= of
 * fewer frames than the path names the path's first ones; of more, a path the unwinder could
 * not follow that far is not it. */
bool fi_call_matches(int rule)
{
    const struct fi_live *lp = fi_live();
    const struct fi_caller *c = t_call;
    if (!lp || !c || rule < 0 || rule >= lp->plan.nrules)
        return false;
    const struct fi_rule *r = &lp->plan.rules[rule];
    if (r->site_depth > c->path.n)
        return false;
    char name[FI_SITE_MAX];
    return entry_text(c, 0, r->site_depth, false, name, sizeof(name)) == 0 &&
           !strcmp(r->site, name);
}

int fi_call_site(char *caller, size_t clen, char *from, size_t flen)
{
    caller[0] = from[0] = '\0';
    if (!t_ra)
        return -1;
    /* A fault is rare: its path is found now, as deep as a path goes, whatever the plan's. */
    struct fi_path p;
    path_of(t_ra, FI_SITE_DEPTH, &p);
    /* Named from each frame's object straight away: the object table is for the sites
     * rule's entries, and a full one must not cost a fault its name. */
    size_t at = 0;
    for (int k = 0; k < p.n; k++) {
        struct find f;
        if (!locate(p.ip[k], &f))
            break; /* in no object: the path stops before it */
        char one[FI_CALLER_PATH + 24];
        size_t n =
            (size_t)snprintf(one, sizeof(one), "%s+0x%llx", f.path, (unsigned long long)f.off);
        if (k == 0) {
            if (n >= clen)
                return -1;
            memcpy(caller, one, n + 1);
        } else if (at + (k > 1) + n < flen) { /* whole frames only */
            at += (size_t)snprintf(from + at, flen - at, "%s%s", k > 1 ? "<" : "", one);
        } else {
            break;
        }
    }
    return caller[0] ? 0 : -1;
}

/* Also from the snapshot signal handler: reads the fixed table, takes no lock. Lists the
 * entries of the live plan's depth: a plan replaced by one of another depth made others. */
void fi_call_summary(const char *why)
{
    struct fi_live *lp = fi_live();
    if (!lp || !lp->sites)
        return;
    int n = 0;
    uint64_t lost = atomic_load(&g_callers_lost);
    for (int i = 0; i < FI_CALLERS; i++) {
        const struct fi_caller *c = &g_callers[i];
        if (!atomic_load(&c->key) || !atomic_load(&c->ready))
            continue;
        if (c->path.want != (lp->site_depth < 1 ? 1 : lp->site_depth))
            continue;
        /* Its call in no loaded object, or past the object table: no name a site= could give,
         * so its calls are lost, never listed under a name that matches nothing. A caller in
         * none ends the path there. */
        char where[FI_CALLER_PATH + 24], from[(FI_SITE_DEPTH - 1) * (FI_CALLER_PATH + 24)];
        if (entry_text(c, 0, 1, true, where, sizeof(where)) != 0) {
            lost += atomic_load(&c->calls);
            continue;
        }
        int k = 1;
        while (k < c->path.n && c->obj[k] >= 0)
            k++;
        if (entry_text(c, 1, k, true, from, sizeof(from)) != 0)
            from[0] = '\0';
        n++;
        FI_EV(caller, .why = why, .verb = fi_call_name(c->verb), .caller = where, .from = from,
              .calls = atomic_load(&c->calls),
              .ops = {{atomic_load(&c->ev[FI_OP_SEND]), atomic_load(&c->ev[FI_OP_RECV]),
                       atomic_load(&c->ev[FI_OP_WRITE]), atomic_load(&c->ev[FI_OP_READ]),
                       atomic_load(&c->ev[FI_OP_ATOMIC])}});
    }
    /* The list's end: a reader knows it has every site, or how many calls it could not place. */
    FI_EV(callers, .why = why, .sites = n, .lost = lost);
}
