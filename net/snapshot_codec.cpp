#include "net/snapshot_codec.h"

#include <string>

#include "net/protocol.h"
#include "sim/core/state_bytes.h"

namespace loam::net {

namespace {

enum : std::uint8_t {
  kOwn = 1u << 0,
  kPlayers = 1u << 1,
  kPlayersGone = 1u << 2,
  kAnimals = 1u << 3,
  kAnimalsGone = 1u << 4,
  kSounds = 1u << 5,
  kAllLists = 0x3f,
};

}  // namespace

void appendSnapshot(std::vector<std::uint8_t>& out, const SnapshotMessage& m) {
  sim::ByteWriter w(out);
  const auto flag = [](bool present, std::uint8_t bit) { return present ? bit : std::uint8_t{0}; };
  w.u8(flag(!m.own.empty(), kOwn) | flag(!m.players.empty(), kPlayers) |
       flag(!m.playersGone.empty(), kPlayersGone) | flag(!m.animals.empty(), kAnimals) |
       flag(!m.animalsGone.empty(), kAnimalsGone) | flag(!m.sounds.empty(), kSounds));
  w.varint(m.sequence);
  w.varint(m.baseline == 0 ? 0 : m.sequence - m.baseline);
  w.varint64(m.tick);
  w.varint(m.ownInput);
  const auto bytes = [&](std::span<const std::uint8_t> list) {
    if (list.empty()) return;
    w.varint(static_cast<std::uint32_t>(list.size()));
    out.insert(out.end(), list.begin(), list.end());
  };
  const auto ids = [&](std::span<const std::uint32_t> list) {
    if (list.empty()) return;
    w.varint(static_cast<std::uint32_t>(list.size()));
    for (std::uint32_t id : list) w.varint(id);
  };
  bytes(m.own);
  bytes(m.players);
  ids(m.playersGone);
  bytes(m.animals);
  ids(m.animalsGone);
  bytes(m.sounds);
}

sim::Result<SnapshotMessage> decodeSnapshot(std::span<const std::uint8_t> data, std::vector<std::uint32_t>& gone) {
  sim::ByteReader r(data, "Snapshot");
  SnapshotMessage m;
  const std::uint8_t flags = r.u8();
  if ((flags & ~kAllLists) != 0) r.fail("unknown flags " + std::to_string(flags));
  m.sequence = r.varint();
  const std::uint32_t back = r.varint();
  m.tick = r.varint64();
  m.ownInput = r.varint();
  if (r.ok() && m.sequence == 0) r.fail("sequence 0");
  if (r.ok() && back >= m.sequence) r.fail("baseline " + std::to_string(back) + " before sequence " +
                                           std::to_string(m.sequence));
  m.baseline = back == 0 ? 0 : m.sequence - back;
  const auto bytes = [&](std::uint8_t bit, const char* name) -> std::span<const std::uint8_t> {
    if (!(flags & bit) || !r.ok()) return {};
    const std::uint32_t n = r.varint();
    if (r.ok() && n == 0) r.fail(std::string(name) + " present but empty");
    return r.bytes(n);
  };
  // Both gone lists go into `gone`, which is sized once so the spans stay valid.
  gone.clear();
  gone.reserve(2 * kMaxEntitiesInView);
  const auto ids = [&](std::uint8_t bit, const char* name) -> std::span<const std::uint32_t> {
    if (!(flags & bit) || !r.ok()) return {};
    const std::uint32_t n = r.varint();
    if (r.ok() && (n == 0 || n > kMaxEntitiesInView)) {
      r.fail(std::string(name) + " of " + std::to_string(n) + " ids (1.." + std::to_string(kMaxEntitiesInView) +
             ")");
    }
    if (!r.ok()) return {};
    const std::size_t first = gone.size();
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) gone.push_back(r.varint());
    return std::span<const std::uint32_t>(gone).subspan(first);
  };
  m.own = bytes(kOwn, "own");
  m.players = bytes(kPlayers, "players");
  m.playersGone = ids(kPlayersGone, "players_gone");
  m.animals = bytes(kAnimals, "animals");
  m.animalsGone = ids(kAnimalsGone, "animals_gone");
  m.sounds = bytes(kSounds, "sounds");
  if (auto done = r.finish(); !done) return sim::makeError(done.error().message);
  return m;
}

}  // namespace loam::net
