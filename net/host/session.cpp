#include "net/host/session.h"

#include <algorithm>
#include <utility>

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
  phaseTick = joinTick = 0;
  badMessages = 0;
  rateWindow = -1;
  rateCount = floodStreak = 0;
  windowFlooded = false;
  inputs.clear();
  newestInput = fedInput = 0;
  actions.clear();
  tokens = 0;
  hasPos = false;
  pos = {};
  snapshotSeq = ackedSeq = snapshotCount = 0;
  for (Manifest& m : ring) {
    m.seq = 0;
    m.players.clear();
    m.animals.clear();
  }
  animalView.clear();
  animalViewNext.clear();
  cellTicks.clear();
  hasKey = claimOnJoin = false;
  publicKey = {};
  authNonce = {};
}

RateVerdict countMessage(Session& s, std::int64_t second) noexcept {
  if (second != s.rateWindow) {
    const bool consecutive = second == s.rateWindow + 1;
    s.floodStreak = (s.windowFlooded && consecutive) ? s.floodStreak + 1 : 0;
    s.rateWindow = second;
    s.rateCount = 0;
    s.windowFlooded = false;
  }
  if (++s.rateCount <= kMaxMessagesPerSecond) return RateVerdict::Within;
  if (s.windowFlooded) return RateVerdict::Dropped;
  s.windowFlooded = true;
  return s.floodStreak + 1 >= kFloodSecondsToReject ? RateVerdict::Flooding : RateVerdict::Dropped;
}

void appendSessionCommands(std::span<Session> sessions, std::uint64_t tick, std::uint32_t perTick,
                           std::vector<sim::Command>& commands) {
  for (Session& s : sessions) {
    if (!inGame(s.phase)) continue;
    if (!s.joinIssued) {
      commands.push_back({s.id, 0, sim::JoinCommand{s.name}});
      s.joinIssued = true;
    }
    // Inputs first in the span: an action with sequence == after_input ties with
    // that input and the span position puts it after (sim/step/step.h ordering).
    for (std::uint32_t n = 0; n < perTick && !s.inputs.empty(); ++n) {
      const sim::PlayerInput& in = s.inputs.front();
      commands.push_back({s.id, in.sequence, sim::InputCommand{in}});
      s.fedInput = std::max(s.fedInput, in.sequence);
      s.inputs.pop();
    }
  }
  for (Session& s : sessions) {
    if (!inGame(s.phase) || s.actions.empty()) continue;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < s.actions.size(); ++i) {
      PendingAction& a = s.actions[i];
      const bool due = a.afterInput <= s.fedInput || (s.inputs.empty() && a.afterInput <= s.newestInput) ||
                       tick - a.arrivalTick >= kActionWaitTicks;
      if (due) {
        commands.push_back({s.id, a.afterInput, a.body});
      } else {
        if (kept != i) s.actions[kept] = std::move(a);
        ++kept;
      }
    }
    s.actions.resize(kept);
  }
}

}  // namespace loam::net::host
