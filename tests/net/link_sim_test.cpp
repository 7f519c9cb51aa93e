// The link simulator as a relay in front of a UDP echo server: measured loss, delay,
// duplication and reordering match the profile; ENet stays reliable and ordered
// through it at 20% loss.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <enet/enet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "net/link_sim.h"

using namespace loam;
using Clock = std::chrono::steady_clock;

namespace {

struct Payload {
  std::uint32_t seq = 0;
  std::uint32_t pad = 0;
  std::int64_t sentNs = 0;
};

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

int udpSocket(std::uint16_t* port) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  REQUIRE(fd >= 0);
  // Room for a burst while a thread waits for the CPU (the relay's sockets get the same).
  constexpr int kBytes = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kBytes, sizeof kBytes);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  *port = ntohs(a.sin_port);
  return fd;
}

/// Plain UDP echo server on its own thread; records what arrived, in order.
struct EchoServer {
  int fd = -1;
  std::uint16_t port = 0;
  std::atomic<bool> stop{false};
  std::vector<std::uint32_t> seqs;  ///< arrival order
  std::vector<double> delaysMs;     ///< one-way client -> server delay of each arrival
  std::vector<std::uint16_t> fromPorts;  ///< source port of each arrival
  std::thread thread;

  EchoServer() {
    fd = udpSocket(&port);
    thread = std::thread([this] { run(); });
  }
  ~EchoServer() {
    finish();
    ::close(fd);
  }
  void finish() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  void run() {
    while (!stop) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      for (;;) {
        Payload msg;
        sockaddr_in from{};
        socklen_t len = sizeof from;
        const ssize_t n = ::recvfrom(fd, &msg, sizeof msg, 0, reinterpret_cast<sockaddr*>(&from), &len);
        if (n < 0) break;
        if (n != sizeof msg) continue;
        seqs.push_back(msg.seq);
        delaysMs.push_back(static_cast<double>(nowNs() - msg.sentNs) / 1e6);
        fromPorts.push_back(ntohs(from.sin_port));
        ::sendto(fd, &msg, sizeof msg, 0, reinterpret_cast<sockaddr*>(&from), len);
      }
    }
  }
};

struct Measured {
  std::size_t uniqueAtServer = 0, duplicatesAtServer = 0, lateAtServer = 0;
  std::vector<double> delaysMs;  ///< one-way, client -> server
  std::size_t uniqueBack = 0;
  net::LinkStats stats;
};

/// Sends `count` datagrams through a relay with `profile` to an echo server.
Measured measure(const net::LinkProfile& profile, std::uint32_t count) {
  EchoServer echo;
  auto relay = net::LinkSimulator::open("127.0.0.1", echo.port, profile);
  REQUIRE(relay.has_value());
  std::uint16_t clientPort = 0;
  const int fd = udpSocket(&clientPort);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons((*relay)->localPort());

  std::vector<std::uint8_t> back(count, 0);
  auto drain = [&] {
    Payload msg;
    while (::recv(fd, &msg, sizeof msg, 0) == sizeof msg)
      if (msg.seq < count) back[msg.seq] = 1;
  };
  const Clock::time_point start = Clock::now();
  for (std::uint32_t i = 0; i < count; ++i) {
    std::this_thread::sleep_until(start + std::chrono::microseconds(250) * i);
    Payload msg{i, 0, nowNs()};
    REQUIRE(::sendto(fd, &msg, sizeof msg, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) == sizeof msg);
    drain();
  }
  const Clock::time_point until =
      Clock::now() + std::chrono::milliseconds(static_cast<int>(4 * (profile.latencyMs + profile.jitterMs)) + 300);
  while (Clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 5);
    drain();
  }
  echo.finish();
  ::close(fd);

  Measured m;
  std::vector<std::uint8_t> seen(count, 0);
  std::uint32_t highest = 0;
  bool any = false;
  for (std::uint32_t s : echo.seqs) {
    REQUIRE(s < count);
    if (seen[s]) {
      ++m.duplicatesAtServer;
      continue;
    }
    seen[s] = 1;
    ++m.uniqueAtServer;
    if (any && s < highest) ++m.lateAtServer;
    if (!any || s > highest) highest = s;
    any = true;
  }
  m.delaysMs = echo.delaysMs;
  for (std::uint8_t b : back) m.uniqueBack += b;
  m.stats = (*relay)->stats();
  MESSAGE("at server ", m.uniqueAtServer, " (+", m.duplicatesAtServer, " dup, ", m.lateAtServer, " late), back ",
          m.uniqueBack, "; relay forwarded ", m.stats.forwarded, " dropped ", m.stats.dropped, " duplicated ",
          m.stats.duplicated, " reordered ", m.stats.reordered);
  return m;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

TEST_CASE("loss, latency and jitter are applied to each direction") {
  net::LinkProfile profile;
  profile.loss = 0.1;
  profile.latencyMs = 50;
  profile.jitterMs = 10;
  profile.seed = 7;
  const Measured m = measure(profile, 2000);

  const double lostUp = 1.0 - static_cast<double>(m.uniqueAtServer) / 2000;
  CHECK(lostUp > 0.07);
  CHECK(lostUp < 0.13);
  CHECK(m.duplicatesAtServer == 0);
  // Both directions lose: about 0.9 * 0.9 of the datagrams come back.
  const double backFraction = static_cast<double>(m.uniqueBack) / 2000;
  CHECK(backFraction > 0.76);
  CHECK(backFraction < 0.86);

  REQUIRE(m.delaysMs.size() > 1000);
  const double lo = *std::min_element(m.delaysMs.begin(), m.delaysMs.end());
  CHECK(lo >= 39.9);  // never earlier than latency - jitter
  CHECK(lo < 45);     // and the jitter does reach down
  CHECK(percentile(m.delaysMs, 0.5) > 47);
  CHECK(percentile(m.delaysMs, 0.5) < 56);
  CHECK(percentile(m.delaysMs, 0.95) > 55);
  CHECK(percentile(m.delaysMs, 0.95) < 70);  // 60 + scheduling slack on a busy machine
  CHECK(m.stats.dropped > 300);              // both directions
  CHECK(m.stats.duplicated == 0);
}

TEST_CASE("duplicates appear at the configured rate") {
  net::LinkProfile profile;
  profile.duplicate = 0.05;
  profile.latencyMs = 5;
  profile.seed = 11;
  const Measured m = measure(profile, 2000);
  CHECK(m.uniqueAtServer == 2000);
  CHECK(m.duplicatesAtServer > 60);
  CHECK(m.duplicatesAtServer < 140);
  CHECK(m.uniqueBack == 2000);
  CHECK(m.stats.dropped == 0);
  CHECK(m.stats.duplicated > 120);  // both directions, about 200
  CHECK(m.stats.duplicated < 280);
}

TEST_CASE("reordering happens only when asked") {
  net::LinkProfile inOrder;
  inOrder.latencyMs = 10;
  inOrder.seed = 3;
  const Measured a = measure(inOrder, 1000);
  CHECK(a.uniqueAtServer == 1000);
  CHECK(a.lateAtServer == 0);
  CHECK(a.stats.reordered == 0);

  net::LinkProfile shuffled = inOrder;
  shuffled.reorder = 0.05;
  const Measured b = measure(shuffled, 1000);
  CHECK(b.uniqueAtServer == 1000);
  CHECK(b.lateAtServer > 20);  // about 50 held back, each passed by later ones
  CHECK(b.lateAtServer < 90);
  CHECK(b.stats.reordered > 50);  // both directions, about 100
}

TEST_CASE("each client address gets its own upstream socket and its own replies") {
  EchoServer echo;
  auto relay = net::LinkSimulator::open("127.0.0.1", echo.port, net::LinkProfile{});
  REQUIRE(relay.has_value());
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons((*relay)->localPort());
  std::uint16_t portA = 0, portB = 0;
  const int a = udpSocket(&portA), b = udpSocket(&portB);
  for (std::uint32_t i = 0; i < 10; ++i) {
    Payload pa{i, 0, nowNs()}, pb{100 + i, 0, nowNs()};
    ::sendto(a, &pa, sizeof pa, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    ::sendto(b, &pb, sizeof pb, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  }
  std::size_t gotA = 0, gotB = 0;
  bool crossed = false;
  const Clock::time_point until = Clock::now() + std::chrono::seconds(2);
  while ((gotA < 10 || gotB < 10) && Clock::now() < until) {
    Payload msg;
    while (::recv(a, &msg, sizeof msg, 0) == sizeof msg) {
      ++gotA;
      crossed = crossed || msg.seq >= 100;
    }
    while (::recv(b, &msg, sizeof msg, 0) == sizeof msg) {
      ++gotB;
      crossed = crossed || msg.seq < 100;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  echo.finish();
  ::close(a);
  ::close(b);
  CHECK(gotA == 10);
  CHECK(gotB == 10);
  CHECK_FALSE(crossed);
  std::vector<std::uint16_t> ports = echo.fromPorts;
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  CHECK(ports.size() == 2);  // the server sees two peers
  CHECK((*relay)->stats().forwarded == 40);
}

TEST_CASE("ENet stays reliable and ordered through a link with 20% loss") {
  REQUIRE(enet_initialize() == 0);
  ENetAddress serverAddr{};
  REQUIRE(enet_address_set_host(&serverAddr, "127.0.0.1") == 0);
  serverAddr.port = 0;
  ENetHost* server = enet_host_create(&serverAddr, 4, 1, 0, 0);
  REQUIRE(server != nullptr);
  REQUIRE(server->address.port != 0);

  net::LinkProfile profile;
  profile.loss = 0.2;
  profile.latencyMs = 15;
  profile.jitterMs = 3;
  profile.seed = 99;
  auto relay = net::LinkSimulator::open("127.0.0.1", server->address.port, profile);
  REQUIRE(relay.has_value());

  ENetHost* client = enet_host_create(nullptr, 1, 1, 0, 0);
  REQUIRE(client != nullptr);
  ENetAddress relayAddr{};
  REQUIRE(enet_address_set_host(&relayAddr, "127.0.0.1") == 0);
  relayAddr.port = (*relay)->localPort();
  ENetPeer* toServer = enet_host_connect(client, &relayAddr, 1, 0);
  REQUIRE(toServer != nullptr);
  // Long timeouts: at 20% loss each way a command can need several retransmissions.
  enet_peer_timeout(toServer, 64, 20000, 60000);

  constexpr std::uint32_t kMessages = 400;
  std::uint32_t sent = 0, atServer = 0, atClient = 0;
  bool connected = false, inOrder = true, disconnected = false;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(40);
  while (atClient < kMessages && Clock::now() < deadline && !disconnected) {
    ENetEvent ev;
    while (enet_host_service(server, &ev, 0) > 0) {
      if (ev.type == ENET_EVENT_TYPE_CONNECT) enet_peer_timeout(ev.peer, 64, 20000, 60000);
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        std::uint32_t v = 0;
        std::memcpy(&v, ev.packet->data, sizeof v);
        inOrder = inOrder && v == atServer;
        ++atServer;
        // Echo it back reliably.
        ENetPacket* reply = enet_packet_create(&v, sizeof v, ENET_PACKET_FLAG_RELIABLE);
        enet_peer_send(ev.peer, 0, reply);
        enet_packet_destroy(ev.packet);
      }
    }
    while (enet_host_service(client, &ev, 0) > 0) {
      if (ev.type == ENET_EVENT_TYPE_CONNECT) connected = true;
      if (ev.type == ENET_EVENT_TYPE_DISCONNECT) disconnected = true;
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        std::uint32_t v = 0;
        std::memcpy(&v, ev.packet->data, sizeof v);
        inOrder = inOrder && v == atClient;
        ++atClient;
        enet_packet_destroy(ev.packet);
      }
    }
    if (connected && sent < kMessages) {
      for (int i = 0; i < 2 && sent < kMessages; ++i, ++sent)
        enet_peer_send(toServer, 0, enet_packet_create(&sent, sizeof sent, ENET_PACKET_FLAG_RELIABLE));
      enet_host_flush(client);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(connected);
  CHECK_FALSE(disconnected);
  CHECK(inOrder);
  CHECK(atServer == kMessages);
  CHECK(atClient == kMessages);
  const net::LinkStats stats = (*relay)->stats();
  // ENet packs several commands into a datagram, so count datagrams, not messages.
  const double lost = static_cast<double>(stats.dropped) / static_cast<double>(stats.dropped + stats.forwarded);
  MESSAGE("enet through relay: forwarded ", stats.forwarded, " dropped ", stats.dropped);
  CHECK(lost > 0.08);
  CHECK(lost < 0.35);

  enet_host_destroy(client);
  relay->reset();
  enet_host_destroy(server);
  enet_deinitialize();
}
