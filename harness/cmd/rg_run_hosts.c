/* SPDX-License-Identifier: MIT */
/*
 * `railguard run --hosts a,b,...` (rg_run.h): railguard as its own launcher, where there is no
 * mpirun. Each rank is an --external run of this same railguard started on its host over ssh,
 * exactly as mpirun would start it (the launcher's rank in RG_RANK/RG_SIZE, the job's secret
 * on its standard input, never on a command line another user could read), run by `sh -c`
 * whatever the login shell is. Then the ranks' results are brought to one directory -- unless
 * the hosts share --out, which a token file written here and looked for there tells -- and
 * judged together by the code of `railguard report`. A rank's old files are removed before it
 * starts, here and there, and only ranks that ran to a verdict are judged: nothing left by an
 * earlier launch into the same --out is ever read as this one's. Every wait is bounded: a
 * host that never answers is killed at the scenario's deadline, scaled as a second attempt
 * would be, plus two minutes.
 *
 * Every ssh of one run to one host shares a single connection (OpenSSH's ControlMaster): a
 * launch makes four to six ssh calls, and in a soft-RoCE guest each handshake cost seconds, so
 * a two-rank scenario took 38-49 s against mpirun's 19-28 s (one ssh). The masters are this
 * process's children, in a private directory of its own, stopped when the run ends; a call
 * made while a master is not up connects on its own, as it would without one.
 */
#include "rg_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOSTS_SECRET_BYTES 32
#define HOSTS_CMD_MAX 6000

/* ssh without a terminal or a password prompt (a host that would ask fails at once), through
 * the host's shared connection when its master is up. */
#define SSH_ARGC 9
#define MUX_WAIT_S 30.0

/* The shared connections of this run: g_mux_dir/K is the socket of host g_mux_host[K]'s master
 * (a name of our own: a host's name could be too long for a socket's path). */
static char g_mux_dir[32];
static const char *g_mux_host[RG_MAX_RANKS];
static char g_mux_opt[RG_MAX_RANKS][64];
static int g_mux_n;

/* argv[0..SSH_ARGC) for an ssh to host: ControlMaster=no uses a master's socket when there is
 * one and connects on its own when there is none. */
static void ssh_args(const char *host, const char **argv)
{
    static const char *const base[] = {
        "ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-o", "ControlMaster=no", "-o"};
    for (int i = 0; i < SSH_ARGC - 1; i++)
        argv[i] = base[i];
    argv[SSH_ARGC - 1] = "ControlPath=none";
    for (int k = 0; k < g_mux_n; k++)
        if (!strcmp(g_mux_host[k], host))
            argv[SSH_ARGC - 1] = g_mux_opt[k];
}

/* Starts `ssh HOST CMD`, its stdin from in_fd (-1: /dev/null), stdout to out_fd and stderr to
 * err_fd. Its pid, or -1. */
static pid_t start_ssh(const char *host, const char *cmd, int in_fd, int out_fd, int err_fd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul < 0 || dup2(in_fd >= 0 ? in_fd : nul, 0) < 0 || dup2(out_fd, 1) < 0 ||
        dup2(err_fd, 2) < 0)
        _exit(127);
    const char *argv[SSH_ARGC + 3];
    ssh_args(host, argv);
    argv[SSH_ARGC] = host;
    argv[SSH_ARGC + 1] = cmd;
    argv[SSH_ARGC + 2] = NULL;
    execvp("ssh", (char *const *)argv);
    _exit(127);
}

/*
 * The masters: one `ssh -M -N` a distinct host, each this process's child, waited for until
 * its socket is there or it has exited, at most MUX_WAIT_S in all (they start side by side).
 * A host whose master did not come up is reached as without one; its own calls then say why.
 * Nothing here fails the run.
 */
static void mux_start(const struct run_opts *o, pid_t *master)
{
    g_mux_n = 0;
    snprintf(g_mux_dir, sizeof(g_mux_dir), "/tmp/rg-ssh.XXXXXX");
    if (!mkdtemp(g_mux_dir)) {
        g_mux_dir[0] = '\0';
        return;
    }
    for (int h = 0; h < o->nhosts && g_mux_n < RG_MAX_RANKS; h++) {
        bool seen = false;
        for (int k = 0; k < g_mux_n; k++)
            seen |= !strcmp(g_mux_host[k], o->host[h]);
        if (seen)
            continue;
        int k = g_mux_n++;
        g_mux_host[k] = o->host[h];
        snprintf(g_mux_opt[k], sizeof(g_mux_opt[k]), "ControlPath=%s/%d", g_mux_dir, k);
        fflush(NULL);
        pid_t self = getpid();
        master[k] = fork();
        if (master[k] == 0) {
            /* Gone with this process however it ends: no master outlives its run. */
            if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != self)
                _exit(0);
            int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
            if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
                _exit(127);
            execlp("ssh", "ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-o",
                   "ControlMaster=yes", "-o", "ControlPersist=no", "-o", g_mux_opt[k], "-N",
                   g_mux_host[k], (char *)NULL);
            _exit(127);
        }
    }
    double limit = rg_now_s() + MUX_WAIT_S;
    struct timespec tick = {0, 20 * 1000 * 1000};
    for (int k = 0; k < g_mux_n; k++) {
        char sock[sizeof(g_mux_dir) + 16];
        snprintf(sock, sizeof(sock), "%s/%d", g_mux_dir, k);
        struct stat sb;
        while (master[k] > 0 && rg_now_s() < limit && stat(sock, &sb) != 0) {
            if (waitpid(master[k], NULL, WNOHANG) == master[k])
                master[k] = 0; /* it gave up: this host's calls connect on their own */
            else
                nanosleep(&tick, NULL);
        }
    }
}

/* The masters stopped (a master ends its connection on SIGTERM) and their directory gone. */
static void mux_stop(pid_t *master)
{
    for (int k = 0; k < g_mux_n; k++)
        if (master[k] > 0) {
            kill(master[k], SIGTERM);
            waitpid(master[k], NULL, 0);
        }
    for (int k = 0; k < g_mux_n; k++) {
        char sock[sizeof(g_mux_dir) + 16];
        snprintf(sock, sizeof(sock), "%s/%d", g_mux_dir, k);
        unlink(sock);
    }
    if (g_mux_dir[0])
        rmdir(g_mux_dir);
    g_mux_n = 0;
    g_mux_dir[0] = '\0';
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

/* `sh -c 'INNER'` into out, so the remote login shell, whatever it is, runs a POSIX one. 0, or
 * -1 when it does not fit. */
static int as_sh(char *out, size_t len, const char *inner)
{
    out[0] = '\0';
    if (rg_shell_word(out, len, "sh") || rg_shell_word(out, len, "-c") ||
        rg_shell_word(out, len, inner))
        return -1;
    memmove(out, out + 1, strlen(out)); /* rg_shell_word's leading blank */
    return 0;
}

/* A shell-quoted word of at most len - 1 bytes into out: 0, or -1 when it does not fit. */
static int quoted(char *out, size_t len, const char *word)
{
    out[0] = '\0';
    if (rg_shell_word(out, len, word))
        return -1;
    memmove(out, out + 1, strlen(out));
    return 0;
}

/* Whether host sees path: `ssh HOST sh -c 'test -e PATH'` exits 0 within 60 s (rg_capture). */
static bool host_sees(const char *host, const char *cmd)
{
    const char *argv[SSH_ARGC + 3];
    char out[256], why[256];
    int status;
    ssh_args(host, argv);
    argv[SSH_ARGC] = host;
    argv[SSH_ARGC + 1] = cmd;
    argv[SSH_ARGC + 2] = NULL;
    return rg_capture((char *const *)argv, 60, out, sizeof(out), &status, why, sizeof(why)) == 0 &&
           WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * The files of the ranks placed on host (which does not share dir) brought here: `ssh HOST sh
 * -c 'cd DIR && tar -cf - rankR.* ...'` read into `tar -C DIR -xf -`, both bounded, both
 * writing their complaints into log. 0, or -1 after one line.
 */
static int bring_back(const char *host, const char *dir, const char *ranks, const char *log,
                      double limit_s)
{
    char qdir[PATH_MAX + 300], inner[HOSTS_CMD_MAX], cmd[HOSTS_CMD_MAX + 600];
    int p[2], fd = -1;
    if (quoted(qdir, sizeof(qdir), dir) ||
        snprintf(inner, sizeof(inner), "cd %s && tar -cf - %s", qdir, ranks) >=
            (int)sizeof(inner) ||
        as_sh(cmd, sizeof(cmd), inner)) {
        fprintf(stderr, "railguard run: --hosts: %s: too long for a command\n", dir);
        return -1;
    }
    if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0 ||
        pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "railguard run: --hosts: %s: %s\n", log, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    pid_t pids[2];
    pids[0] = start_ssh(host, cmd, -1, p[1], fd);
    pids[1] = fork();
    if (pids[1] == 0) {
        if (dup2(p[0], 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execlp("tar", "tar", "-C", dir, "-xf", "-", (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    close(p[1]);
    close(fd);
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

/* A rank's files (rankR.*) and the merged ones an earlier launch left in dir, removed. */
static void clear_old(const char *dir)
{
    static const char *const merged[] = {"result.json", "report.json", "junit.xml", "trace.json",
                                         "index.html"};
    DIR *d = opendir(dir);
    char path[2 * PATH_MAX];
    for (struct dirent *de; d && (de = readdir(d));) {
        int r, at = 0;
        bool old = sscanf(de->d_name, "rank%d.%n", &r, &at) == 1 && at > 0;
        for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++)
            old |= !strcmp(de->d_name, merged[i]);
        if (!old)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

/* Rank r's command: its old files removed there, the secret read, then the --external run.
 * 0, or -1 when it does not fit. */
static int rank_command(char *out, size_t len, const char *qdir, int r, int n, const char *line)
{
    char inner[HOSTS_CMD_MAX];
    int k = snprintf(inner, sizeof(inner),
                     "rm -f %s/rank%d.* && read -r RG_SECRET && export RG_SECRET RG_RANK=%d "
                     "RG_SIZE=%d && exec %s",
                     qdir, r, r, n, line);
    return k < 0 || k >= (int)sizeof(inner) ? -1 : as_sh(out, len, inner);
}

/* The secret and its newline in a pipe, before any child exists (no SIGPIPE can come of it):
 * the read end into fd, or -1. */
static int secret_pipe(const char *secret, int *fd)
{
    int p[2];
    size_t n = strlen(secret);
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    bool ok = write(p[1], secret, n) == (ssize_t)n && write(p[1], "\n", 1) == 1;
    close(p[1]);
    if (!ok) {
        close(p[0]);
        return -1;
    }
    *fd = p[0];
    return 0;
}

/* One scenario's launch: its ranks started, waited for, brought together and judged. The
 * judgement's status (0 passed, 1 failed), or 2 when it could not be judged (said). */
static int launch(const struct run_opts *o, const struct sc_entry *e)
{
    static char cmd[RG_MAX_RANKS][HOSTS_CMD_MAX + 600];
    char dir[PATH_MAX + 256], qdir[PATH_MAX + 300], token[PATH_MAX + 320], log[PATH_MAX + 320],
        secret[80], tok[80], line[4400];
    int n = e->sc.ranks, st[RG_MAX_RANKS];
    pid_t pid[RG_MAX_RANKS];
    rg_run_fmt(dir, sizeof(dir), "%s/%s", o->out, e->sc.name);
    if (rg_mkdirs(dir) != 0 || make_secret(secret, sizeof(secret)) != 0 ||
        make_secret(tok, sizeof(tok)) != 0) {
        fprintf(stderr, "railguard run: --hosts: %s: cannot make it, or no random secret\n", dir);
        return 2;
    }
    clear_old(dir);
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
    bool fits = strlen(line) + 1 < sizeof(line) && !quoted(qdir, sizeof(qdir), dir);
    for (int r = 0; r < n && fits; r++)
        fits = !rank_command(cmd[r], sizeof(cmd[r]), qdir, r, n, line);
    if (!fits) {
        fprintf(stderr, "railguard run: --hosts: %s: a rank's command is too long (its paths)\n",
                e->path);
        unlink(token);
        return 2;
    }
    printf("railguard run: %s: %d rank(s) on %s over ssh\n", e->sc.name, n, o->hosts_arg);
    fflush(stdout);
    for (int r = 0; r < n; r++) {
        int in = -1, fd;
        pid[r] = -1;
        rg_run_fmt(log, sizeof(log), "%s/hosts-rank%d.log", dir, r);
        if (secret_pipe(secret, &in) != 0 ||
            (fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
            if (in >= 0)
                close(in);
            continue; /* said below: it did not run to a verdict */
        }
        pid[r] = start_ssh(o->host[r % o->nhosts], cmd[r], in, fd, fd);
        close(in);
        close(fd);
    }
    explicit_bzero(secret, sizeof(secret));
    double limit = rg_now_s() + e->sc.deadline_s * (o->slow_scale + 1) + 120;
    int killed = wait_all(pid, st, n, limit), rc = 0;
    for (int r = 0; r < n; r++)
        if (st[r] < 0 || st[r] > 1) {
            printf("railguard run: %s: rank %d on %s: %s (exit %d); its output: "
                   "%s/hosts-rank%d.log\n",
                   e->sc.name, r, o->host[r % o->nhosts],
                   killed && st[r] < 0 ? "killed at the launch's limit"
                                       : "did not run to a verdict",
                   st[r], dir, r);
            rc = 2;
        }
    /* Each host once: the files of its ranks brought here unless it writes here already. */
    for (int h = 0; h < o->nhosts && h < n && !rc; h++) {
        bool seen = false;
        for (int k = 0; k < h; k++)
            seen |= !strcmp(o->host[k], o->host[h]);
        if (seen)
            continue;
        char test[PATH_MAX + 400], inner[PATH_MAX + 360], globs[HOSTS_CMD_MAX] = "";
        size_t used = 0;
        for (int r = 0; r < n; r++)
            if (!strcmp(o->host[r % o->nhosts], o->host[h]))
                used += (size_t)snprintf(globs + used, sizeof(globs) - used, " rank%d.*", r);
        if (used >= sizeof(globs) ||
            snprintf(inner, sizeof(inner), "test -e %s/%s", qdir, strrchr(token, '/') + 1) >=
                (int)sizeof(inner) ||
            as_sh(test, sizeof(test), inner)) {
            rc = 2;
            break;
        }
        if (host_sees(o->host[h], test))
            continue;
        rg_run_fmt(log, sizeof(log), "%s/hosts-%d-copy.log", dir, h);
        if (bring_back(o->host[h], dir, globs + 1, log, 300) != 0)
            rc = 2;
    }
    unlink(token);
    if (rc) {
        printf("railguard run: %s: not judged: not every rank's result is here\n", e->sc.name);
        return 2;
    }
    fflush(stdout);
    return rg_report_launch(dir);
}

int rg_run_hosts(const struct run_opts *o, const struct sc_entry *e, int n)
{
    int passed = 0, failed = 0, broken = 0;
    pid_t master[RG_MAX_RANKS] = {0};
    mux_start(o, master);
    for (int i = 0; i < n; i++) {
        int st = launch(o, &e[i]);
        passed += st == 0;
        failed += st == 1;
        broken += st > 1;
        fflush(stdout);
    }
    mux_stop(master);
    /* One scenario's table already ends with its count. */
    if (n > 1 || broken) {
        printf("%d passed, %d failed", passed, failed);
        if (broken)
            printf(", %d not judged (their ranks' results could not be brought together)", broken);
        printf("\n");
    }
    return broken ? 2 : failed ? 1 : 0;
}
