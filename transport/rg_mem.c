/* SPDX-License-Identifier: MIT */
/* Registered memory: a caller's region registered on every device of the communicator, so a
 * send from it goes without a copy. */
#include "rg_comm.h"

#include <stdlib.h>

void rg__mem_free(struct rg_comm *c, struct rg_mem *m)
{
    for (int d = 0; d < c->ndevs; d++)
        rg_vmr_dereg(m->mr[d]);
    free(m);
}

rg_status rg_mem_register(rg_comm_h c, void *buf, size_t len, rg_mem_h *mem_p)
{
    if (!c || !mem_p)
        return RG_ERR_INVALID;
    if (c->poisoned)
        return c->err.st;
    rg__err_clear(&c->err);
    if (!buf || !len)
        return rg__err_set(&c->err, RG_ERR_INVALID, "rank %d: rg_mem_register: %s", c->rank,
                           buf ? "an empty region" : "a NULL buffer");
    int slot = 0;
    while (slot < RG_MEM_MAX && c->mem[slot])
        slot++;
    if (slot == RG_MEM_MAX)
        return rg__err_set(&c->err, RG_ERR_INVALID,
                           "rank %d: rg_mem_register: %d regions are registered already, the "
                           "most a communicator keeps",
                           c->rank, RG_MEM_MAX);
    struct rg_mem *m = calloc(1, sizeof(*m));
    if (!m)
        return rg__err_set(&c->err, RG_ERR_NOMEM, "rank %d: rg_mem_register: no memory", c->rank);
    m->base = buf;
    m->len = len;
    /* Written by the local device too where the pages allow, so receives may land there in
     * place; read-only pages (a const input) register for reads, on every device alike. */
    m->writable = 1;
    for (int d = 0; d < c->ndevs; d++) {
        struct rg_err e;
        if (m->writable &&
            rg_vmr_reg(&c->devs[d].v, buf, len, IBV_ACCESS_LOCAL_WRITE, &m->mr[d], &e) == RG_OK)
            continue;
        if (m->writable && d > 0) {
            for (int k = 0; k < d; k++) {
                rg_vmr_dereg(m->mr[k]);
                m->mr[k] = NULL;
            }
            d = -1; /* again from the first device, for reads only */
            m->writable = 0;
            continue;
        }
        m->writable = 0;
        rg_status st = rg_vmr_reg(&c->devs[d].v, buf, len, 0, &m->mr[d], &c->err);
        if (st) {
            rg__mem_free(c, m);
            return st;
        }
    }
    c->mem[slot] = m;
    c->nmem++;
    *mem_p = m;
    return RG_OK;
}

rg_status rg_mem_deregister(rg_comm_h c, rg_mem_h m)
{
    if (!c)
        return RG_ERR_INVALID;
    for (int i = 0; i < RG_MEM_MAX; i++)
        if (m && c->mem[i] == m) {
            c->mem[i] = NULL;
            c->nmem--;
            rg__mem_free(c, m);
            return RG_OK;
        }
    /* Not an error that poisons: nothing was sent. A poisoned communicator keeps its error. */
    if (c->poisoned)
        return RG_ERR_INVALID;
    rg__err_clear(&c->err);
    rg__err_set(&c->err, RG_ERR_INVALID,
                "rank %d: rg_mem_deregister: %p is no region of this communicator", c->rank,
                (void *)m);
    return RG_ERR_INVALID;
}
