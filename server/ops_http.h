// The operations HTTP endpoint (--http-port): /healthz, /readyz, /metrics (Prometheus)
// and /status (JSON), served by cpp-httplib on its own small thread pool. Handlers read
// only the OpsBoard (server/metrics.h), never the simulation, so a scrape can neither
// block nor slow the 60 Hz step. With an admin token, POST /admin (body: one command
// line, header "Authorization: Bearer TOKEN") queues the command for the step thread
// (server/admin.h) and waits up to 5 s for its reply; without a token /admin is 404.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "server/admin.h"
#include "server/metrics.h"
#include "sim/core/result.h"

namespace loam::server {

class OpsHttpServer {
 public:
  /// Binds address:port (TCP) and starts serving on new threads; board must outlive
  /// the server. Errors: the address cannot be bound ("127.0.0.1:8080 in use or not
  /// available"). Allocates. Thread: the owner's.
  /// adminToken "" disables /admin; otherwise adminQueue (outliving the server) takes
  /// the commands.
  static sim::Result<std::unique_ptr<OpsHttpServer>> start(const std::string& address, std::uint16_t port,
                                                           const OpsBoard& board, std::string adminToken = {},
                                                           AdminQueue* adminQueue = nullptr);
  /// Stops accepting, finishes the requests in flight and joins the threads.
  ~OpsHttpServer();
  OpsHttpServer(const OpsHttpServer&) = delete;
  OpsHttpServer& operator=(const OpsHttpServer&) = delete;

  /// Stops serving (idempotent; the destructor calls it).
  void stop();

 private:
  struct Impl;
  explicit OpsHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::server
