// Server save files: naming, finding the newest usable one at start, and writing on
// a worker thread so the 60 Hz step only pays for captureSave.
//
// Files are <save-dir>/<scene>-<seed>-<tick>.loamsave (scene name with anything but
// [A-Za-z0-9_.-] replaced by '_'). At start the highest tick is tried first; a file
// that does not decode is renamed to <file>.corrupt and the next one is tried. A file
// that cannot be used here (another save format, or another world: scene content,
// seed or generator differ) stops the start, so a world is never silently replaced by
// a fresh one; only when the operator asks for a fresh world (--fresh-world) is it
// renamed to <file>.stale and the next one tried.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sim/core/result.h"
#include "sim/save/state_codec.h"
#include "sim/save/save.h"
#include "sim/systems/sim_state.h"

namespace loam::server {

/// How many saves per scene and seed are kept; older ones are deleted after a write.
inline constexpr std::size_t kSavesKept = 3;

/// A save file found on disk.
struct SaveFile {
  std::string path;
  std::uint64_t tick = 0;  ///< from the file name
};

/// The file name (no folder) of a save. Allocates.
std::string saveFileName(std::string_view sceneName, std::uint64_t seed, std::uint64_t tick);

/// Save files of this scene and seed in dir, highest tick first. A missing or
/// unreadable folder gives an empty list. Allocates.
std::vector<SaveFile> listSaves(const std::string& dir, std::string_view sceneName, std::uint64_t seed);

/// Deletes all but the `keep` newest saves of this scene and seed. Returns how many
/// were deleted. Failures to delete are logged and skipped.
int pruneSaves(const std::string& dir, std::string_view sceneName, std::uint64_t seed, std::size_t keep);

/// What loadNewestSave did.
struct LoadedSave {
  std::string path;
  std::uint64_t tick = 0;
  std::size_t bricks = 0;
  std::size_t blobs = 0;
};

/// What loadNewestSave found.
struct SaveSearch {
  std::optional<LoadedSave> loaded;  ///< the save applied; none = the generated world
  /// Not empty: a save that cannot be used here stopped the search (freshWorld off).
  /// One line naming the file and what differs; nothing was applied or moved.
  std::string unusable;
};

/// Finds the newest save of this scene and seed and applies it to state with
/// restoreState. state must be the freshly generated state; `regenerate` is called to
/// rebuild it when a save fails part-way through restoring (the state may then be
/// half-applied). A save of another format or world stops the search (unusable set)
/// unless freshWorld, which moves it aside as .stale and goes on. Logs one line per
/// file it rejects. Errors: regenerate failed.
sim::Result<SaveSearch> loadNewestSave(const std::string& dir, std::string_view sceneName,
                                       const sim::SaveIdentity& identity, sim::SimState& state,
                                       const std::function<sim::Result<sim::SimState>()>& regenerate,
                                       bool freshWorld);

/// What SaveWriter has written since it started.
struct SaveStats {
  std::uint64_t saves = 0;     ///< files written
  std::uint64_t failures = 0;  ///< saves that failed to encode or write
  double lastSeconds = 0;      ///< capture + encode + write of the last file written
  std::uint64_t lastBytes = 0; ///< size of the last file written
};

/// Encodes and writes captured saves on its own thread, one at a time, then prunes.
/// Thread: submit/busy/waitIdle from one owner thread.
class SaveWriter {
 public:
  SaveWriter(std::string dir, std::string sceneName, std::uint64_t seed);
  /// Waits for the current write, then stops the thread.
  ~SaveWriter();
  SaveWriter(const SaveWriter&) = delete;
  SaveWriter& operator=(const SaveWriter&) = delete;

  /// True while a save is being encoded or written.
  bool busy() const;
  /// Hands a captured save (bricks; its blobs are left empty) and a copy of the state
  /// to the thread, which encodes the state blobs, then the save. Returns false if
  /// busy (the caller captures only when !busy()). captureMs is logged with the write.
  bool submit(sim::SaveData data, sim::StateCopy state, double captureMs);
  /// Blocks until no save is pending. Returns false if any write since the last call
  /// failed.
  bool waitIdle();
  /// Counters for metrics. Any thread; lock-free, so the step may call it.
  SaveStats stats() const noexcept;

 private:
  void run();

  std::string dir_, sceneName_;
  std::uint64_t seed_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<sim::SaveData> pending_;
  std::optional<sim::StateCopy> pendingState_;
  double pendingCaptureMs_ = 0;
  bool working_ = false;
  bool stop_ = false;
  bool failed_ = false;
  // Written by the writer thread, read by anyone.
  std::atomic<std::uint64_t> saves_{0}, failures_{0}, lastBytes_{0}, lastMicros_{0};
  std::thread thread_;
};

}  // namespace loam::server
