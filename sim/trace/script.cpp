#include "sim/trace/script.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "sim/core/internal/format.h"
#include "sim/world/material.h"
#include "sim/systems/motion.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/water.h"

namespace loam::sim {

namespace {

enum class Ground : std::uint8_t { Solid, Above, Burnable };

constexpr std::int32_t kArriveDistance = unitsFromMetres(0.5);
constexpr std::int32_t kStuckTicks = 20;  // no progress for this long while walking: jump

// Concatenates parts (avoids operator+ chains, which trip GCC 12's -Wrestrict).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string r;
  for (std::string_view p : parts) r.append(p);
  return r;
}

std::vector<std::string_view> splitWords(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parseDouble(std::string_view s, double& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out == out && out < 1e12 && out > -1e12;
}

bool parseUint(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::int32_t unitsOf(double metres) {
  // Saturated: parseDouble allows +-1e12 m, far past int32 units (a cast would be UB).
  const double u = std::clamp(metres * kUnitsPerMetre, -2147483648.0, 2147483647.0);
  return static_cast<std::int32_t>(u < 0 ? u - 0.5 : u + 0.5);
}

// "start", "<ticks>", "<seconds>s".
bool parseTime(std::string_view s, std::uint64_t& ticks) {
  if (s == "start") {
    ticks = 0;
    return true;
  }
  if (!s.empty() && s.back() == 's') {
    double sec = 0;
    if (!parseDouble(s.substr(0, s.size() - 1), sec) || sec < 0 || sec > 1e7) return false;
    ticks = static_cast<std::uint64_t>(sec * kTicksPerSecond + 0.5);
    return true;
  }
  return parseUint(s, ticks);
}

// "x,y,z" | "x,z" | "ahead:D" | "here".
bool parsePos(std::string_view s, ScriptPos& pos) {
  pos = ScriptPos{};
  if (s == "here") {
    pos.relative = true;
    pos.onGround = true;
    return true;
  }
  if (s.substr(0, 6) == "ahead:") {
    double d = 0;
    if (!parseDouble(s.substr(6), d) || d < 0 || d > 10) return false;
    pos.relative = true;
    pos.onGround = true;
    pos.x = unitsOf(d);
    return true;
  }
  double v[3];
  int n = 0;
  std::size_t i = 0;
  for (;;) {
    if (n == 3) return false;  // a fourth component
    const std::size_t j = s.find(',', i);
    const std::string_view part = s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    if (!parseDouble(part, v[n])) return false;
    ++n;
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  if (n == 2) {
    pos.x = unitsOf(v[0]);
    pos.z = unitsOf(v[1]);
    pos.onGround = true;
    return true;
  }
  if (n == 3) {
    pos.x = unitsOf(v[0]);
    pos.y = unitsOf(v[1]);
    pos.z = unitsOf(v[2]);
    return true;
  }
  return false;
}

bool parseToolSize(std::string_view s, std::int32_t& voxels) {
  if (s == "5") voxels = 1;
  else if (s == "10") voxels = 2;
  else if (s == "20") voxels = 4;
  else if (s == "40") voxels = 8;
  else return false;
  return true;
}

bool parseFace(std::string_view s, Face& f) {
  static constexpr std::pair<std::string_view, Face> kFaces[] = {{"-x", Face::NegX}, {"+x", Face::PosX},
                                                                  {"-y", Face::NegY}, {"+y", Face::PosY},
                                                                  {"-z", Face::NegZ}, {"+z", Face::PosZ}};
  for (const auto& [name, face] : kFaces) {
    if (s == name) {
      f = face;
      return true;
    }
  }
  return false;
}

// Binary angle of the direction (dx, dz) in the yaw convention (0 = -z, 16384 = +x).
std::uint16_t yawToward(std::int64_t dx, std::int64_t dz) {
  if (dx == 0 && dz == 0) return 0;
  // Find a in [0, 65536) with (sin a, -cos a) parallel to (dx, dz): search the
  // quadrant, then bisect on the sign of the cross product (integer, exact).
  const std::int64_t fx = dx, fz = -dz;  // forward = (sin, cos) in (fx, fz)
  std::uint32_t base;
  if (fx >= 0 && fz > 0) base = 0;
  else if (fx > 0 && fz <= 0) base = 16384;
  else if (fx <= 0 && fz < 0) base = 32768;
  else base = 49152;
  std::uint32_t lo = base, hi = base + 16384;
  // cross(a) = sin(a) * fz - cos(a) * fx grows with a through the quadrant.
  while (hi - lo > 1) {
    std::uint32_t mid = (lo + hi) / 2;
    auto a = static_cast<std::uint16_t>(mid);
    std::int64_t cross = std::int64_t{sinQ14(a)} * fz - std::int64_t{cosQ14(a)} * fx;
    if (cross < 0) lo = mid;
    else hi = mid;
  }
  return static_cast<std::uint16_t>(lo);
}

}  // namespace

Result<Script> parseScript(std::string_view text, std::string_view sourceName) {
  Script script;
  int lineNo = 0;
  std::size_t pos = 0;
  auto fail = [&](const std::string& what) {
    return makeError(internal::format("%.*s:%d: %s", static_cast<int>(sourceName.size()), sourceName.data(), lineNo,
                                      what.c_str()));
  };
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineNo;
    std::string_view lineText = raw;
    std::vector<std::string_view> w = splitWords(lineText);
    if (w.empty() || w[0][0] == '#') continue;
    // Strip a trailing comment (not for `say`, whose text may contain '#').
    ScriptLine sl;
    sl.line = lineNo;
    std::size_t k = 0;
    if (w[0] == "at") {
      if (w.size() < 4) return fail("expected: at <time> <who> <action> ...");
      if (!parseTime(w[1], sl.at)) return fail(cat({"bad time '", w[1], "' (ticks, <seconds>s or start)"}));
      k = 2;
    } else if (w[0] == "every") {
      if (w.size() < 8 || w[2] != "from" || w[4] != "to") {
        return fail("expected: every <period> from <time> to <time> <who> <action> ...");
      }
      if (!parseTime(w[1], sl.every) || sl.every == 0) return fail(cat({"bad period '", w[1], "'"}));
      if (!parseTime(w[3], sl.at)) return fail(cat({"bad time '", w[3], "'"}));
      if (!parseTime(w[5], sl.until) || sl.until < sl.at) return fail(cat({"bad end time '", w[5], "'"}));
      k = 6;
    } else {
      return fail(cat({"unknown statement '", w[0], "' (expected at or every)"}));
    }
    // Who.
    std::string_view who = w[k++];
    if (who == "server") {
      sl.who = 0;
    } else if (who == "all") {
      sl.all = true;
    } else if (who.size() > 1 && who[0] == 'p') {
      std::uint64_t id = 0;
      if (!parseUint(who.substr(1), id) || id == 0 || id > 0xFFFFFFFFu) return fail(cat({"bad player '", who, "'"}));
      sl.who = static_cast<std::uint32_t>(id);
    } else {
      return fail(cat({"bad subject '", who, "' (p<N>, all or server)"}));
    }
    std::string_view act = w[k++];
    std::vector<std::string_view> args(w.begin() + static_cast<std::ptrdiff_t>(k), w.end());
    // Comments after arguments (except for say).
    if (act != "say") {
      for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i][0] == '#') {
          args.resize(i);
          break;
        }
      }
    }
    auto needArgs = [&](std::size_t lo, std::size_t hi, const char* usage) -> std::optional<Error> {
      if (args.size() < lo || args.size() > hi) return fail(cat({"usage: ", usage}));
      return std::nullopt;
    };
    const bool playerAction = act != "weather" && act != "time";
    const bool serverToo = act == "say" || act == "dig" || act == "place" || act == "pour" || act == "ignite";
    if (playerAction && sl.who == 0 && !sl.all && !serverToo) {
      return fail(cat({"'", act, "' needs a player (p<N> or all), not server"}));
    }
    if (!playerAction && (sl.who != 0 || sl.all)) return fail(cat({"'", act, "' is a server action"}));
    if (act == "join") {
      if (auto e = needArgs(1, 1, "join <name>")) return *e;
      if (args[0].size() > kMaxNameBytes) return fail("name longer than 31 bytes");
      sl.action = ScriptAction::Join;
      sl.text = std::string(args[0]);
    } else if (act == "leave") {
      if (auto e = needArgs(0, 0, "leave")) return *e;
      sl.action = ScriptAction::Leave;
    } else if (act == "walkto") {
      sl.action = ScriptAction::WalkTo;
      for (std::string_view a : args) {
        if (a == "run") {
          sl.run = true;
        } else if (a == "crouch") {
          sl.crouch = true;
        } else {
          ScriptPos p;
          if (!parsePos(a, p) || p.relative) return fail(cat({"bad waypoint '", a, "' (x,z or x,y,z metres)"}));
          sl.waypoints.push_back(p);
        }
      }
      if (sl.waypoints.empty()) return fail("usage: walkto <x,z>... [run] [crouch]");
    } else if (act == "stop") {
      if (auto e = needArgs(0, 0, "stop")) return *e;
      sl.action = ScriptAction::Stop;
    } else if (act == "jump") {
      if (auto e = needArgs(0, 0, "jump")) return *e;
      sl.action = ScriptAction::Jump;
    } else if (act == "dig") {
      if (auto e = needArgs(2, 2, "dig <pos> <5|10|20|40>")) return *e;
      sl.action = ScriptAction::Dig;
      if (!parsePos(args[0], sl.pos)) return fail(cat({"bad position '", args[0], "'"}));
      if (!parseToolSize(args[1], sl.size)) return fail(cat({"bad tool radius '", args[1], "' (5, 10, 20 or 40)"}));
    } else if (act == "place") {
      if (auto e = needArgs(4, 4, "place <pos> <face> <5|10|20|40> <material>")) return *e;
      sl.action = ScriptAction::Place;
      if (!parsePos(args[0], sl.pos)) return fail(cat({"bad position '", args[0], "'"}));
      if (!parseFace(args[1], sl.face)) return fail(cat({"bad face '", args[1], "' (+x -x +y -y +z -z)"}));
      if (!parseToolSize(args[2], sl.size)) return fail(cat({"bad size '", args[2], "' (5, 10, 20 or 40)"}));
      sl.material = std::string(args[3]);
    } else if (act == "pour") {
      if (auto e = needArgs(2, 2, "pour <pos> <litres>")) return *e;
      sl.action = ScriptAction::Pour;
      if (!parsePos(args[0], sl.pos)) return fail(cat({"bad position '", args[0], "'"}));
      double litres = 0;
      const double maxLitres = static_cast<double>(kMaxPourAmount) / (kWaterPerVoxel * 8.0);
      if (!parseDouble(args[1], litres) || litres <= 0 || litres > maxLitres) {
        return fail(internal::format("bad amount '%.*s' (litres, > 0 and <= %g)", static_cast<int>(args[1].size()),
                                     args[1].data(), maxLitres));
      }
      // 1 litre = 8 voxels of 5 cm.
      sl.size = static_cast<std::int32_t>(litres * kWaterPerVoxel * 8.0 + 0.5);
      if (sl.size < 1) sl.size = 1;
    } else if (act == "ignite") {
      if (auto e = needArgs(1, 1, "ignite <pos>")) return *e;
      sl.action = ScriptAction::Ignite;
      if (!parsePos(args[0], sl.pos)) return fail(cat({"bad position '", args[0], "'"}));
    } else if (act == "weather") {
      if (auto e = needArgs(3, 3, "weather <rain 0..1> <wind-from-degrees> <wind m/s>")) return *e;
      sl.action = ScriptAction::Weather;
      double rain = 0, from = 0, speed = 0;
      if (!parseDouble(args[0], rain) || rain < 0 || rain > 1) return fail("rain must be 0..1");
      if (!parseDouble(args[1], from) || from < -360 || from > 720) return fail("wind direction must be degrees");
      if (!parseDouble(args[2], speed) || speed < 0 || speed > 100) return fail("wind must be 0..100 m/s");
      sl.a = static_cast<std::int32_t>(rain * 1000 + 0.5);
      double toward = (from + 180.0) * (65536.0 / 360.0);
      sl.b = static_cast<std::int32_t>(static_cast<std::int64_t>(toward + 0.5) & 0xFFFF);
      sl.c = static_cast<std::int32_t>(speed * 100 + 0.5);
    } else if (act == "time") {
      if (auto e = needArgs(1, 1, "time <hour 0..24>")) return *e;
      sl.action = ScriptAction::Time;
      double hour = 0;
      if (!parseDouble(args[0], hour) || hour < 0 || hour >= 24) return fail("hour must be 0..24");
      sl.hour = hour;
    } else if (act == "say") {
      sl.action = ScriptAction::Say;
      // The text is the rest of the raw line after the action word.
      std::size_t at = lineText.find(act);
      std::string_view rest = lineText.substr(at + act.size());
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r')) rest.remove_suffix(1);
      if (rest.empty() || rest.size() > kMaxChatBytes) return fail("say needs 1..120 bytes of text");
      sl.text = std::string(rest);
    } else {
      return fail(cat({"unknown action '", act, "'"}));
    }
    if (sl.who == 0 && !sl.all && sl.pos.relative) {
      return fail("the server has no position: use x,z or x,y,z, not here / ahead:D");
    }
    script.lines.push_back(std::move(sl));
  }
  return script;
}

Result<Script> loadScript(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path + ": cannot open script");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseScript(ss.str(), path);
}

ScriptRunner::ScriptRunner(Script script) : script_(std::move(script)) {
  for (const ScriptLine& l : script_.lines) {
    if (l.action == ScriptAction::Join) walker(l.who);
  }
}

ScriptRunner::Walker& ScriptRunner::walker(std::uint32_t player) {
  auto it = std::lower_bound(walkers_.begin(), walkers_.end(), player,
                             [](const Walker& w, std::uint32_t p) { return w.player < p; });
  if (it == walkers_.end() || it->player != player) {
    Walker w;
    w.player = player;
    it = walkers_.insert(it, w);
  }
  return *it;
}

Command ScriptRunner::make(Walker& w, CommandBody body) {
  return Command{PlayerId{w.player}, ++w.sequence, std::move(body)};
}

void ScriptRunner::commandsFor(const SimState& state, std::vector<Command>& out) {
  const std::uint64_t now = state.tick;  // index of the step about to run
  // Resolve a target voxel for a player action.
  auto target = [&](const Walker& w, const ScriptPos& p, Ground ground) -> VoxelCoord {
    std::int32_t x = p.x, z = p.z;
    std::int32_t fromY = INT32_MAX;  // absolute columns: the topmost ground
    if (p.relative) {
      // Relative targets: the ground below the player's head (so not the canopy
      // above, and not the floor under a tunnel's roof).
      const Player* pl = state.findPlayer(PlayerId{w.player});
      Vec3i at = pl ? pl->motion.position : Vec3i{};
      const std::uint16_t yaw = pl ? pl->motion.yaw : 0;
      x = at.x + static_cast<std::int32_t>(std::int64_t{p.x} * sinQ14(yaw) / 16384);
      z = at.z - static_cast<std::int32_t>(std::int64_t{p.x} * cosQ14(yaw) / 16384);
      fromY = (at.y + kPlayerEyeHeight) >> kUnitShift;
    }
    if (!p.onGround) return voxelOf(Vec3i{x, p.y, z});
    const std::int32_t gy =
        topVoxelY(state.world, state.lut, x >> kUnitShift, z >> kUnitShift, fromY, ground == Ground::Burnable);
    return VoxelCoord{x >> kUnitShift, ground == Ground::Above ? gy + 1 : gy, z >> kUnitShift};
  };
  // 1. Actions whose time is now, in file order, per subject.
  std::vector<std::uint32_t> subjects;
  for (const ScriptLine& l : script_.lines) {
    if (now < l.at) continue;
    if (l.every == 0 ? now != l.at : (now > l.until || (now - l.at) % l.every != 0)) continue;
    subjects.clear();
    if (l.all) {
      for (const Walker& w : walkers_) {
        if (w.joined) subjects.push_back(w.player);
      }
    } else {
      subjects.push_back(l.who);
    }
    for (std::uint32_t who : subjects) {
      if (who == 0) {
        Walker server;
        server.player = 0;
        server.sequence = serverSequence_;
        switch (l.action) {
          case ScriptAction::Weather:
            out.push_back(make(server, SetWeatherCommand{static_cast<std::uint16_t>(l.a),
                                                         static_cast<std::uint16_t>(l.b),
                                                         static_cast<std::uint16_t>(l.c)}));
            break;
          case ScriptAction::Time: {
            const std::uint32_t day = state.weather.dayLength;
            out.push_back(make(server, SetTimeCommand{static_cast<std::uint32_t>(l.hour / 24.0 * day) % (day ? day : 1)}));
            break;
          }
          case ScriptAction::Say:
            out.push_back(make(server, ChatCommand{ChatText::from(l.text)}));
            break;
          case ScriptAction::Dig:
            out.push_back(make(server, DigCommand{target(server, l.pos, Ground::Solid), static_cast<ToolSize>(l.size)}));
            break;
          case ScriptAction::Place: {
            const auto m = state.materials->find(l.material);
            out.push_back(make(server, PlaceCommand{target(server, l.pos, Ground::Solid), l.face,
                                                    static_cast<ToolSize>(l.size), m ? *m : static_cast<MaterialId>(255)}));
            break;
          }
          case ScriptAction::Pour:
            out.push_back(make(server, PourCommand{target(server, l.pos, Ground::Above), static_cast<std::uint32_t>(l.size)}));
            break;
          case ScriptAction::Ignite:
            out.push_back(make(server, IgniteCommand{target(server, l.pos, Ground::Burnable)}));
            break;
          default:
            break;
        }
        serverSequence_ = server.sequence;
        continue;
      }
      Walker& w = walker(who);
      switch (l.action) {
        case ScriptAction::Join:
          w.joined = true;
          out.push_back(make(w, JoinCommand{PlayerName::from(l.text)}));
          break;
        case ScriptAction::Leave:
          w.joined = false;
          w.walking = false;
          out.push_back(make(w, LeaveCommand{}));
          break;
        case ScriptAction::WalkTo:
          w.walking = true;
          w.waypoints = l.waypoints;
          w.next = 0;
          w.run = l.run;
          w.crouch = l.crouch;
          w.stuckTicks = 0;
          break;
        case ScriptAction::Stop:
          w.walking = false;
          break;
        case ScriptAction::Jump:
          w.jump = true;
          break;
        case ScriptAction::Dig:
          w.pending.push_back(DigCommand{target(w, l.pos, Ground::Solid), static_cast<ToolSize>(l.size)});
          break;
        case ScriptAction::Place: {
          const auto m = state.materials->find(l.material);
          w.pending.push_back(PlaceCommand{target(w, l.pos, Ground::Solid), l.face, static_cast<ToolSize>(l.size),
                                           m ? *m : static_cast<MaterialId>(255)});
          break;
        }
        case ScriptAction::Pour:
          w.pending.push_back(PourCommand{target(w, l.pos, Ground::Above), static_cast<std::uint32_t>(l.size)});
          break;
        case ScriptAction::Ignite:
          w.pending.push_back(IgniteCommand{target(w, l.pos, Ground::Burnable)});
          break;
        case ScriptAction::Say:
          w.pending.push_back(ChatCommand{ChatText::from(l.text)});
          break;
        case ScriptAction::Weather:
        case ScriptAction::Time:
          break;
      }
    }
  }
  // 2. One input per joined player (after its join), then its pending actions.
  for (Walker& w : walkers_) {
    if (!w.joined) {
      w.pending.clear();
      continue;
    }
    const Player* pl = state.findPlayer(PlayerId{w.player});
    PlayerInput in;
    in.yaw = pl ? pl->motion.yaw : 0;
    if (pl && w.walking && w.next < w.waypoints.size()) {
      const ScriptPos& goal = w.waypoints[w.next];
      const std::int64_t dx = std::int64_t{goal.x} - pl->motion.position.x;
      const std::int64_t dz = std::int64_t{goal.z} - pl->motion.position.z;
      if (dx * dx + dz * dz <= std::int64_t{kArriveDistance} * kArriveDistance) {
        if (++w.next >= w.waypoints.size()) w.walking = false;
      } else {
        in.yaw = yawToward(dx, dz);
        in.moveForward = 127;
        if (w.run) in.buttons |= kButtonRun;
        if (w.crouch) in.buttons |= kButtonCrouch;
        const std::int64_t mx = std::int64_t{pl->motion.position.x} - w.lastPos.x;
        const std::int64_t mz = std::int64_t{pl->motion.position.z} - w.lastPos.z;
        if (mx * mx + mz * mz < std::int64_t{unitsFromMetres(0.01)} * unitsFromMetres(0.01)) {
          if (++w.stuckTicks >= kStuckTicks) {
            w.jump = true;
            w.stuckTicks = 0;
          }
        } else {
          w.stuckTicks = 0;
        }
      }
    }
    if (w.jump) {
      in.buttons |= kButtonJump;
      w.jump = false;
    }
    if (pl) w.lastPos = pl->motion.position;
    // The join itself is in this tick's commands: the player exists from the next one.
    if (pl) {
      Command c = make(w, InputCommand{in});
      std::get<InputCommand>(c.body).input.sequence = c.sequence;
      out.push_back(c);
    }
    for (const CommandBody& body : w.pending) out.push_back(make(w, body));
    w.pending.clear();
  }
}

}  // namespace loam::sim
