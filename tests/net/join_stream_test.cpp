// The join stream and the cells: a world with 100,000 scattered single-voxel edits
// (the griefers' way to make a world unjoinable) is joined by a full bot through a
// join state that does not grow with the edits, the changed cells arrive whole as
// CellStates, and the bot's world hash equals the server's. Hostile join streams are
// refused. Server and bot tick on the test thread.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <enet/enet.h>
#include <flatbuffers/flatbuffers.h>

#include "loam_generated.h"
#include "net/client_connection.h"
#include "net/enet_support.h"
#include "net/host/join_stream.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/gen/generator_version.h"
#include "net/server_host.h"
#include "net/stream_codec.h"
#include "sim/gen/scene.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/step/step.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/water.h"
#include "sim/world/brick_store.h"
#include "sim/world/surface_change.h"
#include "sim/world/world_hash.h"
#include "tests/support/full_bot.h"

namespace {

using namespace loam;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

using test::fullBotConfig;

using Messages = std::vector<std::vector<std::uint8_t>>;

/// flat.toml and its generated state, for the hostile servers below.
const std::pair<sim::Scene, sim::SimState>& flatWorld() {
  static const auto flat = [] {
    auto scene = sim::loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml");
    REQUIRE(scene.has_value());
    auto state = sim::createSimState(*scene, scene->defaultSeed);
    REQUIRE(state.has_value());
    return std::make_pair(std::move(*scene), std::move(*state));
  }();
  return flat;
}

/// A hostile server: answers Hello with a true Welcome (flat, player 1), then, after
/// WorldReady, sends the JoinChunks `chunks` builds; once the client plays, it sends
/// the Stream datagrams `stream` builds (if any). `inspect` sees the client before it
/// disconnects. Returns the client's error once it has failed ("" if it never did
/// within `seconds`).
std::string joinFromHostileServer(const std::function<void(flatbuffers::FlatBufferBuilder&, Messages&)>& chunks,
                                  const std::function<void(flatbuffers::FlatBufferBuilder&, Messages&)>& stream = {},
                                  const std::function<void(net::ClientConnection&)>& inspect = {},
                                  double seconds = 20) {
  net::EnetGuard enet;
  REQUIRE(enet.ok());
  const auto& flat = flatWorld();
  ENetAddress bind{};
  enet_address_set_host_ip(&bind, "127.0.0.1");
  bind.port = 0;
  ENetHost* server = enet_host_create(&bind, 1, net::kChannelCount, 0, 0);
  REQUIRE(server != nullptr);
  ENetAddress bound{};
  REQUIRE(enet_socket_get_address(server->socket, &bound) == 0);

  auto conn = net::ClientConnection::connect(fullBotConfig(bound.port, "victim", flat.second));
  REQUIRE(conn.has_value());
  net::ClientConnection& client = **conn;
  const std::uint64_t generatedHash = net::describeWorld(flat.first, flat.second.world).generatedHash;

  flatbuffers::FlatBufferBuilder fbb;
  // Reliable, so loopback loss cannot hide a case; the channel says what the client reads.
  auto sendAll = [](ENetPeer* peer, const Messages& out, std::uint8_t channel = net::kChannelReliable) {
    for (const auto& m : out) {
      ENetPacket* p = enet_packet_create(m.data(), m.size(), ENET_PACKET_FLAG_RELIABLE);
      if (enet_peer_send(peer, channel, p) < 0) enet_packet_destroy(p);
    }
  };
  ENetPeer* peer = nullptr;
  bool streamSent = false;
  const Clock::time_point t0 = Clock::now();
  while (msSince(t0) < seconds * 1000 && client.phase() != net::ClientPhase::Failed &&
         client.phase() != net::ClientPhase::Disconnected) {
    ENetEvent ev;
    while (enet_host_service(server, &ev, 0) > 0) {
      if (ev.type != ENET_EVENT_TYPE_RECEIVE) continue;
      peer = ev.peer;
      const std::span<const std::uint8_t> bytes(ev.packet->data, ev.packet->dataLength);
      const wire::ClientMessage* msg = net::verifyClientMessage(bytes, net::kMaxClientPacketBytes);
      Messages out;
      if (msg && msg->body_type() == wire::ClientBody::Hello) {
        fbb.Clear();
        auto w = wire::CreateWelcomeDirect(fbb, net::kProtocolVersion, 1, "hostile", flat.first.name.c_str(),
                                           sim::sceneJoinHash(flat.first), flat.first.defaultSeed,
                                           sim::kGeneratorVersion, generatedHash, 1);
        fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Welcome, w.Union()));
        out.emplace_back(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
      } else if (msg && msg->body_type() == wire::ClientBody::WorldReady) {
        chunks(fbb, out);
      }
      sendAll(ev.peer, out);
      enet_packet_destroy(ev.packet);
    }
    if (stream && !streamSent && peer && client.phase() == net::ClientPhase::Playing) {
      Messages out;
      stream(fbb, out);
      sendAll(peer, out, net::kChannelUnreliable);
      streamSent = true;
    }
    enet_host_flush(server);
    client.service(msSince(t0), 5);
  }
  const std::string error = client.phase() == net::ClientPhase::Failed ? client.error() : std::string();
  if (inspect) inspect(client);
  client.disconnect();
  enet_host_destroy(server);
  return error;
}

/// The true join state of player 1 ("victim") on flat, in one JoinChunk.
void trueJoinState(flatbuffers::FlatBufferBuilder& fbb, Messages& out) {
  sim::SimState state(flatWorld().second);
  const sim::Command join{sim::PlayerId{1}, 1, sim::JoinCommand{sim::PlayerName::from("victim")}};
  sim::step(state, std::span(&join, 1));
  sim::SaveData data;
  data.header.identity = {state.sceneHash, state.seed, sim::kGeneratorVersion};
  data.header.tick = state.tick;
  data.bounds = state.world.bounds();
  data.blobs = sim::mirrorBlobs(sim::copyState(state, false));
  auto bytes = sim::encodeSave(data);
  REQUIRE(bytes.has_value());
  fbb.Clear();
  auto c = wire::CreateJoinChunk(fbb, state.tick, 0, static_cast<std::uint32_t>(bytes->size()),
                                 fbb.CreateVector(*bytes));
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::JoinChunk, c.Union()));
  out.emplace_back(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

/// One JoinChunk message.
std::vector<std::uint8_t> chunk(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t tick, std::uint32_t offset,
                                std::uint32_t total, std::size_t size) {
  fbb.Clear();
  const std::vector<std::uint8_t> bytes(size, 0x5a);
  auto c = wire::CreateJoinChunk(fbb, tick, offset, total, fbb.CreateVector(bytes));
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::JoinChunk, c.Union()));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace

TEST_CASE("a world with 100,000 scattered single-voxel edits: a small join state, then the cells arrive whole") {
  auto scene = sim::loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml");
  REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
  auto generated = sim::createSimState(*scene, scene->defaultSeed);
  REQUIRE_MESSAGE(generated.has_value(), (generated ? "" : generated.error().message));
  const net::HostedWorld hosted = net::describeWorld(*scene, generated->world);

  // Griefing: one voxel changed in each of 100,000 random places (a few land in the
  // same brick). Solid becomes air, air becomes the scene's first solid material.
  sim::SimState state(*generated);
  const sim::WorldBounds b = state.world.bounds();
  const int x0 = b.minBrick.x * sim::kBrickSize, y0 = b.minBrick.y * sim::kBrickSize, z0 = b.minBrick.z * sim::kBrickSize;
  const int x1 = b.maxBrick.x * sim::kBrickSize, y1 = b.maxBrick.y * sim::kBrickSize, z1 = b.maxBrick.z * sim::kBrickSize;
  std::mt19937 rng(16);
  std::uniform_int_distribution<int> dx(x0, x1 - 1), dy(y0, y1 - 1), dz(z0, z1 - 1);
  for (int i = 0; i < 100000; ++i) {
    const sim::VoxelCoord v{dx(rng), dy(rng), dz(rng)};
    const sim::MaterialId m = state.world.get(v);
    REQUIRE(state.world.set(v, m == sim::kAir ? sim::MaterialId{1} : sim::kAir));
  }
  const std::size_t modified = state.world.modifiedCount();
  CAPTURE(modified);
  REQUIRE(modified > 90000);

  net::ServerConfig sc;
  sc.name = "join-stream";
  sc.bindAddress = "127.0.0.1";
  sc.port = 0;
  sc.bandwidthCapBytesPerSecond = 4u << 20;  // the whole griefed glade in a few seconds
  auto server = net::ServerHost::open(sc, std::move(state), hosted);
  REQUIRE_MESSAGE(server.has_value(), (server ? "" : server.error().message));
  net::ServerHost& host = **server;

  auto conn = net::ClientConnection::connect(fullBotConfig(host.port(), "joiner", *generated));
  REQUIRE_MESSAGE(conn.has_value(), (conn ? "" : conn.error().message));
  net::ClientConnection& bot = **conn;

  const Clock::time_point t0 = Clock::now();
  const auto period = std::chrono::microseconds(16667);
  Clock::time_point next = t0;
  std::uint64_t playingTicks = 0;
  double maxTickUs = 0;  // the join's capture is on the tick; its encoding is not
  // Caught up: nothing left to send whole and the same world. Not "every stream item
  // acknowledged": the waterfall queues items every few ticks, and a bot keeping pace
  // with the server always has this tick's in flight when the test looks.
  const auto caughtUp = [&] {
    return bot.phase() == net::ClientPhase::Playing && host.stats().cellsBehind == 0 &&
           sim::hashWorld(bot.mirror().world).world == sim::hashWorld(host.state().world).world;
  };
  while (msSince(t0) < 45000 && (playingTicks < 60 || (playingTicks % 30 != 0 || !caughtUp()))) {
    host.tick();
    if (host.state().tick > 1) maxTickUs = std::max(maxTickUs, host.lastTickTimes().totalUs);  // not the first step's warm-up
    bot.service(msSince(t0));
    const net::ClientPhase p = bot.phase();
    if (p == net::ClientPhase::Failed || p == net::ClientPhase::Disconnected) break;
    if (p == net::ClientPhase::Playing) ++playingTicks;
    next += period;
    std::this_thread::sleep_until(next);
  }
  const std::string why = std::string(net::phaseName(bot.phase())) + " " + bot.error();
  CAPTURE(why);
  REQUIRE(bot.phase() == net::ClientPhase::Playing);

  const net::ServerStats st = host.stats();
  const net::TrafficCounters& chunks = st.sent.at("JoinChunk");
  const net::TrafficCounters& cells = st.sent.at("CellState");
  MESSAGE("join state: " << chunks.bytes << " bytes in " << chunks.messages << " chunks; join "
                         << bot.stats().joinMs << " ms; cells: " << cells.messages << " CellStates, " << cells.bytes
                         << " bytes, caught up in " << msSince(t0) / 1000 << " s; longest server tick "
                         << maxTickUs / 1000 << " ms");
  // The join state holds players and weather only: the edits come per cell.
  CHECK(chunks.bytes < 4096);
  CHECK(cells.bytes > net::host::kJoinWindowBytes);
  CHECK(bot.stats().cellChecks >= 64);  // glade's cells, all within the bot's reach
  CHECK(st.rejected == 0);
  CHECK(bot.stats().desyncCount == 0);
  CHECK(bot.stats().stepsApplied > 0);
  CHECK(caughtUp());

  // The water too. The bot took the waterfall's cell whole in the middle of a flush
  // window, and the server leaves out of a flush only the voxels back at the previous
  // flush's amount, never in a cell sent whole since. Stop the server right after a
  // flush (its water is then all sent) and let the bot take what is on its way.
  const auto every = static_cast<std::uint64_t>(net::InterestConfig{}.cellStateEvery);
  do {
    host.tick();
    bot.service(msSince(t0));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  } while (host.state().tick % every != 0);
  for (const Clock::time_point until = Clock::now() + std::chrono::milliseconds(300); Clock::now() < until;) {
    bot.service(msSince(t0));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CHECK(host.stats().waterRecordsLeftOut > 0);  // the waterfall's rocking voxels
  const sim::WorldBounds& wb = host.state().world.bounds();
  int wetCells = 0;
  for (int z = wb.minBrick.z >> sim::kCellShift; z <= (wb.maxBrick.z - 1) >> sim::kCellShift; ++z)
    for (int x = wb.minBrick.x >> sim::kCellShift; x <= (wb.maxBrick.x - 1) >> sim::kCellShift; ++x) {
      const std::vector<sim::WaterChange> server = sim::waterInCell(host.state().water, {x, z});
      INFO("cell " << x << "," << z);
      CHECK(sim::waterInCell(bot.mirror().water, {x, z}) == server);
      wetCells += server.empty() ? 0 : 1;
    }
  CHECK(wetCells > 0);
  bot.disconnect();
}

TEST_CASE("a hostile server's join stream: the total is checked before anything grows, every piece against what arrived") {
  /// One JoinChunk of the hostile stream: its tick, offset, declared total and size.
  struct Piece {
    std::uint64_t tick;
    std::uint32_t offset, total;
    std::size_t size;
  };
  struct Case {
    const char* name;
    std::vector<Piece> pieces;  ///< sent in this order after WorldReady
    const char* error;          ///< what the client's error says
    bool errorStarts;           ///< the error starts with it (else: contains it)
  };
  const Case cases[] = {
      {"total over the limit", {{5, 0, std::uint32_t{0xffffffff}, 16}}, "join state of 4294967295 bytes (limit", false},
      {"a gap", {{5, 0, 1000, 100}, {5, 200, 1000, 100}}, "JoinChunk at 200 of 100 bytes, 100 of 1000 received", false},
      {"past the total", {{5, 0, 150, 100}, {5, 100, 150, 100}}, "JoinChunk at 100 of 100 bytes, 100 of 150 received",
       false},
      {"another stream's piece", {{5, 0, 1000, 100}, {6, 100, 1000, 100}}, "JoinChunk for tick 6", false},
      {"a complete stream that is not a save", {{5, 0, 200, 100}, {5, 100, 200, 100}}, "join state: ", true},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const std::string error = joinFromHostileServer([&c](auto& fbb, auto& out) {
        for (const Piece& p : c.pieces) out.push_back(chunk(fbb, p.tick, p.offset, p.total, p.size));
      });
      CAPTURE(error);
      if (c.errorStarts) {
        CHECK(error.find(c.error) == 0);
      } else {
        CHECK(error.find(c.error) != std::string::npos);
      }
    }
  }
}

TEST_CASE("edits made while the server runs reach a later joiner as whole cells") {
  auto scene = sim::loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml");
  REQUIRE(scene.has_value());
  auto generated = sim::createSimState(*scene, scene->defaultSeed);
  REQUIRE(generated.has_value());
  net::ServerConfig sc;
  sc.bindAddress = "127.0.0.1";
  sc.port = 0;
  auto server = net::ServerHost::open(sc, sim::SimState(*generated),
                                      net::describeWorld(*scene, generated->world));
  REQUIRE(server.has_value());
  net::ServerHost& host = **server;
  auto connect = [&](const std::string& name) {
    auto conn = net::ClientConnection::connect(fullBotConfig(host.port(), name, *generated));
    REQUIRE(conn.has_value());
    return std::move(*conn);
  };
  const Clock::time_point t0 = Clock::now();
  Clock::time_point next = t0;
  auto runUntil = [&](std::initializer_list<net::ClientConnection*> bots, const std::function<bool()>& done) {
    const Clock::time_point start = Clock::now();
    while (msSince(start) < 20000 && !done()) {
      host.tick();
      for (net::ClientConnection* b : bots) {
        b->service(msSince(t0));
        if (b->phase() == net::ClientPhase::Playing) b->sendInput(sim::PlayerInput{});
      }
      next += std::chrono::microseconds(16667);
      std::this_thread::sleep_until(next);
    }
    return done();
  };

  auto digger = connect("digger");
  REQUIRE(runUntil({digger.get()}, [&] { return digger->phase() == net::ClientPhase::Playing; }));
  // Dig around the digger's feet (within reach, in sight), a few times.
  const sim::Player* me = digger->mirror().findPlayer(digger->playerId());
  REQUIRE(me != nullptr);
  const sim::Vec3i p = me->motion.position;
  const sim::VoxelCoord feet{p.x / sim::kUnitsPerVoxel, p.y / sim::kUnitsPerVoxel - 1, p.z / sim::kUnitsPerVoxel};
  int sent = 0;
  REQUIRE(runUntil({digger.get()}, [&] {
    if (sent < 6) {
      digger->sendAction(sim::DigCommand{{feet.x + 8 - 3 * sent, feet.y, feet.z + 6}, sim::ToolSize::Cm20});
      ++sent;
    }
    return host.state().world.modifiedCount() >= 4;
  }));

  auto late = connect("late");
  REQUIRE(runUntil({digger.get(), late.get()}, [&] { return late->phase() == net::ClientPhase::Playing; }));
  // Players spawn apart: the late one comes next to the digger, where the changed
  // cells come to it whole.
  const sim::Command near{sim::kServerPlayer, 1,
                          sim::TeleportCommand{late->playerId(), {p.x + 2 * sim::kUnitsPerMetre, 0, p.z}, true}};
  host.tick(std::span(&near, 1));
  const std::uint64_t serverHash = sim::hashWorld(host.state().world).world;
  CHECK(serverHash != sim::hashWorld(generated->world).world);  // the digs are in the world
  INFO("late: " << std::string(net::phaseName(late->phase())) << " " << late->error() << ", desyncs "
                << late->stats().desyncCount);
  CHECK(runUntil({digger.get(), late.get()}, [&] {
    return host.stats().streamUnacked == 0 && sim::hashWorld(late->mirror().world).world == serverHash;
  }));
  CHECK(late->stats().cellChecks > 0);
  CHECK(late->stats().desyncCount == 0);
  CHECK(digger->stats().desyncCount == 0);
  digger->disconnect();
  late->disconnect();
}

namespace {

/// A finished ServerMessage's bytes.
std::vector<std::uint8_t> finished(const flatbuffers::FlatBufferBuilder& fbb) {
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

/// SurfaceChanges of `count` records, patch (i, 0) each, with `material`.
std::vector<std::uint8_t> surfaceChanges(flatbuffers::FlatBufferBuilder& fbb, std::size_t count,
                                         std::uint8_t material) {
  fbb.Clear();
  std::vector<wire::SurfaceChangeRec> recs;
  for (std::size_t i = 0; i < count; ++i) recs.emplace_back(static_cast<std::int32_t>(i), 0, 5, material);
  auto m = wire::CreateSurfaceChanges(fbb, fbb.CreateVectorOfStructs(recs));
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::SurfaceChanges, m.Union()));
  return finished(fbb);
}

/// A Stream datagram of one message item.
std::vector<std::uint8_t> streamItem(std::uint32_t sequence, const std::vector<std::uint8_t>& message) {
  std::vector<std::uint8_t> datagram;
  net::appendStreamItem(datagram, 0, {sequence, net::StreamItemKind::Message, 0, {}, 0, message});
  return datagram;
}

}  // namespace

TEST_CASE("a hostile server's ordered stream: every item is checked before it is held; SurfaceChanges are bounded") {
  struct Case {
    const char* name;
    std::function<std::vector<std::uint8_t>(flatbuffers::FlatBufferBuilder&)> build;
    const char* error;  ///< what the client's error contains
  };
  const Case cases[] = {
      {"an item past the window",
       [](auto& fbb) { return streamItem(net::kMaxStreamAhead + 1, surfaceChanges(fbb, 1, 0)); },
       "is more than"},
      {"a full CellState in the stream",
       [](auto& fbb) {
         fbb.Clear();
         auto c = wire::CreateCellState(fbb, 1, 0, 0, true);
         fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::CellState, c.Union()));
         return streamItem(1, finished(fbb));
       },
       "(a CellState: full ones come reliably, water as water)"},
      {"two items of one sequence",
       [](auto& fbb) {
         std::vector<std::uint8_t> datagram = streamItem(1, surfaceChanges(fbb, 1, 0));
         net::appendStreamItem(datagram, 1, {1, net::StreamItemKind::Message, 0, {}, 0, surfaceChanges(fbb, 1, 0)});
         return datagram;
       },
       "Stream: an item after 1 with a gap of 0"},
      {"a truncated datagram",
       [](auto& fbb) {
         std::vector<std::uint8_t> datagram = streamItem(1, surfaceChanges(fbb, 1, 0));
         datagram.pop_back();
         return datagram;
       },
       "Stream: truncated"},
      {"a message the stream never carries",
       [](auto& fbb) {
         fbb.Clear();
         auto w = wire::CreateWelcomeDirect(fbb, net::kProtocolVersion, 1, "hostile", "flat", 0, 0, 0, 0, 1);
         fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Welcome, w.Union()));
         return streamItem(1, finished(fbb));
       },
       "is not a StepBatch, ActionResults or SurfaceChanges"},
      {"water records that do not decode",
       [](auto&) {
         std::vector<std::uint8_t> datagram;
         const std::vector<std::uint8_t> cut{0xff};  // a key step cut short
         net::appendStreamItem(datagram, 0, {1, net::StreamItemKind::Water, 0, {2, -1}, 0, cut});
         return datagram;
       },
       "water of cell (2, -1): "},
      {"water that does not decompress to its raw size",
       [](auto&) {
         std::vector<std::uint8_t> datagram;
         const std::vector<std::uint8_t> notZstd{1, 2, 3};
         net::appendStreamItem(datagram, 0, {1, net::StreamItemKind::Water, 0, {2, -1}, 100, notZstd});
         return datagram;
       },
       "Stream item 1: water of 3 bytes that do not decompress to 100"},
      {"SurfaceChanges over the cap",
       [](auto& fbb) { return streamItem(1, surfaceChanges(fbb, net::kMaxSurfaceChanges + 1, 0)); },
       "SurfaceChanges with 1025 records (at most 1024)"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const std::string error =
          joinFromHostileServer(trueJoinState, [&c](auto& fbb, Messages& out) { out.push_back(c.build(fbb)); });
      CAPTURE(error);
      CHECK(error.find(c.error) != std::string::npos);
    }
  }
  SUBCASE("a material the client's table lacks is shown as the generator's surface") {
    std::vector<sim::SurfaceChange> shown;
    std::uint64_t applied = 0;
    const std::string error = joinFromHostileServer(
        trueJoinState,
        [](auto& fbb, Messages& out) { out.push_back(streamItem(1, surfaceChanges(fbb, 3, 250))); },
        [&](net::ClientConnection& client) {
          shown = client.takeSurfaceChanges();
          applied = client.stats().surfacePatches;
        },
        2.0);
    CHECK(error.empty());
    CHECK(applied == 3);
    REQUIRE(shown.size() == 3);
    for (const sim::SurfaceChange& p : shown) {
      CHECK(p.rise == 5);
      CHECK(p.material == sim::kAir);
    }
  }
}
