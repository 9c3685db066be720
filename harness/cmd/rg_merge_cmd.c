/* SPDX-License-Identifier: MIT */
/*
 * `railguard merge --out DIR SHARD_DIR...`: the shards of one sweep (railguard sweep --shard
 * K/N, each its own --out, on one machine or N) joined into the whole sweep's result
 * (sweep/rg_sweep.h): sweep.json, the table, JUnit and the page, as the unsharded sweep writes
 * them, with every point's scenario file (and a failure's shrunk program) copied beside them so
 * the reproduce lines hold. What does not make one sweep -- another plan, a shard missing or
 * twice, a point in two -- is one line and exit 2, and nothing is written.
 */
#include "cmd/rg_cmd.h"
#include "sweep/rg_sweep.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct merge_opts {
    char out[PATH_MAX - 64];
};

static const rg_opt merge_table[] = {
    {.name = "out",
     .kind = RG_OPT_PATH,
     .arg = "DIR",
     .help = "Where the merged result goes (default railguard-merge): sweep.json, sweep.txt, "
             "junit.xml, index.html and points/.",
     .off = offsetof(struct merge_opts, out),
     .len = sizeof(((struct merge_opts *)0)->out)},
};

const rg_cli rg_merge_cli = {
    .cmd = "merge",
    .synopsis = "[--out DIR] SHARD_DIR...",
    .about = "Joins the shards of one sweep (railguard sweep --shard K/N, each into its own "
             "--out) into the result the sweep gives unsharded: one sweep.json, table, JUnit "
             "file and page, identical in content. Every shard of one plan must be there, once. "
             "Exit status 0 when no point failed, 1 when some did, 2 when the shards do not "
             "make one sweep (said in one line, nothing written).",
    .opts = merge_table,
    .nopts = (int)(sizeof(merge_table) / sizeof(merge_table[0])),
};

/* src to dst, whole; 0, or -1 with err. */
static int copy(const char *src, const char *dst, char *err, size_t errlen)
{
    FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
    char buf[8192];
    size_t n;
    int rc = in && out ? 0 : -1;
    while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
    if (in && ferror(in))
        rc = -1;
    if (out && fclose(out) != 0)
        rc = -1;
    if (in)
        fclose(in);
    if (rc)
        snprintf(err, errlen, "cannot copy %.2000s to %.2000s: %s", src, dst, strerror(errno));
    return rc;
}

/* Every row's files from the shard that ran it (only checked that they are there, with
 * `check`: before anything is written). 0, or -1 with err. */
static int copy_points(const rg_sw_result *parts, char *const *dirs, int n, const char *out,
                       bool check, char *err, size_t errlen)
{
    char src[PATH_MAX + 64], dst[PATH_MAX + 64];
    for (int i = 0; i < n; i++)
        for (int w = 0; w < parts[i].nrows; w++) {
            const rg_sw_row *row = &parts[i].rows[w];
            for (int f = 0; f < 1 + !!row->shrunk[0]; f++) {
                char name[64];
                if (f)
                    snprintf(name, sizeof(name), "%s", row->shrunk);
                else
                    snprintf(name, sizeof(name), "points/%04d.yaml", row->n);
                snprintf(src, sizeof(src), "%s/%s", dirs[i], name);
                snprintf(dst, sizeof(dst), "%s/%s", out, name);
                if (check && access(src, R_OK) != 0) {
                    snprintf(err, errlen, "%s: %s: its point's file is not in its shard", src,
                             strerror(errno));
                    return -1;
                }
                if (!check && copy(src, dst, err, errlen))
                    return -1;
            }
        }
    return 0;
}

/* --out must not be a shard's directory: its files would be copied onto themselves. */
static int out_apart(const char *out, char *const *dirs, int n, char *err, size_t errlen)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (!realpath(out, a))
        return 0; /* not there yet: no shard's */
    for (int i = 0; i < n; i++)
        if (realpath(dirs[i], b) && !strcmp(a, b)) {
            snprintf(err, errlen, "--out %s is shard directory %s: name another", out, dirs[i]);
            return -1;
        }
    return 0;
}

int rg_merge_main(int argc, char **argv)
{
    static struct merge_opts o;
    static rg_sw_result parts[RG_SW_SHARDS_MAX], whole;
    char err[2 * PATH_MAX], path[PATH_MAX + 64];
    snprintf(o.out, sizeof(o.out), "railguard-merge");
    int first, rc = rg_cli_parse(&rg_merge_cli, argc, argv, &o, &first);
    if (rc)
        return rc == 1 ? 0 : rc;
    int n = argc - first;
    if (n < 1 || n > RG_SW_SHARDS_MAX) {
        fprintf(stderr, "railguard merge: %s\n",
                n < 1 ? "no SHARD_DIR: name every shard's --out directory" : "too many shards");
        return 2;
    }
    rc = 2;
    int read = 0;
    for (; read < n; read++) {
        snprintf(path, sizeof(path), "%s/sweep.json", argv[first + read]);
        if (rg_sw_read(&parts[read], path, err, sizeof(err)) != 0) {
            fprintf(stderr, "railguard merge: %s\n", err);
            goto out;
        }
    }
    if (rg_sw_merge(parts, n, &whole, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard merge: %s\n", err);
        goto out;
    }
    if (out_apart(o.out, argv + first, n, err, sizeof(err)) != 0 ||
        copy_points(parts, argv + first, n, o.out, true, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard merge: %s\n", err);
        goto out_whole;
    }
    snprintf(path, sizeof(path), "%s/points", o.out);
    if (rg_mkdirs(path) != 0) {
        fprintf(stderr, "railguard merge: --out: cannot create '%s': %s\n", path, strerror(errno));
        goto out_whole;
    }
    if (copy_points(parts, argv + first, n, o.out, false, err, sizeof(err)) != 0 ||
        rg_sw_write(&whole, o.out, err, sizeof(err)) != 0) {
        fprintf(stderr, "railguard merge: %s\n", err);
        goto out_whole;
    }
    rg_sw_table(stdout, &whole);
    int failed = 0;
    for (int i = 0; i < whole.nrows; i++)
        failed += whole.rows[i].state == RG_SW_FAILED;
    printf("railguard merge: %d shard(s) of %s into %s/sweep.json (and sweep.txt, junit.xml, "
           "index.html)\n",
           n, whole.name, o.out);
    rc = failed ? 1 : 0;
out_whole:
    rg_sw_free(&whole);
out:
    for (int i = 0; i < read; i++)
        rg_sw_free(&parts[i]);
    return rc;
}
