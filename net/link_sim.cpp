// POSIX sockets and poll (Linux; eventfd wakes the thread). ENet's socket layer has
// no portable wake-up and no sub-millisecond wait, and this is a test tool.
#include "net/link_sim.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace loam::net {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxDatagram = 65536;
constexpr std::size_t kMaxClients = 256;  // one upstream socket each
constexpr std::size_t kMaxQueued = 65536; // per direction; beyond it datagrams are dropped

// splitmix64 finaliser: a keyed, stateless generator (value = f(seed, direction, counter, draw)).
std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1) for draw `draw` of datagram `counter` in `direction`.
double unit(std::uint64_t seed, std::uint64_t direction, std::uint64_t counter, std::uint64_t draw) noexcept {
  const std::uint64_t h = mix(mix(mix(seed) ^ direction) ^ counter) ^ mix(draw + 0x5851F42D4C957F2Dull);
  return static_cast<double>(mix(h) >> 11) * (1.0 / 9007199254740992.0);
}

bool sameAddress(const sockaddr_in& a, const sockaddr_in& b) {
  return a.sin_addr.s_addr == b.sin_addr.s_addr && a.sin_port == b.sin_port;
}

int openUdp(std::uint32_t bindAddr) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // Big buffers, as ENet's hosts get (enet_support.h): when the relay thread is not
  // scheduled for a while, the kernel would otherwise drop datagrams the profile
  // never asked to lose.
  constexpr int kBytes = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kBytes, sizeof kBytes);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kBytes, sizeof kBytes);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(bindAddr);
  a.sin_port = 0;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

struct LinkSimulator::Impl {
  enum Direction : std::uint8_t { kUp = 0, kDown = 1 };  ///< up: client to server

  struct Datagram {
    Clock::time_point due;
    std::uint64_t order = 0;  ///< ties keep arrival order
    std::uint32_t client = 0; ///< index into clients
    std::vector<std::uint8_t> bytes;
  };
  struct Later {
    bool operator()(const Datagram& a, const Datagram& b) const {
      return a.due != b.due ? a.due > b.due : a.order > b.order;
    }
  };
  struct Client {
    sockaddr_in address{};  ///< the client's source address (replies go there)
    int upstream = -1;      ///< socket toward the server
  };

  LinkProfile profile;
  sockaddr_in server{};
  int local = -1;
  int wake = -1;
  std::uint16_t localPort = 0;
  std::vector<Client> clients;
  std::priority_queue<Datagram, std::vector<Datagram>, Later> queue[2];
  std::uint64_t counter[2] = {0, 0};
  std::uint64_t order = 0;
  std::vector<pollfd> fds;
  std::vector<std::uint8_t> buffer = std::vector<std::uint8_t>(kMaxDatagram);

  mutable std::mutex statsMutex;
  LinkStats stats;
  std::atomic<bool> stop{false};
  std::thread thread;

  ~Impl() {
    for (Client& c : clients)
      if (c.upstream >= 0) ::close(c.upstream);
    if (local >= 0) ::close(local);
    if (wake >= 0) ::close(wake);
  }

  void count(std::uint64_t LinkStats::* field) {
    std::lock_guard lock(statsMutex);
    ++(stats.*field);
  }

  /// Decides what happens to one received datagram and queues its copies.
  void admit(Direction dir, std::uint32_t client, const std::uint8_t* data, std::size_t size) {
    const std::uint64_t n = counter[dir]++;
    const std::uint64_t key = profile.seed;
    if (unit(key, dir, n, 0) < profile.loss || queue[dir].size() >= kMaxQueued) {
      count(&LinkStats::dropped);
      return;
    }
    const bool duplicate = unit(key, dir, n, 1) < profile.duplicate;
    const int copies = duplicate ? 2 : 1;
    if (duplicate) count(&LinkStats::duplicated);
    const Clock::time_point now = Clock::now();
    for (int c = 0; c < copies; ++c) {
      const std::uint64_t d = 2 + 3 * static_cast<std::uint64_t>(c);  // each copy its own draws
      double ms = profile.latencyMs + profile.jitterMs * (2 * unit(key, dir, n, d) - 1);
      if (c == 0 && unit(key, dir, n, d + 1) < profile.reorder) {
        // Held an extra 1..2x latency (at least a few ms, so it passes later ones).
        ms += std::max(profile.latencyMs, 5.0) * (1 + unit(key, dir, n, d + 2));
        count(&LinkStats::reordered);
      }
      ms = std::max(ms, 0.0);
      Datagram g;
      g.due = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms));
      g.order = order++;
      g.client = client;
      g.bytes.assign(data, data + size);
      queue[dir].push(std::move(g));
    }
  }

  /// The client slot for a source address, opening its upstream socket on first use.
  /// Returns -1 when out of slots or sockets.
  int clientFor(const sockaddr_in& from) {
    for (std::size_t i = 0; i < clients.size(); ++i)
      if (sameAddress(clients[i].address, from)) return static_cast<int>(i);
    if (clients.size() >= kMaxClients) return -1;
    const int fd = openUdp(INADDR_ANY);
    if (fd < 0) return -1;
    clients.push_back(Client{from, fd});
    return static_cast<int>(clients.size() - 1);
  }

  void receiveAll(int fd, Direction dir, std::uint32_t client) {
    for (;;) {
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n =
          ::recvfrom(fd, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 0) return;  // EAGAIN, or an ICMP error reported on the socket: nothing to relay
      if (dir == kUp) {
        const int c = clientFor(from);
        if (c < 0) {
          count(&LinkStats::dropped);
          continue;
        }
        admit(kUp, static_cast<std::uint32_t>(c), buffer.data(), static_cast<std::size_t>(n));
      } else {
        if (!sameAddress(from, server)) continue;  // only the server talks to upstream sockets
        admit(kDown, client, buffer.data(), static_cast<std::size_t>(n));
      }
    }
  }

  void deliverDue(Clock::time_point now) {
    for (int dir = 0; dir < 2; ++dir) {
      while (!queue[dir].empty() && queue[dir].top().due <= now) {
        const Datagram& g = queue[dir].top();
        const Client& c = clients[g.client];
        const int fd = dir == kUp ? c.upstream : local;
        const sockaddr_in& to = dir == kUp ? server : c.address;
        // A full socket buffer loses the datagram, as a real link would.
        ::sendto(fd, g.bytes.data(), g.bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
        count(&LinkStats::forwarded);
        queue[dir].pop();
      }
    }
  }

  void run() {
    while (!stop.load(std::memory_order_acquire)) {
      const Clock::time_point now = Clock::now();
      deliverDue(now);
      int timeoutMs = 100;  // idle: wake only for the eventfd or traffic
      for (int dir = 0; dir < 2; ++dir) {
        if (queue[dir].empty()) continue;
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(queue[dir].top().due - now).count();
        timeoutMs = std::min<int>(timeoutMs, static_cast<int>(std::max<std::int64_t>(wait, 0)));
      }
      fds.clear();
      fds.push_back(pollfd{wake, POLLIN, 0});
      fds.push_back(pollfd{local, POLLIN, 0});
      for (const Client& c : clients) fds.push_back(pollfd{c.upstream, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), timeoutMs) < 0 && errno != EINTR) break;
      if (fds[1].revents & POLLIN) receiveAll(local, kUp, 0);
      // clients may have grown in receiveAll; only the sockets polled are checked.
      for (std::size_t i = 2; i < fds.size(); ++i)
        if (fds[i].revents & POLLIN) receiveAll(fds[i].fd, kDown, static_cast<std::uint32_t>(i - 2));
    }
  }
};

sim::Result<std::unique_ptr<LinkSimulator>> LinkSimulator::open(const std::string& serverHost,
                                                                std::uint16_t serverPort,
                                                                const LinkProfile& profile) {
  auto impl = std::make_unique<Impl>();
  impl->profile = profile;

  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(serverHost.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr)
    return sim::makeError("link simulator: cannot resolve " + serverHost + ": " + ::gai_strerror(rc));
  std::memcpy(&impl->server, found->ai_addr, sizeof impl->server);
  ::freeaddrinfo(found);
  impl->server.sin_port = htons(serverPort);

  impl->local = openUdp(INADDR_LOOPBACK);
  if (impl->local < 0) return sim::makeError(std::string("link simulator: local socket: ") + std::strerror(errno));
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(impl->local, reinterpret_cast<sockaddr*>(&bound), &len) != 0)
    return sim::makeError(std::string("link simulator: getsockname: ") + std::strerror(errno));
  impl->localPort = ntohs(bound.sin_port);
  impl->wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->wake < 0) return sim::makeError(std::string("link simulator: eventfd: ") + std::strerror(errno));

  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->run(); });
  return std::unique_ptr<LinkSimulator>(new LinkSimulator(std::move(impl)));
}

LinkSimulator::LinkSimulator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LinkSimulator::~LinkSimulator() {
  impl_->stop.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(impl_->wake, &one, sizeof one);
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::uint16_t LinkSimulator::localPort() const noexcept { return impl_->localPort; }

LinkStats LinkSimulator::stats() const {
  std::lock_guard lock(impl_->statsMutex);
  return impl_->stats;
}

}  // namespace loam::net
