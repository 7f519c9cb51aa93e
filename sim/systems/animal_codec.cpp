// The animal system's replicated record outside the step: the state codec's
// "animals" blob, the hash and the difference report. The Animal record part walks
// kAnimalFields (sim/systems/animals.h); the brain (server working data) is written
// field by field after all the animals.
#include <algorithm>

#include "sim/core/internal/format.h"
#include "sim/systems/animals.h"

namespace loam::sim {

namespace {
using internal::AnimalBrain;

constexpr std::size_t kBrainBytes = 1 + 4 + 12 + 4 + 8 + 8 + 8 + 4 + 2 + 2 + 1 + 1;
constexpr std::size_t kAnimalBytes = encodedSize(kAnimalFields) + kBrainBytes;
}  // namespace

void encodeAnimals(const AnimalState& animals, std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.header(static_cast<std::uint32_t>(animals.animals.size()));
  for (const Animal& a : animals.animals) writeFields(w, a, kAnimalFields);
  // Brains after the animals (same order), so a reader of the replicated part can stop early.
  const bool brains = animals.brains.size() == animals.animals.size();
  for (std::size_t i = 0; i < animals.animals.size(); ++i) {
    const AnimalBrain b = brains ? animals.brains[i] : AnimalBrain{};
    w.u8(brains ? 1 : 0);
    w.u32(b.den);
    w.vec(b.goal);
    w.i32(b.perch);
    w.u64(b.untilTick);
    w.u64(b.followAfter);
    w.u64(b.flightStart);
    w.i32(b.bestDistance);
    w.u16(b.stuckTicks);
    w.u16(b.climbTicks);
    w.u8(static_cast<std::uint8_t>(b.fleeSide));
    w.u8(b.onGround ? 1 : 0);
  }
}

Result<void> decodeAnimals(std::span<const std::uint8_t> bytes, AnimalState& animals, std::uint64_t tick) {
  ByteReader r(bytes, "animals");
  const std::uint32_t n = r.header(kAnimalBytes);
  std::vector<Animal> list;
  list.reserve(n);
  for (std::uint32_t k = 0; k < n && r.ok(); ++k) {
    Animal a;
    readFields(r, a, kAnimalFields);
    if (!r.ok()) break;
    const auto species = static_cast<std::uint8_t>(a.species);
    if (a.id.value == 0) {
      r.fail(internal::format("animal %u: id 0", k));
    } else if (!list.empty() && !(list.back().id < a.id)) {
      r.fail(internal::format("animal %u: ids not increasing", k));
    } else if (species > static_cast<std::uint8_t>(AnimalSpecies::Dog)) {
      r.fail(internal::format("animal %u: species %u", k, unsigned{species}));
    } else if (a.mode > (species == 0 ? 2u : 3u)) {
      r.fail(internal::format("animal %u: mode %u", k, unsigned{a.mode}));
    }
    list.push_back(a);
  }
  std::vector<AnimalBrain> saved(list.size());
  std::vector<std::uint8_t> present(list.size(), 0);
  for (std::size_t k = 0; k < list.size() && r.ok(); ++k) {
    AnimalBrain& b = saved[k];
    present[k] = r.u8();
    b.den = r.u32();
    b.goal = r.vec();
    b.perch = r.i32();
    b.untilTick = r.u64();
    b.followAfter = r.u64();
    b.flightStart = r.u64();
    b.bestDistance = r.i32();
    b.stuckTicks = r.u16();
    b.climbTicks = r.u16();
    b.fleeSide = static_cast<std::int8_t>(r.u8());
    const std::uint8_t onGround = r.u8();
    b.onGround = onGround != 0;
    if (!r.ok()) break;
    if (present[k] > 1 || onGround > 1 || b.fleeSide < -1 || b.fleeSide > 1) {
      r.fail(internal::format("animal %zu: bad brain flags", k));
    } else if (present[k] && (b.den >= animals.dens.size() || animals.dens[b.den].species != static_cast<std::uint8_t>(list[k].species))) {
      r.fail(internal::format("animal %zu: den %u is not a den of its species here", k, b.den));
    } else if (present[k] && (b.perch < -1 || (b.perch >= 0 && static_cast<std::size_t>(b.perch) >= animals.perches.size()))) {
      r.fail(internal::format("animal %zu: perch %d out of range", k, b.perch));
    }
  }
  if (Result<void> e = r.finish(); !e) return e;

  // Brains: as saved; else the one of the same id when this state has it (its den), else a fresh one
  // at the first den of the species. Decisions restart at `tick`.
  std::vector<AnimalBrain> brains;
  brains.reserve(list.size());
  const bool parallel = animals.brains.size() == animals.animals.size();
  std::uint32_t maxId = 0;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const Animal& a = list[k];
    maxId = std::max(maxId, a.id.value);
    if (present[k]) {
      brains.push_back(saved[k]);
      continue;
    }
    AnimalBrain b;
    auto it = std::lower_bound(animals.animals.begin(), animals.animals.end(), a.id,
                               [](const Animal& x, AnimalId id) { return x.id < id; });
    if (parallel && it != animals.animals.end() && it->id == a.id && it->species == a.species) {
      b.den = animals.brains[static_cast<std::size_t>(it - animals.animals.begin())].den;
    } else {
      for (std::size_t d = 0; d < animals.dens.size(); ++d) {
        if (animals.dens[d].species == static_cast<std::uint8_t>(a.species)) {
          b.den = static_cast<std::uint32_t>(d);
          break;
        }
      }
    }
    b.goal = a.position;
    b.untilTick = tick;
    b.followAfter = tick;
    b.flightStart = tick;
    b.onGround = a.species != AnimalSpecies::Bird;
    brains.push_back(b);
  }
  animals.animals = std::move(list);
  animals.brains = std::move(brains);
  if (maxId >= animals.nextId) animals.nextId = maxId + 1;
  return {};
}

void hashAnimals(const AnimalState& state, StateHasher& h) {
  h.add(static_cast<std::uint64_t>(state.animals.size()));
  for (const Animal& a : state.animals) hashFields(h, a, kAnimalFields);
}

std::optional<std::string> diffAnimals(const AnimalState& e, const AnimalState& a) {
  if (e.animals.size() != a.animals.size()) {
    return internal::format("animals.size: expected %zu, actual %zu", e.animals.size(), a.animals.size());
  }
  for (std::size_t i = 0; i < e.animals.size(); ++i) {
    if (auto d = firstDifferentField(e.animals[i], a.animals[i], kAnimalFields)) {
      return internal::format("animal %u %s: expected %lld, actual %lld", e.animals[i].id.value, d->name.c_str(),
                              static_cast<long long>(d->expected), static_cast<long long>(d->actual));
    }
  }
  return std::nullopt;
}

}  // namespace loam::sim
