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
 * Each wrapped call sets the calling thread's site on entry and clears it on the way out; what
 * costs anything (the table, the object lookup) runs only while the plan asks for it: a `sites`
 * rule records every site with its calls and events, a `site=` filter needs the site of each
 * call to compare. A fault event names its site in any case, found then from the address.
 */
#include "fi_shim.h"

#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FI_CALLERS 1024 /* a power of two: open-addressed by return address */
#define FI_CALLER_OBJS 32
#define FI_CALLER_PATH 400

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

struct fi_caller {
    _Atomic uintptr_t ra; /* 0: empty; claimed by compare-and-swap */
    _Atomic int ready;    /* obj, off and verb are written */
    int obj;              /* g_cobj's index, -1: in no loaded object */
    uint64_t off;
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
            fi_json_clean(f->path, sizeof(f->path), info->dlpi_name);
        } else {
            char p[FI_CALLER_PATH];
            ssize_t n = readlink("/proc/self/exe", p, sizeof(p) - 1);
            p[n > 0 ? n : 0] = '\0';
            fi_json_clean(f->path, sizeof(f->path), n > 0 ? p : "?");
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

/* How long a call waits for another thread to finish resolving the same site: resolution is
 * one dl_iterate_phdr, but a fork in its middle leaves the child's entry never ready. */
#define FI_CALLER_WAIT 10000

/* The entry of return address ra, made (and resolved) at its first call; NULL when the table
 * is full or the entry never became ready (both counted as lost). */
static struct fi_caller *caller_of(uintptr_t ra, enum fi_call v)
{
    uint32_t h = fi_hash(ra, 0);
    for (uint32_t i = 0; i < FI_CALLERS; i++) {
        struct fi_caller *c = &g_callers[(h + i) & (FI_CALLERS - 1)];
        uintptr_t cur = atomic_load_explicit(&c->ra, memory_order_acquire);
        if (cur == 0) {
            uintptr_t want = 0;
            if (!atomic_compare_exchange_strong(&c->ra, &want, ra)) {
                if (want != ra)
                    continue;
                cur = ra;
            } else {
                struct find f;
                c->verb = v;
                c->obj = locate(ra, &f) ? obj_index(f.path) : -1;
                c->off = f.found ? f.off : (uint64_t)ra;
                atomic_store_explicit(&c->ready, 1, memory_order_release);
                return c;
            }
        }
        if (cur == ra) {
            /* Another thread is resolving it: wait, a bounded while, so this call is counted
             * and matched like every other. */
            for (int w = 0; w < FI_CALLER_WAIT; w++) {
                if (atomic_load_explicit(&c->ready, memory_order_acquire))
                    return c;
                sched_yield();
            }
            break;
        }
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
    t_call = caller_of((uintptr_t)ra, v);
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

/* Compared afresh each time (not cached in the entry): the table outlives a plan the program
 * replaces through the control table, and the new plan's rules are other rules. */
bool fi_call_matches(int rule)
{
    const struct fi_live *lp = fi_live();
    const struct fi_caller *c = t_call;
    if (!lp || !c || c->obj < 0 || rule < 0 || rule >= lp->plan.nrules)
        return false;
    const struct fi_rule *r = &lp->plan.rules[rule];
    return r->site_off == c->off && !strcmp(r->site_obj, base_of(g_cobj[c->obj]));
}

int fi_call_site(char *buf, size_t len)
{
    buf[0] = '\0';
    if (!t_ra)
        return -1;
    if (t_call && t_call->obj >= 0)
        return snprintf(buf, len, "%s+0x%llx", g_cobj[t_call->obj],
                        (unsigned long long)t_call->off) < (int)len
                   ? 0
                   : -1;
    struct find f;
    if (!locate(t_ra, &f))
        return -1;
    return snprintf(buf, len, "%s+0x%llx", f.path, (unsigned long long)f.off) < (int)len ? 0 : -1;
}

/* Also from the snapshot signal handler: reads the fixed table, takes no lock. */
void fi_call_summary(const char *why)
{
    struct fi_live *lp = fi_live();
    if (!lp || !lp->sites)
        return;
    int n = 0;
    uint64_t lost = atomic_load(&g_callers_lost);
    for (int i = 0; i < FI_CALLERS; i++) {
        const struct fi_caller *c = &g_callers[i];
        if (!atomic_load(&c->ra) || !atomic_load(&c->ready))
            continue;
        /* In no loaded object, or past the object table: no name a site= could give, so its
         * calls are lost, never listed under a name that matches nothing. */
        if (c->obj < 0) {
            lost += atomic_load(&c->calls);
            continue;
        }
        n++;
        char where[FI_CALLER_PATH + 24];
        snprintf(where, sizeof(where), "%s+0x%llx", g_cobj[c->obj], (unsigned long long)c->off);
        fi_event("caller",
                 "\"why\":\"%s\",\"verb\":\"%s\",\"caller\":\"%s\",\"calls\":%llu,"
                 "\"ops\":{\"send\":%llu,\"recv\":%llu,\"write\":%llu,\"read\":%llu,"
                 "\"atomic\":%llu}",
                 why, fi_call_name(c->verb), where, (unsigned long long)atomic_load(&c->calls),
                 (unsigned long long)atomic_load(&c->ev[FI_OP_SEND]),
                 (unsigned long long)atomic_load(&c->ev[FI_OP_RECV]),
                 (unsigned long long)atomic_load(&c->ev[FI_OP_WRITE]),
                 (unsigned long long)atomic_load(&c->ev[FI_OP_READ]),
                 (unsigned long long)atomic_load(&c->ev[FI_OP_ATOMIC]));
    }
    /* The list's end: a reader knows it has every site, or how many calls it could not place. */
    fi_event("callers", "\"why\":\"%s\",\"sites\":%d,\"lost\":%llu", why, n,
             (unsigned long long)lost);
}
