/* SPDX-License-Identifier: MIT */
/*
 * A scenario fitted to the transport it runs on. Most RDMA collective libraries use RC queue
 * pairs on one device per peer (Gloo, UCX, NCCL's net_ib); a stock scenario that is about a
 * collective under a fault is not about UC or about two rails, so it should run on them too,
 * in the shape they have, rather than be skipped. What a file states is its subject and is
 * kept: a transport without it skips the scenario, as before.
 */
#include "rg_scenario.h"

#include <stdio.h>

int rg_sc_fit(rg_scenario *sc, uint32_t qp_types, int max_rails)
{
    bool qp = false, rails = false;
    int asked = sc->rails_fit ? sc->rails_asked : sc->rails;
    /* UC is railguard's default (JACCL's kind); RC only for a transport without it. */
    if (sc->qp_fit && !(qp_types & RG_BIT(sc->qp)) && (qp_types & RG_BIT(RG_QPT_RC))) {
        sc->qp = RG_QPT_RC;
        qp = true;
    }
    if (sc->rails_fit && max_rails >= 1 && sc->rails > max_rails) {
        sc->rails = max_rails;
        rails = true;
    }
    if (!qp && !rails)
        return 0;
    if (qp && rails)
        snprintf(sc->fit_note, sizeof(sc->fit_note), "ran as rc on %d rail%s (up to %d asked)",
                 sc->rails, sc->rails == 1 ? "" : "s", asked);
    else if (qp)
        snprintf(sc->fit_note, sizeof(sc->fit_note), "ran as rc (the transport declares no uc)");
    else
        snprintf(sc->fit_note, sizeof(sc->fit_note), "ran on %d rail%s (up to %d asked)", sc->rails,
                 sc->rails == 1 ? "" : "s", asked);
    return 1;
}
