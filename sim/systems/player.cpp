// Players' part of the state codec, the hashes and the difference reports: each walks
// kPlayerStateFields and kRateBudgetFields (sim/systems/player.h).
#include "sim/systems/player.h"

#include "sim/core/internal/format.h"

namespace loam::sim {

namespace {
constexpr std::size_t kPlayerMinBytes = 4 + 1 + encodedSize(kPlayerStateFields) + encodedSize(kRateBudgetFields);
}  // namespace

void hashPlayer(const Player& p, StateHasher& h) noexcept {
  h.add(p.id.value);
  h.add(p.name.view());
  hashFields(h, p.motion, kPlayerStateFields);
  hashFields(h, p.budget, kRateBudgetFields);
}

void encodePlayers(const std::vector<Player>& players, std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.header(static_cast<std::uint32_t>(players.size()));
  for (const Player& p : players) {
    w.u32(p.id.value);
    w.u8(p.name.length);
    for (std::size_t i = 0; i < p.name.length; ++i) w.u8(static_cast<std::uint8_t>(p.name.bytes[i]));
    writeFields(w, p.motion, kPlayerStateFields);
    writeFields(w, p.budget, kRateBudgetFields);
  }
}

Result<void> decodePlayers(std::span<const std::uint8_t> bytes, std::vector<Player>& players) {
  ByteReader r(bytes, "players");
  const std::uint32_t n = r.header(kPlayerMinBytes);
  std::vector<Player> out;
  out.reserve(n);
  for (std::uint32_t k = 0; k < n && r.ok(); ++k) {
    Player p;
    p.id.value = r.u32();
    if (r.ok() && p.id.value == 0) r.fail(internal::format("player %u: id 0", k));
    if (r.ok() && !out.empty() && !(out.back().id < p.id)) r.fail(internal::format("player %u: ids not increasing", k));
    const std::uint8_t len = r.u8();
    if (r.ok() && len > kMaxNameBytes) r.fail(internal::format("player %u: name of %u bytes", k, unsigned{len}));
    if (!r.ok()) break;
    p.name.length = len;
    for (std::size_t i = 0; i < len; ++i) p.name.bytes[i] = static_cast<char>(r.u8());
    const std::uint8_t badFlags = readFields(r, p.motion, kPlayerStateFields);
    if (r.ok() && badFlags != 0) r.fail(internal::format("player %u: flags %u", k, unsigned{badFlags}));
    if (r.ok() && p.motion.impactSpeed < 0) r.fail(internal::format("player %u: negative impact speed", k));
    readFields(r, p.budget, kRateBudgetFields);
    out.push_back(p);
  }
  if (Result<void> e = r.finish(); !e) return e;
  players = std::move(out);
  return {};
}

std::optional<std::string> diffPlayers(const std::vector<Player>& expected, const std::vector<Player>& actual) {
  if (expected.size() != actual.size()) {
    return internal::format("players.size: expected %zu, actual %zu", expected.size(), actual.size());
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Player& pe = expected[i];
    const Player& pa = actual[i];
    if (pe == pa) continue;
    auto report = [&](const char* prefix, const FieldDifference& d) {
      return internal::format("player %u %s%s: expected %lld, actual %lld", pe.id.value, prefix, d.name.c_str(),
                              static_cast<long long>(d.expected), static_cast<long long>(d.actual));
    };
    if (auto d = firstDifferentField(pe.motion, pa.motion, kPlayerStateFields)) return report("", *d);
    if (auto d = firstDifferentField(pe.budget, pa.budget, kRateBudgetFields)) return report("budget.", *d);
    if (pe.name.length != pa.name.length) return report("", {"name.length", pe.name.length, pa.name.length});
    if (pe.id != pa.id) return report("", {"id", pe.id.value, pa.id.value});
    return internal::format("player %u name: expected '%.*s', actual '%.*s'", pe.id.value,
                            static_cast<int>(pe.name.length), pe.name.bytes.data(), static_cast<int>(pa.name.length),
                            pa.name.bytes.data());
  }
  return std::nullopt;
}

}  // namespace loam::sim
