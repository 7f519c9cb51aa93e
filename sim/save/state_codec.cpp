// The state codec sequences the systems' own encoders and decoders: each blob's
// encoding is documented at its encoder (encodePlayers in sim/systems/player.h,
// encodeWater in water.h, encodeFire in fire.h, encodeAnimals in animals.h,
// encodeWeather in weather.h). All are little-endian (sim/core/state_bytes.h) and
// start with the kStateCodecVersion byte.
#include "sim/save/state_codec.h"

namespace loam::sim {

namespace {

// A null system is left out (a mirror's join state).
std::vector<SaveBlob> blobsOf(const std::vector<Player>& players, const WaterState* water, const FireState* fire,
                              const AnimalState* animals, const WeatherState& weather) {
  std::vector<SaveBlob> blobs;
  blobs.reserve(5);
  blobs.push_back({"players", {}});
  encodePlayers(players, blobs.back().bytes);
  if (water != nullptr) {
    blobs.push_back({"water", {}});
    encodeWater(*water, blobs.back().bytes);
  }
  if (fire != nullptr) {
    blobs.push_back({"fire", {}});
    encodeFire(*fire, blobs.back().bytes);
  }
  if (animals != nullptr) {
    blobs.push_back({"animals", {}});
    encodeAnimals(*animals, blobs.back().bytes);
  }
  blobs.push_back({"weather", {}});
  encodeWeather(weather, blobs.back().bytes);
  return blobs;
}

}  // namespace

std::vector<SaveBlob> stateBlobs(const SimState& state) {
  return blobsOf(state.players, &state.water, &state.fire, &state.animals, state.weather);
}

StateCopy copyState(const SimState& state, bool withCells) {
  StateCopy c;
  c.players = state.players;
  if (withCells) {
    c.water.grid = state.water.grid;  // encodeWater reads only the amounts
    c.fire = state.fire;
  }
  c.animals = state.animals;
  c.weather = state.weather;
  return c;
}

std::vector<SaveBlob> stateBlobs(const StateCopy& copy) {
  return blobsOf(copy.players, &copy.water, &copy.fire, &copy.animals, copy.weather);
}

std::vector<SaveBlob> mirrorBlobs(const StateCopy& copy) {
  return blobsOf(copy.players, nullptr, nullptr, nullptr, copy.weather);
}

Result<void> restoreState(const SaveData& save, SimState& state) {
  if (Result<void> e = applySave(save, state.world); !e) return e;
  const std::uint64_t tick = save.header.tick;
  if (tick > 0xFFFFFFFFu) return makeError("save tick does not fit the fire system's 32-bit ticks");
  for (const SaveBlob& b : save.blobs) {
    Result<void> e;
    if (b.name == "players") {
      e = decodePlayers(b.bytes, state.players);
    } else if (b.name == "water") {
      e = decodeWater(b.bytes, state.water, state.world);
    } else if (b.name == "fire") {
      e = restoreFire(b.bytes, state.fire, state.world, state.seed, static_cast<std::uint32_t>(tick));
    } else if (b.name == "animals") {
      e = decodeAnimals(b.bytes, state.animals, tick);
    } else if (b.name == "weather") {
      e = decodeWeather(b.bytes, state.weather);
    }
    if (!e) return makeError("save blob '" + b.name + "': " + e.error().message);
  }
  // Weather: the rain schedule boundaries up to `tick` have passed (stepWeather's loop).
  WeatherState& w = state.weather;
  w.nextBoundary = 0;
  const auto boundaries = static_cast<std::uint32_t>(w.schedule.size() * 2);
  while (w.nextBoundary < boundaries) {
    const RainSpellTicks& sp = w.schedule[w.nextBoundary / 2];
    if (((w.nextBoundary & 1u) ? sp.end : sp.start) > tick) break;
    ++w.nextBoundary;
  }
  state.tick = tick;
  return {};
}

}  // namespace loam::sim
