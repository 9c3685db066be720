/* SPDX-License-Identifier: MIT */
/*
 * rg-smoke - the verbs smoke run: two processes move a known pattern over an rxe device,
 * UC and RC, verify it bit-exact, and print bytes moved and time. `make run` runs it on
 * soft-RoCE until the scenario runner takes over the main job.
 */
#include "vpair.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: rg-smoke [--device D] [--peer-device D] [--qp uc|rc|both] [--bytes N]\n"
               "                [--chunk N] [--window N] [--timeout S] [--seed N]\n"
               "  --device defaults to the first of $RG_SOFTROCE_DEVICES, else rxe0.\n");
}

/* Parses a positive size with an optional K/M/G suffix; 0 on any malformed input. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return 0;
    unsigned long long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1ull << 30, end++;
    if (*end || v > (1ull << 40) / mult)
        return 0;
    return (size_t)(v * mult);
}

static int run_one(struct vpair_opts *o)
{
    struct vpair_result r;
    const char *kind = o->kind == RG_QP_RC ? "RC" : "UC";
    vpair_run(o, &r);
    if (r.st != RG_OK) {
        printf("smoke %s %s -> %s: FAILED: %s (%s)\n", kind, o->send_dev, o->recv_dev, r.msg,
               rg_err_name(r.st));
        return 1;
    }
    printf("smoke %s %s -> %s: %zu bytes in %.3f s (%.1f MB/s), verified bit-exact\n", kind,
           o->send_dev, o->recv_dev, r.bytes_verified, r.seconds,
           r.seconds > 0 ? (double)r.bytes_verified / r.seconds / 1e6 : 0.0);
    return 0;
}

int main(int argc, char **argv)
{
    struct vpair_opts o;
    static char first_dev[64] = "rxe0";
    const char *qp = "both", *devs = getenv("RG_SOFTROCE_DEVICES");
    int peer_set = 0;

    vpair_opts_default(&o);
    o.bytes = 16u << 20;
    if (devs && *devs) {
        snprintf(first_dev, sizeof(first_dev), "%.*s", (int)strcspn(devs, " "), devs);
    }
    o.send_dev = o.recv_dev = first_dev;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!v) {
            fprintf(stderr, "rg-smoke: option '%s' needs a value (or is unknown)\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--device")) {
            o.send_dev = v;
            if (!peer_set)
                o.recv_dev = v;
        } else if (!strcmp(a, "--peer-device")) {
            o.recv_dev = v;
            peer_set = 1;
        } else if (!strcmp(a, "--qp")) {
            if (strcmp(v, "uc") && strcmp(v, "rc") && strcmp(v, "both")) {
                fprintf(stderr, "rg-smoke: --qp '%s' must be uc, rc or both\n", v);
                return 2;
            }
            qp = v;
        } else if (!strcmp(a, "--bytes") || !strcmp(a, "--chunk")) {
            size_t n = parse_size(v);
            if (!n || (a[2] == 'c' && n > (8u << 20))) {
                fprintf(stderr, "rg-smoke: %s '%s' must be a size like 4096, 64K or 16M%s\n", a, v,
                        a[2] == 'c' ? " (at most 8M, rxe's largest message)" : "");
                return 2;
            }
            *(a[2] == 'b' ? &o.bytes : &o.chunk) = n;
        } else if (!strcmp(a, "--window") || !strcmp(a, "--seed") || !strcmp(a, "--timeout")) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(v, &end, 10);
            if (errno || *end || end == v || n == 0 || n > 1000000 || v[0] == '-') {
                fprintf(stderr, "rg-smoke: %s '%s' must be a number from 1 to 1000000\n", a, v);
                return 2;
            }
            if (a[2] == 'w')
                o.window = (unsigned)n;
            else if (a[2] == 's')
                o.seed = n;
            else
                o.timeout_s = (double)n;
        } else {
            fprintf(stderr, "rg-smoke: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    int failed = 0;
    if (strcmp(qp, "rc")) {
        o.kind = RG_QP_UC;
        failed += run_one(&o);
    }
    if (strcmp(qp, "uc")) {
        o.kind = RG_QP_RC;
        failed += run_one(&o);
    }
    return failed ? 1 : 0;
}
