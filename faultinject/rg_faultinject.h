/* SPDX-License-Identifier: MIT */
/*
 * rg_faultinject.h - the fault-injection shim's one public header: its control table for
 * in-process tests. The shim itself is used by LD_PRELOAD and configured by RG_FI_PLAN (or
 * RG_FI_PLAN_FILE); see docs/faultinject.md for the grammar, every fault and its semantics.
 *
 * A program never links against the shim. It asks for the control table at run time, so the
 * same binary runs with and without the shim preloaded:
 *
 *     const struct rg_fi_control_v1 *fi = rg_fi_control();
 *     if (fi && fi->set_plan("error status=WR_FLUSH_ERR op=recv nth=3", err, sizeof(err)) != 0)
 *         ...
 */
#ifndef RG_FAULTINJECT_H
#define RG_FAULTINJECT_H

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The progress page (RG_FI_PROGRESS names its file): how a run's processes are seen to move
 * while they run, so that the runner can judge a hang when it is one rather than at the
 * deadline (harness/launch/rg_progress.c reads it). The runner makes the file, with this header
 * and every slot free, before it starts the rank; each process of the rank that loads the shim
 * (and each child it forks) takes a slot of its own by its pid and counts into it. A process
 * that finds no free slot counts `full` instead: the runner then knows it cannot see every
 * process, and never judges that rank early. Counts only grow, except the two "now" counts.
 */
#define RG_FI_PROGRESS_MAGIC 0x52475047u /* "RGPG" */
#define RG_FI_PROGRESS_VERSION 1
#define RG_FI_PROGRESS_SLOTS 32

struct rg_fi_progress_slot {
    _Atomic int64_t pid;    /* 0: free */
    _Atomic uint64_t posts; /* work requests posted (send queue, receive queue, SRQ) */
    _Atomic uint64_t cqes;  /* completions handed to the program, success or error */
    _Atomic uint64_t polls; /* ibv_poll_cq calls, empty ones too: the process is waiting */
    _Atomic int64_t holds;  /* now: threads the shim holds (a delay or stall fault) */
    _Atomic int64_t late;   /* now: sends a late fault holds, to be posted by the shim */
    _Atomic uint64_t calls; /* other verbs calls: open, create, register, modify, destroy */
    uint64_t spare;
};

struct rg_fi_progress_v1 {
    uint32_t magic, version; /* RG_FI_PROGRESS_MAGIC, RG_FI_PROGRESS_VERSION */
    uint32_t size, nslots;   /* sizeof(struct rg_fi_progress_v1), RG_FI_PROGRESS_SLOTS */
    _Atomic uint32_t full;   /* processes that found no free slot */
    uint32_t spare[11];
    struct rg_fi_progress_slot slot[RG_FI_PROGRESS_SLOTS];
};

#define RG_FI_CONTROL_SYMBOL "rg_fi_control_v1"
#define RG_FI_CONTROL_VERSION 1

struct rg_fi_control_v1 {
    uint32_t version; /* RG_FI_CONTROL_VERSION */
    uint32_t size;    /* sizeof(struct rg_fi_control_v1) as the shim was built */
    /*
     * Replaces the plan (NULL or "" removes it: pass-through). Rule counters start from zero.
     * Returns 0, or -1 with one line naming the bad token in err; the old plan then stays.
     */
    int (*set_plan)(const char *plan, char *err, size_t errlen);
    /* How many events rule `rule` of the current plan matched and how many times it fired. */
    uint64_t (*matched)(int rule);
    uint64_t (*fired)(int rule);
    /* Writes the summary events (per QP, per CQ, per rule) now, as at exit. */
    void (*summary)(void);
    /*
     * Since size reached it (check size first): the program is now in step `step` (-1: its
     * init), repetition `rep`. Rules with step=/rep= see only those phases' events, counted
     * from 1 there. The phase that ends gets a "phase" event with its counts (completions and
     * posts by op, polls) while a plan is live. Call it from the thread that drives verbs,
     * between calls; a step below -1 leaves every phase.
     */
    void (*set_phase)(int step, int rep);
    /*
     * Since size reached them (check size first), for a fork server -- a process started
     * once under the shim that forks a child per run instead of exec'ing one:
     * warm() loads libibverbs' providers now (one ibv_get_device_list, freed at once), so a
     * forked child does not pay for it again; call it only before any device is open.
     * restart() is for such a child, after fork and before its first verbs call: it reads
     * RG_FI_PLAN_FILE or RG_FI_PLAN, RG_FI_LOG and the rank from the environment again, as at
     * load, starts every count afresh and writes the load event to the new log. Returns 0, or
     * -1 with one line in err (the plan is then pass-through).
     */
    void (*warm)(void);
    int (*restart)(char *err, size_t errlen);
};

/* The shim's control table, or NULL when the shim is not loaded. */
static inline const struct rg_fi_control_v1 *rg_fi_control(void)
{
    const struct rg_fi_control_v1 *c =
        (const struct rg_fi_control_v1 *)dlsym(RTLD_DEFAULT, RG_FI_CONTROL_SYMBOL);
    return c && c->version == RG_FI_CONTROL_VERSION ? c : NULL;
}

#endif
