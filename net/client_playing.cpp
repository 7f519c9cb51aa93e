// ClientConnection while Playing: inputs (sent, predicted, resent while idle), then
// every StepBatch (in order), CellState and Snapshot decoded into the mirror's records
// and handed to sim/step/mirror.h's functions, the hashes checked after each step,
// the others interpolated and the own player reconciled; Reject; ActionResults
// settling the predicted edits; the events queued for takeEvents. Member functions
// of ClientConnection::Impl (net/internal/client_impl.h).
#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "net/edit_codec.h"
#include "net/entity_codec.h"
#include "net/internal/client_impl.h"
#include "net/water_codec.h"
#include "sim/gen/generator_version.h"
#include "sim/systems/water.h"

namespace loam::net {

using internal::Clock;
using internal::hex64;
using internal::SnapEntry;

namespace {

constexpr std::size_t kMaxDesyncsKept = 16;
// Events pile up when the owner never calls takeEvents (a bot that ignores them);
// beyond this they are dropped rather than growing without bound.
constexpr std::size_t kMaxQueuedEvents = 1u << 16;
// Resend pending inputs after this long without a new one (2 ticks).
constexpr double kIdleResendMs = 2000.0 / sim::kTicksPerSecond;
/// How often dropFarCells looks, and how far beyond the reach a modified column must
/// be (the server measures the reach from its own copy of the player, which a
/// prediction may lead by a few metres).
constexpr double kDropCheckMs = 1000;
constexpr double kDropMarginMetres = 32;
/// Stream items and full CellStates held before their turn (while the join state
/// arrives, or behind a gap): a server that makes us hold more is not one we can follow.
constexpr std::size_t kMaxHeldBytes = std::size_t{64} << 20;

sim::PlayerState poseState(const wire::PlayerPoseRec& r, sim::PlayerState base) {
  base.position = {r.px(), r.py(), r.pz()};
  base.velocity = {};  // not sent for others (net/schema/loam.fbs PlayerPoseRec)
  base.yaw = r.yaw();
  base.pitch = r.pitch();
  sim::unpackMotionFlags(base, r.flags());
  return base;
}

template <class Rec>
sim::Result<void> applyDelta(std::vector<Rec>& list, std::span<const std::uint8_t> changes,
                             std::span<const std::uint32_t> gone) {
  auto byId = [](const Rec& r, std::uint32_t id) { return r.id() < id; };
  for (std::uint32_t id : gone) {
    auto it = std::lower_bound(list.begin(), list.end(), id, byId);
    if (it != list.end() && it->id() == id) list.erase(it);
  }
  if (changes.empty()) return {};
  return applyEntityRecords(changes, list, kMaxEntitiesInView);
}

}  // namespace

// Inputs with every unacknowledged input (the newest kMaxInputsPerMessage).
void ClientConnection::Impl::sendInputs() {
  const auto pending = predictor.pending();
  const std::size_t n = std::min(pending.size(), kMaxInputsPerMessage);
  inputRecs.clear();
  for (std::size_t i = pending.size() - n; i < pending.size(); ++i) inputRecs.push_back(toWire(pending[i]));
  fbb.Clear();
  auto vec = fbb.CreateVectorOfStructs(inputRecs.data(), inputRecs.size());
  // Unanswered actions, oldest first; one unanswered for kPredictionTimeoutMs is
  // given up (its prediction expires too).
  while (!unanswered.empty() && nowMs - unanswered.front().sentMs > kPredictionTimeoutMs) unanswered.pop_front();
  actionOffsets.clear();
  for (std::size_t i = 0; i < unanswered.size() && i < kMaxActionsPerInputs; ++i) {
    const internal::UnansweredAction& a = unanswered[i];
    actionOffsets.push_back(encodeAction(fbb, a.afterInput, a.sequence, a.body));
  }
  const auto actions = actionOffsets.empty() ? 0 : fbb.CreateVector(actionOffsets);
  auto body = wire::CreateInputs(fbb, vec, newestSnapshot, receipt.ack(), actions);
  send(wire::ClientBody::Inputs, body.Union(), false);
  lastInputsMs = nowMs;
  streamAckDue = false;
}

// The newest input travels in one packet only when no input follows it (the owner
// paused input): resend the pending ones (and the unanswered actions) every few
// ticks until acknowledged, so a lost last packet cannot leave them unapplied. The same for the stream: a Stream
// came (new items, or resends because our acknowledgement was lost), so acknowledge,
// also while the join state arrives (Inputs without inputs).
void ClientConnection::Impl::resendIdleInputs() {
  if (!peer) return;
  const bool inputsWaiting = phase == ClientPhase::Playing && (!predictor.pending().empty() || !unanswered.empty());
  const bool ackWaiting = streamAckDue && joined();
  if ((inputsWaiting || ackWaiting) && nowMs - lastInputsMs >= kIdleResendMs) sendInputs();
}

// ---- the ordered stream -------------------------------------------------------------

void ClientConnection::Impl::onStream(std::span<const StreamItemView> items) {
  // The Stream is unreliable: it may overtake a Welcome being resent, and the server
  // resends every item until acknowledged, so one before Welcome is dropped.
  if (phase == ClientPhase::AwaitingWelcome) return;
  if (!joined()) return fail("a Stream before Welcome");
  streamAckDue = true;
  for (const StreamItemView& item : items) {
    const std::uint32_t seq = item.sequence;
    if (receipt.tooFarAhead(seq))
      return fail("Stream item " + std::to_string(seq) + " is more than " + std::to_string(kMaxStreamAhead) +
                  " past item " + std::to_string(receipt.ack()));
    if (!receipt.receive(seq)) continue;  // a resend
    // Checked now, so that what is held can be applied: a message on the copy (which
    // is aligned as the verifier wants), water records unpacked and decoded.
    internal::HeldItem held{item.kind, item.fullState, item.cell, {}, {}};
    wire::ServerBody type = wire::ServerBody::CellState;  // a mark's and water's, for the byte accounting
    if (item.kind == StreamItemKind::Water) {
      const sim::Result<std::span<const std::uint8_t>> records = unpackWater(item, itemUnpacked);
      if (!records) return fail("Stream item " + std::to_string(seq) + ": " + records.error().message);
      if (!decodeWater(item.cell, *records, held.water)) return;
    } else if (item.kind == StreamItemKind::Message) {
      held.bytes.assign(item.bytes.begin(), item.bytes.end());
      const wire::ServerMessage* msg = openServerMessage(held.bytes, kMaxServerMessageBytes, itemUnpacked);
      type = msg ? msg->body_type() : wire::ServerBody::NONE;
      if (type != wire::ServerBody::StepBatch && type != wire::ServerBody::ActionResults &&
          type != wire::ServerBody::SurfaceChanges)
        return fail("Stream item " + std::to_string(seq) + " is not a StepBatch, ActionResults or SurfaceChanges" +
                    (type == wire::ServerBody::CellState ? " (a CellState: full ones come reliably, water as water)"
                                                         : ""));
    }
    // Counted under its own type as it came; the Stream keeps its envelope's bytes.
    if (!item.bytes.empty()) {
      TrafficCounters& own = stats.received[messageName(type)];
      ++own.messages;
      own.bytes += item.bytes.size();
      stats.received[messageName(wire::ServerBody::Stream)].bytes -= item.bytes.size();
    }
    heldBytes += held.heldBytes();
    if (heldBytes > kMaxHeldBytes)
      return fail("over " + std::to_string(kMaxHeldBytes) + " bytes of the stream held before their turn");
    streamItems.emplace(seq, std::move(held));
  }
  drainStream();
}

void ClientConnection::Impl::holdFullState(const wire::CellState& c, std::span<const std::uint8_t> bytes) {
  if (!joined()) return fail("a CellState before Welcome");
  if (!c.full()) return fail("an incremental CellState (the changes come as Stream water items)");
  heldBytes += bytes.size();
  if (heldBytes > kMaxHeldBytes)
    return fail("over " + std::to_string(kMaxHeldBytes) + " bytes of the stream held before their turn");
  fullStates.emplace_back(bytes.begin(), bytes.end());
  drainStream();
}

void ClientConnection::Impl::drainStream() {
  while (phase == ClientPhase::Playing && !streamItems.empty() && streamItems.begin()->first == streamApplied + 1) {
    internal::HeldItem& item = streamItems.begin()->second;
    switch (item.kind) {
      case StreamItemKind::Mark: {
        if (item.fullState != fullStatesApplied + 1)
          return fail("Stream item " + std::to_string(streamApplied + 1) + " marks full CellState " +
                      std::to_string(item.fullState) + " after " + std::to_string(fullStatesApplied));
        if (fullStates.empty()) return;  // it is still on its way
        const wire::ServerMessage* msg = openServerMessage(fullStates.front(), kMaxServerMessageBytes, itemUnpacked);
        if (!msg) return fail("a held full CellState no longer verifies");
        heldBytes -= fullStates.front().size();
        ++fullStatesApplied;
        onCellState(*msg->body_as_CellState());
        fullStates.pop_front();
        break;
      }
      case StreamItemKind::Water: onCellWater(item.cell, item.water); break;
      case StreamItemKind::Message: {
        const wire::ServerMessage* msg = openServerMessage(item.bytes, kMaxServerMessageBytes, itemUnpacked);
        if (!msg) return fail("a held stream message no longer verifies");
        applyStreamItem(*msg);
        break;
      }
    }
    heldBytes -= item.heldBytes();
    streamItems.erase(streamItems.begin());
    ++streamApplied;
    if (!active()) return;
  }
}

void ClientConnection::Impl::applyStreamItem(const wire::ServerMessage& msg) {
  switch (msg.body_type()) {
    case wire::ServerBody::StepBatch: return onStepBatch(*msg.body_as_StepBatch());
    case wire::ServerBody::ActionResults: return onActionResults(*msg.body_as_ActionResults());
    case wire::ServerBody::SurfaceChanges: return onSurfaceChanges(*msg.body_as_SurfaceChanges());
    default: return fail("a Stream item of the wrong type");  // onStream checked: never
  }
}

// Far edits: kept per patch (the latest wins) for the far view, which takes the fresh
// ones each frame. Any values are harmless there (it clamps rises); what is bounded
// is how many patches a server can make us keep.
void ClientConnection::Impl::onSurfaceChanges(const wire::SurfaceChanges& c) {
  if (!c.changes()) return;
  if (c.changes()->size() > kMaxSurfaceChanges)
    return fail("SurfaceChanges with " + std::to_string(c.changes()->size()) + " records (at most " +
                std::to_string(kMaxSurfaceChanges) + ")");
  for (const wire::SurfaceChangeRec* r : *c.changes()) {
    const std::uint64_t key = sim::surfacePatchKey(r->x(), r->z());
    auto it = surface.find(key);
    if (it == surface.end()) {
      if (surface.size() >= kMaxSurfacePatches) {
        ++stats.surfaceRefused;
        continue;
      }
      it = surface.emplace(key, sim::SurfaceChange{r->x(), r->z()}).first;
      stats.surfacePatches = surface.size();
    }
    it->second.rise = r->rise();
    // A material the table lacks would index past the renderer's palette.
    it->second.material = r->material() < mirror->lut.count ? r->material() : sim::kAir;
    surfaceFresh.insert(key);
  }
}

void ClientConnection::Impl::dropFarCells() {
  if (!stream.streaming() || nowMs - lastDropCheckMs < kDropCheckMs) return;
  lastDropCheckMs = nowMs;
  const sim::Vec3i p = predictor.state().position;
  const double keep = (config.streamRadiusMetres + kDropMarginMetres) * sim::kUnitsPerMetre;
  const auto far = [&](sim::CellCoord c) { return double(sim::cellDistanceSquared(p, c)) > keep * keep; };
  constexpr std::int32_t kColumnsPerCell = sim::kCellBricks / sim::kChunkBricks;
  std::vector<sim::CellCoord> cells;
  for (const sim::ChunkColumn col : mirror->world.presentColumns()) {
    const sim::CellCoord c = sim::cellOfColumn(col);
    if (far(c) && mirror->world.columnModified(col)) cells.push_back(c);
  }
  if (cells.empty()) return;
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  std::vector<sim::ChunkColumn> columns;
  for (const sim::CellCoord c : cells) {
    for (std::int32_t dz = 0; dz < kColumnsPerCell; ++dz)
      for (std::int32_t dx = 0; dx < kColumnsPerCell; ++dx)
        columns.push_back({c.x * kColumnsPerCell + dx, c.z * kColumnsPerCell + dz});
    sim::clearFireInCell(mirror->fire, c);
    droppedCells.insert(sim::cellKey(c));
  }
  tracker.forgetColumns(mirror->world, columns);
  mirror->world.dropColumns(columns);
  stats.cellsDropped += cells.size();
  for (std::size_t i = 0; i < cells.size(); i += kMaxCellsDropped) {
    std::vector<wire::CellRef> refs;
    for (std::size_t k = i; k < std::min(cells.size(), i + kMaxCellsDropped); ++k) refs.emplace_back(cells[k].x, cells[k].z);
    fbb.Clear();
    send(wire::ClientBody::CellsDropped, wire::CreateCellsDropped(fbb, fbb.CreateVectorOfStructs(refs)).Union(), true);
  }
}

// The columns generated since the last call, with their hashes as generated, for the
// server to check against its own (docs/PROTOCOL.md, Generation checks).
void ClientConnection::Impl::sendColumnHashes() {
  stream.takeColumnHashes(columnHashes);
  std::vector<wire::ColumnHashRec> recs;
  for (std::size_t i = 0; i < columnHashes.size(); i += kMaxColumnHashes) {
    recs.clear();
    for (std::size_t k = i; k < std::min(columnHashes.size(), i + kMaxColumnHashes); ++k)
      recs.emplace_back(columnHashes[k].column.x, columnHashes[k].column.z, columnHashes[k].hash);
    fbb.Clear();
    send(wire::ClientBody::ColumnHashes, wire::CreateColumnHashes(fbb, fbb.CreateVectorOfStructs(recs)).Union(), true);
  }
  stats.columnsReported += columnHashes.size();
  columnHashes.clear();
}

void ClientConnection::Impl::onStepBatch(const wire::StepBatch& b) {
  // The stream puts steps in order; a step with nothing for us is skipped (at most
  // kStepHeartbeatTicks in a row), so ticks only grow.
  if (b.tick() <= lastTick)
    return fail("StepBatch tick " + std::to_string(b.tick()) + " after " + std::to_string(lastTick) +
                " (steps must follow in order)");
  // Decode the batch into the mirror's step records, then follow it with
  // sim::applyStep: the code the mirror test proves against the server's state.
  sim::StepRecords step;
  step.tick = b.tick();
  // The edits and fire records of the cells we hold, each inside its cell (a hostile
  // server cannot reach past the cell it names), at most kMaxStepEdits in all.
  edits.clear();
  fire.clear();
  stepCells.clear();
  if (b.edits()) {
    const auto where = [&] { return "StepBatch " + std::to_string(b.tick()) + ": "; };
    auto cells = decodeStepEdits(std::span<const std::uint8_t>(b.edits()->data(), b.edits()->size()), stepCells);
    if (!cells) return fail(where() + "edits: " + cells.error().message);
    std::size_t budget = kMaxStepEdits;
    for (const CellEdits& ce : stepCells) {
      if (cellDropped(ce.cell)) continue;  // dropped: the cell comes whole again
      const auto inCell = [&] {  // only when failing: this is the follow path
        return where() + "cell (" + std::to_string(ce.cell.x) + ", " + std::to_string(ce.cell.z) + "): ";
      };
      auto r = decodeEdits(ce.edits, b.tick(), cellEdits, cellFire, budget);
      if (!r) return fail(inCell() + "edits: " + r.error().message);
      for (const sim::EditRecord& e : cellEdits) {
        if (!(sim::cellOf(sim::editBrick(e)) == ce.cell)) return fail(inCell() + "an edit lies outside the cell");
      }
      for (const sim::FireChange& f : cellFire) {
        const sim::BrickCoord brick = sim::brickOf(f.corner);
        if (!(sim::cellOf(brick) == ce.cell) || !mirror->world.bounds().containsBrick(brick))
          return fail(inCell() + "a fire record lies outside the cell or the world");
      }
      budget -= cellEdits.size() + cellFire.size();
      edits.insert(edits.end(), cellEdits.begin(), cellEdits.end());
      fire.insert(fire.end(), cellFire.begin(), cellFire.end());
    }
  }
  step.edits = edits;
  step.fire = fire;
  if (b.weather() && b.weather()->size() > 0) {
    weather = mirror->weather;  // decodeWeather sets the replicated fields only
    auto r = sim::decodeWeather(std::span<const std::uint8_t>(b.weather()->data(), b.weather()->size()), weather);
    if (!r) return fail("StepBatch " + std::to_string(b.tick()) + ": weather: " + r.error().message);
    step.weather = &weather;
  }
  // Membership: joins carry names; the pose arrives with the next Snapshot.
  playerChanges.clear();
  if (b.joined()) {
    for (const wire::PlayerName* pn : *b.joined()) {
      const std::string name = pn->name() ? pn->name()->str() : std::string();
      names[pn->id()] = name;
      sim::PlayerChange& ch = playerChanges.emplace_back();
      ch.kind = sim::PlayerChange::Kind::Joined;
      ch.player.id = sim::PlayerId{pn->id()};
      ch.player.name = sim::PlayerName::from(name);
    }
  }
  if (b.left()) {
    for (std::uint32_t id : *b.left()) {
      if (id == playerId.value) continue;  // never drop our own record on a server's word mid-session
      sim::PlayerChange& ch = playerChanges.emplace_back();
      ch.kind = sim::PlayerChange::Kind::Left;
      ch.player.id = sim::PlayerId{id};
      others.remove(id);
    }
  }
  step.players = playerChanges;
  fireEdits.clear();
  sim::applyStep(*mirror, step, &fireEdits);
  edits.insert(edits.end(), fireEdits.begin(), fireEdits.end());  // the hash tracker follows them too
  if (b.events()) {
    for (const wire::EventRec* rec : *b.events()) {
      sim::Event e;
      if (!fromWire(*rec, e)) return fail("StepBatch " + std::to_string(b.tick()) + ": bad event record");
      if (predicted.echoes(e, playerId)) continue;  // played when predicted
      if (auto* j = std::get_if<sim::PlayerJoinedEvent>(&e)) {
        auto it = names.find(j->player.value);
        if (it != names.end()) j->name = sim::PlayerName::from(it->second);
      }
      pushEvent(e);
    }
  }
  if (b.chat()) {
    for (const wire::ChatLine* line : *b.chat()) {
      sim::ChatEvent c;
      c.from = sim::PlayerId{line->player()};
      c.text = sim::ChatText::from(line->text() ? line->text()->string_view() : std::string_view());
      pushEvent(c);
    }
  }
  lastTick = b.tick();
  ++stats.stepsApplied;
  checkHashes(b);
  stepCells.clear();  // its spans point into b
}

void ClientConnection::Impl::pushEvent(const sim::Event& e) {
  if (events.size() >= kMaxQueuedEvents) {
    ++eventsDropped;
    return;
  }
  events.push_back(e);
}

// The hash of each cell the batch's edits touched, against ours after applying them.
void ClientConnection::Impl::checkHashes(const wire::StepBatch& b) {
  tracker.update(mirror->world, edits);
  ++stats.hashChecks;
  for (const CellEdits& ce : stepCells) {
    if (cellDropped(ce.cell)) continue;
    const std::uint64_t h = tracker.cellHash(mirror->world, ce.cell);
    if (h != ce.hash) return reportDesync(b.tick(), ce.cell, h, ce.hash);
  }
}

void ClientConnection::Impl::reportDesync(std::uint64_t tick, sim::CellCoord cell, std::uint64_t ours,
                                          std::uint64_t theirs) {
  ++stats.desyncCount;
  if (stats.desyncs.size() >= kMaxDesyncsKept) return;
  Desync d;
  d.tick = tick;
  d.cell = cell;
  d.what = "cell (" + std::to_string(cell.x) + "," + std::to_string(cell.z) + ") hash " + hex64(ours) + " != server " +
           hex64(theirs);
  stats.desyncs.push_back(std::move(d));
}

bool ClientConnection::Impl::decodeWater(sim::CellCoord cell, std::span<const std::uint8_t> records,
                                        std::vector<sim::WaterChange>& out) {
  // Records are relative to the named cell, so they cannot land in another one.
  if (auto r = decodeCellWater(records, cell, out); !r) {
    fail("water of cell (" + std::to_string(cell.x) + ", " + std::to_string(cell.z) + "): " + r.error().message);
    return false;
  }
  return true;
}

void ClientConnection::Impl::onCellWater(sim::CellCoord cell, std::vector<sim::WaterChange>& records) {
  if (cellDropped(cell)) return;  // a dropped cell follows nothing until it comes whole again
  const sim::WorldBounds& bounds = mirror->world.bounds();
  std::erase_if(records, [&](const sim::WaterChange& w) { return !bounds.containsBrick(sim::brickOf(w.voxel)); });
  sim::applyCellState(*mirror, lastTick, cell, false, records, {});
}

void ClientConnection::Impl::onCellState(const wire::CellState& c) {
  if (phase != ClientPhase::Playing) return;
  const sim::CellCoord cell{c.cell_x(), c.cell_z()};
  droppedCells.erase(sim::cellKey(cell));  // it comes whole: followed again
  const sim::WorldBounds& bounds = mirror->world.bounds();
  auto inside = [&](sim::VoxelCoord v) { return bounds.containsBrick(sim::brickOf(v)); };
  if (!decodeWater(cell, c.water() ? std::span<const std::uint8_t>(c.water()->data(), c.water()->size())
                                   : std::span<const std::uint8_t>(),
                   water))
    return;
  std::erase_if(water, [&](const sim::WaterChange& w) { return !inside(w.voxel); });
  fire.clear();
  if (c.fire()) {
    for (const wire::FireRec* r : *c.fire()) {
      const sim::FireChange f = fromWire(*r, cell);
      if (inside(f.corner)) fire.push_back(f);
    }
  }
  // The cell's changed bricks: every other brick of the cell is as generated.
  const std::string where = "CellState (" + std::to_string(cell.x) + ", " + std::to_string(cell.z) + "): bricks: ";
  cellBricks.clear();
  if (c.bricks() && c.bricks()->size() > 0) {
    auto save = sim::decodeSave(std::span<const std::uint8_t>(c.bricks()->data(), c.bricks()->size()),
                                kMaxCellBricksBytes);
    if (!save) return fail(where + save.error().message);
    if (auto r = sim::checkSaveIdentity(save->header, {mirror->sceneHash, mirror->seed, sim::kGeneratorVersion}); !r)
      return fail(where + r.error().message);
    if (!(save->bounds.minBrick == bounds.minBrick) || !(save->bounds.maxBrick == bounds.maxBrick) ||
        !save->blobs.empty())
      return fail(where + "not this world's bounds, or blobs beside the bricks");
    cellBricks = std::move(save->bricks);
  }
  writtenBricks.clear();
  if (auto r = sim::applyCellBricks(mirror->world, cell, cellBricks, writtenBricks); !r)
    return fail(where + r.error().message);
  cellEdits.clear();
  for (const sim::BrickCoord b : writtenBricks)
    cellEdits.push_back({b.x, b.y, b.z, sim::kAir, sim::kAir, sim::EditRecord::Kind::BrickFill});
  tracker.update(mirror->world, cellEdits);
  sim::applyCellState(*mirror, c.tick(), cell, true, water, fire);
  ++stats.cellChecks;
  const std::uint64_t h = tracker.cellHash(mirror->world, cell);
  if (h != c.hash()) reportDesync(c.tick(), cell, h, c.hash());
}

void ClientConnection::Impl::onSnapshot(std::span<const std::uint8_t> bytes, double nowMs) {
  if (!joined()) return;  // overtook a Welcome being resent (unreliable): dropped, the next one follows
  const sim::Result<SnapshotMessage> decoded = decodeSnapshot(bytes, snapshotGone);
  if (!decoded) return fail(decoded.error().message);
  const SnapshotMessage& s = *decoded;
  if (s.sequence <= newestSnapshot) return;  // sequenced channel; be safe anyway
  if (!s.sounds.empty()) {
    if (auto r = decodeEventRecords(s.sounds, soundRecs, kMaxSoundsPerSnapshot); !r)
      return fail("Snapshot: " + r.error().message);
    for (const wire::EventRec& rec : soundRecs) {
      sim::Event e;
      if (fromWire(rec, e)) pushEvent(e);
    }
  }
  // Rebuild baseline + delta into the ring slot of this sequence.
  SnapEntry& next = scratchSnap;
  next.players.clear();
  next.animals.clear();
  if (s.baseline != 0) {
    const SnapEntry& base = ring[s.baseline % kSnapshotRing];
    if (base.sequence != s.baseline) return;  // baseline rolled off: wait for a later one
    next.players = base.players;
    next.animals = base.animals;
  }
  const sim::Result<sim::PlayerState> own = ownRing.take(s);
  if (!own) return fail("Snapshot: " + own.error().message);
  if (auto r = applyDelta(next.players, s.players, s.playersGone); !r) return fail("Snapshot: " + r.error().message);
  if (auto r = applyDelta(next.animals, s.animals, s.animalsGone); !r) return fail("Snapshot: " + r.error().message);
  std::erase_if(next.players, [this](const wire::PlayerPoseRec& r) { return r.id() == playerId.value; });
  next.sequence = s.sequence;
  next.tick = s.tick;
  std::swap(ring[s.sequence % kSnapshotRing], next);
  newestSnapshot = s.sequence;
  ++stats.snapshotsReceived;
  if (phase != ClientPhase::Playing) return;  // kept as a baseline; the mirror is not ready

  const SnapEntry& snap = ring[s.sequence % kSnapshotRing];
  // Others: interpolation and the mirror's records (scripts steer by them).
  for (std::uint32_t id : others.ids()) {
    if (!std::binary_search(snap.players.begin(), snap.players.end(), id,
                            [](auto a, auto b) { return idOf(a) < idOf(b); }))
      others.remove(id);
  }
  for (const wire::PlayerPoseRec& r : snap.players) {
    others.push(r.id(), PoseSample{s.tick, {r.px(), r.py(), r.pz()}, r.yaw(), r.pitch()}, nowMs);
    if (const sim::Player* p = mirror->findPlayer(sim::PlayerId{r.id()})) setMotion(*p, poseState(r, p->motion));
  }
  for (std::uint32_t id : animals.ids()) {
    if (!std::binary_search(snap.animals.begin(), snap.animals.end(), id,
                            [](auto a, auto b) { return idOf(a) < idOf(b); }))
    {
      animals.remove(id);
      animalSpecies.erase(id);
    }
  }
  for (const wire::AnimalRec& r : snap.animals) {
    animals.push(r.id(), PoseSample{s.tick, {r.px(), r.py(), r.pz()}, r.yaw(), 0}, nowMs);
    animalSpecies[r.id()] = r.species();
  }

  // Own: reconcile against the server's state for the input it acknowledged.
  const sim::PlayerState& server = *own;
  if (server.lastInput > lastInputSent) return fail("Snapshot acknowledges input " + std::to_string(server.lastInput) +
                                                    " never sent (newest " + std::to_string(lastInputSent) + ")");
  const Clock::time_point reconcileAt = Clock::now();
  const std::uint64_t teleports = predictor.stats().teleports;
  predictor.reconcile(server, mirror->world, mirror->lut);
  // A teleport is timed until the ground around it is present.
  if (predictor.stats().teleports != teleports) stream.teleported(reconcileAt);
  syncOwn();
  if (!stream.streaming()) stream.noteTeleportPlayable(stats);
}

std::uint32_t ClientConnection::Impl::idOf(std::uint32_t id) { return id; }
std::uint32_t ClientConnection::Impl::idOf(const wire::PlayerPoseRec& r) { return r.id(); }
std::uint32_t ClientConnection::Impl::idOf(const wire::AnimalRec& r) { return r.id(); }

void ClientConnection::Impl::syncOwn() {
  if (!mirror) return;
  if (const sim::Player* p = mirror->findPlayer(playerId)) setMotion(*p, predictor.state());
}

// A player's motion from a snapshot or the prediction, as the mirror's Updated
// record (scripts and the HUD read the mirror's players).
void ClientConnection::Impl::setMotion(const sim::Player& player, const sim::PlayerState& motion) {
  sim::PlayerChange ch{sim::PlayerChange::Kind::Updated, player};
  ch.player.motion = motion;
  sim::applyPlayerChanges(mirror->players, std::span<const sim::PlayerChange>(&ch, 1));
}

void ClientConnection::Impl::onReject(const wire::Reject& r) {
  const auto code = static_cast<RejectCode>(r.code());
  fail(std::string("server rejected us: ") + rejectCodeName(code) + (r.text() ? ": " + r.text()->str() : std::string()));
}

/// What became of our actions (to us alone, in the stream after the StepBatch of the
/// step that applied or refused them, so the mirror holds that step): settles their
/// predictions; refusals go to the events, for the HUD. A sequence we never sent is a
/// server bug or an attack; one not pending (chat, or answered) is nothing to do.
void ClientConnection::Impl::onActionResults(const wire::ActionResults& r) {
  if (!r.results()) return;
  for (const wire::ActionResultRec* rec : *r.results()) {
    if (!validActionResult(*rec) || rec->sequence() == 0 || rec->sequence() > lastActionSent)
      return fail("ActionResults " + std::to_string(r.tick()) + ": action " + std::to_string(rec->sequence()) +
                  " was never sent, or a bad record");
    const bool applied = rec->outcome() == kActionApplied;
    predicted.settle(rec->sequence(), applied, mirror->world, nowMs);
    std::erase_if(unanswered, [&](const internal::UnansweredAction& a) { return a.sequence == rec->sequence(); });
    if (applied) continue;
    pushEvent(sim::CommandRejectedEvent{playerId, rec->sequence(), rec->command(),
                                        static_cast<sim::RejectReason>(rec->reason())});
  }
}

}  // namespace loam::net
