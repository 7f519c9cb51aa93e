// Scripts: timed commands for N players in a readable line format, expanded
// deterministically into Commands per tick. Used by the mirror test, loam-tool sim,
// benches, and later by bots (which feed the same Commands to a server).
//
// Format (one statement per line; '#' starts a comment; blank lines ignored):
//
//   at <time> <who> <action> [args...]
//   every <period> from <time> to <time> <who> <action> [args...]
//
//   <time>, <period>: ticks ("120"), seconds ("2s", "1.5s") or "start" (= 0). A
//   statement at time t is issued in the step that runs when SimState::tick == t
//   (the step producing tick t + 1).
//   <who>: "p<N>" (player id N >= 1), "all" (every player declared with join), or
//          "server" (player 0: time, weather, chat, and dig / place / pour / ignite
//          at absolute positions without reach or rate limits, e.g. fire tests).
//   Positions are metres "x,y,z" (no spaces), or "x,z" = on the ground at that
//   column (resolved against the world when the script is expanded), or relative
//   to the player: "here" (the ground under the feet) or "ahead:D" (the ground D
//   metres in front, 0..10). "On the ground" is the top solid voxel of the column
//   for dig / place, the top solid or flammable one (a canopy) for ignite, and the
//   voxel above the top solid one for pour (relative positions
//   search down from the player's eye, so a canopy overhead is not "the ground").
//
// Actions:
//   join <name>                     admit the player
//   leave
//   walkto <pos> [run] [crouch]     walk toward pos (one input per tick, yaw turned
//                                   toward it; jumps when blocked) until within 0.5 m
//   stop                            stand still (inputs continue with no movement)
//   jump                            jump once
//   dig <pos> <5|10|20|40>          dig with a tool radius in cm
//   place <pos> <face> <5|10|20|40> <material>   face: +x -x +y -y +z -z
//   pour <pos> <litres>             (1 litre = 8 voxels = 8 * kWaterPerVoxel units; max 8)
//   ignite <pos>
//   weather <rain 0..1> <wind-from-degrees> <wind m/s>     (server)
//   time <hour 0..24>                                      (server)
//   say <text to end of line>
//
// A player with no walkto / stop sends a still input every tick once joined, so
// gravity and prediction behave as with a real client.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/step/commands.h"
#include "sim/core/fixed_point.h"
#include "sim/core/result.h"

namespace loam::sim {

struct SimState;

/// Script actions.
enum class ScriptAction : std::uint8_t { Join, Leave, WalkTo, Stop, Jump, Dig, Place, Pour, Ignite, Weather, Time, Say };

/// A position as written: metres, with or without a height, or relative to the
/// player ("here", "ahead:D" = D metres in front of the feet, on the ground).
struct ScriptPos {
  std::int32_t x = 0, y = 0, z = 0;  ///< units (fixed_point.h); for ahead:D, x holds D
  bool onGround = false;             ///< y not given: resolve to the ground
  bool relative = false;             ///< here / ahead:D
};

/// One parsed statement.
struct ScriptLine {
  int line = 0;                  ///< 1-based source line
  std::uint64_t at = 0;          ///< first tick (1-based: tick 1 is the first step)
  std::uint64_t every = 0;       ///< repeat period in ticks (0 = once)
  std::uint64_t until = 0;       ///< last tick for repeats (inclusive)
  std::uint32_t who = 0;         ///< player id (0 = server)
  bool all = false;              ///< every joined player
  ScriptAction action = ScriptAction::Stop;
  ScriptPos pos;
  std::int32_t size = 0;         ///< dig radius / place size in voxels, or pour amount
  Face face = Face::PosY;
  std::string material;          ///< place
  std::string text;              ///< join name, say text
  bool run = false, crouch = false;
  std::int32_t a = 0, b = 0, c = 0;  ///< weather: rain per mille, wind-toward binary angle, wind cm/s
  double hour = 0;               ///< time
  std::vector<ScriptPos> waypoints;  ///< walkto
};

/// A parsed script.
struct Script {
  std::vector<ScriptLine> lines;  ///< in file order
};

/// Parses script text. Errors: "name:line: what is wrong". Allocates.
Result<Script> parseScript(std::string_view text, std::string_view sourceName);

/// Reads and parses a script file.
Result<Script> loadScript(const std::string& path);

/// Expands a script into commands tick by tick. Keeps per-player walking goals and
/// sequence counters. Deterministic: the commands for tick t depend only on the
/// script and on the state it is given (player positions steer walking).
class ScriptRunner {
 public:
  /// Binds a parsed script. Materials are resolved at first use against the state's table.
  explicit ScriptRunner(Script script);

  /// Appends the commands for the step that will produce tick state.tick + 1 to out.
  /// Unknown material names in place lines produce a place with material 255 (the
  /// step rejects it). Allocates only when out or internal lists grow.
  void commandsFor(const SimState& state, std::vector<Command>& out);

 private:
  struct Walker {
    std::uint32_t player = 0;
    bool joined = false;
    bool walking = false;
    std::vector<ScriptPos> waypoints;
    std::size_t next = 0;
    bool run = false, crouch = false, jump = false;
    std::uint32_t sequence = 0;
    std::int32_t stuckTicks = 0;
    Vec3i lastPos;
    std::vector<CommandBody> pending;  ///< actions to send after this tick's input
  };
  Walker& walker(std::uint32_t player);
  Command make(Walker& w, CommandBody body);

  Script script_;
  std::vector<Walker> walkers_;  ///< sorted by player
  std::uint32_t serverSequence_ = 0;
};

}  // namespace loam::sim
