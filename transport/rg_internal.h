/* SPDX-License-Identifier: MIT */
/* Internals shared by the transport's files; nothing here is part of the public ABI. */
#ifndef RG_INTERNAL_H
#define RG_INTERNAL_H

#include "railguard.h"

#include <stddef.h>

#define RG__PRINTF(f, a) __attribute__((format(printf, f, a)))

/* An error as first detected: its status and a message that says where. */
struct rg_err {
    rg_status st;
    char msg[320];
};

/* Records st and the message unless e already holds an error; returns st either way. */
rg_status rg__err_set(struct rg_err *e, rg_status st, const char *fmt, ...) RG__PRINTF(3, 4);
void rg__err_clear(struct rg_err *e);

/* CLOCK_MONOTONIC in seconds: every deadline in the transport is measured against it. */
double rg__now(void);

#endif /* RG_INTERNAL_H */
