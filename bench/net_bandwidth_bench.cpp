// Bandwidth of an idle player: one client stands still at the glade
// spawn, the waterfall 14 m away, animals around; the server runs at 60 Hz. After the
// join and a warm-up, bytes received by the client are counted per message type.
// Target: at most 30 KB/s down (the engine we replace: 250 KB/s, 120 KB/s with
// interest management).
//
// Run: build/release/bench/net_bandwidth_bench [--seconds 30] [--warmup 5] [--scene PATH]
// Prints one JSON object: down/up bytes per second (ENet payload incl. its headers,
// and an estimate with UDP/IPv4 headers), and payload bytes per second by type.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "bench/net_bench_util.h"
#include "net/client_connection.h"

using namespace loam;

int main(int argc, char** argv) {
  double seconds = 30, warmup = 5;
  std::string scenePath = bench::repoPath("scenes/glade.toml");
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--scene")) scenePath = argv[i + 1];
  }
  auto host = bench::openServer(scenePath, 1, net::ServerConfig{});

  auto client = bench::connectClient(*host, "idle");
  auto& c = *client;

  bench::Pacer pacer;
  double start = bench::nowMs(), measureFrom = -1, measureTo = -1;
  net::ClientStats before;
  bool measuring = false;
  for (;;) {
    pacer.wait(host.get());
    host->tick();
    c.service(bench::nowMs());
    if (c.phase() == net::ClientPhase::Failed || c.phase() == net::ClientPhase::Disconnected) {
      std::fprintf(stderr, "bench: client %s: %s\n", net::phaseName(c.phase()), c.error().c_str());
      return 1;
    }
    if (c.phase() != net::ClientPhase::Playing) {
      if (bench::nowMs() - start > 60000) {
        std::fprintf(stderr, "bench: join did not finish in 60 s\n");
        return 1;
      }
      continue;
    }
    c.sendInput(sim::PlayerInput{});
    double now = bench::nowMs();
    if (measureFrom < 0) {
      measureFrom = now + warmup * 1000;
      measureTo = measureFrom + seconds * 1000;
    } else if (now >= measureFrom && !measuring) {
      before = c.stats();
      measuring = true;
    } else if (now >= measureTo) {
      break;
    }
  }
  net::ClientStats after = c.stats();
  double secs = seconds;
  std::printf("{\n  \"bench\": \"net_bandwidth\",\n  \"scene\": \"%s\",\n  \"seconds\": %.1f,\n", scenePath.c_str(), secs);
  std::printf("  \"down_bytes_per_s\": %.0f,\n", static_cast<double>(after.bytesIn - before.bytesIn) / secs);
  std::printf("  \"up_bytes_per_s\": %.0f,\n", static_cast<double>(after.bytesOut - before.bytesOut) / secs);
  // Issue 20's bar counts the wire: the payload plus 28 bytes of UDP/IPv4 header a datagram.
  const double datagramsDown = static_cast<double>(after.datagramsIn - before.datagramsIn) / secs;
  std::printf("  \"down_datagrams_per_s\": %.1f,\n", datagramsDown);
  std::printf("  \"down_wire_bytes_per_s\": %.0f,\n",
              static_cast<double>(after.bytesIn - before.bytesIn) / secs + 28 * datagramsDown);
  std::printf("  \"rtt_ms\": %.1f,\n  \"desyncs\": %" PRIu64 ",\n", after.rttMs, after.desyncCount);
  std::printf("  \"down_payload_by_type\": {");
  const char* sep = "";
  for (const auto& [name, t] : after.received) {
    auto it = before.received.find(name);
    std::uint64_t b = it == before.received.end() ? 0 : it->second.bytes;
    std::uint64_t m = it == before.received.end() ? 0 : it->second.messages;
    std::printf("%s\n    \"%s\": {\"bytes_per_s\": %.0f, \"messages_per_s\": %.1f}", sep, name.c_str(),
                static_cast<double>(t.bytes - b) / secs, static_cast<double>(t.messages - m) / secs);
    sep = ",";
  }
  std::printf("\n  }\n}\n");
  c.disconnect();
  return after.desyncCount == 0 ? 0 : 1;
}
