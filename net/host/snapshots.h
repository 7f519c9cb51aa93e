// Snapshots: each playing peer's unreliable view of the entities around it, every
// InterestConfig::snapshotEvery ticks. The own player goes every time; other players
// within the peer's reach (nearest first, the nearest few at the full rate, the rest at
// farPlayerEvery) and
// animals (with enter / leave hysteresis; within nearAnimalMetres at the full rate,
// the rest at farPlayerEvery) go as field changes against the newest snapshot
// the peer acknowledged (its ring of Manifests), within its byte budget; players'
// movement sounds within hearing range ride along. Internal to ServerHost
// (net/server_host.cpp and net/host/).
#pragma once

#include <cstdint>
#include <vector>

#include "loam_generated.h"  // flatc output of net/schema/loam.fbs (build tree)
#include "net/host/host_core.h"
#include "sim/systems/events.h"
#include "sim/systems/player.h"

namespace loam::net::host {

/// A player's footstep, landing or splash, kept for one snapshot interval.
struct MovementSound {
  std::uint64_t tick = 0;
  wire::EventRec rec;
};

/// Entities bucketed by 25.6 m square XZ cells, rebuilt once per tick, so that "who is
/// near this peer" costs the entities near it, not a pass over all of them (with 600
/// players that pass, once per peer, was the largest cost of a tick).
class NearbyGrid {
 public:
  /// Buckets `entries` (anything with a `pos`; index i is entry i).
  template <class Entries>
  void build(const Entries& entries) {
    items_.resize(entries.size());
    for (std::uint32_t i = 0; i < entries.size(); ++i) items_[i] = {cellOf(entries[i].pos), i};
    sortItems();
  }
  /// Sets `out` to the indices, ascending, of the entities in the cells that overlap
  /// the square of half-side `radius` units around `centre` (a superset of those
  /// within `radius`; the caller measures).
  void query(sim::Vec3i centre, std::int64_t radius, std::vector<std::uint32_t>& out) const;

 private:
  struct Item {
    std::uint64_t cell = 0;  ///< z cell in the high half, x cell in the low, both offset by 2^31
    std::uint32_t index = 0;
  };
  static std::uint64_t cellOf(sim::Vec3i pos) noexcept;
  void sortItems();
  std::vector<Item> items_;  ///< sorted by cell, then index
};

class Snapshots {
 public:
  explicit Snapshots(HostCore& core) noexcept : core_(core) {}

  /// Players' movement sounds travel in snapshots, not in the StepBatch: true for
  /// footsteps, landings and splashes by players.
  static bool isMovementSound(const sim::Event& e) noexcept;
  /// Keeps a movement sound of the step at `tick` for the next snapshots.
  void addSound(std::uint64_t tick, const wire::EventRec& rec) { sounds_.push_back({tick, rec}); }

  /// Once per tick after the step, before any send: drops sounds older than one
  /// snapshot interval and records every player's and animal's wire record and hash.
  void gather();

  /// Sends s its next snapshot when one is due this tick; own is s's player. Peers
  /// take turns: a peer's snapshots go on the ticks where (tick + id) % snapshotEvery
  /// is 0, or a tick before when a Stream datagram went to it that tick (one UDP
  /// datagram for both), and its far turns are staggered among those peers too.
  void sendIfDue(Session& s, const sim::Player& own);

 private:
  /// Per-tick view of one player / animal shared by every peer's snapshot.
  struct PlayerEntry {
    sim::Vec3i pos;
    wire::PlayerPoseRec rec;  ///< rec.id() is the player's id
  };
  struct AnimalEntry {
    sim::Vec3i pos;
    wire::AnimalRec rec;
  };
  /// One candidate of a peer's snapshot (scratch, reused).
  struct ViewEntry {
    std::uint32_t index = 0;    ///< into players_ / animals_
    std::int32_t base = -1;     ///< index in the baseline manifest, -1 = new to the peer
    std::int64_t d2 = 0;        ///< squared distance, units^2
    bool want = false;          ///< differs from the baseline and due this snapshot
    bool send = false;          ///< fits the budget
  };
  struct Candidate {
    double key = 0;             ///< lower first
    std::uint32_t view = 0;     ///< index into the view scratch
    std::uint32_t bytes = 0;    ///< its record's size, at most (net/entity_codec.h)
    bool animal = false;
  };

  template <class Entry, class Rec>
  void diffAgainstBase(std::vector<ViewEntry>& view, const std::vector<Entry>& entries,
                       const std::vector<ContentEntry<Rec>>* base, std::vector<std::uint32_t>& gone, bool dueFar,
                       std::int64_t near2, bool animal);
  template <class Entry, class Rec>
  void buildContent(const std::vector<ViewEntry>& view, const std::vector<Entry>& entries,
                    const std::vector<ContentEntry<Rec>>* base, std::vector<ContentEntry<Rec>>& content,
                    std::vector<std::uint8_t>& changes);
  /// A movement sound within hearing (scratch).
  struct HeardSound {
    std::uint32_t index = 0;  ///< into sounds_
    std::int64_t d2 = 0;      ///< squared distance, units^2
  };
  /// The n-th smallest d2 of `entries` (1-based; n <= size).
  template <class Entry>
  std::int64_t nthDistance(const std::vector<Entry>& entries, std::size_t n);
  /// Keeps the nearest `cap` entries, in their order; of equal distances the earlier.
  template <class Entry>
  void keepNearest(std::vector<Entry>& entries, std::size_t cap);

  HostCore& core_;
  std::vector<PlayerEntry> players_;
  std::vector<AnimalEntry> animals_;
  std::vector<MovementSound> sounds_;  ///< players' movement sounds of the last snapshot interval
  NearbyGrid playerGrid_, animalGrid_;
  // Scratch for one peer's snapshot (capacity reused).
  std::vector<ViewEntry> playerView_, animalView_;
  std::vector<Candidate> candidates_;
  std::vector<std::int64_t> distances_;
  std::vector<std::uint8_t> playerChanges_, animalChanges_;  ///< Snapshot.players / animals
  std::vector<std::uint8_t> soundsOut_;  ///< Snapshot.sounds
  std::vector<std::uint8_t> ownOut_;     ///< Snapshot.own
  std::vector<std::uint8_t> datagram_;   ///< the encoded Snapshot
  std::vector<HeardSound> heard_;
  std::vector<std::uint32_t> playersGone_, animalsGone_;
  std::vector<std::uint32_t> nearby_;  ///< a grid query's answer
};

}  // namespace loam::net::host
