// Entity record codec (format in net/entity_codec.h).
#include "net/entity_codec.h"

#include <array>
#include <limits>

#include "sim/core/state_bytes.h"

namespace loam::net {

namespace {

constexpr std::uint32_t u32(std::int32_t v) noexcept { return static_cast<std::uint32_t>(v); }
constexpr std::int32_t i32(std::uint32_t v) noexcept { return static_cast<std::int32_t>(v); }

/// A record's fields as bit patterns in their widths, in wire order (the id apart).
template <class Rec>
struct Fields;

static_assert(sizeof(wire::PlayerPoseRec) == 24 && sizeof(wire::AnimalRec) == 32 && sizeof(wire::EventRec) == 24 &&
                  sizeof(wire::PlayerStateRec) == 44,
              "a new record field: add it to Fields below and to net/entity_codec.h");

template <>
struct Fields<wire::PlayerPoseRec> {
  static constexpr std::array<int, 6> kBits{32, 32, 32, 16, 16, 8};
  using Values = std::array<std::uint32_t, kBits.size()>;
  static Values get(const wire::PlayerPoseRec& r) noexcept {
    return {u32(r.px()), u32(r.py()), u32(r.pz()), r.yaw(), static_cast<std::uint16_t>(r.pitch()), r.flags()};
  }
  static wire::PlayerPoseRec make(std::uint32_t id, const Values& v) noexcept {
    return {id, i32(v[0]), i32(v[1]), i32(v[2]), static_cast<std::uint16_t>(v[3]),
            static_cast<std::int16_t>(static_cast<std::uint16_t>(v[4])), static_cast<std::uint8_t>(v[5])};
  }
};

template <>
struct Fields<wire::AnimalRec> {
  static constexpr std::array<int, 9> kBits{32, 32, 32, 32, 32, 32, 16, 8, 8};
  using Values = std::array<std::uint32_t, kBits.size()>;
  static Values get(const wire::AnimalRec& r) noexcept {
    return {u32(r.px()), u32(r.py()), u32(r.pz()), u32(r.vx()), u32(r.vy()), u32(r.vz()),
            r.yaw(), r.mode(), r.species()};
  }
  static wire::AnimalRec make(std::uint32_t id, const Values& v) noexcept {
    return {id, i32(v[0]), i32(v[1]), i32(v[2]), i32(v[3]), i32(v[4]), i32(v[5]), static_cast<std::uint16_t>(v[6]),
            static_cast<std::uint8_t>(v[8]), static_cast<std::uint8_t>(v[7])};
  }
};

template <>
struct Fields<wire::EventRec> {
  static constexpr std::array<int, 9> kBits{32, 32, 32, 32, 32, 8, 8, 8, 8};
  using Values = std::array<std::uint32_t, kBits.size()>;
  static Values get(const wire::EventRec& r) noexcept {
    return {u32(r.x()), u32(r.y()), u32(r.z()), r.actor(), u32(r.value()), r.material(), r.kind(), r.actor_kind(),
            r.small()};
  }
  static wire::EventRec make(const Values& v) noexcept {
    return {i32(v[0]), i32(v[1]), i32(v[2]), v[3], i32(v[4]), static_cast<std::uint8_t>(v[6]),
            static_cast<std::uint8_t>(v[7]), static_cast<std::uint8_t>(v[5]), static_cast<std::uint8_t>(v[8])};
  }
};

/// The own player; last_input is not a field (Snapshot.own_input carries it).
template <>
struct Fields<wire::PlayerStateRec> {
  static constexpr std::array<int, 13> kBits{32, 32, 32, 32, 32, 32, 32, 16, 16, 8, 8, 8, 32};
  using Values = std::array<std::uint32_t, kBits.size()>;
  static Values get(const wire::PlayerStateRec& r) noexcept {
    return {u32(r.px()),     u32(r.py()),     u32(r.pz()),    u32(r.vx()),          u32(r.vy()),
            u32(r.vz()),     u32(r.stride()), r.yaw(),        static_cast<std::uint16_t>(r.pitch()),
            r.flags(),       r.motion_events(), r.surface(),  u32(r.impact_speed())};
  }
  static wire::PlayerStateRec make(const Values& v, std::uint32_t lastInput) noexcept {
    return {i32(v[0]), i32(v[1]), i32(v[2]), i32(v[3]), i32(v[4]), i32(v[5]), lastInput, i32(v[6]), i32(v[12]),
            static_cast<std::uint16_t>(v[7]), static_cast<std::int16_t>(static_cast<std::uint16_t>(v[8])),
            static_cast<std::uint8_t>(v[9]), static_cast<std::uint8_t>(v[10]), static_cast<std::uint8_t>(v[11])};
  }
};

constexpr std::uint32_t widthMask(int bits) noexcept {
  return bits == 32 ? std::numeric_limits<std::uint32_t>::max() : (std::uint32_t{1} << bits) - 1;
}

/// The zigzag of now - base taken in `bits` bits and sign-extended.
constexpr std::uint32_t zigzagChange(std::uint32_t base, std::uint32_t now, int bits) noexcept {
  const std::uint32_t d = (now - base) & widthMask(bits);
  const int shift = 32 - bits;
  return sim::zigzag(i32(d << shift) >> shift);
}

template <class Rec>
struct Change {
  std::uint32_t mask = 0;
  typename Fields<Rec>::Values zigzags{};
};

template <class Rec>
Change<Rec> changeOf(const Rec* base, const Rec& now) noexcept {
  using F = Fields<Rec>;
  const typename F::Values b = base ? F::get(*base) : typename F::Values{};
  const typename F::Values n = F::get(now);
  Change<Rec> c;
  for (std::size_t i = 0; i < F::kBits.size(); ++i) {
    if (b[i] == n[i]) continue;
    c.mask |= 1u << i;
    c.zigzags[i] = zigzagChange(b[i], n[i], F::kBits[i]);
  }
  return c;
}

template <class Rec>
void writeChange(sim::ByteWriter& w, const Change<Rec>& c) {
  w.varint(c.mask);
  for (std::size_t i = 0; i < c.zigzags.size(); ++i) {
    if (c.mask >> i & 1u) w.varint(c.zigzags[i]);
  }
}

template <class Rec>
std::size_t changeBytes(const Change<Rec>& c) noexcept {
  std::size_t n = sim::ByteWriter::varintBytes(c.mask);
  for (std::size_t i = 0; i < c.zigzags.size(); ++i) {
    if (c.mask >> i & 1u) n += sim::ByteWriter::varintBytes(c.zigzags[i]);
  }
  return n;
}

/// Reads a mask and its changes and applies them to v (failures stay in r).
template <class Rec>
void readChange(sim::ByteReader& r, typename Fields<Rec>::Values& v) {
  using F = Fields<Rec>;
  const std::uint32_t mask = r.varint();
  if (mask >> F::kBits.size() != 0) r.fail("unknown field bits");
  for (std::size_t i = 0; i < F::kBits.size() && r.ok(); ++i) {
    if (!(mask >> i & 1u)) continue;
    const std::uint32_t z = r.varint();
    const int bits = F::kBits[i];
    if (bits < 32 && z >> bits != 0) r.fail("a change too large for its field");
    v[i] = (v[i] + u32(sim::unzigzag(z))) & widthMask(bits);
  }
}

template <class Rec>
std::vector<Rec>& mergeScratch() {
  thread_local std::vector<Rec> s;
  return s;
}

}  // namespace

template <class Rec>
std::size_t entityRecordBytes(std::uint32_t idStep, const Rec* base, const Rec& now) noexcept {
  return sim::ByteWriter::varintBytes(idStep) + changeBytes(changeOf(base, now));
}

template <class Rec>
void appendEntityRecord(std::vector<std::uint8_t>& out, std::uint32_t idStep, const Rec* base, const Rec& now) {
  sim::ByteWriter w(out);
  w.varint(idStep);
  writeChange(w, changeOf(base, now));
}

template <class Rec>
sim::Result<void> applyEntityRecords(std::span<const std::uint8_t> bytes, std::vector<Rec>& list,
                                     std::size_t maxEntries) {
  using F = Fields<Rec>;
  // Merged into a scratch list and swapped in: O(list + records), whatever the ids.
  std::vector<Rec>& out = mergeScratch<Rec>();
  out.clear();
  sim::ByteReader r(bytes, "entity records");
  std::uint64_t id = 0;
  std::size_t at = 0;  // list entries before `at` are in out
  for (bool first = true; r.ok() && r.left() > 0; first = false) {
    const std::uint32_t step = r.varint();
    if (step == 0 && !first) r.fail("ids not ascending");
    id += step;
    if (id > std::numeric_limits<std::uint32_t>::max()) r.fail("an id past 32 bits");
    if (!r.ok()) break;
    while (at < list.size() && list[at].id() < id) out.push_back(list[at++]);
    const bool known = at < list.size() && list[at].id() == id;
    typename F::Values v = known ? F::get(list[at]) : typename F::Values{};
    readChange<Rec>(r, v);
    if (!r.ok()) break;
    if (known) ++at;
    if (out.size() + (list.size() - at) >= maxEntries) r.fail("more entities than allowed");
    out.push_back(F::make(static_cast<std::uint32_t>(id), v));
  }
  sim::Result<void> done = r.finish();
  if (!done) return done;
  out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(at), list.end());
  std::swap(list, out);
  return done;
}

void appendEventRecord(std::vector<std::uint8_t>& out, const wire::EventRec* previous, const wire::EventRec& now) {
  sim::ByteWriter w(out);
  writeChange(w, changeOf(previous, now));
}

sim::Result<void> decodeEventRecords(std::span<const std::uint8_t> bytes, std::vector<wire::EventRec>& out,
                                     std::size_t maxRecords) {
  using F = Fields<wire::EventRec>;
  out.clear();
  sim::ByteReader r(bytes, "event records");
  F::Values v{};
  while (r.ok() && r.left() > 0) {
    if (out.size() == maxRecords) r.fail("more records than allowed");
    readChange<wire::EventRec>(r, v);
    if (r.ok()) out.push_back(F::make(v));
  }
  return r.finish();
}

bool appendOwnChanges(std::vector<std::uint8_t>& out, const wire::PlayerStateRec* base,
                      const wire::PlayerStateRec& now) {
  const Change<wire::PlayerStateRec> c = changeOf(base, now);
  if (base && c.mask == 0) return false;
  sim::ByteWriter w(out);
  writeChange(w, c);
  return true;
}

sim::Result<wire::PlayerStateRec> decodeOwnChanges(std::span<const std::uint8_t> bytes,
                                                   const wire::PlayerStateRec* base, std::uint32_t lastInput) {
  using F = Fields<wire::PlayerStateRec>;
  sim::ByteReader r(bytes, "own record");
  F::Values v = base ? F::get(*base) : F::Values{};
  readChange<wire::PlayerStateRec>(r, v);
  if (auto done = r.finish(); !done) return done.error();
  return F::make(v, lastInput);
}

template std::size_t entityRecordBytes(std::uint32_t, const wire::PlayerPoseRec*, const wire::PlayerPoseRec&) noexcept;
template std::size_t entityRecordBytes(std::uint32_t, const wire::AnimalRec*, const wire::AnimalRec&) noexcept;
template void appendEntityRecord(std::vector<std::uint8_t>&, std::uint32_t, const wire::PlayerPoseRec*,
                                 const wire::PlayerPoseRec&);
template void appendEntityRecord(std::vector<std::uint8_t>&, std::uint32_t, const wire::AnimalRec*,
                                 const wire::AnimalRec&);
template sim::Result<void> applyEntityRecords(std::span<const std::uint8_t>, std::vector<wire::PlayerPoseRec>&,
                                              std::size_t);
template sim::Result<void> applyEntityRecords(std::span<const std::uint8_t>, std::vector<wire::AnimalRec>&,
                                              std::size_t);

}  // namespace loam::net
