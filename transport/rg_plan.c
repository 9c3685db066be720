/* SPDX-License-Identifier: MIT */
#include "rg_plan.h"

void rg__seg(size_t count, int n, int i, size_t *off_p, size_t *len_p)
{
    size_t base = count / (size_t)n, rem = count % (size_t)n, ui = (size_t)i;
    *len_p = base + (ui < rem ? 1 : 0);
    *off_p = ui * base + (ui < rem ? ui : rem);
}

size_t rg__chunk_elems(size_t esz, size_t chunk_bytes)
{
    size_t e = chunk_bytes / esz;
    return e ? e : 1;
}

size_t rg__nchunks(size_t len, size_t esz, size_t chunk_bytes)
{
    size_t per = rg__chunk_elems(esz, chunk_bytes);
    return (len + per - 1) / per;
}

void rg__chunk(size_t len, size_t esz, size_t chunk_bytes, size_t j, size_t *off_p, size_t *n_p)
{
    size_t per = rg__chunk_elems(esz, chunk_bytes), off = j * per;
    *off_p = off;
    *n_p = off >= len ? 0 : (len - off < per ? len - off : per);
}

size_t rg__rail_chunks(size_t nchunks, int nrails, int k)
{
    size_t r = (size_t)nrails, uk = (size_t)k;
    return nchunks / r + (uk < nchunks % r ? 1 : 0);
}
