/* SPDX-License-Identifier: MIT */
/*
 * rg_fi_events.h - the schema of the shim's evidence: every event kind the shim writes to
 * rankR.events.jsonl, every field of each with its type, and which fields every line of a kind
 * has. It is the one table both sides come from: the shim's writer (faultinject/fi_event.c)
 * formats a kind's record field by field from it, and the runner's reader
 * (harness/evidence/rg_ev_field.c) checks every line against it and decodes a line into the
 * same record. A field the writer has that the reader does not know, or a value of another
 * type, cannot get past the property test (tests/harness/evidence/test_ev_schema.c), which
 * writes every kind with edge and sentinel values and reads each back exactly.
 *
 * Holds no code: types, X-macros, the tables they make and the formatter's declaration. A header
 * of the shim's controls, so harness/ may include it (docs/architecture.md).
 *
 * Types (a field's letter):
 *   U    unsigned 64-bit count: a JSON integer up to 2^63 - 1, above that an RG_HEX64 string
 *        (jansson's integers are signed 64-bit), so every value reads back exactly
 *   I    signed 64-bit integer: a JSON integer
 *   X    a 64-bit identifier (wr_id): always an RG_HEX64 string
 *   S    a string: JSON-escaped; each byte from 0x80 up as \u00XX, so any bytes read back as
 *        they were
 *   B    true or false
 *   MS   a time in ms from 0: a number with three decimals
 *   N    a count the shim may not know: a U, or the string "unknown" (a receive queue behind
 *        an SRQ, a ring that lost track); never a number that means unknown
 *   OPS  counts by op: {"send":U,"recv":U,"write":U,"read":U,"atomic":U}
 *   WRS  the oldest work requests of a queue: [{"wr_id":X,"len":U},...] (at most
 *        RG_EV_WRS_MAX), or "unknown"
 * Presence: R, on every line of the kind; O, only where the record's `has` bit for it is set.
 */
#ifndef RG_FI_EVENTS_H
#define RG_FI_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RG_EV_WRS_MAX 6

/* clang-format off: one field a line, as the table reads */
/* The fields every line has, written by the writer itself before a kind's own. */
#define RG_EV_HEAD(F, K)                                                                           \
    F(K, event, S, R)                                                                              \
    F(K, rank, I, R)                                                                               \
    F(K, pid, I, R)                                                                                \
    F(K, t_ms, MS, R)                                                                              \
    F(K, mono_ms, MS, R)

/* A process under the shim: which shim, which libibverbs, which program. */
#define RG_EV_FIELDS_load(F, K)                                                                    \
    F(K, rules, I, R)                                                                              \
    F(K, shim, S, R)                                                                               \
    F(K, verbs, S, R)                                                                              \
    F(K, exe, S, R)                                                                                \
    F(K, snapshot_signal, I, R)                                                                    \
    F(K, ppid, I, R)                                                                               \
    F(K, time_scale, U, R)
/* A fault fired; what it did is in the optional fields its kind has; step and rep: the
 * program's call it fired in (step -1 init, the program's length finalize), when known. */
#define RG_EV_FIELDS_fault(F, K)                                                                   \
    F(K, fault, S, R)                                                                              \
    F(K, rule, I, R)                                                                               \
    F(K, line, I, R)                                                                               \
    F(K, dev, S, R)                                                                                \
    F(K, qp, N, R)                                                                                 \
    F(K, qp_ord, N, R)                                                                             \
    F(K, cq_ord, N, R)                                                                             \
    F(K, op, S, R)                                                                                 \
    F(K, nth, U, R)                                                                                \
    F(K, caller, S, R)                                                                             \
    F(K, from, S, R)                                                                               \
    F(K, err, S, O)                                                                                \
    F(K, ms, U, O)                                                                                 \
    F(K, wr_id, X, O)                                                                              \
    F(K, signal, S, O)                                                                             \
    F(K, exit, I, O)                                                                               \
    F(K, status, S, O)                                                                             \
    F(K, code, I, O)                                                                               \
    F(K, byte, U, O)                                                                               \
    F(K, bit, U, O)                                                                                \
    F(K, skipped, S, O)                                                                            \
    F(K, ret, I, O)                                                                                \
    F(K, map, S, O)                                                                                \
    F(K, step, I, O)                                                                               \
    F(K, rep, I, O)
/* A verbs call site (sites rules) with its counts so far, and the list's end. */
#define RG_EV_FIELDS_caller(F, K)                                                                  \
    F(K, why, S, R)                                                                                \
    F(K, verb, S, R)                                                                               \
    F(K, caller, S, R)                                                                             \
    F(K, from, S, R)                                                                               \
    F(K, calls, U, R)                                                                              \
    F(K, ops, OPS, R)
#define RG_EV_FIELDS_callers(F, K)                                                                 \
    F(K, why, S, R)                                                                                \
    F(K, sites, I, R)                                                                              \
    F(K, lost, U, R)
/* A dlopen of the verbs library answered with the shim itself. */
#define RG_EV_FIELDS_dlopen(F, K)                                                                  \
    F(K, call, S, R)                                                                               \
    F(K, file, S, R)                                                                               \
    F(K, lmid, I, R)
/* Something the shim could not do as planned. */
#define RG_EV_FIELDS_note(F, K)                                                                    \
    F(K, what, S, R)                                                                               \
    F(K, qp, U, O)                                                                                 \
    F(K, err, I, O)                                                                                \
    F(K, rule, I, O)
/* The buffer-ownership sanitizer's finding; answered: a UD send rewritten after its destination
 * answered, reported apart and not judged (fi_internal.h, struct fi_heard). */
#define RG_EV_FIELDS_ownership(F, K)                                                               \
    F(K, op, S, R)                                                                                 \
    F(K, qp, U, R)                                                                                 \
    F(K, wr_id, X, R)                                                                              \
    F(K, offset, I, R)                                                                             \
    F(K, bytes, U, R)                                                                              \
    F(K, answered, B, O)
/* Summaries (at exit, a snapshot, a control request). */
#define RG_EV_FIELDS_rule(F, K)                                                                    \
    F(K, why, S, R)                                                                                \
    F(K, rule, I, R)                                                                               \
    F(K, line, I, R)                                                                               \
    F(K, fault, S, R)                                                                              \
    F(K, matched, U, R)                                                                            \
    F(K, fired, U, R)
#define RG_EV_FIELDS_alive(F, K)                                                                   \
    F(K, why, S, R)                                                                                \
    F(K, contexts, I, R)                                                                           \
    F(K, pds, I, R)                                                                                \
    F(K, mrs, I, R)                                                                                \
    F(K, cqs, I, R)                                                                                \
    F(K, qps, I, R)                                                                                \
    F(K, channels, I, R)
#define RG_EV_FIELDS_owned(F, K)                                                                   \
    F(K, why, S, R)                                                                                \
    F(K, sends, U, R)                                                                              \
    F(K, recvs, U, R)                                                                              \
    F(K, rewritten, U, R)                                                                          \
    F(K, answered, U, R)                                                                           \
    F(K, unsanitized, U, R)                                                                        \
    F(K, repoisoned, U, R)
#define RG_EV_FIELDS_totals(F, K)                                                                  \
    F(K, why, S, R)                                                                                \
    F(K, contexts, U, R)                                                                           \
    F(K, qps, U, R)                                                                                \
    F(K, cqs, U, R)                                                                                \
    F(K, posts_send, U, R)                                                                         \
    F(K, posts_recv, U, R)                                                                         \
    F(K, polls, U, R)                                                                              \
    F(K, cqe, U, R)                                                                                \
    F(K, cqe_err, U, R)
/* A program's step ended: what it did in it. */
#define RG_EV_FIELDS_phase(F, K)                                                                   \
    F(K, step, I, R)                                                                               \
    F(K, rep, I, R)                                                                                \
    F(K, posts_op, OPS, R)                                                                         \
    F(K, cqe_op, OPS, R)                                                                           \
    F(K, polls, U, R)
/* A hung rank's oldest requests, at a snapshot. */
#define RG_EV_FIELDS_outstanding(F, K)                                                             \
    F(K, dev, S, R)                                                                                \
    F(K, qp, U, R)                                                                                 \
    F(K, qp_ord, I, R)                                                                             \
    F(K, send, WRS, R)                                                                             \
    F(K, recv, WRS, R)
#define RG_EV_FIELDS_qp(F, K)                                                                      \
    F(K, why, S, R)                                                                                \
    F(K, dev, S, R)                                                                                \
    F(K, qp, U, R)                                                                                 \
    F(K, qp_ord, I, R)                                                                             \
    F(K, type, I, R)                                                                               \
    F(K, srq, B, R)                                                                                \
    F(K, posts_send, U, R)                                                                         \
    F(K, posts_recv, U, R)                                                                         \
    F(K, cqe_send, U, R)                                                                           \
    F(K, cqe_recv, U, R)                                                                           \
    F(K, cqe_err, U, R)                                                                            \
    F(K, faulted, I, R)                                                                            \
    F(K, out_send, N, R)                                                                           \
    F(K, out_recv, N, R)                                                                           \
    F(K, posts_op, OPS, R)                                                                         \
    F(K, cqe_op, OPS, R)
/* A CQ's summary. channel: it has a completion channel; held: completions the shim made for it
 * (a lost send's, flushes after a fault) that no poll has taken yet. rxe raises no event for
 * those, so a program asleep on the channel is never told of them. Both written since
 * 2026-12-07 (optional: older evidence has neither). */
#define RG_EV_FIELDS_cq(F, K)                                                                      \
    F(K, why, S, R)                                                                                \
    F(K, dev, S, R)                                                                                \
    F(K, cq_ord, I, R)                                                                             \
    F(K, polls, U, R)                                                                              \
    F(K, cqe, U, R)                                                                                \
    F(K, channel, B, O)                                                                            \
    F(K, held, U, O)
/* An event too long for a line: its kind, never a line cut short. */
#define RG_EV_FIELDS_cut(F, K) F(K, of, S, R)
/* The verbs trace (trace=1). */
#define RG_EV_FIELDS_trace_full(F, K)                                                              \
    F(K, events, I, O)                                                                             \
    F(K, why, S, O)
#define RG_EV_FIELDS_trace_qp(F, K)                                                                \
    F(K, dev, S, R)                                                                                \
    F(K, qp, U, R)                                                                                 \
    F(K, type, S, R)                                                                               \
    F(K, srq, B, R)                                                                                \
    F(K, gid, S, R)                                                                                \
    F(K, send_cq, I, R)                                                                            \
    F(K, recv_cq, I, R)                                                                            \
    F(K, peer_qp, U, O)                                                                            \
    F(K, peer_gid, S, O)                                                                           \
    F(K, peer_lid, U, O)
#define RG_EV_FIELDS_trace_post(F, K)                                                              \
    F(K, dev, S, R)                                                                                \
    F(K, qp, U, R)                                                                                 \
    F(K, dir, S, R)                                                                                \
    F(K, op, S, R)                                                                                 \
    F(K, n, U, R)                                                                                  \
    F(K, wr_id, X, R)                                                                              \
    F(K, bytes, U, R)                                                                              \
    F(K, signaled, B, R)                                                                           \
    F(K, fate, S, R)                                                                               \
    F(K, at_ms, MS, R)
#define RG_EV_FIELDS_trace_cqe(F, K)                                                               \
    F(K, dev, S, R)                                                                                \
    F(K, qp, U, R)                                                                                 \
    F(K, dir, S, R)                                                                                \
    F(K, op, S, R)                                                                                 \
    F(K, status, I, R)                                                                             \
    F(K, wr_id, X, R)                                                                              \
    F(K, bytes, U, R)                                                                              \
    F(K, cq, I, R)                                                                                 \
    F(K, polls, U, R)
#define RG_EV_FIELDS_trace_idle(F, K)                                                              \
    F(K, dev, S, R)                                                                                \
    F(K, cq, I, R)                                                                                 \
    F(K, idle, U, R)
#define RG_EV_FIELDS_trace_gap(F, K)                                                               \
    F(K, dev, S, R)                                                                                \
    F(K, qp, U, R)                                                                                 \
    F(K, why, S, R)
/* The process called exit(status) or returned from main (the shim's on_exit handler, after the
 * exit summary): how a process the runner did not start ended -- a launcher's (mpirun's) rank,
 * which only its launcher can wait for. None: it ended by a signal, or by _exit(). */
#define RG_EV_FIELDS_exit(F, K) F(K, status, I, R)

/* Every kind, in the order of enum rg_ev_kind. */
#define RG_EV_KINDS(X)                                                                             \
    X(load)                                                                                        \
    X(fault)                                                                                       \
    X(caller)                                                                                      \
    X(callers)                                                                                     \
    X(dlopen)                                                                                      \
    X(note)                                                                                        \
    X(ownership)                                                                                   \
    X(rule)                                                                                        \
    X(alive)                                                                                       \
    X(owned)                                                                                       \
    X(totals)                                                                                      \
    X(phase)                                                                                       \
    X(outstanding)                                                                                 \
    X(qp)                                                                                          \
    X(cq)                                                                                          \
    X(cut)                                                                                         \
    X(trace_full)                                                                                  \
    X(trace_qp)                                                                                    \
    X(trace_post)                                                                                  \
    X(trace_cqe)                                                                                   \
    X(trace_idle)                                                                                  \
    X(trace_gap)                                                                                   \
    X(exit)
/* clang-format on */

enum rg_ev_type {
    RG_EVT_U,
    RG_EVT_I,
    RG_EVT_X,
    RG_EVT_S,
    RG_EVT_B,
    RG_EVT_MS,
    RG_EVT_N,
    RG_EVT_OPS,
    RG_EVT_WRS
};

/* A count or unknown. */
typedef struct rg_ev_n {
    bool known;
    uint64_t v;
} rg_ev_n;
/* Counts by op, in enum fi_op's order (send, recv, write, read, atomic). */
typedef struct rg_ev_ops {
    uint64_t op[5];
} rg_ev_ops;
/* A queue's oldest requests; n < 0: unknown. */
typedef struct rg_ev_wrs {
    int n;
    struct {
        uint64_t wr_id, len;
    } e[RG_EV_WRS_MAX];
} rg_ev_wrs;

/* The C type of each field type. */
#define RG_EVC_U uint64_t
#define RG_EVC_I int64_t
#define RG_EVC_X uint64_t
#define RG_EVC_S const char *
#define RG_EVC_B bool
#define RG_EVC_MS double
#define RG_EVC_N rg_ev_n
#define RG_EVC_OPS rg_ev_ops
#define RG_EVC_WRS rg_ev_wrs
#define RG_EVP_R 1
#define RG_EVP_O 0

enum rg_ev_kind {
#define RG_EV__KENUM(k) RG_EVK_##k,
    RG_EV_KINDS(RG_EV__KENUM) RG_EVK_COUNT
#undef RG_EV__KENUM
};

/* The macros below stay defined: another table in this form (the runner's wire evidence,
 * harness/evidence/rg_ev_wire.h) makes its records, indexes and tables with them. */
/* Each kind's record: its fields by name, and `has`, the bits (RG_EVH) of the optional fields
 * it holds. The head is the writer's own: a record holds only the kind's fields. */
#define RG_EV__MEMBER(K, name, t, p) RG_EVC_##t name;
#define RG_EV__STRUCT(k)                                                                           \
    struct rg_evr_##k {                                                                            \
        uint32_t has;                                                                              \
        RG_EV_FIELDS_##k(RG_EV__MEMBER, k)                                                         \
    };
RG_EV_KINDS(RG_EV__STRUCT)

/* Field indexes within a kind: RG_EVH(fault, wr_id) is the `has` bit of a fault's wr_id. */
#define RG_EV__IDX(K, name, t, p) RG_EVI_##K##_##name,
#define RG_EV__IDXENUM(k) enum { RG_EV_FIELDS_##k(RG_EV__IDX, k) RG_EVI_##k##__n };
RG_EV_KINDS(RG_EV__IDXENUM)
#define RG_EVH(k, name) (1u << RG_EVI_##k##_##name)

/* The tables: a field's name, type, presence and place in its kind's record. */
typedef struct rg_ev_fdef {
    const char *name;
    unsigned char type, required;
    unsigned short off;
} rg_ev_fdef;
typedef struct rg_ev_kdef {
    const char *name;
    const rg_ev_fdef *f;
    int nf;
    size_t size;
} rg_ev_kdef;

#define RG_EV__ROW(K, name, t, p)                                                                  \
    {#name, RG_EVT_##t, RG_EVP_##p, (unsigned short)offsetof(struct rg_evr_##K, name)},
#define RG_EV__HEADROW(K, name, t, p) {#name, RG_EVT_##t, RG_EVP_##p, 0},
#define RG_EV__FTAB(k)                                                                             \
    static const rg_ev_fdef rg_ev_fields_##k[]                                                     \
        __attribute__((unused)) = {RG_EV_FIELDS_##k(RG_EV__ROW, k)};
RG_EV_KINDS(RG_EV__FTAB)
static const rg_ev_fdef rg_ev_head[] __attribute__((unused)) = {RG_EV_HEAD(RG_EV__HEADROW, _)};
#define RG_EV_HEAD_N ((int)(sizeof(rg_ev_head) / sizeof(rg_ev_head[0])))
#define RG_EV__KROW(k)                                                                             \
    {#k, rg_ev_fields_##k, (int)(sizeof(rg_ev_fields_##k) / sizeof(rg_ev_fields_##k[0])),          \
     sizeof(struct rg_evr_##k)},
static const rg_ev_kdef rg_ev_kinds[RG_EVK_COUNT]
    __attribute__((unused)) = {RG_EV_KINDS(RG_EV__KROW)};

/*
 * The one formatter of a record of any table in this form (faultinject/fi_ev_format.c): the
 * line {"event":"NAME",...}\n with each field written as its type says, into line[cap]. The
 * shim's lines add its head; the runner's wire evidence (harness/evidence/rg_ev_wire.h) is
 * written with this alone, from its own table. The line's length, 0 when it does not fit.
 */
size_t rg_ev_format_rec(char *line, size_t cap, const rg_ev_kdef *k, const void *rec);

#endif
