// The operations HTTP endpoint (--http-port): /healthz, /readyz, /metrics (Prometheus)
// and /status (JSON), served by a small strict HTTP/1.1 server on one poll() thread
// (server/ops_http.cpp says why not cpp-httplib). Handlers read only the OpsBoard
// (server/metrics.h), never the simulation, so a scrape can neither block nor slow the
// 60 Hz step. With an admin token, POST /admin (body: one command line, header
// "Authorization: Bearer TOKEN") queues the command for the step thread
// (server/admin.h) and waits up to 5 s for its reply; without a token /admin is 404.
//
// Every request is bounded (limits below): one request per connection (the answer says
// "Connection: close"), a whole-request deadline from accept to the last body byte, a
// head (request line and headers) size and header count, no body on GET, a small body on
// POST /admin (announced by Content-Length; chunked bodies are refused), and a cap on
// open connections in all and per address, where a newcomer over the cap closes the
// oldest connection (so idle or slow sockets cannot lock out a probe).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "server/admin.h"
#include "server/metrics.h"
#include "sim/core/result.h"

namespace loam::server {

/// Bounds of the ops endpoint (what a client can make it hold).
inline constexpr std::size_t kOpsMaxConnections = 64;            ///< open connections in all
inline constexpr std::size_t kOpsMaxConnectionsPerAddress = 16;  ///< open connections from one address
inline constexpr std::size_t kOpsMaxHeadBytes = 8192;            ///< request line + headers (431 beyond)
inline constexpr std::size_t kOpsMaxHeaders = 32;                ///< header lines (431 beyond)
inline constexpr std::size_t kOpsMaxAdminBodyBytes = 4096;       ///< POST /admin body (413 beyond)
/// From accept to the whole request read (408 after it).
inline constexpr std::chrono::milliseconds kOpsRequestDeadline{2000};
/// To write the answer once it is ready (the connection is closed after it).
inline constexpr std::chrono::milliseconds kOpsWriteDeadline{5000};
/// How long POST /admin waits for the step thread (503 after it).
inline constexpr std::chrono::milliseconds kOpsAdminWait{5000};

class OpsHttpServer {
 public:
  /// Binds address:port (TCP) and starts serving on a new thread; board must outlive
  /// the server. Errors: the address cannot be bound ("127.0.0.1:8080 in use or not
  /// available"). Allocates. Thread: the owner's.
  /// adminToken "" disables /admin; otherwise adminQueue (outliving the server) takes
  /// the commands.
  static sim::Result<std::unique_ptr<OpsHttpServer>> start(const std::string& address, std::uint16_t port,
                                                           const OpsBoard& board, std::string adminToken = {},
                                                           AdminQueue* adminQueue = nullptr);
  /// Stops serving: closes every connection and joins the thread.
  ~OpsHttpServer();
  OpsHttpServer(const OpsHttpServer&) = delete;
  OpsHttpServer& operator=(const OpsHttpServer&) = delete;

  /// Stops serving (idempotent; the destructor calls it).
  void stop();
  /// The TCP port served (the bound one when 0 was asked).
  std::uint16_t port() const noexcept;

 private:
  struct Impl;
  explicit OpsHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::server
