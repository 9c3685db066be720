/* SPDX-License-Identifier: MIT */
/*
 * railguard - the scenario runner's command line:
 *   railguard run [options] SCENARIO|DIR...   run scenarios, print verdicts and reports
 *   railguard exec [options] -- CMD [ARG...]    any verbs program under the shim, judged
 *   railguard sweep --fault KIND ... SCENARIO  every fault point of a scenario
 *   railguard report DIR                      judge an external launch's ranks together
 *   railguard bench [options]                 nccl-tests' table for any transport
 *   railguard worker ...                      one rank of a scenario (started by run)
 *   railguard worker --serve 3 --transport SO  run's fork server (rg_forksrv.c)
 */
#include "cmd/rg_cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "run"))
        return rg_run_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "exec"))
        return rg_exec_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "sweep"))
        return rg_sweep_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "bench"))
        return rg_bench_main(argc - 1, argv + 1);
    if (argc >= 3 && !strcmp(argv[1], "worker") && !strcmp(argv[2], "--bench"))
        return rg_bench_rank_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "report"))
        return rg_report_main(argc - 1, argv + 1);
    if (argc == 6 && !strcmp(argv[1], "worker") && !strcmp(argv[2], "--serve") &&
        !strcmp(argv[3], "3") && !strcmp(argv[4], "--transport"))
        return rg_worker_serve(3, argv[5]);
    if (argc >= 2 && !strcmp(argv[1], "worker"))
        return rg_worker_cli(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("railguard %s, plugin ABI %d\n", rg_version(), RG_PLUGIN_ABI_VERSION);
        return 0;
    }
    rg_run_usage(stderr);
    rg_exec_usage(stderr);
    return argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) ? 0 : 2;
}
