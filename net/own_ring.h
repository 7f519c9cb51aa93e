// The own player of a client's newest snapshots. Snapshot.own is the changes of its
// record against its baseline's, absent when none changed but last_input, which
// own_input always carries (docs/PROTOCOL.md, "Snapshot"): every reader of snapshots
// (the client, the swarm and attack bots) rebuilds the own state here, one per
// sequence in a ring like the server's.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "net/entity_codec.h"
#include "net/protocol.h"
#include "net/snapshot_codec.h"
#include "net/wire.h"
#include "sim/systems/player.h"

namespace loam::net {

class OwnRing {
 public:
  /// The own state `s` carries: its changes against its baseline's (zeros without a
  /// baseline), or the baseline's when it carries none, with lastInput = own_input;
  /// kept for the snapshots that name `s` as their baseline. An error when `s` names
  /// a baseline not held (rolled off), has neither own nor baseline, or its own is
  /// malformed.
  sim::Result<sim::PlayerState> take(const SnapshotMessage& s) {
    const Slot* base = nullptr;
    if (s.baseline != 0) {
      base = &slots_[s.baseline % kSnapshotRing];
      if (base->sequence != s.baseline)
        return sim::makeError("own: baseline " + std::to_string(s.baseline) + " not held");
    }
    wire::PlayerStateRec rec;
    if (!s.own.empty()) {
      auto changed = decodeOwnChanges(s.own, base ? &base->own : nullptr, s.ownInput);
      if (!changed) return changed.error();
      rec = *changed;
    } else if (base) {
      rec = base->own;
    } else {
      return sim::makeError("own: neither own state nor a baseline");
    }
    slots_[s.sequence % kSnapshotRing] = {s.sequence, rec};
    sim::PlayerState own = fromWire(rec);
    own.lastInput = s.ownInput;
    return own;
  }

 private:
  struct Slot {
    std::uint32_t sequence = 0;  ///< 0 = empty
    wire::PlayerStateRec own;    ///< its last_input unused
  };
  std::array<Slot, kSnapshotRing> slots_{};
};

}  // namespace loam::net
