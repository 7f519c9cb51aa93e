#include "server/admin.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/systems/weather.h"

namespace loam::server {

namespace {

std::vector<std::string> splitWords(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

/// Everything after the first n words (keeps the spacing of free text).
std::string restAfter(const std::string& line, std::size_t n) {
  std::size_t i = 0;
  for (std::size_t k = 0; k < n; ++k) {
    while (i < line.size() && line[i] == ' ') ++i;
    while (i < line.size() && line[i] != ' ') ++i;
  }
  while (i < line.size() && line[i] == ' ') ++i;
  std::string rest = line.substr(i);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r' || rest.back() == '\n')) rest.pop_back();
  return rest;
}

bool parseUnsigned(const std::string& s, std::uint64_t max, std::uint64_t& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && !s.empty() && out <= max;
}

bool isAddress(const std::string& s) {
  in_addr a{};
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

AdminReply ok(std::string text) { return {true, std::move(text)}; }
AdminReply refused(std::string text) { return {false, std::move(text)}; }

const net::PeerInfo* findPlayer(const std::vector<net::PeerInfo>& players, const std::string& who) {
  for (const net::PeerInfo& p : players) {
    if (p.name == who || std::to_string(p.id.value) == who) return &p;
  }
  return nullptr;
}

void queueCommand(AdminContext& ctx, sim::CommandBody body) {
  ctx.commands->push_back(sim::Command{sim::kServerPlayer, ++*ctx.commandSequence, std::move(body)});
}

constexpr const char* kHelp =
    "commands: players | say TEXT | kick NAME|ID [reason] | ban NAME|ADDRESS [reason] | unban NAME|ADDRESS | "
    "save | time HH:MM | weather RAIN(0..1000) WIND_DIR(degrees) WIND_SPEED(cm/s) | stats";

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
  if (entries_.size() > 10000) entries_.clear();  // bounded memory under a spray of addresses
  Entry& e = entries_[address];
  std::erase_if(e.failures, [&](Clock::time_point t) { return now - t > std::chrono::minutes(1); });
  e.failures.push_back(now);
  if (static_cast<int>(e.failures.size()) >= kMaxFailures) {
    e.blockedUntil = now + std::chrono::minutes(1);
    e.failures.clear();
  }
}

BanList::BanList(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> w = splitWords(line);
    if (w.size() < 2 || w[0].starts_with("#")) continue;
    bans_[w[1]] = restAfter(line, 2);
  }
}

bool BanList::write() const {
  std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "# loam-server bans: name|address TARGET reason\n";
    for (const auto& [target, reason] : bans_) {
      out << (isAddress(target) ? "address " : "name ") << target << ' ' << reason << '\n';
    }
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path_.c_str()) == 0;
}

bool BanList::add(const std::string& target, const std::string& reason) {
  bans_[target] = reason;
  return write();
}

bool BanList::remove(const std::string& target) {
  if (bans_.erase(target) == 0) return false;
  write();
  return true;
}

std::string BanList::check(const std::string& address, const std::string& name) const {
  auto it = bans_.find(address);
  if (it == bans_.end() && !name.empty()) it = bans_.find(name);
  if (it == bans_.end()) return "";
  return "banned" + (it->second.empty() ? std::string() : ": " + it->second);
}

std::string adminVerb(const std::string& line) {
  std::vector<std::string> w = splitWords(line);
  return w.empty() ? std::string() : w[0];
}

AdminReply runAdminCommand(const std::string& line, AdminContext& ctx) {
  std::vector<std::string> w = splitWords(line);
  if (w.empty() || w[0] == "help") return w.empty() ? refused(kHelp) : ok(kHelp);
  const std::string& verb = w[0];
  if (verb == "players") {
    std::vector<net::PeerInfo> players = ctx.host->players();
    std::string text = std::to_string(players.size()) + " player(s)";
    for (const net::PeerInfo& p : players) {
      // Appends one by one: GCC 12 warns falsely (-Wrestrict) on "\n" + std::to_string(...).
      text += '\n';
      text += std::to_string(p.id.value);
      text += ' ';
      text += p.name;
      text += ' ';
      text += p.address;
      text += ' ';
      text += std::to_string(p.rttMs);
      text += " ms";
    }
    return ok(text);
  }
  if (verb == "say") {
    std::string text = restAfter(line, 1);
    if (text.empty() || text.size() > sim::kMaxChatBytes) {
      return refused("usage: say TEXT (1.." + std::to_string(sim::kMaxChatBytes) + " bytes)");
    }
    queueCommand(ctx, sim::ChatCommand{sim::ChatText::from(text)});
    return ok("said: " + text);
  }
  if (verb == "kick") {
    if (w.size() < 2) return refused("usage: kick NAME|ID [reason]");
    std::vector<net::PeerInfo> players = ctx.host->players();
    const net::PeerInfo* p = findPlayer(players, w[1]);
    if (p == nullptr) return refused("no player " + w[1]);
    std::string reason = restAfter(line, 2);
    ctx.host->kick(p->id, reason.empty() ? "by an admin" : reason);
    return ok("kicked " + std::to_string(p->id.value) + " " + p->name);
  }
  if (verb == "ban") {
    if (w.size() < 2) return refused("usage: ban NAME|ADDRESS [reason]");
    std::string reason = restAfter(line, 2);
    if (!ctx.bans->add(w[1], reason)) return refused("cannot write " + ctx.bans->path());
    // Whoever is on now under that name or address goes too.
    int kicked = 0;
    for (const net::PeerInfo& p : ctx.host->players()) {
      std::string ip = p.address.substr(0, p.address.rfind(':'));
      if (p.name == w[1] || ip == w[1]) kicked += ctx.host->kick(p.id, "banned") ? 1 : 0;
    }
    return ok("banned " + w[1] + " (" + std::to_string(kicked) + " kicked)");
  }
  if (verb == "unban") {
    if (w.size() != 2) return refused("usage: unban NAME|ADDRESS");
    return ctx.bans->remove(w[1]) ? ok("unbanned " + w[1]) : refused("not banned: " + w[1]);
  }
  if (verb == "save") {
    std::string err = ctx.saveNow();
    return err.empty() ? ok("save started") : refused(err);
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
  if (verb == "stats") return ok(ctx.stats());
  return refused("unknown command '" + verb + "'; " + kHelp);
}

}  // namespace loam::server
