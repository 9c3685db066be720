/* SPDX-License-Identifier: MIT */
/*
 * The wire's system calls on Linux (rg_wire.h): the network device under an RDMA device from
 * sysfs, sch_netem and link state through iproute2's tc and ip (run to a deadline, never
 * through a shell), the counters from tc -s and sysfs. Needs CAP_NET_ADMIN; without it, each
 * action fails with tc's or ip's own words, which the evidence keeps.
 */
#include "wire/rg_wire.h"
#include "rg_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define WIRE_CMD_S 5.0 /* tc and ip answer in milliseconds; a stuck one is killed */

/* A one-line sysfs file into out (its newline cut): 0, or -1. */
static int read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *got = fgets(out, (int)len, f);
    fclose(f);
    if (!got)
        return -1;
    out[strcspn(out, "\n")] = '\0';
    return out[0] ? 0 : -1;
}

/* A name that is one path component: no '/', not "." or "..", not empty. */
static bool component(const char *s)
{
    return s[0] && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static int netdev_of(const char *rdma_dev, char *netdev, size_t len, char *why, size_t whylen)
{
    char path[512];
    if (!component(rdma_dev)) {
        snprintf(why, whylen, "'%.64s' is not an RDMA device name", rdma_dev);
        return -1;
    }
    /* Port 1's first GID's network device (every RoCE device, rxe and hardware alike); rxe
     * also says its own in "parent". */
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0", rdma_dev);
    if (read_line(path, netdev, len) == 0 && component(netdev))
        return 0;
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/parent", rdma_dev);
    if (read_line(path, netdev, len) == 0 && component(netdev))
        return 0;
    snprintf(why, whylen,
             "no network device under it (neither /sys/class/infiniband/%.64s/ports/1/gid_attrs/"
             "ndevs/0 nor .../parent): wire faults need a RoCE device",
             rdma_dev);
    return -1;
}

/* Runs argv; 0 when it exited 0, else -1 with its words (its stderr is not kept: its status
 * and the command are). */
static int run(char *const argv[], char *out, size_t outlen, char *why, size_t whylen)
{
    int st = 0;
    if (rg_capture(argv, WIRE_CMD_S, out, outlen, &st, why, whylen) != 0)
        return -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    size_t used = 0;
    for (int i = 0; argv[i] && used < whylen; i++)
        used += (size_t)snprintf(why + used, whylen - used, "%s%s", i ? " " : "", argv[i]);
    if (used < whylen)
        snprintf(why + used, whylen - used, ": exit status %d%s",
                 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                 WIFEXITED(st) && WEXITSTATUS(st) == 2
                     ? " (no CAP_NET_ADMIN, no sch_netem, or a qdisc already there)"
                     : "");
    return -1;
}

static int netem_on(const char *netdev, const char *spec, char *why, size_t whylen)
{
    char words[200], *argv[40];
    int n = 0;
    snprintf(words, sizeof(words), "%s", spec);
    argv[n++] = "tc";
    argv[n++] = "qdisc";
    argv[n++] = "add";
    argv[n++] = "dev";
    argv[n++] = (char *)netdev;
    argv[n++] = "root";
    argv[n++] = "netem";
    for (char *save = NULL, *t = strtok_r(words, " ", &save); t && n < 39;
         t = strtok_r(NULL, " ", &save))
        argv[n++] = t;
    argv[n] = NULL;
    char out[64];
    return run(argv, out, sizeof(out), why, whylen);
}

static int netem_off(const char *netdev, char *why, size_t whylen)
{
    char out[64];
    return run((char *[]){"tc", "qdisc", "del", "dev", (char *)netdev, "root", NULL}, out,
               sizeof(out), why, whylen);
}

static int netem_clean(const char *netdev, char *why, size_t whylen)
{
    char out[64];
    /* netem's change resets delay, jitter, loss, duplication and reordering, but keeps a
     * corruption rate it is not given again. */
    return run((char *[]){"tc", "qdisc", "change", "dev", (char *)netdev, "root", "netem", "delay",
                          "0ms", "corrupt", "0%", NULL},
               out, sizeof(out), why, whylen);
}

static int link_set(const char *netdev, bool up, char *why, size_t whylen)
{
    char out[64];
    return run((char *[]){"ip", "link", "set", "dev", (char *)netdev, up ? "up" : "down", NULL},
               out, sizeof(out), why, whylen);
}

static int counts(const char *netdev, rg_wire_counts *c, char *why, size_t whylen)
{
    char path[512], line[64], out[4096];
    c->sent_pkts = c->dropped = c->carrier_changes = -1;
    c->up = false;
    snprintf(path, sizeof(path), "/sys/class/net/%s/carrier_changes", netdev);
    if (read_line(path, line, sizeof(line)) == 0)
        c->carrier_changes = strtoll(line, NULL, 10);
    snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", netdev);
    if (read_line(path, line, sizeof(line)) == 0)
        c->up = !strcmp(line, "up") || !strcmp(line, "unknown");
    if (run((char *[]){"tc", "-s", "qdisc", "show", "dev", (char *)netdev, NULL}, out, sizeof(out),
            why, whylen) != 0)
        return -1;
    if (rg_wire_parse_qdisc(out, &c->sent_pkts, &c->dropped) != 0) {
        snprintf(why, whylen, "tc -s qdisc show dev %s: no netem qdisc there", netdev);
        return -1;
    }
    return 0;
}

/* One of port 1's hw_counters of an RDMA device: its value, or -1. */
static int64_t hw_counter(const char *rdma_dev, const char *name)
{
    char path[512], line[64];
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", rdma_dev, name);
    if (read_line(path, line, sizeof(line)) != 0)
        return -1;
    uint64_t v;
    return rg_parse_uint(line, false, 0, INT64_MAX, &v) ? -1 : (int64_t)v;
}

static int nic(const char *rdma_dev, rg_wire_nic *n, char *why, size_t whylen)
{
    if (!component(rdma_dev)) {
        snprintf(why, whylen, "'%.64s' is not an RDMA device name", rdma_dev);
        return -1;
    }
    n->rcvd_pkts = hw_counter(rdma_dev, "rcvd_pkts");
    n->dup = hw_counter(rdma_dev, "duplicate_request");
    n->oos = hw_counter(rdma_dev, "out_of_seq_request");
    if (n->rcvd_pkts < 0 || n->dup < 0 || n->oos < 0) {
        snprintf(why, whylen,
                 "/sys/class/infiniband/%.64s/ports/1/hw_counters has no rcvd_pkts, "
                 "duplicate_request and out_of_seq_request (soft-RoCE's names)",
                 rdma_dev);
        return -1;
    }
    return 0;
}

const rg_wire_sys rg_wire_sys_linux = {
    .netdev_of = netdev_of,
    .netem_on = netem_on,
    .netem_off = netem_off,
    .netem_clean = netem_clean,
    .link = link_set,
    .counts = counts,
    .nic = nic,
};
