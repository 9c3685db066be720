/* SPDX-License-Identifier: MIT */
/*
 * A hang judged when it is one, not when the deadline comes (docs/scenarios.md, "A hang
 * judged when it is one"). While a run's workers run, the runner looks every 200 ms at what
 * moves: each rank's progress page (the shim's counts of posts, completions and polls, and
 * whether it holds a thread or a send for a fault: rg_faultinject.h), its status lines, its
 * process's CPU time, the packets its devices counted, and the wire faults still to come. A
 * rank has moved when it posted, took a completion, began a step, the shim held it, or it
 * used the CPU without polling (work of its own that the shim cannot see). The run is judged
 * a hang once every rank still running is inside a call of the transport's and none has moved
 * for longer than every wait of the transport was told to last (its timeout, already scaled on
 * a second attempt)
 * and the margin a call's timeout gets (rg_evidence_rules.c, timeout_on_time): it has
 * then missed the deadline it was given. Anything not known -- a page not read, a process
 * that found no slot, a rank before its first step or past its verdict -- leaves the hang to
 * the deadline, as before. Nothing here is a verdict: the run ends as at the deadline (the
 * shim's summaries, backtraces), and judge/ writes DEADLOCK with when and why.
 */
#include "launch/rg_launch.h"
#include "rg_faultinject.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The page lives in shared memory (/dev/shm, else $TMPDIR or /tmp), not in the run's directory:
 * on a network or 9p file system (the soft-RoCE guest's shared tree) a page the shim writes
 * through its mapping is not what another process's read sees until it is written back.
 */
int rg_progress_make(int r, char *path, size_t len)
{
    static _Atomic unsigned seq;
    const char *tmp = getenv("TMPDIR");
    const char *where = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp && *tmp ? tmp : "/tmp";
    if ((size_t)snprintf(path, len, "%s/railguard-progress.%ld.%u.%d", where, (long)getpid(),
                         atomic_fetch_add(&seq, 1), r) >= len)
        return -1;
    struct rg_fi_progress_v1 *p = calloc(1, sizeof(*p));
    if (!p)
        return -1;
    p->magic = RG_FI_PROGRESS_MAGIC;
    p->version = RG_FI_PROGRESS_VERSION;
    p->size = sizeof(*p);
    p->nslots = RG_FI_PROGRESS_SLOTS;
    unlink(path); /* a rerun's processes must not count into an old run's page */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ssize_t n = fd >= 0 ? write(fd, p, sizeof(*p)) : -1;
    free(p);
    if (fd >= 0 && close(fd) != 0)
        n = -1;
    return n == (ssize_t)sizeof(struct rg_fi_progress_v1) ? 0 : -1;
}

int rg_progress_read(const char *path, long pid, rg_progress_counts *c)
{
    struct rg_fi_progress_v1 p;
    memset(c, 0, sizeof(*c));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, &p, sizeof(p), 0);
    close(fd);
    if (n != (ssize_t)sizeof(p) || p.magic != RG_FI_PROGRESS_MAGIC ||
        p.version != RG_FI_PROGRESS_VERSION || p.size != sizeof(p) ||
        p.nslots != RG_FI_PROGRESS_SLOTS)
        return -1;
    c->full = p.full;
    for (int i = 0; i < RG_FI_PROGRESS_SLOTS; i++) {
        const struct rg_fi_progress_slot *s = &p.slot[i];
        if (!s->pid)
            continue;
        c->procs++;
        c->has_pid |= s->pid == pid;
        c->moves += s->posts + s->cqes + s->calls;
        c->polls += s->polls;
        c->holding |= s->holds > 0 || s->late > 0;
    }
    return 0;
}

/* One counter file's value, or -1. */
static long long read_count(const char *path)
{
    char buf[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    return errno || end == buf || v < 0 ? -1 : v;
}

int rg_progress_packets(const char (*devices)[64], int ndev, uint64_t *pkts)
{
    static const char *const names[][2] = {
        {"hw_counters/sent_pkts", "hw_counters/rcvd_pkts"},
        {"counters/port_xmit_packets", "counters/port_rcv_packets"}};
    *pkts = 0;
    if (ndev <= 0)
        return -1;
    for (int d = 0; d < ndev; d++) {
        bool found = false;
        for (int port = 1; port <= 2 && !found; port++)
            for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && !found; k++) {
                char a[256], b[256];
                snprintf(a, sizeof(a), "/sys/class/infiniband/%.64s/ports/%d/%s", devices[d], port,
                         names[k][0]);
                snprintf(b, sizeof(b), "/sys/class/infiniband/%.64s/ports/%d/%s", devices[d], port,
                         names[k][1]);
                long long x = read_count(a), y = read_count(b);
                if (x >= 0 && y >= 0) {
                    *pkts += (uint64_t)x + (uint64_t)y;
                    found = true;
                }
            }
        if (!found)
            return -1;
    }
    return 0;
}

double rg_hang_window(double timeout_s, double lag_s, double cpu_wait_s)
{
    if (timeout_s <= 0)
        return -1;
    double t = timeout_s;
    /* The margin a call that returns its timeout gets before it is SLOW_DETECTION. */
    return t + 1.0 + t / 10 + (lag_s > 0 ? lag_s : 0) + (cpu_wait_s > 0 ? cpu_wait_s : 0);
}

void rg_hang_look(rg_hang *h, int r, const rg_hang_seen *s, double now)
{
    rg_hang_rank *k = &h->rank[r];
    bool moved =
        !k->seen || !s->known || s->holding || s->moves != k->moves || s->step_mark != k->step_mark;
    /* CPU time spent without a poll is work the shim cannot see (a reduction, a spin on
     * memory or a socket): the rank is not waiting on verbs, so it is not quiet. */
    if (k->seen && s->cpu_s >= 0 && k->cpu_s >= 0 && s->polls == k->polls &&
        s->cpu_s - k->cpu_s > 0.5 * (now - k->at))
        moved = true;
    if (moved)
        k->quiet_since = now;
    k->seen = true;
    k->known = s->known;
    k->in_call = s->in_call;
    k->moves = s->moves;
    k->polls = s->polls;
    k->cpu_s = s->cpu_s;
    k->step_mark = s->step_mark;
    k->at = now;
}

void rg_hang_look_devices(rg_hang *h, int known, uint64_t pkts, bool wire_pending, double now)
{
    if (!h->dev_seen || wire_pending || (known == 0 && pkts != h->pkts))
        h->dev_quiet_since = now;
    h->dev_seen = true;
    h->dev_known = known == 0;
    h->pkts = pkts;
}

double rg_hang_since(const rg_hang *h, const bool *live, int lo, int hi)
{
    if (!h->dev_seen) /* never looked (not tracking), or not yet */
        return -1;
    double since = h->dev_quiet_since;
    for (int r = lo; r < hi; r++) {
        if (!live[r])
            continue;
        const rg_hang_rank *k = &h->rank[r];
        if (!k->seen || !k->known)
            return -1;
        if (k->quiet_since > since)
            since = k->quiet_since;
    }
    return since;
}

bool rg_hang_judge(rg_hang *h, const bool *live, int lo, int hi, double now)
{
    if (!h->on || h->window_s <= 0)
        return false;
    int nlive = 0;
    for (int r = lo; r < hi; r++) {
        if (live[r] && !h->rank[r].in_call)
            return false;
        nlive += live[r];
    }
    double since = rg_hang_since(h, live, lo, hi);
    if (!nlive || since < 0 || now - since <= h->window_s)
        return false;
    h->judged = true;
    h->at_s = now;
    h->quiet_s = now - since;
    return true;
}
