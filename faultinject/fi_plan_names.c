/* SPDX-License-Identifier: MIT */
/*
 * The fault plan's names: faults, ops, verbs and completion statuses, to text for the evidence
 * and messages, and from text for the parser (fi_plan.c).
 */
#include "fi_plan_in.h"

#include <infiniband/verbs.h>
#include <string.h>
#include <strings.h>

static const char *const kind_names[FI_KIND_MAX] = {
    [FI_ERROR] = "error",
    [FI_NEGPOLL] = "negpoll",
    [FI_STALL] = "stall",
    [FI_DELAY] = "delay",
    [FI_DELAY_FIRST] = "delay_first",
    [FI_LOSE] = "lose",
    [FI_NOMEM] = "nomem",
    [FI_CORRUPT] = "corrupt",
    [FI_SWAP_RAILS] = "swap_rails",
    [FI_COUNT] = "count",
    [FI_LATE] = "late",
    [FI_KILL] = "kill",
    [FI_STOP] = "stop",
    [FI_EXIT] = "exit",
    [FI_OWNERSHIP] = "ownership",
    [FI_TRACE] = "trace",
    [FI_SITES] = "sites",
    [FI_UC_AS_RC] = "uc_as_rc",
    [FI_WIRE] = "wire",
    [FI_LINK_DOWN] = "link_down",
    [FI_PARTITION] = "partition",
};

static const char *const op_names[] = {
    [FI_OP_ANY] = "any",     [FI_OP_SEND] = "send", [FI_OP_RECV] = "recv",
    [FI_OP_WRITE] = "write", [FI_OP_READ] = "read", [FI_OP_ATOMIC] = "atomic",
};

static const char *const verb_names[] = {
    [FI_VERB_NONE] = "none",           [FI_VERB_POST_SEND] = "post_send",
    [FI_VERB_POST_RECV] = "post_recv", [FI_VERB_REG_MR] = "reg_mr",
    [FI_VERB_CREATE_QP] = "create_qp", [FI_VERB_CREATE_CQ] = "create_cq",
    [FI_VERB_ALLOC_PD] = "alloc_pd",
};

/* Named through the verbs header's own constants, so a renumbering there cannot skew a name. */
#define FI__WC_STATUSES(X)                                                                         \
    X(SUCCESS), X(LOC_LEN_ERR), X(LOC_QP_OP_ERR), X(LOC_EEC_OP_ERR), X(LOC_PROT_ERR),              \
        X(WR_FLUSH_ERR), X(MW_BIND_ERR), X(BAD_RESP_ERR), X(LOC_ACCESS_ERR), X(REM_INV_REQ_ERR),   \
        X(REM_ACCESS_ERR), X(REM_OP_ERR), X(RETRY_EXC_ERR), X(RNR_RETRY_EXC_ERR),                  \
        X(LOC_RDD_VIOL_ERR), X(REM_INV_RD_REQ_ERR), X(REM_ABORT_ERR), X(INV_EECN_ERR),             \
        X(INV_EEC_STATE_ERR), X(FATAL_ERR), X(RESP_TIMEOUT_ERR), X(GENERAL_ERR), X(TM_ERR),        \
        X(TM_RNDV_INCOMPLETE)
#define FI__WC_NAME(x) [IBV_WC_##x] = #x
static const char *const status_names[] = {FI__WC_STATUSES(FI__WC_NAME)};

#define FI__NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *fi_kind_name(enum fi_kind k)
{
    return (int)k >= 0 && (int)k < FI_KIND_MAX ? kind_names[k] : "?";
}

const char *fi_op_name(enum fi_op o)
{
    return (int)o >= 0 && (int)o < FI__NELEM(op_names) ? op_names[o] : "?";
}

const char *fi_verb_name(enum fi_verb v)
{
    return (int)v >= 0 && (int)v < FI__NELEM(verb_names) ? verb_names[v] : "?";
}

const char *fi_status_name(int status)
{
    return status >= 0 && status < FI__NELEM(status_names) ? status_names[status] : NULL;
}

/* The index in names[first..n) of the word t[0..len), or -1. */
static int lookup(const char *const *names, int first, int n, const char *t, size_t len, int nocase)
{
    for (int i = first; i < n; i++) {
        if (!names[i] || strlen(names[i]) != len)
            continue;
        if (nocase ? strncasecmp(names[i], t, len) == 0 : strncmp(names[i], t, len) == 0)
            return i;
    }
    return -1;
}

int fi__kind_index(const char *t, size_t len)
{
    return lookup(kind_names, 0, FI_KIND_MAX, t, len, 0);
}

int fi__op_index(const char *t, size_t len)
{
    return lookup(op_names, 0, FI__NELEM(op_names), t, len, 0);
}

/* "none" is the unset value, not something nomem can fail. */
int fi__verb_index(const char *t, size_t len)
{
    return lookup(verb_names, FI_VERB_NONE + 1, FI__NELEM(verb_names), t, len, 0);
}

int fi__status_index(const char *t, size_t len)
{
    return lookup(status_names, 0, FI__NELEM(status_names), t, len, 1);
}

int fi__status_count(void)
{
    return FI__NELEM(status_names);
}
