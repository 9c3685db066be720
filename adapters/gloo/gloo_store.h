// SPDX-License-Identifier: MIT
//
// The rendezvous store the Gloo adapter hands gloo::rendezvous::Context::connectFullMesh: the
// adapter's own code, not Gloo's. Gloo ships a file store (one shared directory) and a Redis
// store; railguard gives a transport one "host:port" where rank 0 listens (rg_plugin_args
// .coordinator), and its ranks may be on two hosts, so the adapter serves the store there.
//
// Rank 0 runs the server for the rendezvous alone: every rank (rank 0 too) connects once, sets
// its address, gets the others' and says it is done; the server ends when all have, and init
// joins it, so nothing of the store outlives init (railguard counts sockets left open at
// finalize). Every wait has the deadline the transport was told; bytes from the socket are
// checked (a key of at most 256 bytes, a value of at most 1 MiB) and refused with one line.
#ifndef RG_GLOO_STORE_H
#define RG_GLOO_STORE_H

#include <chrono>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace rg_gloo
{

class TcpStore : public gloo::rendezvous::Store
{
  public:
    // Connects to the server at coordinator ("host:port"), within timeout. Throws
    // std::runtime_error with one line.
    TcpStore(const std::string &coordinator, std::chrono::milliseconds timeout);
    ~TcpStore() override;
    TcpStore(const TcpStore &) = delete;
    TcpStore &operator=(const TcpStore &) = delete;

    void set(const std::string &key, const std::vector<char> &data) override;
    std::vector<char> get(const std::string &key) override;
    void wait(const std::vector<std::string> &keys) override;
    void wait(const std::vector<std::string> &keys,
              const std::chrono::milliseconds &timeout) override;
    // Tells the server this rank needs nothing more, and closes the connection.
    void done();

  private:
    int fd_ = -1;
    std::chrono::milliseconds timeout_;
};

// Rank 0's server: listens at coordinator, serves `ranks` connections until each said done.
// start() throws std::runtime_error (bind, listen); finish() joins it, bounded by the timeout,
// and returns "" or the first error it met.
class StoreServer
{
  public:
    StoreServer(const std::string &coordinator, int ranks, std::chrono::milliseconds timeout);
    ~StoreServer();
    StoreServer(const StoreServer &) = delete;
    StoreServer &operator=(const StoreServer &) = delete;
    void start();
    std::string finish();

  private:
    struct state;
    state *s_;
};

} // namespace rg_gloo

#endif
