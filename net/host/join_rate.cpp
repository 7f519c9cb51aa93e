#include "net/host/join_rate.h"

#include <algorithm>

namespace loam::net::host {

JoinRate::JoinRate(std::uint32_t burst, std::uint64_t ticksPerJoin) noexcept
    : window_((std::max<std::uint32_t>(burst, 1) - 1) * std::max<std::uint64_t>(ticksPerJoin, 1)),
      ticksPerJoin_(std::max<std::uint64_t>(ticksPerJoin, 1)) {}

bool JoinRate::admit(std::uint32_t address, std::uint64_t tick) {
  auto it = full_.find(address);
  if (it == full_.end()) {
    if (full_.size() >= kMaxAddresses) {
      full_.erase(std::min_element(full_.begin(), full_.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; }));
    }
    it = full_.emplace(address, tick).first;
  }
  std::uint64_t& full = it->second;
  const std::uint64_t from = std::max(full, tick);
  if (from - tick > window_) return false;
  full = from + ticksPerJoin_;
  return true;
}

std::uint64_t JoinRate::waitTicks(std::uint32_t address, std::uint64_t tick) const noexcept {
  const auto it = full_.find(address);
  if (it == full_.end() || it->second <= tick + window_) return 0;
  return it->second - tick - window_;
}

}  // namespace loam::net::host
