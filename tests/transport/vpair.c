/* SPDX-License-Identifier: MIT */
#include "vpair.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Side-channel messages: a one-byte tag, then a fixed body. */
enum { MSG_ADDR = 'A', MSG_CREDIT = 'C', MSG_RESULT = 'R' };

struct msg_result {
    int32_t st;
    uint64_t bytes;
    char text[400];
};

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint8_t pattern_byte(size_t i, uint64_t seed)
{
    return (uint8_t)(splitmix64(seed ^ (i / 8)) >> (8 * (i % 8)));
}

void vpair_fill(uint8_t *buf, size_t len, size_t offset, uint64_t seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern_byte(offset + i, seed);
}

size_t vpair_check(const uint8_t *buf, size_t len, size_t offset, uint64_t seed)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern_byte(offset + i, seed))
            return i;
    return len;
}

void vpair_opts_default(struct vpair_opts *o)
{
    static const struct rg_vqp_tuning t = RG_VQP_TUNING_DEFAULT;
    memset(o, 0, sizeof(*o));
    o->send_dev = "rxe0";
    o->recv_dev = "rxe0";
    o->kind = RG_QP_UC;
    o->bytes = 1u << 20;
    o->chunk = 64u << 10;
    o->window = 8;
    o->timeout_s = 30;
    o->tuning = t;
    o->seed = 1;
}

/* Writes a tagged message whole; the socket is a local stream, so short writes are rare. */
static int send_msg(int fd, char tag, const void *body, size_t len)
{
    char buf[1 + sizeof(struct msg_result)];
    buf[0] = tag;
    memcpy(buf + 1, body, len);
    size_t off = 0;
    while (off < len + 1) {
        /* MSG_NOSIGNAL: a peer that already left must not kill us with SIGPIPE. */
        ssize_t w = send(fd, buf + off, len + 1 - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* Reads exactly len bytes before the deadline; -1 on EOF, error or timeout. */
static int read_full(int fd, void *p, size_t len, double deadline)
{
    size_t off = 0;
    while (off < len) {
        int ms = (int)((deadline - rg__now()) * 1000);
        if (ms <= 0)
            return -1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return -1;
        ssize_t r = read(fd, (char *)p + off, len - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        off += (size_t)r;
    }
    return 0;
}

/* One side's state: device, CQ, QP, buffer. */
struct side {
    struct rg_vdev dev;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    uint8_t *buf;
    struct rg_err err;
};

static void side_close(struct side *s)
{
    rg_vqp_destroy(s->qp);
    rg_vcq_destroy(s->cq);
    rg_vmr_dereg(s->mr);
    rg_vdev_close(&s->dev);
    free(s->buf);
}

/* Opens the device, makes CQ, QP and buffer, trades addresses and connects. */
static rg_status side_setup(struct side *s, const char *devname, const struct vpair_opts *o, int fd,
                            double deadline)
{
    struct rg_vqp_addr mine, theirs;
    char tag;
    int depth = (int)o->window + 4;

    if (rg_vdev_open(&s->dev, devname, &s->err))
        return s->err.st;
    if (rg_vcq_create(&s->dev, 2 * depth, &s->cq, &s->err))
        return s->err.st;
    if (rg_vqp_create(&s->dev, o->kind, s->cq, s->cq, (uint32_t)depth, (uint32_t)depth, &s->qp,
                      &s->err))
        return s->err.st;
    s->buf = malloc(o->bytes ? o->bytes : 1);
    if (!s->buf)
        return rg__err_set(&s->err, RG_ERR_NOMEM, "no memory for %zu bytes", o->bytes);
    if (rg_vmr_reg(&s->dev, s->buf, o->bytes ? o->bytes : 1, IBV_ACCESS_LOCAL_WRITE, &s->mr,
                   &s->err))
        return s->err.st;
    rg_vqp_local_addr(&s->dev, s->qp, (uint32_t)(o->seed * 7919u) & 0xffffff, &mine);
    if (send_msg(fd, MSG_ADDR, &mine, sizeof(mine)) || read_full(fd, &tag, 1, deadline) ||
        tag != MSG_ADDR || read_full(fd, &theirs, sizeof(theirs), deadline))
        return rg__err_set(&s->err, RG_ERR_SIDE_CHANNEL, "address exchange with the peer failed");
    return rg_vqp_connect(&s->dev, s->qp, o->kind, &mine, &theirs, &o->tuning, &s->err);
}

static size_t chunk_len(const struct vpair_opts *o, size_t i)
{
    size_t off = i * o->chunk;
    return o->bytes - off < o->chunk ? o->bytes - off : o->chunk;
}

/* Receiver: keep `window` receives posted, grant one credit per posted receive. */
static void run_receiver(const struct vpair_opts *o, int fd)
{
    struct side s;
    struct msg_result res;
    double deadline = rg__now() + o->timeout_s;
    size_t nchunks = (o->bytes + o->chunk - 1) / o->chunk, posted = 0, done = 0;
    struct ibv_wc wc[16];

    memset(&s, 0, sizeof(s));
    memset(&res, 0, sizeof(res));
    if (side_setup(&s, o->recv_dev, o, fd, deadline))
        goto report;
    while (done < nchunks) {
        uint32_t grant = 0;
        while (posted < nchunks && posted - done < o->window) {
            if (rg_vpost_recv(s.qp, posted, s.buf + posted * o->chunk,
                              (uint32_t)chunk_len(o, posted), s.mr->lkey, &s.err))
                goto report;
            posted++;
            grant++;
        }
        if (grant && send_msg(fd, MSG_CREDIT, &grant, sizeof(grant))) {
            rg__err_set(&s.err, RG_ERR_SIDE_CHANNEL, "cannot send credits to the sender");
            goto report;
        }
        int n = rg_vpoll(s.cq, 16, wc, &(struct rg_vpoller){.e = &s.err});
        if (n < 0)
            goto report;
        for (int i = 0; i < n; i++) {
            size_t idx = (size_t)wc[i].wr_id;
            if (wc[i].opcode != IBV_WC_RECV || idx != done || wc[i].byte_len != chunk_len(o, idx)) {
                rg__err_set(&s.err, RG_ERR_PROTOCOL,
                            "chunk %zu: got wr_id %zu with %u bytes, expected %zu bytes", done, idx,
                            wc[i].byte_len, chunk_len(o, done));
                goto report;
            }
            done++;
        }
        if (n == 0) {
            /* Nothing arrived: is the sender still there, and is there time left? */
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            if (poll(&pfd, 1, 0) > 0) {
                rg__err_set(&s.err, RG_ERR_PEER_ABORT,
                            "the sender stopped after %zu of %zu "
                            "chunks",
                            done, nchunks);
                goto report;
            }
            if (rg__now() > deadline) {
                rg__err_set(&s.err, RG_ERR_TIMEOUT, "%zu of %zu chunks arrived within %.1f s", done,
                            nchunks, o->timeout_s);
                goto report;
            }
        }
    }
    size_t bad = vpair_check(s.buf, o->bytes, 0, o->seed);
    if (bad != o->bytes)
        rg__err_set(&s.err, RG_ERR_PROTOCOL, "byte %zu differs from the pattern", bad);
    else
        res.bytes = o->bytes;
report:
    res.st = s.err.st;
    snprintf(res.text, sizeof(res.text), "receiver on %.40s: %s", o->recv_dev, s.err.msg);
    send_msg(fd, MSG_RESULT, &res, sizeof(res));
    side_close(&s);
}

/* Sender: send a chunk only against a credit, keep the send queue within the window. */
static void run_sender(const struct vpair_opts *o, int fd, struct vpair_result *r)
{
    struct side s;
    struct msg_result res;
    double deadline = rg__now() + o->timeout_s, t0 = 0;
    size_t nchunks = (o->bytes + o->chunk - 1) / o->chunk, sent = 0, acked = 0;
    uint64_t credits = 0;
    struct ibv_wc wc[16];
    int have_result = 0;
    char tag;

    memset(&s, 0, sizeof(s));
    memset(&res, 0, sizeof(res));
    if (side_setup(&s, o->send_dev, o, fd, deadline))
        goto out;
    vpair_fill(s.buf, o->bytes, 0, o->seed);
    t0 = rg__now();
    while (acked < nchunks) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        while (poll(&pfd, 1, 0) > 0) {
            if (read_full(fd, &tag, 1, deadline))
                break;
            if (tag == MSG_CREDIT) {
                uint32_t g;
                if (read_full(fd, &g, sizeof(g), deadline))
                    break;
                credits += g;
            } else if (tag == MSG_RESULT) {
                if (read_full(fd, &res, sizeof(res), deadline))
                    break;
                have_result = 1;
                break;
            }
        }
        if (have_result && res.st != RG_OK)
            goto out; /* the receiver failed first; its message is the one to report */
        while (sent < nchunks && credits > 0 && sent - acked < o->window) {
            struct ibv_sge sge = {.addr = (uintptr_t)(s.buf + sent * o->chunk),
                                  .length = (uint32_t)chunk_len(o, sent),
                                  .lkey = s.mr->lkey};
            if (rg_vpost_send(s.qp, sent, &sge, 1, &s.err))
                goto out;
            sent++;
            credits--;
        }
        int n = rg_vpoll(s.cq, 16, wc, &(struct rg_vpoller){.e = &s.err});
        if (n < 0)
            goto out;
        acked += (size_t)n;
        if (n == 0 && rg__now() > deadline) {
            rg__err_set(&s.err, RG_ERR_TIMEOUT, "%zu of %zu sends completed within %.1f s", acked,
                        nchunks, o->timeout_s);
            goto out;
        }
    }
    if (!have_result && read_full(fd, &tag, 1, deadline) == 0 && tag == MSG_RESULT &&
        read_full(fd, &res, sizeof(res), deadline) == 0)
        have_result = 1;
    if (!have_result)
        rg__err_set(&s.err, RG_ERR_TIMEOUT, "no verdict from the receiver within %.1f s",
                    o->timeout_s);
out:
    r->seconds = t0 > 0 ? rg__now() - t0 : 0;
    if (have_result && res.st != RG_OK) {
        r->st = res.st;
        snprintf(r->msg, sizeof(r->msg), "%s", res.text);
    } else if (s.err.st != RG_OK) {
        r->st = s.err.st;
        snprintf(r->msg, sizeof(r->msg), "sender on %.40s: %s", o->send_dev, s.err.msg);
    } else {
        r->st = RG_OK;
        r->bytes_verified = res.bytes;
    }
    side_close(&s);
}

rg_status vpair_run(const struct vpair_opts *o, struct vpair_result *r)
{
    int sv[2];
    memset(r, 0, sizeof(*r));
    if (o->chunk == 0 || o->window == 0 || o->bytes == 0) {
        r->st = RG_ERR_INVALID;
        snprintf(r->msg, sizeof(r->msg), "bytes, chunk and window must be positive");
        return r->st;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
        r->st = RG_ERR_SIDE_CHANNEL;
        snprintf(r->msg, sizeof(r->msg), "socketpair: %s", strerror(errno));
        return r->st;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        r->st = RG_ERR_NOMEM;
        snprintf(r->msg, sizeof(r->msg), "fork: %s", strerror(errno));
        return r->st;
    }
    if (pid == 0) {
        close(sv[0]);
        run_receiver(o, sv[1]);
        _exit(0);
    }
    close(sv[1]);
    run_sender(o, sv[0], r);
    close(sv[0]);
    /* The receiver ends on its own deadline; give it a little more, then stop it. */
    double deadline = rg__now() + o->timeout_s + 5;
    int status;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (rg__now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            if (r->st == RG_OK) {
                r->st = RG_ERR_TIMEOUT;
                snprintf(r->msg, sizeof(r->msg), "the receiver did not exit; killed");
            }
            break;
        }
        usleep(10000);
    }
    return r->st;
}
