// Admin command lines (POST /admin bodies and the terminal console): runAdminCommand
// on a real ServerHost of the flat world (bound to an ephemeral loopback port, with
// nobody connected) and a ban list in this process's temp folder. The commands a
// line queues for the step are dropped afterwards, the ban file removed when a
// line changed it.
#include <cstdio>
#include <memory>
#include <string>
#include <unistd.h>

#include "fuzz/fuzz_support.h"
#include "net/server_host.h"
#include "server/admin.h"
#include "sim/gen/scene.h"

namespace {

using namespace loam;

net::ServerHost& host() {
  static std::unique_ptr<net::ServerHost> h = [] {
    net::ServerConfig config;
    config.bindAddress = "127.0.0.1";
    config.port = 0;
    const sim::SimState& state = fuzz::baseState();
    sim::Scene scene;  // the hosted world's name and bounds: what Welcome describes
    scene.name = "flat";
    scene.worldBounds = state.world.bounds();
    auto opened = net::ServerHost::open(config, state, net::describeWorld(scene, state.world));
    if (!opened) {
      std::fprintf(stderr, "cannot open a ServerHost: %s\n", opened.error().message.c_str());
      std::abort();
    }
    return std::move(opened).value();
  }();
  return *h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string bansPath = std::string(P_tmpdir) + "/loam_fuzz_bans_" + std::to_string(::getpid()) + ".txt";
  std::string line(fuzz::textOf(data, size));
  std::vector<sim::Command> commands;
  std::uint32_t sequence = 0;
  server::BanList bans(bansPath);
  server::AdminContext ctx;
  ctx.host = &host();
  ctx.bans = &bans;
  ctx.commands = &commands;
  ctx.commandSequence = &sequence;
  ctx.saveNow = [] { return std::string(); };
  ctx.stats = [] { return std::string("stats"); };
  (void)server::adminVerb(line);
  (void)server::runAdminCommand(line, ctx);
  if (bans.size() != 0) std::remove(bansPath.c_str());
  return 0;
}
