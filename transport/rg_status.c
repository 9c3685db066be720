/* SPDX-License-Identifier: MIT */
/* The error table's two string views, the error record internal code fills once, and the one
 * clock every deadline is read on (here, not in rg_comm.c, so code that links no device, such
 * as the side channel's fuzz target, shares it). */
#include "rg_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

double rg__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *rg_strerror(rg_status st)
{
    switch (st) {
#define RG__STATUS_TEXT(name, value, text)                                                         \
    case name:                                                                                     \
        return text;
        RG_STATUS_TABLE(RG__STATUS_TEXT)
#undef RG__STATUS_TEXT
    }
    return "unknown status";
}

const char *rg_err_name(rg_status st)
{
    switch (st) {
#define RG__STATUS_NAME(name, value, text)                                                         \
    case name:                                                                                     \
        return #name;
        RG_STATUS_TABLE(RG__STATUS_NAME)
#undef RG__STATUS_NAME
    }
    return "RG_ERR_UNKNOWN";
}

rg_status rg__err_set(struct rg_err *e, rg_status st, const char *fmt, ...)
{
    /* The first function that detects an error records it; callers only pass it up. */
    if (e && e->st == RG_OK) {
        va_list ap;
        e->st = st;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
        va_end(ap);
    }
    return st;
}

void rg__err_clear(struct rg_err *e)
{
    e->st = RG_OK;
    e->msg[0] = '\0';
}
