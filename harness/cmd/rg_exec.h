/* SPDX-License-Identifier: MIT */
/*
 * rg_exec.h - railguard exec's own insides (cmd/ only): its options, read from the command line
 * by its option table or from a scenario file's exec: (rg_exec_opts.c), and run and judged
 * (rg_exec.c).
 */
#ifndef RG_EXEC_H
#define RG_EXEC_H

#include "cmd/rg_cmd.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define RG_EXEC_ARGS RG_CMD_WORDS
#define RG_EXEC_PLAN_MAX (64 * 1024)

struct exec_opts {
    char self[PATH_MAX];
    char shim[PATH_MAX];
    char out[PATH_MAX];
    char json[PATH_MAX];
    char junit[PATH_MAX];
    char name[RG_SC_NAME_MAX];
    int ranks;
    double deadline_s;
    bool expect_set;
    rg_sc_expect expect;
    bool leaks;
    bool count; /* --count: counting rules join the plan, the counts printed after */
    bool no_ownership;
    bool uc_as_rc; /* --uc-as-rc: the shim creates the program's UC QPs as RC */
    bool ranks_set;
    /* --launcher: CMD is a launcher (mpirun, srun) run once, which starts the --ranks ranks
     * itself; each process it starts with a launcher's rank is judged as that rank */
    bool launcher;
    /* --server/--client: rank 0 and rank 1, the client started once the server listens */
    const char *server_arg, *client_arg;
    char server_buf[RG_SC_EXEC_MAX], client_buf[RG_SC_EXEC_MAX];
    char *server[RG_CMD_WORDS + 1], *client[RG_CMD_WORDS + 1];
    int nserver, nclient;
    double client_after;  /* --client-after: seconds after the server; -1: when it listens */
    uint64_t services;    /* --service R: bit r, rank r serves until stopped */
    double service_grace; /* --service-grace S: SIGTERM to SIGKILL */
    int slow_scale;       /* --slow-scale F: a second attempt's times (judge/rg_slow.c); 1: none */
    int port;             /* {port}: a free TCP port, chosen once */
    const char *faults;   /* --faults, as given */
    const char *plan;     /* --plan FILE */
    char **cmd;           /* after "--", or cmd_words */
    int ncmd;
    char cmd_buf[RG_SC_EXEC_MAX]; /* a scenario's exec: command, split */
    char *cmd_words[RG_CMD_WORDS + 1];
    /* --rank-wrapper: a command every process runs under (valgrind, strace, ...) */
    char wrap_buf[RG_SC_EXEC_MAX];
    char *wrap[RG_CMD_WORDS + 1];
    int nwrap;
    char *const *wrap_of; /* the wrapper's words: wrap, or a caller's (railguard run's) */
};

/* --count's table (rg_exec_count.c): what each rank's processes did, from their evidence in
 * dir, named from the programs' debug information where they have it. */
void exec_count_table(FILE *f, const char *dir, int ranks);

/* The command line into o: 0, 1 after --help (exit 0), or 2 after one line. */
int exec_parse_opts(int argc, char **argv, struct exec_opts *o);
/* What railguard exec would have been given for a scenario file's exec: (shim may be NULL: a
 * check at load). 0, or -1 with err. */
int exec_opts_of(const rg_scenario *sc, const char *shim, struct exec_opts *o, char *err,
                 size_t errlen);

#endif
