// Interpolation of remote entities: smooth motion at a steady rate, a delay that
// grows with jitter (and stops at 400 ms), stale samples ignored, yaw wrap, removal.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "net/interpolation.h"
#include "sim/core/fixed_point.h"

using namespace loam;

namespace {

constexpr double kMsPerTick = 1000.0 / sim::kTicksPerSecond;

net::PoseSample at(std::uint64_t tick, std::int32_t x, std::uint16_t yaw = 0) {
  net::PoseSample s;
  s.tick = tick;
  s.position = {x, 7, -x};
  s.yaw = yaw;
  return s;
}

/// Deterministic pseudo-random in [0, 1) for test jitter.
double noise(std::uint64_t i) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + 12345;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return static_cast<double>((x ^ (x >> 31)) >> 11) / 9007199254740992.0;
}

}  // namespace

TEST_CASE("steady 30 Hz samples move smoothly about 100 ms in the past") {
  net::InterpolationBuffer buf;
  // Sample k: tick 2k, x = 100 per tick, arriving 50 ms after its tick time.
  std::uint64_t next = 0;
  double lastX = -1e9;
  int checked = 0;
  for (int now = 0; now <= 3000; ++now) {
    while (static_cast<double>(next) * kMsPerTick + 50 <= now) {
      buf.push(1, at(next, static_cast<std::int32_t>(next) * 100), static_cast<double>(next) * kMsPerTick + 50);
      next += 2;
    }
    auto p = buf.sample(1, now);
    if (next == 0) {
      CHECK_FALSE(p.has_value());
      continue;
    }
    REQUIRE(p.has_value());
    CHECK(p->x >= lastX);  // monotonic
    CHECK(p->z == doctest::Approx(-p->x));
    CHECK(p->y == doctest::Approx(7));
    if (now >= 500) {
      // 100 units per tick = 6 per ms, without steps at sample boundaries.
      CHECK(p->x - lastX == doctest::Approx(6.0).epsilon(0.001));
      // Shown where the entity was 100 ms before it was known here (50 ms link).
      const double expectTick = (now - 50 - 100) / kMsPerTick;
      CHECK(p->x == doctest::Approx(expectTick * 100).epsilon(0.001));
      ++checked;
    }
    lastX = p->x;
  }
  CHECK(checked > 2000);
  CHECK(buf.delayMs() == doctest::Approx(100));
}

TEST_CASE("jittered arrivals raise the delay, at most to 400 ms") {
  net::InterpolationBuffer calm, shaky, wild;
  for (std::uint64_t k = 0; k < 600; ++k) {
    const std::uint64_t tick = 2 * k;
    const double sent = static_cast<double>(tick) * kMsPerTick;
    calm.push(1, at(tick, 0), sent + 40);
    shaky.push(1, at(tick, 0), sent + 40 + 200 * noise(k));
    wild.push(1, at(tick, 0), sent + 40 + 900 * noise(k + 7777));
  }
  MESSAGE("delay calm ", calm.delayMs(), " shaky ", shaky.delayMs(), " wild ", wild.delayMs());
  CHECK(calm.delayMs() == doctest::Approx(100));
  CHECK(shaky.delayMs() > 150);
  CHECK(shaky.delayMs() < 400);
  CHECK(wild.delayMs() > 300);
  CHECK(wild.delayMs() <= 400);
}

TEST_CASE("samples older than the newest are ignored") {
  net::InterpolationBuffer buf;
  buf.push(4, at(10, 1000), 1000);
  buf.push(4, at(20, 2000), 1166);
  buf.push(4, at(15, 99999), 1170);  // reordered: older than tick 20
  buf.push(4, at(20, 99999), 1171);  // repeated tick
  for (double now = 900; now < 1800; now += 1) {
    auto p = buf.sample(4, now);
    REQUIRE(p.has_value());
    CHECK(p->x >= 1000);
    CHECK(p->x <= 2000);
  }
  // Held at the newest sample once render time passes it.
  CHECK(buf.sample(4, 5000)->x == doctest::Approx(2000));
}

TEST_CASE("yaw interpolates along the shorter turn across the wrap") {
  net::InterpolationBuffer buf;
  buf.push(2, at(0, 0, 65000), 0);
  buf.push(2, at(6, 600, 500), 100);
  int between = 0;
  for (double now = 0; now < 400; now += 1) {
    auto p = buf.sample(2, now);
    REQUIRE(p.has_value());
    const double yaw = std::fmod(std::fmod(p->yaw, 65536.0) + 65536.0, 65536.0);
    CHECK((yaw >= 65000 - 1e-6 || yaw <= 500 + 1e-6));  // never the long way round
    if (p->x > 200 && p->x < 400) {
      // x and yaw advance together: yaw = 65000 + 1036 * x / 600 (mod 65536).
      const double expect = std::fmod(65000 + 1036 * p->x / 600, 65536.0);
      CHECK(yaw == doctest::Approx(expect));
      ++between;
    }
  }
  CHECK(between > 10);
}

TEST_CASE("ids are sorted and remove forgets an entity") {
  net::InterpolationBuffer buf;
  buf.push(7, at(1, 0), 0);
  buf.push(3, at(1, 0), 0);
  buf.push(5, at(1, 0), 0);
  CHECK(buf.ids() == std::vector<std::uint32_t>{3, 5, 7});
  buf.remove(3);
  buf.remove(42);  // unknown: no effect
  CHECK(buf.ids() == std::vector<std::uint32_t>{5, 7});
  CHECK_FALSE(buf.sample(3, 10).has_value());
  CHECK_FALSE(buf.sample(42, 10).has_value());
  CHECK(buf.sample(5, 10).has_value());
}

TEST_CASE("the delay follows the snapshot rate, not a slowly updated entity") {
  net::InterpolationBuffer buf;
  // 30 Hz snapshots; entity 1 is in every one, entity 2 (far away) in every sixth.
  for (std::uint64_t k = 0; k < 300; ++k) {
    const std::uint64_t tick = 2 * k;
    const double arrival = static_cast<double>(tick) * kMsPerTick + 30;
    buf.push(1, at(tick, static_cast<std::int32_t>(tick)), arrival);
    if (k % 6 == 0) buf.push(2, at(tick, static_cast<std::int32_t>(tick)), arrival);
  }
  CHECK(buf.delayMs() == doctest::Approx(100));
  // The slow entity still interpolates between its own samples (ticks 582 and 588).
  const double now = 585 * kMsPerTick + 30 + 100;
  auto p1 = buf.sample(1, now);
  auto p2 = buf.sample(2, now);
  REQUIRE(p1.has_value());
  REQUIRE(p2.has_value());
  CHECK(p1->x == doctest::Approx(585));
  CHECK(p2->x == doctest::Approx(585));
}
