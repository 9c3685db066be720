/* SPDX-License-Identifier: MIT */
/*
 * A hung rank's backtrace named (launch/rg_symbolize.c): C++ names cut to a frame's name; a
 * frame of this very test binary named with its function and file by addr2line, whether the
 * dump gave an offset or a symbol; named once; an object addr2line cannot read said on the
 * marker line; and the signature's frames read from the named section only.
 */
#include "common/rg_check.h"
#include "judge/rg_judge.h"
#include "launch/rg_launch.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(test_sym_norm)
{
    static const char *const cases[][2] = {
        {"void jaccl::MeshImpl::all_reduce<float, jaccl::SumOp<float> >(float const*, float*, "
         "long, jaccl::SumOp<float>)",
         "jaccl::MeshImpl::all_reduce"},
        {"jaccl::poll(std::span<jaccl::Connection const, 18446744073709551615ul>, int, ibv_wc*)",
         "jaccl::poll"},
        {"(anonymous namespace)::ad_all_reduce(void*, unsigned long)", "{anon}::ad_all_reduce"},
        {"std::vector<int>::operator[](unsigned long) const", "std::vector::operator[]"},
        {"foo::operator<(foo const&)", "foo::operator<"},
        {"ns::f<2>(int)::{lambda(int)#1}::operator()(int) const", "ns::f"},
        {"rg_all_reduce", "rg_all_reduce"},
        {"", "??"},
    };
    char out[256];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rg_sym_norm(cases[i][0], out, sizeof(out));
        ck_assert_msg(!strcmp(out, cases[i][1]), "'%s' -> '%s', not '%s'", cases[i][0], out,
                      cases[i][1]);
    }
    rg_sym_norm("a_rather_long_function_name", out, 8);
    ck_assert_str_eq(out, "a_rathe");
}
END_TEST

/* A function of this binary for addr2line to find; noinline so it has an address of its own. */
int rg_test_symbolize_target(int x);
__attribute__((noinline)) int rg_test_symbolize_target(int x)
{
    return x * 3 + 1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

START_TEST(test_symbolize_self)
{
    Dl_info di;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    ck_assert(dladdr((void *)rg_test_symbolize_target, &di) != 0);
    /* The offset a dump would give: past the function's first byte, as a return address is. */
    uintptr_t off = (uintptr_t)rg_test_symbolize_target - (uintptr_t)di.dli_fbase + 4;
    char dump[9000];
    snprintf(dump, sizeof(dump),
             "railguard worker pid 1: asked for a backtrace at the deadline\n"
             "/lib/x86_64-linux-gnu/libc.so.6(pthread_spin_lock+0x5)[0x7f01]\n"
             "%s(+0x%lx)[0x55d1]\n"
             "%s(rg_test_symbolize_target+0x4)[0x55d2]\n",
             exe, (unsigned long)off, exe);
    char path[64], why[700];
    rg_check_write_temp(path, dump, strlen(dump));
    ck_assert_int_eq(rg_bt_symbolize(path, why, sizeof(why)), 0);
    ck_assert_str_eq(why, "");
    char *text = slurp(path);
    ck_assert_ptr_nonnull(strstr(text, dump)); /* the raw dump stays, first */
    const char *named = strstr(text, RG_BT_NAMED_MARK " (dump 1)\n");
    ck_assert_ptr_nonnull(named);
    /* Both frames named, by offset and by symbol, with this file. */
    const char *a = strstr(named, "#1  0x");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(strstr(a, " in rg_test_symbolize_target (rg_test_symbolize_target) at "));
    ck_assert_ptr_nonnull(strstr(a, "test_symbolize.c:"));
    ck_assert_ptr_nonnull(strstr(a, "#2  0x4 in rg_test_symbolize_target"));
    /* Once: a second call adds nothing. */
    size_t len = strlen(text);
    ck_assert_int_eq(rg_bt_symbolize(path, why, sizeof(why)), 0);
    ck_assert_uint_eq(strlen(slurp(path)), len);
    /* The signature reads the named frames (libc's is passed over). */
    char f[4][96];
    ck_assert_int_eq(rg_sig_frames(slurp(path), f, 4), 1);
    ck_assert_str_eq(f[0], "rg_test_symbolize_target");
    unlink(path);
    ck_assert_int_eq(rg_test_symbolize_target(1), 4);
}
END_TEST

/* A verbs call as a transport makes it: ibv_poll_cq is an inline call through the context's
 * ops, which the shim patches; the patched function's return address is the call site. */
static uintptr_t g_ra;
__attribute__((noinline)) static int fake_poll(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
    (void)cq;
    (void)ne;
    (void)wc;
    g_ra = (uintptr_t)__builtin_return_address(0);
    return 0;
}
int rg_test_polls_here(struct ibv_cq *cq);
__attribute__((noinline)) int rg_test_polls_here(struct ibv_cq *cq)
{
    struct ibv_wc wc;
    return ibv_poll_cq(cq, 1, &wc); /* the site */
}

/* rg_test_polls_here's poll site, as an offset into this binary, and the binary's path. */
static uint64_t poll_site(char exe[PATH_MAX])
{
    static struct ibv_context ctx;
    static struct ibv_cq cq;
    ctx.ops.poll_cq = fake_poll;
    cq.context = &ctx;
    ck_assert_int_eq(rg_test_polls_here(&cq), 0);
    Dl_info di;
    ck_assert(dladdr((void *)g_ra, &di) != 0);
    ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    return (uint64_t)(g_ra - (uintptr_t)di.dli_fbase);
}

START_TEST(test_sym_sites)
{
    char exe[PATH_MAX];
    /* The site, and an offset in no function this binary has debug information for. */
    uint64_t off[2] = {poll_site(exe), 0x10};
    rg_sym_site out[2];
    char why[700];
    ck_assert_int_eq(rg_sym_sites(exe, off, 2, out, why, sizeof(why)), 0);
    /* The caller, not verbs.h's inline ibv_poll_cq, and not the discriminator. */
    ck_assert_str_eq(out[0].func, "rg_test_polls_here");
    ck_assert_msg(strstr(out[0].where, "test_symbolize.c:") && !strstr(out[0].where, "discrim"),
                  "%s", out[0].where);
    ck_assert_str_eq(out[1].func, "");
    ck_assert_str_eq(out[1].where, "");
    /* An object addr2line cannot read: said, nothing named. */
    ck_assert_int_eq(rg_sym_sites("/nonexistent/libgone.so", off, 1, out, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "/nonexistent/libgone.so"));
    ck_assert_str_eq(out[0].func, "");
}
END_TEST

/*
 * Debug information in a file of its own, as Debian's -dbgsym packages ship it: this binary
 * copied with its debug sections stripped and a link to a file holding them (objcopy's
 * --add-gnu-debuglink; a -dbgsym package is found by build-id instead, which addr2line follows
 * the same way from /usr/lib/debug). The site still reads as the function and its line.
 */
START_TEST(test_sym_separate_debug)
{
    rg_sym_site out[1];
    char exe[PATH_MAX], dir[] = "/tmp/rg-dbg-XXXXXX", cmd[4 * PATH_MAX], why[700];
    uint64_t off = poll_site(exe);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof(cmd),
             "cd %s && objcopy --only-keep-debug '%s' prog.debug && objcopy --strip-debug '%s' "
             "prog && objcopy --add-gnu-debuglink=prog.debug prog",
             dir, exe, exe);
    ck_assert_int_eq(system(cmd), 0);
    char stripped[PATH_MAX + 8];
    snprintf(stripped, sizeof(stripped), "%s/prog", dir);
    ck_assert_int_eq(rg_sym_sites(stripped, &off, 1, out, why, sizeof(why)), 0);
    ck_assert_str_eq(out[0].func, "rg_test_polls_here");
    ck_assert_msg(strstr(out[0].where, "test_symbolize.c:"), "%s", out[0].where);
    ck_assert(!out[0].nearest);
    /* Without the debug file it is the stripped object alone: no line. */
    snprintf(cmd, sizeof(cmd), "rm -f %s/prog.debug", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(rg_sym_sites(stripped, &off, 1, out, why, sizeof(why)), 0);
    ck_assert_str_eq(out[0].where, "");
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_symbolize_unreadable)
{
    static const char dump[] = "/nonexistent/libgone.so(+0x10)[0x7f01]\n"
                               "/nonexistent/libgone.so(+0x20)[0x7f02]\n";
    char path[64], why[700];
    rg_check_write_temp(path, dump, strlen(dump));
    ck_assert_int_eq(rg_bt_symbolize(path, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "addr2line failed on /nonexistent/libgone.so"));
    char *text = slurp(path);
    /* Said where the frames are, which stay unnamed: the object names them. */
    ck_assert_ptr_nonnull(strstr(text, RG_BT_NAMED_MARK " (dump 1); addr2line failed on"));
    ck_assert_ptr_nonnull(strstr(text, "#0  0x10 in ?? () from /nonexistent/libgone.so"));
    char f[4][96];
    ck_assert_int_eq(rg_sig_frames(text, f, 4), 1);
    ck_assert_str_eq(f[0], "libgone.so+?");
    unlink(path);
    /* No file, gdb's dump, or no frames: nothing to name, nothing written. */
    ck_assert_int_eq(rg_bt_symbolize("/nonexistent/rank0.backtrace", why, sizeof(why)), 0);
    static const char gdb[] = "#0  0x00007f04 in poll_until_done (ctx=0x1) at udaddy.c:212\n";
    rg_check_write_temp(path, gdb, strlen(gdb));
    ck_assert_int_eq(rg_bt_symbolize(path, why, sizeof(why)), 0);
    ck_assert_str_eq(slurp(path), gdb);
    unlink(path);
}
END_TEST

/*
 * A library without debug information (Debian's librdmacm: ci/deps installs it): addr2line
 * names only the nearest symbol of its dynamic table, and the site says so, the object and
 * offset first; never as the function. A name from debug information (this test's own) reads
 * as the function, and an object with neither as none.
 */
START_TEST(test_sym_nearest)
{
    void *h = dlopen("librdmacm.so.1", RTLD_NOW);
    ck_assert_ptr_nonnull(h);
    void *fn = dlsym(h, "rdma_get_remote_ece");
    Dl_info di;
    ck_assert(fn && dladdr(fn, &di) != 0);
    char obj[PATH_MAX], text[800], why[600];
    ck_assert_ptr_nonnull(realpath(di.dli_fname, obj));
    uint64_t off = (uint64_t)((uintptr_t)fn - (uintptr_t)di.dli_fbase) + 1;
    rg_sym_site s;
    ck_assert_int_eq(rg_sym_sites(obj, &off, 1, &s, why, sizeof(why)), 0);
    ck_assert_str_eq(s.func, "rdma_get_remote_ece");
    ck_assert(s.nearest && !s.where[0]);
    rg_sym_site_text(&s, obj, off, text, sizeof(text));
    const char *base = strrchr(obj, '/') + 1;
    char want[800];
    snprintf(want, sizeof(want), "%s+0x%llx (no debug info; nearest symbol: rdma_get_remote_ece)",
             base, (unsigned long long)off);
    ck_assert_str_eq(text, want);
    dlclose(h);

    rg_sym_site named = {"rg_test_symbolize_target", "tests/x.c:5", false};
    rg_sym_site_text(&named, "/a/b/prog", 0x2b, text, sizeof(text));
    ck_assert_str_eq(text, "rg_test_symbolize_target at tests/x.c:5 (prog+0x2b)");
    rg_sym_site none = {"", "", false};
    rg_sym_site_text(&none, "prog", 0x10, text, sizeof(text));
    ck_assert_str_eq(text, "prog+0x10 (no debug info, no symbol)");
}
END_TEST

Suite *rg_suite_symbolize(void)
{
    Suite *s = suite_create("symbolize");
    TCase *t = tcase_create("named");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_sym_norm);
    tcase_add_test(t, test_symbolize_self);
    tcase_add_test(t, test_sym_sites);
    tcase_add_test(t, test_sym_separate_debug);
    tcase_add_test(t, test_symbolize_unreadable);
    tcase_add_test(t, test_sym_nearest);
    suite_add_tcase(s, t);
    return s;
}
