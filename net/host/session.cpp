#include "net/host/session.h"

#include <algorithm>
#include <utility>

#include "net/host_log.h"

namespace loam::net::host {

const char* phaseName(Phase p) noexcept {
  switch (p) {
    case Phase::Free: return "free";
    case Phase::Connected: return "connected";
    case Phase::Challenged: return "challenged";
    case Phase::Welcomed: return "welcomed";
    case Phase::Joining: return "joining";
    case Phase::Playing: return "playing";
    case Phase::Rejected: return "rejected";
  }
  return "?";
}

bool legalTransition(Phase from, Phase to) noexcept {
  switch (to) {
    case Phase::Free: return from != Phase::Free;
    case Phase::Connected: return from == Phase::Free;
    case Phase::Challenged: return from == Phase::Connected;
    case Phase::Welcomed: return from == Phase::Connected || from == Phase::Challenged;
    case Phase::Joining: return from == Phase::Welcomed;
    case Phase::Playing: return from == Phase::Joining;
    case Phase::Rejected: return from != Phase::Free && from != Phase::Rejected;
  }
  return false;
}

void Session::reset() noexcept {
  peer = nullptr;
  id = {};
  name = {};
  wantsWorld = true;
  joinIssued = cellHashesSent = false;
  phaseTick = joinTick = cellsTick = 0;
  reachMetres = 0;
  badMessages = 0;
  messages = {};
  inputs.clear();
  newestInput = fedInput = newestAction = 0;
  inputTokens = kInputBurstTicks;
  lateTokens = 0;
  inputLimited = false;
  inputLimitedTick = 0;
  actions.clear();
  issued.clear();
  refused.clear();
  columnChecks.clear();
  stream.reset();
  surfaceSent = 0;
  tokens = 0;
  hasPos = false;
  pos = {};
  snapshotSeq = ackedSeq = snapshotCount = 0;
  snapshotTick = streamSentTick = 0;
  for (Manifest& m : ring) {
    m.seq = 0;
    m.players.clear();
    m.animals.clear();
  }
  animalView.clear();
  animalViewNext.clear();
  cellTicks.clear();
  catchUpPos = {};
  catchUpDue = true;
  cellsBehind = 0;
  hasKey = claimOnJoin = false;
  publicKey = {};
  authNonce = {};
}

RateVerdict countMessage(Session& s, std::int64_t nowUs) noexcept {
  MessageBucket& b = s.messages;
  constexpr std::int64_t kFullUs = kMessageBurst * kMessageCostUs;
  b.creditUs = b.creditUs < 0 ? kFullUs : std::min(kFullUs, b.creditUs + std::max<std::int64_t>(0, nowUs - b.lastUs));
  b.lastUs = nowUs;
  if (b.floodSinceUs >= 0 && nowUs - b.lastDropUs > kFloodGapUs) {
    b.floodSinceUs = -1;  // a second without a drop ends the flood
    b.floodReported = false;
  }
  if (b.creditUs >= kMessageCostUs) {
    b.creditUs -= kMessageCostUs;
    return RateVerdict::Within;
  }
  if (b.floodSinceUs < 0) b.floodSinceUs = nowUs;
  b.lastDropUs = nowUs;
  if (b.floodReported || nowUs - b.floodSinceUs < std::int64_t{kFloodSecondsToReject} * 1'000'000) {
    return RateVerdict::Dropped;
  }
  b.floodReported = true;
  return RateVerdict::Flooding;
}

std::uint64_t appendSessionCommands(std::span<Session> sessions, std::uint64_t tick, std::uint32_t perTick,
                                    std::vector<sim::Command>& commands) {
  std::uint64_t overRate = 0;
  for (Session& s : sessions) {
    if (!inGame(s.phase)) continue;
    if (!s.joinIssued) {
      commands.push_back({s.id, 0, sim::JoinCommand{s.name}});
      s.joinIssued = true;
    }
    // One token per tick. A tick the player stands still for want of input, once it
    // has played, is a tick its client owes: banked as late credit when the burst is
    // full, so the catch-up (inputs it sends late, all at once) is not over the rate.
    // A player with input waiting is never owed, so a fast sender earns none. Before
    // its first input the player has not started (a join), and is owed nothing.
    if (s.inputs.empty() && s.fedInput > 0 && s.inputTokens == kInputBurstTicks) {
      s.lateTokens = std::min(s.lateTokens + 1, kInputLateTicks);
    }
    // A client plays once its join snapshot is whole, which can be a round trip
    // before this server counts it in game, and inputs before that are ignored: its
    // first message then carries every input since (at most kMaxInputsPerMessage).
    // That is the join's catch-up, owed like a stall's; it can happen once a join.
    if (s.fedInput == 0 && s.inputs.count > static_cast<std::size_t>(kInputBurstTicks)) {
      s.lateTokens = std::max(s.lateTokens, static_cast<std::int32_t>(s.inputs.count) - kInputBurstTicks);
    }
    s.inputTokens = std::min(s.inputTokens + 1, kInputBurstTicks);
    // Inputs first in the span: an action with sequence == after_input ties with
    // that input and the span position puts it after (sim/step/step.h ordering).
    for (std::uint32_t n = 0; n < perTick && !s.inputs.empty() && s.inputTokens + s.lateTokens > 0; ++n) {
      const sim::PlayerInput& in = s.inputs.front();
      commands.push_back({s.id, in.sequence, sim::InputCommand{in}});
      s.fedInput = std::max(s.fedInput, in.sequence);
      s.inputs.pop();
      // The burst first: it refills every tick, the late credit only standing idle.
      if (s.inputTokens > 0) --s.inputTokens;
      else --s.lateTokens;
    }
    // The oldest go: their moment has passed, and the client reconciles to what the
    // server applied. Their actions are due as if they had been fed. Inputs the late
    // credit will pay for are a catch-up still going in, not over the rate.
    std::uint64_t dropped = 0;
    for (; s.inputs.count > kMaxInputBacklog + static_cast<std::size_t>(s.lateTokens); ++dropped) {
      s.fedInput = std::max(s.fedInput, s.inputs.front().sequence);
      s.inputs.pop();
    }
    if (dropped > 0) {
      overRate += dropped;
      s.inputLimitedTick = tick;
      if (!s.inputLimited) {
        s.inputLimited = true;
        hostLog("player %u: inputs faster than the tick rate; the excess is dropped", s.id.value);
      }
    } else if (s.inputLimited && tick - s.inputLimitedTick > kInputLimitQuietTicks) {
      s.inputLimited = false;
    }
  }
  for (Session& s : sessions) {
    s.issued.clear();
    if (!inGame(s.phase) || s.actions.empty()) continue;
    // In arrival order, which is the client's order (Inputs.actions are queued in
    // sequence; a standalone Action comes on the ordered reliable channel). An action
    // due later than the one before it never is due before it, so stopping at the
    // first that waits keeps the order.
    std::size_t n = 0;
    for (; n < s.actions.size(); ++n) {
      const PendingAction& a = s.actions[n];
      const bool due = a.afterInput <= s.fedInput || (s.inputs.empty() && a.afterInput <= s.newestInput) ||
                       tick - a.arrivalTick >= kActionWaitTicks;
      const auto command = static_cast<std::uint8_t>(a.body.index());
      const bool twin = std::ranges::any_of(
          s.issued, [&](const IssuedAction& i) { return i.afterInput == a.afterInput && i.command == command; });
      if (!due || twin) break;
      commands.push_back({s.id, a.afterInput, a.body});
      s.issued.push_back({a.sequence, a.afterInput, command});
    }
    s.actions.erase(s.actions.begin(), s.actions.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return overRate;
}

void creditSkippedTicks(std::span<Session> sessions, std::uint64_t ticks) noexcept {
  const auto credit = static_cast<std::int32_t>(std::min<std::uint64_t>(ticks, kInputLateTicks));
  for (Session& s : sessions) {
    if (inGame(s.phase) && s.fedInput > 0) s.lateTokens = std::min(s.lateTokens + credit, kInputLateTicks);
  }
}

}  // namespace loam::net::host
