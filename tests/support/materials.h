// The shipped material table for tests, loaded once, and ids by name.
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "sim/world/material.h"

namespace loam::test {

/// sim/data/materials.toml (LOAM_SOURCE_DIR is set for every test by loam_add_test).
inline const sim::MaterialTable& materials() {
  static const sim::MaterialTable table = [] {
    auto r = sim::MaterialTable::load(std::string(LOAM_SOURCE_DIR) + "/sim/data/materials.toml");
    REQUIRE(r);
    return std::move(r).value();
  }();
  return table;
}

/// The id of a shipped material; fails the test when it does not exist.
inline sim::MaterialId materialId(const char* name) {
  auto id = materials().find(name);
  REQUIRE(id);
  return *id;
}

}  // namespace loam::test
