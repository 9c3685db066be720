/* SPDX-License-Identifier: MIT */
/*
 * railguard - the scenario runner's command line:
 *   railguard run [options] SCENARIO|DIR...   run scenarios, print verdicts and reports
 *   railguard exec [options] -- CMD [ARG...]    any verbs program under the shim, judged
 *   railguard sweep --fault KIND ... SCENARIO  every fault point of a scenario
 *   railguard report DIR                      judge an external launch's ranks together
 *   railguard worker ...                      one rank of a scenario (started by run)
 */
#include "rg_harness.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int worker(int argc, char **argv)
{
    rg_worker_args a = {.rank = -1, .status_fd = -1, .go_fd = -1};
    for (int i = 2; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v) {
            fprintf(stderr, "railguard worker: %s needs a value\n", k);
            return 2;
        }
        errno = 0;
        if (!strcmp(k, "--scenario")) {
            a.scenario = v;
        } else if (!strcmp(k, "--rank")) {
            a.rank = (int)strtol(v, &end, 10);
        } else if (!strcmp(k, "--coordinator")) {
            a.coordinator = v;
        } else if (!strcmp(k, "--devices-file")) {
            a.devices_file = v;
        } else if (!strcmp(k, "--transport")) {
            a.transport = v;
        } else if (!strcmp(k, "--backtrace-file")) {
            a.backtrace_file = v;
        } else if (!strcmp(k, "--status-fd")) {
            a.status_fd = (int)strtol(v, &end, 10);
        } else if (!strcmp(k, "--go-fd")) {
            a.go_fd = (int)strtol(v, &end, 10);
        } else if (!strcmp(k, "--seed")) {
            a.seed = strtoull(v, &end, 0);
            a.seed_set = true;
        } else {
            fprintf(stderr, "railguard worker: unknown option '%s'\n", k);
            return 2;
        }
        if (errno || (end && *end)) {
            fprintf(stderr, "railguard worker: %s: not a number '%s'\n", k, v);
            return 2;
        }
    }
    if (!a.scenario || a.rank < 0 || !a.coordinator || !a.devices_file || !a.transport ||
        a.status_fd < 0) {
        fprintf(stderr, "railguard worker: needs --scenario --rank --coordinator --devices-file "
                        "--transport --status-fd (it is started by 'railguard run')\n");
        return 2;
    }
    return rg_worker_main(&a);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "run"))
        return rg_run_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "exec"))
        return rg_exec_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "sweep"))
        return rg_sweep_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "report"))
        return rg_report_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "worker"))
        return worker(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("railguard %s, plugin ABI %d\n", rg_version(), RG_PLUGIN_ABI_VERSION);
        return 0;
    }
    rg_run_usage(stderr);
    rg_exec_usage(stderr);
    return argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) ? 0 : 2;
}
