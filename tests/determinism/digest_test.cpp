// detmath's digest in this build equals the committed golden.
#include <doctest/doctest.h>

#include <cinttypes>
#include <cstdio>

#include "detmath/digest.h"
#include "tests/determinism/golden.h"

TEST_CASE("detmath digest matches the golden") {
  std::uint64_t got = loam::dm::detmathDigest();
  std::uint64_t want = loam::test::golden("detmath-digest");
  if (got != want) {
    std::printf("detmath digest %016" PRIx64 ", golden %016" PRIx64 "; per function:\n", got, want);
    loam::dm::detmathDigestPerFunction([](std::string_view n, std::uint64_t h) {
      std::printf("  %-8.*s %016" PRIx64 "\n", static_cast<int>(n.size()), n.data(), h);
    });
  }
  CHECK(got == want);
}
