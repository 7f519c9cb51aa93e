#include "net/host/join_stream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "net/host_log.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/gen/generator_version.h"
#include "sim/world/brick_store.h"

namespace loam::net::host {

JoinStreams::~JoinStreams() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void JoinStreams::start() {
  bounds_ = core_.state.world.bounds();
  worker_ = std::thread([this] { work(); });
}

void JoinStreams::begin(Session& s) {
  const sim::SimState& state = core_.state;
  s.joinStreaming = true;
  s.joinState.reset();
  s.joinSent = s.joinAcked = 0;
  s.progressTick = state.tick;
  if (lastJoinTick_ == state.tick) return;  // this step's state is already on its way
  lastJoinTick_ = state.tick;
  ++encodings_;
  Job job{{}, sim::copyState(state, false)};
  job.join.identity = {state.sceneHash, state.seed, sim::kGeneratorVersion};
  job.join.tick = state.tick;
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void JoinStreams::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    auto out = std::make_shared<JoinState>();
    out->tick = job.join.tick;
    sim::SaveData data;
    data.header = job.join;
    data.bounds = bounds_;
    data.blobs = sim::mirrorBlobs(job.state);
    if (auto bytes = sim::encodeSave(data)) {
      out->bytes = std::move(*bytes);
    } else {
      out->error = bytes.error().message;
    }
    std::lock_guard lock(mutex_);
    done_.push_back(std::move(out));
  }
}

void JoinStreams::send() {
  {
    std::vector<std::shared_ptr<const JoinState>> ready;
    {
      std::lock_guard lock(mutex_);
      ready.swap(done_);
    }
    for (const auto& state : ready) {
      --encodings_;
      for (Session& s : core_.sessions) {
        if (!s.joinStreaming || s.joinState || s.joinTick != state->tick) continue;
        if (!state->error.empty()) {
          core_.reject(s, RejectCode::ShuttingDown, "could not build the join state: " + state->error);
        } else if (state->bytes.size() > kMaxJoinStateBytes) {
          core_.reject(s, RejectCode::ShuttingDown,
                       "join state of " + std::to_string(state->bytes.size()) + " bytes is over the protocol's limit");
        } else {
          s.joinState = state;
          s.progressTick = core_.state.tick;  // the stream's deadline starts now
        }
      }
    }
  }
  for (Session& s : core_.sessions) {
    if (!s.joinStreaming || !s.joinState || s.phase != Phase::Playing) continue;
    const JoinState& state = *s.joinState;
    const auto total = static_cast<std::uint32_t>(state.bytes.size());
    while (s.joinSent < total && s.joinSent - s.joinAcked < kJoinWindowBytes) {
      const std::uint32_t n = std::min(kJoinChunkBytes, total - s.joinSent);
      flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
      fbb.Clear();
      auto bytes = fbb.CreateVector(state.bytes.data() + s.joinSent, n);
      auto chunk = wire::CreateJoinChunk(fbb, state.tick, s.joinSent, total, bytes);
      fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::JoinChunk, chunk.Union()));
      // A save: zstd inside already. Not charged to the snapshot budget.
      ENetPacket* p = core_.packetFromBuilder(ENET_PACKET_FLAG_RELIABLE, false);
      if (!p || !core_.send(s, kChannelReliable, p, wire::ServerBody::JoinChunk, false)) {
        if (p) enet_packet_destroy(p);
        core_.reject(s, RejectCode::ShuttingDown, "could not queue the join stream");
        break;
      }
      s.joinSent += n;
    }
  }
}

bool JoinStreams::acknowledge(HostCore& core, Session& s, std::uint32_t receivedBytes) {
  if (!s.joinStreaming) return true;  // a late or repeated acknowledgement
  if (receivedBytes > s.joinSent) return false;
  if (receivedBytes <= s.joinAcked) return true;
  s.joinAcked = receivedBytes;
  s.progressTick = core.state.tick;
  if (!s.joinState || s.joinAcked != s.joinState->bytes.size()) return true;
  hostLog("peer %zu (player %u): join stream of %u bytes done", core.indexOf(s), s.id.value, s.joinAcked);
  clear(s);
  core.countJoinIfDone(s);
  return true;
}

std::uint64_t JoinStreams::inFlight(const Session& s) noexcept {
  return s.joinStreaming ? std::uint64_t{s.joinSent - s.joinAcked} : 0;
}

void JoinStreams::clear(Session& s) noexcept {
  s.joinStreaming = false;
  s.joinState.reset();
  s.joinSent = s.joinAcked = 0;
}

}  // namespace loam::net::host
