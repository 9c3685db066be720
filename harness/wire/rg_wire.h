/* SPDX-License-Identifier: MIT */
/*
 * rg_wire.h - wire faults (docs/faultinject.md): a scenario's `wire`, `link_down` and
 * `partition` rules, which the shim passes by, applied by the runner to the network device
 * under each rank's rail -- sch_netem on its egress, the link taken down and up -- at the
 * times the rules say, and proven by that device's own counters. Above scenario/ (the rules)
 * and result/, below launch/ (whose loop drives it) and judge/.
 *
 *   rg_wire_plan    the rules into actions: which device, on and off when, what netem spec
 *   rg_wire_tick    each action whose time has come, done (on the launcher's loop)
 *   rg_wire_end     everything still on turned off, its counters read; the evidence closed
 * (evidence/ reads it back: rg_evidence_read_wire.)
 *
 * Evidence is one JSON line an event in rankR.wire.jsonl, R the rank the action is for (the
 * lowest one when ranks here share a device): "wire_on", "wire_off" (its qdisc's packets and
 * drops, and rx_*: what the device took in meanwhile, by its own counters), "link" (state,
 * carrier changes), "wire_error" (why it could not be done), each formatted from the schema
 * both sides come from (evidence/rg_ev_wire.h). What cannot be read back is a finding, as for
 * the shim's events.
 */
#ifndef RG_WIRE_H
#define RG_WIRE_H

#include "fi_plan.h"
#include "scenario/rg_scenario.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define RG_WIRE_MAX 64 /* actions a run: rules x devices */

/* A device's counters as the kernel keeps them. -1: it could not say. */
typedef struct rg_wire_counts {
    int64_t sent_pkts, dropped; /* the netem qdisc's (tc -s qdisc show) */
    int64_t carrier_changes;    /* /sys/class/net/DEV/carrier_changes */
    bool up;                    /* operstate "up" (or "unknown", a device without carrier) */
} rg_wire_counts;

/*
 * What the receiving end of a rail said: the RDMA device's own port counters (rxe's
 * hw_counters), read at a rule's start and end, so a wire fault's proof is not only what the
 * sender's netem passed but what the NIC that took the peer's packets made of them. -1: it
 * could not say (a device without those counters: hardware names its own).
 */
typedef struct rg_wire_nic {
    int64_t rcvd_pkts; /* hw_counters/rcvd_pkts: packets it took as valid */
    int64_t dup;       /* hw_counters/duplicate_request: requests it had already taken */
    int64_t oos;       /* hw_counters/out_of_seq_request: requests ahead of their turn */
} rg_wire_nic;

/*
 * What the runner asks of the system, so the plan and its timing are tested without a network:
 * netdev_of the network device under an RDMA device; netem_on/off/clean a root qdisc; link up or
 * down; counts the counters now; nic the RDMA device's receive counters now. Each returns 0,
 * or -1 with why.
 */
typedef struct rg_wire_sys {
    int (*netdev_of)(const char *rdma_dev, char *netdev, size_t len, char *why, size_t whylen);
    int (*netem_on)(const char *netdev, const char *spec, char *why, size_t whylen);
    int (*netem_off)(const char *netdev, char *why, size_t whylen);
    /* The qdisc kept (its counters with it) but made a clean wire -- no delay, loss,
     * duplication, reordering or corruption -- before the counters are read and it is removed. */
    int (*netem_clean)(const char *netdev, char *why, size_t whylen);
    int (*link)(const char *netdev, bool up, char *why, size_t whylen);
    int (*counts)(const char *netdev, rg_wire_counts *c, char *why, size_t whylen);
    int (*nic)(const char *rdma_dev, rg_wire_nic *n, char *why, size_t whylen);
} rg_wire_sys;
/* The real one: sysfs, tc and ip (rg_wire_sys.c). */
extern const rg_wire_sys rg_wire_sys_linux;

typedef struct rg_wire_act {
    int rule;           /* the scenario's faults item, from 0 */
    int kind;           /* FI_WIRE, FI_LINK_DOWN (a partition is one per rail) */
    int rank, rail;     /* whose evidence, which rail */
    char dev[64];       /* the RDMA device */
    char netdev[32];    /* the network device under it */
    char spec[200];     /* netem's words ("loss 1% delay 5ms 1ms"), for FI_WIRE */
    double on_s, off_s; /* from the ranks' start; off_s < 0: at the end */
    int on_step;        /* >= 0: on when its rank starts this step (on_s then set) */
    double up_s;        /* up=: its time on, a link down or a wire impaired (0: to the end) */
    bool on, off;       /* done */
    rg_wire_counts at_on;
    bool one_rank;      /* rank=: its egress only, so this device is no receiver of it */
    rg_wire_nic nic_on; /* the device's receive counters when a wire rule went on */
    bool nic_known;     /* they were read then */
    char nic_why[160];  /* else why not */
} rg_wire_act;

typedef struct rg_wire {
    const rg_wire_sys *sys;
    int n;
    rg_wire_act act[RG_WIRE_MAX];
    FILE *ev[RG_MAX_RANKS]; /* rankR.wire.jsonl, opened at the first event */
    char dir[1024];
    double t0; /* CLOCK_MONOTONIC s of the ranks' start */
} rg_wire;

/*
 * The scenario's wire rules for ranks lo..hi-1, whose rail k is devices[k], into w's actions.
 * 0 (w->n may be 0: no wire rule); -1 with one line in err: no devices given (ndev 0) for
 * a wire rule, a device with no network device under it, more actions than RG_WIRE_MAX, or two
 * netem rules on one device at once (netem holds one root qdisc a device).
 */
int rg_wire_plan(rg_wire *w, const rg_wire_sys *sys, const rg_scenario *sc, int lo, int hi,
                 const char (*devices)[64], int ndev, const char *dir, char *err, size_t errlen);
/* Does every action whose time (seconds from t0) or step has come -- steps[r] is the step rank
 * r's program has started (-1 none yet), NULL when unknown; the seconds until the next timed
 * one, or -1 when none is left (an action waiting for a step wakes nobody: the rank's step
 * line does). */
double rg_wire_tick(rg_wire *w, double now_s, const int *steps);
/* Everything still on turned off (netem removed, links up), the evidence files closed. */
void rg_wire_end(rg_wire *w, double now_s);

/* netem's words for a wire rule ("loss 1% delay 5ms 2ms reorder 25% ..."). */
void rg_wire_spec(const struct fi_rule *r, char *out, size_t len);
/* "Sent 42 bytes 3 pkt (dropped 1, ...)" of `tc -s qdisc show dev X` for its netem qdisc: 0,
 * or -1 when the text has none. */
int rg_wire_parse_qdisc(const char *text, int64_t *sent_pkts, int64_t *dropped);

#endif
