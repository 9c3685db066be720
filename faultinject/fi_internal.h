/* SPDX-License-Identifier: MIT */
/* The shim's own declarations, shared by fi_shim.c (interposition) and fi_event.c (evidence). */
#ifndef RG_FI_INTERNAL_H
#define RG_FI_INTERNAL_H

#include "fi_plan.h"

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

#endif
