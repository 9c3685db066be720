/* SPDX-License-Identifier: MIT */
/*
 * The fault plan: its grammar's parsed form and the trigger decision. Pure code (no verbs calls,
 * no globals), so the unit tests cover every rule and trigger kind without a device.
 *
 * Grammar (docs/faultinject.md is the user's copy):
 *   plan   = rule *( (";" | newline) rule )      blank rules are ignored; a "#" at the start
 *                                                of a word starts a comment to the line's end
 *   rule   = fault *( blank key "=" value )
 *   fault  = error | negpoll | stall | delay | delay_first | lose | nomem | corrupt
 *          | swap_rails | count | late | kill | stop | exit | ownership | trace | sites
 *          | uc_as_rc
 * Filters (which events a rule sees; all default to "any"):
 *   rank=R          the process's rank (FI_RANK_VARS: the first one set)
 *   dev=NAME        the device the QP/CQ belongs to
 *   qp=N            the QP number (decimal or 0x hex, < 2^24), or qp=#K: the K-th QP this
 *                   process created (from 0)
 *   cq=#K           the K-th CQ this process created
 *   op=KIND         send | recv | write | read | atomic | any   (completion or work request kind);
 *                   several joined by "|" (op=send|write) match any of them
 *   verb=V          nomem only: post_send | post_recv | reg_mr | create_qp | create_cq | alloc_pd
 *   after=MS, before=MS   time window, milliseconds since the shim was loaded
 *   site=OBJ+0xOFF  only in the verbs calls made from that call site: the object's file name
 *                   (a path is cut to it) and the return address's offset from the object's
 *                   load address, as a sites rule's "caller" events and every fault event
 *                   name it; n then counts that site's events alone. A call path names the
 *                   callers after it, "<" for "called from": site=A+0x10<B+0x20 is the verbs
 *                   call at A+0x10 made while B+0x20 called the function holding it (a wrapper
 *                   and its caller); at most FI_SITE_DEPTH frames
 *   step=N|init     only while the program says it is in step N (or its init), through the
 *                   control table's set_phase; with rep=R, only in that repetition. n then
 *                   counts the rule's events in those phases only: a point anchored to a
 *                   step means the same thing however many steps run before it
 * Trigger (when a matching event fires the fault); n counts matching events from 1:
 *   nth=N           fires at n == N (with every=K: at N, N+K, N+2K, ...)
 *   every=K         fires when n is a multiple of K (or as above)
 *   prob=P seed=S   fires when a hash of (S, rule index, n) falls below P (0 < P <= 1)
 *   (none)          fires at every matching event
 *   count=C         at most C fires in all (nth alone means 1)
 * Fault parameters:
 *   error   status=NAME|NUMBER     an ibv_wc_status (0..23), e.g. WR_FLUSH_ERR (default) or 5
 *   negpoll ret=N                  the negative value ibv_poll_cq returns (default -1)
 *   negpoll, stall: per=poll|cqe   what n counts: the CQ's polls (default; how many there are
 *                                  depends on timing) or the completions it handed out (as
 *                                  many in every run): with per=cqe the fault fires at the
 *                                  CQ's first poll after its nth matching completion
 *   stall   ms=D                   poll returns no completions for D ms (required)
 *   delay   ms=D                   a post_recv (op=recv, default) or post_send is held D ms
 *   delay_first ms=D               the rank's first post of any kind is held D ms
 *   lose                           a send completes locally and never arrives (op=send|write)
 *   late    ms=D                   ibv_post_send returns at once and the request is really
 *                                  posted D ms later (the NIC reads its buffer late), with
 *                                  every later request on that QP behind it (op=send|write)
 *   kill                           the rank raises SIGKILL at a matching completion (a peer
 *                                  that dies mid-operation)
 *   stop                           the rank raises SIGSTOP there (a peer that hangs; the
 *                                  runner ends it once the other ranks have ended)
 *   exit    code=N                 the rank calls exit(N) there (default 0): a peer that
 *                                  leaves early, without finalize, perhaps reporting success
 *   nomem   verb=V                 the verb fails with ENOMEM (required)
 *   corrupt bit=B                  flips bit B of a received payload (default: from the seed)
 *   swap_rails perm=a,b,...        device list order and names permuted (default: reversed)
 *   count                          no fault, no keys: count posts, completions and polls only
 *   ownership                      no fault, no keys: the buffer-ownership sanitizer (fi_own.c)
 *                                  checks every send's gather list at its completion and
 *                                  poisons every receive's buffer at post
 *   trace                          no fault, no keys: every QP's peer (at its move to RTR),
 *                                  every work request posted and every completion the program
 *                                  polls, one event each (fi_trace.c), for the causes triage
 *                                  proves from cross-rank evidence; at most FI_TRACE_MAX events
 *                                  a process, then one "trace_full"
 *   uc_as_rc                       no fault, no keys: every UC QP the program creates is made an
 *                                  RC QP, with the attributes RC needs added at its moves to RTR
 *                                  and RTS (RNR retry without limit), so a send that arrives
 *                                  before its receive is retried instead of dropped; a "note"
 *                                  event names each QP so made
 *   sites   depth=D                no fault: every verbs call site the program calls from
 *                                  (fi_caller.c), with its calls and its posts or completions
 *                                  by op, one "caller" event each at exit: the sites a sweep's
 *                                  faults can reach. depth=D (1..FI_SITE_DEPTH, default 1)
 *                                  names each by its call path of D frames, so a transport
 *                                  that calls every verb from one wrapper has as many sites as
 *                                  the wrapper has callers
 * Wire faults: not verbs calls but the wire under them, applied by the runner (never the shim,
 * which passes them by) to the network device under a rank's rail, and proven by that
 * device's own counters. rank=R whose device (default: every rank's), rail=K which of its
 * rails (default: every one); after=/before= count from the program's start, or step=N starts
 * it when the rank's program starts step N:
 *   wire    loss=P% delay=MS jitter=MS reorder=P% duplicate=P% corrupt=P%
 *                                  sch_netem on the device's egress, at least one of them;
 *                                  jitter and reorder need delay (netem reorders by sending
 *                                  some packets without it)
 *   link_down up=MS                the device taken down at after= (default: the start) and up
 *                                  again up= ms later (default: at the program's end)
 *   partition up=MS                every rail of the rank down at once: the rank cut off
 */
#ifndef RG_FI_PLAN_H
#define RG_FI_PLAN_H

/* Where a process's rank comes from, the first one set: railguard's own, JACCL's, then the
 * launchers' (Open MPI, PMIx, PMI: MPICH and srun --mpi=pmi2, Slurm). The runner unsets them
 * all for a launcher it starts (an exec launcher: mpirun), so its processes take only the
 * ranks their launcher gives them. */
#define FI_RANK_VARS                                                                               \
    "RG_FI_RANK", "RG_RANK", "MLX_RANK", "JACCL_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",        \
        "PMI_RANK", "SLURM_PROCID"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FI_MAX_RULES 32
#define FI_PHASE_ANY (-2)  /* step=/rep= not given */
#define FI_PHASE_INIT (-1) /* step=init: before the program's first step */
#define FI_PHASE_MAX 1000000
#define FI_MAX_DEVS 8
#define FI_DEVNAME_MAX 64
#define FI_SITE_OBJ_MAX 128
#define FI_SITE_DEPTH 4     /* frames in a call path */
#define FI_SITE_MAX 251     /* site='s text and its NUL: a token is 255, "site=" and it */
#define FI_TRACE_MAX 200000 /* trace events a process writes at most */

enum fi_kind {
    FI_ERROR,
    FI_NEGPOLL,
    FI_STALL,
    FI_DELAY,
    FI_DELAY_FIRST,
    FI_LOSE,
    FI_NOMEM,
    FI_CORRUPT,
    FI_SWAP_RAILS,
    FI_COUNT,
    FI_LATE,
    FI_KILL,
    FI_STOP,
    FI_EXIT,
    FI_OWNERSHIP,
    FI_TRACE,
    FI_WIRE,
    FI_LINK_DOWN,
    FI_PARTITION,
    FI_SITES,
    FI_UC_AS_RC,
    FI_KIND_MAX
};

enum fi_op { FI_OP_ANY, FI_OP_SEND, FI_OP_RECV, FI_OP_WRITE, FI_OP_READ, FI_OP_ATOMIC };

/* A rule's op filter: one bit an op it names, none for any. A transport that moves its data by
 * RDMA write where another sends is faulted alike by op=send|write. */
#define FI_OPS(o) ((o) == FI_OP_ANY ? 0u : 1u << (o))
static inline bool fi_ops_has(unsigned ops, enum fi_op o)
{
    return !ops || (ops & FI_OPS(o));
}

enum fi_verb {
    FI_VERB_NONE,
    FI_VERB_POST_SEND,
    FI_VERB_POST_RECV,
    FI_VERB_REG_MR,
    FI_VERB_CREATE_QP,
    FI_VERB_CREATE_CQ,
    FI_VERB_ALLOC_PD
};

struct fi_rule {
    enum fi_kind kind;
    /* filters; -1 / "" / 0 ops mean any */
    int rank;
    char dev[FI_DEVNAME_MAX];
    int64_t qp_num; /* qp=N */
    int qp_ord;     /* qp=#K */
    int cq_ord;     /* cq=#K */
    unsigned ops;   /* FI_OPS bits; 0: any */
    enum fi_verb verb;
    uint64_t after_ms;  /* 0: from the start */
    uint64_t before_ms; /* UINT64_MAX: no end */
    /* site=: "OBJ+0xOFF<OBJ+0xOFF...", file names and lower-case hex without leading zeros
     * (as the shim names a site), "" any; site_depth its frames */
    char site[FI_SITE_MAX];
    int site_depth;
    int step; /* FI_PHASE_ANY, FI_PHASE_INIT or a step number */
    int rep;  /* FI_PHASE_ANY or a repetition number */
    /* trigger; 0 means unset */
    uint64_t nth;
    uint64_t every;
    double prob; /* 0: unset */
    uint64_t seed;
    uint64_t count; /* 0: unlimited (but nth without every fires once) */
    /* parameters */
    int status;   /* FI_ERROR: enum ibv_wc_status */
    int ret;      /* FI_NEGPOLL */
    int code;     /* FI_EXIT: exit status, 0..255 */
    bool per_cqe; /* FI_NEGPOLL, FI_STALL: n counts completions, not polls */
    uint64_t ms;  /* FI_STALL, FI_DELAY, FI_DELAY_FIRST, FI_LATE */
    int bit;      /* FI_CORRUPT: -1 = chosen from the seed */
    int depth;    /* FI_SITES: the frames of each call path recorded (1..FI_SITE_DEPTH) */
    int perm[FI_MAX_DEVS];
    int nperm; /* FI_SWAP_RAILS: 0 = reverse the list */
    /* Wire faults (FI_WIRE, FI_LINK_DOWN, FI_PARTITION); rates are fractions, 0: unset. */
    int rail; /* -1: every rail */
    double loss, reorder, duplicate, corrupt_rate;
    uint64_t delay_ms, jitter_ms, up_ms; /* up_ms 0: down to the program's end */
    int line; /* where the rule was written (1-based), for events and errors */
    /* Its bytes in the plan text, from its fault word to the end of its last parameter: a
     * caller can name each rule as it was written (railguard exec's report). */
    uint32_t src_off, src_len;
};

struct fi_plan {
    int nrules;
    struct fi_rule rules[FI_MAX_RULES];
};

/*
 * Parses `text` into `out` (which is cleared first). On error returns -1 and writes one line,
 * "ORIGIN:LINE: <what> '<token>'" without a newline, to err. `origin` names where the text
 * came from (e.g. "RG_FI_PLAN" or a file path).
 */
int fi_plan_parse(const char *text, const char *origin, struct fi_plan *out, char *err,
                  size_t errlen);

/*
 * Whether rule `r` (index `idx` in its plan) fires on its n-th matching event (n >= 1), given
 * it fired `fired` times before. The filters, including the time window, are the caller's.
 */
bool fi_rule_fires(const struct fi_rule *r, int idx, uint64_t n, uint64_t fired);

/* Whether a kind injects anything: count, ownership and trace only watch, so they never fire
 * and are never "not exercised". */
static inline bool fi_kind_injects(enum fi_kind k)
{
    return k != FI_COUNT && k != FI_OWNERSHIP && k != FI_TRACE && k != FI_SITES && k != FI_UC_AS_RC;
}

/* Whether a kind acts on the wire under the verbs (the runner's to apply and prove), not on a
 * verbs call (the shim's). */
static inline bool fi_kind_wire(enum fi_kind k)
{
    return k == FI_WIRE || k == FI_LINK_DOWN || k == FI_PARTITION;
}

/* The names the grammar uses, for events and messages. */
const char *fi_kind_name(enum fi_kind k);
const char *fi_op_name(enum fi_op o);
const char *fi_verb_name(enum fi_verb v);
/* "WR_FLUSH_ERR" for 5; NULL when out of range. */
const char *fi_status_name(int status);

/* splitmix64 over (seed, idx, n) as a fraction in [0, 1): the probability trigger's draw, and
 * corrupt's bit choice. */
double fi_draw(uint64_t seed, int idx, uint64_t n);

#endif
