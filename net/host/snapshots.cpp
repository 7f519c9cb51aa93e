#include "net/host/snapshots.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <variant>

#include "net/entity_codec.h"
#include "net/protocol.h"
#include "net/snapshot_codec.h"
#include "net/wire.h"

namespace loam::net::host {
namespace {

constexpr std::size_t kMaxSnapshotRecordBytes = 16 * 1024;   ///< entity records in one snapshot, at most

template <class Rec>
bool sameRecord(const Rec& a, const Rec& b) noexcept {
  return std::memcmp(&a, &b, sizeof(Rec)) == 0;  // flatc structs zero their padding
}

constexpr int kGridCellShift = 19;  ///< 2^19 units = 25.6 m

std::int64_t gridCell(std::int64_t units) noexcept { return units >> kGridCellShift; }  // floor

std::uint64_t gridKey(std::int64_t cx, std::int64_t cz) noexcept {
  const auto offset = [](std::int64_t c) { return static_cast<std::uint64_t>(c + (std::int64_t{1} << 31)); };
  return offset(cz) << 32 | offset(cx);
}

}  // namespace

std::uint64_t NearbyGrid::cellOf(sim::Vec3i pos) noexcept { return gridKey(gridCell(pos.x), gridCell(pos.z)); }

void NearbyGrid::sortItems() {
  std::sort(items_.begin(), items_.end(),
            [](const Item& a, const Item& b) { return a.cell != b.cell ? a.cell < b.cell : a.index < b.index; });
}

void NearbyGrid::query(sim::Vec3i centre, std::int64_t radius, std::vector<std::uint32_t>& out) const {
  out.clear();
  const std::int64_t x0 = gridCell(centre.x - radius), x1 = gridCell(centre.x + radius);
  const std::int64_t z0 = gridCell(centre.z - radius), z1 = gridCell(centre.z + radius);
  const auto byCell = [](const Item& a, std::uint64_t cell) { return a.cell < cell; };
  for (std::int64_t z = z0; z <= z1; ++z) {
    const std::uint64_t last = gridKey(x1, z);
    for (auto it = std::lower_bound(items_.begin(), items_.end(), gridKey(x0, z), byCell);
         it != items_.end() && it->cell <= last; ++it) {
      out.push_back(it->index);
    }
  }
  std::sort(out.begin(), out.end());
}

bool Snapshots::isMovementSound(const sim::Event& e) noexcept {
  const auto byPlayer = [](const sim::Actor& a) { return a.kind == sim::Actor::Kind::Player; };
  if (const auto* f = std::get_if<sim::FootstepEvent>(&e)) return byPlayer(f->who);
  if (const auto* l = std::get_if<sim::LandedEvent>(&e)) return byPlayer(l->who);
  if (const auto* s = std::get_if<sim::SplashEvent>(&e)) return byPlayer(s->who);
  return false;
}

void Snapshots::gather() {
  // Keep one snapshot interval of sounds (every client gets a snapshot within it).
  const std::uint64_t T = core_.state.tick;
  const auto every = static_cast<std::uint64_t>(std::max(core_.config.interest.snapshotEvery, 1));
  std::erase_if(sounds_, [&](const MovementSound& t) { return t.tick + every <= T; });
  players_.resize(core_.state.players.size());
  for (std::size_t i = 0; i < core_.state.players.size(); ++i) {
    const sim::Player& p = core_.state.players[i];
    PlayerEntry& e = players_[i];
    e.pos = p.motion.position;
    e.rec = poseToWire(p.id, p.motion);
  }
  playerGrid_.build(players_);
  const auto& list = core_.state.animals.animals;
  animals_.resize(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    AnimalEntry& e = animals_[i];
    e.pos = list[i].position;
    e.rec = toWire(list[i]);
  }
  animalGrid_.build(animals_);
}

/// Marks view entries against a baseline list (both sorted by id) and collects
/// the ids that left the view. Entries get `base` and `want`.
template <class Entry, class Rec>
void Snapshots::diffAgainstBase(std::vector<ViewEntry>& view, const std::vector<Entry>& entries,
                                const std::vector<ContentEntry<Rec>>* base, std::vector<std::uint32_t>& gone,
                                bool dueFar, std::int64_t near2, bool animal) {
  std::size_t b = 0;
  const std::size_t nb = base ? base->size() : 0;
  const std::uint32_t tick32 = static_cast<std::uint32_t>(core_.state.tick);
  for (std::uint32_t vi = 0; vi < view.size(); ++vi) {
    ViewEntry& v = view[vi];
    const auto& e = entries[v.index];
    const std::uint32_t id = e.rec.id();
    while (b < nb && (*base)[b].rec.id() < id) gone.push_back((*base)[b++].rec.id());
    const bool inBase = b < nb && (*base)[b].rec.id() == id;
    v.base = inBase ? static_cast<std::int32_t>(b) : -1;
    const Rec* was = inBase ? &(*base)[b].rec : nullptr;
    const bool changed = !was || !sameRecord(*was, e.rec);
    const bool due = dueFar || v.d2 <= near2;
    v.want = changed && due;
    v.send = false;
    if (v.want) {
      // Nearest first; entries not sent for a while and new ones move up.
      const double age = inBase ? double(tick32 - (*base)[b].sentTick) / core_.config.interest.snapshotEvery : 8.0;
      // The id step is at most the id: the cost is an upper bound.
      const auto bytes = static_cast<std::uint32_t>(entityRecordBytes(id, was, e.rec));
      candidates_.push_back({std::sqrt(double(v.d2)) / (1.0 + std::max(age, 0.0)), vi, bytes, animal});
    }
    if (inBase) ++b;
  }
  while (b < nb) gone.push_back((*base)[b++].rec.id());
}

/// The peer's content after this snapshot, and the records sent, encoded (`changes`).
template <class Entry, class Rec>
void Snapshots::buildContent(const std::vector<ViewEntry>& view, const std::vector<Entry>& entries,
                             const std::vector<ContentEntry<Rec>>* base, std::vector<ContentEntry<Rec>>& content,
                             std::vector<std::uint8_t>& changes) {
  content.clear();
  changes.clear();
  const std::uint32_t tick32 = static_cast<std::uint32_t>(core_.state.tick);
  std::uint32_t previousId = 0;  // the first record's step is its id
  for (const ViewEntry& v : view) {
    if (v.send) {
      const Rec& rec = entries[v.index].rec;
      const Rec* was = v.base >= 0 ? &(*base)[static_cast<std::size_t>(v.base)].rec : nullptr;
      appendEntityRecord(changes, rec.id() - previousId, was, rec);
      previousId = rec.id();
      content.push_back({rec, tick32});
    } else if (v.base >= 0) {
      content.push_back((*base)[static_cast<std::size_t>(v.base)]);
    }
  }
}

template <class Entry>
std::int64_t Snapshots::nthDistance(const std::vector<Entry>& entries, std::size_t n) {
  distances_.clear();
  for (const Entry& e : entries) distances_.push_back(e.d2);
  std::nth_element(distances_.begin(), distances_.begin() + static_cast<std::ptrdiff_t>(n - 1), distances_.end());
  return distances_[n - 1];
}

/// The cap-th smallest distance is found on a copy, then the entries are filtered
/// (O(n), no sort).
template <class Entry>
void Snapshots::keepNearest(std::vector<Entry>& entries, std::size_t cap) {
  if (entries.size() <= cap) return;
  const std::int64_t limit = nthDistance(entries, cap);
  std::size_t below = 0;
  for (std::int64_t d : distances_) below += d < limit ? 1 : 0;
  std::size_t ties = cap - below;  // entries at exactly `limit` that still fit, the earliest first
  std::size_t kept = 0;
  for (const Entry& e : entries) {
    if (e.d2 < limit || (e.d2 == limit && ties > 0 && ties--)) entries[kept++] = e;
  }
  entries.resize(kept);
}

void Snapshots::sendIfDue(Session& s, const sim::Player& own) {
  const InterestConfig& ic = core_.config.interest;
  const auto snapshotEvery = static_cast<std::uint32_t>(std::max(ic.snapshotEvery, 1));
  const std::uint64_t T = core_.state.tick;
  const bool turn = (T + s.id.value) % snapshotEvery == 0;
  // A snapshot due next tick goes a tick early when a Stream datagram went to the peer
  // this tick: ENet packs both into one UDP datagram, 32 bytes of headers less (an
  // idle player's water and steps came on the other ticks). Its turn is then skipped.
  const bool early = (T + 1 + s.id.value) % snapshotEvery == 0 && s.streamSentTick == T;
  const bool wentEarly = s.snapshotSeq != 0 && s.snapshotTick + 1 == T;
  const bool due = snapshotEvery == 1 || (turn ? !wentEarly : early);
  if (!due) return;
  s.snapshotTick = T;
  const std::uint32_t seq = ++s.snapshotSeq;
  const Manifest* base = nullptr;
  if (s.ackedSeq != 0 && seq - s.ackedSeq < kSnapshotRing) {
    const Manifest& m = s.ring[s.ackedSeq % kSnapshotRing];
    if (m.seq == s.ackedSeq) base = &m;
  }
  // id / snapshotEvery staggers the far turns among the peers of this tick. Counted
  // from each join alone, a join wave put every far turn on the same ticks, which
  // then ran twice as long as the rest.
  const std::uint32_t farPhase = s.id.value / snapshotEvery;
  const bool farTurn = ic.farPlayerEvery <= 1 ||
                       (s.snapshotCount + farPhase) % static_cast<std::uint32_t>(ic.farPlayerEvery) == 0;
  ++s.snapshotCount;
  const std::int64_t near2 = squaredUnits(ic.nearPlayerMetres);
  const std::int64_t enter2 = squaredUnits(ic.animalEnterMetres);
  const std::int64_t leave2 = squaredUnits(ic.animalLeaveMetres);

  // Players: the others within the peer's reach (beyond the terrain it holds an avatar
  // would stand on nothing), the nearest kMaxEntitiesInView of them.
  const std::int64_t reach2 = squaredUnits(s.reachMetres);
  playerView_.clear();
  const auto radius = [](double metres) { return static_cast<std::int64_t>(std::ceil(unitsFromMetres(metres))); };
  playerGrid_.query(own.motion.position, radius(s.reachMetres), nearby_);
  for (std::uint32_t i : nearby_) {
    if (players_[i].rec.id() == own.id.value) continue;
    const std::int64_t d2 = sim::distanceSquared(own.motion.position, players_[i].pos);
    if (d2 <= reach2) playerView_.push_back({i, -1, d2, false, false});
  }
  keepNearest(playerView_, kMaxEntitiesInView);
  // In a crowd only the nearest nearPlayersMax players get the full rate.
  std::int64_t nearLimit2 = near2;
  if (ic.nearPlayersMax > 0 && playerView_.size() > ic.nearPlayersMax) {
    nearLimit2 = std::min(near2, nthDistance(playerView_, ic.nearPlayersMax));
  }
  // Animals: enter within animalEnterMetres, stay until beyond animalLeaveMetres.
  animalView_.clear();
  s.animalViewNext.clear();
  std::size_t prev = 0;
  animalGrid_.query(own.motion.position, radius(std::max(ic.animalEnterMetres, ic.animalLeaveMetres)), nearby_);
  for (std::uint32_t i : nearby_) {
    const std::uint32_t id = animals_[i].rec.id();
    while (prev < s.animalView.size() && s.animalView[prev] < id) ++prev;
    const bool was = prev < s.animalView.size() && s.animalView[prev] == id;
    const std::int64_t d2 = sim::distanceSquared(own.motion.position, animals_[i].pos);
    if (d2 <= enter2 || (was && d2 <= leave2)) animalView_.push_back({i, -1, d2, false, false});
  }
  keepNearest(animalView_, kMaxEntitiesInView);
  for (const ViewEntry& v : animalView_) s.animalViewNext.push_back(animals_[v.index].rec.id());
  std::swap(s.animalView, s.animalViewNext);

  candidates_.clear();
  playersGone_.clear();
  animalsGone_.clear();
  diffAgainstBase(playerView_, players_, base ? &base->players : nullptr, playersGone_, farTurn, nearLimit2, false);
  diffAgainstBase(animalView_, animals_, base ? &base->animals : nullptr, animalsGone_, farTurn,
                  squaredUnits(ic.nearAnimalMetres), true);

  // Budget: the own player and the gone lists always go; records nearest first.
  const double fixedBytes = 96.0 + 5.0 * double(playersGone_.size() + animalsGone_.size());
  double room = std::min(s.tokens - fixedBytes, double(kMaxSnapshotRecordBytes));
  double wanted = 0;
  for (const Candidate& c : candidates_) wanted += c.bytes;
  if (wanted > room) {  // only rank when something has to wait
    std::sort(candidates_.begin(), candidates_.end(),
              [](const Candidate& a, const Candidate& b) { return a.key < b.key; });
  }
  for (const Candidate& c : candidates_) {
    if (room < c.bytes) {
      ++core_.stats.budgetDeferred;
      continue;
    }
    room -= c.bytes;
    (c.animal ? animalView_ : playerView_)[c.view].send = true;
  }

  Manifest& cur = s.ring[seq % kSnapshotRing];
  cur.seq = seq;
  buildContent(playerView_, players_, base ? &base->players : nullptr, cur.players, playerChanges_);
  buildContent(animalView_, animals_, base ? &base->animals : nullptr, cur.animals, animalChanges_);

  // Movement sounds since this client's previous snapshot, within hearing range, the
  // nearest kMaxSoundsPerSnapshot (in a crowd, everyone's footsteps were half of every
  // snapshot, more than the client's mixer plays), in the order they happened.
  soundsOut_.clear();
  heard_.clear();
  const std::int64_t hear2 = squaredUnits(ic.hearingMetres);
  for (std::uint32_t i = 0; i < sounds_.size(); ++i) {
    const MovementSound& t = sounds_[i];
    if (t.tick <= s.lastSoundTick) continue;
    const sim::Vec3i at{t.rec.x() * sim::kUnitsPerVoxel, t.rec.y() * sim::kUnitsPerVoxel,
                        t.rec.z() * sim::kUnitsPerVoxel};
    const std::int64_t d2 = sim::distanceSquared(own.motion.position, at);
    if (d2 <= hear2) heard_.push_back({i, d2});
  }
  keepNearest(heard_, kMaxSoundsPerSnapshot);
  for (std::size_t k = 0; k < heard_.size(); ++k) {
    appendEventRecord(soundsOut_, k ? &sounds_[heard_[k - 1].index].rec : nullptr, sounds_[heard_[k].index].rec);
  }
  s.lastSoundTick = core_.state.tick;
  // The own record's changes against the baseline's. An idle player's changes only in
  // the input it acknowledges, which own_input carries: then `own` is left out.
  cur.own = toWire(own.motion);
  ownOut_.clear();
  appendOwnChanges(ownOut_, base ? &base->own : nullptr, cur.own);
  SnapshotMessage m;
  m.sequence = seq;
  m.baseline = base ? base->seq : 0;
  m.tick = core_.state.tick;
  m.ownInput = own.motion.lastInput;
  m.own = ownOut_;
  m.players = playerChanges_;
  m.playersGone = playersGone_;
  m.animals = animalChanges_;
  m.animalsGone = animalsGone_;
  m.sounds = soundsOut_;
  datagram_.clear();
  appendSnapshot(datagram_, m);
  // Unreliable fragments: a large snapshot must not turn into reliable traffic.
  core_.sendBytes(s, kChannelSnapshot, ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT, datagram_, wire::ServerBody::Snapshot);
}

}  // namespace loam::net::host
