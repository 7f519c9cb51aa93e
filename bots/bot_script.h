// BotScript: one bot's behaviour from a script in the sim/trace/script.h format, run on
// the bot's own clock. sim::ScriptRunner cannot drive a bot: it keys every line to
// SimState::tick of the state it is given, while a bot sends inputs at 60 Hz on
// its own clock and its mirror's tick advances in bursts as StepBatches arrive (a
// line would fire twice or never). So a bot keeps its own tick count from the
// moment it started playing and reads the same parsed ScriptLines.
//
// Which lines: "p<N>" lines drive bot N (1-based, in the order bots were started)
// and "all" lines every bot; "server" lines and join / leave are ignored (the bot
// joins by connecting). A bot with no walkto line random-walks around where it
// started (keyed by its index, so runs repeat).
//
// Thread: the owner's. Allocates only when a line with waypoints starts.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "sim/step/commands.h"
#include "sim/systems/player.h"
#include "sim/trace/script.h"

namespace loam::sim {
struct SimState;
}

namespace loam::bots {

/// What one bot tick produced: the input to send and the actions to send after it.
struct BotTick {
  sim::PlayerInput input;                 ///< sequence left 0 (the connection assigns it)
  std::vector<sim::CommandBody> actions;  ///< Dig, Place, Pour, Ignite, Chat
};

class BotScript {
 public:
  /// The lines of script for bot `index` (1-based). arriveMetres: how close counts as
  /// reaching a waypoint (swarm bots steer by lagging server positions: use more).
  BotScript(const sim::Script& script, std::uint32_t index, double arriveMetres = 0.5);

  /// One bot tick. t: ticks since the bot started playing (0, 1, 2, ...). own: the
  /// bot's player now (predicted for full bots, the latest server value for swarm
  /// bots). world: the bot's mirror to resolve ground positions of actions, or null
  /// (swarm bots: actions are dropped, walkto positions use only x,z). out is
  /// overwritten. No allocation once out.actions has grown.
  void tick(std::uint64_t t, const sim::PlayerState& own, const sim::SimState* world, BotTick& out);

  /// True when any line drives this bot (else it random-walks).
  bool scripted() const noexcept { return !lines_.empty(); }

 private:
  sim::VoxelCoord target(const sim::ScriptPos& p, int ground, const sim::PlayerState& own,
                         const sim::SimState& world) const;

  std::vector<sim::ScriptLine> lines_;
  std::int32_t arrive_ = 0;  ///< units
  bool walking_ = false;
  std::vector<sim::ScriptPos> waypoints_;
  std::size_t next_ = 0;
  bool run_ = false, crouch_ = false, jump_ = false;
  int stuckTicks_ = 0;
  sim::Vec3i lastPos_;
  bool randomWalk_ = false;
  bool haveHome_ = false;
  sim::Vec3i home_;
  std::mt19937 rng_;
};

}  // namespace loam::bots
