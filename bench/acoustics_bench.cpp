// Acoustics budget: one acoustic update (512 rays traced through the
// glade's BrickStore, the room estimate and the openings) on one thread, at four
// listeners: the spawn (open glade), under a tree's canopy, deep in the dug tunnel,
// and round a bend in a side tunnel dug off it (where the corner search runs), with the BrickOccupancy bits (built once, timed apart). Budget: <= 2 ms per
// update. Also reports each room's estimate (smoothed over the updates: reverb times,
// their spread once the smoother has settled, and the openings with the distance to
// their mouths), and the cost of the FDN reverb and of one HRTF source per 5.33 ms block.
//
// Usage: acoustics_bench [updates=400]. Prints one JSON object on stdout.
#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <time.h>

#include "bench/bench_util.h"
#include "audio/dsp.h"
#include "audio/hrtf.h"
#include "audio/reverb.h"
#include "audio/corner_search.h"
#include "audio/room_probe.h"
#include "sim/world/material.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"

using namespace loam;
using Clock = std::chrono::steady_clock;

namespace {

using bench::percentile;
using bench::threadCpuUs;



/// The highest voxel at or below yTop in column (x, z) that stops sound; INT32_MIN when none.
std::int32_t groundBelow(const sim::SimState& s, const audio::AcousticTable& t, std::int32_t x, std::int32_t yTop,
                         std::int32_t z) {
  for (std::int32_t y = yTop; y >= s.world.bounds().minBrick.y * sim::kBrickSize; --y)
    if (t.stops[s.world.get(x, y, z)]) return y;
  return INT32_MIN;
}

struct Spot {
  std::string name;
  audio::Vec3f pos;
};

}  // namespace

int main(int argc, char** argv) {
  const int updates = argc > 1 ? std::max(10, std::atoi(argv[1])) : 400;
  auto scene = sim::loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
  if (!scene) {
    std::fprintf(stderr, "acoustics_bench: %s\n", scene.error().message.c_str());
    return 1;
  }
  auto built = sim::createSimState(*scene, scene->defaultSeed);
  if (!built) {
    std::fprintf(stderr, "acoustics_bench: %s\n", built.error().message.c_str());
    return 1;
  }
  sim::SimState& state = *built;  // the side tunnel is dug into it before the last spot
  const audio::AcousticTable table = audio::makeAcousticTable(*state.materials);
  const std::int32_t top = state.world.bounds().maxBrick.y * sim::kBrickSize - 1;

  std::vector<Spot> spots;
  {
    std::int32_t g = groundBelow(state, table, 0, top, 0);
    spots.push_back({"glade_spawn", {0.0f, static_cast<float>(g + 1) / 20.0f + 1.62f, 0.0f}});
  }
  // Under a tree: the nearest column (rings out from the spawn) whose topmost non-air
  // voxel is foliage, with air at ear height above the ground.
  for (int r = 3; r <= 40 && spots.size() < 2; ++r) {
    for (int a = 0; a < 72 && spots.size() < 2; ++a) {
      double ang = a * (2.0 * 3.14159265358979 / 72.0);
      auto x = static_cast<std::int32_t>(r * std::sin(ang) * 20), z = static_cast<std::int32_t>(-r * std::cos(ang) * 20);
      std::int32_t y = top;
      while (y > 0 && state.world.get(x, y, z) == sim::kAir) --y;
      if (!(*state.materials)[state.world.get(x, y, z)].foliage) continue;
      std::int32_t g = groundBelow(state, table, x, y, z);
      if (g == INT32_MIN) continue;
      std::int32_t ear = g + 1 + 32;
      if (ear + 8 >= y || state.world.get(x, ear, z) != sim::kAir) continue;
      spots.push_back({"under_tree", {static_cast<float>(x) / 20.0f, static_cast<float>(ear) / 20.0f, static_cast<float>(z) / 20.0f}});
    }
  }
  // Deep in the tunnel ("old_adit": its line runs along the floor through (-12, 3.2,
  // -23), radius 1.3 m): ears 1.62 m above the floor found below the roof.
  {
    auto x = static_cast<std::int32_t>(-12 * 20), z = static_cast<std::int32_t>(-23 * 20);
    std::int32_t g = groundBelow(state, table, x, static_cast<std::int32_t>(4.4 * 20), z);
    spots.push_back({"tunnel", {-12.0f, static_cast<float>(g + 1) / 20.0f + 1.62f, -23.0f}});
  }

  // Round a bend: a side tunnel (2 m wide, 2.4 m high) dug east off the adit 6 m
  // deeper in, 8 m long; the listener at its end sees no mouth, so the probe's corner
  // search runs every update. Dug just before this spot is measured.
  const std::int32_t sideFloor =
      groundBelow(state, table, -12 * 20, static_cast<std::int32_t>(4.4 * 20), -29 * 20) + 1;
  spots.push_back({"round_bend", {-4.5f, static_cast<float>(sideFloor) / 20.0f + 1.62f, -29.0f}});

  auto b0 = Clock::now();
  audio::BrickOccupancy occupancy(state.world);
  const double occupancyBuildMs = std::chrono::duration<double, std::milli>(Clock::now() - b0).count();
  audio::RoomProbe probe;
  std::printf("{\n  \"bench\": \"acoustics\",\n  \"rays\": %d,\n  \"updates\": %d,\n  \"budget_us\": 2000,\n"
              "  \"occupancy_build_ms\": %.1f,\n  \"spots\": [\n",
              probe.config().rays, updates, occupancyBuildMs);
  for (std::size_t si = 0; si < spots.size(); ++si) {
    const Spot& s = spots[si];
    if (s.name == "round_bend") {
      for (std::int32_t x = -12 * 20; x < -4 * 20; ++x)
        for (std::int32_t y = sideFloor; y < sideFloor + 48; ++y)
          for (std::int32_t z = -30 * 20; z < -28 * 20; ++z) {
            state.world.set(x, y, z, sim::kAir);
            occupancy.refresh(state.world, sim::brickOf(sim::VoxelCoord{x, y, z}));
          }
    }
    std::vector<double> wall, cpu;
    double rtSum[3] = {0, 0, 0}, rtSq[3] = {0, 0, 0}, smSum = 0, smSq = 0;
    int smN = 0;
    audio::RoomSmoother smooth;
    for (int u = 0; u < updates; ++u) {
      double c0 = threadCpuUs();
      auto t0 = Clock::now();
      const audio::RoomEstimate& e = probe.update(state.world, table, s.pos, static_cast<std::uint64_t>(u), 1, &occupancy);
      auto t1 = Clock::now();
      double c1 = threadCpuUs();
      const audio::RoomEstimate& sm = smooth.add(e);
      if (u >= 20) {  // after the smoother settles: its update-to-update spread
        smSum += sm.rt60[1];
        smSq += static_cast<double>(sm.rt60[1]) * sm.rt60[1];
        ++smN;
      }
      for (int b = 0; b < 3; ++b) {
        rtSum[b] += e.rt60[static_cast<std::size_t>(b)];
        rtSq[b] += static_cast<double>(e.rt60[static_cast<std::size_t>(b)]) * e.rt60[static_cast<std::size_t>(b)];
      }
      wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      cpu.push_back(c1 - c0);
    }
    // The same without the occupancy bits: the live client's path (it has no dirty-brick
    // stream for audio, so it reads the store's slot tables).
    std::vector<double> cpuPlain;
    {
      audio::RoomProbe plain;
      for (int u = 0; u < updates; ++u) {
        double c0 = threadCpuUs();
        plain.update(state.world, table, s.pos, static_cast<std::uint64_t>(u), 1);
        cpuPlain.push_back(threadCpuUs() - c0);
      }
    }
    const audio::RoomEstimate& e = smooth.value();
    bool earInAir = state.world.get(static_cast<int>(std::floor(s.pos.x * 20)), static_cast<int>(std::floor(s.pos.y * 20)),
                                    static_cast<int>(std::floor(s.pos.z * 20))) == sim::kAir;
    std::printf("    {\"name\": \"%s\", \"listener\": [%.2f, %.2f, %.2f], \"ear_in_air\": %s,\n", s.name.c_str(),
                static_cast<double>(s.pos.x), static_cast<double>(s.pos.y), static_cast<double>(s.pos.z),
                earInAir ? "true" : "false");
    std::printf("     \"update_us\": {\"median\": %.1f, \"p99\": %.1f, \"max\": %.1f}, \"update_cpu_us\": {\"median\": %.1f, \"p99\": %.1f},\n"
                "     \"update_cpu_us_no_occupancy\": {\"median\": %.1f, \"p99\": %.1f},\n",
                percentile(wall, 0.5), percentile(wall, 0.99), percentile(wall, 1.0), percentile(cpu, 0.5), percentile(cpu, 0.99),
                percentile(cpuPlain, 0.5), percentile(cpuPlain, 0.99));
    double mean[3], sd[3];
    for (int b = 0; b < 3; ++b) {
      mean[b] = rtSum[b] / updates;
      sd[b] = std::sqrt(std::max(0.0, rtSq[b] / updates - mean[b] * mean[b]));
    }
    const double smMean = smN > 0 ? smSum / smN : 0.0;
    const double smSd = smN > 0 ? std::sqrt(std::max(0.0, smSq / smN - smMean * smMean)) : 0.0;
    std::printf("     \"enclosure\": %.3f, \"openness\": %.3f, \"hit_share\": %.3f, \"mean_free_path_m\": %.2f,"
                " \"openings\": %d,\n     \"rt60_s_mean\": [%.3f, %.3f, %.3f], \"rt60_s_sd\": [%.3f, %.3f, %.3f],"
                " \"rt60_s_smoothed_last\": [%.3f, %.3f, %.3f],\n     \"rt60_mid_smoothed\": {\"mean\": %.3f, \"sd\": %.3f},"
                " \"opening_list\": [",
                static_cast<double>(e.enclosure), static_cast<double>(e.openness), static_cast<double>(e.hitShare),
                static_cast<double>(e.meanFreePath), e.openingCount, mean[0], mean[1], mean[2], sd[0], sd[1], sd[2],
                static_cast<double>(e.rt60[0]), static_cast<double>(e.rt60[1]), static_cast<double>(e.rt60[2]), smMean,
                smSd);
    // The smoothed openings: unit direction, share of the rays, metres to the mouth (or
    // the first corner), waypoints (> 1: round corners) and the air path's length.
    for (int k = 0; k < e.openingCount; ++k) {
      const audio::Opening& o = e.openings[static_cast<std::size_t>(k)];
      std::printf("%s{\"dir\": [%.2f, %.2f, %.2f], \"share\": %.3f, \"distance_m\": %.1f, \"waypoints\": %d, "
                  "\"path_m\": %.1f}",
                  k > 0 ? ", " : "", static_cast<double>(o.direction.x), static_cast<double>(o.direction.y),
                  static_cast<double>(o.direction.z), static_cast<double>(o.share), static_cast<double>(o.distance),
                  o.waypointCount(), static_cast<double>(o.along(o.waypointCount() - 1)));
    }
    std::printf("]}%s\n", si + 1 < spots.size() ? "," : "");
  }
  std::printf("  ],\n");

  // The corner search alone at the round-bend spot, then with the adit's mouth walled
  // up (no way out: it visits all the air it can reach, the worst case per brick).
  {
    const Spot& bend = spots.back();
    audio::CornerSearch search;
    std::array<audio::Opening, 4> found{};
    auto measure = [&](const char* name, bool last) {
      std::vector<double> cpu;
      int count = 0;
      for (int u = 0; u < std::max(20, updates / 4); ++u) {
        double c0 = threadCpuUs();
        count = search.find(state.world, table, bend.pos, found);
        cpu.push_back(threadCpuUs() - c0);
      }
      const double med = percentile(cpu, 0.5);
      std::printf("    \"%s\": {\"openings\": %d, \"bricks_visited\": %d, \"cpu_us\": {\"median\": %.1f, \"p99\": %.1f},"
                  " \"us_per_brick\": %.3f}%s\n",
                  name, count, search.visited(), med, percentile(cpu, 0.99), med / std::max(1, search.visited()),
                  last ? "" : ",");
    };
    std::printf("  \"corner_search\": {\n");
    measure("round_bend", false);
    const std::int32_t mouthFloor =
        groundBelow(state, table, -12 * 20, static_cast<std::int32_t>(4.4 * 20), -18 * 20) + 1;
    const sim::MaterialId stone = state.materials->find("stone").value_or(sim::kAir);
    for (std::int32_t x = -16 * 20; x < -8 * 20; ++x)
      for (std::int32_t y = mouthFloor - 20; y < mouthFloor + 80; ++y)
        for (std::int32_t z = -19 * 20; z < -18 * 20; ++z) state.world.set(x, y, z, stone);
    measure("walled_in", true);
    std::printf("  },\n");
  }

  // DSP cost per block: the reverb, and one HRTF source (steady, and crossfading).
  {
    audio::FdnReverb rv(1);
    rv.jumpRoom(3.0f, {2.0f, 1.5f, 1.0f});
    std::vector<float> in(audio::kBlockFrames), l(in.size()), r(in.size());
    audio::KeyedRng rng(1);
    std::vector<double> rvUs;
    for (int b = 0; b < 2000; ++b) {
      for (float& x : in) x = 0.1f * rng.bipolar();
      double c0 = threadCpuUs();
      rv.process(in.data(), l.data(), r.data(), audio::kBlockFrames);
      rvUs.push_back(threadCpuUs() - c0);
    }
    std::vector<double> hSteady, hMove;
    auto set = audio::HrtfSet::open();
    if (set) {
      audio::HrtfSource src(set->taps());
      std::vector<float> hl(static_cast<std::size_t>(set->taps())), hr(hl.size());
      for (int b = 0; b < 2000; ++b) {
        bool move = b % 2 == 0;
        if (move) {
          set->filters({std::cos(b * 0.01f), std::sin(b * 0.01f), 0.0f}, hl.data(), hr.data());
          src.setFilters(hl.data(), hr.data());
        }
        for (float& x : in) x = 0.1f * rng.bipolar();
        double c0 = threadCpuUs();
        src.process(in.data(), l.data(), r.data(), audio::kBlockFrames);
        (move ? hMove : hSteady).push_back(threadCpuUs() - c0);
      }
    }
    std::printf("  \"block_us\": {\"frames\": %d, \"reverb_median\": %.1f, \"reverb_p99\": %.1f,"
                " \"hrtf_source_median\": %.1f, \"hrtf_source_crossfade_median\": %.1f, \"hrtf_taps\": %d}\n}\n",
                audio::kBlockFrames, percentile(rvUs, 0.5), percentile(rvUs, 0.99), percentile(hSteady, 0.5),
                percentile(hMove, 0.5), set ? set->taps() : 0);
  }
  return 0;
}
