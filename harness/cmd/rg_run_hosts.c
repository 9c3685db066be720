/* SPDX-License-Identifier: MIT */
/*
 * `railguard run --hosts a,b,...` (rg_run.h): railguard as its own launcher, where there is no
 * mpirun. Each rank is an --external run of this same railguard started on its host over ssh,
 * exactly as mpirun would start it (the launcher's rank in RG_RANK/RG_SIZE, the job's secret
 * on its standard input, never on a command line another user could read). Then the ranks'
 * results are brought to one directory -- unless the hosts share --out, which a token file
 * written here and looked for there tells -- and judged together by the code of `railguard
 * report`. Every wait is bounded: a host that never answers is killed at the scenario's
 * deadline, scaled as a second attempt would be, plus two minutes.
 */
#include "rg_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOSTS_SECRET_BYTES 32

/* ssh without a terminal or a password prompt: a host that would ask fails at once. */
static const char *const ssh_argv[] = {"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20"};
#define SSH_ARGC ((int)(sizeof(ssh_argv) / sizeof(ssh_argv[0])))

/* Starts `ssh HOST CMD` with stdin from in_fd (-1: /dev/null) and stdout and stderr into log
 * (NULL: out_fd). Its pid, or -1. */
static pid_t start_ssh(const char *host, const char *cmd, int in_fd, const char *log, int out_fd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int fd = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : out_fd;
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || nul < 0 || dup2(in_fd >= 0 ? in_fd : nul, 0) < 0 || dup2(fd, 1) < 0 ||
        dup2(log ? fd : 2, 2) < 0)
        _exit(127);
    const char *argv[SSH_ARGC + 3];
    for (int i = 0; i < SSH_ARGC; i++)
        argv[i] = ssh_argv[i];
    argv[SSH_ARGC] = host;
    argv[SSH_ARGC + 1] = cmd;
    argv[SSH_ARGC + 2] = NULL;
    execvp("ssh", (char *const *)argv);
    _exit(127);
}

/* Waits for pids[0..n) until limit (rg_now_s); those still running then are killed. Each
 * one's exit status into st (-1: killed or no status). How many were killed. */
static int wait_all(pid_t *pids, int *st, int n, double limit)
{
    int left = 0, killed = 0;
    for (int i = 0; i < n; i++) {
        st[i] = -1;
        left += pids[i] > 0;
    }
    struct timespec tick = {0, 20 * 1000 * 1000};
    while (left && rg_now_s() < limit) {
        for (int i = 0; i < n; i++) {
            int w;
            if (pids[i] > 0 && waitpid(pids[i], &w, WNOHANG) == pids[i]) {
                st[i] = WIFEXITED(w) ? WEXITSTATUS(w) : -1;
                pids[i] = 0;
                left--;
            }
        }
        nanosleep(&tick, NULL);
    }
    for (int i = 0; i < n; i++)
        if (pids[i] > 0) {
            kill(pids[i], SIGKILL);
            waitpid(pids[i], NULL, 0);
            pids[i] = 0;
            killed++;
        }
    return killed;
}

/* One ssh command on host, its output into log, bounded by limit_s: its exit status, or -1. */
static int ssh_once(const char *host, const char *cmd, const char *log, double limit_s)
{
    pid_t pid = start_ssh(host, cmd, -1, log, -1);
    int st;
    if (pid < 0)
        return -1;
    wait_all(&pid, &st, 1, rg_now_s() + limit_s);
    return st;
}

/*
 * The ranks' files from a host that does not share dir: `ssh HOST tar -C DIR -cf - .` read into
 * `tar -C DIR -xf -` here, both bounded. 0, or -1 after one line.
 */
static int bring_back(const char *host, const char *dir, const char *log, double limit_s)
{
    char cmd[PATH_MAX + 64] = "";
    int p[2];
    rg_shell_word(cmd, sizeof(cmd), "tar");
    rg_shell_word(cmd, sizeof(cmd), "-C");
    rg_shell_word(cmd, sizeof(cmd), dir);
    strncat(cmd, " -cf - .", sizeof(cmd) - strlen(cmd) - 1);
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid_t pids[2];
    pids[0] = start_ssh(host, cmd + 1, -1, NULL, p[1]);
    fflush(NULL);
    pids[1] = fork();
    if (pids[1] == 0) {
        if (dup2(p[0], 0) < 0)
            _exit(127);
        execlp("tar", "tar", "-C", dir, "-xf", "-", (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    close(p[1]);
    int st[2];
    wait_all(pids, st, 2, rg_now_s() + limit_s);
    if (st[0] != 0 || st[1] != 0) {
        fprintf(stderr,
                "railguard run: --hosts: could not bring %s's results of %s back (ssh tar exit "
                "%d, tar exit %d; %s)\n",
                host, dir, st[0], st[1], log);
        return -1;
    }
    return 0;
}

/* 64 hex digits from the kernel's random source, or -1. */
static int make_secret(char *out, size_t len)
{
    unsigned char b[HOSTS_SECRET_BYTES];
    if (len < 2 * sizeof(b) + 1 || getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
        return -1;
    for (size_t i = 0; i < sizeof(b); i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    explicit_bzero(b, sizeof(b));
    return 0;
}

/* One scenario's launch: its ranks started, waited for, brought together and judged. The
 * judgement's status (0 passed, 1 failed), or 2 when it could not be judged. */
static int launch(const struct run_opts *o, const struct sc_entry *e)
{
    static char cmd[RG_MAX_RANKS][5000];
    char dir[PATH_MAX + 256], token[PATH_MAX + 320], log[PATH_MAX + 320], secret[80], tok[80];
    char line[4400], env[96];
    int n = e->sc.ranks, st[RG_MAX_RANKS], in[RG_MAX_RANKS][2];
    pid_t pid[RG_MAX_RANKS];
    rg_run_fmt(dir, sizeof(dir), "%s/%s", o->out, e->sc.name);
    if (rg_mkdirs(dir) != 0 || make_secret(secret, sizeof(secret)) != 0 ||
        make_secret(tok, sizeof(tok)) != 0) {
        fprintf(stderr, "railguard run: --hosts: %s: cannot make it, or no random secret\n", dir);
        return 2;
    }
    /* Written here, looked for on each host: a host that sees it shares --out. */
    rg_run_fmt(token, sizeof(token), "%s/.rg-hosts-%.16s", dir, tok);
    FILE *tf = fopen(token, "w");
    if (!tf || fclose(tf) != 0) {
        fprintf(stderr, "railguard run: --hosts: cannot write %s\n", token);
        return 2;
    }
    rg_run_repro_line(line, sizeof(line), o,
                      (const char *const[]){"--external", "--coordinator", o->coordinator,
                                            "--devices-file", o->devices_file, NULL},
                      o->out, &e->sc, e->path);
    printf("railguard run: %s: %d rank(s) on %s over ssh\n", e->sc.name, n, o->hosts_arg);
    fflush(stdout);
    for (int r = 0; r < n; r++)
        pid[r] = -1;
    for (int r = 0; r < n; r++) {
        /* The secret is the command's first line of input, exported before the run. */
        snprintf(env, sizeof(env), "RG_RANK=%d RG_SIZE=%d", r, n);
        rg_run_fmt(cmd[r], sizeof(cmd[r]), "read -r RG_SECRET && export RG_SECRET %s && exec %s",
                   env, line);
        rg_run_fmt(log, sizeof(log), "%s/hosts-rank%d.log", dir, r);
        if (pipe2(in[r], O_CLOEXEC) != 0)
            break;
        pid[r] = start_ssh(o->host[r % o->nhosts], cmd[r], in[r][0], log, -1);
        close(in[r][0]);
        if (pid[r] > 0)
            dprintf(in[r][1], "%s\n", secret);
        close(in[r][1]);
    }
    explicit_bzero(secret, sizeof(secret));
    double limit = rg_now_s() + e->sc.deadline_s * (o->slow_scale + 1) + 120;
    int killed = wait_all(pid, st, n, limit);
    for (int r = 0; r < n; r++) {
        if (st[r] < 0 || st[r] > 1)
            printf("railguard run: %s: rank %d on %s: %s (exit %d); its output: "
                   "%s/hosts-rank%d.log\n",
                   e->sc.name, r, o->host[r % o->nhosts],
                   killed && st[r] < 0 ? "killed at the launch's limit"
                                       : "did not run to a verdict",
                   st[r], dir, r);
    }
    /* Each host once: where it wrote, brought here unless it is here already. */
    int rc = 0;
    for (int h = 0; h < o->nhosts && h < n && !rc; h++) {
        bool seen = false;
        for (int k = 0; k < h; k++)
            seen |= !strcmp(o->host[k], o->host[h]);
        if (seen)
            continue;
        char test[PATH_MAX + 340] = "";
        rg_shell_word(test, sizeof(test), "test");
        rg_shell_word(test, sizeof(test), "-e");
        rg_shell_word(test, sizeof(test), token);
        rg_run_fmt(log, sizeof(log), "%s/hosts-%d-share.log", dir, h);
        if (ssh_once(o->host[h], test + 1, log, 60) == 0)
            continue;
        rg_run_fmt(log, sizeof(log), "%s/hosts-%d-copy.log", dir, h);
        rc = bring_back(o->host[h], dir, log, 300);
    }
    unlink(token);
    if (rc)
        return 2;
    fflush(stdout);
    return rg_report_launch(dir);
}

int rg_run_hosts(const struct run_opts *o, const struct sc_entry *e, int n)
{
    int passed = 0, failed = 0, broken = 0;
    for (int i = 0; i < n; i++) {
        int st = launch(o, &e[i]);
        passed += st == 0;
        failed += st == 1;
        broken += st > 1;
        fflush(stdout);
    }
    /* One scenario's table already ends with its count. */
    if (n > 1 || broken) {
        printf("%d passed, %d failed", passed, failed);
        if (broken)
            printf(", %d not judged (their ranks' results could not be brought together)", broken);
        printf("\n");
    }
    return broken ? 2 : failed ? 1 : 0;
}
