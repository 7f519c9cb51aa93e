// Shared pieces of the network benchmarks: a hosted world, a 60 Hz pacer on the
// steady clock, percentiles, pinning to a core and running loam-bots as a child.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/client_connection.h"
#include "net/server_host.h"
#include "net/tick_pacer.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"
#include "sim/world/world_hash.h"

extern char** environ;

namespace loam::bench {

inline std::string repoPath(const std::string& rel) { return std::string(LOAM_SOURCE_DIR "/") + rel; }

inline double nowMs() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0, mean = 0;
};

inline Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))]; };
  p.p50 = at(0.50);
  p.p99 = at(0.99);
  p.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  return p;
}

/// Pins the calling thread to one CPU (false when the machine has no such CPU).
inline bool pinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

/// Generates scene + seed and opens a ServerHost on it (127.0.0.1, ephemeral port).
inline std::unique_ptr<net::ServerHost> openServer(const std::string& scenePath, std::uint64_t seed,
                                                   net::ServerConfig config) {
  auto scene = sim::loadScene(scenePath);
  if (!scene) {
    std::fprintf(stderr, "bench: %s\n", scene.error().message.c_str());
    std::exit(1);
  }
  // A world too big to generate whole is streamed, as loam-server does; the streamer
  // must outlive the host, so it lives until the bench exits.
  static std::vector<std::unique_ptr<sim::ColumnStreamer>> streamers;
  sim::ColumnStreamer* streamer = nullptr;
  if (!sim::generatableWhole(*scene)) {
    auto made = sim::ColumnStreamer::create(*scene, seed);
    if (!made) {
      std::fprintf(stderr, "bench: %s\n", made.error().message.c_str());
      std::exit(1);
    }
    streamer = streamers.emplace_back(std::move(made).value()).get();
  }
  auto state = streamer ? sim::createStreamedSimState(*scene, seed, *streamer) : sim::createSimState(*scene, seed);
  if (!state) {
    std::fprintf(stderr, "bench: %s\n", state.error().message.c_str());
    std::exit(1);
  }
  net::HostedWorld world = net::describeWorld(*scene, state->world);
  config.bindAddress = "127.0.0.1";
  config.port = 0;
  config.maxPeersPerAddress = 4096;  // every bench client comes from 127.0.0.1
  auto host = net::ServerHost::open(config, std::move(*state), std::move(world), streamer);
  if (!host) {
    std::fprintf(stderr, "bench: %s\n", host.error().message.c_str());
    std::exit(1);
  }
  return std::move(*host);
}

/// Connects a client named `name` to host (non-blocking; it joins as the caller
/// services it). Exits the bench on failure.
inline std::unique_ptr<net::ClientConnection> connectClient(const net::ServerHost& host, const std::string& name,
                                                           const net::LinkProfile& link = {}) {
  net::ClientConfig cc;
  cc.port = host.port();
  cc.name = name;
  cc.link = link;
  cc.sceneDir = repoPath("scenes");
  auto client = net::ClientConnection::connect(cc);
  if (!client) {
    std::fprintf(stderr, "bench: %s\n", client.error().message.c_str());
    std::exit(1);
  }
  return std::move(*client);
}

/// 60 Hz on the steady clock (net::TickPacer, as loam-server): wait() returns when the
/// next tick is due, sleeping in the server's socket meanwhile; more than 4 ticks
/// back to back drops the backlog (counted as an overrun).
class Pacer {
 public:
  using Clock = net::TickPacer::Clock;
  Pacer() : pacer_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / sim::kTicksPerSecond)), 4, Clock::now()) {}
  void wait(net::ServerHost* host) {
    for (;;) {
      const Clock::time_point now = Clock::now();
      if (pacer_.shouldTick(now)) {
        pacer_.ticked();
        return;
      }
      if (const std::int64_t dropped = pacer_.endBurst(now); dropped > 0) {  // burst used up and still behind
        ++overruns_;
        if (host) host->skippedTicks(static_cast<std::uint64_t>(dropped));
        continue;
      }
      const double left = std::chrono::duration<double, std::milli>(pacer_.nextDue() - now).count();
      if (host)
        host->waitForInput(static_cast<int>(left));
      else
        usleep(static_cast<useconds_t>(left * 1000));
    }
  }
  std::uint64_t overruns() const { return overruns_; }

 private:
  net::TickPacer pacer_;
  std::uint64_t overruns_ = 0;
};

/// CPU seconds (user + system) a process has used so far, all its threads; 0 when
/// it cannot be read.
inline double cpuSeconds(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return 0;
  char buf[1024];
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');  // the name may hold spaces
  unsigned long utime = 0, stime = 0;
  if (p == nullptr || std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
    return 0;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

/// Starts a child process (argv[0] is the program path) pinned to cpu (-1 = any), at
/// `niceness` (a load generator below what it measures).
inline pid_t spawnChild(const std::vector<std::string>& args, int cpu, int niceness = 0) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    if (cpu >= 0) pinToCpu(cpu);
    if (niceness != 0 && nice(niceness) == -1) std::perror("nice");
    execv(argv[0], argv.data());
    std::perror("execv");
    _exit(127);
  }
  return pid;
}

/// Stops a child with SIGINT and waits for it; returns its exit status.
inline int stopChild(pid_t pid) {
  if (pid <= 0) return -1;
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace loam::bench
