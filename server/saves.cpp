#include "server/saves.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <span>
#include <system_error>

#include "server/log.h"
#include "sim/save/state_codec.h"

namespace loam::server {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kExtension = ".loamsave";

std::string safeName(std::string_view name) {
  std::string s(name);
  for (char& c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-';
    if (!ok) c = '_';
  }
  return s;
}

std::string prefixFor(std::string_view sceneName, std::uint64_t seed) {
  return safeName(sceneName) + "-" + std::to_string(seed) + "-";
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Moves a save out of the way (renamed path + suffix, never deleted) so the next
/// start does not trip on it again and pruning does not count it.
void moveAside(const std::string& path, const char* suffix = ".corrupt") {
  std::error_code ec;
  fs::rename(path, path + suffix, ec);
  if (ec) {
    logLine("could not rename %s to %s: %s", LogValue(path).c_str(), suffix, ec.message().c_str());
  } else {
    logLine("moved %s aside to %s%s", LogValue(path).c_str(), LogValue(path).c_str(), suffix);
  }
}

}  // namespace

std::string saveFileName(std::string_view sceneName, std::uint64_t seed, std::uint64_t tick) {
  return prefixFor(sceneName, seed) + std::to_string(tick) + std::string(kExtension);
}

std::vector<SaveFile> listSaves(const std::string& dir, std::string_view sceneName, std::uint64_t seed) {
  std::vector<SaveFile> out;
  const std::string prefix = prefixFor(sceneName, seed);
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return out;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + kExtension.size()) continue;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - kExtension.size(), kExtension.size(), kExtension) != 0) continue;
    // The middle must be the tick and nothing else (a scene named "a-1" with seed 2
    // must not pick up scene "a"'s files and vice versa).
    std::string_view digits(name.data() + prefix.size(), name.size() - prefix.size() - kExtension.size());
    std::uint64_t tick = 0;
    auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), tick);
    if (err != std::errc{} || end != digits.data() + digits.size()) continue;
    out.push_back({it->path().string(), tick});
  }
  std::sort(out.begin(), out.end(), [](const SaveFile& a, const SaveFile& b) { return a.tick > b.tick; });
  return out;
}

int pruneSaves(const std::string& dir, std::string_view sceneName, std::uint64_t seed, std::size_t keep) {
  std::vector<SaveFile> files = listSaves(dir, sceneName, seed);
  int deleted = 0;
  for (std::size_t i = keep; i < files.size(); ++i) {
    std::error_code ec;
    if (fs::remove(files[i].path, ec)) {
      ++deleted;
    } else if (ec) {
      logLine("could not delete old save %s: %s", files[i].path.c_str(), ec.message().c_str());
    }
  }
  return deleted;
}

namespace {

/// The format version of save bytes by the documented header layout (sim/save/save.h:
/// magic "LOAMSAVE", then u32 little-endian version), or nothing when the bytes are
/// not a Loam save at all (then decodeSave's verdict, corrupt, applies).
std::optional<std::uint32_t> saveFormatOf(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 12 || std::memcmp(bytes.data(), "LOAMSAVE", 8) != 0) return std::nullopt;
  return static_cast<std::uint32_t>(bytes[8]) | static_cast<std::uint32_t>(bytes[9]) << 8 |
         static_cast<std::uint32_t>(bytes[10]) << 16 | static_cast<std::uint32_t>(bytes[11]) << 24;
}

}  // namespace

sim::Result<SaveSearch> loadNewestSave(const std::string& dir, std::string_view sceneName,
                                       const sim::SaveIdentity& identity, sim::SimState& state,
                                       const std::function<sim::Result<sim::SimState>()>& regenerate,
                                       bool freshWorld) {
  SaveSearch search;
  // A save that belongs elsewhere: a stop, or (asked for) set aside.
  auto unusable = [&](const std::string& path, const std::string& why) {
    if (!freshWorld) {
      search.unusable = "save " + path + " cannot be used here: " + why +
                        "; start with --fresh-world to set it aside (as .stale) and start from the generated world, "
                        "or move it out of the save folder";
      return false;
    }
    logLine("--fresh-world: skipping save %s: %s", LogValue(path).c_str(), LogValue(why).c_str());
    // Out of the list, or pruning would count its higher ticks and delete every save
    // of the current world as soon as it is written.
    moveAside(path, ".stale");
    return true;
  };
  for (const SaveFile& file : listSaves(dir, sceneName, identity.seed)) {
    auto t0 = std::chrono::steady_clock::now();
    auto bytes = sim::readFileBytes(file.path);
    if (!bytes) {
      logLine("cannot read save: %s; trying the next one", LogValue(bytes.error().message).c_str());
      continue;
    }
    if (auto format = saveFormatOf(*bytes); format && *format != sim::kSaveFormatVersion) {
      if (!unusable(file.path, "save format version " + std::to_string(*format) + ", this build reads version " +
                                   std::to_string(sim::kSaveFormatVersion))) {
        return search;
      }
      continue;
    }
    auto data = sim::decodeSave(*bytes);
    if (!data) {
      logLine("save %s is corrupt: %s", LogValue(file.path).c_str(), LogValue(data.error().message).c_str());
      moveAside(file.path);
      continue;
    }
    if (auto id = sim::checkSaveIdentity(data->header, identity); !id) {
      // Another world under the same name and seed (the scene, materials or generator changed).
      if (!unusable(file.path, id.error().message)) return search;
      continue;
    }
    if (auto r = sim::restoreState(*data, state); !r) {
      logLine("save %s does not restore: %s", LogValue(file.path).c_str(), LogValue(r.error().message).c_str());
      moveAside(file.path);
      logLine("regenerating the world after the failed restore");
      auto fresh = regenerate();
      if (!fresh) return fresh.error();
      state = std::move(*fresh);
      continue;
    }
    LoadedSave loaded{file.path, data->header.tick, data->bricks.size(), data->blobs.size()};
    logLine("loaded save %s: tick %" PRIu64 ", %zu bricks, %zu state blobs, %.1f ms", LogValue(file.path).c_str(),
            loaded.tick, loaded.bricks, loaded.blobs, msSince(t0));
    search.loaded = std::move(loaded);
    return search;
  }
  return search;
}

SaveWriter::SaveWriter(std::string dir, std::string sceneName, std::uint64_t seed)
    : dir_(std::move(dir)), sceneName_(std::move(sceneName)), seed_(seed), thread_([this] { run(); }) {}

SaveWriter::~SaveWriter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool SaveWriter::busy() const {
  std::lock_guard lock(mutex_);
  return working_ || pending_.has_value();
}

bool SaveWriter::submit(sim::SaveData data, sim::StateCopy state, double captureMs) {
  {
    std::lock_guard lock(mutex_);
    if (working_ || pending_) return false;
    pending_ = std::move(data);
    pendingState_ = std::move(state);
    pendingCaptureMs_ = captureMs;
  }
  cv_.notify_all();
  return true;
}

bool SaveWriter::waitIdle() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return !working_ && !pending_; });
  bool ok = !failed_;
  failed_ = false;
  return ok;
}

SaveStats SaveWriter::stats() const noexcept {
  SaveStats s;
  s.saves = saves_.load(std::memory_order_relaxed);
  s.failures = failures_.load(std::memory_order_relaxed);
  s.lastBytes = lastBytes_.load(std::memory_order_relaxed);
  s.lastSeconds = static_cast<double>(lastMicros_.load(std::memory_order_relaxed)) / 1e6;
  return s;
}

void SaveWriter::run() {
  for (;;) {
    sim::SaveData data;
    sim::StateCopy state;
    double captureMs = 0;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stop_ || pending_; });
      if (!pending_) return;  // stop_ with nothing left to write
      data = std::move(*pending_);
      pending_.reset();
      state = std::move(*pendingState_);
      pendingState_.reset();
      captureMs = pendingCaptureMs_;
      working_ = true;
    }
    bool ok = true;
    std::string path = (fs::path(dir_) / saveFileName(sceneName_, seed_, data.header.tick)).string();
    auto t0 = std::chrono::steady_clock::now();
    data.blobs = sim::stateBlobs(state);
    auto bytes = sim::encodeSave(data);
    double encodeMs = msSince(t0);
    if (!bytes) {
      logLine("save of tick %" PRIu64 " failed to encode: %s", data.header.tick, bytes.error().message.c_str());
      ok = false;
    } else {
      auto t1 = std::chrono::steady_clock::now();
      auto written = sim::writeSaveFile(path, *bytes);
      double writeMs = msSince(t1);
      if (!written) {
        logLine("save of tick %" PRIu64 " failed: %s", data.header.tick, written.error().message.c_str());
        ok = false;
      } else {
        lastBytes_.store(bytes->size(), std::memory_order_relaxed);
        lastMicros_.store(static_cast<std::uint64_t>((captureMs + encodeMs + writeMs) * 1000.0),
                          std::memory_order_relaxed);
        saves_.fetch_add(1, std::memory_order_relaxed);
        int pruned = pruneSaves(dir_, sceneName_, seed_, kSavesKept);
        logLine("saved %s: tick %" PRIu64 ", %.1f KB (%" PRIu64 " bricks changed), capture %.2f ms on the step, "
                "encode %.1f ms, write %.1f ms%s",
                path.c_str(), data.header.tick, static_cast<double>(bytes->size()) / 1024.0,
                data.sizes.wholeBricks + data.sizes.deltaBricks, captureMs, encodeMs, writeMs,
                pruned > 0 ? (", deleted " + std::to_string(pruned) + " older").c_str() : "");
      }
    }
    if (!ok) failures_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex_);
      working_ = false;
      if (!ok) failed_ = true;
    }
    cv_.notify_all();
  }
}

}  // namespace loam::server
