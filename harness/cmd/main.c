/* SPDX-License-Identifier: MIT */
/*
 * railguard - the command line: one entry per command, each with its option table (from which
 * its --help, its part of the man page and the shell's completion come):
 *   railguard run [options] SCENARIO|DIR...   run scenarios, print verdicts and reports
 *   railguard exec [options] -- CMD [ARG...]    any verbs program under the shim, judged
 *   railguard sweep --fault KIND ... SCENARIO  every fault point of a scenario
 *   railguard bench [options]                 nccl-tests' table for any transport
 *   railguard report DIR                      judge an external launch's ranks together
 *   railguard triage RUN_DIR                  a run's failures as a short list of defects
 *   railguard compare --base DIR --head DIR   two sides' runs, failure by failure
 *   railguard bisect [--build CMD] -- SCENARIO  one commit judged, for git bisect run
 *   railguard help [CMD | --man | --completion]
 * and, started by the runners themselves:
 *   railguard worker ...                      one rank of a scenario (rank/rg_worker.c)
 *   railguard worker --bench ...              one rank of a bench (rank/rg_bench_rank.c)
 *   railguard worker --serve 3 --transport SO  run's fork server (rank/rg_serve.c)
 */
#include "cmd/rg_cmd.h"

#include <stdio.h>
#include <string.h>

static const struct command {
    const char *name;
    int (*main)(int argc, char **argv);
    const rg_cli *cli;
    const char *what;
} commands[] = {
    {"run", rg_run_main, &rg_run_cli, "run scenarios against a transport, judge every rank"},
    {"exec", rg_exec_main, &rg_exec_cli, "any verbs program under the shim, judged"},
    {"sweep", rg_sweep_main, &rg_sweep_cli, "every fault point of a scenario"},
    {"bench", rg_bench_main, &rg_bench_cli, "nccl-tests' table for any transport"},
    {"report", rg_report_main, &rg_report_cli, "judge an external launch's ranks together"},
    {"triage", rg_triage_main, &rg_triage_cli, "a run's failures as a short list of defects"},
    {"merge", rg_merge_main, &rg_merge_cli, "a sweep's shards joined into the whole sweep"},
    {"compare", rg_compare_main, &rg_compare_cli, "two sides' runs, failure by failure"},
    {"bisect", rg_bisect_main, &rg_bisect_cli, "one commit judged, for git bisect run"},
};
#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static void list(FILE *f)
{
    fprintf(f, "usage: railguard COMMAND [options]   (railguard help COMMAND: its options)\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].what);
    fprintf(f, "  %-8s %s\n", "help", "this list, a command's options, --man or --completion");
}

/* Bash completion: a command's words after the command, the commands first. */
static void completion(FILE *f)
{
    fprintf(f, "# bash completion for railguard, written by 'railguard help --completion'\n"
               "_railguard() {\n"
               "    local cur=${COMP_WORDS[COMP_CWORD]} words=''\n"
               "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
               "        words='");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(f, "%s ", commands[i].name);
    fprintf(f, "help'\n"
               "    else\n"
               "        case ${COMP_WORDS[1]} in\n");
    for (int i = 0; i < NCOMMANDS; i++) {
        fprintf(f, "        %s) words='", commands[i].name);
        rg_cli_words(commands[i].cli, f, false);
        fprintf(f, "' ;;\n");
    }
    fprintf(f, "        esac\n"
               "    fi\n"
               "    case $cur in\n"
               "    -*) COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")) ;;\n"
               "    *) if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W \"$words\" -- "
               "\"$cur\")); else COMPREPLY=($(compgen -f -- \"$cur\")); fi ;;\n"
               "    esac\n"
               "}\n"
               "complete -F _railguard railguard\n");
}

static int help(int argc, char **argv)
{
    if (argc < 3) {
        list(stdout);
        return 0;
    }
    if (!strcmp(argv[2], "--man")) {
        for (int i = 0; i < NCOMMANDS; i++)
            rg_cli_man(commands[i].cli, stdout);
        return 0;
    }
    if (!strcmp(argv[2], "--completion")) {
        completion(stdout);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[2], commands[i].name)) {
            rg_cli_help(commands[i].cli, stdout);
            return 0;
        }
    fprintf(stderr, "railguard help: no command '%s' (railguard help lists them)\n", argv[2]);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc >= 2) {
        for (int i = 0; i < NCOMMANDS; i++)
            if (!strcmp(argv[1], commands[i].name))
                return commands[i].main(argc - 1, argv + 1);
        if (!strcmp(argv[1], "help"))
            return help(argc, argv);
        if (argc >= 3 && !strcmp(argv[1], "worker") && !strcmp(argv[2], "--bench"))
            return rg_bench_rank_main(argc - 1, argv + 1);
        if (argc == 6 && !strcmp(argv[1], "worker") && !strcmp(argv[2], "--serve") &&
            !strcmp(argv[3], "3") && !strcmp(argv[4], "--transport"))
            return rg_worker_serve(3, argv[5]);
        if (!strcmp(argv[1], "worker"))
            return rg_worker_cli(argc, argv);
        if (!strcmp(argv[1], "--version")) {
            printf("railguard %s, plugin ABI %d\n", rg_version(), RG_PLUGIN_ABI_VERSION);
            return 0;
        }
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
            list(stdout);
            return 0;
        }
        fprintf(stderr, "railguard: no command '%s' (railguard help lists them)\n", argv[1]);
        return 2;
    }
    list(stderr);
    return 2;
}
