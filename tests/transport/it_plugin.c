/* SPDX-License-Identifier: MIT */
/*
 * The reference transport through its plugin: railguard-transport.so is dlopen-ed the way the
 * runner will, its table checked, and 3 ranks run every operation through it with results
 * checked against values computed here. A bad devices file must fail init with a message, and
 * a bad argument must fail the call with last_error saying why.
 */
#include "common/rg_check.h"
#include "railguard.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_so[PATH_MAX], g_devfile[PATH_MAX], g_coord[64], devs[8][64];

static void setup(void)
{
    rg_check_build_file(g_so, sizeof(g_so), "lib/railguard-transport.so");
    ck_assert_int_gt(rg_check_devices(devs, 8), 0);
    /* The plugin's args carry no secret: the transport reads its launcher's, as here. */
    setenv("RG_SECRET", "it-plugin-loopback-secret", 1);
}

static void write_devices(int n)
{
    snprintf(g_devfile, sizeof(g_devfile), "/tmp/rg-plugin-devs.%ld.json", (long)getpid());
    FILE *f = fopen(g_devfile, "w");
    ck_assert_ptr_nonnull(f);
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        fputs(i ? ",[" : "[", f);
        for (int j = 0; j < n; j++)
            fprintf(f, "%s%s%s%s", j ? "," : "", i == j ? "null" : "\"", i == j ? "" : devs[0],
                    i == j ? "" : "\"");
        fputc(']', f);
    }
    fputs("]\n", f);
    fclose(f);
    snprintf(g_coord, sizeof(g_coord), "127.0.0.1:%d", rg_check_free_port());
}

static const rg_plugin *load(void)
{
    void *h = dlopen(g_so, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", g_so, dlerror());
        return NULL;
    }
    return dlsym(h, RG_PLUGIN_V2_SYMBOL);
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "rank %d: ", rank);                                                        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        return 1;                                                                                  \
    } while (0)

/* One rank's program; returns its exit status. */
static int rank_main(int rank, int n)
{
    enum { COUNT = 1021 };
    const rg_plugin *p = load();
    char err[512] = "";
    rg_status st;
    if (!p)
        FAIL("no %s in %s", RG_PLUGIN_V2_SYMBOL, g_so);
    if (p->abi_version != RG_PLUGIN_ABI_VERSION || p->size != sizeof(*p) ||
        strcmp(p->name, "railguard") || !p->caps || p->caps->size != sizeof(rg_plugin_caps))
        FAIL("table: version %u size %u name %s", p->abi_version, p->size, p->name);
    /* The reference declares everything. */
    if (p->caps->ops != RG_BIT(RG_OP_COUNT) - 1 || p->caps->dtypes != RG_BIT(RG_DTYPE_COUNT) - 1 ||
        p->caps->redops[RG_OP_REDUCE_SCATTER] != RG_BIT(RG_REDOP_COUNT) - 1 ||
        !(p->caps->flags & RG_CAP_IN_PLACE))
        FAIL("caps: ops %#x dtypes %#x", p->caps->ops, p->caps->dtypes);
    rg_plugin_args a = {.size = sizeof(a),
                        .rank = rank,
                        .nranks = n,
                        .coordinator = g_coord,
                        .devices_file = g_devfile,
                        .qp_type = RG_QPT_UC,
                        .algo = RG_ALGO_AUTO,
                        .timeout_s = 20};
    void *h = NULL;
    if ((st = p->init(&a, &h, err, sizeof(err))) || !h)
        FAIL("init: %s: %s", rg_plugin_status_name(st), err);

    static int32_t in[COUNT * 8], out[COUNT * 8];
    for (int i = 0; i < COUNT; i++)
        in[i] = i * 3 + rank;
    if (p->all_reduce(h, in, out, COUNT, RG_INT32, RG_SUM))
        FAIL("all_reduce: %s", p->last_error(h));
    /* What it ran: the ring (3 ranks, auto, small: mesh) or the mesh, over at least a rail. */
    rg_plugin_call call = {.size = sizeof(call)};
    if (p->last_call(h, &call) || (call.algo != RG_ALGO_RING && call.algo != RG_ALGO_MESH) ||
        call.rails < 1)
        FAIL("last_call: algo %d rails %d", (int)call.algo, call.rails);
    for (int i = 0; i < COUNT; i++)
        if (out[i] != n * i * 3 + n * (n - 1) / 2)
            FAIL("all_reduce[%d] = %d", i, out[i]);
    if (p->all_gather(h, in, out, COUNT, RG_INT32))
        FAIL("all_gather: %s", p->last_error(h));
    for (int r = 0; r < n; r++)
        for (int i = 0; i < COUNT; i++)
            if (out[r * COUNT + i] != i * 3 + r)
                FAIL("all_gather[%d][%d] = %d", r, i, out[r * COUNT + i]);
    for (int i = 0; i < COUNT * n; i++)
        in[i] = i + rank;
    if (p->reduce_scatter(h, in, out, COUNT, RG_INT32, RG_MAX))
        FAIL("reduce_scatter: %s", p->last_error(h));
    for (int i = 0; i < COUNT; i++)
        if (out[i] != rank * COUNT + i + n - 1)
            FAIL("reduce_scatter[%d] = %d", i, out[i]);
    for (int i = 0; i < COUNT; i++)
        out[i] = rank == 1 ? 7 * i : -1;
    if (p->broadcast(h, out, COUNT, RG_INT32, 1))
        FAIL("broadcast: %s", p->last_error(h));
    for (int i = 0; i < COUNT; i++)
        if (out[i] != 7 * i)
            FAIL("broadcast[%d] = %d", i, out[i]);
    if (rank == 0 && p->send(h, in, 5, RG_INT32, n - 1))
        FAIL("send: %s", p->last_error(h));
    if (rank == n - 1) {
        if (p->recv(h, out, 5, RG_INT32, 0))
            FAIL("recv: %s", p->last_error(h));
        for (int i = 0; i < 5; i++)
            if (out[i] != i)
                FAIL("recv[%d] = %d", i, out[i]);
    }
    if (p->barrier(h))
        FAIL("barrier: %s", p->last_error(h));
    if (p->last_call(h, &call) || call.algo != RG_ALGO_AUTO || call.rails != 0)
        FAIL("last_call after barrier: algo %d rails %d", (int)call.algo, call.rails);
    /* A reduction the type lacks is RG_ERR_UNSUPPORTED: the handle goes on. */
    if ((st = p->all_reduce(h, in, out, 1, RG_COMPLEX64, RG_MAX)) != RG_ERR_UNSUPPORTED)
        FAIL("complex64 max: %s", rg_plugin_status_name(st));
    /* A bad argument fails the call and says so, without poisoning the handle. */
    if ((st = p->broadcast(h, out, 1, RG_INT32, n + 3)) != RG_ERR_INVALID)
        FAIL("broadcast to root %d: %s", n + 3, rg_plugin_status_name(st));
    if (!*p->last_error(h))
        FAIL("no last_error after a bad root");
    if (p->finalize(h))
        FAIL("finalize failed");
    return 0;
}

START_TEST(test_plugin_collectives)
{
    const int n = 3;
    pid_t pids[8];
    write_devices(n);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        ck_assert_int_ge(pids[r], 0);
        if (pids[r] == 0)
            _exit(rank_main(r, n));
    }
    int failed = 0;
    for (int r = 0; r < n; r++) {
        int st;
        ck_assert_int_eq(waitpid(pids[r], &st, 0), pids[r]);
        failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    unlink(g_devfile);
    ck_assert_msg(failed == 0, "%d rank(s) failed (see their lines above)", failed);
}
END_TEST

START_TEST(test_plugin_bad_init)
{
    const rg_plugin *p = load();
    char err[512] = "";
    void *h = NULL;
    ck_assert_ptr_nonnull(p);
    rg_plugin_args a = {.size = sizeof(a),
                        .rank = 0,
                        .nranks = 2,
                        .coordinator = "127.0.0.1:1",
                        .devices_file = "/nonexistent/devices.json",
                        .timeout_s = 5};
    ck_assert_int_ne(p->init(&a, &h, err, sizeof(err)), RG_OK);
    ck_assert_ptr_null(h);
    ck_assert_msg(strstr(err, "/nonexistent/devices.json"), "init error: '%s'", err);
    a.size = 4;
    ck_assert_int_eq(p->init(&a, &h, err, sizeof(err)), RG_ERR_INVALID);
    ck_assert_ptr_null(h);
    ck_assert_msg(strstr(err, "args too small"), "init error: '%s'", err);
}
END_TEST

Suite *rg_suite_it_plugin(void)
{
    Suite *s = suite_create("it_plugin");
    TCase *t = tcase_create("plugin");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_plugin_collectives);
    tcase_add_test(t, test_plugin_bad_init);
    suite_add_tcase(s, t);
    return s;
}
