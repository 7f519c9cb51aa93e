// Scene files (servers and clients load them by name; modders write them): the
// scene parser from text against the real material table, never a crash, an abort
// (toml++'s asserts, sim/core/toml.h) or undefined behaviour.
#include <memory>

#include "fuzz/fuzz_support.h"
#include "sim/gen/scene.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace loam;
  static const std::shared_ptr<const sim::MaterialTable> materials = test::testMaterials();
  auto scene = sim::parseScene(fuzz::textOf(data, size), "fuzz.toml", materials);
  if (scene) (void)sim::sceneJoinHash(*scene);
  return 0;
}
