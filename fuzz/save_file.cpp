// JoinSnapshots and save files (client, server and `loam-tool save-info`): the first
// byte picks what the rest is.
//   0: file bytes for decodeSave (what a file or JoinSnapshot holds), then
//      restoreState onto a copy of the mirror;
//   1: a raw payload that sealSavePayload compresses and checksums first, so the
//      fuzzer reaches the payload parser past zstd and the XXH3 checksum;
//   2..6: one state_codec blob ("players", "water", "fire", "animals", "weather")
//      for its decoder against the mirror's world.
#include <vector>

#include "fuzz/fuzz_support.h"
#include "sim/save/save.h"
#include "sim/gen/generator_version.h"
#include "sim/save/state_codec.h"

namespace {

using namespace loam;

void decodeAndRestore(std::span<const std::uint8_t> file) {
  auto save = sim::decodeSave(file);
  if (!save) return;
  sim::SimState mirror = fuzz::baseState();
  (void)sim::restoreState(*save, mirror);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest = fuzz::bytesOf(data + 1, size - 1);
  switch (data[0] % 7) {
    case 0: decodeAndRestore(rest); return 0;
    case 1: {
      sim::SaveHeader header;
      header.identity = {fuzz::baseState().sceneHash, fuzz::baseState().seed, sim::kGeneratorVersion};
      auto file = sim::sealSavePayload(header, rest, 1);
      if (file) decodeAndRestore(*file);
      return 0;
    }
    default: break;
  }
  sim::SimState s = fuzz::baseState();
  switch (data[0] % 7) {
    case 2: (void)sim::decodePlayers(rest, s.players); break;
    case 3: (void)sim::decodeWater(rest, s.water, s.world); break;
    case 4: (void)sim::restoreFire(rest, s.fire, s.world, s.seed, 100); break;
    case 5: (void)sim::decodeAnimals(rest, s.animals, 100); break;
    case 6: (void)sim::decodeWeather(rest, s.weather); break;
    default: break;
  }
  return 0;
}
