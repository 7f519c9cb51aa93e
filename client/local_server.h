// LocalServer: an in-process ServerHost for `loam-client --local` and the client
// tests. It generates the scene once, hosts it on 127.0.0.1 (ephemeral port) and
// ticks at 60 Hz on its own thread (TickPacer, as loam-server's loop). Clients of
// the same process take a copy of the generated world through worldFactory(), so
// the world is built once.
//
// Thread: the ServerHost lives on the server thread only; the public functions may
// be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/client_connection.h"
#include "net/server_host.h"
#include "sim/step/commands.h"
#include "sim/core/result.h"
#include "sim/systems/sim_state.h"

namespace loam::client {

class LocalServer {
 public:
  /// Loads the scene, generates it (seconds for glade), opens the host on
  /// 127.0.0.1:0 and starts ticking. Errors: scene, generation, bind failures.
  static sim::Result<std::unique_ptr<LocalServer>> start(const std::string& scenePath,
                                                         std::optional<std::uint64_t> seed);
  /// Stops the thread (shutting the host down: clients see Reject{ShuttingDown}).
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  /// The UDP port on 127.0.0.1.
  std::uint16_t port() const noexcept { return port_; }
  /// The scene's name (clients look up <sceneDir>/<name>.toml).
  const std::string& sceneName() const noexcept { return sceneName_; }
  /// Folder of the scene file (the clients' sceneDir).
  const std::string& sceneDir() const noexcept { return sceneDir_; }
  /// A factory handing out copies of the generated world (other scenes or seeds
  /// are generated as usual). Safe on the connections' worker threads.
  net::WorldFactory worldFactory() const;
  /// Queues a server command (player 0) for the next tick.
  void post(const sim::CommandBody& body);
  /// Sets the time of day (fraction 0..1 of a day) with a SetTime command.
  void setTimeOfDay(double dayFraction);
  /// Ticks stepped so far.
  std::uint64_t tick() const noexcept { return tick_.load(std::memory_order_relaxed); }
  /// Players in the simulation after the last tick.
  std::uint32_t players() const noexcept { return players_.load(std::memory_order_relaxed); }

 private:
  LocalServer() = default;
  void run();

  std::unique_ptr<sim::ColumnStreamer> streamer_;   ///< a streamed world's generator (outlives host_)
  std::unique_ptr<net::ServerHost> host_;
  std::shared_ptr<const sim::SimState> generated_;  ///< tick-0 state, copied for clients (null: streamed)
  std::string sceneName_, sceneDir_;
  std::uint16_t port_ = 0;
  std::uint32_t dayLength_ = 1;
  std::mutex mutex_;
  std::vector<sim::CommandBody> pending_;  ///< guarded by mutex_
  std::uint32_t sequence_ = 0;             ///< server thread only
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> tick_{0};
  std::atomic<std::uint32_t> players_{0};
  std::thread thread_;
};

}  // namespace loam::client
