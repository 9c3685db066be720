/* SPDX-License-Identifier: MIT */
/* The plan's life, the control table, the snapshot, load and exit (fi_shim.h). */
#include "fi_shim.h"
#include "rg_parse.h"
#include "rg_faultinject.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- plan management, control table, load and exit ---------------------------------------- */
/*
 * RG_FI_TIME_SCALE=F (1..100): every time in the plan -- a fault's duration and its after= and
 * before= window -- is F times what the plan says. A runner that re-runs a scenario with its
 * deadlines scaled, on a machine too slow for them, scales the faults with them, so a stall
 * that outlived the timeout still does and a delay meant to be ridden out still is.
 */
static uint64_t g_time_scale = 1;

static int fi_time_scale_from_env(char *err, size_t errlen)
{
    const char *v = getenv("RG_FI_TIME_SCALE");
    int64_t f = 1;
    if (v && rg_parse_int(v, 1, 100, &f) != 0) {
        char shown[72];
        snprintf(err, errlen, "RG_FI_TIME_SCALE='%s': not a factor in 1..100",
                 rg_parse_show(v, shown, sizeof(shown)));
        return -1;
    }
    g_time_scale = (uint64_t)f;
    return 0;
}

static uint64_t scaled(uint64_t ms)
{
    return ms > UINT64_MAX / g_time_scale ? UINT64_MAX : ms * g_time_scale;
}

static struct fi_live *fi_live_new(const char *text, const char *origin, char *err, size_t errlen)
{
    struct fi_live *lp = calloc(1, sizeof(*lp));
    if (!lp) {
        snprintf(err, errlen, "%s: no memory for the plan", origin);
        return NULL;
    }
    if (fi_plan_parse(text, origin, &lp->plan, err, errlen) != 0) {
        free(lp);
        return NULL;
    }
    for (int i = 0; i < lp->plan.nrules && g_time_scale > 1; i++) {
        struct fi_rule *r = &lp->plan.rules[i];
        r->ms = scaled(r->ms);
        r->after_ms = scaled(r->after_ms);
        if (r->before_ms != UINT64_MAX)
            r->before_ms = scaled(r->before_ms);
    }
    for (int i = 0; i < lp->plan.nrules; i++) {
        const struct fi_rule *r = &lp->plan.rules[i];
        uint32_t bit = 1u << i;
        /* The call paths' depth: the deepest a site= names or the sites rule asks for. */
        if (r->site[0])
            lp->m_site |= bit;
        if (r->site_depth > lp->site_depth)
            lp->site_depth = r->site_depth;
        if (r->kind == FI_SITES && r->depth > lp->site_depth)
            lp->site_depth = r->depth;
        switch (r->kind) {
        case FI_NEGPOLL:
        case FI_STALL:
            lp->m_poll |= bit;
            if (r->per_cqe)
                lp->m_pollcqe |= bit;
            break;
        case FI_ERROR:
        case FI_CORRUPT:
        case FI_KILL:
        case FI_STOP:
        case FI_EXIT:
            lp->m_cqe |= bit;
            break;
        case FI_LOSE:
        case FI_LATE:
            lp->m_send |= bit;
            break;
        case FI_DELAY:
            if (fi_ops_has(r->ops, FI_OP_RECV))
                lp->m_recv |= bit;
            if (r->ops != FI_OPS(FI_OP_RECV))
                lp->m_send |= bit;
            break;
        case FI_DELAY_FIRST:
            lp->m_first |= bit;
            break;
        case FI_NOMEM:
            if (r->verb == FI_VERB_POST_SEND)
                lp->m_send |= bit;
            else if (r->verb == FI_VERB_POST_RECV)
                lp->m_recv |= bit;
            else
                lp->m_verb |= bit;
            break;
        case FI_SWAP_RAILS:
            lp->m_swap |= bit;
            break;
        case FI_OWNERSHIP:
            lp->own = true;
            break;
        case FI_TRACE:
            lp->trace = true;
            break;
        case FI_SITES:
            lp->sites = true;
            break;
        case FI_UC_AS_RC:
            lp->uc_as_rc = true;
            break;
        case FI_COUNT:
        case FI_KIND_MAX:
            break;
        case FI_WIRE: /* the runner's: no verbs call matches them */
        case FI_LINK_DOWN:
        case FI_PARTITION:
            break;
        }
    }
    return lp;
}

/*
 * The summary: per QP, CQ and rule while a plan is live (without one the pass-through counted
 * nothing per object), then always the totals, last, so a reader that sees "totals" has the
 * whole summary. `why`: "exit", "snapshot" (the signal handler) or "control" (summary()).
 *
 * Also run from the snapshot signal handler, so it takes no lock and allocates nothing: it reads
 * atomics and the fixed tables, and fi_event formats on the stack. snprintf is not on POSIX's
 * async-signal-safe list; glibc's does not allocate or lock for these conversions, which is the
 * caveat this relies on.
 */
static void fi_summary_why(const char *why)
{
    struct fi_live *lp = fi_live();
    for (int i = 0; lp && i < FI_MAX_QPS; i++)
        if (atomic_load(&g_qp[i].state) == SLOT_LIVE)
            fi_qp_summary(&g_qp[i], why);
    for (int i = 0; lp && i < FI_MAX_CQS; i++)
        if (atomic_load(&g_cq[i].state) == SLOT_LIVE)
            fi_cq_summary(&g_cq[i], why);
    for (int i = 0; lp && i < lp->plan.nrules; i++)
        FI_EV(rule, .why = why, .rule = i, .line = lp->plan.rules[i].line,
              .fault = fi_kind_name(lp->plan.rules[i].kind),
              .matched = atomic_load(&lp->matched[i]), .fired = atomic_load(&lp->fired[i]));
    fi_call_summary(why);
    int64_t qps = 0, cqs = 0;
    for (int i = 0; i < FI_MAX_QPS; i++)
        qps += atomic_load(&g_qp[i].state) == SLOT_LIVE;
    for (int i = 0; i < FI_MAX_CQS; i++)
        cqs += atomic_load(&g_cq[i].state) == SLOT_LIVE;
    FI_EV(alive, .why = why, .contexts = atomic_load(&g_alive.contexts),
          .pds = atomic_load(&g_alive.pds), .mrs = atomic_load(&g_alive.mrs), .cqs = cqs,
          .qps = qps, .channels = atomic_load(&g_alive.channels));
    if (lp && lp->own) {
        struct fi_own_tally t;
        fi_own_counts(&t);
        FI_EV(owned, .why = why, .sends = t.sends, .recvs = t.recvs, .rewritten = t.rewritten,
              .answered = t.answered, .unsanitized = t.unsanitized, .repoisoned = t.repoisoned);
    }
    FI_EV(totals, .why = why, .contexts = atomic_load(&g_tot.contexts),
          .qps = atomic_load(&g_tot.qps), .cqs = atomic_load(&g_tot.cqs),
          .posts_send = atomic_load(&g_tot.posts_send),
          .posts_recv = atomic_load(&g_tot.posts_recv), .polls = atomic_load(&g_tot.polls),
          .cqe = atomic_load(&g_tot.cqe), .cqe_err = atomic_load(&g_tot.cqe_err));
}

static void fi_summary(void)
{
    fi_summary_why("control");
}

static void fi_on_snapshot(int sig)
{
    (void)sig;
    fi_summary_why("snapshot");
}

/* The load event: which shim, which libibverbs and which program, so a runner can check that
 * the rank ran under the shim it meant and that the shim wraps the library the rank uses. */
static void fi_event_load(void)
{
    char shim[PATH_MAX] = "", exe[PATH_MAX] = "";
    struct fi_live *lp = fi_live();
    if (g_self_path[0] && !realpath(g_self_path, shim))
        snprintf(shim, sizeof(shim), "%s", g_self_path);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    /* snapshot_signal: a runner sends it only to a rank that says it is handled, since to any
     * other process a real-time signal is fatal. */
    /* ppid: a runner draws a rank's process tree from its processes' load events. */
    FI_EV(load, .rules = lp ? lp->plan.nrules : 0, .shim = shim, .verbs = g_verbs_path, .exe = exe,
          .snapshot_signal = g_snapshot_sig, .ppid = getppid(), .time_scale = g_time_scale);
}

static void fi_fatal(const char *msg)
{
    fprintf(stderr, "railguard-fi: %s\n", msg);
    _exit(2);
}

/* RG_FI_SNAPSHOT_SIGNAL=N: signal N writes the summary, so a rank killed at a deadline leaves its
 * evidence first. Ours replaces any handler the program had for N. */
static void fi_snapshot_install(void)
{
    const char *v = getenv("RG_FI_SNAPSHOT_SIGNAL");
    char msg[160], *end = NULL;
    if (!v)
        return;
    errno = 0;
    long sig = strtol(v, &end, 10);
    if (!*v || *end || errno || sig < 1 || sig > 64) {
        snprintf(msg, sizeof(msg), "RG_FI_SNAPSHOT_SIGNAL: bad signal number '%.64s' (1..64)", v);
        fi_fatal(msg);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fi_on_snapshot;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction((int)sig, &sa, NULL) != 0) {
        snprintf(msg, sizeof(msg), "RG_FI_SNAPSHOT_SIGNAL: cannot catch signal %ld: %s", sig,
                 strerror(errno));
        fi_fatal(msg);
    }
    g_snapshot_sig = (int)sig;
}

static int ctl_set_plan(const char *text, char *err, size_t errlen)
{
    struct fi_live *lp = NULL;
    if (text && *text) {
        lp = fi_live_new(text, "set_plan", err, errlen);
        if (!lp)
            return -1;
    }
    /* The old plan is never freed: a datapath call may still be reading it. */
    struct fi_live *old = atomic_exchange_explicit(&g_live, lp, memory_order_acq_rel);
    if (old && !lp) {
        /* Without a plan posts and completions pass unrecorded: every ring loses track. */
        for (int i = 0; i < FI_MAX_QPS; i++) {
            struct fi_qp *q = &g_qp[i];
            if (atomic_load(&q->state) != SLOT_LIVE)
                continue;
            pthread_mutex_lock(&q->rlock);
            q->sring.exact = q->rring.exact = false;
            pthread_mutex_unlock(&q->rlock);
        }
    }
    atomic_store(&g_first_done, 0);
    return 0;
}

static uint64_t ctl_matched(int rule)
{
    struct fi_live *lp = fi_live();
    return lp && rule >= 0 && rule < lp->plan.nrules ? atomic_load(&lp->matched[rule]) : 0;
}

static uint64_t ctl_fired(int rule)
{
    struct fi_live *lp = fi_live();
    return lp && rule >= 0 && rule < lp->plan.nrules ? atomic_load(&lp->fired[rule]) : 0;
}

/*
 * The program moves to step `step` (FI_PHASE_INIT for its init), repetition `rep`. The phase
 * that ends gets a "phase" event with what it did: successful completions and posts by op,
 * and polls, which is how a sweep plans points anchored to a step. Counting needs a live plan
 * (a `count` rule will do), as the totals do.
 */
static struct {
    uint64_t posts_op[FI_OP_ATOMIC + 1], cqe_op[FI_OP_ATOMIC + 1], polls;
} g_phase_base;

/* What each op did since base, base moved up to now. */
static rg_ev_ops fi_phase_counts(_Atomic uint64_t *now, uint64_t *base)
{
    rg_ev_ops o;
    for (int op = FI_OP_SEND; op <= FI_OP_ATOMIC; op++) {
        uint64_t v = atomic_load(&now[op]);
        o.op[op - FI_OP_SEND] = v - base[op];
        base[op] = v;
    }
    return o;
}

static void ctl_set_phase(int step, int rep)
{
    int prev = atomic_load(&g_step), prev_rep = atomic_load(&g_rep);
    if (prev != FI_PHASE_ANY && fi_live()) {
        uint64_t polls = atomic_load(&g_tot.polls);
        FI_EV(phase, .step = prev, .rep = prev_rep,
              .posts_op = fi_phase_counts(g_tot.posts_op, g_phase_base.posts_op),
              .cqe_op = fi_phase_counts(g_tot.cqe_op, g_phase_base.cqe_op),
              .polls = polls - g_phase_base.polls);
        g_phase_base.polls = polls;
    } else {
        for (int op = 0; op <= FI_OP_ATOMIC; op++) {
            g_phase_base.posts_op[op] = atomic_load(&g_tot.posts_op[op]);
            g_phase_base.cqe_op[op] = atomic_load(&g_tot.cqe_op[op]);
        }
        g_phase_base.polls = atomic_load(&g_tot.polls);
    }
    atomic_store(&g_phase_tid, (long)syscall(SYS_gettid));
    atomic_store(&g_rep, step < FI_PHASE_INIT ? FI_PHASE_ANY : rep);
    atomic_store(&g_step, step < FI_PHASE_INIT ? FI_PHASE_ANY : step);
}

/* A new rank's counts (a forked child, a fork server's restarted one): totals, phases, the
 * first-fault mark and the clock the events count from. */
static void fi_counts_reset(void)
{
    atomic_store(&g_first_done, 0);
    g_t0_ns = fi_now_ns();
    memset(&g_tot, 0, sizeof(g_tot));
    memset(&g_phase_base, 0, sizeof(g_phase_base));
    atomic_store(&g_step, FI_PHASE_ANY);
    atomic_store(&g_rep, FI_PHASE_ANY);
}

static void ctl_warm(void)
{
    int n = 0;
    struct ibv_device **l = fi_real.get_device_list(&n);
    if (l)
        fi_real.free_device_list(l);
}

static char *fi_read_file(const char *path, char *err, size_t errlen);

/* The plan from RG_FI_PLAN_FILE or RG_FI_PLAN: 0 with *out (NULL for none), or -1. */
static int fi_plan_from_env(struct fi_live **out, char *err, size_t errlen)
{
    const char *text = getenv("RG_FI_PLAN");
    const char *file = getenv("RG_FI_PLAN_FILE");
    *out = NULL;
    if (fi_time_scale_from_env(err, errlen) != 0)
        return -1;
    if (text && file) {
        snprintf(err, errlen, "RG_FI_PLAN and RG_FI_PLAN_FILE are both set: use one");
        return -1;
    }
    if (file) {
        char *buf = fi_read_file(file, err, errlen);
        if (!buf)
            return -1;
        *out = fi_live_new(buf, file, err, errlen);
        free(buf);
        return *out ? 0 : -1;
    }
    if (text) {
        *out = fi_live_new(text, "RG_FI_PLAN", err, errlen);
        return *out ? 0 : -1;
    }
    return 0;
}

/* A fork server's child: a new rank, as if the shim had just loaded into it. No device was
 * opened before the fork (the server only warms), so there are no objects to forget. */
static int ctl_restart(char *err, size_t errlen)
{
    struct fi_live *lp = NULL;
    fi_read_rank();
    atomic_store(&g_live, NULL); /* the old plan is never freed: see ctl_set_plan */
    fi_progress_open(true);
    if (fi_event_open(err, errlen) != 0)
        return -1;
    int rc = fi_plan_from_env(&lp, err, errlen);
    if (rc == 0 && lp && g_rank_err[0]) {
        snprintf(err, errlen, "%s", g_rank_err);
        rc = -1;
        lp = NULL;
    }
    atomic_store(&g_live, lp);
    fi_counts_reset();
    if (fi_live() || fi_event_logged())
        fi_event_load();
    return rc;
}

FI_EXPORT const struct rg_fi_control_v1 rg_fi_control_v1 = {
    .version = RG_FI_CONTROL_VERSION,
    .size = sizeof(struct rg_fi_control_v1),
    .set_plan = ctl_set_plan,
    .matched = ctl_matched,
    .fired = ctl_fired,
    .summary = fi_summary,
    .set_phase = ctl_set_phase,
    .warm = ctl_warm,
    .restart = ctl_restart,
};

/*
 * A forked child is a process of its own, with its own counters, objects and evidence: the
 * verbs objects it inherited are its parent's (their memory is not even shared under
 * ibv_fork_init), so they are neither counted alive here nor summarised, and what the child
 * makes and never frees is its own leak. A child that frees an inherited object drives a count
 * below zero, which is read as "not known", never as a leak.
 */
static void fi_forget_inherited(void)
{
    atomic_store(&g_alive.contexts, 0);
    atomic_store(&g_alive.pds, 0);
    atomic_store(&g_alive.mrs, 0);
    atomic_store(&g_alive.channels, 0);
    for (int i = 0; i < FI_MAX_QPS; i++)
        if (atomic_load(&g_qp[i].state) == SLOT_LIVE)
            atomic_store(&g_qp[i].state, SLOT_DEAD);
    for (int i = 0; i < FI_MAX_CQS; i++)
        if (atomic_load(&g_cq[i].state) == SLOT_LIVE)
            atomic_store(&g_cq[i].state, SLOT_DEAD);
}

static void fi_atfork_child(void)
{
    fi_late_atfork();
    fi_progress_open(false);
    fi_forget_inherited();
    char err[256];
    struct fi_live *lp = fi_live();
    fi_read_rank();
    if (fi_event_open(err, sizeof(err)) != 0)
        fprintf(stderr, "railguard-fi: %s\n", err);
    if (lp) {
        for (int i = 0; i < FI_MAX_RULES; i++) {
            atomic_store(&lp->matched[i], 0);
            atomic_store(&lp->fired[i], 0);
        }
    }
    fi_counts_reset();
    if (lp || fi_event_logged())
        fi_event_load();
}

static char *fi_read_file(const char *path, char *err, size_t errlen)
{
    /* Non-blocking and regular files only: a FIFO must not hang the program at load. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0) {
        snprintf(err, errlen, "RG_FI_PLAN_FILE: cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "RG_FI_PLAN_FILE: '%s': not a regular file", path);
        close(fd);
        return NULL;
    }
    char *buf = malloc(FI_PLAN_FILE_MAX + 1);
    size_t n = 0;
    bool bad = false;
    while (buf && n <= FI_PLAN_FILE_MAX) {
        ssize_t r = read(fd, buf + n, FI_PLAN_FILE_MAX + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            bad = r < 0;
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    if (!buf || bad || n > FI_PLAN_FILE_MAX || memchr(buf, '\0', n)) {
        snprintf(err, errlen, "RG_FI_PLAN_FILE: '%s': %s", path,
                 !buf                   ? "no memory"
                 : bad                  ? "read error"
                 : n > FI_PLAN_FILE_MAX ? "larger than 64 KiB"
                                        : "holds a NUL byte (the plan would be cut there)");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* How the process ended, when it called exit (or returned from main). A process started by a
 * launcher (mpirun's ranks) is not the runner's child: this line is the only way its exit
 * status reaches the runner. Registered from the constructor, before libc registers the
 * loader's destructors, so it runs after them: the line comes after the exit summary, and
 * writes with nothing but write(). A forked child inherits the handler. */
static void fi_on_exit(int status, void *arg)
{
    (void)arg;
    if (fi_live() || fi_event_logged())
        FI_EV(exit, .status = status);
}

__attribute__((constructor)) static void fi_load(void)
{
    char err[512];
    Dl_info self;

    g_t0_ns = fi_now_ns();
    fi_read_rank();
#define RESOLVE(field, name)                                                                       \
    do {                                                                                           \
        *(void **)(&fi_real.field) = dlsym(RTLD_NEXT, name);                                       \
        if (!fi_real.field)                                                                        \
            fi_fatal("cannot find the real " name " (is libibverbs installed?)");                  \
    } while (0)
    RESOLVE(get_device_list, "ibv_get_device_list");
    RESOLVE(free_device_list, "ibv_free_device_list");
    RESOLVE(open_device, "ibv_open_device");
    RESOLVE(close_device, "ibv_close_device");
    RESOLVE(alloc_pd, "ibv_alloc_pd");
    RESOLVE(reg_mr, "ibv_reg_mr");
    RESOLVE(reg_mr_iova, "ibv_reg_mr_iova");
    RESOLVE(reg_mr_iova2, "ibv_reg_mr_iova2");
    RESOLVE(reg_dmabuf_mr, "ibv_reg_dmabuf_mr");
    RESOLVE(create_cq, "ibv_create_cq");
    RESOLVE(destroy_cq, "ibv_destroy_cq");
    RESOLVE(create_qp, "ibv_create_qp");
    RESOLVE(destroy_qp, "ibv_destroy_qp");
    RESOLVE(create_srq, "ibv_create_srq");
    RESOLVE(destroy_srq, "ibv_destroy_srq");
    RESOLVE(modify_qp, "ibv_modify_qp");
    RESOLVE(query_gid, "ibv_query_gid");
    RESOLVE(dealloc_pd, "ibv_dealloc_pd");
    RESOLVE(dereg_mr, "ibv_dereg_mr");
    RESOLVE(create_comp_channel, "ibv_create_comp_channel");
    RESOLVE(destroy_comp_channel, "ibv_destroy_comp_channel");
    RESOLVE(get_cq_event, "ibv_get_cq_event");
    RESOLVE(ack_cq_events, "ibv_ack_cq_events");
    RESOLVE(query_device, "ibv_query_device");
#undef RESOLVE
    if (dladdr((void *)&fi_load, &self) && self.dli_fname)
        snprintf(g_self_path, sizeof(g_self_path), "%s", self.dli_fname);
    Dl_info verbs;
    char vpath[PATH_MAX];
    if (dladdr(*(void **)&fi_real.open_device, &verbs) && verbs.dli_fname &&
        realpath(verbs.dli_fname, vpath))
        snprintf(g_verbs_path, sizeof(g_verbs_path), "%s", vpath);
    if (fi_dl_init(g_self_path, g_verbs_path) != 0)
        fi_fatal("cannot find the real dlopen and dlmopen");

    fi_progress_open(true);
    if (fi_event_open(err, sizeof(err)) != 0)
        fi_fatal(err);
    struct fi_live *lp = NULL;
    if (fi_plan_from_env(&lp, err, sizeof(err)) != 0)
        fi_fatal(err);
    atomic_store(&g_live, lp);
    if (fi_live() && g_rank_err[0])
        fi_fatal(g_rank_err);
    fi_snapshot_install();
    pthread_atfork(NULL, NULL, fi_atfork_child);
    on_exit(fi_on_exit, NULL);
    /* A pass-through with no log file stays silent: a program run under the shim by hand
     * (perftest, a pingpong) keeps its standard error as it was. Under a plan, or with
     * RG_FI_LOG, the evidence is always written. */
    if (fi_live() || fi_event_logged())
        fi_event_load();
}

__attribute__((destructor)) static void fi_unload(void)
{
    if (fi_live() || fi_event_logged())
        fi_summary_why("exit");
}
