// Server config files (--config F or LOAM_CONFIG): parseOptions reads the file, so
// the input is written to a file of this process first, then parsed with a real
// scene and no environment.
#include <cstdio>
#include <string>
#include <unistd.h>

#include "fuzz/fuzz_support.h"
#include "server/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace loam;
  static const std::string path = std::string(P_tmpdir) + "/loam_fuzz_config_" + std::to_string(::getpid()) + ".toml";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  const bool written = std::fwrite(data, 1, size, f) == size;
  std::fclose(f);
  if (!written) return 0;
  const char* argv[] = {"loam-server", "--config", path.c_str(), "--scene", LOAM_SOURCE_DIR "/scenes/flat.toml"};
  (void)server::parseOptions(5, argv, server::Environment{});
  return 0;
}
