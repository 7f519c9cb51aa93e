// ServerHost: the tick (see net/server_host.h) over the parts in net/host/:
//   host_core    what the parts share: config, state, ENet host, sessions, stats, the
//                message builder, sending, phase changes, session endings
//   session      per-peer state, the phase machine, rate limit, input queue, commands
//   inbound      ENet events and verified client messages
//   step_batch   the StepBatch shared by every playing peer
//   cell_sync    CellStates per 12.8 m interest cell
//   column_checks  clients' generated columns checked against the server's
//   snapshots    per-peer Snapshots (interest, deltas, budget)
//   join_stream  the join state: encoded on a worker, sent as JoinChunks with flow control
//   host_stats   the counters
// This file keeps the order of a tick, the session timeouts, the start of joins
// (join_stream: the join state off the step thread, streamed) and the public API. docs/PROTOCOL.md is the rule book; comments say how and why.
#include "net/server_host.h"

#include <enet/enet.h>
#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "net/enet_support.h"
#include "net/host/cell_sync.h"
#include "net/host/column_checks.h"
#include "net/host/host_core.h"
#include "net/host/inbound.h"
#include "net/host/join_stream.h"
#include "net/host/session.h"
#include "net/host/snapshots.h"
#include "net/host/step_batch.h"
#include "net/host/surface_sync.h"
#include "net/protocol.h"
#include "net/tick_pacer.h"
#include "sim/gen/column_streamer.h"
#include "sim/gen/generator.h"
#include "sim/gen/generator_version.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/step/step.h"
#include "sim/step/world_hash_tracker.h"

namespace loam::net {
namespace {

using Clock = std::chrono::steady_clock;
using host::HostCore;
using host::Phase;
using host::Session;

constexpr std::uint64_t kRejectLingerTicks = 3 * sim::kTicksPerSecond;   ///< then the peer is reset without goodbye
constexpr std::uint64_t kBacklogCheckEvery = 16;                         ///< ticks between backlog checks per peer
/// ENet holds a peer's packets that arrive behind a reliable one it has not got
/// (loss, or a packet over kMaxClientPacketBytes, which ENet refuses without an
/// acknowledgement, so it never comes). Bounded per peer (ENet's default is 32 MB:
/// 8 hostile peers held 250 MB in the soak), and a peer holding this much has
/// stalled for good: an honest link catches up in a round trip or two.
constexpr std::size_t kMaxWaitingBytesPerPeer = 256 * 1024;
constexpr std::size_t kStalledWaitingBytes = 64 * 1024;

/// Bytes queued reliably to a peer and not yet acknowledged.
std::uint64_t reliableBacklog(const ENetPeer* peer) noexcept {
  std::uint64_t bytes = peer->reliableDataInTransit;
  auto* list = const_cast<ENetList*>(&peer->outgoingCommands);
  for (ENetListIterator it = enet_list_begin(list); it != enet_list_end(list); it = enet_list_next(it)) {
    const auto* oc = reinterpret_cast<const ENetOutgoingCommand*>(it);
    if (oc->command.header.command & ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE) bytes += oc->fragmentLength;
  }
  return bytes;
}

}  // namespace

struct ServerHost::Impl {
  HostCore core;  // first: the parts below hold a reference to it
  host::Inbound inbound{core};
  host::StepBatchSender stepBatch{core};
  host::StreamSender streams{core};
  host::CellSync cells{core};
  host::ColumnChecks columnChecks{core};
  host::Snapshots snapshots{core};
  host::JoinStreams joins{core};
  host::SurfaceSync surface{core};

  std::vector<sim::PlayerId> orphans;  ///< players loaded with the state: no session owns them
  sim::ColumnStreamer* streamer = nullptr;  ///< a streamed world's generator (not owned)
  std::vector<sim::StreamCentre> centres;   ///< the players' columns, for the streamer
  sim::WorldHashTracker tracker;
  sim::StepOutput out;
  std::vector<sim::Command> commands;
  std::vector<std::uint32_t> joinedNow;  ///< session indices admitted by this step
  TickTimes times;
  Clock::time_point lastBackoffCap{};  ///< when capRetransmitBackoff last ran

  explicit Impl(sim::SimState initial) : core(std::move(initial)) {}

  /// ENet's retransmission backoff capped (net/enet_support.h), once per tick period:
  /// every tick() does it; waitForInput() does it only when no tick has for a period
  /// (a stalled loop, a caller that only pumps), so peers never back off uncapped.
  void capBackoff(Clock::time_point now) {
    capRetransmitBackoff(core.host, [this](ENetPeer& peer) {
      const Session* s = core.sessionOf(&peer);
      return s && (s->phase != Phase::Playing || s->joinStreaming);
    });
    lastBackoffCap = now;
  }

  void joinTimeout(Session& s, const std::string& why) {
    ++core.stats.joinTimeouts;
    core.reject(s, RejectCode::Timeout, why);
  }

  /// Why a full client that has not built its world yet (no WorldReady) is out of
  /// time, or null. It reports progress about once a second (JoinProgress) beside its
  /// join: silence for a few seconds, no growth for longer, or two minutes in all end
  /// the session.
  static const char* generationOverdue(const Session& s, std::uint64_t t) {
    if (!s.wantsWorld || !admitted(s.phase) || s.worldChecked) return nullptr;
    if (t - std::max(s.welcomeTick, s.heardTick) > kJoinStallTicks) return "no JoinProgress for 20 s";
    if (t - std::max(s.welcomeTick, s.grewTick) > kJoinNoGrowthTicks) return "generation made no progress for 30 s";
    if (t - s.welcomeTick > kWorldReadyTimeoutTicks) return "no WorldReady within 120 s";
    return nullptr;
  }

  /// Timeouts by phase, the reliable backlog cap, and the end of lingering rejects.
  void housekeeping() {
    const std::uint64_t t = core.state.tick;
    for (Session& s : core.sessions) {
      if (s.phase != Phase::Free && s.phase != Phase::Rejected && s.peer != nullptr &&
          s.peer->totalWaitingData > kStalledWaitingBytes) {
        ++core.stats.malformed;
        core.reject(s, RejectCode::Malformed,
                    std::to_string(s.peer->totalWaitingData) +
                        " bytes held behind a reliable packet the server cannot take (over " +
                        std::to_string(kMaxClientPacketBytes) + " bytes?)");
        continue;
      }
      if (const char* why = generationOverdue(s, t)) {
        joinTimeout(s, why);
        continue;
      }
      switch (s.phase) {
        case Phase::Free: break;
        case Phase::Connected:
          if (t - s.phaseTick > kHelloTimeoutTicks) joinTimeout(s, "no Hello within 5 s");
          break;
        case Phase::Challenged:  // the proof is one round trip: the Hello deadline is plenty
          if (t - s.phaseTick > kHelloTimeoutTicks) core.reject(s, RejectCode::Timeout, "no AuthProof in time");
          break;
        case Phase::Welcomed:
          if (s.wantsWorld && t - s.phaseTick > kWorldReadyTimeoutTicks)
            joinTimeout(s, "no room to join within 120 s");
          break;
        case Phase::Joining:
        case Phase::Playing:
          if (s.joinStreaming && s.joinState && t - s.progressTick > kJoinStallTicks) {
            joinTimeout(s, "join stream not acknowledged for 20 s");
            break;
          }
          if ((t + core.indexOf(s)) % kBacklogCheckEvery == 0) {
            // The join stream has its own window: a large world stays joinable.
            const std::uint64_t queued = reliableBacklog(s.peer);
            const std::uint64_t reliable = queued - std::min(queued, host::JoinStreams::inFlight(s));
            const std::uint64_t backlog = reliable + s.stream.unackedBytes;
            if (backlog > core.config.reliableBacklogCapBytes || s.stream.unacked.size() > kMaxStreamAhead) {
              core.reject(s, RejectCode::TooSlow,
                          "backlog " + std::to_string(backlog) + " bytes (" + std::to_string(reliable) +
                              " reliable, " + std::to_string(s.stream.unacked.size()) +
                              " stream items not acknowledged)");
            }
          }
          break;
        case Phase::Rejected:
          if (t - s.phaseTick > kRejectLingerTicks) {
            enet_peer_reset(s.peer);  // no DISCONNECT event follows a reset
            core.freeSession(s);
          }
          break;
      }
    }
    // Full clients join together when the worker has room, while they generate.
    if (joins.canAdmit()) {
      for (Session& s : core.sessions) {
        if (s.phase == Phase::Welcomed && s.wantsWorld) core.transition(s, Phase::Joining);
      }
    }
  }

  /// The step's commands: leaves first (orphans, ended sessions), then the sessions'
  /// joins, inputs and due actions, then the caller's own.
  void buildCommands(std::span<const sim::Command> serverCommands) {
    commands.clear();
    for (sim::PlayerId id : orphans) commands.push_back({id, UINT32_MAX, sim::LeaveCommand{}});
    orphans.clear();
    for (sim::PlayerId id : core.pendingLeaves) commands.push_back({id, UINT32_MAX, sim::LeaveCommand{}});
    core.pendingLeaves.clear();
    core.stats.inputsOverRate +=
        host::appendSessionCommands(core.sessions, core.state.tick, core.state.rules.maxInputsPerTick, commands);
    commands.insert(commands.end(), serverCommands.begin(), serverCommands.end());
  }

  /// After the step: join and leave counts, byte budgets refilled, the joins the step
  /// admitted (or refused), each session's player position.
  void afterStep() {
    const std::uint64_t T = core.state.tick;
    const ServerConfig& config = core.config;
    joinedNow.clear();
    for (const sim::PlayerChange& c : out.players) {
      if (c.kind == sim::PlayerChange::Kind::Joined) ++core.stats.joins;
      if (c.kind == sim::PlayerChange::Kind::Left) ++core.stats.leaves;
    }
    for (Session& s : core.sessions) {
      s.tokens = std::min(s.tokens + config.bandwidthCapBytesPerSecond / double(sim::kTicksPerSecond),
                          config.bandwidthCapBytesPerSecond / 2.0);
      if (!host::inGame(s.phase)) continue;
      const sim::Player* p = s.joinIssued ? core.state.findPlayer(s.id) : nullptr;
      if (s.phase == Phase::Joining && s.joinIssued) {
        if (p == nullptr) {
          s.joinIssued = false;  // the step refused it: nothing to leave
          core.reject(s, RejectCode::ServerFull, "the world refused the join (full)");
          continue;
        }
        s.joinTick = T;
        s.cellsTick = s.wantsWorld ? 0 : T;
        joinedNow.push_back(static_cast<std::uint32_t>(core.indexOf(s)));
      }
      s.hasPos = p != nullptr;
      if (p) s.pos = p->motion.position;
    }
  }

  /// The full clients the step admitted start their join stream (the state at this
  /// tick, encoded off the step thread); they, and the swarm bots admitted with them,
  /// are Playing: StepBatches from the next tick on reach them, and the client holds
  /// them until its join state is complete.
  void beginJoins() {
    for (std::uint32_t i : joinedNow) {
      Session& s = core.sessions[i];
      if (s.phase != Phase::Joining) continue;
      if (s.wantsWorld) joins.begin(s);
      core.transition(s, Phase::Playing);
    }
  }

  void sendStep() {
    cells.routeEdits(out);
    stepBatch.send(out, cells, snapshots);
    beginJoins();
    joins.send();
    cells.sendIncremental(out);
    surface.noteEdits(out);
    surface.send();
    // The step's stream items go before the snapshots of its tick: a client that
    // reconciles its prediction to a snapshot has the world of that tick. (The marks
    // of the full CellStates below go with the next tick's items.)
    streams.send();
    snapshots.gather();
    for (Session& s : core.sessions) {
      if (s.phase != Phase::Playing || !s.hasPos) continue;
      if (const sim::Player* own = core.state.findPlayer(s.id)) snapshots.sendIfDue(s, *own);
      cells.sendCatchUp(s);
    }
    cells.endCatchUp();
  }

  void collectHostTotals() noexcept {
    // ENet's totals are 32-bit: fold them into ours and restart them.
    ENetHost* h = core.host;
    core.stats.bytesIn += h->totalReceivedData;
    core.stats.bytesOut += h->totalSentData;
    h->totalReceivedData = h->totalSentData = 0;
    h->totalReceivedPackets = h->totalSentPackets = 0;
  }
};

// ---- ServerHost -------------------------------------------------------------------------

HostedWorld describeWorld(const sim::Scene& scene, const sim::BrickStore& generated) {
  const std::vector<sim::ChunkColumn> columns = sim::spawnColumns(scene);
  sim::WorldHashes h = sim::hashColumns(generated, columns);
  return HostedWorld{scene.name, h.world, std::move(h.cells)};
}

ServerHost::ServerHost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ServerHost::~ServerHost() = default;

sim::Result<std::unique_ptr<ServerHost>> ServerHost::open(const ServerConfig& config, sim::SimState state,
                                                          HostedWorld world, sim::ColumnStreamer* streamer) {
  if (state.world.columnSource() != streamer) return sim::makeError("a streamed world needs its streamer");
  auto impl = std::make_unique<Impl>(std::move(state));
  impl->streamer = streamer;
  HostCore& core = impl->core;
  if (!core.enet.ok()) return sim::makeError("ENet initialisation failed");
  if (config.maxPlayers == 0) return sim::makeError("maxPlayers must be at least 1");
  if (config.maxPeersPerAddress == 0) return sim::makeError("maxPeersPerAddress must be at least 1");
  if (config.joinsPerMinutePerAddress == 0) return sim::makeError("joinsPerMinutePerAddress must be at least 1");
  if (config.maxPlayers + 32 > ENET_PROTOCOL_MAXIMUM_PEER_ID) {
    return sim::makeError("maxPlayers " + std::to_string(config.maxPlayers) + " is more than ENet can serve");
  }
  core.config = config;
  core.joinRate = host::JoinRate(config.maxPeersPerAddress,
                                 60 * sim::kTicksPerSecond / std::uint64_t{config.joinsPerMinutePerAddress});
  core.world = std::move(world);
  core.state.rules.maxPlayers = config.maxPlayers;

  ENetAddress address{};
  if (enet_address_set_host_ip(&address, config.bindAddress.c_str()) != 0 &&
      enet_address_set_host(&address, config.bindAddress.c_str()) != 0) {
    return sim::makeError("cannot resolve bind address '" + config.bindAddress + "'");
  }
  address.port = config.port;
  const std::size_t peerCount = config.maxPlayers + 32;  // room to answer extra peers with Reject
  core.host = enet_host_create(&address, peerCount, kChannelCount, 0, 0);
  if (core.host == nullptr) {
    return sim::makeError("cannot bind UDP " + config.bindAddress + ":" + std::to_string(config.port) +
                          " (port in use or address not local)");
  }
  core.host->maximumPacketSize = kMaxClientPacketBytes;  // ENet drops bigger reassemblies itself
  core.host->maximumWaitingData = kMaxWaitingBytesPerPeer;
  // Inbound::onConnect holds each address to maxPeersPerAddress (and counts the
  // refusals); ENet's own per-address limit, at twice that, bounds the slots a flood
  // of handshakes from one address can hold before its connects reach onConnect.
  core.host->duplicatePeers = static_cast<std::size_t>(
      std::min<std::uint64_t>(2 * std::uint64_t{config.maxPeersPerAddress}, ENET_PROTOCOL_MAXIMUM_PEER_ID));
  enlargeSocketBuffers(core.host);
  ENetAddress bound{};
  if (enet_socket_get_address(core.host->socket, &bound) == 0) {
    core.boundPort = bound.port;
  } else {
    core.boundPort = config.port;
  }
  core.sessions.resize(peerCount);

  // Ids are never reused while the server runs; players loaded with the state have
  // no session and leave in the first step.
  std::uint32_t maxId = 0;
  for (const sim::Player& p : core.state.players) {
    maxId = std::max(maxId, p.id.value);
    impl->orphans.push_back(p.id);
  }
  impl->inbound.setNextPlayerId(maxId + 1);

  // What changed before this server started reaches each full client per cell, as
  // it comes near (CellSync).
  impl->tracker.reset(core.state.world);
  impl->cells.init(impl->tracker);
  impl->surface.init();
  impl->joins.start();
  return std::unique_ptr<ServerHost>(new ServerHost(std::move(impl)));
}

const sim::StepOutput& ServerHost::tick(std::span<const sim::Command> serverCommands) {
  Impl& im = *impl_;
  const auto t0 = Clock::now();
  im.inbound.pump(0);
  im.housekeeping();
  im.buildCommands(serverCommands);
  if (im.streamer != nullptr) {
    // Columns generated ahead join the world between steps; what the step reads
    // first is generated then (it waits: sim/step/step.h).
    sim::playerStreamCentres(im.core.state, im.centres);
    im.streamer->update(im.core.state.world, im.centres);
  }
  const auto t1 = Clock::now();
  sim::step(im.core.state, im.commands, im.out);
  const auto t2 = Clock::now();
  im.tracker.update(im.core.state.world, im.out.edits);
  im.afterStep();
  im.sendStep();
  im.columnChecks.run();
  im.capBackoff(Clock::now());
  enet_host_flush(im.core.host);
  im.collectHostTotals();
  const auto t3 = Clock::now();
  const auto us = [](auto d) { return std::chrono::duration<double, std::micro>(d).count(); };
  im.times.stepUs = us(t2 - t1);
  im.times.sendUs = us(t3 - t2);
  im.times.totalUs = us(t3 - t0);
  return im.out;
}

void ServerHost::skippedTicks(std::uint64_t ticks) noexcept {
  host::creditSkippedTicks(impl_->core.sessions, ticks);
}

void ServerHost::waitForInput(int timeoutMs) {
  impl_->inbound.pump(std::max(timeoutMs, 0));
  const Clock::time_point now = Clock::now();
  if (now - impl_->lastBackoffCap >= TickPacer::periodOf(sim::kTicksPerSecond)) {
    impl_->capBackoff(now);
  }
  enet_host_flush(impl_->core.host);
  impl_->collectHostTotals();
}

std::vector<PeerInfo> ServerHost::players() const {
  std::vector<PeerInfo> out;
  for (const Session& s : impl_->core.sessions) {
    if (!host::admitted(s.phase)) continue;
    PeerInfo p;
    p.id = s.id;
    p.name = std::string(s.name.view());
    p.address = HostCore::addressOf(s.peer) + ":" + std::to_string(s.peer->address.port);
    p.rttMs = s.peer->roundTripTime;
    out.push_back(std::move(p));
  }
  return out;
}

bool ServerHost::kick(sim::PlayerId id, const std::string& reason) {
  HostCore& core = impl_->core;
  for (Session& s : core.sessions) {
    if (s.phase == Phase::Free || s.phase == Phase::Rejected || s.id.value != id.value || id.value == 0) continue;
    core.reject(s, RejectCode::Kicked, "kicked: " + reason);
    enet_host_flush(core.host);
    return true;
  }
  return false;
}

void ServerHost::setAdmissionFilter(AdmissionFilter filter) { impl_->inbound.setAdmissionFilter(std::move(filter)); }

void ServerHost::shutdown() {
  HostCore& core = impl_->core;
  for (Session& s : core.sessions) {
    if (s.phase != Phase::Free && s.phase != Phase::Rejected) {
      core.reject(s, RejectCode::ShuttingDown, "server stopping");
    }
  }
  enet_host_flush(core.host);
  impl_->collectHostTotals();
}

const sim::SimState& ServerHost::state() const noexcept { return impl_->core.state; }

std::optional<std::uint64_t> ServerHost::chunkTerm(sim::ChunkCoord c) const { return impl_->tracker.term(c); }

int ServerHost::dropColumns(std::span<const sim::ChunkColumn> columns) {
  return impl_->core.state.world.dropColumns(columns);
}

std::uint16_t ServerHost::port() const noexcept { return impl_->core.boundPort; }

ServerStats ServerHost::stats() const {
  const HostCore& core = impl_->core;
  ServerStats st = core.stats.toServerStats();
  for (const Session& s : core.sessions) {
    if (s.phase != Phase::Free) ++st.peers;
    if (s.phase == Phase::Playing) ++st.players;
    if (s.phase == Phase::Playing) st.cellsBehind += s.cellsBehind;
    if (s.phase == Phase::Playing) st.streamUnacked += s.stream.unacked.size();
  }
  st.surfacePatches = impl_->surface.publishedPatches();
  st.surfaceDue = impl_->surface.duePatches();
  st.bytesIn += core.host->totalReceivedData;
  st.bytesOut += core.host->totalSentData;
  return st;
}

ServerHost::TickTimes ServerHost::lastTickTimes() const noexcept { return impl_->times; }

}  // namespace loam::net
