// Process-wide ENet initialisation, reference counted: ServerHost, ClientConnection,
// the link simulator and tests may each hold a guard, in any order, on any thread;
// enet_initialize runs on the first acquire and enet_deinitialize on the last release.
#pragma once

namespace loam::net {

/// Initialises ENet if no one holds it yet. Returns false when enet_initialize
/// failed (nothing is held then). Thread-safe; no allocation.
bool acquireEnet() noexcept;

/// Releases one successful acquireEnet(); the last release deinitialises ENet.
/// Thread-safe.
void releaseEnet() noexcept;

/// RAII form: holds ENet while it lives. Check ok() after construction.
class EnetGuard {
 public:
  EnetGuard() noexcept : ok_(acquireEnet()) {}
  ~EnetGuard() {
    if (ok_) releaseEnet();
  }
  EnetGuard(const EnetGuard&) = delete;
  EnetGuard& operator=(const EnetGuard&) = delete;
  /// True when ENet is initialised and held by this guard.
  bool ok() const noexcept { return ok_; }

 private:
  bool ok_;
};

}  // namespace loam::net
