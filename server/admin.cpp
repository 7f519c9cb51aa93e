#include "server/admin.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <span>
#include <utility>

#include "net/player_name.h"
#include "sim/save/save.h"
#include "sim/systems/motion.h"
#include "sim/systems/weather.h"

namespace loam::server {

namespace {

bool parseUnsigned(const std::string& s, std::uint64_t max, std::uint64_t& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && !s.empty() && out <= max;
}

bool isAddress(const std::string& s) {
  in_addr a{};
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

/// The key a ban is filed under: an address as written, a name folded.
std::string banKey(const std::string& target) { return isAddress(target) ? target : net::foldName(target); }

/// Everything after offset (the end of a word), without the spaces around it; free
/// text keeps its own spacing and quotes.
std::string restFrom(const std::string& line, std::size_t offset) {
  std::size_t i = std::min(offset, line.size());
  while (i < line.size() && line[i] == ' ') ++i;
  std::string rest = line.substr(i);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r' || rest.back() == '\n')) rest.pop_back();
  return rest;
}

/// A number of metres: decimal, finite, the whole word. Pure.
bool parseMetres(const std::string& s, double& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && !s.empty() && std::isfinite(out);
}

std::string metresText(double m) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", m);
  return buf;
}

AdminReply ok(std::string text) { return {true, std::move(text)}; }
AdminReply refused(std::string text) { return {false, std::move(text)}; }

void queueCommand(AdminContext& ctx, sim::CommandBody body) {
  ctx.commands->push_back(sim::Command{sim::kServerPlayer, ++*ctx.commandSequence, std::move(body)});
}

constexpr const char* kHelp =
    "commands: players | say TEXT | kick #ID|NAME [reason] | ban #ID|NAME|ADDRESS [reason] | unban NAME|ADDRESS | "
    "save | time HH:MM | weather RAIN(0..1000) WIND_DIR(degrees) WIND_SPEED(cm/s) | "
    "teleport #ID|NAME X Z [Y] (metres; without Y: standing on the ground) | stats";

// teleport #ID|NAME X Z [Y]: checked here against the world's bounds (and, without Y,
// the ground: reading the column generates it on a streamed world), then queued as a
// TeleportCommand, which the step checks again and applies (sim/step/commands.h).
AdminReply teleport(const std::vector<std::string>& w, AdminContext& ctx) {
  const std::string usage = "usage: teleport #ID|NAME X Z [Y] (metres; without Y the player stands on the ground)";
  if (w.size() != 4 && w.size() != 5) return refused(usage);
  auto p = findPlayer(ctx.host->players(), w[1]);
  if (!p) return refused(p.error().message);
  double metres[3] = {0, 0, 0};  // x, z, y
  for (std::size_t i = 2; i < w.size(); ++i) {
    if (!parseMetres(w[i], metres[i - 2])) return refused("'" + w[i] + "' is not a number of metres; " + usage);
  }
  const sim::SimState& state = ctx.host->state();
  const sim::WorldBounds& b = state.world.bounds();
  constexpr double kMetresPerBrick = double{sim::kBrickSize} / sim::kVoxelsPerMetre;
  constexpr double kHalfWidth = double{sim::kPlayerHalfWidth} / sim::kUnitsPerMetre;
  constexpr double kHeight = double{sim::kPlayerHeight} / sim::kUnitsPerMetre;
  const double lo[3] = {b.minBrick.x * kMetresPerBrick, b.minBrick.z * kMetresPerBrick, b.minBrick.y * kMetresPerBrick};
  const double hi[3] = {b.maxBrick.x * kMetresPerBrick, b.maxBrick.z * kMetresPerBrick, b.maxBrick.y * kMetresPerBrick};
  const bool hasY = w.size() == 5;
  const bool inside = metres[0] - kHalfWidth >= lo[0] && metres[0] + kHalfWidth <= hi[0] &&
                      metres[1] - kHalfWidth >= lo[1] && metres[1] + kHalfWidth <= hi[1] &&
                      (!hasY || (metres[2] >= lo[2] && metres[2] + kHeight <= hi[2]));
  if (!inside) {
    return refused("outside the world: x " + metresText(metres[0]) + ", z " + metresText(metres[1]) +
                   (hasY ? ", y " + metresText(metres[2]) : std::string()) + "; the player's box must lie within x " +
                   metresText(lo[0]) + ".." + metresText(hi[0]) + ", z " + metresText(lo[1]) + ".." +
                   metresText(hi[1]) + ", y " + metresText(lo[2]) + ".." + metresText(hi[2]) + " m");
  }
  auto units = [](double m) { return static_cast<std::int32_t>(std::llround(m * sim::kUnitsPerMetre)); };
  sim::TeleportCommand tc{p->id, {units(metres[0]), units(metres[2]), units(metres[1])}, !hasY};
  if (!hasY) {
    // The step finds the ground again when it applies the command; this only answers.
    const auto ground = sim::groundHeight(state.world, state.lut, sim::voxelOfUnit(tc.position.x),
                                          sim::voxelOfUnit(tc.position.z));
    if (!ground) return refused("nothing to stand on at x " + metresText(metres[0]) + ", z " + metresText(metres[1]));
    metres[2] = static_cast<double>(*ground) / sim::kUnitsPerMetre;
  }
  if (!sim::playerBoxInside(b, {tc.position.x, hasY ? tc.position.y : units(metres[2]), tc.position.z}))
    return refused("outside the world (rounded to units)");
  queueCommand(ctx, tc);
  return ok("teleporting #" + std::to_string(p->id.value) + " " + quoteWord(p->name) + " to x " +
            metresText(metres[0]) + ", y " + metresText(metres[2]) + ", z " + metresText(metres[1]) + " m" +
            (hasY ? "" : " (on the ground)"));
}

}  // namespace

std::future<AdminReply> AdminQueue::submit(std::string who, std::string line) {
  AdminRequest r;
  r.who = std::move(who);
  r.line = std::move(line);
  std::future<AdminReply> f = r.reply.get_future();
  std::lock_guard lock(mutex_);
  pending_.push_back(std::move(r));
  return f;
}

void AdminQueue::tryTake(std::vector<AdminRequest>& out) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || pending_.empty()) return;
  for (AdminRequest& r : pending_) out.push_back(std::move(r));
  pending_.clear();
}

bool tokensEqual(std::string_view a, std::string_view b) noexcept {
  // Walks the longer length whatever the contents; the length difference is folded in.
  std::size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

bool AdminRateLimiter::blocked(const std::string& address, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(address);
  return it != entries_.end() && now < it->second.blockedUntil;
}

void AdminRateLimiter::failure(const std::string& address, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(address);
  if (it == entries_.end()) {
    // Bounded memory under a spray of addresses: the stalest entry makes room, so a
    // blocked address stays blocked however many others fail.
    if (entries_.size() >= kMaxAddresses) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    it = entries_.emplace(address, Entry{}).first;
    it->second.age = order_.insert(order_.end(), address);
  } else {
    order_.splice(order_.end(), order_, it->second.age);
  }
  Entry& e = it->second;
  std::erase_if(e.failures, [&](Clock::time_point t) { return now - t > std::chrono::minutes(1); });
  e.failures.push_back(now);
  if (static_cast<int>(e.failures.size()) >= kMaxFailures) {
    e.blockedUntil = now + std::chrono::minutes(1);
    e.failures.clear();
  }
}

std::size_t AdminRateLimiter::size() {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

sim::Result<std::vector<std::string>> splitCommandLine(const std::string& line, std::vector<std::size_t>* ends) {
  std::vector<std::string> words;
  if (ends != nullptr) ends->clear();
  std::size_t i = 0;
  for (;;) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n')) ++i;
    if (i >= line.size()) break;
    std::string w;
    if (line[i] == '"') {
      const std::size_t open = i++;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < line.size() && (line[i] == '"' || line[i] == '\\')) c = line[i++];
        w += c;
      }
      if (!closed) return sim::makeError("unclosed quote at column " + std::to_string(open + 1));
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '\n') w += line[i++];
    }
    words.push_back(std::move(w));
    if (ends != nullptr) ends->push_back(i);
  }
  return words;
}

std::string quoteWord(const std::string& word) {
  bool plain = !word.empty() && word.find_first_of(" \t\r\n\"\\") == std::string::npos;
  if (plain) return word;
  std::string out = "\"";
  for (char c : word) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

sim::Result<net::PeerInfo> findPlayer(const std::vector<net::PeerInfo>& players, const std::string& who) {
  if (who.starts_with("#")) {
    std::uint64_t id = 0;
    if (!parseUnsigned(who.substr(1), UINT32_MAX, id)) return sim::makeError("'" + who + "' is not #ID (#7)");
    for (const net::PeerInfo& p : players) {
      if (p.id.value == id) return p;
    }
    return sim::makeError("no player " + who);
  }
  const std::string key = net::foldName(who);
  std::vector<const net::PeerInfo*> found;
  for (const net::PeerInfo& p : players) {
    if (net::foldName(p.name) == key) found.push_back(&p);
  }
  if (found.empty()) {
    bool digits = !who.empty() && std::all_of(who.begin(), who.end(), [](char c) { return c >= '0' && c <= '9'; });
    return sim::makeError("no player named " + quoteWord(who) + (digits ? " (an id is written #" + who + ")" : ""));
  }
  if (found.size() > 1) {
    std::string ids;
    for (const net::PeerInfo* p : found) ids += (ids.empty() ? "#" : ", #") + std::to_string(p->id.value);
    return sim::makeError("ambiguous: " + std::to_string(found.size()) + " players named " + quoteWord(who) + " (" +
                          ids + "); use #ID");
  }
  return *found.front();
}

BanList::BanList(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::size_t> ends;
    auto w = splitCommandLine(line, &ends);
    if (!w || w->size() < 2 || (*w)[0].starts_with("#")) continue;
    bans_[banKey((*w)[1])] = {(*w)[1], restFrom(line, ends[1])};
  }
}

sim::Result<void> BanList::write() const {
  std::string text = "# loam-server bans: name|address TARGET reason\n";
  for (const auto& [key, ban] : bans_) {
    text += (isAddress(ban.first) ? "address " : "name ") + quoteWord(ban.first) + ' ' + ban.second + '\n';
  }
  auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  if (auto w = sim::writeSaveFile(path_, bytes); !w) return sim::makeError("cannot save bans: " + w.error().message);
  return {};
}

sim::Result<void> BanList::add(const std::string& target, const std::string& reason) {
  const std::string key = banKey(target);
  auto before = bans_.find(key);
  std::optional<std::pair<std::string, std::string>> old;
  if (before != bans_.end()) old = before->second;
  bans_[key] = {target, reason};
  if (auto w = write(); !w) {
    if (old) {
      bans_[key] = *old;
    } else {
      bans_.erase(key);
    }
    return w;
  }
  return {};
}

sim::Result<bool> BanList::remove(const std::string& target) {
  auto it = bans_.find(banKey(target));
  if (it == bans_.end()) return false;
  auto [key, ban] = *it;
  bans_.erase(it);
  if (auto w = write(); !w) {
    bans_[key] = ban;
    return w.error();
  }
  return true;
}

std::string BanList::check(const std::string& address, const std::string& name) const {
  auto it = bans_.find(address);
  if (it == bans_.end() && !name.empty()) it = bans_.find(net::foldName(name));
  if (it == bans_.end()) return "";
  return "banned" + (it->second.second.empty() ? std::string() : ": " + it->second.second);
}

std::string adminVerb(const std::string& line) {
  const std::size_t at = std::min(line.find_first_not_of(" \t"), line.size());
  return line.substr(at, std::min(line.find_first_of(" \t\r\n", at), line.size()) - at);
}

AdminReply runAdminCommand(const std::string& line, AdminContext& ctx) {
  // say takes its text as typed, quotes and all.
  const std::size_t verbAt = std::min(line.find_first_not_of(" \t"), line.size());
  const std::size_t verbEnd = std::min(line.find_first_of(" \t", verbAt), line.size());
  if (line.compare(verbAt, verbEnd - verbAt, "say") == 0) {
    std::string text = restFrom(line, verbEnd);
    if (text.empty() || text.size() > sim::kMaxChatBytes) {
      return refused("usage: say TEXT (1.." + std::to_string(sim::kMaxChatBytes) + " bytes)");
    }
    queueCommand(ctx, sim::ChatCommand{sim::ChatText::from(text)});
    return ok("said: " + text);
  }
  std::vector<std::size_t> ends;
  auto split = splitCommandLine(line, &ends);
  if (!split) return refused(split.error().message + "; " + kHelp);
  const std::vector<std::string>& w = *split;
  if (w.empty() || w[0] == "help") return w.empty() ? refused(kHelp) : ok(kHelp);
  const std::string& verb = w[0];
  auto restAfter = [&](std::size_t n) { return n <= ends.size() ? restFrom(line, ends[n - 1]) : std::string(); };
  if (verb == "players") {
    std::vector<net::PeerInfo> players = ctx.host->players();
    std::string text = std::to_string(players.size()) + " player(s)";
    for (const net::PeerInfo& p : players) {
      // Appends one by one: GCC 12 warns falsely (-Wrestrict) on "\n" + std::to_string(...).
      // "#ID NAME": both forms a command takes back (the name quoted when it must be).
      text += "\n#";
      text += std::to_string(p.id.value);
      text += ' ';
      text += quoteWord(p.name);
      text += ' ';
      text += p.address;
      text += ' ';
      text += std::to_string(p.rttMs);
      text += " ms";
    }
    return ok(text);
  }
  if (verb == "kick") {
    if (w.size() < 2) return refused("usage: kick #ID|NAME [reason] (quote a name with spaces: kick \"a b\")");
    auto p = findPlayer(ctx.host->players(), w[1]);
    if (!p) return refused(p.error().message);
    std::string reason = restAfter(2);
    ctx.host->kick(p->id, reason.empty() ? "by an admin" : reason);
    return ok("kicked #" + std::to_string(p->id.value) + " " + quoteWord(p->name));
  }
  if (verb == "ban") {
    if (w.size() < 2) return refused("usage: ban #ID|NAME|ADDRESS [reason]");
    std::string target = w[1];
    if (target.starts_with("#")) {  // a connected player's name
      auto p = findPlayer(ctx.host->players(), target);
      if (!p) return refused(p.error().message);
      target = p->name;
    }
    std::string reason = restAfter(2);
    if (auto added = ctx.bans->add(target, reason); !added) return refused(added.error().message + "; nothing banned");
    // Whoever is on now under that name or address goes too.
    const bool byAddress = isAddress(target);
    const std::string key = byAddress ? target : net::foldName(target);
    int kicked = 0;
    for (const net::PeerInfo& p : ctx.host->players()) {
      std::string ip = p.address.substr(0, p.address.rfind(':'));
      bool hit = byAddress ? ip == key : net::foldName(p.name) == key;
      if (hit) kicked += ctx.host->kick(p.id, "banned") ? 1 : 0;
    }
    return ok("banned " + quoteWord(target) + " (" + std::to_string(kicked) + " kicked)");
  }
  if (verb == "unban") {
    if (w.size() != 2) return refused("usage: unban NAME|ADDRESS (quote a name with spaces)");
    auto removed = ctx.bans->remove(w[1]);
    if (!removed) return refused(removed.error().message + "; still banned");
    return *removed ? ok("unbanned " + quoteWord(w[1])) : refused("not banned: " + quoteWord(w[1]));
  }
  if (verb == "save") {
    std::string err = ctx.saveNow();
    return err.empty() ? ok("commit started") : refused(err);
  }
  if (verb == "time") {
    std::uint64_t hh = 0, mm = 0;
    auto colon = w.size() == 2 ? w[1].find(':') : std::string::npos;
    if (colon == std::string::npos || !parseUnsigned(w[1].substr(0, colon), 23, hh) ||
        !parseUnsigned(w[1].substr(colon + 1), 59, mm)) {
      return refused("usage: time HH:MM");
    }
    std::uint64_t day = ctx.host->state().weather.dayLength;
    auto t = static_cast<std::uint32_t>((hh * 60 + mm) * day / (24 * 60));
    queueCommand(ctx, sim::SetTimeCommand{t});
    return ok("time set to " + w[1]);
  }
  if (verb == "weather") {
    std::uint64_t rain = 0, dir = 0, speed = 0;
    if (w.size() != 4 || !parseUnsigned(w[1], 1000, rain) || !parseUnsigned(w[2], 359, dir) ||
        !parseUnsigned(w[3], 65535, speed)) {
      return refused("usage: weather RAIN(0..1000) WIND_DIR(0..359 degrees) WIND_SPEED(cm/s)");
    }
    auto angle = static_cast<std::uint16_t>(dir * 65536 / 360);  // binary angle
    queueCommand(ctx, sim::SetWeatherCommand{static_cast<std::uint16_t>(rain), angle,
                                             static_cast<std::uint16_t>(speed)});
    return ok("weather set");
  }
  if (verb == "teleport") return teleport(w, ctx);
  if (verb == "stats") return ok(ctx.stats());
  return refused("unknown command '" + verb + "'; " + kHelp);
}

}  // namespace loam::server
