/* SPDX-License-Identifier: MIT */
/* The shim's own declarations, shared by the interposer's files (fi_shim.h lists them) and its
 * evidence (fi_event.c), buffer ownership (fi_own.c) and dlopen (fi_dl.c). */
#ifndef RG_FI_INTERNAL_H
#define RG_FI_INTERNAL_H

#include "fi_plan.h"
#include "rg_parse.h"

#include <infiniband/verbs.h>
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
 * Writes one JSONL event: {"event":"<name>","rank":R,"pid":P,"t_ms":T,<body>}. `fmt` formats
 * the body's remaining members (without braces; may be empty). One write() per line, so lines
 * from several processes sharing a file never interleave. No allocation.
 */
void fi_event(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An event's wr_id member: the program's 64-bit value exactly, whatever its top bit (ids that
 * are pointers or tagged values), as RG_HEX64 writes it and the runner reads it back. */
#define FI_EV_WR_ID "\"wr_id\":" RG_HEX64

/* A string as a JSON string's contents (fi_event.c): quotes, backslashes and control bytes
 * dropped, so an odd file name cannot break an event line. */
void fi_json_clean(char *dst, size_t len, const char *src);

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
void fi_own_mr_add(const void *ctx, uint32_t lkey, uint64_t va, uint64_t iova, uint64_t len);
void fi_own_mr_del(const void *ctx, uint32_t lkey);
struct fi_own *fi_own_send(const void *ctx, const struct ibv_send_wr *w);
struct fi_own *fi_own_recv(const void *ctx, const struct ibv_recv_wr *w);
void fi_own_unsanitized(uint64_t n);
bool fi_own_check(struct fi_own *o, uint32_t qpn, uint64_t wr_id, bool success, uint32_t byte_len);
void fi_own_free(struct fi_own *o);
/* Sends retired unseen (unsignaled, completed in order before a later completion): their
 * records go on a list under the QP's ring lock (fi_own_defer appends at *tail) and are
 * checked and freed after it is released (fi_own_check_list), so the poll path holds the lock
 * for no memcmp. */
void fi_own_defer(struct fi_own ***tail, struct fi_own *o, uint64_t wr_id);
void fi_own_check_list(struct fi_own *list, uint32_t qpn);
/* Requests checked (sends, recvs), rewrites found, requests not sanitized, and receives
 * poisoned again at an error completion. */
struct fi_own_tally {
    uint64_t sends, recvs, rewritten, unsanitized, repoisoned;
};
void fi_own_counts(struct fi_own_tally *t);

#endif
