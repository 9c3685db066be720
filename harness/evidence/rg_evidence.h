/* SPDX-License-Identifier: MIT */
/*
 * rg_evidence.h - what the shim saw in one rank, read back from its rankR.events.jsonl: every
 * process of the rank apart, its calls, the faults it fired, what it left alive. Every line
 * the shim writes is read exactly; one that cannot be is counted and named, never skipped.
 */
#ifndef RG_EVIDENCE_H
#define RG_EVIDENCE_H

#include "base/rg_base.h"
#include "fi_plan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RG_EV_PHASES_MAX 256
#define RG_EV_PROCS 32
#define RG_EV_SITES 256
#define RG_EV_SITE_OBJS 16
#define RG_EV_OBJ_MAX 400

/* A verbs call site (the shim's fi_caller.c): an object and the call's return address's offset
 * from the object's load address, "OBJECT+0xOFF" in the events, and the callers the shim named
 * with it (its "from": "OBJ+0xOFF<OBJ+0xOFF", return addresses too): the call path. */
#define RG_EV_FROM (FI_SITE_DEPTH - 1)
typedef struct rg_ev_site {
    int obj; /* the evidence's objs[] */
    uint64_t off;
    int nfrom;                     /* callers named: 0..RG_EV_FROM */
    int from_obj[RG_EV_FROM];      /* each in objs[] */
    uint64_t from_off[RG_EV_FROM]; /* and its offset there */
    char verb[16]; /* poll, post_send, post_recv, reg_mr, create_qp, create_cq, alloc_pd; "" when
                      only a fault named it */
    uint64_t calls, ops[FI_OP_ATOMIC + 1]; /* the sites rule's largest summary of it */
    uint64_t fired;                        /* fault events that landed there */
} rg_ev_site;

/* "OBJECT+0xOFF" split: the object's path into obj, the offset into *off. -1 when it is not
 * that form. */
int rg_ev_site_parse(const char *s, char *obj, size_t objlen, uint64_t *off);
/* One frame of a call path. */
typedef struct rg_ev_frame {
    char obj[RG_EV_OBJ_MAX];
    uint64_t off;
} rg_ev_frame;
/* A call path's text, "OBJ+0xOFF<OBJ+0xOFF..." (a site, then its callers), split into f[0..max):
 * the number of frames, or -1 when it is not that form or has more than max. A frame ends at a
 * '<' after its hex offset, so an object's path may hold a '<'. */
int rg_ev_path_parse(const char *s, rg_ev_frame *f, int max);
/* Up to depth frames of site s of e (RG_EV_PATH_ALL: all it has) as a path's text: the objects'
 * paths, or with `base` their file names alone (a site='s key). A frame that would not fit in
 * len is left off with those after it; the number of frames written. */
#define RG_EV_PATH_ALL FI_SITE_DEPTH
struct rg_evidence;
int rg_ev_site_text(const struct rg_evidence *e, const rg_ev_site *s, int depth, bool base,
                    char *out, size_t len);
#define RG_EV_QPL 64
#define RG_EV_HELD 16 /* a process's CQs with a completion channel kept */
typedef struct rg_evidence {
    bool present;  /* the events file was there */
    bool loaded;   /* the shim said it loaded */
    bool totals;   /* it summarised (at exit, on a snapshot, or on request) */
    bool snapshot; /* that summary came from a snapshot (a rank killed at the deadline) */
    uint64_t contexts, qps, cqs, posts_send, posts_recv, polls, cqe, cqe_err;
    double first_fault_mono_ms; /* CLOCK_MONOTONIC of its first fired fault; -1 none */
    int first_fault_rule;
    uint64_t fired[FI_MAX_RULES];
    int64_t matched[FI_MAX_RULES]; /* -1: no summary of that rule */
    /* Fires that could not act (a corrupt with no receive buffer known), not counted in fired,
     * and the shim's reason for the first. */
    uint64_t unacted[FI_MAX_RULES];
    char unacted_why[FI_MAX_RULES][64];
    char queues[512];    /* QPs with work outstanding at the last summary, for a hang's detail */
    char verbs[256];     /* the libibverbs the shim wrapped, as it reported at load */
    int snapshot_signal; /* the signal its snapshot handler took, as it said at load; 0 none */
    /* Lines that are not events as the shim writes them (not JSON, a field of the wrong type,
     * a value out of range, cut short), and the first of them: "line N: why: 'the line'". Each
     * is a finding of the rank (rg_evidence_apply), never a silent skip. */
    int bad_lines;
    char unreadable[300];
    /* A wire fault the runner could not apply for this rank (wire/rg_wire.h): its why. */
    char wire_failed[300];
    /* What this rank's devices took in while each wire rule was on, by their own counters
     * (wire_off's "rx"): packets, duplicates discarded, requests out of sequence. -1: none
     * said. */
    int64_t rx_pkts[FI_MAX_RULES], rx_dup[FI_MAX_RULES], rx_oos[FI_MAX_RULES];
    /* The ownership sanitizer: its last "owned" summary, and its first finding in full (a UD
     * send rewritten after its destination answered is counted in own_answered, not judged). */
    bool owned;
    uint64_t own_sends, own_recvs, own_rewritten, own_answered, own_unsanitized;
    char own_first[200];
    /* UC QPs its shim created as RC (a uc_as_rc rule's notes). */
    uint64_t as_rc_qps;
    /*
     * A rank is a process tree: each process's evidence apart, by the pid on its lines, in the
     * order each first wrote (proc[0] the rank's own process). The rank's counts above are
     * their sums; leaks are judged per process. Past RG_EV_PROCS the rest share the last slot
     * (folded counts them).
     */
    int nprocs, folded;
    struct rg_ev_proc {
        long pid, ppid; /* ppid from its load event; 0 when it said none */
        bool loaded;    /* it wrote a load event */
        bool forked;    /* its parent is another process of this rank */
        bool totals;    /* it summarised */
        bool snapshot;  /* its last summary came from a snapshot */
        int snapshot_signal;
        double load_mono_ms; /* CLOCK_MONOTONIC of its load event; -1 when it said none */
        uint64_t time_scale; /* its plan's times were scaled by this (0: it said nothing) */
        char exe[96];        /* its executable's file name */
        uint64_t contexts, qps, cqs, posts_send, posts_recv, polls, cqe, cqe_err;
        /* Verbs objects still alive when it exited (its "alive" event at exit; none when it
         * was killed): contexts, pds, mrs, cqs, qps, channels. */
        bool alive_at_exit;
        int64_t alive[6];
        uint64_t fired_ev[FI_MAX_RULES]; /* fault events it wrote */
        uint64_t fired[FI_MAX_RULES];    /* its last rule summary's counts */
        int64_t matched[FI_MAX_RULES];   /* -1: it summarised no such rule */
        bool owned;
        uint64_t own_sends, own_recvs, own_rewritten, own_answered, own_unsanitized;
        /* It called exit(exit_status) at exit_mono_ms (CLOCK_MONOTONIC): its "exit" event. How
         * a process the runner did not start ended (a launcher's rank); none: a signal ended
         * it, or _exit(). */
        bool exit_seen;
        int exit_status;
        double exit_mono_ms;
        /* Its CQs with a completion channel, each as its last summary left it (cq events'
         * channel and held): completions the shim made for it that no poll had taken, of
         * which rxe raises no event. Past RG_EV_HELD CQs, held_over says so. */
        int nheld;
        bool held_over;
        struct rg_ev_held {
            int64_t cq_ord;
            uint64_t held;
        } held[RG_EV_HELD];
    } proc[RG_EV_PROCS];
    /* The events an op= filter counts (enum fi_op), summed over every QP's last summary (at its
     * destroy, or at exit): what a sweep plans its points from. */
    uint64_t op_posts[FI_OP_ATOMIC + 1], op_cqe[FI_OP_ATOMIC + 1];
    /* The same per QP, each QP's last summary (what railguard exec --count lists); past
     * RG_EV_QPL, qpl_over counts the QPs not kept. */
    int nqpl, qpl_over;
    struct rg_ev_qpl {
        long pid;
        char dev[16];
        uint64_t qpn;
        int64_t ord, type;
        bool srq;
        uint64_t posts[FI_OP_ATOMIC + 1], cqe[FI_OP_ATOMIC + 1];
    } qpl[RG_EV_QPL];
    /* Verbs call sites: every one the program called from (a sites rule: its "caller" events,
     * closed by "callers") and every one a fault landed in (the fault events' "caller"). Past
     * RG_EV_SITES or RG_EV_SITE_OBJS, sites_over counts what could not be kept. */
    bool sites;          /* a sites rule listed them all ("callers" read) */
    uint64_t sites_lost; /* calls the shim could not place: its table was full */
    int nobjs, nsites, sites_over;
    char objs[RG_EV_SITE_OBJS][RG_EV_OBJ_MAX];
    rg_ev_site site[RG_EV_SITES];
    int rule_site[FI_MAX_RULES]; /* site[] where each rule first fired in this rank; -1 none */
    /* The program's call each rule first fired in on this rank (step -1 init, the program's
     * length finalize): known when the shim said it, which it does for a fault that fired on
     * the thread that said the phase; seen: the rule fired here at all. */
    struct rg_ev_at {
        bool seen, known;
        int step, rep;
    } fired_at[FI_MAX_RULES];
    /* The same per phase of the program (the shim's "phase" events, when the program marks its
     * steps): what a sweep anchors its points to. Past RG_EV_PHASES_MAX, phases_lost counts. */
    int nphases, phases_lost;
    struct rg_ev_phase {
        int step, rep; /* step -1: init */
        uint64_t posts[FI_OP_ATOMIC + 1], cqe[FI_OP_ATOMIC + 1], polls;
    } phase[RG_EV_PHASES_MAX];
} rg_evidence;

/* Reads one rank's events. A missing file is not an error (present stays false). */
int rg_evidence_read(const char *path, rg_evidence *ev, char *err, size_t errlen);

/*
 * A rank's wire evidence (the runner's rankR.wire.jsonl, wire/rg_wire.h) added to ev, read
 * before it by rg_evidence_read: each wire rule's packets through its netem (matched) and the
 * ones it acted on (fired: dropped for a loss, else every one it passed), a link it took down
 * (matched 1, fired 1 when the device said down), its first action into first_fault_mono_ms,
 * the first action it could not do into wire_failed, what the rank's devices took in meanwhile
 * into rx_pkts, rx_dup and rx_oos. A line that cannot be read is counted and
 * named as the shim's are. No file: nothing (no wire rule acted for the rank). 0, or -1 with
 * err when the file is there but cannot be read.
 */
int rg_evidence_read_wire(const char *path, rg_evidence *ev, char *err, size_t errlen);

/* Rank r's whole evidence in dir: the shim's rankR.events.jsonl (rg_evidence_read), then the
 * runner's rankR.wire.jsonl (rg_evidence_read_wire). 0, or -1 with err. */
int rg_evidence_read_rank(const char *dir, int r, rg_evidence *ev, char *err, size_t errlen);

#endif
