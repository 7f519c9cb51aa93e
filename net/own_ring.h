// The own player of a client's newest snapshots. Snapshot.own is absent when it equals
// its baseline's in every field but last_input, and own_input always carries that
// (docs/PROTOCOL.md, "Snapshot"): every reader of snapshots (the client, the swarm and
// attack bots) rebuilds the own state here, one per sequence in a ring like the
// server's.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "net/protocol.h"
#include "net/wire.h"
#include "sim/systems/player.h"

namespace loam::net {

class OwnRing {
 public:
  /// The own state `s` carries, or else its baseline's, with lastInput = own_input;
  /// kept for the snapshots that name `s` as their baseline. nullopt when `s` has no
  /// own and its baseline is not held (none, or rolled off).
  std::optional<sim::PlayerState> take(const wire::Snapshot& s) {
    sim::PlayerState own;
    if (s.own()) {
      own = fromWire(*s.own());
    } else {
      const Slot& base = slots_[s.baseline() % kSnapshotRing];
      if (s.baseline() == 0 || base.sequence != s.baseline()) return std::nullopt;
      own = base.own;
    }
    own.lastInput = s.own_input();
    slots_[s.sequence() % kSnapshotRing] = {s.sequence(), own};
    return own;
  }

 private:
  struct Slot {
    std::uint32_t sequence = 0;  ///< 0 = empty
    sim::PlayerState own;
  };
  std::array<Slot, kSnapshotRing> slots_{};
};

}  // namespace loam::net
