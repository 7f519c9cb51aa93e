// Scripts: parsing (errors name the line), and deterministic expansion into commands.
#include <doctest/doctest.h>

#include "sim/trace/script.h"
#include "sim/step/step.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;

namespace {
std::string errorOf(std::string_view text) {
  auto r = parseScript(text, "t.txt");
  return r ? std::string("ok") : r.error().message;
}
}  // namespace

TEST_CASE("script lines parse; times in ticks or seconds") {
  auto r = parseScript(
      "# comment\n"
      "\n"
      "at 0 p1 join Ada\n"
      "at 2s p1 walkto 1,2 3.5,-4,1 run   # trailing comment\n"
      "every 1.5s from 3s to 10s p1 dig ahead:1.5 20\n"
      "at 4s p1 place 0,1 +y 40 stone\n"
      "at 5s p1 pour here 0.5\n"
      "at 6s server weather 0.8 250 6\n"
      "at 7s server time 18.5\n"
      "at 8s all say hello # not a comment\n",
      "t.txt");
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  const Script& s = *r;
  REQUIRE(s.lines.size() == 8);
  CHECK(s.lines[0].line == 3);
  CHECK(s.lines[0].action == ScriptAction::Join);
  CHECK(s.lines[1].at == 120);
  CHECK(s.lines[1].waypoints.size() == 2);
  CHECK(s.lines[1].waypoints[0].onGround);
  CHECK(s.lines[1].waypoints[1].y == unitsFromMetres(-4.0));
  CHECK(s.lines[1].run);
  CHECK(s.lines[2].every == 90);
  CHECK(s.lines[2].until == 600);
  CHECK(s.lines[2].size == 4);
  CHECK(s.lines[2].pos.relative);
  CHECK(s.lines[3].size == 8);
  CHECK(s.lines[3].face == Face::PosY);
  CHECK(s.lines[4].size == static_cast<std::int32_t>(kWaterPerVoxel * 4));
  CHECK(s.lines[5].a == 800);
  CHECK(s.lines[6].hour == 18.5);
  CHECK(s.lines[7].all);
  CHECK(s.lines[7].text == "hello # not a comment");
}

TEST_CASE("script errors name the file and line") {
  CHECK(errorOf("at 0 p1 join A\nat x p1 jump\n") == "t.txt:2: bad time 'x' (ticks, <seconds>s or start)");
  CHECK(errorOf("\n\nfrom 0 p1 jump\n") == "t.txt:3: unknown statement 'from' (expected at or every)");
  CHECK(errorOf("at 0 q1 jump\n") == "t.txt:1: bad subject 'q1' (p<N>, all or server)");
  CHECK(errorOf("at 0 p1 fly\n") == "t.txt:1: unknown action 'fly'");
  CHECK(errorOf("at 0 p1 dig 1,2 30\n") == "t.txt:1: bad tool radius '30' (5, 10, 20 or 40)");
  CHECK(errorOf("at 0 p1 place 1,2 up 10 stone\n") == "t.txt:1: bad face 'up' (+x -x +y -y +z -z)");
  CHECK(errorOf("at 0 p1 dig 1,2,3,4 10\n") == "t.txt:1: bad position '1,2,3,4'");
  CHECK(errorOf("at 0 server walkto 1,2\n") == "t.txt:1: 'walkto' needs a player (p<N> or all), not server");
  CHECK(errorOf("at 0 server dig ahead:1 10\n") ==
        "t.txt:1: the server has no position: use x,z or x,y,z, not here / ahead:D");
  CHECK(errorOf("at 0 server ignite 1,2\n") == "ok");
  CHECK(errorOf("at 0 p1 weather 1 2 3\n") == "t.txt:1: 'weather' is a server action");
  CHECK(errorOf("every 0 from 0 to 5 p1 jump\n") == "t.txt:1: bad period '0'");
  CHECK(errorOf("every 5 from 9 to 5 p1 jump\n") == "t.txt:1: bad end time '5'");
  CHECK(errorOf("at 0 p1 pour 1,2 100\n").find("t.txt:1: bad amount '100'") == 0);
  CHECK(errorOf("at 0 p1 walkto run\n") == "t.txt:1: usage: walkto <x,z>... [run] [crouch]");
  CHECK(errorOf("at 0 p0 jump\n") == "t.txt:1: bad player 'p0'");
  CHECK(errorOf("at 0 p1 say\n") == "t.txt:1: say needs 1..120 bytes of text");
  // Nothing crashes on noise.
  std::string junk;
  for (int i = 0; i < 2000; ++i) {
    junk.push_back(static_cast<char>("at every p1 2s ,.-+:#\n \t walkto dig 0123456789x"[(i * 7919) % 50]));
    (void)parseScript(junk, "junk");
  }
}

TEST_CASE("expansion: joins, one input per tick per player, actions after the input") {
  auto script = parseScript(
      "at 0 p2 join Bo\n"
      "at 0 p1 join Ada\n"
      "at 1 p1 walkto 0,-3\n"
      "at 3 p1 dig ahead:1 10\n"
      "at 3 p2 jump\n"
      "at 4 server weather 0.5 0 1\n",
      "t.txt");
  REQUIRE(script.has_value());
  SimState s = loam::test::flatState();
  ScriptRunner runner(std::move(script).value());
  std::vector<Command> cmds;
  runner.commandsFor(s, cmds);  // tick 0: joins only (players do not exist yet)
  REQUIRE(cmds.size() == 2);
  CHECK(std::holds_alternative<JoinCommand>(cmds[0].body));
  (void)step(s, cmds);
  REQUIRE(s.players.size() == 2);
  for (int t = 1; t <= 4; ++t) {
    cmds.clear();
    runner.commandsFor(s, cmds);
    if (t == 3) {
      // p1: input then dig; p2: input with jump.
      REQUIRE(cmds.size() == 3);
      CHECK(cmds[0].player == PlayerId{1});
      CHECK(std::holds_alternative<InputCommand>(cmds[0].body));
      CHECK(std::holds_alternative<DigCommand>(cmds[1].body));
      CHECK(cmds[1].sequence == cmds[0].sequence + 1);
      CHECK((std::get<InputCommand>(cmds[2].body).input.buttons & kButtonJump) != 0);
    }
    if (t == 4) {
      CHECK(cmds.front().player == kServerPlayer);
      CHECK(std::holds_alternative<SetWeatherCommand>(cmds.front().body));
    }
    (void)step(s, cmds);
  }
  // p1 walks north toward (0, -3): yaw 0.
  CHECK(s.players[0].motion.yaw == 0);
  CHECK(s.players[0].motion.position.z < 0);
}
