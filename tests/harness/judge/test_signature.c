/* SPDX-License-Identifier: MIT */
/*
 * Signatures (judge/rg_signature.c): wait frames read from both backtrace formats, what a bug
 * decides kept and what a run decides dropped, and a known-failures file's signature entries
 * judged: xfail when one matches, a new bug still a failure, xpass where one was seen.
 */
#include "common/rg_check.h"
#include "judge/rg_judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- frames --------------------------------------------------------------------------------- */

static const char gdb_two_threads[] =
    "[Thread debugging using libthread_db enabled]\n"
    "0x00007f04 in fi_poll_cq_slow (cq=0x56, ne=8, wc=0x7ffd) at faultinject/fi_datapath.c:34\n"
    "\n"
    "Thread 2 (Thread 0x7f05 (LWP 1327) \"progress\"):\n"
    "#0  0x00007f04 in __GI___poll (fds=0x1, nfds=1, timeout=10) at poll.c:29\n"
    "#1  0x00007f05 in jaccl::SideChannel::wait (this=0x1) at side.cpp:88\n"
    "#2  0x00007f06 in start_thread (arg=<optimized out>) at pthread_create.c:442\n"
    "\n"
    "Thread 1 (Thread 0x7f04 (LWP 1326) \"udaddy\"):\n"
    "#0  0x00007f04 in fi_poll_cq_slow (cq=0x56, ne=8, wc=0x7ffd) at faultinject/fi_datapath.c:34\n"
    "#1  0x0000564b in ibv_poll_cq (cq=0x1, num_entries=8, wc=0x2) at verbs.h:2881\n"
    "#2  0x0000564c in poll_until_done (ctx=0x1) at udaddy.c:212\n"
    "#3  0x0000564d in main (argc=3, argv=0x7ffd) at udaddy.c:580\n"
    "#4  0x00007f04 in __libc_start_call_main (main=...) at libc_start_call_main.h:58\n"
    "[Inferior 1 (process 1326) detached]\n";

static const char gdb_unnamed[] =
    "Thread 1 (Thread 0x7f04 (LWP 1326) \"rping\"):\n"
    "#0  0x00007f04 in fi_poll_cq_slow (cq=0x56) at faultinject/fi_datapath.c:34\n"
    "#1  0x0000564b in ?? () from /usr/lib/x86_64-linux-gnu/libibverbs.so.1\n"
    "#2  0x0000564b85e55eaa in ?? ()\n"
    "#3  0x0000564b in ?? () from /usr/lib/librdmacm.so.1\n";

static const char symbols[] =
    "railguard: rank 1: asked for a backtrace at the deadline\n"
    "/work/build/rel/bin/railguard(+0x1a2b)[0x55d1]\n"
    "/lib/x86_64-linux-gnu/libc.so.6(__poll+0x4f)[0x7f01]\n"
    "/work/build/rel/lib/railguard-transport.so(rg_all_reduce+0x1c1)[0x7f02]\n"
    "/work/build/rel/bin/railguard(+0x3c4d)[0x55d2]\n";

START_TEST(test_frames)
{
    char f[4][96];
    int n = rg_sig_frames(gdb_two_threads, f, 4);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(f[0], "jaccl::SideChannel::wait");
    ck_assert_str_eq(f[1], "poll_until_done");
    /* No symbol: the object names the frame; the shim and verbs never do. */
    n = rg_sig_frames(gdb_unnamed, f, 4);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(f[0], "librdmacm.so.1+?");
    /* backtrace_symbols: the runner's own binary and libc are passed over. */
    n = rg_sig_frames(symbols, f, 4);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(f[0], "rg_all_reduce");
    ck_assert_int_eq(rg_sig_frames("nothing like a backtrace\n#x\n", f, 4), 0);
    /* A C++ name longer than a frame holds is cut, never given up for its object's; a cut
     * never splits a UTF-8 character. */
    char longer[400];
    snprintf(longer, sizeof(longer), "/lib/libjaccl.so(_ZN5jaccl%0100d+0x10)[0x7f]\n", 7);
    ck_assert_int_eq(rg_sig_frames(longer, f, 4), 1);
    ck_assert_uint_eq(strlen(f[0]), 95);
    ck_assert_int_eq(strncmp(f[0], "_ZN5jaccl000", 12), 0);
    snprintf(longer, sizeof(longer), "#1  0x1 in w%093d\xc3\xa9x () at a.c:1\n", 0);
    ck_assert_int_eq(rg_sig_frames(longer, f, 4), 1);
    ck_assert_uint_eq(strlen(f[0]), 94); /* the 2-byte character would have ended at 96 */
    /* The bound holds: one frame asked, one given. */
    ck_assert_int_eq(rg_sig_frames(gdb_two_threads, f, 1), 1);
}
END_TEST

/* --- signatures ------------------------------------------------------------------------------ */

/* A judged result whose `origin` rank failed first with `first`, the others ending `rest`. */
static void fail_case(rg_result *r, const char *name, int ranks, int origin, rg_verdict first,
                      rg_verdict rest, const char *where, int status)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->ranks = ranks;
    for (int i = 0; i < ranks; i++) {
        rg_rank_result *k = &r->rank[i];
        k->verdict = i == origin ? first : rest;
        k->t_s = i == origin ? 0.5 : 1.0 + i;
        k->step = 1;
        snprintf(k->where, sizeof(k->where), "%s", where);
        snprintf(k->calls, sizeof(k->calls), "ring/1:%d mesh/2:1", 2 + i);
        k->status = i == origin ? status : 0;
        r->expect[i] = RG_SC_EXPECT_OK;
        r->expect_at[i] = RG_SC_AT_ANY;
    }
    rg_judge(r);
}

START_TEST(test_signature)
{
    static rg_result a, b, c, d;
    rg_sig sa, sb, sc, sd;
    /* One bug, two runs: other sizes, ranks, times and call counts. */
    fail_case(&a, "a", 2, 0, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce float32 sum count 7", 0);
    fail_case(&b, "b", 4, 3, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce int8 max count 1000003",
              0);
    rg_signature(&a, &sa);
    rg_signature(&b, &sb);
    ck_assert_str_eq(sa.key, sb.key);
    ck_assert_str_eq(sa.first, "SILENT_CORRUPTION");
    ck_assert_str_eq(sa.op, "all_reduce");
    ck_assert_str_eq(sa.algo, "mesh+ring");
    ck_assert_int_eq(sb.origin, 3);
    /* Another operation, or another class, is another signature. */
    fail_case(&c, "c", 2, 0, RG_V_SILENT_CORRUPTION, RG_V_OK, "broadcast uint8 count 9", 0);
    rg_signature(&c, &sc);
    ck_assert_str_ne(sa.key, sc.key);
    fail_case(&d, "d", 2, 1, RG_V_ERROR_WITHOUT_FAULT, RG_V_DETECTED, "all_reduce float32 sum", -6);
    rg_signature(&d, &sd);
    ck_assert_str_ne(sd.cls, "");
    ck_assert_str_eq(sd.others, "detected");
    /* How many others went wrong the first's way is the run's: of four ranks, one corrupt and
     * three hung is two corrupt and two hung; all hung is not one hung alone. */
    static rg_result e, f;
    rg_sig se, sf;
    fail_case(&e, "e", 4, 0, RG_V_SILENT_CORRUPTION, RG_V_DEADLOCK, "all_reduce f32", 0);
    e.rank[1].verdict = RG_V_SILENT_CORRUPTION;
    rg_judge(&e);
    fail_case(&f, "f", 2, 1, RG_V_SILENT_CORRUPTION, RG_V_DEADLOCK, "all_reduce f32", 0);
    rg_signature(&e, &se);
    rg_signature(&f, &sf);
    ck_assert_str_eq(se.others, "DEADLOCK");
    ck_assert_str_eq(se.key, sf.key);
    fail_case(&e, "e", 3, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_reduce f32", -2);
    fail_case(&f, "f", 3, 0, RG_V_DEADLOCK, RG_V_OK, "all_reduce f32", -2);
    rg_signature(&e, &se);
    rg_signature(&f, &sf);
    ck_assert_str_eq(se.others, "DEADLOCK");
    ck_assert_str_eq(sf.others, "");
    /* A program's rank (railguard exec) says its scenario's name as its step: "exec". */
    snprintf(a.rank[0].where, sizeof(a.rank[0].where), "%s", a.name);
    rg_signature(&a, &sa);
    ck_assert_str_eq(sa.op, "exec");
    /* Init is named so, whatever the step's text. */
    a.rank[0].step = -1;
    rg_signature(&a, &sa);
    ck_assert_str_eq(sa.op, "init");
}
END_TEST

/*
 * A result read back from result.json gives the signature the judged one gave: its origin is the
 * rank the judge named first, which is not always the lowest failed rank (rank 2 corrupt at
 * 0.5 s, rank 1 hung after). Read without it, rank 1 was taken, or rank 0 when it was fine,
 * and compare and triage keyed a leak of rank 1 by rank 0's "ok".
 */
START_TEST(test_signature_reread)
{
    static rg_result r, back;
    rg_sig s, sb;
    char err[600], path[] = "/tmp/rg-sigread-XXXXXX";
    fail_case(&r, "g", 3, 2, RG_V_SILENT_CORRUPTION, RG_V_DEADLOCK, "all_reduce f32", 0);
    r.rank[0].verdict = RG_V_OK;
    rg_judge(&r);
    ck_assert_int_eq(r.first_rank, 2);
    rg_signature(&r, &s);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(rg_result_save(&r, path, err, sizeof(err)), 0);
    ck_assert_msg(rg_result_read(&back, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(back.first_rank, 2);
    rg_signature(&back, &sb);
    ck_assert_int_eq(sb.origin, 2);
    ck_assert_str_eq(sb.key, s.key);
    /* A result that none failed: null, read back as none. */
    fail_case(&r, "h", 2, 0, RG_V_OK, RG_V_OK, "all_reduce f32", 0);
    ck_assert_int_eq(r.first_rank, -1);
    ck_assert_int_eq(rg_result_save(&r, path, err, sizeof(err)), 0);
    ck_assert_msg(rg_result_read(&back, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(back.first_rank, -1);
    /* A value railguard does not write: refused, naming the file and field. */
    FILE *f = fopen(path, "w");
    fputs("{\"ranks\": [], \"first_rank\": \"two\"}", f);
    fclose(f);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "first_rank") && strstr(err, path), "%s", err);
    unlink(path);
}
END_TEST

/* Where hung ranks wait: the first failure's own frames when it hung itself, else every hung
 * rank's. */
START_TEST(test_signature_frames)
{
    static rg_result r;
    char dir[] = "/tmp/rg-sigframes-XXXXXX", path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const char *const fn[] = {"wait_a", "wait_b", "wait_c"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", dir, i);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "/x/libt.so(%s+0x1)[0x1]\n", fn[i]);
        fclose(f);
    }
    rg_sig s;
    fail_case(&r, "all-hung", 3, 1, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_reduce f32", -2);
    snprintf(r.dir, sizeof(r.dir), "%s", dir);
    rg_signature(&r, &s);
    ck_assert_int_eq(s.origin, 1);
    ck_assert_int_eq(s.nframes, 1);
    ck_assert_str_eq(s.frames[0], "wait_b");
    fail_case(&r, "one-wrong", 3, 2, RG_V_SILENT_CORRUPTION, RG_V_DEADLOCK, "all_reduce f32", 0);
    snprintf(r.dir, sizeof(r.dir), "%s", dir);
    rg_signature(&r, &s);
    ck_assert_int_eq(s.nframes, 2);
    ck_assert_str_eq(s.frames[0], "wait_a");
    ck_assert_str_eq(s.frames[1], "wait_b");
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/rank%d.backtrace", dir, i);
        unlink(path);
    }
    rmdir(dir);
}
END_TEST

/* --- known by signature -------------------------------------------------------------------- */

static rg_sc_ksig entry(const char *why, const char *first, unsigned has, const char *op,
                        const char *others)
{
    rg_sc_ksig k;
    memset(&k, 0, sizeof(k));
    snprintf(k.why, sizeof(k.why), "%s", why);
    snprintf(k.sig.first, sizeof(k.sig.first), "%s", first);
    snprintf(k.sig.op, sizeof(k.sig.op), "%s", op);
    snprintf(k.sig.others, sizeof(k.sig.others), "%s", others);
    k.has = has;
    k.line = 3;
    return k;
}

START_TEST(test_known_signature)
{
    static rg_result r;
    char err[600];
    /* Known: corruption in all_reduce, the others fine. Any scenario failing so is xfail. */
    fail_case(&r, "any", 3, 1, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce bf16 sum count 5", 0);
    ck_assert(!r.passed);
    r.ksig[0] = entry("wrong sums", "SILENT_CORRUPTION", RG_SIG_HAS_OP | RG_SIG_HAS_OTHERS,
                      "all_reduce", "");
    r.nksig = 1;
    ck_assert(rg_judge(&r));
    ck_assert_int_eq(r.known_state, RG_KNOWN_XFAIL);
    ck_assert_str_eq(rg_result_word(&r), "XFAIL");
    ck_assert_msg(strstr(r.why, "known failure (signature, line 3): wrong sums; rank 1: "), "%s",
                  r.why);
    /* The same in another operation is a new bug: it still fails, as it did. */
    fail_case(&r, "any", 3, 1, RG_V_SILENT_CORRUPTION, RG_V_OK, "broadcast uint8 count 5", 0);
    r.ksig[0] = entry("wrong sums", "SILENT_CORRUPTION", RG_SIG_HAS_OP, "all_reduce", "");
    r.nksig = 1;
    ck_assert(!rg_judge(&r));
    ck_assert_int_eq(r.known_state, RG_KNOWN_NONE);
    ck_assert_int_eq(r.first_rank, 1);
    /* An entry naming only `first` takes any such failure; frames compare as sets. */
    rg_sig s;
    fail_case(&r, "any", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 1", -2);
    rg_signature(&r, &s);
    rg_sc_ksig k = entry("hangs", "DEADLOCK", 0, "", "");
    ck_assert(rg_sig_matches(&k, &s));
    k.has = RG_SIG_HAS_FRAMES;
    k.sig.nframes = 1;
    snprintf(k.sig.frames[0], sizeof(k.sig.frames[0]), "wait_loop");
    ck_assert(!rg_sig_matches(&k, &s)); /* no backtraces here: no frames to match */
    snprintf(s.frames[0], sizeof(s.frames[0]), "a");
    snprintf(s.frames[1], sizeof(s.frames[1]), "wait_loop");
    s.nframes = 2;
    k.sig.nframes = 3;
    snprintf(k.sig.frames[1], sizeof(k.sig.frames[1]), "a");
    snprintf(k.sig.frames[2], sizeof(k.sig.frames[2]), "wait_loop");
    ck_assert(rg_sig_matches(&k, &s));
    snprintf(k.sig.frames[2], sizeof(k.sig.frames[2]), "b");
    ck_assert(!rg_sig_matches(&k, &s));
    /* A scenario the entry was seen in, passing: xpass, with how often it showed. */
    fail_case(&r, "seen-here", 2, 0, RG_V_OK, RG_V_OK, "all_reduce float32 sum count 1", 0);
    ck_assert(r.passed);
    r.ksig[0] = entry("wrong sums", "SILENT_CORRUPTION", 0, "", "");
    snprintf(r.ksig[0].rate, sizeof(r.ksig[0].rate), "2 of 5");
    snprintf(r.ksig[0].seen[0], sizeof(r.ksig[0].seen[0]), "seen-here");
    r.ksig[0].nseen = 1;
    r.nksig = 1;
    ck_assert(rg_judge(&r));
    ck_assert_int_eq(r.known_state, RG_KNOWN_XPASS);
    ck_assert_str_eq(r.why, "known failure did not happen this time (signature, line 3; seen in "
                            "2 of 5 re-runs): wrong sums");
    /* result.json carries the entries: read back and judged again, the same xpass. */
    char path[] = "/tmp/rg-ksig-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    r.ksig[1] = entry("hangs", "DEADLOCK", RG_SIG_HAS_OP, "all_gather", "");
    r.nksig = 2;
    ck_assert_int_eq(rg_result_save(&r, path, err, sizeof(err)), 0);
    static rg_result back;
    ck_assert_msg(rg_result_read(&back, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(back.nksig, 2);
    ck_assert_int_eq(memcmp(&back.ksig[0], &r.ksig[0], sizeof(back.ksig[0])), 0);
    ck_assert_int_eq(memcmp(&back.ksig[1], &r.ksig[1], sizeof(back.ksig[1])), 0);
    rg_judge(&back);
    ck_assert_int_eq(back.known_state, RG_KNOWN_XPASS);
    /* An entry that is not one railguard writes is refused, naming the file. */
    FILE *f = fopen(path, "w");
    fputs("{\"ranks\": [], \"known_signatures\": [{\"why\": \"x\", \"first\": \"unsupported\", "
          "\"rate\": \"\", \"line\": 1, \"seen\": []}]}",
          f);
    fclose(f);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "known_signatures entry 1") && strstr(err, path), "%s", err);
    unlink(path);
}
END_TEST

/*
 * An entry by cause: a failure whose own files proved that cause (r.cause) is xfail whatever
 * its verdict; one with no cause proven, or another, still fails; what else the entry names
 * must match too; result.json carries both, so a judge from the files says the same.
 */
START_TEST(test_known_cause)
{
    static rg_result r, back;
    char err[600];
    rg_sc_ksig k = entry("the UC race", "", 0, "", "");
    k.cause = RG_C_UC_NO_RECV;
    fail_case(&r, "any", 3, 1, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce bf16 sum count 5", 0);
    r.ksig[0] = k;
    r.nksig = 1;
    ck_assert(!rg_judge(&r)); /* nothing proven */
    r.cause = RG_C_NEVER_SENT;
    ck_assert(!rg_judge(&r)); /* another cause */
    r.cause = RG_C_UC_NO_RECV;
    snprintf(r.cause_text, sizeof(r.cause_text), "a UC send with no receive posted for it: ...");
    ck_assert(rg_judge(&r));
    ck_assert_int_eq(r.known_state, RG_KNOWN_XFAIL);
    ck_assert_msg(strstr(r.why, "known failure (cause, line 3): the UC race; proven: a UC send "
                                "with no receive posted for it; rank 1: SILENT_CORRUPTION"),
                  "%s", r.why);
    /* The same cause met as a hang: the same bug. */
    fail_case(&r, "other", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 1", -2);
    r.ksig[0] = k;
    r.nksig = 1;
    r.cause = RG_C_UC_NO_RECV;
    ck_assert(rg_judge(&r));
    /* An entry naming an op as well: another op's failure of that cause is not it. */
    r.ksig[0].has = RG_SIG_HAS_OP;
    snprintf(r.ksig[0].sig.op, sizeof(r.ksig[0].sig.op), "broadcast");
    ck_assert(!rg_judge(&r));
    r.ksig[0] = k;
    ck_assert(rg_judge(&r));
    /* Round trip: the cause and the entry back as they were, judged alike. */
    char path[] = "/tmp/rg-kcause-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    fail_case(&r, "other", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 1", -2);
    r.ksig[0] = k;
    r.nksig = 1;
    r.cause = RG_C_UC_NO_RECV;
    snprintf(r.cause_text, sizeof(r.cause_text), "a UC send with no receive: \"rank 0\"");
    ck_assert_int_eq(rg_result_save(&r, path, err, sizeof(err)), 0);
    ck_assert_msg(rg_result_read(&back, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(back.cause, RG_C_UC_NO_RECV);
    ck_assert_str_eq(back.cause_text, r.cause_text);
    ck_assert_int_eq(memcmp(&back.ksig[0], &r.ksig[0], sizeof(back.ksig[0])), 0);
    ck_assert(rg_judge(&back));
    ck_assert_int_eq(back.known_state, RG_KNOWN_XFAIL);
    /* A cause railguard does not know, in the result or an entry: refused, naming the file. */
    static const char *const bad[] = {
        "{\"ranks\": [], \"cause\": {\"name\": \"uc-drop\", \"text\": \"x\"}}",
        "{\"ranks\": [], \"cause\": {\"name\": \"wait-never-sent\"}}",
        "{\"ranks\": [], \"known_signatures\": [{\"why\": \"x\", \"first\": \"\", "
        "\"rate\": \"\", \"line\": 1, \"seen\": []}]}",
        "{\"ranks\": [], \"known_signatures\": [{\"why\": \"x\", \"first\": \"\", "
        "\"cause\": \"uc-drop\", \"rate\": \"\", \"line\": 1, \"seen\": []}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i], f);
        fclose(f);
        ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
        ck_assert_msg(strstr(err, path) && (strstr(err, "cause is not one railguard writes") ||
                                            strstr(err, "known_signatures entry 1")),
                      "case %zu: %s", i, err);
    }
    unlink(path);
}
END_TEST

Suite *rg_suite_signature(void)
{
    Suite *s = suite_create("signature");
    TCase *t = tcase_create("signature");
    tcase_add_test(t, test_frames);
    tcase_add_test(t, test_signature);
    tcase_add_test(t, test_signature_frames);
    tcase_add_test(t, test_signature_reread);
    tcase_add_test(t, test_known_signature);
    tcase_add_test(t, test_known_cause);
    suite_add_tcase(s, t);
    return s;
}
