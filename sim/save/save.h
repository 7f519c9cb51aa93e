// Save files: only what differs from the generated world (the bricks flagged
// modified since generation) plus named opaque blobs for simulation state, zstd-
// compressed, checksummed, written to a temp file, fsynced and renamed into place.
// Library loam_save (links zstd; never part of the cross-compiled core).
//
// File layout (little-endian):
//   header, 64 bytes:
//     0  magic "LOAMSAVE"           8  u32 format version      12 u32 generator version
//     16 u64 scene hash             24 u64 seed                32 u64 tick
//     40 u64 raw payload bytes      48 u64 compressed bytes
//     56 u64 XXH3-64 of header bytes [0, 56) followed by the compressed payload
//   payload: one zstd frame of
//     bounds: 6 x i32 (min x, y, z, max x, y, z, in bricks)
//     u32 brick count n, then n brick coordinates (3 x i32, canonical store order,
//       strictly increasing), n kinds (u8: 0 whole brick, 1 delta against the
//       generated brick), the whole bricks' canonical packed forms (BrickView::
//       packCanonical), the delta bricks' change masks (64 bytes each: bit i set when
//       voxel i differs from the generated world), then the new material of every
//       changed voxel (bricks in order, voxels in voxelIndexInBrick order)
//     u32 blob count, then per blob: u16 name length, name bytes, u64 size, bytes
//
// Saving without stalling the step: captureSave() is the only part that reads the
// store (it copies the modified bricks); encodeSave() and writeSaveFile() may run
// on another thread afterwards.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/core/result.h"
#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;

/// The save format this build writes and reads.
inline constexpr std::uint32_t kSaveFormatVersion = 2;  // 2: RateBudget.pourTokens, pourTick
/// Size of the fixed header in bytes.
inline constexpr std::size_t kSaveHeaderBytes = 64;
/// Largest raw payload a loader accepts (bounds allocations from corrupt headers).
inline constexpr std::uint64_t kMaxSavePayloadBytes = std::uint64_t{1} << 31;

/// Which generated world a save applies to. A save loads only onto the world made
/// from the same scene, seed and generator.
struct SaveIdentity {
  std::uint64_t sceneHash = 0;         ///< hash of the scene file bytes
  std::uint64_t seed = 0;              ///< world seed
  std::uint32_t generatorVersion = 0;  ///< generator version the world was built with
};

/// The header of a save.
struct SaveHeader {
  std::uint32_t formatVersion = kSaveFormatVersion;  ///< format of the file (checked on load)
  SaveIdentity identity;                             ///< the world it applies to
  std::uint64_t tick = 0;  ///< simulation tick (60 Hz) at which the save was taken
};

/// One brick as saved. A whole brick holds its 512 materials; a delta brick (the
/// usual case: the store kept its generated content) holds only the voxels that
/// differ from the generated world, so applying it needs that world.
struct SavedBrick {
  BrickCoord coord;                            ///< brick position
  bool delta = false;                          ///< voxels valid only where `changed`
  std::array<std::uint64_t, 8> changed{};      ///< delta: bit i of word i/64 = voxel i differs
  std::array<MaterialId, kBrickVoxels> voxels{};  ///< voxelIndexInBrick order
};

/// Opaque state a later subsystem stores in the save under a unique name (1..255
/// bytes of name).
struct SaveBlob {
  std::string name;                 ///< unique, 1..255 bytes
  std::vector<std::uint8_t> bytes;  ///< opaque to the save
};

/// Sizes of an encoded save, for tools and budgets.
struct SaveSizes {
  std::uint64_t rawBytes = 0;         ///< payload before compression
  std::uint64_t compressedBytes = 0;  ///< payload after compression
  std::uint64_t fileBytes = 0;        ///< header + compressed payload
  std::uint64_t wholeBricks = 0;      ///< bricks saved whole (canonical packed form)
  std::uint64_t deltaBricks = 0;      ///< bricks saved as changes against the generated world
  std::uint64_t changedVoxels = 0;    ///< voxels stored by the delta bricks
};

/// Everything in a save.
struct SaveData {
  SaveHeader header;               ///< identity and tick
  WorldBounds bounds;              ///< the store's bounds (checked on apply)
  std::vector<SavedBrick> bricks;  ///< canonical store order
  std::vector<SaveBlob> blobs;     ///< in the order given to captureSave
  SaveSizes sizes;                 ///< filled by encodeSave / decodeSave
};

/// Copies the store's modified bricks (isModified, canonical order) and the blobs
/// into a SaveData: as deltas against BrickStore::generatedBrick when the store kept
/// it (bricks changed back to their generated content are left out), else whole.
/// The only save step that reads the store: call it between steps. Allocates ~600
/// bytes per modified brick. Errors: a blob name empty, longer than 255 bytes or
/// repeated.
Result<SaveData> captureSave(const SaveHeader& header, const BrickStore& store, std::vector<SaveBlob> blobs);

/// One brick as captureSave saves it, into out: false when b is not modified or holds
/// its generated content again (nothing to save). Lets a copy of the save be kept up
/// to date brick by brick (the world database, a cell's catch-up). No allocation.
bool captureBrick(const BrickStore& store, BrickCoord b, SavedBrick& out);

/// The bricks of one interest cell that differ from their generated content
/// (captureBrick each, canonical order) into out, cleared first: with the generated
/// world, all a client needs to hold the cell as store does (a full CellState, the
/// server's catch-up of a client that comes near). Cost: the modified bricks of the
/// cell's resident chunks, never the cell's volume.
void captureCellBricks(const BrickStore& store, CellCoord cell, std::vector<SavedBrick>& out);

/// Makes cell in store what captureCellBricks captured elsewhere: each listed brick
/// takes its content (a delta over the brick's generated content), and every other
/// modified brick of the cell goes back to its generated content, whatever edits the
/// store followed before. Appends each brick written to `written` (the caller
/// rehashes them). Errors, store unchanged: a brick outside cell or the bounds, or
/// listed twice. A streamed store generates the columns it reads.
Result<void> applyCellBricks(BrickStore& store, CellCoord cell, std::span<const SavedBrick> bricks,
                             std::vector<BrickCoord>& written);

/// Largest encodeBrickContent output: kind, mask and every voxel changed.
inline constexpr std::size_t kMaxBrickContentBytes = 1 + 64 + kBrickVoxels;

/// One brick's content alone (not its coordinates), the same pieces the payload holds
/// for it: u8 kind (0 whole, 1 delta), then the canonical packed form (whole) or the
/// 64-byte change mask and the changed voxels' materials (delta). The world database
/// stores a row of it per brick (sim/save/world_db.h). Appends to out; any thread.
void encodeBrickContent(const SavedBrick& brick, std::vector<std::uint8_t>& out);

/// Parses encodeBrickContent bytes into out (coord untouched). Every byte is checked
/// (size at most kMaxBrickContentBytes, kind, form, mask not empty, no trailing
/// bytes); errors say what is wrong, never a crash. No allocation but the message.
Result<void> decodeBrickContent(std::span<const std::uint8_t> bytes, SavedBrick& out);

/// Position of brick b in canonical store order for bounds (SaveData::bricks are
/// sorted by it). No allocation.
std::uint64_t canonicalBrickOrder(const WorldBounds& bounds, BrickCoord b);

/// Serialises and compresses (zstd level `level`) a save into file bytes; fills
/// data.sizes. Any thread. Allocates the output and a raw payload buffer.
Result<std::vector<std::uint8_t>> encodeSave(SaveData& data, int level = 3);

/// Compresses a raw payload (the layout above) and puts the header and checksum in
/// front: the last part of encodeSave, for tests and fuzz targets that reach the
/// payload parser with payloads of their own. Any thread. Allocates the output.
Result<std::vector<std::uint8_t>> sealSavePayload(const SaveHeader& header, std::span<const std::uint8_t> raw,
                                                  int level = 3);

/// Decompresses one zstd frame of exactly rawSize bytes into out (the save payload,
/// the world database's blobs). The buffer grows as output arrives (doubling from 1
/// MiB), so a frame that claims more than it yields allocates at most twice what it
/// yields. Errors ("corrupt save: ...") say what is wrong, never a crash. Any thread.
Result<void> decompressZstdFrame(const std::uint8_t* src, std::size_t size, std::uint64_t rawSize,
                                 std::vector<std::uint8_t>& out);

/// Parses file bytes: checks magic, format version, sizes, checksum, then
/// decompresses and validates every field (bricks inside the bounds, strictly
/// increasing, valid kinds; unique blob names; no trailing bytes). Any corruption
/// gives an Error naming what is wrong, never a crash. Does not check the identity.
/// Allocation follows what the bytes hold: the payload buffer grows as zstd yields
/// it (at most maxPayloadBytes, capped at kMaxSavePayloadBytes: pass less for bytes
/// from the network), and every count is checked against the payload bytes its
/// records need before the list is allocated.
Result<SaveData> decodeSave(std::span<const std::uint8_t> bytes, std::uint64_t maxPayloadBytes = kMaxSavePayloadBytes);

/// Checks a save against the world it is to be applied to. The error names every
/// field that differs, e.g. "save is for seed 7, this world has seed 8".
Result<void> checkSaveIdentity(const SaveHeader& saved, const SaveIdentity& world);

/// Writes bytes to path atomically: path + ".tmp" is written, fsynced and renamed
/// over path, then the folder is fsynced. On failure path is untouched and the temp
/// file removed; the error names the path and the system error. Blocking I/O.
Result<void> writeSaveFile(const std::string& path, std::span<const std::uint8_t> bytes);

/// Reads a whole file. Errors name the path and the system error.
Result<std::vector<std::uint8_t>> readFileBytes(const std::string& path);

/// captureSave + encodeSave + writeSaveFile. Returns the sizes written.
Result<SaveSizes> saveWorld(const std::string& path, const SaveHeader& header, const BrickStore& store,
                            std::vector<SaveBlob> blobs = {}, int level = 3);

/// readFileBytes + decodeSave + checkSaveIdentity(world). Errors are prefixed with
/// the path.
Result<SaveData> loadSave(const std::string& path, const SaveIdentity& world);

/// Writes one saved brick into store: a delta over the brick's generated content
/// (which an unmodified brick still holds), or its whole content. The brick ends up
/// modified unless equal to its generated content. A streamed store generates the
/// brick's column first.
void writeSavedBrick(BrickStore& store, const SavedBrick& sb);

/// Writes the saved bricks into store, which must hold the freshly generated world
/// of the save's identity (after markGenerated): delta bricks change only their
/// changed voxels. The bricks end up modified (so the next save keeps them) unless
/// equal to the generated content. Errors: bounds differ from the store's (store
/// unchanged).
Result<void> applySave(const SaveData& data, BrickStore& store);

}  // namespace loam::sim
