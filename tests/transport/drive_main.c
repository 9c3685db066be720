/* SPDX-License-Identifier: MIT */
/* rg-drive - run N ranks of the reference transport on rxe and verify every collective. */
#include "drive.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int num(const char *flag, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || *end || end == v || n < lo || n > hi) {
        fprintf(stderr, "rg-drive: %s '%s' must be a number from %ld to %ld\n", flag, v ? v : "",
                lo, hi);
        return -1;
    }
    *out = n;
    return 0;
}

int main(int argc, char **argv)
{
    struct drive_opts o;
    struct drive_result r;
    int ncounts = 0;
    long v;
    drive_opts_default(&o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--lean")) {
            o.all_dtypes = 0;
            continue;
        }
        if (!strcmp(a, "--zcopy")) {
            o.zcopy = 1;
            continue;
        }
        i++;
        if (!strcmp(a, "--ranks")) {
            if (num(a, val, 1, 8, &v))
                return 2;
            o.ranks = (int)v;
        } else if (!strcmp(a, "--rails")) {
            if (num(a, val, 1, RG_MAX_RAILS, &v))
                return 2;
            o.rails = (int)v;
        } else if (!strcmp(a, "--cycles")) {
            if (num(a, val, 1, 1000, &v))
                return 2;
            o.cycles = (int)v;
        } else if (!strcmp(a, "--count")) {
            if (num(a, val, 1, 1L << 28, &v) || ncounts == 7) {
                if (ncounts == 7)
                    fprintf(stderr, "rg-drive: at most 7 --count options\n");
                return 2;
            }
            o.counts[ncounts++] = (size_t)v;
            o.counts[ncounts] = 0;
        } else if (!strcmp(a, "--timeout")) {
            if (num(a, val, 1, 3600, &v))
                return 2;
            o.timeout_s = (double)v;
        } else if (!strcmp(a, "--algo")) {
            if (!val || (strcmp(val, "ring") && strcmp(val, "mesh") && strcmp(val, "auto"))) {
                fprintf(stderr, "rg-drive: --algo '%s' must be ring, mesh or auto\n",
                        val ? val : "");
                return 2;
            }
            o.algo = !strcmp(val, "ring")   ? RG_ALGO_RING
                     : !strcmp(val, "mesh") ? RG_ALGO_MESH
                                            : RG_ALGO_AUTO;
        } else if (!strcmp(a, "--qp")) {
            if (!val || (strcmp(val, "uc") && strcmp(val, "rc"))) {
                fprintf(stderr, "rg-drive: --qp '%s' must be uc or rc\n", val ? val : "");
                return 2;
            }
            o.qp = !strcmp(val, "rc") ? RG_QPT_RC : RG_QPT_UC;
        } else {
            fprintf(stderr,
                    "rg-drive: unknown option '%s' (--ranks --rails --qp --algo --count "
                    "--cycles --timeout --lean --zcopy; timings: railguard bench)\n",
                    a);
            return 2;
        }
    }
    int rc = drive_run(&o, &r);
    printf("drive: %d ranks, %d rail(s), %s: %d checks verified in %.2f s%s%s\n", o.ranks, o.rails,
           o.qp == RG_QPT_RC ? "RC" : "UC", r.checks, r.seconds, rc ? ": FAILED: " : "",
           rc ? r.msg : "");
    return rc ? 1 : 0;
}
