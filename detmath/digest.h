// The determinism digest: one 64-bit hash over detmath's outputs on a fixed input set.
// Every build of Loam (any compiler, optimisation level, CPU or OS) must print the
// same value; tests/determinism holds the golden and scripts/check-determinism
// compares every cross build against it.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace loam::dm {

/// Inputs hashed per function by default (special values included).
inline constexpr int kDigestInputsPerFunction = 100000;

/// Hash of every function's outputs on its fixed inputs, in a fixed order.
/// NaN results are hashed as one canonical pattern (payloads differ by CPU and are
/// not part of IEEE's contract). Pure; takes well under a second.
std::uint64_t detmathDigest(int inputsPerFunction = kDigestInputsPerFunction);

/// Calls `visit(name, hash)` for each function in digest order: locates which
/// function differs when the overall digest does not match.
void detmathDigestPerFunction(const std::function<void(std::string_view name, std::uint64_t hash)>& visit,
                              int inputsPerFunction = kDigestInputsPerFunction);

}  // namespace loam::dm
