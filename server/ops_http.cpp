#include "server/ops_http.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "server/log.h"

namespace loam::server {

struct OpsHttpServer::Impl {
  const OpsBoard& board;
  std::string adminToken;  ///< never logged
  AdminQueue* adminQueue = nullptr;
  AdminRateLimiter limiter;
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
                                                                  const OpsBoard& board, std::string adminToken,
                                                                  AdminQueue* adminQueue) {
  auto impl = std::make_unique<Impl>(board);
  Impl* im = impl.get();
  im->adminToken = std::move(adminToken);
  im->adminQueue = adminQueue;
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

  if (!im->adminToken.empty() && im->adminQueue != nullptr) {
    http.Post("/admin", [im](const httplib::Request& req, httplib::Response& res) {
      const auto now = AdminRateLimiter::Clock::now();
      const std::string& who = req.remote_addr;
      if (im->limiter.blocked(who, now)) {
        logAs(LogLevel::Warn, "admin", "who=%s refused: rate limited", who.c_str());
        res.status = 429;
        res.set_content("too many failed attempts; try again in a minute\n", "text/plain; charset=utf-8");
        return;
      }
      std::string auth = req.get_header_value("Authorization");
      const std::string_view prefix = "Bearer ";
      bool authorised = auth.size() > prefix.size() && std::string_view(auth).substr(0, prefix.size()) == prefix &&
                        tokensEqual(std::string_view(auth).substr(prefix.size()), im->adminToken);
      if (!authorised) {
        im->limiter.failure(who, now);
        logAs(LogLevel::Warn, "admin", "who=%s refused: bad or missing token", who.c_str());
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer");
        res.set_content("unauthorised\n", "text/plain; charset=utf-8");
        return;
      }
      std::string line = req.body;
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
      if (line.find('\n') != std::string::npos || line.size() > 1024) {
        res.status = 400;
        res.set_content("one command line of at most 1024 bytes\n", "text/plain; charset=utf-8");
        return;
      }
      std::future<AdminReply> f = im->adminQueue->submit(who, line);
      if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
        res.status = 503;
        res.set_content("server did not answer in time\n", "text/plain; charset=utf-8");
        return;
      }
      AdminReply r;
      try {
        r = f.get();
      } catch (const std::future_error&) {  // the server stopped before running it
        res.status = 503;
        res.set_content("server stopping\n", "text/plain; charset=utf-8");
        return;
      }
      res.status = r.ok ? 200 : 400;
      res.set_content(r.text + "\n", "text/plain; charset=utf-8");
    });
  }

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
