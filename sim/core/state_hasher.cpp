#include "sim/core/state_hasher.h"

#include <xxhash.h>

namespace loam::sim {

namespace {
static_assert(sizeof(XXH3_state_t) <= 640 && alignof(XXH3_state_t) <= 64, "StateHasher storage too small");
XXH3_state_t* xs(unsigned char* p) { return reinterpret_cast<XXH3_state_t*>(p); }
const XXH3_state_t* xs(const unsigned char* p) { return reinterpret_cast<const XXH3_state_t*>(p); }
}  // namespace

StateHasher::StateHasher(std::uint64_t seed) noexcept {
  XXH3_INITSTATE(xs(state_));
  XXH3_64bits_reset_withSeed(xs(state_), seed);
}

void StateHasher::flush(const void* p, std::size_t n) noexcept {
  XXH3_64bits_update(xs(state_), buf_, used_);
  used_ = 0;
  if (n > sizeof(buf_)) {
    XXH3_64bits_update(xs(state_), p, n);
    return;
  }
  const auto* c = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) buf_[i] = c[i];
  used_ = n;
}

std::uint64_t StateHasher::digest() const noexcept {
  if (used_ == 0) return XXH3_64bits_digest(xs(state_));
  // Hash a copy so digest() stays const and repeatable.
  XXH3_state_t copy;
  XXH3_copyState(&copy, xs(state_));
  XXH3_64bits_update(&copy, buf_, used_);
  return XXH3_64bits_digest(&copy);
}

}  // namespace loam::sim
