/* SPDX-License-Identifier: MIT */
/* The shim's own declarations, shared by the interposer's files (fi_shim.h lists them) and its
 * evidence (fi_event.c), buffer ownership (fi_own.c) and dlopen (fi_dl.c). */
#ifndef RG_FI_INTERNAL_H
#define RG_FI_INTERNAL_H

#include "fi_plan.h"
#include "rg_fi_events.h"
#include "rg_parse.h"

#include <infiniband/verbs.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Milliseconds since the shim was loaded (monotonic); the time window and every event use it. */
double fi_elapsed_ms(void);
uint64_t fi_now_ns(void);

/* The rank the plan's rank= filters compare against, -1 when no rank variable is set. */
int fi_rank(void);

/*
 * Opens the event log: $RG_FI_LOG ("%p" in it becomes the pid), else standard error. Called at
 * load and again in a forked child. Returns -1 with a message in err when the file can't be
 * opened.
 */
int fi_event_open(char *err, size_t errlen);

/* Whether events go to a log file (RG_FI_LOG) rather than standard error. */
int fi_event_logged(void);

/*
 * Writes one JSONL event of a kind of the schema (rg_fi_events.h): the head every line has
 * ({"event":"<kind>","rank":R,"pid":P,"t_ms":T,"mono_ms":M}), then the record's fields in the
 * schema's order, each as its type is written, the optional ones where rec's `has` says. One
 * write() per line, so lines from several processes sharing a file never interleave. No
 * allocation. FI_EV(kind, .field = v, ...) makes the record, typed by the compiler.
 */
void fi_ev(enum rg_ev_kind kind, const void *rec);
/* The line itself (fi_ev_format.c), into line[cap] (cap >= 256), with the head h: its length
 * with the newline, no NUL. A record too long for cap makes a "cut" event naming its kind. */
struct fi_ev_head {
    int rank;
    long pid;
    double t_ms, mono_ms;
};
size_t fi_ev_format(char *line, size_t cap, enum rg_ev_kind kind, const void *rec,
                    const struct fi_ev_head *h);
#define FI_EV(kind, ...) fi_ev(RG_EVK_##kind, &(struct rg_evr_##kind){__VA_ARGS__})
/* A count the shim knows, and one it does not. */
#define FI_N(x) ((rg_ev_n){true, (uint64_t)(x)})
#define FI_N_UNKNOWN ((rg_ev_n){false, 0})

/* What the shim exports besides the verbs: dlopen, dlmopen, the control table. */
#define FI_EXPORT __attribute__((visibility("default")))

/*
 * dlopen and dlmopen (fi_dl.c): the shim itself as loaded and the realpath of the libibverbs
 * it wraps, once known at load; until then a handle is passed through unchanged. -1 when the
 * real dlopen or dlmopen cannot be found.
 */
int fi_dl_init(const char *self_path, const char *verbs_path);

/*
 * Buffer ownership (fi_own.c), on while the plan holds an `ownership` rule. MRs are known by
 * (context, lkey); a record is made per work request at post (NULL: exempt, or not
 * sanitized and counted so) and checked once when its request retires, before the program sees
 * the completion. fi_own_check returns true when it found (and wrote an event for) a rewrite.
 */
struct fi_own;
/*
 * What a UD QP has heard, and from whom: each successful receive completion's source QP with
 * a serial, in a few slots by QPN (a slot taken by another source forgets the first, so a
 * collision only ever makes the sanitizer stricter). A UD send rewritten before its completion
 * after its destination answered is the acknowledgement protocols' reuse (UCX's UD transport
 * frees a send buffer on its peer's acknowledgement): UD has no retransmission, so when the
 * answer acknowledged it the destination had the bytes. The shim cannot tell an
 * acknowledgement from other traffic, so such a rewrite is reported apart, never judged.
 */
#define FI_HEARD 16
struct fi_heard {
    _Atomic uint64_t serial;
    _Atomic uint64_t from[FI_HEARD]; /* serial << 24 | source QPN; 0: none */
};
void fi_heard_note(struct fi_heard *h, uint32_t src_qp);
void fi_own_mr_add(const void *ctx, uint32_t lkey, uint64_t va, uint64_t iova, uint64_t len);
void fi_own_mr_del(const void *ctx, uint32_t lkey);
/* ud: the QP's record of what it heard when it is a UD QP, else NULL. */
struct fi_own *fi_own_send(const void *ctx, const struct ibv_send_wr *w, const struct fi_heard *ud);
/* room: the most bytes a NIC can write into the receive (a UD QP's GRH and MTU), 0 all of it;
 * bytes past it are left as they are and never checked. */
struct fi_own *fi_own_recv(const void *ctx, const struct ibv_recv_wr *w, uint32_t room);
void fi_own_unsanitized(uint64_t n);
/* The shim's own write: corrupt flipped `mask` in the byte at va. A send whose gather list
 * holds that byte (a program that receives into the buffer it sends from) then differs from
 * its copy by the shim's hand, not the program's: not a rewrite in flight. */
void fi_own_flipped(uint64_t va, uint8_t mask);
/* ud: as at fi_own_send, the same QP's. */
bool fi_own_check(struct fi_own *o, uint32_t qpn, const struct fi_heard *ud, uint64_t wr_id,
                  bool success, uint32_t byte_len);
void fi_own_free(struct fi_own *o);
/* Sends retired unseen (unsignaled, completed in order before a later completion): their
 * records go on a list under the QP's ring lock (fi_own_defer appends at *tail) and are
 * checked and freed after it is released (fi_own_check_list), so the poll path holds the lock
 * for no memcmp. */
void fi_own_defer(struct fi_own ***tail, struct fi_own *o, uint64_t wr_id);
void fi_own_check_list(struct fi_own *list, uint32_t qpn, const struct fi_heard *ud);
/* Requests checked (sends, recvs), rewrites found, UD sends rewritten after their destination
 * answered (not judged), requests not sanitized, and receives poisoned again at an error
 * completion. */
struct fi_own_tally {
    uint64_t sends, recvs, rewritten, answered, unsanitized, repoisoned;
};
void fi_own_counts(struct fi_own_tally *t);

#endif
