// ClientConnection's join, Hello to Playing (docs/PROTOCOL.md, Joining): Hello and
// the AuthChallenge, Welcome, generating the world on the worker thread and checking
// its hash (the cell hashes name the differing cells); meanwhile the join state
// arrives in JoinChunks, acknowledged as they come. finishJoin applies it once both
// are done, then the ordered stream's items that arrived meanwhile. Member functions of ClientConnection::Impl
// (net/internal/client_impl.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "net/internal/client_impl.h"
#include "sim/gen/generator.h"
#include "sim/gen/generator_version.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"

namespace loam::net {

using internal::Clock;
using internal::hex64;
using internal::msSince;

namespace {

// Scene names come from the server: only plain file names, so a hostile server
// cannot make us read outside the scene folder.
bool validSceneName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

// The server asks for proof of the key Hello carried: sign its nonce and name with
// ours (docs/PROTOCOL.md, Accounts). Once, before Welcome.
void ClientConnection::Impl::onAuthChallenge(const wire::AuthChallenge& c) {
  if (phase != ClientPhase::AwaitingWelcome || challengeAnswered) return fail("unexpected AuthChallenge");
  if (!config.accountKey) return fail("the server asks for an account key proof, but we sent no key");
  if (c.nonce() == nullptr || c.nonce()->size() != kAuthNonceBytes) return fail("AuthChallenge without a 32-byte nonce");
  challengeAnswered = true;
  AuthNonce nonce{};
  std::copy(c.nonce()->begin(), c.nonce()->end(), nonce.begin());
  const std::string_view serverName = c.server_name() ? c.server_name()->string_view() : std::string_view();
  const Signature sig = signChallenge(*config.accountKey, nonce, serverName, config.name);
  fbb.Clear();
  auto proof = wire::CreateAuthProof(fbb, fbb.CreateVector(sig.data(), sig.size()));
  send(wire::ClientBody::AuthProof, proof.Union(), true);
}

void ClientConnection::Impl::sendHello() {
  fbb.Clear();
  auto name = fbb.CreateString(config.name);
  flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> key;
  if (config.accountKey) key = fbb.CreateVector(config.accountKey->publicKey.data(), kPublicKeyBytes);
  // The server sends the cells within this of the player: what the streamer holds.
  const auto reach = static_cast<std::uint16_t>(std::clamp(std::ceil(config.streamRadiusMetres), 1.0, 65535.0));
  auto hello =
      wire::CreateHello(fbb, kProtocolVersion, name, static_cast<std::uint8_t>(config.kind), true, key, reach);
  send(wire::ClientBody::Hello, hello.Union(), true);
}

// ---- generation -------------------------------------------------------------------

// JoinProgress: whenever more of the join state arrived (the server's flow control),
// and while generating also about once a second (the permille stays below 1000
// until the world is built and hashed).
void ClientConnection::Impl::sendJoinProgress() {
  if (!peer || (phase != ClientPhase::Generating && phase != ClientPhase::AwaitingSnapshot)) return;
  const auto received = static_cast<std::uint32_t>(joinBytes.size());
  std::uint16_t permille = 1000;
  if (phase == ClientPhase::Generating) {
    if (received == joinAcked && msSince(lastProgressSent) < kJoinProgressEveryMs) return;
    permille = static_cast<std::uint16_t>(std::min(progress.load() * 1000.0, 999.0));
  } else if (received == joinAcked) {
    return;
  }
  joinAcked = received;
  lastProgressSent = Clock::now();
  fbb.Clear();
  send(wire::ClientBody::JoinProgress, wire::CreateJoinProgress(fbb, permille, received).Union(), true);
}

// The generated world's hashes as the server computed them for Welcome: the columns
// hash of the spawn columns.
sim::WorldHashes ClientConnection::Impl::generatedHashes(const sim::BrickStore& world) const {
  return sim::hashColumns(world, checkedColumns);
}

void ClientConnection::Impl::startGeneration() {
  transition(ClientPhase::Generating);
  progress.store(0.0);
  lastProgressSent = Clock::now();
  const std::string path = config.sceneDir + "/" + sceneName + ".toml";
  WorldFactory factory = config.worldFactory;
  const std::uint64_t wantScene = sceneHash, wantSeed = seed;
  worker = std::thread([this, path, factory, wantScene, wantSeed] {
    const Clock::time_point t0 = Clock::now();
    auto scene = sim::loadScene(path);
    if (!scene) {
      genError = "cannot load the server's scene: " + scene.error().message;
    } else if (sim::sceneJoinHash(*scene) != wantScene) {
      genError = path + ": scene hash " + hex64(sim::sceneJoinHash(*scene)) + " differs from the server's " +
                 hex64(wantScene) + " (the scene file or its materials differ)";
    } else {
      auto report = [this](double p) { progress.store(std::clamp(p, 0.0, 1.0)); };
      checkedColumns = sim::spawnColumns(*scene);
      auto state = factory ? factory(*scene, wantSeed, report) : stream.streamState(*scene, wantSeed, config);
      if (!state) {
        genError = "generating " + path + ": " + state.error().message;
      } else {
        tracker.reset(state->world);
        worldHashValue = generatedHashes(state->world).world;
        generated.emplace(std::move(*state));
        generatedScene = std::make_shared<const sim::Scene>(std::move(*scene));
      }
    }
    genMs = msSince(t0);
    progress.store(1.0);
    genDone.store(true, std::memory_order_release);
  });
}

void ClientConnection::Impl::pollGeneration() {
  if (phase != ClientPhase::Generating || awaitingCellHashes || !genDone.load(std::memory_order_acquire)) return;
  worker.join();
  stats.generateMs = genMs;
  if (!generated) return fail(genError);
  mirror.emplace(std::move(*generated));
  generated.reset();
  if (worldHashValue != generatedHash) {
    // Name the differing cells before giving up: far more useful than two hashes.
    awaitingCellHashes = true;
    fbb.Clear();
    send(wire::ClientBody::CellHashRequest, wire::CreateCellHashRequest(fbb).Union(), true);
    return;
  }
  fbb.Clear();
  send(wire::ClientBody::WorldReady, wire::CreateWorldReady(fbb, worldHashValue).Union(), true);
  transition(ClientPhase::AwaitingSnapshot);
  if (joinStarted && joinBytes.size() == joinTotal) finishJoin();  // it came while we generated
}

// ---- inbound ----------------------------------------------------------------------

void ClientConnection::Impl::onWelcome(const wire::Welcome& w) {
  if (phase != ClientPhase::AwaitingWelcome) return fail("unexpected Welcome in phase " + std::string(phaseName(phase)));
  if (w.protocol() != kProtocolVersion)
    return fail("server speaks protocol " + std::to_string(w.protocol()) + ", this client " +
                std::to_string(kProtocolVersion));
  if (w.generator_version() != sim::kGeneratorVersion)
    return fail("server world uses generator " + std::to_string(w.generator_version()) + ", this client has " +
                std::to_string(sim::kGeneratorVersion));
  if (w.player_id() == 0) return fail("Welcome with player id 0");
  const std::string scene = w.scene_name() ? w.scene_name()->str() : std::string();
  if (!validSceneName(scene)) return fail("Welcome names an invalid scene '" + scene + "'");
  playerId = sim::PlayerId{w.player_id()};
  sceneName = scene;
  sceneHash = w.scene_hash();
  seed = w.seed();
  generatedHash = w.generated_hash();
  startGeneration();
}

void ClientConnection::Impl::onCellHashes(const wire::GeneratedCellHashes& g) {
  if (!awaitingCellHashes) return fail("unexpected GeneratedCellHashes");
  std::vector<sim::CellHash> theirs;
  if (g.cells()) {
    theirs.reserve(g.cells()->size());
    for (const wire::CellHashRec* r : *g.cells()) theirs.push_back({sim::CellCoord{r->x(), r->z()}, r->hash()});
  }
  std::sort(theirs.begin(), theirs.end(), [](const sim::CellHash& a, const sim::CellHash& b) { return a.cell < b.cell; });
  const std::vector<sim::CellCoord> diff = sim::differingCells(generatedHashes(mirror->world).cells, theirs);
  std::string msg = "world differs from the server's in " + std::to_string(diff.size()) + " cells:";
  for (std::size_t i = 0; i < diff.size() && i < 12; ++i)
    msg += " (" + std::to_string(diff[i].x) + "," + std::to_string(diff[i].z) + ")";
  if (diff.size() > 12) msg += " ...";
  msg += " (world hash " + hex64(worldHashValue) + ", server " + hex64(generatedHash) + ")";
  awaitingCellHashes = false;
  fail(msg);
}

// One piece of the join state. Every field is checked before it is used: the
// total against kMaxJoinStateBytes before anything grows, each piece against what
// has arrived (the channel is ordered, so it must continue exactly there).
void ClientConnection::Impl::onJoinChunk(const wire::JoinChunk& c) {
  if (phase != ClientPhase::Generating && phase != ClientPhase::AwaitingSnapshot)
    return fail("unexpected JoinChunk in phase " + std::string(phaseName(phase)));
  const std::size_t size = c.bytes() ? c.bytes()->size() : 0;
  if (!joinStarted) {
    if (c.total() == 0 || c.total() > kMaxJoinStateBytes)
      return fail("join state of " + std::to_string(c.total()) + " bytes (limit " +
                  std::to_string(kMaxJoinStateBytes) + ")");
    joinStarted = true;
    joinTick = c.tick();
    joinTotal = c.total();
  }
  if (c.tick() != joinTick || c.total() != joinTotal)
    return fail("JoinChunk for tick " + std::to_string(c.tick()) + " of " + std::to_string(c.total()) +
                " bytes in the stream of tick " + std::to_string(joinTick) + " of " + std::to_string(joinTotal));
  if (c.offset() != joinBytes.size() || size == 0 || size > joinTotal - joinBytes.size())
    return fail("JoinChunk at " + std::to_string(c.offset()) + " of " + std::to_string(size) + " bytes, " +
                std::to_string(joinBytes.size()) + " of " + std::to_string(joinTotal) + " received");
  joinBytes.insert(joinBytes.end(), c.bytes()->begin(), c.bytes()->end());
  if (joinBytes.size() == joinTotal && phase == ClientPhase::AwaitingSnapshot) finishJoin();
}

// The whole join state arrived: apply it to the generated world, then what the
// ordered stream brought meanwhile.
void ClientConnection::Impl::finishJoin() {
  sendJoinProgress();  // the last acknowledgement ends the stream on the server
  const Clock::time_point t0 = Clock::now();
  auto save = sim::decodeSave(joinBytes);
  if (!save) return fail("join state: " + save.error().message);
  if (auto r = sim::restoreState(*save, *mirror); !r) return fail("join state: " + r.error().message);
  if (mirror->tick != joinTick)
    return fail("join state tick " + std::to_string(joinTick) + " but its save says " + std::to_string(mirror->tick));
  const sim::Player* own = mirror->findPlayer(playerId);
  if (!own) return fail("join state does not contain player " + std::to_string(playerId.value));
  for (const sim::Player& p : mirror->players) names[p.id.value] = std::string(p.name.view());
  predictor.reset(own->motion);
  lastInputSent = own->motion.lastInput;
  stats.restoreMs = msSince(t0);
  if (stream.streaming()) {
    // Playable once the ground around the player exists, at once; the rest streams.
    stats.streamed = true;
    const Clock::time_point t1 = Clock::now();
    (void)stream.holdAround(*mirror, own->motion.position.x >> sim::kUnitShift,
                            own->motion.position.z >> sim::kUnitShift);
    stats.holdMs = msSince(t1);
  }
  tracker.reset(mirror->world);
  lastTick = joinTick;
  std::vector<std::uint8_t>().swap(joinBytes);
  transition(ClientPhase::Playing);
  drainStream();  // what the ordered stream brought meanwhile (steps from joinTick + 1 on)
}

}  // namespace loam::net
