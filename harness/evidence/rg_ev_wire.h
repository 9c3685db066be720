/* SPDX-License-Identifier: MIT */
/*
 * rg_ev_wire.h - the schema of the runner's wire evidence, rankR.wire.jsonl: every event the
 * runner writes while it applies a wire fault (wire/rg_wire.c) and every field of each, in the
 * form of the shim's schema (faultinject/rg_fi_events.h: the same types, the same X-macros).
 * The one table both sides come from: the writer formats a record from it (rg_ev_format_rec),
 * the readers (evidence/rg_ev_wire.c, report/rg_timeline.c) check and decode each line against
 * it (rg_ev_decode_in), and the property test writes every kind with edge and sentinel values
 * and reads each back exactly (tests/harness/evidence/test_ev_schema.c).
 *
 * A line's head is its event alone; every kind carries the fields of RG_WIRE_COMMON.
 */
#ifndef RG_EV_WIRE_H
#define RG_EV_WIRE_H

#include "rg_fi_events.h"

/* clang-format off: one field a line, as the table reads */
/* Which rule, for which rank's rail, on which device and interface, and when: CLOCK_MONOTONIC
 * in ms (the ranks' clock) and ms from the ranks' start. */
#define RG_WIRE_COMMON(F, K)                                                                       \
    F(K, rule, I, R)                                                                               \
    F(K, rank, I, R)                                                                               \
    F(K, rail, I, R)                                                                               \
    F(K, dev, S, R)                                                                                \
    F(K, netdev, S, R)                                                                             \
    F(K, mono_ms, MS, R)                                                                           \
    F(K, t_ms, MS, R)
/* netem in place (its spec): the wire is impaired from here. */
#define RG_EV_FIELDS_wire_on(F, K)                                                                 \
    RG_WIRE_COMMON(F, K)                                                                           \
    F(K, spec, S, R)
/* netem removed: its packets (sent_pkts, dropped; loss: it was a loss, so it acted on the
 * dropped ones), what the rank's device took in meanwhile by its own counters (rx_pkts,
 * rx_dup, rx_oos: all three, or rx_why saying why not), and when the wire was clean again
 * (clean_t_ms, or clean_why). */
#define RG_EV_FIELDS_wire_off(F, K)                                                                \
    RG_WIRE_COMMON(F, K)                                                                           \
    F(K, spec, S, R)                                                                               \
    F(K, loss, B, R)                                                                               \
    F(K, sent_pkts, U, R)                                                                          \
    F(K, dropped, U, R)                                                                            \
    F(K, rx_pkts, U, O)                                                                            \
    F(K, rx_dup, U, O)                                                                             \
    F(K, rx_oos, U, O)                                                                             \
    F(K, rx_why, S, O)                                                                             \
    F(K, clean_t_ms, MS, O)                                                                        \
    F(K, clean_why, S, O)
/* A link taken down (down: what the device said after) or brought up; its carrier changes,
 * unknown when the counter could not be read. */
#define RG_EV_FIELDS_link(F, K)                                                                    \
    RG_WIRE_COMMON(F, K)                                                                           \
    F(K, state, S, R)                                                                              \
    F(K, down, B, O)                                                                               \
    F(K, carrier_changes, N, R)                                                                    \
    F(K, carrier_changes_before, N, O)
/* Something the runner could not do (what) and why: the run's failure, not the transport's. */
#define RG_EV_FIELDS_wire_error(F, K)                                                              \
    RG_WIRE_COMMON(F, K)                                                                           \
    F(K, what, S, R)                                                                               \
    F(K, why, S, R)

#define RG_WIRE_KINDS(X)                                                                           \
    X(wire_on)                                                                                     \
    X(wire_off)                                                                                    \
    X(link)                                                                                        \
    X(wire_error)
/* clang-format on */

enum rg_wire_kind {
#define RG_WIRE__KENUM(k) RG_WIREK_##k,
    RG_WIRE_KINDS(RG_WIRE__KENUM) RG_WIREK_COUNT
#undef RG_WIRE__KENUM
};

/* Each kind's record, its field indexes (RG_EVH) and its table, by the macros that make the
 * shim's. */
RG_WIRE_KINDS(RG_EV__STRUCT)
RG_WIRE_KINDS(RG_EV__IDXENUM)
RG_WIRE_KINDS(RG_EV__FTAB)
static const rg_ev_kdef rg_wire_kinds[RG_WIREK_COUNT]
    __attribute__((unused)) = {RG_WIRE_KINDS(RG_EV__KROW)};

/* Any wire record, for a reader that decodes a line before it knows its kind. */
typedef union rg_wire_rec {
    uint32_t has;
    struct rg_evr_wire_on on;
    struct rg_evr_wire_off off;
    struct rg_evr_link link;
    struct rg_evr_wire_error error;
} rg_wire_rec;

#endif
