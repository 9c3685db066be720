/* SPDX-License-Identifier: MIT */
#include "drive.h"
#include "data/rg_data.h"
#include "rg_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct rank_out {
    int done, ok, checks;
    unsigned long long into; /* receives that landed in the output in place */
    char msg[512];
};

void drive_opts_default(struct drive_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->ranks = 2;
    o->rails = 1;
    o->qp = RG_QPT_UC;
    o->counts[0] = 1;
    o->counts[1] = 1021;
    o->all_dtypes = 1;
    o->cycles = 1;
    o->seed = 1;
    o->timeout_s = 30;
    o->cross_rank = -1;
    o->env_rank = -1;
}

/* --- the oracle: the runner's own (harness/rg_data.c), one for every test and scenario -------- */

/* The stream of values for one call of a cycle: each call has its own, so a result left over
 * from the call before (or a stale buffer) cannot pass for this one's. */
enum { K_ALL_REDUCE, K_REDUCE_SCATTER, K_ALL_GATHER, K_BROADCAST, K_SENDRECV };
static rg_data_key key(uint64_t seed, int call, int cycle, int nranks)
{
    return (rg_data_key){.seed = seed,
                         .step = (uint32_t)call,
                         .rep = (uint32_t)cycle,
                         .values = RG_VALUES_EXACT,
                         .nranks = nranks};
}

/* --- one rank ----------------------------------------------------------------------------------
 */

struct ctx {
    const struct drive_opts *o;
    rg_comm_h comm;
    int rank, n;
    struct rank_out *out;
};

/* A call's status and result: bit-exact, except that a reduction's floating zeros compare
 * without their sign and NaNs by class (rg_data_compare: the order of a reduction decides them). */
static int check(struct ctx *x, const char *what, rg_dtype dt, rg_redop op, size_t count,
                 rg_status st, const void *got, const void *want, size_t n, bool reduced)
{
    if (st != RG_OK) {
        snprintf(x->out->msg, sizeof(x->out->msg), "rank %d: %s %s %s count %zu: %s: %.320s",
                 x->rank, what, rg_dtype_name(dt), rg_redop_name(op), count, rg_err_name(st),
                 rg_comm_error(x->comm));
        return -1;
    }
    size_t at = rg_data_compare(got, want, n, dt, reduced), esz = rg_dtype_size(dt);
    if (at < n) {
        uint64_t g = 0, w = 0;
        memcpy(&g, (const uint8_t *)got + at * esz, esz < 8 ? esz : 8);
        memcpy(&w, (const uint8_t *)want + at * esz, esz < 8 ? esz : 8);
        snprintf(x->out->msg, sizeof(x->out->msg),
                 "rank %d: %s %s %s count %zu: wrong result at element %zu: 0x%llx, expected "
                 "0x%llx",
                 x->rank, what, rg_dtype_name(dt), rg_redop_name(op), count, at,
                 (unsigned long long)g, (unsigned long long)w);
        return -1;
    }
    x->out->checks++;
    return 0;
}

/*
 * The ring runs both ways round when there are 3+ ranks and a step moves more than one chunk,
 * unless RG_RING_BIDIR=0. Counter-clockwise traffic is the only traffic a ring rank sends to
 * its left neighbour, so a count of those sends shows which plan ran. sent_left is the number
 * of messages sent left during the call; `sender` is 0 for a rank with nothing to send left
 * even when both ways run (a broadcast chain's end).
 */
static int ring_both_ways(const struct ctx *x, size_t step_bytes)
{
    const char *bidir = getenv("RG_RING_BIDIR");
    return x->o->algo == RG_ALGO_RING && x->n >= 3 && !(bidir && !strcmp(bidir, "0")) &&
           step_bytes > rg__comm_chunk_bytes(x->comm);
}

static int check_ways(struct ctx *x, const char *what, size_t step_bytes, uint64_t sent_left,
                      int sender)
{
    if (x->o->algo != RG_ALGO_RING || x->n < 3 || !sender)
        return 0;
    int both = ring_both_ways(x, step_bytes);
    if (both == (sent_left > 0))
        return 0;
    snprintf(x->out->msg, sizeof(x->out->msg),
             "rank %d: %s of %zu bytes a step: %llu messages to the left neighbour, expected %s",
             x->rank, what, step_bytes, (unsigned long long)sent_left, both ? "some" : "none");
    return -1;
}

/*
 * With registered buffers, a block of at least RG_ZCOPY_MIN bytes that the call does not
 * rewrite goes in place: all_gather's and send's blocks always qualify, so zero-copy sends
 * must be seen exactly when the block is that large. Without registration, a call that sends
 * RG_ZCOPY_AUTO bytes or more from its buffer registers it for the call (one buffer: regs,
 * the registrations the call made, must be 1) and sends the same way; below that, none.
 */
static int check_zcopy(struct ctx *x, const char *what, size_t block_bytes, size_t sent_bytes,
                       size_t landed_bytes, uint64_t zc, uint64_t regs)
{
    size_t at = rg__comm_zcopy_auto(x->comm);
    /* What the call sends plus what it may receive in place, against RG_ZCOPY_AUTO. */
    int reg = !x->o->zcopy && at && sent_bytes + landed_bytes >= at;
    int want = (x->o->zcopy || reg) && block_bytes >= rg__comm_zcopy_min(x->comm);
    if (regs != (uint64_t)reg) {
        snprintf(x->out->msg, sizeof(x->out->msg),
                 "rank %d: %s sending %zu bytes registered %llu buffer(s) for the call, expected "
                 "%d (RG_ZCOPY_AUTO %zu)",
                 x->rank, what, sent_bytes, (unsigned long long)regs, reg, at);
        return -1;
    }
    if (want == (zc > 0))
        return 0;
    snprintf(x->out->msg, sizeof(x->out->msg),
             "rank %d: %s of %zu-byte blocks made %llu sends in place, expected %s", x->rank, what,
             block_bytes, (unsigned long long)zc, want ? "some" : "none");
    return -1;
}

/* The bytes an all_gather of count elements a rank receives in place: its blocks (halves, when
 * the ring runs both ways) of RG_ZCOPY_MIN or more, n - 1 of each. */
static size_t landed_gather(struct ctx *x, size_t count, size_t esz)
{
    size_t zmin = rg__comm_zcopy_min(x->comm), part[2] = {count * esz, 0};
    if (ring_both_ways(x, count * esz)) {
        part[0] = count / 2 * esz;
        part[1] = (count - count / 2) * esz;
    }
    size_t one = (part[0] >= zmin ? part[0] : 0) + (part[1] >= zmin ? part[1] : 0);
    return one * (size_t)(x->n - 1);
}

static void sends_to_each(struct ctx *x, uint64_t *out)
{
    for (int q = 0; q < x->n; q++)
        out[q] = rg__comm_sends_to(x->comm, q);
}

/*
 * Under auto, an all_reduce of at most RG_ONESHOT_BYTES (within one chunk) is one hop: each
 * peer gets exactly one message. With count >= ranks every mesh or ring segment is non-empty,
 * and both of those plans send some peer two, so the count tells which plan ran.
 */
static int check_one_shot(struct ctx *x, size_t bytes, size_t count, const uint64_t *before)
{
    uint64_t after[8];
    if (x->o->algo != RG_ALGO_AUTO || count < (size_t)x->n ||
        bytes > rg__comm_oneshot_bytes(x->comm) || bytes > rg__comm_chunk_bytes(x->comm))
        return 0;
    sends_to_each(x, after);
    for (int q = 0; q < x->n; q++)
        if (q != x->rank && after[q] - before[q] != 1) {
            snprintf(x->out->msg, sizeof(x->out->msg),
                     "rank %d: all_reduce of %zu bytes under auto sent rank %d %llu messages, "
                     "expected the one-shot plan's 1",
                     x->rank, bytes, q, (unsigned long long)(after[q] - before[q]));
            return -1;
        }
    return 0;
}

static int run_dtype(struct ctx *x, rg_dtype dt, rg_redop op, size_t count, int cycle)
{
    size_t esz = rg_dtype_size(dt), bytes = count * esz, nb = bytes * (size_t)x->n;
    uint64_t seed = x->o->seed; /* the cycle is the stream's repeat */
    uint8_t *in = malloc(nb + 1), *out = malloc(nb + 1), *want = malloc(nb + 1);
    int rc = -1, n = x->n, r = x->rank, left = (r + n - 1) % n;
    uint64_t l0, z0, a0, each[8];
    rg_mem_h min = NULL, mout = NULL;
    rg_status st;
    if (!in || !out || !want) {
        snprintf(x->out->msg, sizeof(x->out->msg), "rank %d: out of memory", r);
        goto out;
    }
    if (x->o->zcopy && ((st = rg_mem_register(x->comm, in, nb + 1, &min)) ||
                        (st = rg_mem_register(x->comm, out, nb + 1, &mout)))) {
        snprintf(x->out->msg, sizeof(x->out->msg), "rank %d: rg_mem_register: %s: %.400s", r,
                 rg_err_name(st), rg_comm_error(x->comm));
        goto out;
    }
    /* all_reduce, out of place then in place */
    rg_data_key k = key(seed, K_ALL_REDUCE, cycle, n);
    rg_data_fill(in, count, dt, (int)op, &k, r, 0);
    rg_data_expect_reduce(want, count, dt, op, &k, n, 0);
    memset(out, 0xa5, bytes);
    l0 = rg__comm_sends_to(x->comm, left);
    sends_to_each(x, each);
    st = rg_all_reduce(x->comm, in, out, count, dt, op);
    if (check(x, "all_reduce", dt, op, count, st, out, want, count, true) ||
        check_ways(x, "all_reduce", bytes, rg__comm_sends_to(x->comm, left) - l0, 1) ||
        check_one_shot(x, bytes, count, each))
        goto out;
    /* The steps read the input where it is (no copy into the output first): still unwritten. */
    rg_data_fill(want, count, dt, (int)op, &k, r, 0);
    if (memcmp(in, want, bytes)) {
        snprintf(x->out->msg, sizeof(x->out->msg),
                 "rank %d: all_reduce of %zu elements wrote its "
                 "input",
                 r, count);
        goto out;
    }
    rg_data_expect_reduce(want, count, dt, op, &k, n, 0);
    rg_data_fill(out, count, dt, (int)op, &k, r, 0);
    st = rg_all_reduce(x->comm, out, out, count, dt, op);
    if (check(x, "all_reduce(in place)", dt, op, count, st, out, want, count, true))
        goto out;
    /* Input and output that partly overlap: the input is the caller's until the call reads it. */
    if (count >= 2 && n >= 2) { /* out holds n blocks */
        size_t h = count / 2;
        rg_data_fill(out + h * esz, count, dt, (int)op, &k, r, 0);
        st = rg_all_reduce(x->comm, out + h * esz, out, count, dt, op);
        if (check(x, "all_reduce(overlapping)", dt, op, count, st, out, want, count, true))
            goto out;
    }
    /* reduce_scatter: block b of rank q's input is the logical stream at offset b * count */
    k = key(seed, K_REDUCE_SCATTER, cycle, n);
    rg_data_fill(in, count * (size_t)n, dt, (int)op, &k, r, 0);
    rg_data_expect_reduce(want, count, dt, op, &k, n, (size_t)r * count);
    memset(out, 0xa5, bytes);
    l0 = rg__comm_sends_to(x->comm, left);
    st = rg_reduce_scatter(x->comm, in, out, count, dt, op);
    if (check(x, "reduce_scatter", dt, op, count, st, out, want, count, true) ||
        check_ways(x, "reduce_scatter", bytes, rg__comm_sends_to(x->comm, left) - l0, 1))
        goto out;
    if (op != RG_SUM) {
        rc = 0;
        goto out; /* the data-movement collectives do not depend on op */
    }
    /* all_gather: rank q contributes its input stream */
    k = key(seed, K_ALL_GATHER, cycle, n);
    for (int q = 0; q < n; q++)
        rg_data_fill(want + (size_t)q * bytes, count, dt, -1, &k, q, 0);
    rg_data_fill(in, count, dt, -1, &k, r, 0);
    memset(out, 0xa5, nb);
    l0 = rg__comm_sends_to(x->comm, left);
    z0 = rg__comm_zcopy_sends(x->comm);
    a0 = rg__comm_auto_regs(x->comm, NULL);
    st = rg_all_gather(x->comm, in, out, count, dt);
    /* Ring or mesh, a rank sends n - 1 blocks' worth. */
    if (check(x, "all_gather", dt, op, count, st, out, want, count * (size_t)n, false) ||
        check_ways(x, "all_gather", bytes, rg__comm_sends_to(x->comm, left) - l0, 1) ||
        check_zcopy(x, "all_gather", ring_both_ways(x, bytes) ? (count - count / 2) * esz : bytes,
                    bytes * (size_t)(n - 1), landed_gather(x, count, esz),
                    rg__comm_zcopy_sends(x->comm) - z0, rg__comm_auto_regs(x->comm, NULL) - a0))
        goto out;
    /* broadcast from a root that moves with the cycle */
    int root = cycle % n;
    k = key(seed, K_BROADCAST, cycle, n);
    rg_data_fill(want, count, dt, -1, &k, root, 0);
    if (r == root)
        memcpy(out, want, bytes);
    else
        memset(out, 0xa5, bytes);
    l0 = rg__comm_sends_to(x->comm, left);
    st = rg_broadcast(x->comm, out, count, dt, root);
    /* Every rank but the chain's ends passes data on both ways; the root surely does. */
    if (check(x, "broadcast", dt, op, count, st, out, want, count, false) ||
        check_ways(x, "broadcast", bytes, rg__comm_sends_to(x->comm, left) - l0, r == root))
        goto out;
    /* send to the right, receive from the left; even ranks send first */
    int right = (r + 1) % n;
    k = key(seed, K_SENDRECV, cycle, n);
    rg_data_fill(in, count, dt, -1, &k, r, 0);
    rg_data_fill(want, count, dt, -1, &k, left, 0);
    memset(out, 0xa5, bytes);
    z0 = rg__comm_zcopy_sends(x->comm);
    a0 = rg__comm_auto_regs(x->comm, NULL);
    /* The receive's own registration (a block that lands in place) counted apart. */
    uint64_t recv_regs = 0, b0;
    if (r % 2 == 0) {
        st = rg_send(x->comm, in, count, dt, right);
        b0 = rg__comm_auto_regs(x->comm, NULL);
        if (!st)
            st = rg_recv(x->comm, out, count, dt, left);
        recv_regs = rg__comm_auto_regs(x->comm, NULL) - b0;
    } else {
        b0 = rg__comm_auto_regs(x->comm, NULL);
        st = rg_recv(x->comm, out, count, dt, left);
        recv_regs = rg__comm_auto_regs(x->comm, NULL) - b0;
        if (!st)
            st = rg_send(x->comm, in, count, dt, right);
    }
    size_t at = rg__comm_zcopy_auto(x->comm);
    int want_rr = !x->o->zcopy && at && bytes >= at && bytes >= rg__comm_zcopy_min(x->comm);
    if (!st && recv_regs != (uint64_t)want_rr) {
        snprintf(x->out->msg, sizeof(x->out->msg),
                 "rank %d: recv of %zu bytes registered %llu buffer(s) for the call, expected %d",
                 r, bytes, (unsigned long long)recv_regs, want_rr);
        goto out;
    }
    if (check(x, "send/recv", dt, op, count, st, out, want, count, false) ||
        check_zcopy(x, "send", bytes, bytes, 0, rg__comm_zcopy_sends(x->comm) - z0,
                    rg__comm_auto_regs(x->comm, NULL) - a0 - recv_regs))
        goto out;
    rc = 0;
out:
    if (((mout && rg_mem_deregister(x->comm, mout)) | (min && rg_mem_deregister(x->comm, min))) &&
        !rc) {
        snprintf(x->out->msg, sizeof(x->out->msg), "rank %d: rg_mem_deregister: %.400s", r,
                 rg_comm_error(x->comm));
        rc = -1;
    }
    free(in);
    free(out);
    free(want);
    return rc;
}

/*
 * rg_mem_register's refusals: a NULL or empty region, a seventeenth region, a handle given
 * back twice. Each is RG_ERR_INVALID with a message saying which, and none poisons the
 * communicator (the collectives that follow prove it).
 */
static int check_mem_api(struct ctx *x)
{
    static char buf[4096];
    rg_mem_h m[RG_MEM_MAX + 1];
    const char *bad = NULL;
    int n = 0;
    if (rg_mem_register(x->comm, NULL, 8, &m[0]) != RG_ERR_INVALID ||
        !strstr(rg_comm_error(x->comm), "NULL"))
        bad = "a NULL buffer";
    else if (rg_mem_register(x->comm, buf, 0, &m[0]) != RG_ERR_INVALID ||
             !strstr(rg_comm_error(x->comm), "empty"))
        bad = "an empty region";
    for (; !bad && n < RG_MEM_MAX; n++)
        if (rg_mem_register(x->comm, buf, sizeof(buf) - (size_t)n, &m[n]))
            bad = "overlapping regions up to the limit";
    if (!bad && (rg_mem_register(x->comm, buf, sizeof(buf), &m[n]) != RG_ERR_INVALID ||
                 !strstr(rg_comm_error(x->comm), "regions are registered already")))
        bad = "one region too many";
    while (!bad && n > 0)
        if (rg_mem_deregister(x->comm, m[--n]))
            bad = "deregistering a region";
    if (!bad && (rg_mem_deregister(x->comm, m[0]) != RG_ERR_INVALID ||
                 !strstr(rg_comm_error(x->comm), "no region of this communicator")))
        bad = "a region given back twice";
    if (!bad)
        return 0;
    snprintf(x->out->msg, sizeof(x->out->msg), "rank %d: rg_mem_register/deregister: %s: %.400s",
             x->rank, bad, rg_comm_error(x->comm));
    return -1;
}

/* The ranks' shared side-channel secret: made before they fork, so all of them hold it. */
static char g_secret[2 * 16 + 1];

static void make_secret(void)
{
    unsigned char b[16];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
        memset(b, 0x5a, sizeof(b)); /* a test's loopback job: any value both sides share */
    for (size_t i = 0; i < sizeof(b); i++)
        snprintf(g_secret + 2 * i, 3, "%02x", b[i]);
}

static void run_rank(const struct drive_opts *o, int rank, const char *devfile, const char *coord,
                     struct rank_out *out)
{
    struct ctx x = {o, NULL, rank, o->ranks, out};
    rg_config cfg;
    char err[512];
    rg_config_init(&cfg);
    cfg.rank = rank;
    cfg.size = o->ranks;
    snprintf(cfg.coordinator, sizeof(cfg.coordinator), "%s", coord);
    snprintf(cfg.devices_file, sizeof(cfg.devices_file), "%s", devfile);
    snprintf(cfg.secret, sizeof(cfg.secret), "%s", g_secret);
    cfg.qp_type = o->qp;
    cfg.algo = o->algo;
    cfg.timeout_s = o->timeout_s;
    for (int cyc = 0; cyc < o->cycles; cyc++) {
        rg_status st = rg_comm_create(&cfg, &x.comm, err, sizeof(err));
        if (st) {
            snprintf(out->msg, sizeof(out->msg), "rank %d: rg_comm_create: %s: %.400s", rank,
                     rg_err_name(st), err);
            return;
        }
        if (o->zcopy && cyc == 0 && check_mem_api(&x)) {
            rg_comm_abort(x.comm, out->msg);
            rg_comm_destroy(x.comm);
            return;
        }
        for (int ci = 0; ci < 8 && o->counts[ci]; ci++) {
            for (int dt = 0; dt < RG_DTYPE_COUNT; dt++) {
                if (!o->all_dtypes && dt != RG_FLOAT32 && dt != RG_INT32)
                    continue;
                for (int op = 0; op < RG_REDOP_COUNT; op++) {
                    if (!rg_redop_supported((rg_dtype)dt, (rg_redop)op))
                        continue;
                    if (!o->all_dtypes &&
                        !((dt == RG_FLOAT32 && op == RG_SUM) || (dt == RG_INT32 && op == RG_MAX)))
                        continue;
                    if (run_dtype(&x, (rg_dtype)dt, (rg_redop)op, o->counts[ci], cyc)) {
                        /* Tell the peers at once rather than leave them to their deadline. */
                        rg_comm_abort(x.comm, out->msg);
                        rg_comm_destroy(x.comm);
                        return;
                    }
                }
            }
        }
        rg_status st2 = rg_barrier(x.comm);
        if (st2) {
            snprintf(out->msg, sizeof(out->msg), "rank %d: barrier: %s: %.400s", rank,
                     rg_err_name(st2), rg_comm_error(x.comm));
            rg_comm_destroy(x.comm);
            return;
        }
        out->into += rg__comm_into_recvs(x.comm);
        rg_comm_destroy(x.comm);
    }
    out->ok = 1;
}

/* A free loopback port: bind to 0, read it back, close. Another process could take it in
 * between, which the side channel would report as a failed listen; it is rare. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

int drive_run(const struct drive_opts *o, struct drive_result *res)
{
    char devs[RG_MAX_RAILS][64], dir[] = "/tmp/rg-drive.XXXXXX", devfile[128], coord[64];
    const char *env = getenv("RG_SOFTROCE_DEVICES");
    int nd = 0;
    memset(res, 0, sizeof(*res));
    while (env && *env && nd < RG_MAX_RAILS) {
        size_t l = strcspn(env, " ");
        if (l && l < 64) {
            memcpy(devs[nd], env, l);
            devs[nd++][l] = '\0';
        }
        env += l + strspn(env + l, " ");
    }
    if (o->ranks < 1 || o->ranks > 8 || o->rails < 1 || o->rails > nd) {
        snprintf(res->msg, sizeof(res->msg),
                 "need 1..8 ranks and 1..%d rails ($RG_SOFTROCE_DEVICES"
                 " has %d)",
                 nd, nd);
        return -1;
    }
    if (!mkdtemp(dir)) {
        snprintf(res->msg, sizeof(res->msg), "mkdtemp failed");
        return -1;
    }
    snprintf(devfile, sizeof(devfile), "%s/devices.json", dir);
    FILE *f = fopen(devfile, "w");
    if (!f) {
        snprintf(res->msg, sizeof(res->msg), "cannot write %s", devfile);
        return -1;
    }
    fprintf(f, "[");
    for (int i = 0; i < o->ranks; i++) {
        fprintf(f, "%s[", i ? "," : "");
        for (int j = 0; j < o->ranks; j++) {
            fprintf(f, "%s", j ? "," : "");
            if (i == j) {
                fprintf(f, "null");
                continue;
            }
            fprintf(f, "[");
            for (int k = 0; k < o->rails; k++)
                fprintf(f, "%s\"%s\"", k ? "," : "",
                        devs[i == o->cross_rank ? o->rails - 1 - k : k]);
            fprintf(f, "]");
        }
        fprintf(f, "]");
    }
    fprintf(f, "]\n");
    fclose(f);
    snprintf(coord, sizeof(coord), "127.0.0.1:%d", free_port());

    struct rank_out *outs =
        mmap(NULL, sizeof(*outs) * 8, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t pids[8];
    double t0 = rg__now();
    memset(outs, 0, sizeof(*outs) * 8);
    fflush(NULL);
    make_secret();
    for (int r = 0; r < o->ranks; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            if (r == o->env_rank && o->env_set)
                putenv((char *)(uintptr_t)o->env_set);
            run_rank(o, r, devfile, coord, &outs[r]);
            outs[r].done = 1;
            _exit(outs[r].ok ? 0 : 1);
        }
    }
    /* Each rank's waits end by its own deadline; allow one communicator timeout per cycle
     * per count, plus a margin, before calling a rank hung. */
    double limit = t0 + o->timeout_s * (o->cycles + 1) * 4 + 30;
    int left = o->ranks, status, sig[8] = {0};
    while (left > 0) {
        pid_t p = waitpid(-1, &status, WNOHANG);
        if (p > 0) {
            for (int r = 0; r < o->ranks; r++)
                if (pids[r] == p && WIFSIGNALED(status))
                    sig[r] = WTERMSIG(status);
            left--;
            continue;
        }
        if (rg__now() > limit) {
            for (int r = 0; r < o->ranks; r++)
                kill(pids[r], SIGKILL);
            while (waitpid(-1, &status, 0) > 0)
                ;
            break;
        }
        usleep(20000);
    }
    res->seconds = rg__now() - t0;
    for (int r = 0; r < o->ranks; r++) {
        res->checks += outs[r].checks;
        res->into += outs[r].into;
        if (!outs[r].ok) {
            res->failed_ranks++;
            if (!o->quiet)
                fprintf(stderr, "drive: rank %d: %s\n", r,
                        outs[r].msg[0] ? outs[r].msg
                        : sig[r]       ? strsignal(sig[r])
                                       : "hung (killed at the drive's limit)");
            if (!res->msg[0])
                snprintf(res->msg, sizeof(res->msg), "%s",
                         outs[r].msg[0] ? outs[r].msg
                                        : (outs[r].done ? "a rank failed without a message"
                                                        : "a rank hung or crashed"));
        }
    }
    munmap(outs, sizeof(*outs) * 8);
    unlink(devfile);
    rmdir(dir);
    return res->failed_ranks ? -1 : 0;
}
