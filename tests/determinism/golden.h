// Reads tests/determinism/goldens.txt, the single source of golden hashes.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace loam::test {

/// The golden for `name` from goldens.txt; 0 if absent (which never matches a real hash).
inline std::uint64_t golden(const std::string& name) {
  std::ifstream in(LOAM_GOLDENS_FILE);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string n, hex;
    ls >> n >> hex;
    if (n == name) return std::stoull(hex, nullptr, 16);
  }
  return 0;
}

}  // namespace loam::test
