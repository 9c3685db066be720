/* SPDX-License-Identifier: MIT */
/* One scenario of `railguard run`, in one pass: its files set up, its ranks launched as workers
 * (launch/rg_workers.c), what they left judged (judge/rg_judge_procs.c, judge/rg_judge.c). */
#include "rg_run.h"
#include "rg_parse.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- one scenario ---------------------------------------------------------------------------- */

void rg_run_ranks(const struct run_opts *o, const struct sc_entry *e, rg_result *res, int lo,
                  int hi, const char *coord, const char *devfile, const char *planfile, bool whole)
{
    /* 6.5 MB, the heap's (a leak check reads .bss whole at every exit). */
    rg_launched *l = calloc(1, sizeof(*l));
    if (!l) {
        for (int r = lo; r < hi; r++)
            rg_rank_find(&res->rank[r], RG_V_ERROR, 0, "the runner ran out of memory");
        return;
    }
    /* The rails under the ranks here, for wire faults: the run's devices, or an external
     * rank's own row of the site's devices file. */
    static char row[RG_MAX_RAILS][64];
    const char(*devs)[64] = (const char(*)[64])o->devices;
    int ndev = o->ndevices;
    if (!whole && devfile) {
        char err[600];
        devs = (const char(*)[64])row;
        if (rg_devices_of_rank(devfile, lo, row, &ndev, err, sizeof(err)) != 0)
            ndev = 0; /* the transport says what is wrong with it; wire faults say none given */
    }
    const rg_worker_launch w = {.self = o->self,
                                .shim = o->shim,
                                .transport = o->transport,
                                .path = e->path,
                                .sc = &e->sc,
                                .dir = res->dir,
                                .lo = lo,
                                .hi = hi,
                                .coord = coord,
                                .devfile = devfile,
                                .planfile = planfile,
                                .whole = whole,
                                .seed = rg_run_seed(o, &e->sc),
                                .fork_server = o->fork_server,
                                .hang_at_deadline = o->hang_at_deadline,
                                .wrap = o->wrap,
                                .nwrap = o->nwrap,
                                .devices = devs,
                                .ndev = ndev};
    rg_launch_workers(&w, l);
    double judged = rg_now_s();
    rg_judge_workers(res, &e->sc, l, whole ? RG_EV_RANK | RG_EV_CROSS : RG_EV_RANK);
    rg_launched_phases(l, rg_now_s() - judged, &res->phases);
    free(l);
}

void rg_run_scenario(const struct run_opts *o, const struct sc_entry *e, rg_result *res)
{
    const rg_scenario *sc = &e->sc;
    char devfile[1200], coord[64], plan[1200];

    if (sc->exec.on) {
        rg_exec_scenario(sc, o->shim, o->wrap, o->nwrap, res);
        rg_judge(res);
        return;
    }
    rg_run_fmt(devfile, sizeof(devfile), "%s/devices.json", res->dir);
    int port = rg_free_port();
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", port);
    if (port < 0 || rg_devices_write(devfile, sc->ranks, sc->rails, o->devices) != 0 ||
        rg_proc_write_plan(res->dir, sc, plan, sizeof(plan)) != 0) {
        for (int r = 0; r < sc->ranks; r++) {
            res->rank[r] = (rg_rank_result){
                .t_s = -1, .step = -1, .left_t_s = -1, .start_s = -1, .cpu_wait_s = -1};
            snprintf(res->rank[r].where, sizeof(res->rank[r].where), "start");
            rg_rank_find(&res->rank[r], RG_V_ERROR, 0, "could not set up (port %d, %s, %s): %s",
                         port, devfile, plan, strerror(errno));
        }
    } else {
        rg_run_ranks(o, e, res, 0, sc->ranks, coord, devfile, plan, true);
    }
    rg_judge(res);
}
