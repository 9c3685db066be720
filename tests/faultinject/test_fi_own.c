/* SPDX-License-Identifier: MIT */
/*
 * The buffer-ownership sanitizer (faultinject/fi_own.c) without a device: MRs are noted by hand,
 * work requests are plain structs, and the events it writes are caught by this file's fi_ev.
 */
#include "common/rg_check.h"
#include "fi_internal.h"

#include <stdio.h>
#include <string.h>

static char g_ev[512];
static int g_nev;

/* The shim's writer, replaced: the last event's record as text, and how many there were. */
void fi_ev(enum rg_ev_kind kind, const void *rec)
{
    const struct rg_evr_ownership *o = rec;
    if (kind != RG_EVK_ownership) {
        snprintf(g_ev, sizeof(g_ev), "%s:?", rg_ev_kinds[kind].name);
    } else {
        snprintf(g_ev, sizeof(g_ev),
                 "ownership:\"op\":\"%s\",\"qp\":%llu,\"wr_id\":\"0x%llx\",\"offset\":%lld,"
                 "\"bytes\":%llu%s",
                 o->op, (unsigned long long)o->qp, (unsigned long long)o->wr_id,
                 (long long)o->offset, (unsigned long long)o->bytes,
                 o->has & RG_EVH(ownership, answered)
                     ? (o->answered ? ",answered" : ",not answered")
                     : "");
    }
    g_nev++;
}

static char g_ctx; /* any address names a context */
static uint8_t g_buf[4096];

static void setup(void)
{
    g_nev = 0;
    g_ev[0] = '\0';
    memset(g_buf, 0x11, sizeof(g_buf));
    /* Registered at an iova of its own: SGEs speak iova, the check reads the program's bytes. */
    fi_own_mr_add(&g_ctx, 77, (uint64_t)(uintptr_t)g_buf, 0x10000, sizeof(g_buf));
}

static void teardown(void)
{
    fi_own_mr_del(&g_ctx, 77);
}

static struct ibv_send_wr send_wr(struct ibv_sge *sg, int n)
{
    return (struct ibv_send_wr){.wr_id = 9, .sg_list = sg, .num_sge = n, .opcode = IBV_WR_SEND};
}

START_TEST(test_send_untouched_passes)
{
    struct ibv_sge sg[2] = {{0x10000, 100, 77}, {0x10000 + 1000, 50, 77}};
    struct ibv_send_wr w = send_wr(sg, 2);
    struct fi_own *o = fi_own_send(&g_ctx, &w, NULL);
    ck_assert_ptr_nonnull(o);
    g_buf[500] ^= 1; /* outside the gather list: the program's to change */
    ck_assert(!fi_own_check(o, 5, NULL, 9, true, 0));
    ck_assert_int_eq(g_nev, 0);
    fi_own_free(o);
}
END_TEST

/* A byte of the second SGE changed before the completion: named by its offset in the list. */
START_TEST(test_send_rewritten_found)
{
    struct ibv_sge sg[2] = {{0x10000, 100, 77}, {0x10000 + 1000, 50, 77}};
    struct ibv_send_wr w = send_wr(sg, 2);
    struct fi_own *o = fi_own_send(&g_ctx, &w, NULL);
    g_buf[1000 + 7] = 0x22;
    ck_assert(fi_own_check(o, 5, NULL, 9, true, 0));
    ck_assert_int_eq(g_nev, 1);
    ck_assert_str_eq(g_ev, "ownership:\"op\":\"send\",\"qp\":5,\"wr_id\":\"0x9\",\"offset\":107,"
                           "\"bytes\":150");
    fi_own_free(o);
    struct fi_own_tally t;
    fi_own_counts(&t);
    ck_assert_uint_ge(t.rewritten, 1);
}
END_TEST

/* The shim's corrupt flipped a bit in a buffer a send still reads (a program receiving into
 * the buffer it sends from, as ibv_srq_pingpong does): the shim's hand, no rewrite. A second
 * change beside it, or another bit of the same byte, is still the program's. */
START_TEST(test_send_shim_flip_not_rewrite)
{
    struct ibv_sge sg[1] = {{0x10000, 100, 77}};
    struct ibv_send_wr w = send_wr(sg, 1);
    struct fi_own *o = fi_own_send(&g_ctx, &w, NULL);
    g_buf[40] ^= 0x10;
    fi_own_flipped((uint64_t)(uintptr_t)&g_buf[40], 0x10);
    ck_assert(!fi_own_check(o, 5, NULL, 9, true, 0));
    ck_assert_int_eq(g_nev, 0);
    fi_own_free(o);
    o = fi_own_send(&g_ctx, &w, NULL);
    g_buf[40] ^= 0x10 | 0x01; /* the flip's bit back, and one more of its own */
    fi_own_flipped((uint64_t)(uintptr_t)&g_buf[40], 0x10);
    g_buf[60] = 0x33;
    ck_assert(fi_own_check(o, 5, NULL, 9, true, 0));
    ck_assert_str_eq(g_ev, "ownership:\"op\":\"send\",\"qp\":5,\"wr_id\":\"0x9\",\"offset\":40,"
                           "\"bytes\":100");
    fi_own_free(o);
}
END_TEST

/* Inline sends were copied at post: exempt. An SGE outside every MR: not sanitized, counted. */
START_TEST(test_send_exempt_and_unknown)
{
    struct fi_own_tally t0, t1;
    fi_own_counts(&t0);
    struct ibv_sge in = {0x10000, 16, 77}, out = {0x10000 + 4000, 200, 77};
    struct ibv_send_wr w = send_wr(&in, 1);
    w.send_flags = IBV_SEND_INLINE;
    ck_assert_ptr_null(fi_own_send(&g_ctx, &w, NULL));
    w = send_wr(&out, 1); /* runs 104 bytes past the MR's end */
    ck_assert_ptr_null(fi_own_send(&g_ctx, &w, NULL));
    struct ibv_sge other = {0x10000, 16, 78}; /* an lkey never registered */
    w = send_wr(&other, 1);
    ck_assert_ptr_null(fi_own_send(&g_ctx, &w, NULL));
    fi_own_counts(&t1);
    ck_assert_uint_eq(t1.unsanitized - t0.unsanitized, 2);
    ck_assert_uint_eq(t1.sends - t0.sends, 0);
}
END_TEST

/* A receive's buffer is poison from its post; bytes past byte_len must still be at completion. */
START_TEST(test_recv_poison)
{
    struct ibv_sge sg = {0x10000 + 64, 256, 77};
    struct ibv_recv_wr w = {.wr_id = 3, .sg_list = &sg, .num_sge = 1};
    struct fi_own *o = fi_own_recv(&g_ctx, &w, 0);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(g_buf[64], 0xa5);
    ck_assert_int_eq(g_buf[64 + 255], 0xa5);
    ck_assert_int_eq(g_buf[63], 0x11);
    ck_assert_int_eq(g_buf[64 + 256], 0x11);
    memset(g_buf + 64, 0x33, 100); /* what the NIC delivered: 100 bytes */
    ck_assert(!fi_own_check(o, 5, NULL, 3, true, 100));
    fi_own_free(o);

    o = fi_own_recv(&g_ctx, &w, 0);
    memset(g_buf + 64, 0x33, 100);
    g_buf[64 + 200] = 0; /* the program wrote past what arrived, while the NIC owned it */
    ck_assert(fi_own_check(o, 5, NULL, 3, true, 100));
    ck_assert_str_eq(g_ev, "ownership:\"op\":\"recv\",\"qp\":5,\"wr_id\":\"0x3\",\"offset\":200,"
                           "\"bytes\":256");
    fi_own_free(o);

    /* The first byte past the message, and one in the tail the check reads a byte at a time
     * (from 100, whole words end at 252): each found where it is. */
    static const int at[] = {100, 101, 251, 252, 255};
    for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
        o = fi_own_recv(&g_ctx, &w, 0);
        memset(g_buf + 64, 0x33, 100);
        g_buf[64 + at[k]] = 0xa4;
        if (at[k] + 2 < 256)
            g_buf[64 + at[k] + 2] = 0; /* a second in the same word: the first is the one said */
        ck_assert(fi_own_check(o, 5, NULL, 3, true, 100));
        char want[128];
        snprintf(want, sizeof(want),
                 "ownership:\"op\":\"recv\",\"qp\":5,\"wr_id\":\"0x3\",\"offset\":%d,"
                 "\"bytes\":256",
                 at[k]);
        ck_assert_str_eq(g_ev, want);
        fi_own_free(o);
    }

    /* A receive completed in error is not judged, and its bytes are undefined: whatever
     * landed (here all 256 right bytes, as when the shim makes an error up) is poison again
     * before the program sees the completion, and nothing outside the SGE is touched. */
    struct fi_own_tally t0, t1;
    fi_own_counts(&t0);
    o = fi_own_recv(&g_ctx, &w, 0);
    memset(g_buf + 64, 0x33, 256);
    ck_assert(!fi_own_check(o, 5, NULL, 3, false, 0));
    for (int i = 0; i < 256; i++)
        ck_assert_int_eq(g_buf[64 + i], 0xa5);
    ck_assert_int_eq(g_buf[63], 0x11);
    ck_assert_int_eq(g_buf[64 + 256], 0x11);
    fi_own_counts(&t1);
    ck_assert_uint_eq(t1.repoisoned - t0.repoisoned, 1);
    fi_own_free(o);

    /* Deregistered before its error completion: tracking ended, the memory is not written. */
    o = fi_own_recv(&g_ctx, &w, 0);
    fi_own_mr_del(&g_ctx, 77);
    memset(g_buf + 64, 0x33, 256);
    ck_assert(!fi_own_check(o, 5, NULL, 3, false, 0));
    ck_assert_int_eq(g_buf[64], 0x33);
    fi_own_mr_add(&g_ctx, 77, (uint64_t)(uintptr_t)g_buf, 0x10000, sizeof(g_buf));
    fi_own_free(o);
}
END_TEST

/* Deregistered before the completion: tracking ended there, the memory is never read. */
START_TEST(test_dereg_ends_tracking)
{
    struct ibv_sge sg = {0x10000, 100, 77};
    struct ibv_send_wr w = send_wr(&sg, 1);
    struct fi_own *o = fi_own_send(&g_ctx, &w, NULL);
    fi_own_mr_del(&g_ctx, 77);
    g_buf[3] = 0x44;
    ck_assert(!fi_own_check(o, 5, NULL, 9, true, 0));
    /* The same lkey registered again is another registration: still not compared. */
    fi_own_mr_add(&g_ctx, 77, (uint64_t)(uintptr_t)g_buf, 0x10000, sizeof(g_buf));
    ck_assert(!fi_own_check(o, 5, NULL, 9, true, 0));
    ck_assert_int_eq(g_nev, 0);
    fi_own_free(o);
}
END_TEST

/*
 * What a program left in a receive buffer past the message is its own again at the completion
 * (no NIC writes there): poison while the NIC owns the buffer, the bytes of the post after it.
 * A byte the program wrote meanwhile is found, and stays as written.
 */
START_TEST(test_recv_slack_given_back)
{
    for (int i = 0; i < 256; i++)
        g_buf[64 + i] = (uint8_t)i; /* the program's bytes before the post */
    struct ibv_sge sg[2] = {{0x10000 + 64, 100, 77}, {0x10000 + 64 + 100, 156, 77}};
    struct ibv_recv_wr w = {.wr_id = 4, .sg_list = sg, .num_sge = 2};
    struct fi_own *o = fi_own_recv(&g_ctx, &w, 0);
    ck_assert_ptr_nonnull(o);
    for (int i = 0; i < 256; i++)
        ck_assert_int_eq(g_buf[64 + i], 0xa5); /* the NIC's now: poison */
    memset(g_buf + 64, 0x33, 120);             /* what the NIC delivered: 120 bytes */
    ck_assert(!fi_own_check(o, 5, NULL, 4, true, 120));
    fi_own_free(o);
    for (int i = 0; i < 120; i++)
        ck_assert_int_eq(g_buf[64 + i], 0x33);
    for (int i = 120; i < 256; i++) /* across the second SGE: the post's bytes back */
        ck_assert_int_eq(g_buf[64 + i], i);

    o = fi_own_recv(&g_ctx, &w, 0);
    g_buf[64 + 200] = 0x44; /* written while the NIC owned it */
    memset(g_buf + 64, 0x33, 120);
    ck_assert(fi_own_check(o, 5, NULL, 4, true, 120));
    fi_own_free(o);
    ck_assert_int_eq(g_buf[64 + 200], 0x44);
    ck_assert_int_eq(g_buf[64 + 199], 199);
    ck_assert_int_eq(g_buf[64 + 201], 201);
}
END_TEST

/* A UD receive's room (GRH and MTU): poison and checks end there; what lies past it (memory
 * UCX uses while its UD buffers are posted) is never touched. */
START_TEST(test_recv_room)
{
    memset(g_buf + 64, 0x11, 300);
    struct ibv_sge sg = {0x10000 + 64, 256, 77};
    struct ibv_recv_wr w = {.wr_id = 6, .sg_list = &sg, .num_sge = 1};
    struct fi_own *o = fi_own_recv(&g_ctx, &w, 200);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(g_buf[64 + 199], 0xa5);
    ck_assert_int_eq(g_buf[64 + 200], 0x11); /* past the room: the program's */
    g_buf[64 + 220] = 0x22;                  /* and its to write: no finding */
    memset(g_buf + 64, 0x33, 50);
    ck_assert(!fi_own_check(o, 5, NULL, 6, true, 50));
    fi_own_free(o);
    ck_assert_int_eq(g_buf[64 + 199], 0x11); /* given back */
    ck_assert_int_eq(g_buf[64 + 220], 0x22);
}
END_TEST

/* One UD send posted (ud: its QP's record, NULL for another type), the QP hearing from each of
 * `from` after the post, its byte 3 rewritten, then checked: a rewrite is found either way. */
static void ud_rewrite(const struct ibv_send_wr *w, const struct fi_heard *ud, struct fi_heard *h,
                       const uint32_t *from, int n)
{
    g_buf[3] = 0x11;
    struct fi_own *o = fi_own_send(&g_ctx, w, ud);
    for (int i = 0; i < n; i++)
        fi_heard_note(h, from[i]);
    g_buf[3] = 0x22;
    ck_assert(fi_own_check(o, 5, h, 9, true, 0));
    fi_own_free(o);
}

/*
 * A UD send rewritten before its completion: judged unless its QP heard from the send's
 * destination after the post (the acknowledgement protocols' reuse, reported apart). Heard
 * before the post, or from another QP, or a slot taken since by another source: judged.
 */
START_TEST(test_ud_send_answered)
{
    static struct fi_heard h; /* zeroed: heard nothing */
    struct ibv_sge sg = {0x10000, 100, 77};
    struct ibv_send_wr w = send_wr(&sg, 1);
    w.wr.ud.remote_qpn = 0x1234;
    fi_heard_note(&h, 0x1234); /* before the post: says nothing of this send */
    struct fi_own_tally t0, t1;
    fi_own_counts(&t0);

    ud_rewrite(&w, &h, &h, (const uint32_t[]){0x999}, 1); /* another source */
    ck_assert_str_eq(g_ev, "ownership:\"op\":\"send\",\"qp\":5,\"wr_id\":\"0x9\",\"offset\":3,"
                           "\"bytes\":100");
    ud_rewrite(&w, &h, &h, (const uint32_t[]){0x1234}, 1); /* the destination answered */
    ck_assert_str_eq(g_ev, "ownership:\"op\":\"send\",\"qp\":5,\"wr_id\":\"0x9\",\"offset\":3,"
                           "\"bytes\":100,answered");
    /* The destination's slot taken since by a source of the same slot: forgotten, judged. */
    ud_rewrite(&w, &h, &h, (const uint32_t[]){0x1234, 0x1234 + FI_HEARD}, 2);
    ck_assert(!strstr(g_ev, "answered"));
    /* Not a UD QP (no record of what it heard): judged, whatever came in. */
    ud_rewrite(&w, NULL, &h, (const uint32_t[]){0x1234}, 1);
    ck_assert(!strstr(g_ev, "answered"));

    fi_own_counts(&t1);
    ck_assert_uint_eq(t1.rewritten - t0.rewritten, 3);
    ck_assert_uint_eq(t1.answered - t0.answered, 1);
}
END_TEST

Suite *rg_suite_fi_own(void)
{
    Suite *s = suite_create("fi_own");
    TCase *t = tcase_create("sanitizer");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_send_untouched_passes);
    tcase_add_test(t, test_send_rewritten_found);
    tcase_add_test(t, test_send_shim_flip_not_rewrite);
    tcase_add_test(t, test_send_exempt_and_unknown);
    tcase_add_test(t, test_recv_poison);
    tcase_add_test(t, test_recv_slack_given_back);
    tcase_add_test(t, test_recv_room);
    tcase_add_test(t, test_dereg_ends_tracking);
    tcase_add_test(t, test_ud_send_answered);
    suite_add_tcase(s, t);
    return s;
}
