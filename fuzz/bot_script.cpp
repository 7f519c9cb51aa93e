// Bot scripts (loam-bots --script; sim/trace/script.h format): the parser, then two
// bots running the parsed lines for 400 ticks on a copy of the mirror, as full bots
// do (actions resolved against the world).
#include "bots/bot_script.h"
#include "fuzz/fuzz_support.h"
#include "sim/trace/script.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace loam;
  auto script = sim::parseScript(fuzz::textOf(data, size), "fuzz.script");
  if (!script) return 0;
  const sim::SimState& world = fuzz::baseState();
  for (std::uint32_t index : {1u, 2u}) {
    bots::BotScript bot(*script, index);
    sim::PlayerState own = world.players[index - 1].motion;
    bots::BotTick out;
    for (std::uint64_t t = 0; t < 400; ++t) {
      bot.tick(t, own, &world, out);
      // Walk a little the way the input says, so waypoints can be reached.
      own.position.x += out.input.moveRight;
      own.position.z += out.input.moveForward;
    }
  }
  return 0;
}
