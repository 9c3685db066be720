/* SPDX-License-Identifier: MIT */
#include "rg_check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The linker's bounds of .bss (GNU ld and gold, lld alike). */
extern char __bss_start[], _end[];

/*
 * Every page of .bss read once, here in the parent: each test runs in a forked child, and under
 * ASan its LeakSanitizer reads all of .bss when the child exits. A page the parent never touched
 * faults in every child (some 7,000 faults a test for the tests' large static tables; this took
 * unit-asan from 3 to 9 minutes); one read maps the shared zero page, and fork copies that.
 */
__attribute__((no_sanitize_address)) static void bss_touch(void) /* redzones are read too */
{
    long page = sysconf(_SC_PAGESIZE);
    volatile const char *p = __bss_start;
    unsigned sum = 0;
    for (; p<(volatile const char *)_end; p += page> 0 ? page : 4096)
        sum += (unsigned)*p;
    (void)sum;
}

/*
 * The run's scratch directory: every test's temporary files go under it (rg_check_write_temp,
 * rg_check_tmpdir), and the parent removes it when the run ends, so a run leaves nothing in
 * /tmp -- each test is a forked child, and a failing one never reaches its own cleanup.
 */
static char g_tmpdir[64];

const char *rg_check_tmpdir(void)
{
    if (!g_tmpdir[0]) {
        strcpy(g_tmpdir, "/tmp/rg-check.XXXXXX");
        if (!mkdtemp(g_tmpdir)) {
            fprintf(stderr, "rg_check: mkdtemp %s: %s\n", g_tmpdir, strerror(errno));
            abort();
        }
    }
    return g_tmpdir;
}

static int g_rm_failed;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_DNR || remove(path) != 0)
        g_rm_failed = 1;
    return 0;
}

int rg_check_main(const char *label, Suite *(*const *suites)(void), int n)
{
    bss_touch();
    /* RG_CHECK_SHARD=K/N: every Nth suite from the Kth, so N processes share the cores (make
     * check runs the ASan build's tests so: its leak check makes them slow, not the tests). */
    int k = 1, nsh = 1;
    const char *shard = getenv("RG_CHECK_SHARD");
    if (shard && *shard) {
        char end;
        if (sscanf(shard, "%d/%d%c", &k, &nsh, &end) != 2 || nsh < 1 || k < 1 || k > nsh) {
            fprintf(stderr, "%s: RG_CHECK_SHARD=%s: want K/N with 1 <= K <= N\n", label, shard);
            return 2;
        }
    }
    (void)rg_check_tmpdir(); /* made before the forks, so that every test shares it */
    SRunner *sr = srunner_create(NULL);
    for (int i = 0; i < n; i++)
        if (i % nsh == k - 1)
            srunner_add_suite(sr, suites[i]());
    /* Forked always: a crash or hang in one test is that test's failure, not the run's end. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (nftw(g_tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0 || g_rm_failed)
        fprintf(stderr, "%s: could not remove all of %s\n", label, g_tmpdir);
    printf("%s: %d passed, %d failed\n", label, run - failed, failed);
    const char *tally = getenv("RG_TALLY");
    if (tally && *tally) {
        FILE *f = fopen(tally, "a");
        if (!f) {
            fprintf(stderr, "%s: cannot append to RG_TALLY file %s\n", label, tally);
            return 1;
        }
        fprintf(f, "%s %d %d\n", label, run - failed, failed);
        fclose(f);
    }
    /* A run that executed nothing is not a pass. */
    return failed == 0 && run > 0 ? 0 : 1;
}

int rg_check_devices(char names[][64], int max)
{
    const char *s = getenv("RG_SOFTROCE_DEVICES");
    int n = 0;
    while (s && *s && n < max) {
        size_t len = strcspn(s, " ");
        if (len > 0 && len < 64) {
            memcpy(names[n], s, len);
            names[n][len] = '\0';
            n++;
        }
        s += len;
        s += strspn(s, " ");
    }
    return n;
}

void rg_check_build_file(char *out, size_t len, const char *rel)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ck_assert_msg(n > 0, "cannot read /proc/self/exe");
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    ck_assert_ptr_nonnull(slash);
    *slash = '\0';
    int w = snprintf(out, len, "%s/../%s", exe, rel);
    ck_assert_msg(w > 0 && (size_t)w < len, "path of %s too long", rel);
}

int rg_check_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &alen) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

void rg_check_write_temp(char *path, const char *data, size_t len)
{
    snprintf(path, 64, "%s/t_XXXXXX", rg_check_tmpdir());
    int fd = mkstemp(path);
    ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        ck_assert_msg(w > 0, "write %s: %s", path, strerror(errno));
        off += (size_t)w;
    }
    ck_assert_int_eq(close(fd), 0);
}

pid_t rg_check_launch_rank(const char *bin, const char *const *wrap, int rank, int size,
                           const char *const *args, const char *log)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char r[16], n[16];
        const char *argv[48];
        int a = 0;
        for (int i = 0; wrap && wrap[i] && a < 16; i++)
            argv[a++] = wrap[i];
        argv[a++] = bin;
        for (int i = 0; args[i] && a < 47; i++)
            argv[a++] = args[i];
        argv[a] = NULL;
        snprintf(r, sizeof(r), "%d", rank);
        snprintf(n, sizeof(n), "%d", size);
        setenv("PMI_RANK", r, 1);
        setenv("PMI_SIZE", n, 1);
        /* What a launcher hands every rank alike: the side channel's secret. */
        setenv("RG_SECRET", "it-run-external-launch-secret", 1);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

int rg_check_wait_rank(pid_t pid, const char *log, double timeout_s)
{
    int st;
    for (int i = 0; i < timeout_s * 20 && waitpid(pid, &st, WNOHANG) == 0; i++)
        usleep(50000);
    if (waitpid(pid, &st, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        ck_abort_msg("rank did not finish in %.0f s (log %s)", timeout_s, log);
    }
    ck_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

int rg_check_cmd(const char *bin, const char *const *env, const char *const *args, double timeout_s,
                 char *out, size_t outlen)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const char *argv[64] = {bin};
        int a = 1;
        for (int i = 0; args[i] && a < 63; i++)
            argv[a++] = args[i];
        argv[a] = NULL;
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        for (int i = 0; env && env[i] && env[i + 1]; i += 2)
            setenv(env[i], env[i + 1], 1);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        clock_gettime(CLOCK_MONOTONIC, &t);
        double left = timeout_s - ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
        if (left <= 0) {
            kill(pid, SIGKILL);
            break;
        }
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        ssize_t n = read(fds[0], out + len, outlen - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    out[len] = '\0';
    close(fds[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st), "%s was killed (timeout %.0f s); output:\n%s", bin, timeout_s,
                  out);
    return WEXITSTATUS(st);
}

char *rg_check_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f, "cannot open %s", path);
    char *buf = calloc(1, 1 << 16);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_gt(fread(buf, 1, (1 << 16) - 1, f), 0);
    fclose(f);
    return buf;
}
