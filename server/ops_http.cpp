#include "server/ops_http.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "server/log.h"

namespace loam::server {

struct OpsHttpServer::Impl {
  const OpsBoard& board;
  httplib::Server http;
  std::thread thread;

  explicit Impl(const OpsBoard& b) : board(b) {}

  ProcessSample sample() const {
    ProcessSample p;
    p.phase = board.phase();
    p.uptimeSeconds = board.uptimeSeconds();
    p.residentBytes = residentMemoryBytes();
    return p;
  }
};

OpsHttpServer::OpsHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OpsHttpServer::~OpsHttpServer() { stop(); }

sim::Result<std::unique_ptr<OpsHttpServer>> OpsHttpServer::start(const std::string& address, std::uint16_t port,
                                                                  const OpsBoard& board) {
  auto impl = std::make_unique<Impl>(board);
  Impl* im = impl.get();
  httplib::Server& http = im->http;
  // A few workers: probes and one scraper, never a crowd. Short keep-alive so an
  // idle scraper connection does not hold a worker for long.
  http.new_task_queue = [] { return new httplib::ThreadPool(4); };
  http.set_keep_alive_timeout(2);
  http.set_read_timeout(5, 0);
  http.set_write_timeout(5, 0);
  http.set_address_family(AF_INET);
  // httplib's default adds SO_REUSEPORT, which would let a second server share the
  // port silently; SO_REUSEADDR alone still allows a quick restart.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });

  http.Get("/healthz", [im](const httplib::Request&, httplib::Response& res) {
    HttpAnswer a = healthAnswer(im->board.phase(), im->board.secondsSinceBeat());
    res.status = a.status;
    res.set_content(a.body, "text/plain; charset=utf-8");
  });
  http.Get("/readyz", [im](const httplib::Request&, httplib::Response& res) {
    HttpAnswer a = readyAnswer(im->board.phase());
    res.status = a.status;
    res.set_content(a.body, "text/plain; charset=utf-8");
  });
  http.Get("/metrics", [im](const httplib::Request&, httplib::Response& res) {
    ProcessSample p = im->sample();
    OpsSnapshot s = im->board.read();
    res.set_content(formatPrometheus(im->board.identity(), s, p), kPrometheusContentType);
  });
  http.Get("/status", [im](const httplib::Request&, httplib::Response& res) {
    ProcessSample p = im->sample();
    OpsSnapshot s = im->board.read();
    res.set_content(formatStatusJson(im->board.identity(), s, p), "application/json");
  });

  if (!http.bind_to_port(address, port)) {
    return sim::makeError("cannot listen for HTTP on " + address + ":" + std::to_string(port) +
                          " (TCP): in use or not an address of this machine");
  }
  im->thread = std::thread([im] { im->http.listen_after_bind(); });
  // stop() only works once the accept loop runs; wait for it here, at start.
  for (int i = 0; i < 5000 && !http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  logAs(LogLevel::Info, "http", "serving /healthz /readyz /metrics /status on address=%s port=%u", address.c_str(),
        static_cast<unsigned>(port));
  return std::unique_ptr<OpsHttpServer>(new OpsHttpServer(std::move(impl)));
}

void OpsHttpServer::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->http.stop();
  impl_->thread.join();
}

}  // namespace loam::server
