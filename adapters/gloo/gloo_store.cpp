// SPDX-License-Identifier: MIT
//
// The Gloo adapter's rendezvous store over one TCP port (gloo_store.h says why it exists).
//
// The wire, one request after another on a connection (integers little-endian u32):
//   'S' keylen key vallen value    set (no reply)
//   'G' keylen key                 get: the reply (vallen value) comes once the key is set
//   'D'                            done: the server closes the connection
// A length out of bounds, an unknown op or a short read ends that connection with one line,
// which finish() returns.
#include "gloo_store.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rg_gloo
{

namespace
{

constexpr uint32_t kMaxKey = 256;
constexpr uint32_t kMaxValue = 1u << 20;
using clock_type = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string &what)
{
    throw std::runtime_error("gloo adapter: rendezvous: " + what);
}

// host and port of "host:port" (the last colon: a bracketed IPv6 host keeps its own).
void split(const std::string &hp, std::string &host, std::string &port)
{
    size_t c = hp.rfind(':');
    if (c == std::string::npos || c == 0 || c + 1 == hp.size())
        fail("coordinator '" + hp + "' is not host:port");
    host = hp.substr(0, c);
    port = hp.substr(c + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
}

int ms_left(clock_type::time_point end)
{
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock_type::now());
    return left.count() > 0 ? (int)left.count() : 0;
}

// All of len bytes, or false (closed, error or past end; why in *why).
bool io_all(int fd, void *buf, size_t len, bool out, clock_type::time_point end, std::string *why)
{
    auto *p = static_cast<char *>(buf);
    while (len) {
        struct pollfd pfd = {fd, (short)(out ? POLLOUT : POLLIN), 0};
        int left = ms_left(end);
        int pr = poll(&pfd, 1, left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            *why = pr == 0 ? "no answer within the timeout" : std::string(strerror(errno));
            return false;
        }
        ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            *why = n == 0 ? "the peer closed the connection" : std::string(strerror(errno));
            return false;
        }
        p += n;
        len -= (size_t)n;
    }
    return true;
}

bool put_u32(int fd, uint32_t v, clock_type::time_point end, std::string *why)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    return io_all(fd, b, 4, true, end, why);
}

bool get_u32(int fd, uint32_t *v, clock_type::time_point end, std::string *why)
{
    unsigned char b[4];
    if (!io_all(fd, b, 4, false, end, why))
        return false;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

// A length-prefixed string of at most max bytes.
bool get_bytes(int fd, std::vector<char> *out, uint32_t max, const char *what,
               clock_type::time_point end, std::string *why)
{
    uint32_t n;
    if (!get_u32(fd, &n, end, why))
        return false;
    if (n > max) {
        *why = std::string(what) + " of " + std::to_string(n) + " bytes (at most " +
               std::to_string(max) + ")";
        return false;
    }
    out->resize(n);
    return !n || io_all(fd, out->data(), n, false, end, why);
}

} // namespace

// --- the client -----------------------------------------------------------------------------

TcpStore::TcpStore(const std::string &coordinator, std::chrono::milliseconds timeout)
    : timeout_(timeout)
{
    std::string host, port, why;
    split(coordinator, host, port);
    auto end = clock_type::now() + timeout;
    // Rank 0's server may not listen yet: tried again until the deadline.
    for (;;) {
        struct addrinfo hints = {}, *ai = nullptr;
        hints.ai_socktype = SOCK_STREAM;
        int gr = getaddrinfo(host.c_str(), port.c_str(), &hints, &ai);
        if (gr != 0)
            fail("coordinator '" + coordinator + "': " + gai_strerror(gr));
        for (struct addrinfo *a = ai; a && fd_ < 0; a = a->ai_next) {
            int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0)
                continue;
            if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                fd_ = fd;
                break;
            }
            why = strerror(errno);
            close(fd);
        }
        freeaddrinfo(ai);
        if (fd_ >= 0)
            break;
        if (!ms_left(end))
            fail("cannot reach " + coordinator + " within the timeout: " + why);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

TcpStore::~TcpStore()
{
    if (fd_ >= 0)
        close(fd_);
}

void TcpStore::set(const std::string &key, const std::vector<char> &data)
{
    std::string why;
    auto end = clock_type::now() + timeout_;
    char op = 'S';
    if (key.size() > kMaxKey || data.size() > kMaxValue)
        fail("key '" + key + "' or its value is too long");
    if (!io_all(fd_, &op, 1, true, end, &why) || !put_u32(fd_, (uint32_t)key.size(), end, &why) ||
        !io_all(fd_, (void *)key.data(), key.size(), true, end, &why) ||
        !put_u32(fd_, (uint32_t)data.size(), end, &why) ||
        (!data.empty() && !io_all(fd_, (void *)data.data(), data.size(), true, end, &why)))
        fail("set '" + key + "': " + why);
}

std::vector<char> TcpStore::get(const std::string &key)
{
    std::string why;
    std::vector<char> out;
    auto end = clock_type::now() + timeout_;
    char op = 'G';
    if (key.size() > kMaxKey)
        fail("key '" + key + "' is too long");
    if (!io_all(fd_, &op, 1, true, end, &why) || !put_u32(fd_, (uint32_t)key.size(), end, &why) ||
        !io_all(fd_, (void *)key.data(), key.size(), true, end, &why) ||
        !get_bytes(fd_, &out, kMaxValue, "a value", end, &why))
        fail("get '" + key + "': " + why);
    return out;
}

// get() already waits for its key; Gloo calls wait() before get(), which is then a get whose
// value is dropped (the server keeps it for the get that follows).
void TcpStore::wait(const std::vector<std::string> &keys)
{
    wait(keys, timeout_);
}

void TcpStore::wait(const std::vector<std::string> &keys, const std::chrono::milliseconds &)
{
    for (const auto &k : keys)
        (void)get(k);
}

void TcpStore::done()
{
    std::string why;
    char op = 'D';
    if (fd_ < 0)
        return;
    (void)io_all(fd_, &op, 1, true, clock_type::now() + timeout_, &why);
    close(fd_);
    fd_ = -1;
}

// --- rank 0's server ---------------------------------------------------------------------------

struct StoreServer::state {
    std::string coordinator;
    int ranks;
    std::chrono::milliseconds timeout;
    clock_type::time_point end;
    int lfd = -1;
    std::thread acceptor;
    std::vector<std::thread> conns;
    std::mutex m;
    std::condition_variable cv;
    std::map<std::string, std::vector<char>> kv;
    std::string error;
    std::atomic<bool> stop{false};

    void note(const std::string &e)
    {
        std::lock_guard<std::mutex> l(m);
        if (error.empty())
            error = e;
    }

    // One rank's connection, until it says done (or breaks the protocol, or time runs out).
    void serve(int fd)
    {
        std::string why;
        for (;;) {
            char op;
            if (!io_all(fd, &op, 1, false, end, &why))
                break;
            if (op == 'D') {
                why.clear();
                break;
            }
            std::vector<char> key, val;
            if ((op != 'S' && op != 'G') || !get_bytes(fd, &key, kMaxKey, "a key", end, &why)) {
                if (why.empty())
                    why = std::string("an unknown request '") +
                          (op >= 0x20 && op < 0x7f ? op : '?') + "'";
                break;
            }
            std::string k(key.begin(), key.end());
            if (op == 'S') {
                if (!get_bytes(fd, &val, kMaxValue, "a value", end, &why))
                    break;
                std::lock_guard<std::mutex> l(m);
                kv[k] = std::move(val);
                cv.notify_all();
                continue;
            }
            {
                std::unique_lock<std::mutex> l(m);
                if (!cv.wait_until(l, end, [&] { return kv.count(k) > 0 || stop.load(); }) ||
                    !kv.count(k)) {
                    why = "key '" + k + "' never set";
                    break;
                }
                val = kv[k];
            }
            if (!put_u32(fd, (uint32_t)val.size(), end, &why) ||
                (!val.empty() && !io_all(fd, val.data(), val.size(), true, end, &why)))
                break;
        }
        if (!why.empty())
            note("the store's connection: " + why);
        close(fd);
    }

    void accept_all()
    {
        for (int n = 0; n < ranks;) {
            struct pollfd pfd = {lfd, POLLIN, 0};
            int pr = poll(&pfd, 1, ms_left(end));
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr <= 0) {
                note("only " + std::to_string(n) + " of " + std::to_string(ranks) +
                     " ranks reached the store within the timeout");
                break;
            }
            int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0)
                continue;
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            conns.emplace_back([this, fd] { serve(fd); });
            n++;
        }
        close(lfd);
        lfd = -1;
    }
};

StoreServer::StoreServer(const std::string &coordinator, int ranks,
                         std::chrono::milliseconds timeout)
    : s_(new state)
{
    s_->coordinator = coordinator;
    s_->ranks = ranks;
    s_->timeout = timeout;
}

StoreServer::~StoreServer()
{
    finish();
    delete s_;
}

void StoreServer::start()
{
    std::string host, port;
    split(s_->coordinator, host, port);
    struct addrinfo hints = {}, *ai = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int gr = getaddrinfo(host.c_str(), port.c_str(), &hints, &ai);
    if (gr != 0)
        fail("coordinator '" + s_->coordinator + "': " + gai_strerror(gr));
    std::string why = "no address";
    for (struct addrinfo *a = ai; a && s_->lfd < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0) {
            s_->lfd = fd;
            break;
        }
        why = strerror(errno);
        close(fd);
    }
    freeaddrinfo(ai);
    if (s_->lfd < 0)
        fail("cannot listen at " + s_->coordinator + ": " + why);
    s_->end = clock_type::now() + s_->timeout;
    s_->acceptor = std::thread([this] { s_->accept_all(); });
}

std::string StoreServer::finish()
{
    if (s_->acceptor.joinable())
        s_->acceptor.join();
    for (auto &t : s_->conns)
        if (t.joinable())
            t.join();
    s_->conns.clear();
    if (s_->lfd >= 0) {
        close(s_->lfd);
        s_->lfd = -1;
    }
    std::lock_guard<std::mutex> l(s_->m);
    return s_->error;
}

} // namespace rg_gloo
