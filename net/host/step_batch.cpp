#include "net/host/step_batch.h"

#include <algorithm>
#include <compare>
#include <optional>
#include <variant>

#include "net/edit_codec.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/systems/weather.h"

namespace loam::net::host {

namespace {

/// Where an event happened, for those that happened somewhere.
std::optional<sim::VoxelCoord> placeOf(const sim::Event& e) noexcept {
  return std::visit(
      [](const auto& v) -> std::optional<sim::VoxelCoord> {
        if constexpr (requires { v.position; }) {
          return v.position;
        } else {
          return std::nullopt;
        }
      },
      e);
}

}  // namespace

void StepBatchSender::send(const sim::StepOutput& out, const CellSync& cells, Snapshots& snapshots) {
  tick_ = core_.state.tick;
  eventRecs_.clear();
  placedEvents_.clear();
  rejected_.clear();
  chat_.clear();
  joined_.clear();
  for (const sim::Event& e : out.events) {
    if (const auto* c = std::get_if<sim::ChatEvent>(&e)) {
      chat_.push_back(c);
      continue;
    }
    wire::EventRec rec;
    if (!toWire(e, rec)) continue;
    // A player's footsteps, landings and splashes are only heard nearby: they go in
    // the snapshots of clients within hearing range, not to everyone (in a crowd of
    // 300 they would be most of every StepBatch).
    if (Snapshots::isMovementSound(e)) {
      snapshots.addSound(tick_, rec);
    } else if (const auto* r = std::get_if<sim::CommandRejectedEvent>(&e)) {
      rejected_.push_back(r);
    } else if (const std::optional<sim::VoxelCoord> at = placeOf(e)) {
      placedEvents_.push_back({sim::cellOf(sim::brickOf(*at)), 0, rec});
    } else {
      eventRecs_.push_back(rec);
    }
  }
  // Events that happened somewhere go to the peers whose reach holds their cell, as
  // the cell's edits do: a dig 2 km away is nothing to hear or see.
  eventCells_.clear();
  for (const PlacedEvent& e : placedEvents_) eventCells_.push_back(e.cell);
  std::sort(eventCells_.begin(), eventCells_.end());
  eventCells_.erase(std::unique(eventCells_.begin(), eventCells_.end()), eventCells_.end());
  for (PlacedEvent& e : placedEvents_) {
    const auto c = std::lower_bound(eventCells_.begin(), eventCells_.end(), e.cell);
    e.cellIndex = static_cast<std::uint32_t>(c - eventCells_.begin());
  }
  heardCells_.resize(core_.sessions.size());
  for (Session& s : core_.sessions) {
    std::vector<std::uint32_t>& heard = heardCells_[core_.indexOf(s)];
    heard.clear();
    if (s.phase != Phase::Playing || !s.hasPos) continue;
    for (std::uint32_t c = 0; c < eventCells_.size(); ++c) {
      if (CellSync::inReach(s, eventCells_[c])) heard.push_back(c);
    }
  }
  leftIds_.clear();
  for (const sim::PlayerChange& c : out.players) {
    if (c.kind == sim::PlayerChange::Kind::Joined) joined_.push_back(&c.player);
    if (c.kind == sim::PlayerChange::Kind::Left) leftIds_.push_back(c.player.id.value);
  }
  weatherBytes_.clear();
  if (out.weatherChanged) sim::encodeWeather(out.weather, weatherBytes_);
  // One encoding per distinct set of edit groups.
  order_.clear();
  for (Session& s : core_.sessions) {
    if (s.phase == Phase::Playing) order_.push_back(static_cast<std::uint32_t>(core_.indexOf(s)));
  }
  // A peer's view: its edit groups, then its event cells.
  const auto compareViews = [&](std::uint32_t a, std::uint32_t b) {
    const auto ga = cells.groupsOf(a), gb = cells.groupsOf(b);
    const auto byGroups = std::lexicographical_compare_three_way(ga.begin(), ga.end(), gb.begin(), gb.end());
    return byGroups != 0 ? byGroups : heardCells_[a] <=> heardCells_[b];
  };
  std::stable_sort(order_.begin(), order_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return compareViews(a, b) < 0; });
  // What every client gets; a client whose cells the step did not touch either, and
  // nothing at all means its StepBatch is skipped (up to kStepHeartbeatTicks).
  const bool shared = !eventRecs_.empty() || !chat_.empty() || !joined_.empty() || !leftIds_.empty() ||
                      !weatherBytes_.empty();
  for (std::size_t i = 0; i < order_.size();) {
    const auto chosen = cells.groupsOf(order_[i]);
    const std::vector<std::uint32_t>& heard = heardCells_[order_[i]];
    std::size_t end = i + 1;
    while (end < order_.size() && compareViews(order_[i], order_[end]) == 0) ++end;
    SharedMessage message;
    for (std::size_t k = i; k < end; ++k) {
      Session& s = core_.sessions[order_[k]];
      if (!shared && chosen.empty() && heard.empty() && s.stream.lastStepTick + kStepHeartbeatTicks > tick_)
        continue;
      if (!message) {
        build(cells.editGroups(), chosen, heard);
        message = core_.messageFromBuilder();
      }
      queueMessage(s, wire::ServerBody::StepBatch, message);
      s.stream.lastStepTick = tick_;
    }
    i = end;
  }
  queueActionResults();
}

void StepBatchSender::build(std::span<const EditGroup> groups, std::span<const std::uint32_t> chosen,
                            std::span<const std::uint32_t> heard) {
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  fbb.Clear();
  // The step's unplaced events, then the placed ones in heard cells, in step order.
  events_.assign(eventRecs_.begin(), eventRecs_.end());
  for (const PlacedEvent& e : placedEvents_) {
    if (std::binary_search(heard.begin(), heard.end(), e.cellIndex)) events_.push_back(e.rec);
  }
  chatOffsets_.clear();
  for (const sim::ChatEvent* c : chat_)
    chatOffsets_.push_back(
        wire::CreateChatLine(fbb, c->from.value, fbb.CreateString(c->text.bytes.data(), c->text.length)));
  joinedOffsets_.clear();
  for (const sim::Player* p : joined_)
    joinedOffsets_.push_back(
        wire::CreatePlayerName(fbb, p->id.value, fbb.CreateString(p->name.bytes.data(), p->name.length)));
  cellEdits_.clear();
  for (std::uint32_t g : chosen) cellEdits_.push_back(CellEdits{groups[g].cell, groups[g].hash, groups[g].bytes});
  // Compressed with the rest of the message (HostCore::messageFromBuilder).
  if (!cellEdits_.empty()) encodeStepEdits(cellEdits_, editBytes_);
  // Empty lists are left out (absent fields cost nothing; an idle step is small).
  const auto events = events_.empty() ? 0 : fbb.CreateVectorOfStructs(events_);
  const auto chat = chatOffsets_.empty() ? 0 : fbb.CreateVector(chatOffsets_);
  const auto joined = joinedOffsets_.empty() ? 0 : fbb.CreateVector(joinedOffsets_);
  const auto left = leftIds_.empty() ? 0 : fbb.CreateVector(leftIds_);
  const auto weather = weatherBytes_.empty() ? 0 : fbb.CreateVector(weatherBytes_);
  const auto cellEdits = cellEdits_.empty() ? 0 : fbb.CreateVector(editBytes_);
  auto b = wire::CreateStepBatch(fbb, tick_, events, chat, joined, left, weather, cellEdits);
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::StepBatch, b.Union()));
}

void StepBatchSender::queueActionResults() {
  const std::uint64_t T = core_.state.tick;
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  for (Session& s : core_.sessions) {
    if (s.phase != Phase::Playing || (s.issued.empty() && s.refused.empty())) {
      s.refused.clear();
      continue;
    }
    results_.clear();
    for (const IssuedAction& a : s.issued) {
      // The step refuses by (player, sequence = after_input, command index), and a
      // session issues one action per pair a tick: the match is exact.
      const auto refusal = std::ranges::find_if(rejected_, [&](const sim::CommandRejectedEvent* r) {
        return r->player == s.id && r->sequence == a.afterInput && r->commandIndex == a.command;
      });
      const bool refused = refusal != rejected_.end();
      results_.emplace_back(a.sequence, refused ? kActionRejected : kActionApplied,
                            refused ? static_cast<std::uint8_t>((*refusal)->reason) : std::uint8_t{0}, a.command);
    }
    // Refused on arrival: they came after every action still queued or issued.
    for (const IssuedAction& a : s.refused)
      results_.emplace_back(a.sequence, kActionRejected, static_cast<std::uint8_t>(sim::RejectReason::RateLimited),
                            a.command);
    s.refused.clear();
    fbb.Clear();
    const auto recs = fbb.CreateVectorOfStructs(results_);
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::ActionResults,
                                         wire::CreateActionResults(fbb, T, recs).Union()));
    const std::uint8_t* p = fbb.GetBufferPointer();
    queueMessage(s, wire::ServerBody::ActionResults,
                 std::make_shared<const std::vector<std::uint8_t>>(p, p + fbb.GetSize()));
  }
}

}  // namespace loam::net::host
