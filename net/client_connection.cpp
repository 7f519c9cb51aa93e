// ClientConnection (net/client_connection.h): one player's side of the protocol. Its
// state is one ClientConnection::Impl, declared in net/internal/client_impl.h, whose
// member functions are defined by job:
// - here: the phase machine (transition, fail), sending, the service loop and the
//   dispatch of server messages, and the public API;
// - net/client_join.cpp: Hello, AuthChallenge, Welcome, generation on the worker,
//   the cell hashes, the join stream (JoinChunk, finishJoin);
// - net/client_playing.cpp: inputs, the ordered stream (Stream: StepBatch, CellState,
//   ActionResults), Snapshot, Reject, events;
// - net/internal/mirror_stream.*: the streamed mirror's columns (MirrorStream: the
//   ground and readable discs, teleport timing).
#include "net/client_connection.h"

#include <enet/enet.h>

#include <string>
#include <utility>

#include "net/enet_support.h"
#include "net/internal/client_impl.h"
#include "net/player_name.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/gen/generator.h"
#include "sim/core/assert.h"

namespace loam::net {

using internal::Clock;
using internal::msSince;

namespace {

// Legal phase changes are at most 5 (phases only move forward); illegal ones beyond
// this are counted but not recorded.
constexpr std::size_t kMaxPhaseLog = 16;

}  // namespace

const char* phaseName(ClientPhase phase) noexcept {
  switch (phase) {
    case ClientPhase::Connecting: return "connecting";
    case ClientPhase::AwaitingWelcome: return "awaiting welcome";
    case ClientPhase::Generating: return "generating";
    case ClientPhase::AwaitingSnapshot: return "awaiting snapshot";
    case ClientPhase::Playing: return "playing";
    case ClientPhase::Failed: return "failed";
    case ClientPhase::Disconnected: return "disconnected";
  }
  return "?";
}

bool legalTransition(ClientPhase from, ClientPhase to) noexcept {
  const bool live = from != ClientPhase::Failed && from != ClientPhase::Disconnected;
  switch (to) {
    case ClientPhase::Connecting: return false;  // the first phase only
    case ClientPhase::AwaitingWelcome: return from == ClientPhase::Connecting;
    case ClientPhase::Generating: return from == ClientPhase::AwaitingWelcome;
    case ClientPhase::AwaitingSnapshot: return from == ClientPhase::Generating;
    case ClientPhase::Playing: return from == ClientPhase::AwaitingSnapshot;
    case ClientPhase::Failed:
    case ClientPhase::Disconnected: return live;
  }
  return false;
}

ClientConnection::Impl::~Impl() {
  if (worker.joinable()) worker.join();
  if (host) enet_host_destroy(host);
}

// Every phase change: checks that it is legal (an illegal one is a bug here: logged
// and counted, and fatal where asserts are on), records it and times the join.
void ClientConnection::Impl::transition(ClientPhase to) {
  const bool legal = legalTransition(phase, to);
  if (!legal) {
    ++stats.illegalTransitions;
    std::fprintf(stderr, "loam client '%s': illegal transition %s -> %s\n", config.name.c_str(), phaseName(phase),
                 phaseName(to));
  }
  LOAM_ASSERT(legal);
  const double atMs = msSince(started);
  if (stats.phaseLog.size() < kMaxPhaseLog) stats.phaseLog.push_back(PhaseChange{atMs, phase, to});
  phase = to;
  if (to == ClientPhase::Playing) stats.joinMs = atMs;
}

void ClientConnection::Impl::fail(std::string why) {
  if (!active()) return;  // the first reason stands
  error = std::move(why);
  transition(ClientPhase::Failed);
  if (peer) enet_peer_disconnect(peer, 0);
}

bool ClientConnection::Impl::active() const {
  return phase != ClientPhase::Failed && phase != ClientPhase::Disconnected;
}

bool ClientConnection::Impl::joined() const {
  return phase == ClientPhase::Generating || phase == ClientPhase::AwaitingSnapshot || phase == ClientPhase::Playing;
}

void ClientConnection::Impl::send(wire::ClientBody type, flatbuffers::Offset<void> body, bool reliable) {
  fbb.Finish(wire::CreateClientMessage(fbb, type, body));
  const std::size_t size = fbb.GetSize();
  if (peer) {
    ENetPacket* packet = enet_packet_create(fbb.GetBufferPointer(), size,
                                            reliable ? ENET_PACKET_FLAG_RELIABLE : 0);
    if (packet && enet_peer_send(peer, reliable ? kChannelReliable : kChannelUnreliable, packet) != 0)
      enet_packet_destroy(packet);
  }
  TrafficCounters& c = stats.sent[messageName(type)];
  ++c.messages;
  c.bytes += size;
  fbb.Clear();
}

void ClientConnection::Impl::onPacket(const ENetPacket& packet, std::uint8_t channel, double nowMs) {
  const std::span<const std::uint8_t> bytes(packet.data, packet.dataLength);
  const auto count = [&](wire::ServerBody type) {
    TrafficCounters& c = stats.received[messageName(type)];
    ++c.messages;
    c.bytes += bytes.size();
  };
  if (channel == kChannelSnapshot) {  // raw (net/snapshot_codec.h)
    count(wire::ServerBody::Snapshot);
    return onSnapshot(bytes, nowMs);
  }
  if (channel == kChannelUnreliable) {  // the Stream, raw (net/stream_codec.h)
    count(wire::ServerBody::Stream);
    if (auto decoded = decodeStream(bytes, streamView); !decoded) return fail(decoded.error().message);
    return onStream(streamView);
  }
  const wire::ServerMessage* msg = openServerMessage(bytes, kMaxServerMessageBytes, unpacked);
  if (!msg) return fail("malformed message from the server (" + std::to_string(bytes.size()) + " bytes)");
  count(msg->body_type());
  if (msg->body_type() == wire::ServerBody::CellState) return holdFullState(*msg->body_as_CellState(), bytes);
  handle(*msg);
}

void ClientConnection::Impl::handle(const wire::ServerMessage& msg) {
  switch (msg.body_type()) {
    case wire::ServerBody::Welcome: return onWelcome(*msg.body_as_Welcome());
    case wire::ServerBody::Reject: return onReject(*msg.body_as_Reject());
    case wire::ServerBody::GeneratedCellHashes: return onCellHashes(*msg.body_as_GeneratedCellHashes());
    case wire::ServerBody::JoinSnapshot: return fail("JoinSnapshot: this protocol joins through JoinChunks");
    case wire::ServerBody::Stream: return fail("a Stream as a message: since protocol 18 it comes raw");
    case wire::ServerBody::StepBatch: return fail("a StepBatch outside the Stream");
    case wire::ServerBody::CellState: return fail("a CellState handled outside its place");  // onPacket holds it
    case wire::ServerBody::Snapshot: return fail("a Snapshot as a message: since protocol 17 they come raw");
    case wire::ServerBody::Compressed: break;  // openServerMessage unwraps it
    case wire::ServerBody::AuthChallenge: return onAuthChallenge(*msg.body_as_AuthChallenge());
    case wire::ServerBody::JoinChunk: return onJoinChunk(*msg.body_as_JoinChunk());
    case wire::ServerBody::Rejections: return fail("Rejections: retired in protocol 8");
    case wire::ServerBody::ActionResults: return fail("ActionResults outside the Stream");
    case wire::ServerBody::SurfaceChanges: return fail("SurfaceChanges outside the Stream");
    case wire::ServerBody::NONE: return fail("server message without a body");
  }
  fail("unknown server message type");
}

void ClientConnection::Impl::service(double now, int timeoutMs) {
  if (!host) return;
  nowMs = now;
  ENetEvent ev;
  int wait = timeoutMs;
  const auto joining = [this](const ENetPeer&) { return phase != ClientPhase::Playing; };
  capRetransmitBackoff(host, joining);
  while (enet_host_service(host, &ev, static_cast<enet_uint32>(wait > 0 ? wait : 0)) > 0) {
    wait = 0;
    switch (ev.type) {
      case ENET_EVENT_TYPE_CONNECT:
        if (phase == ClientPhase::Connecting) {
          configurePeer(ev.peer);
          transition(ClientPhase::AwaitingWelcome);
          sendHello();
        }
        break;
      case ENET_EVENT_TYPE_RECEIVE:
        if (active()) onPacket(*ev.packet, ev.channelID, nowMs);
        enet_packet_destroy(ev.packet);
        break;
      case ENET_EVENT_TYPE_DISCONNECT:
        peer = nullptr;
        if (phase == ClientPhase::Connecting) {
          fail("could not connect to " + config.host + ":" + std::to_string(config.port));
        } else if (active()) {
          error = ev.data != 0 ? std::string("disconnected by the server: ") +
                                     rejectCodeName(static_cast<RejectCode>(ev.data))
                               : "connection lost (timed out, or closed by the server)";
          transition(ClientPhase::Disconnected);
        }
        break;
      case ENET_EVENT_TYPE_NONE:
        break;
    }
  }
  pollGeneration();
  sendJoinProgress();
  resendIdleInputs();
  if (phase == ClientPhase::Playing) {
    predicted.expire(nowMs);
    stream.updateStream(*mirror, predictor.state(), stats);
    sendColumnHashes();
    dropFarCells();
  }
  capRetransmitBackoff(host, joining);
  enet_host_flush(host);
  stats.bytesIn += host->totalReceivedData;
  stats.bytesOut += host->totalSentData;
  stats.datagramsIn += host->totalReceivedPackets;
  host->totalReceivedData = 0;
  host->totalSentData = 0;
  host->totalReceivedPackets = 0;
  if (peer) stats.rttMs = peer->roundTripTime;
}

ClientConnection::ClientConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClientConnection::~ClientConnection() = default;

sim::Result<std::unique_ptr<ClientConnection>> ClientConnection::connect(const ClientConfig& config) {
  auto impl = std::make_unique<Impl>();
  if (!impl->enet.ok()) return sim::makeError("cannot initialise ENet");
  impl->config = config;
  // The server's rules, checked here first so a bad name fails before any packet.
  const NameCheck name = checkPlayerName(config.name);
  if (!name.ok()) return sim::makeError("name \"" + config.name + "\": " + name.why);
  impl->config.name = name.name;
  std::string host = config.host;
  std::uint16_t port = config.port;
  if (config.link.active()) {
    auto link = LinkSimulator::open(config.host, config.port, config.link);
    if (!link) return sim::makeError("link simulator: " + link.error().message);
    impl->link = std::move(*link);
    host = "127.0.0.1";
    port = impl->link->localPort();
  }
  ENetAddress address{};
  if (enet_address_set_host(&address, host.c_str()) != 0) return sim::makeError("cannot resolve host '" + host + "'");
  address.port = port;
  impl->host = enet_host_create(nullptr, 1, kChannelCount, 0, 0);
  if (!impl->host) return sim::makeError("cannot create an ENet client host (socket)");
  limitClientHost(impl->host);
  impl->peer = enet_host_connect(impl->host, &address, kChannelCount, kProtocolVersion);
  if (!impl->peer) return sim::makeError("cannot start connecting to " + host + ":" + std::to_string(port));
  enet_host_flush(impl->host);
  return std::unique_ptr<ClientConnection>(new ClientConnection(std::move(impl)));
}

void ClientConnection::service(double nowMs, int timeoutMs) { impl_->service(nowMs, timeoutMs); }

void ClientConnection::sendInput(sim::PlayerInput input) {
  Impl& m = *impl_;
  if (m.phase != ClientPhase::Playing || !m.peer) return;
  input.sequence = ++m.lastInputSent;
  m.predictor.predict(input, m.mirror->world, m.mirror->lut);
  m.syncOwn();
  m.sendInputs();
}

std::uint32_t ClientConnection::sendAction(const sim::CommandBody& body) {
  Impl& m = *impl_;
  if (m.phase != ClientPhase::Playing || !m.peer || !isAction(body)) return 0;  // inputs: sendInput
  const std::uint32_t sequence = ++m.lastActionSent;
  // It goes in this Inputs and every one after until answered: a loss costs a tick,
  // not a retransmission that holds every later action.
  m.unanswered.push_back({sequence, m.lastInputSent, body, m.nowMs});
  m.sendInputs();
  m.predictEvents.clear();
  m.predicted.predict(sequence, body, *m.mirror, m.playerId, m.nowMs, m.predictEvents);
  for (const sim::Event& e : m.predictEvents) m.pushEvent(e);
  return sequence;
}

void ClientConnection::disconnect() {
  Impl& m = *impl_;
  if (m.host && m.peer) {
    enet_peer_disconnect(m.peer, 0);
    enet_host_flush(m.host);
    // Give the server a moment to acknowledge so it sees a clean leave.
    ENetEvent ev;
    const Clock::time_point t0 = Clock::now();
    while (m.peer && msSince(t0) < 200 && enet_host_service(m.host, &ev, 20) >= 0) {
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(ev.packet);
      if (ev.type == ENET_EVENT_TYPE_DISCONNECT) m.peer = nullptr;
    }
    if (m.peer) enet_peer_reset(m.peer);
    m.peer = nullptr;
  }
  if (m.active()) {
    m.error = "disconnected by this client";
    m.transition(ClientPhase::Disconnected);
  }
}

ClientPhase ClientConnection::phase() const noexcept { return impl_->phase; }
const std::string& ClientConnection::error() const noexcept { return impl_->error; }
double ClientConnection::progress() const noexcept { return impl_->progress.load(); }
sim::PlayerId ClientConnection::playerId() const noexcept { return impl_->playerId; }
const sim::SimState& ClientConnection::mirror() const noexcept {
  if (impl_->mirror) return *impl_->mirror;
  // Before generation ends: an empty one-chunk world, so callers never see a dangling reference.
  static const sim::SimState empty{
      0,  {}, {}, {}, {}, sim::BrickStore(sim::WorldBounds{{0, 0, 0}, {sim::kChunkBricks, sim::kChunkBricks, sim::kChunkBricks}}),
      {}, {}, {}, {}, {}, {}, {}, {}};
  return empty;
}
std::shared_ptr<const sim::TerrainSampler> ClientConnection::terrainSampler() const {
  if (!impl_->mirror || !impl_->generatedScene) return nullptr;
  if (!impl_->sampler)
    impl_->sampler = std::make_shared<const sim::TerrainSampler>(*impl_->generatedScene, impl_->mirror->seed);
  return impl_->sampler;
}

sim::ChangeSubscriber ClientConnection::subscribeWorldChanges() {
  LOAM_ASSERT(impl_->mirror.has_value());
  return impl_->mirror->world.subscribeChanges();
}
std::vector<sim::BrickCoord> ClientConnection::takeWorldChanges(sim::ChangeSubscriber sub) {
  return impl_->mirror->world.takeChanged(sub);
}
const Predictor& ClientConnection::predictor() const noexcept { return impl_->predictor; }
const InterpolationBuffer& ClientConnection::others() const noexcept { return impl_->others; }
const InterpolationBuffer& ClientConnection::animals() const noexcept { return impl_->animals; }

std::optional<sim::AnimalSpecies> ClientConnection::animalSpecies(std::uint32_t id) const {
  auto it = impl_->animalSpecies.find(id);
  if (it == impl_->animalSpecies.end()) return std::nullopt;
  return static_cast<sim::AnimalSpecies>(it->second);
}
void ClientConnection::advanceFrame() noexcept { impl_->predictor.advanceFrame(); }

std::string ClientConnection::playerName(std::uint32_t id) const {
  auto it = impl_->names.find(id);
  return it == impl_->names.end() ? std::string() : it->second;
}

std::uint64_t ClientConnection::serverTick() const noexcept { return impl_->lastTick; }

bool ClientConnection::worldReadable() const noexcept {
  return impl_->phase == ClientPhase::Playing && impl_->stream.readable();
}

ClientStats ClientConnection::stats() const {
  ClientStats s = impl_->stats;
  s.prediction = impl_->predictor.stats();
  s.edits = impl_->predicted.stats();
  return s;
}

const PredictedEdits& ClientConnection::predictedEdits() const noexcept { return impl_->predicted; }

std::vector<sim::BrickCoord> ClientConnection::takePredictedChanges() { return impl_->predicted.takeChangedBricks(); }

std::vector<sim::SurfaceChange> ClientConnection::takeSurfaceChanges() {
  std::vector<sim::SurfaceChange> out;
  out.reserve(impl_->surfaceFresh.size());
  for (std::uint64_t key : impl_->surfaceFresh) out.push_back(impl_->surface.at(key));
  impl_->surfaceFresh.clear();
  return out;
}

std::vector<sim::Event> ClientConnection::takeEvents() {
  std::vector<sim::Event> out;
  out.swap(impl_->events);
  return out;
}

}  // namespace loam::net
