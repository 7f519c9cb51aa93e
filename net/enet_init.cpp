#include "net/enet_init.h"

#include <enet/enet.h>

#include <mutex>

namespace loam::net {
namespace {

std::mutex& enetMutex() noexcept {
  static std::mutex m;
  return m;
}
int enetUsers = 0;  // guarded by enetMutex()

}  // namespace

bool acquireEnet() noexcept {
  std::lock_guard lock(enetMutex());
  if (enetUsers == 0 && enet_initialize() != 0) return false;
  ++enetUsers;
  return true;
}

void releaseEnet() noexcept {
  std::lock_guard lock(enetMutex());
  if (enetUsers == 0) return;
  if (--enetUsers == 0) enet_deinitialize();
}

}  // namespace loam::net
