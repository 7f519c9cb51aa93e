#include "server/agones.h"

#include <httplib.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "server/log.h"

namespace loam::server {

namespace {

using Clock = std::chrono::steady_clock;

/// What the last request found, so a failing sidecar is logged once per change.
enum class SidecarState {
  Unknown,  ///< nothing sent yet
  Ok,       ///< the last request got 200
  Failing,  ///< the last request failed (no connection or another status)
};

}  // namespace

struct AgonesClient::Impl {
  const std::uint16_t port;
  const OpsBoard& board;
  httplib::Client client;
  std::mutex mutex;
  std::condition_variable cv;
  bool readyRequested = false;  ///< guarded by mutex
  bool stopRequested = false;   ///< guarded by mutex
  bool sendShutdown = false;    ///< guarded by mutex
  SidecarState state = SidecarState::Unknown;  ///< client thread only
  std::string lastProblem;                     ///< client thread only
  std::thread thread;

  Impl(std::uint16_t p, const OpsBoard& b) : port(p), board(b), client("localhost", p) {
    client.set_connection_timeout(1, 0);
    client.set_read_timeout(2, 0);
    client.set_write_timeout(2, 0);
    client.set_keep_alive(false);
  }

  /// POSTs "{}" to path; logs a change between answering and failing. True on 200.
  bool post(const char* path) {
    auto res = client.Post(path, "{}", "application/json");
    std::string problem;
    if (!res) {
      switch (res.error()) {
        case httplib::Error::Connection:
          problem = "cannot connect";
          break;
        case httplib::Error::ConnectionTimeout:
          problem = "connect timed out";
          break;
        case httplib::Error::Read:
          problem = "no response";
          break;
        default:
          problem = "request failed (" + httplib::to_string(res.error()) + ")";
          break;
      }
    } else if (res->status != 200) {
      problem = "status " + std::to_string(res->status);
    }
    if (problem.empty()) {
      if (state != SidecarState::Ok) {
        logAs(LogLevel::Info, "agones", "SDK sidecar answering at localhost port=%u", static_cast<unsigned>(port));
      }
      state = SidecarState::Ok;
      return true;
    }
    if (state != SidecarState::Failing) {
      logAs(LogLevel::Warn, "agones",
            "SDK sidecar at localhost port=%u failing: POST %s: %s (logged once; will keep trying)",
            static_cast<unsigned>(port), path, problem.c_str());
    }
    state = SidecarState::Failing;
    return false;
  }

  /// Alive: making progress and, once running, keeping up with the tick rate.
  bool healthy() const {
    OpsPhase phase = board.phase();
    if (phase == OpsPhase::Stopping) return false;
    if (board.secondsSinceBeat() > kStallSeconds) return false;
    return phase == OpsPhase::Starting || board.keepingUp();
  }

  void run() {
    bool readySent = false;
    Clock::time_point nextHealth = Clock::now();  // the first ping at once
    Clock::time_point nextReadyTry = Clock::now();
    for (;;) {
      bool wantReady = false;
      {
        std::unique_lock lock(mutex);
        auto due = nextHealth;
        if (readyRequested && !readySent && nextReadyTry < due) due = nextReadyTry;
        cv.wait_until(lock, due, [&] {
          return stopRequested || (readyRequested && !readySent && Clock::now() >= nextReadyTry);
        });
        if (stopRequested) break;
        wantReady = readyRequested && !readySent;
      }
      Clock::time_point now = Clock::now();
      if (wantReady && now >= nextReadyTry) {
        if (post("/ready")) {
          readySent = true;
          logAs(LogLevel::Info, "agones", "marked ready");
        } else {
          nextReadyTry = now + kAgonesHealthPeriod;
        }
      }
      now = Clock::now();
      if (now >= nextHealth) {
        // Keep the 2 s grid; after a long stall start a new one from now.
        nextHealth += kAgonesHealthPeriod;
        if (nextHealth <= now) nextHealth = now + kAgonesHealthPeriod;
        if (healthy()) post("/health");
      }
    }
    bool shutdownWanted = false;
    {
      std::lock_guard lock(mutex);
      shutdownWanted = sendShutdown;
    }
    if (shutdownWanted && post("/shutdown")) logAs(LogLevel::Info, "agones", "shutdown sent");
  }
};

AgonesClient::AgonesClient(std::uint16_t port, const OpsBoard& board) : impl_(std::make_unique<Impl>(port, board)) {
  logAs(LogLevel::Info, "agones", "talking to the SDK sidecar at http://localhost port=%u",
        static_cast<unsigned>(port));
  Impl* im = impl_.get();
  impl_->thread = std::thread([im] { im->run(); });
}

AgonesClient::~AgonesClient() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopRequested = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void AgonesClient::notifyReady() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->readyRequested = true;
  }
  impl_->cv.notify_all();
}

void AgonesClient::shutdown() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopRequested = true;
    impl_->sendShutdown = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace loam::server
