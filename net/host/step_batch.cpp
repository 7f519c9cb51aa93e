#include "net/host/step_batch.h"

#include <variant>

#include "net/edit_codec.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/systems/weather.h"

namespace loam::net::host {

void StepBatchSender::send(const sim::StepOutput& out, const sim::WorldHashTracker& tracker, Snapshots& snapshots) {
  const std::uint64_t T = core_.state.tick;
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  encodeEdits(out.edits, editBytes_);
  eventRecs_.clear();
  rejected_.clear();
  fbb.Clear();
  chat_.clear();
  joined_.clear();
  for (const sim::Event& e : out.events) {
    if (const auto* c = std::get_if<sim::ChatEvent>(&e)) {
      chat_.push_back(
          wire::CreateChatLine(fbb, c->from.value, fbb.CreateString(c->text.bytes.data(), c->text.length)));
      continue;
    }
    wire::EventRec rec;
    if (!toWire(e, rec)) continue;
    // A player's footsteps, landings and splashes are only heard nearby: they go in
    // the snapshots of clients within hearing range, not to everyone (in a crowd of
    // 300 they would be most of every StepBatch).
    if (Snapshots::isMovementSound(e)) {
      snapshots.addSound(T, rec);
    } else if (std::holds_alternative<sim::CommandRejectedEvent>(e)) {
      rejected_.push_back(rec);
    } else {
      eventRecs_.push_back(rec);
    }
  }
  leftIds_.clear();
  for (const sim::PlayerChange& c : out.players) {
    if (c.kind == sim::PlayerChange::Kind::Joined) {
      joined_.push_back(wire::CreatePlayerName(fbb, c.player.id.value,
                                               fbb.CreateString(c.player.name.bytes.data(), c.player.name.length)));
    } else if (c.kind == sim::PlayerChange::Kind::Left) {
      leftIds_.push_back(c.player.id.value);
    }
  }
  weatherBytes_.clear();
  if (out.weatherChanged) sim::encodeWeather(out.weather, weatherBytes_);
  cellRecs_.clear();
  for (const sim::CellHash& c : tracker.touchedCells()) cellRecs_.emplace_back(c.cell.x, c.cell.z, c.hash);
  auto b = wire::CreateStepBatch(fbb, T, fbb.CreateVector(editBytes_), fbb.CreateVectorOfStructs(eventRecs_),
                                 fbb.CreateVector(chat_), fbb.CreateVector(joined_), fbb.CreateVector(leftIds_),
                                 fbb.CreateVector(weatherBytes_), tracker.worldHash(),
                                 fbb.CreateVectorOfStructs(cellRecs_));
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::StepBatch, b.Union()));
  ENetPacket* packet = core_.packetFromBuilder(ENET_PACKET_FLAG_RELIABLE);
  if (!packet) return;
  for (Session& s : core_.sessions) {
    if (s.phase == Phase::Playing) core_.send(s, kChannelReliable, packet, wire::ServerBody::StepBatch);
  }
  HostCore::releaseIfUnsent(packet);
  sendRejections();
}

void StepBatchSender::sendRejections() {
  const std::uint64_t T = core_.state.tick;
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  for (std::size_t i = 0; i < rejected_.size();) {
    const std::uint32_t player = rejected_[i].actor();
    std::size_t end = i;
    while (end < rejected_.size() && rejected_[end].actor() == player) ++end;
    for (Session& s : core_.sessions) {
      if (s.phase != Phase::Playing || s.id.value != player) continue;
      fbb.Clear();
      const auto recs = fbb.CreateVectorOfStructs(rejected_.data() + i, end - i);
      fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Rejections, wire::CreateRejections(fbb, T, recs).Union()));
      core_.sendOwn(s, kChannelReliable, ENET_PACKET_FLAG_RELIABLE, wire::ServerBody::Rejections);
      break;
    }
    i = end;
  }
}

}  // namespace loam::net::host
