/* SPDX-License-Identifier: MIT */
/*
 * The reference transport on rxe: 2, 3 and 4 ranks, 1 and 2 rails, UC and RC, every dtype and
 * op at sizes that do not divide (1, 3, primes), create/destroy cycles in one process, and a
 * crossed rail that must fail at init naming both ends. Results are checked bit-exact by
 * drive against an independent reference. The lean matrix here keeps make check fast.
 */
#include "common/rg_check.h"
#include "drive.h"

#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void expect_ok(struct drive_opts *o)
{
    struct drive_result r;
    int rc = drive_run(o, &r);
    static const char *const algos[] = {"auto", "ring", "mesh"};
    ck_assert_msg(rc == 0, "%d ranks %d rails %s: %s", o->ranks, o->rails, algos[o->algo], r.msg);
    ck_assert_int_gt(r.checks, 0);
    printf("  %d ranks, %d rail(s), %s, %s: %d results verified in %.2f s\n", o->ranks, o->rails,
           o->qp == RG_QPT_RC ? "RC" : "UC", algos[o->algo], r.checks, r.seconds);
}

START_TEST(test_every_dtype_and_op)
{
    /* _i / 2: 2 ranks/1 rail, 3 ranks/2 rails, 4 ranks/2 rails; _i % 2: ring or mesh */
    static const int shape[3][2] = {{2, 1}, {3, 2}, {4, 2}};
    struct drive_opts o;
    drive_opts_default(&o);
    o.ranks = shape[_i / 2][0];
    o.rails = shape[_i / 2][1];
    o.algo = _i % 2 ? RG_ALGO_MESH : RG_ALGO_RING;
    o.counts[0] = 1;
    o.counts[1] = 3;
    o.counts[2] = 1021;
    o.counts[3] = 0;
    o.timeout_s = 20;
    expect_ok(&o);
}
END_TEST

START_TEST(test_large_prime_multirail)
{
    /* 1000003 float32 elements: many chunks per segment, striped over both rails. */
    struct drive_opts o;
    drive_opts_default(&o);
    o.ranks = 3;
    o.rails = 2;
    o.algo = _i ? RG_ALGO_MESH : RG_ALGO_RING;
    o.all_dtypes = 0;
    o.counts[0] = 1000003;
    o.counts[1] = 0;
    o.timeout_s = 60;
    expect_ok(&o);
}
END_TEST

/*
 * Small chunks put 4099 elements of every dtype (and 1021 of the 8-byte ones) over many
 * chunks, so every ring collective runs both directions (3 and 4 ranks) for every dtype and
 * op, halves and segments that do not divide included; 3 elements stay one way. drive checks
 * each call's direction from the messages each rank sent its left neighbour. _i == 2 turns
 * both ways off, so that check must then see one way only.
 */
START_TEST(test_bidirectional_ring_small_chunks)
{
    struct drive_opts o;
    drive_opts_default(&o);
    setenv("RG_CHUNK_BYTES", "4096", 1); /* the forked ranks inherit it */
    if (_i == 2)
        setenv("RG_RING_BIDIR", "0", 1);
    o.ranks = 3 + _i % 2;
    o.rails = 2;
    o.algo = RG_ALGO_RING;
    o.counts[0] = 3;
    o.counts[1] = 1021;
    o.counts[2] = 4099;
    o.counts[3] = 0;
    o.timeout_s = 30;
    expect_ok(&o);
}
END_TEST

/*
 * Zero-copy sends: every call's buffers registered. 3 elements stay under RG_ZCOPY_MIN and
 * copy; 12289 float32 (48 KiB) and 262147 go in place wherever the block is not rewritten.
 * drive checks the results bit-exact and counts the in-place sends of all_gather and send.
 * _i: 2 ranks/1 rail ring, 3 ranks/2 rails ring (both ways round), 3 ranks/2 rails mesh,
 * 2 ranks/2 rails RC.
 */
START_TEST(test_zero_copy_registered)
{
    static const int shape[4][3] = {
        {2, 1, RG_ALGO_RING}, {3, 2, RG_ALGO_RING}, {3, 2, RG_ALGO_MESH}, {2, 2, RG_ALGO_RING}};
    struct drive_opts o;
    drive_opts_default(&o);
    o.ranks = shape[_i][0];
    o.rails = shape[_i][1];
    o.algo = (rg_algo)shape[_i][2];
    o.qp = _i == 3 ? RG_QPT_RC : RG_QPT_UC;
    o.zcopy = 1;
    o.all_dtypes = 0;
    o.cycles = 2;
    o.counts[0] = 3;
    o.counts[1] = 12289;
    o.counts[2] = 262147;
    o.counts[3] = 0;
    o.timeout_s = 30;
    expect_ok(&o);
}
END_TEST

/*
 * The same without rg_mem_register: calls that move RG_ZCOPY_AUTO bytes or more through a
 * buffer (8 KiB here, so the middle count does too) register it for the call, send from it
 * and receive into it in place; the drive checks each all_gather, send and recv made one
 * registration exactly when it should, that the sends went in place, and the data; here, that
 * some receives landed in place. UC and RC, ring and mesh, one and two rails.
 */
START_TEST(test_zero_copy_auto)
{
    static const int shape[3][3] = {
        {2, 2, RG_ALGO_RING}, {3, 2, RG_ALGO_MESH}, {3, 1, RG_ALGO_RING}};
    struct drive_opts o;
    drive_opts_default(&o);
    setenv("RG_ZCOPY_AUTO", "8K", 1);
    setenv("RG_ZCOPY_MIN", "4K", 1);
    setenv("RG_CHUNK_BYTES", "4096", 1);
    setenv("RG_SLOTS", "2", 1);
    o.ranks = shape[_i][0];
    o.rails = shape[_i][1];
    o.algo = (rg_algo)shape[_i][2];
    o.qp = _i == 1 ? RG_QPT_UC : RG_QPT_RC;
    o.all_dtypes = 0;
    o.cycles = 2;
    o.counts[0] = 3;
    o.counts[1] = 12289;
    o.counts[2] = 0;
    o.timeout_s = 30;
    struct drive_result r;
    ck_assert_msg(drive_run(&o, &r) == 0, "%s", r.msg);
    /* 48 KiB calls in 4 KiB chunks, 6 or 12 a connection, on 2 slots: past the two receives
     * posted before each call, all_gather's and recv's messages land in place. */
    ck_assert_msg(r.into > 0, "no receive landed in place in %d checks", r.checks);
}
END_TEST

/*
 * auto's one-shot all_reduce (up to RG_ONESHOT_BYTES, 4 KiB by default): every dtype and op
 * at 2 and 4 ranks, 1, 5 and 1021 elements, drive checking that each peer got one message
 * wherever the size is within the threshold. Every rank reduces in rank order, so results are
 * bit-exact against the reference on all ranks.
 */
START_TEST(test_one_shot_auto)
{
    struct drive_opts o;
    drive_opts_default(&o);
    o.ranks = 2 + 2 * _i;
    o.rails = 2;
    o.algo = RG_ALGO_AUTO;
    o.counts[0] = 1;
    o.counts[1] = 5;
    o.counts[2] = 1021;
    o.counts[3] = 0;
    o.timeout_s = 20;
    expect_ok(&o);
}
END_TEST

/*
 * The fewest credits flow control allows: 2 slots, credits back only every 2 messages, 4 KiB
 * chunks, so every connection runs on one guaranteed message in flight. _i: ring, mesh, auto
 * (one-shot at 3 elements), 4 ranks over 2 rails.
 */
START_TEST(test_minimal_credits)
{
    struct drive_opts o;
    drive_opts_default(&o);
    setenv("RG_SLOTS", "2", 1);
    setenv("RG_CREDIT_BATCH", "2", 1);
    setenv("RG_CHUNK_BYTES", "4096", 1);
    o.ranks = 4;
    o.rails = 2;
    o.algo = _i == 0 ? RG_ALGO_RING : _i == 1 ? RG_ALGO_MESH : RG_ALGO_AUTO;
    o.all_dtypes = 0;
    o.counts[0] = 3;
    o.counts[1] = 4099;
    o.counts[2] = 0;
    o.timeout_s = 30;
    expect_ok(&o);
}
END_TEST

/*
 * Receives past RG_RECV_KEEP are owed to the next call, which posts them where its plan wants
 * them. _i 0: 2 ranks with the default 8 slots, keep 4, 4 KiB chunks and calls registered
 * from 8 KiB: a 32 KiB all_reduce has 4 chunks each way a phase, so its all-gather lands in
 * place from the second call on, where keep 8 (every slot posted between calls) lands it in
 * slots; the drive counts both. _i 1, 2: 2 slots, credits back every message, one receive kept
 * (a peer holds one credit between calls): 4 ranks over 2 rails, ring and mesh. _i 3: a call
 * shorter than the slots (16 KiB: 2 chunks each way a phase, 4 messages a connection against 8
 * slots) with the default batch of 4 and one receive kept: the next call must not post the
 * owed receives into slots ahead of its own messages, so its all-gather lands in place, where
 * keep 8 lands every message in slots. _i 4, 5: as 1 and 2 with 8 slots, the default batch of
 * 4 and one receive kept: a peer that used every credit while fewer than a batch were
 * posted back must be granted them at once (rg_engine.c), or both sides wait.
 */
START_TEST(test_recv_keep)
{
    struct drive_opts o;
    drive_opts_default(&o);
    setenv("RG_ZCOPY_AUTO", "8K", 1);
    setenv("RG_ZCOPY_MIN", "4K", 1);
    setenv("RG_CHUNK_BYTES", "4096", 1);
    o.all_dtypes = 0;
    o.timeout_s = 30;
    struct drive_result r, off;
    if (_i == 0 || _i == 3) {
        /* keep 8 against the default (_i 0) or keep 1 (_i 3), 2 ranks, the default batch. */
        const char *keep = _i == 0 ? NULL : "1";
        o.ranks = 2;
        o.rails = 1;
        o.algo = RG_ALGO_MESH;
        o.counts[0] = _i == 0 ? 8192 : 4096;
        o.counts[1] = 0;
        setenv("RG_RECV_KEEP", "8", 1);
        ck_assert_msg(drive_run(&o, &off) == 0, "%s", off.msg);
        if (keep)
            setenv("RG_RECV_KEEP", keep, 1);
        else
            unsetenv("RG_RECV_KEEP"); /* the default: the credit batch, 4 */
        ck_assert_msg(drive_run(&o, &r) == 0, "%s", r.msg);
        ck_assert_msg(r.checks == off.checks && r.into > off.into,
                      "in place: %llu receives with keep %s, %llu with keep 8 (%d, %d checks)",
                      r.into, keep ? keep : "4", off.into, r.checks, off.checks);
        return;
    }
    if (_i < 4) {
        setenv("RG_SLOTS", "2", 1);
        setenv("RG_CREDIT_BATCH", "1", 1);
    }
    setenv("RG_RECV_KEEP", "1", 1);
    o.ranks = 4;
    o.rails = 2;
    o.algo = _i % 3 == 1 ? RG_ALGO_RING : RG_ALGO_MESH;
    o.counts[0] = 3;
    o.counts[1] = 12289;
    o.counts[2] = _i < 4 ? 0 : 65539;
    o.counts[3] = 0;
    ck_assert_msg(drive_run(&o, &r) == 0, "%s", r.msg);
    ck_assert_msg(r.into > 0, "no receive landed in place in %d checks", r.checks);
}
END_TEST

/* Settings that shape the plan must agree: one rank without the one-shot plan fails connect
 * on both sides, naming the setting, instead of reducing the wrong messages. */
START_TEST(test_plan_settings_must_agree)
{
    struct drive_opts o;
    struct drive_result r;
    drive_opts_default(&o);
    o.env_rank = 1;
    o.env_set = "RG_ONESHOT_BYTES=0";
    o.timeout_s = 10;
    o.quiet = 1;
    ck_assert_int_ne(drive_run(&o, &r), 0);
    ck_assert_int_eq(r.failed_ranks, 2);
    ck_assert_msg(strstr(r.msg, "RG_ERR_CONFIG") && strstr(r.msg, "RG_ONESHOT_BYTES"),
                  "message: %s", r.msg);
    printf("  plan settings differ: %s\n", r.msg);
}
END_TEST

START_TEST(test_rc_create_destroy_cycles)
{
    struct drive_opts o;
    drive_opts_default(&o);
    o.qp = RG_QPT_RC;
    o.rails = 2;
    o.all_dtypes = 0;
    o.cycles = 4;
    o.counts[0] = 5;
    o.counts[1] = 262147;
    o.counts[2] = 0;
    expect_ok(&o);
}
END_TEST

START_TEST(test_crossed_rails_fail_at_init)
{
    struct drive_opts o;
    struct drive_result r;
    drive_opts_default(&o);
    o.rails = 2;
    o.cross_rank = 1;
    o.timeout_s = 10;
    o.quiet = 1;
    ck_assert_int_ne(drive_run(&o, &r), 0);
    ck_assert_int_eq(r.failed_ranks, 2);
    ck_assert_msg(strstr(r.msg, "RG_ERR_RAIL_MISMATCH") && strstr(r.msg, "crossed"), "message: %s",
                  r.msg);
    printf("  crossed rails: %s\n", r.msg);
}
END_TEST

/* ---- the full matrix (make check-full: RG_CHECK_FULL=1, a guest with 4 rails) ---------- */
static int full_rails(void)
{
    char devs[8][64];
    int n = rg_check_devices(devs, 8);
    return n < RG_MAX_RAILS ? n : RG_MAX_RAILS;
}

/* _i: ranks 2..4 x ring/mesh x rails 1..4; sizes from one element to primes past a million. */
START_TEST(test_full_sizes)
{
    struct drive_opts o;
    drive_opts_default(&o);
    o.ranks = 2 + _i / 8;
    o.algo = (_i / 4) % 2 ? RG_ALGO_MESH : RG_ALGO_RING;
    o.rails = 1 + _i % 4;
    /* Too few devices is a failure, not a skip: check-full promises four rails. */
    ck_assert_msg(o.rails <= full_rails(),
                  "check-full needs %d rails, %d devices; boot the guest "
                  "with --rails 4",
                  o.rails, full_rails());
    o.all_dtypes = 0;
    static const size_t counts[] = {1, 2, 7, 4099, 65537, 1000003, 0};
    memcpy(o.counts, counts, sizeof(counts));
    o.timeout_s = 120;
    expect_ok(&o);
}
END_TEST

/* Every dtype and op over all four rails, each algorithm, 2 to 4 ranks. */
START_TEST(test_full_dtypes_four_rails)
{
    struct drive_opts o;
    drive_opts_default(&o);
    o.ranks = 2 + _i / 2;
    o.algo = _i % 2 ? RG_ALGO_MESH : RG_ALGO_RING;
    o.rails = full_rails();
    o.counts[0] = 1;
    o.counts[1] = 3;
    o.counts[2] = 1021;
    o.counts[3] = 0;
    o.timeout_s = 120;
    expect_ok(&o);
}
END_TEST

/* 64 MiB and a bit (a prime count of float32) on every rail, each algorithm, 2 and 3 ranks. */
START_TEST(test_full_64mib)
{
    struct drive_opts o;
    drive_opts_default(&o);
    o.ranks = 2 + _i / 2;
    o.algo = _i % 2 ? RG_ALGO_MESH : RG_ALGO_RING;
    o.rails = full_rails();
    o.all_dtypes = 0;
    o.counts[0] = 16777259; /* the first prime above 64 MiB / 4 */
    o.counts[1] = 0;
    o.timeout_s = 600;
    expect_ok(&o);
}
END_TEST

/*
 * RG_PHASES=1 (the benchmark's breakdown): the results stay bit-exact, and each rank says one
 * line at its communicator's end with every phase, the call's total and the clock's cost, its
 * phases never above its total (they are disjoint parts of the call). 2 ranks, mesh (the
 * one-shot at 5 elements, reduce-scatter and all-gather at 1021 and 40000) and ring.
 */
START_TEST(test_phases_line)
{
    static const char *const keys[] = {
        "calls=",      "total=",  "copy=",  "reg=",       "slot_in=",     "slot_out=",
        "reduce=",     "post=",   "poll=",  "wait_data=", "wait_credit=", "wait_sends=",
        "wait_other=", " other=", "reads=", "clock="};
    char path[] = "/tmp/rg-it-phases.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path); /* the open descriptor is enough, and a failed assert leaves no file */
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2); /* the forked ranks inherit it */
    setenv("RG_PHASES", "1", 1);
    struct drive_opts o;
    drive_opts_default(&o);
    o.ranks = 2;
    o.rails = 1;
    o.qp = RG_QPT_RC;
    o.algo = _i ? RG_ALGO_RING : RG_ALGO_AUTO;
    o.all_dtypes = 0;
    o.counts[0] = 5;
    o.counts[1] = 1021;
    o.counts[2] = 40000;
    o.counts[3] = 0;
    o.timeout_s = 30;
    struct drive_result r;
    int rc = drive_run(&o, &r);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unsetenv("RG_PHASES");
    ck_assert_msg(rc == 0, "%s", r.msg);
    ck_assert_int_gt(r.checks, 0);
    static char text[16384];
    ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
    close(fd);
    ck_assert_int_gt(n, 0);
    text[n] = '\0';
    int lines = 0;
    for (char *l = strstr(text, "railguard phases: "); l; l = strstr(l + 1, "railguard phases: ")) {
        char *end = strchr(l, '\n');
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            ck_assert_msg(strstr(l, keys[k]), "no %s in '%s'", keys[k], l);
        unsigned long long calls = strtoull(strstr(l, "calls=") + 6, NULL, 10);
        unsigned long long total = strtoull(strstr(l, "total=") + 6, NULL, 10);
        unsigned long long sum = 0;
        for (size_t k = 2; k < 14; k++) /* copy= to other= */
            sum += strtoull(strstr(l, keys[k]) + strlen(keys[k]), NULL, 10);
        ck_assert_msg(calls > 0 && total > 0, "'%s'", l);
        /* Rounding each phase down to a whole ns a call can cost at most 1 ns a phase. */
        ck_assert_msg(sum <= total + 10, "phases %llu above the call's %llu: '%s'", sum, total, l);
        lines++;
        *end = '\n';
    }
    ck_assert_msg(lines == 2, "%d phases line(s), not one a rank:\n%s", lines, text);
}
END_TEST

Suite *rg_suite_it_coll(void)
{
    Suite *s = suite_create("it_coll");
    TCase *tc = tcase_create("collectives");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_every_dtype_and_op, 0, 6);
    tcase_add_loop_test(tc, test_large_prime_multirail, 0, 2);
    tcase_add_loop_test(tc, test_bidirectional_ring_small_chunks, 0, 3);
    tcase_add_loop_test(tc, test_zero_copy_registered, 0, 4);
    tcase_add_loop_test(tc, test_zero_copy_auto, 0, 3);
    tcase_add_loop_test(tc, test_one_shot_auto, 0, 2);
    tcase_add_loop_test(tc, test_minimal_credits, 0, 3);
    tcase_add_loop_test(tc, test_recv_keep, 0, 6);
    tcase_add_test(tc, test_plan_settings_must_agree);
    tcase_add_test(tc, test_rc_create_destroy_cycles);
    tcase_add_test(tc, test_crossed_rails_fail_at_init);
    tcase_add_loop_test(tc, test_phases_line, 0, 2);
    suite_add_tcase(s, tc);
    const char *full = getenv("RG_CHECK_FULL");
    if (full && *full && strcmp(full, "0")) {
        /* "quick": the first case of the sizes and dtypes loops, so make check keeps the target
         * from rotting. Not the 64 MiB case: its first took 116 s of make check's 46 minutes
         * (22 results of 64 MiB in a guest); the full matrix runs all four. */
        bool quick = !strcmp(full, "quick");
        TCase *f = tcase_create("full");
        tcase_set_timeout(f, 1800);
        tcase_add_loop_test(f, test_full_sizes, 0, quick ? 1 : 24);
        tcase_add_loop_test(f, test_full_dtypes_four_rails, 0, quick ? 1 : 6);
        if (!quick)
            tcase_add_loop_test(f, test_full_64mib, 0, 4);
        suite_add_tcase(s, f);
    }
    return s;
}
