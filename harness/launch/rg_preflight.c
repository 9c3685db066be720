/* SPDX-License-Identifier: MIT */
/*
 * Preflight: what must hold before any rank starts, each refused with one line and exit 2
 * rather than discovered as a scenario's failure (or worse, as a pass): every device named is
 * an RDMA device here with an active port; the shim loads and answers with its control table;
 * the transport loads and has a plugin table. The same pass records what ran, for the reports:
 * kernel, railguard's version, the libibverbs the shim wraps, both objects' paths and build
 * ids, the devices and their GIDs.
 *
 * The shim and the transport are loaded in a child process: a shim's constructor may end the
 * process it is in (a bad plan in the environment), and neither may leave anything in ours.
 * Devices are read from sysfs, so the runner never links libibverbs.
 */
#include "launch/rg_launch.h"
#include "rg_faultinject.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define SYSFS_IB "/sys/class/infiniband"

/* A plugin's string, cut to fit, with anything but printable ASCII as '?'; "" for NULL. */
static void printable(char *out, size_t len, const char *in)
{
    size_t k = 0;
    for (; in && *in && k + 1 < len; in++)
        out[k++] = (*in >= 0x20 && *in < 0x7f) ? *in : '?'; /* a name may hold spaces */
    out[k] = '\0';
}

static int read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(out, (int)len, f))
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

/* The names under /sys/class/infiniband, comma-joined, for a message. */
static void list_devices(char *out, size_t len)
{
    DIR *d = opendir(SYSFS_IB);
    size_t o = 0;
    out[0] = '\0';
    if (!d) {
        snprintf(out, len, "no %s: no RDMA device at all", SYSFS_IB);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) && o < len;)
        if (e->d_name[0] != '.')
            o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : "", e->d_name);
    closedir(d);
    if (!out[0])
        snprintf(out, len, "%s is empty", SYSFS_IB);
}

/* Port 1 of a device must be ACTIVE; its non-zero GIDs are recorded. */
static int check_device(const char *name, rg_run_device *dv, char *err, size_t errlen)
{
    char path[512], state[32], have[256];
    snprintf(dv->name, sizeof(dv->name), "%s", name);
    snprintf(path, sizeof(path), SYSFS_IB "/%s/ports/1/state", name);
    if (strchr(name, '/') || read_line(path, state, sizeof(state)) != 0) {
        list_devices(have, sizeof(have));
        snprintf(err, errlen, "device '%s' is not an RDMA device here (%s)", name, have);
        return -1;
    }
    snprintf(dv->state, sizeof(dv->state), "%s", state);
    if (!strstr(state, "ACTIVE")) {
        snprintf(err, errlen, "device '%s': port 1 is '%s', not ACTIVE", name, state);
        return -1;
    }
    dv->ngids = 0;
    for (int i = 0; i < 16 && dv->ngids < RG_RUN_GIDS; i++) {
        char gid[48];
        snprintf(path, sizeof(path), SYSFS_IB "/%s/ports/1/gids/%d", name, i);
        if (read_line(path, gid, sizeof(gid)) != 0)
            break;
        if (strspn(gid, "0:") != strlen(gid))
            snprintf(dv->gids[dv->ngids++], sizeof(dv->gids[0]), "%s", gid);
    }
    return 0;
}

/* --- the child: load both objects, report what they are --------------------------------- */

struct build_id_ask {
    const char *path; /* realpath of the object */
    char *out;
    size_t len;
};

static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct build_id_ask *a = arg;
    (void)size;
    char *real = info->dlpi_name && *info->dlpi_name ? realpath(info->dlpi_name, NULL) : NULL;
    bool match = real && !strcmp(real, a->path);
    free(real);
    if (!match)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
            const char *name = p + sizeof(*nh);
            const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
            if ((const char *)desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                size_t o = 0;
                for (unsigned k = 0; k < nh->n_descsz && o + 3 < a->len; k++)
                    o += (size_t)snprintf(a->out + o, a->len - o, "%02x", desc[k]);
                return 1;
            }
            p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return 1;
}

static void build_id(const char *path, char *out, size_t len)
{
    char *real = realpath(path, NULL);
    struct build_id_ask a = {real ? real : path, out, len};
    snprintf(out, len, "none");
    dl_iterate_phdr(find_build_id, &a);
    free(real);
}

/* Runs in the child; writes "key=value" lines to fd; exits 0 when both objects are usable. */
static void probe_child(int fd, const char *shim, const char *transport)
{
    char id[64], verbs[PATH_MAX];
    FILE *out = fdopen(fd, "w");
    if (!out)
        _exit(3);
    /* The shim reads its plan and log from the environment: here it must find neither. */
    unsetenv("RG_FI_PLAN");
    unsetenv("RG_FI_PLAN_FILE");
    unsetenv("RG_FI_SNAPSHOT_SIGNAL");
    setenv("RG_FI_LOG", "/dev/null", 1);
    void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(out, "error=--shim %s: cannot be loaded: %s\n", shim, dlerror());
        fclose(out);
        _exit(1);
    }
    const struct rg_fi_control_v1 *c = dlsym(h, RG_FI_CONTROL_SYMBOL);
    if (!c || c->version != RG_FI_CONTROL_VERSION ||
        c->size < offsetof(struct rg_fi_control_v1, summary)) {
        fprintf(out, "error=--shim %s: not railguard's shim (no %s table of version %d)\n", shim,
                RG_FI_CONTROL_SYMBOL, RG_FI_CONTROL_VERSION);
        fclose(out);
        _exit(1);
    }
    build_id(shim, id, sizeof(id));
    fprintf(out, "shim_build_id=%s\n", id);
    void *v = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
    struct link_map *lm = NULL;
    if (v && dlinfo(v, RTLD_DI_LINKMAP, &lm) == 0 && lm && realpath(lm->l_name, verbs))
        fprintf(out, "verbs=%s\n", verbs);
    /* The table is checked here as each rank will check it, so a bad one stops the run once,
     * with one line, instead of failing every rank of every scenario. */
    rg_tp tp;
    char terr[1024];
    if (rg_tp_open(&tp, transport, terr, sizeof(terr)) != 0) {
        fprintf(out, "error=--transport %s: %s\n", transport, terr);
        fclose(out);
        _exit(1);
    }
    build_id(transport, id, sizeof(id));
    fprintf(out, "transport_build_id=%s\n", id);
    /* Names are the plugin's bytes: printable ASCII only reaches the reports. */
    char name[64], version[48];
    printable(name, sizeof(name), tp.name);
    printable(version, sizeof(version), tp.version);
    fprintf(out, "transport_name=%s\n", name);
    /* Its shape, which the scenarios that do not state one are fitted to (rg_sc_fit). */
    fprintf(out, "transport_shape=%u %d\n", (unsigned)tp.caps.qp_types, tp.caps.max_rails);
    /* What max and min make of a NaN: the special values check it only where declared. */
    static const char *const nan_says[RG_NAN_COUNT] = {
        [RG_NAN_UNDECLARED] = "not declared, not checked",
        [RG_NAN_PROPAGATE] = "propagated",
        [RG_NAN_IEEE] = "IEEE fmax/fmin",
    };
    fprintf(out, "transport_says=%s%s%s, plugin ABI %d, max/min of a NaN: %s\n", name,
            version[0] ? " " : "", version, tp.abi,
            nan_says[tp.caps.nan_minmax < RG_NAN_COUNT ? tp.caps.nan_minmax : 0]);
    fclose(out);
    _exit(0);
}

static int probe_objects(const char *shim, const char *transport, rg_run_info *info, char *err,
                         size_t errlen)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        probe_child(fds[1], shim, transport);
    }
    close(fds[1]);
    char buf[8192];
    size_t got = 0;
    for (ssize_t n;
         got < sizeof(buf) - 1 && (n = read(fds[0], buf + got, sizeof(buf) - 1 - got));) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    err[0] = '\0';
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(l, "error=", 6))
            snprintf(err, errlen, "%s", l + 6);
        else if (!strncmp(l, "verbs=", 6))
            snprintf(info->verbs, sizeof(info->verbs), "%s", l + 6);
        else if (!strncmp(l, "shim_build_id=", 14))
            snprintf(info->shim_build_id, sizeof(info->shim_build_id), "%s", l + 14);
        else if (!strncmp(l, "transport_build_id=", 19))
            snprintf(info->transport_build_id, sizeof(info->transport_build_id), "%s", l + 19);
        else if (!strncmp(l, "transport_name=", 15))
            snprintf(info->transport_name, sizeof(info->transport_name), "%s", l + 15);
        else if (!strncmp(l, "transport_shape=", 16))
            info->caps_known = sscanf(l + 16, "%u %d", &info->qp_types, &info->max_rails) == 2;
        else if (!strncmp(l, "transport_says=", 15))
            snprintf(info->transport_says, sizeof(info->transport_says), "%s", l + 15);
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (!err[0])
            snprintf(err, errlen, "--shim %s: loading it ended the process (%s %d)", shim,
                     WIFSIGNALED(st) ? "signal" : "status",
                     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        return -1;
    }
    return 0;
}

int rg_preflight(const char *shim, const char *transport, char (*devices)[64], int ndevices,
                 rg_run_info *info, char *err, size_t errlen)
{
    struct utsname u;
    memset(info, 0, sizeof(*info));
    snprintf(info->railguard, sizeof(info->railguard), "%s", rg_version_git());
    if (uname(&u) == 0)
        snprintf(info->kernel, sizeof(info->kernel), "%s %s %s", u.sysname, u.release, u.machine);
    snprintf(info->shim, sizeof(info->shim), "%s", shim);
    snprintf(info->transport, sizeof(info->transport), "%s", transport);
    for (int i = 0; i < ndevices; i++)
        if (check_device(devices[i], &info->dev[info->ndevices++], err, errlen) != 0)
            return -1;
    return probe_objects(shim, transport, info, err, errlen);
}

int rg_preflight_memlock(uint64_t need, char *err, size_t errlen)
{
    struct rlimit rl;
    /* Root has CAP_IPC_LOCK (as in the soft-RoCE guest): the limit does not apply. */
    if (geteuid() == 0 || getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    if ((uint64_t)rl.rlim_cur >= need)
        return 0;
    snprintf(err, errlen,
             "the locked-memory limit is %llu KiB, but the scenarios register up to %llu KiB per "
             "rank: raise it (ulimit -l, or limits.conf memlock) or run as root",
             (unsigned long long)rl.rlim_cur / 1024, (unsigned long long)(need + 1023) / 1024);
    return -1;
}
