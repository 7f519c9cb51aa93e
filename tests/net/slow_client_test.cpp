// Slow and lossy honest clients against the input bucket (net/host/session.h): a
// client that stalls and then sends every input it owes, or whose inputs are lost for
// a while and then arrive together, is late, not fast; none of its inputs may be
// dropped (each one would be a prediction correction). A client that stands still
// to bank credit and then sends 4 inputs per tick still gains only the bounded bank.
// Raw ENet clients against a ServerHost on loopback, ticked by the test: what
// arrives in which tick is set by the test, not by timing.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <thread>
#include <vector>

#include "net/host/session.h"
#include "net/protocol.h"
#include "net/server_host.h"
#include "net/wire.h"
#include "sim/systems/motion.h"
#include "tests/support/raw_client.h"

using namespace loam;
using test::RawClient;

namespace {

/// One server tick with 3 ms after it: loopback deliveries and acks get through,
/// and a client's few messages a tick stay under kMaxMessagesPerSecond (the message
/// bucket counts wall time; the input bucket counts ticks).
void tick(net::ServerHost& server, std::initializer_list<RawClient*> clients) {
  test::tickAll(server, clients);
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
}

/// Connects every client and ticks until all are in the world as swarm bots.
void join(net::ServerHost& server, std::initializer_list<RawClient*> clients) {
  test::joinSwarmBots(server, clients, 3);
}

/// Sends inputs first..last (forward) in messages of at most kMaxInputsPerMessage,
/// as a client catching up sends them.
void sendInputs(RawClient& c, std::uint32_t first, std::uint32_t last) {
  flatbuffers::FlatBufferBuilder fbb;
  while (first <= last) {
    std::vector<wire::InputRec> recs;
    for (; first <= last && recs.size() < net::kMaxInputsPerMessage; ++first) recs.push_back(test::forwardInput(first));
    test::buildInputs(fbb, recs, 0);
    c.send(fbb);
  }
}

const sim::Player& playerOf(const net::ServerHost& server, const RawClient& c) {
  const sim::Player* p = server.state().findPlayer(sim::PlayerId{c.playerId});
  REQUIRE(p != nullptr);
  return *p;
}

/// What the client predicts after inputs 1..last from `start`: each applied once, in
/// order, as the server must have applied them for the client to see no correction.
sim::PlayerState predicted(const net::ServerHost& server, sim::PlayerState start, std::uint32_t last) {
  for (std::uint32_t s = 1; s <= last; ++s)
    start = sim::motionStep(start, net::fromWire(test::forwardInput(s)), server.state().world, server.state().lut);
  return start;
}

}  // namespace

TEST_CASE("an honest client that stalls 200-500 ms every 3 s and then sends what it owes loses no input") {
  auto server = test::openFlatServer();
  RawClient steady(server->port()), slow(server->port());
  join(*server, {&steady, &slow});
  const sim::PlayerState slowStart = playerOf(*server, slow).motion;

  // Stalls of 12, 18, 24 and 30 ticks, each starting 3 s after the last began. The
  // stalled client sends nothing, then every input of the stall at once (its frame
  // loop catching up, one input per tick it missed).
  struct Stall {
    std::uint32_t from, ticks;
  };
  static constexpr Stall kStalls[] = {{120, 12}, {300, 18}, {480, 24}, {660, 30}};
  constexpr std::uint32_t kTicks = 840;
  std::uint32_t sentSlow = 0;
  for (std::uint32_t t = 1; t <= kTicks; ++t) {
    sendInputs(steady, t, t);
    bool stalled = false;
    for (const Stall& s : kStalls) stalled = stalled || (t >= s.from && t < s.from + s.ticks);
    if (!stalled) {
      sendInputs(slow, sentSlow + 1, t);
      sentSlow = t;
    }
    tick(*server, {&steady, &slow});
    // Caught up well before the next stall: the catch-up left no backlog behind (a
    // standing backlog is latency the player feels).
    for (const Stall& s : kStalls) {
      if (t == s.from - 1 && t > 1) CHECK_MESSAGE(playerOf(*server, slow).motion.lastInput == t, "before the stall at ", s.from);
    }
  }
  for (int t = 0; t < 30; ++t) tick(*server, {&steady, &slow});

  CHECK(playerOf(*server, steady).motion.lastInput == kTicks);
  CHECK(playerOf(*server, slow).motion.lastInput == kTicks);
  // Every input applied once, in order: the server's player is the client's prediction.
  CHECK(playerOf(*server, slow).motion == predicted(*server, slowStart, kTicks));
  CHECK(server->stats().inputsOverRate == 0);
  CHECK(server->stats().inputsDropped == 0);
}

TEST_CASE("an honest client whose Inputs are lost for up to 250 ms loses no input that reaches the server") {
  auto server = test::openFlatServer();
  RawClient lossy(server->port());
  join(*server, {&lossy});
  const sim::PlayerState lossyStart = playerOf(*server, lossy).motion;

  // The client sends every tick, each message carrying its newest inputs (as
  // ClientConnection does, at most kMaxInputsPerMessage): a message that is lost is
  // covered by the next one. Outages of 8 to 15 messages in a row (133-250 ms), the
  // longest the next message still covers.
  struct Outage {
    std::uint32_t from, ticks;
  };
  static constexpr Outage kOutages[] = {{100, 8}, {200, 12}, {300, 15}, {330, 15}, {450, 13}, {470, 14}};
  static_assert(net::kMaxInputsPerMessage == 16, "the longest outage is kMaxInputsPerMessage - 1 messages");
  constexpr std::uint32_t kTicks = 600;
  for (std::uint32_t t = 1; t <= kTicks; ++t) {
    bool lost = false;
    for (const Outage& o : kOutages) lost = lost || (t >= o.from && t < o.from + o.ticks);
    const std::uint32_t first = t > net::kMaxInputsPerMessage ? t - net::kMaxInputsPerMessage + 1 : 1;
    if (!lost) sendInputs(lossy, first, t);
    tick(*server, {&lossy});
  }
  for (int t = 0; t < 30; ++t) tick(*server, {&lossy});

  CHECK(playerOf(*server, lossy).motion.lastInput == kTicks);
  CHECK(playerOf(*server, lossy).motion == predicted(*server, lossyStart, kTicks));
  CHECK(server->stats().inputsOverRate == 0);
}

TEST_CASE("a client that stands still to bank credit, then sends 4 inputs per tick, gains only the bank") {
  auto server = test::openFlatServer();
  RawClient banker(server->port());
  join(*server, {&banker});

  // One input, 3 s of nothing (credit for every tick stood idle, up to the bank),
  // then 4 inputs per tick for 5 s.
  sendInputs(banker, 1, 1);
  tick(*server, {&banker});
  for (int t = 0; t < 180; ++t) tick(*server, {&banker});
  constexpr std::uint32_t kTicks = 300;
  std::uint32_t sent = 1;
  for (std::uint32_t t = 1; t <= kTicks; ++t) {
    sendInputs(banker, sent + 1, sent + 4);
    sent += 4;
    tick(*server, {&banker});
  }
  // Then nothing: what the server still holds is applied now (or never).
  for (int t = 0; t < 60; ++t) tick(*server, {&banker});

  const net::ServerStats st = server->stats();
  REQUIRE(st.inputsDropped == 0);
  // One input per tick of sending, plus the bank (base and late credit) and the
  // backlog left when it stopped, plus the first input; the rest was dropped.
  const std::uint64_t applied = sent - st.inputsOverRate;
  MESSAGE("applied ", applied, " of ", sent, " inputs over ", kTicks, " ticks of sending");
  CHECK(applied <= 1 + kTicks + net::host::kInputBurstTicks + net::host::kInputLateTicks + net::host::kMaxInputBacklog);
  CHECK(playerOf(*server, banker).motion.lastInput == sent);  // the newest went in; the dropped were older
}

TEST_CASE("inputs a client sent while the server skipped ticks to catch up are owed: none is dropped") {
  auto server = test::openFlatServer();
  RawClient client(server->port());
  join(*server, {&client});
  const sim::PlayerState start = playerOf(*server, client).motion;

  // One input per tick of real time. After ticks 200 and 400 the server stalls for 24
  // and 30 ticks: the client's inputs for them arrive while it does not tick, then its
  // loop drops those ticks (TickPacer::endBurst) and says so (skippedTicks).
  constexpr std::uint32_t kTicks = 600;
  for (std::uint32_t t = 1; t <= kTicks; ++t) {
    sendInputs(client, t, t);
    if (t == 200 || t == 400) {
      const std::uint32_t stall = t == 200 ? 24 : 30;
      for (std::uint32_t k = 1; k <= stall; ++k) {
        sendInputs(client, t + k, t + k);
        client.flush();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      server->skippedTicks(stall);
      t += stall;
    }
    tick(*server, {&client});
  }
  for (int t = 0; t < 30; ++t) tick(*server, {&client});

  CHECK(playerOf(*server, client).motion.lastInput == kTicks);
  CHECK(playerOf(*server, client).motion == predicted(*server, start, kTicks));
  CHECK(server->stats().inputsOverRate == 0);
}
