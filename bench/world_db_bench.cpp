// World database commits against whole-file saves (docs/PERF.md, World database
// commits). For each world: a played history (edits spread over the world, committed
// once), then rounds of ~150 touched bricks, each committed as the server does it
// (recapture the touched bricks and copy the state on the step; encode the blobs and
// commit on the writer), and the old whole-file save of the same state (capture,
// encode, write, fsync). Worlds: glade (generated whole) and highlands (8 x 8 km,
// streamed; the history is edits kilometres apart, as players who travelled). For the
// streamed world, the start after it too: the database loaded whole (every edited
// column generated and its rows applied) against lazily (the index and the blobs;
// columns load when read: WorldDbColumns).
// Usage: world_db_bench [--dir /tmp] [--rounds 10]. Prints JSON.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sim/gen/column_streamer.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/save/world_db.h"
#include "sim/save/world_db_columns.h"
#include "sim/systems/sim_state.h"
#include "sim/world/brick_store.h"
#include "sim/world/world_hash.h"

using namespace loam::sim;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// A small sphere of one material at voxel c; the bricks it touched go to touched.
void sphere(BrickStore& s, VoxelCoord c, MaterialId m, int r, std::vector<BrickCoord>& touched) {
  for (int dz = -r; dz <= r; ++dz)
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        if (dx * dx + dy * dy + dz * dz > r * r) continue;
        const VoxelCoord v{c.x + dx, c.y + dy, c.z + dz};
        if (!s.bounds().containsVoxel(v)) continue;
        s.set(v, m);
        touched.push_back(brickOf(v));
      }
}

/// A voxel a little below the surface at column (x, z) (the highest non-air voxel
/// found by a coarse scan from the top of the bounds).
VoxelCoord nearSurface(const BrickStore& s, int x, int z) {
  const int top = s.bounds().maxBrick.y * kBrickSize - 1, bottom = s.bounds().minBrick.y * kBrickSize;
  for (int y = top; y > bottom; y -= 4)
    if (s.get(x, y, z) != kAir) return {x, y, z};
  return {x, bottom + 8, z};
}

struct Figures {
  std::string world;
  std::size_t historyBricks = 0;
  double historyCommitMs = 0;
  std::size_t touchedPerRound = 0;
  double captureMs = 0, encodeMs = 0, commitMs = 0;  // medians per round
  double wholeSaveMs = 0;                           // median capture + encode + write
  std::uint64_t wholeSaveBytes = 0;
  std::uint64_t dbBytes = 0;
  std::uint64_t stateBlobBytes = 0;  // raw bytes of the state blobs
  // A streamed world's start from the database (0 for a whole world).
  double openWholeMs = 0, openLazyMs = 0;
  std::size_t columnsWhole = 0, columnsLazy = 0;  // present after the start
  std::size_t heldColumns = 0;                    // columns holding rows
};

/// A fresh streamed state of scene opened from the database at path, whole or
/// lazily; returns the milliseconds and sets columns to the present columns after.
double openStreamed(const Scene& scene, const std::string& path, bool lazy, std::size_t& columns,
                    std::size_t& held) {
  auto streamer = ColumnStreamer::create(scene, scene.defaultSeed, {.threads = 2, .maxResidentColumns = 1u << 20});
  auto state = createStreamedSimState(scene, scene.defaultSeed, **streamer);
  if (!state) std::exit(1);
  const std::size_t before = state->world.presentColumns().size();
  auto t0 = Clock::now();
  auto db = WorldDb::open(path);
  if (!db) std::exit(1);
  std::unique_ptr<WorldDbColumns> stored;
  if (lazy) {
    auto index = (*db)->loadIndex();
    auto reader = WorldDb::openReader(path);
    if (!index || !reader) std::exit(1);
    held = index->columns.size();
    stored = std::make_unique<WorldDbColumns>(std::move(*reader), index->columns, std::move(index->terms));
    stored->applyPresent(state->world);
    state->world.setStoredColumns(stored.get());
    SaveData blobs{(*db)->header(), (*db)->bounds(), {}, std::move(index->blobs), {}};
    if (!restoreState(blobs, *state)) std::exit(1);
  } else {
    auto contents = (*db)->load();
    if (!contents || !restoreState(contents->save, *state)) std::exit(1);
  }
  const double ms = msSince(t0);
  columns = state->world.presentColumns().size() - before;
  return ms;
}

/// Edits: `spots` places in [-extent, extent)^2 voxels around the origin, a sphere each.
std::vector<BrickCoord> editSpots(BrickStore& s, std::mt19937& rng, int spots, int extent, int radius) {
  std::vector<BrickCoord> touched;
  for (int i = 0; i < spots; ++i) {
    const int x = static_cast<int>(rng() % static_cast<unsigned>(2 * extent)) - extent;
    const int z = static_cast<int>(rng() % static_cast<unsigned>(2 * extent)) - extent;
    const VoxelCoord c = nearSurface(s, x, z);
    sphere(s, c, (rng() % 2) ? kAir : static_cast<MaterialId>(2), radius, touched);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  return touched;
}

Figures run(const char* name, SimState& state, int historySpots, int extent, int rounds, const std::string& dir,
            const Scene* streamed = nullptr) {
  Figures f;
  f.world = name;
  std::mt19937 rng(42);
  const SaveIdentity id{state.sceneHash, state.seed, kGeneratorVersion};
  const std::string dbPath = dir + "/world_db_bench_" + std::to_string(::getpid()) + "_" + name + ".loamdb";
  const std::string savePath = dir + "/world_db_bench_" + std::to_string(::getpid()) + "_" + name + ".loamsave";

  // History: many edits over the world, committed once (as an import would).
  editSpots(state.world, rng, historySpots, extent, 3);
  auto t0 = Clock::now();
  auto data = captureSave({kSaveFormatVersion, id, state.tick}, state.world, stateBlobs(state));
  auto db = createWorldDbFromSave(dbPath, *data, changedChunkTerms(state.world));
  if (!db) {
    std::fprintf(stderr, "%s\n", db.error().message.c_str());
    std::exit(1);
  }
  f.historyCommitMs = msSince(t0);
  f.historyBricks = data->bricks.size();
  for (const SaveBlob& b : data->blobs) f.stateBlobBytes += b.bytes.size();

  std::vector<double> capture, encode, commit, whole;
  for (int r = 0; r < rounds; ++r) {
    // ~150 touched bricks: small spheres far apart until that many.
    std::vector<BrickCoord> touched;
    while (touched.size() < 150) {
      std::vector<BrickCoord> more = editSpots(state.world, rng, 1, extent, 6);
      touched.insert(touched.end(), more.begin(), more.end());
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    }
    state.tick += 600;
    f.touchedPerRound = touched.size();
    auto c0 = Clock::now();
    WorldDbCommit c;
    c.tick = state.tick;
    SavedBrick sb;
    for (BrickCoord b : touched) {
      if (captureBrick(state.world, b, sb)) {
        c.bricks.push_back(sb);
      } else {
        c.removed.push_back(b);
      }
    }
    StateCopy copy = copyState(state);
    capture.push_back(msSince(c0));
    auto e0 = Clock::now();
    c.blobs = stateBlobs(copy);
    encode.push_back(msSince(e0));
    auto w0 = Clock::now();
    if (auto w = (*db)->commit(c); !w) {
      std::fprintf(stderr, "%s\n", w.error().message.c_str());
      std::exit(1);
    }
    commit.push_back(msSince(w0));

    // The old way: the whole save of the same state.
    auto s0 = Clock::now();
    auto saved = captureSave({kSaveFormatVersion, id, state.tick}, state.world, stateBlobs(state));
    auto bytes = encodeSave(*saved);
    if (!bytes || !writeSaveFile(savePath, *bytes)) {
      std::fprintf(stderr, "whole save failed\n");
      std::exit(1);
    }
    whole.push_back(msSince(s0));
    f.wholeSaveBytes = bytes->size();
  }
  f.captureMs = median(capture);
  f.encodeMs = median(encode);
  f.commitMs = median(commit);
  f.wholeSaveMs = median(whole);
  db->reset();
  if (streamed != nullptr) {
    f.openWholeMs = openStreamed(*streamed, dbPath, false, f.columnsWhole, f.heldColumns);
    f.openLazyMs = openStreamed(*streamed, dbPath, true, f.columnsLazy, f.heldColumns);
  }
  if (auto bytes = readFileBytes(dbPath)) f.dbBytes = bytes->size();
  for (const char* ext : {"", "-wal", "-shm"}) ::unlink((dbPath + ext).c_str());
  ::unlink(savePath.c_str());
  return f;
}

void print(const Figures& f, bool last) {
  std::printf("  {\"world\": \"%s\", \"history_bricks\": %zu, \"history_commit_ms\": %.1f, \"touched_bricks\": %zu, "
              "\"commit_capture_ms\": %.2f, \"commit_encode_ms\": %.2f, \"commit_write_ms\": %.2f, "
              "\"commit_total_ms\": %.2f, \"whole_save_ms\": %.1f, \"whole_save_bytes\": %llu, \"db_bytes\": %llu, "
              "\"state_blob_bytes\": %llu, \"held_columns\": %zu, \"open_whole_ms\": %.1f, \"open_whole_columns\": %zu, "
              "\"open_lazy_ms\": %.1f, \"open_lazy_columns\": %zu}%s\n",
              f.world.c_str(), f.historyBricks, f.historyCommitMs, f.touchedPerRound, f.captureMs, f.encodeMs,
              f.commitMs, f.captureMs + f.encodeMs + f.commitMs, f.wholeSaveMs,
              static_cast<unsigned long long>(f.wholeSaveBytes), static_cast<unsigned long long>(f.dbBytes),
              static_cast<unsigned long long>(f.stateBlobBytes), f.heldColumns, f.openWholeMs, f.columnsWhole,
              f.openLazyMs, f.columnsLazy, last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp";
  int rounds = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--dir") dir = argv[i + 1];
    else if (a == "--rounds") rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  std::vector<Figures> out;
  {
    auto scene = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml");
    if (!scene) return std::fprintf(stderr, "%s\n", scene.error().message.c_str()), 1;
    auto state = createSimState(*scene, scene->defaultSeed);
    if (!state) return std::fprintf(stderr, "%s\n", state.error().message.c_str()), 1;
    // glade's extent: the bounds' half width in voxels, minus a margin.
    const int extent = (state->world.bounds().maxBrick.x - state->world.bounds().minBrick.x) * kBrickSize / 2 - 16;
    out.push_back(run("glade", *state, 2000, extent, rounds, dir));
  }
  {
    auto scene = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/highlands.toml");
    if (!scene) return std::fprintf(stderr, "%s\n", scene.error().message.c_str()), 1;
    auto streamer = ColumnStreamer::create(*scene, scene->defaultSeed, {.threads = 2, .maxResidentColumns = 1u << 20});
    if (!streamer) return std::fprintf(stderr, "%s\n", streamer.error().message.c_str()), 1;
    auto state = createStreamedSimState(*scene, scene->defaultSeed, **streamer);
    if (!state) return std::fprintf(stderr, "%s\n", state.error().message.c_str()), 1;
    // Edits up to 3.5 km from the middle: a world players travelled across.
    const int extent = 3500 * kVoxelsPerMetre;
    out.push_back(run("highlands", *state, 300, extent, rounds, dir, &*scene));
  }
  std::printf("[\n");
  for (std::size_t i = 0; i < out.size(); ++i) print(out[i], i + 1 == out.size());
  std::printf("]\n");
  return 0;
}
