/* SPDX-License-Identifier: MIT */
/*
 * `railguard run` started by the commands that judge a transport by several runs of a suite
 * (compare's sides, bisect's commit): the run's own words split into its options and its
 * scenarios by run's option table, so a re-run can name only the scenarios that need it and
 * keep every option; then each run a child of its own, its output in a log, under a limit.
 */
#include "cmd/rg_cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* run's entry for a word that is an option ("--jobs", "--jobs=2", "-j"), or NULL; *inline_val
 * when the value came in the same word ("--jobs=2", "-j2"). */
static const rg_opt *run_option(const char *w, bool *inline_val)
{
    *inline_val = false;
    if (w[0] != '-' || !w[1])
        return NULL;
    if (w[1] == '-') {
        char name[64];
        const char *eq = strchr(w + 2, '=');
        size_t n = eq ? (size_t)(eq - (w + 2)) : strlen(w + 2);
        if (n == 0 || n >= sizeof(name))
            return NULL;
        memcpy(name, w + 2, n);
        name[n] = '\0';
        *inline_val = eq != NULL;
        return rg_cli_find(&rg_run_cli, name);
    }
    for (int i = 0; i < rg_run_cli.nopts; i++)
        if (rg_run_cli.opts[i].letter && rg_run_cli.opts[i].letter == w[1]) {
            *inline_val = w[2] != '\0';
            return &rg_run_cli.opts[i];
        }
    return NULL;
}

int rg_runargs_split(int argc, char **argv, rg_runargs *ra, char *err, size_t errlen)
{
    /* The options the command itself gives every run: a run's own would be overridden, or
     * would send its results where nobody reads them. */
    static const char *const owned[] = {"transport", "out", "tally", "triage", "hosts", "trace"};
    memset(ra, 0, sizeof(*ra));
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--")) {
            snprintf(err, errlen, "'--' twice: what follows the first is run's own words");
            return -1;
        }
        bool inl;
        const rg_opt *o = run_option(w, &inl);
        if (w[0] == '-' && w[1] && !o) {
            snprintf(err, errlen, "'%.100s' is not an option of railguard run", w);
            return -1;
        }
        if (!o) {
            if (ra->nfiles == RG_RUNARGS_MAX) {
                snprintf(err, errlen, "more than %d scenarios", RG_RUNARGS_MAX);
                return -1;
            }
            ra->files[ra->nfiles++] = w;
            continue;
        }
        for (size_t k = 0; k < sizeof(owned) / sizeof(owned[0]); k++)
            if (!strcmp(o->name, owned[k])) {
                snprintf(err, errlen, "run's --%s is set by this command itself", o->name);
                return -1;
            }
        if (ra->nopts + 2 > RG_RUNARGS_MAX) {
            snprintf(err, errlen, "more than %d words of run options", RG_RUNARGS_MAX);
            return -1;
        }
        ra->opts[ra->nopts++] = w;
        if (o->arg && !inl) {
            if (i + 1 == argc) {
                snprintf(err, errlen, "run's %.64s needs a value", w);
                return -1;
            }
            ra->opts[ra->nopts++] = argv[++i];
        }
    }
    return 0;
}

/* The last line of a log that says something ("12 passed, 1 failed"), "" when none does: a
 * child run's summary or its refusal. */
void rg_log_last_line(const char *log, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof(line), f))
        if (line[0] != '\n') {
            line[strcspn(line, "\n")] = '\0';
            rg_cut(out, len, line);
        }
    fclose(f);
}

int rg_self_exe(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

int rg_side_run(const char *self, const char *transport, const char *out, const rg_runargs *ra,
                const char *const *only, int nonly, const char *log, double limit_s, char *why,
                size_t whylen)
{
    int nfiles = only ? nonly : ra->nfiles;
    const char **argv = calloc((size_t)(ra->nopts + nfiles + 10), sizeof(*argv));
    if (!argv) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    int a = 0;
    argv[a++] = self;
    argv[a++] = "run";
    if (transport && transport[0]) {
        argv[a++] = "--transport";
        argv[a++] = transport;
    }
    argv[a++] = "--out";
    argv[a++] = out;
    /* The causes compare and bisect match failures by, and the UC drops a failed run proves
     * absent, rest on the verbs trace. */
    argv[a++] = "--trace";
    for (int i = 0; i < ra->nopts; i++)
        argv[a++] = ra->opts[i];
    for (int i = 0; i < nfiles; i++)
        argv[a++] = only ? only[i] : ra->files[i];
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whylen, "cannot fork railguard run: %s", strerror(errno));
        free(argv);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0); /* the run and its ranks, stopped together if the limit passes */
        rg_child_output(log);
        execv(self, (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    free(argv);
    int st = 0;
    if (rg_child_wait(pid, limit_s, true, &st) != 0) {
        snprintf(why, whylen, "railguard run had not finished after %.0f s: stopped (%s)", limit_s,
                 log);
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) {
        snprintf(why, whylen, "railguard run %s (%s)",
                 WIFEXITED(st) ? "could not start" : "was killed", log);
        return -1;
    }
    return WEXITSTATUS(st);
}
