// BrickView: read-only access to one brick of the store (uniform, or a palette
// record) without copying, and the canonical packed form of a brick's 512
// materials that hashes and saves use.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "sim/world/internal/brick_chunk.h"
#include "sim/world/voxel.h"

namespace loam::sim {

/// Read-only access to one brick without copying. Valid until the next write to its
/// chunk (a write may move or free the record). Cheap to copy (16 bytes).
class BrickView {
 public:
  /// A uniform brick of material m (default: air).
  explicit BrickView(MaterialId m = kAir) noexcept : uniform_(m) {}
  /// A palette brick; rec points at its record (sim/world/internal/brick_chunk.h), fill
  /// is the number of palette indices in use (holes included).
  BrickView(const std::uint8_t* rec, unsigned bitsLog2, unsigned distinct, unsigned fill) noexcept
      : rec_(rec),
        bitsLog2_(static_cast<std::uint8_t>(bitsLog2)),
        fill_(static_cast<std::uint8_t>(fill)),
        distinct_(static_cast<std::uint16_t>(distinct)) {}

  /// True when all 512 voxels are one material (uniformMaterial()).
  bool isUniform() const noexcept { return rec_ == nullptr; }
  /// The brick's material when isUniform(); unspecified otherwise.
  MaterialId uniformMaterial() const noexcept { return uniform_; }
  /// True when the brick is uniform air.
  bool isAir() const noexcept { return rec_ == nullptr && uniform_ == kAir; }
  /// Bits per voxel of the palette encoding: 0 when uniform, else 1, 2, 4 or 8.
  int bitsPerVoxel() const noexcept { return rec_ ? 1 << bitsLog2_ : 0; }
  /// Distinct materials present (1 when uniform).
  int distinctMaterials() const noexcept { return rec_ ? distinct_ : 1; }

  /// The material of voxel index i (voxelIndexInBrick order, 0..511). O(1).
  MaterialId at(int i) const noexcept {
    if (!rec_) return uniform_;
    unsigned idx = internal::readIndex(rec_, bitsLog2_, static_cast<unsigned>(i));
    return rec_[internal::paletteOffset(bitsLog2_) + idx];
  }
  /// False when no voxel's material is flagged in `flags`, found from the palette
  /// alone (its unused entries may give a true; so may a brick of more than 16
  /// materials, whose palette this does not read). O(palette).
  bool mayHoldAny(const std::array<std::uint8_t, 256>& flags) const noexcept {
    if (!rec_) return flags[uniform_] != 0;
    if (bitsLog2_ >= 3) return true;
    const std::uint8_t* palette = rec_ + internal::paletteOffset(bitsLog2_);
    for (unsigned i = 0; i < fill_; ++i)
      if (flags[palette[i]]) return true;
    return false;
  }
  /// The material at local voxel (lx, ly, lz), each 0..7.
  MaterialId get(int lx, int ly, int lz) const noexcept { return at(voxelIndexInBrick(lx, ly, lz)); }
  /// Writes the 512 materials to out512 in canonical order. No allocation.
  void decode(MaterialId* out512) const noexcept;

  /// Largest canonical packed form in bytes.
  static constexpr std::size_t kMaxPackedBytes = 1 + kBrickVoxels;
  /// Writes the brick's canonical packed form to out (kMaxPackedBytes of room) and
  /// returns its length. The form depends only on the 512 materials, never on the
  /// palette's history, so hashes and saves use it:
  ///   one material m:          0x00 m                                   (2 bytes)
  ///   n = 2..16 materials:     (1 + k) n palette[n] indices[64 << k]     k = 0, 1, 2
  ///                            for n <= 2, <= 4, <= 16; palette ascending; voxel
  ///                            i's index at bit i << k, least significant first
  ///   more than 16 materials:  0x04 then the 512 materials
  /// O(bytes written) when the palette is already canonical, else one pass over the
  /// 512 voxels. No allocation.
  std::size_t packCanonical(std::uint8_t* out) const noexcept;

 private:
  const std::uint8_t* rec_ = nullptr;
  std::uint8_t bitsLog2_ = 0;
  std::uint8_t fill_ = 0;
  MaterialId uniform_ = kAir;
  std::uint16_t distinct_ = 1;
};

/// Writes the canonical packed form (BrickView::packCanonical) of 512 materials to
/// out (BrickView::kMaxPackedBytes of room); returns its length. No allocation.
std::size_t packCanonical(const MaterialId* voxels512, std::uint8_t* out) noexcept;

/// Decodes a canonical packed form (BrickView::packCanonical) of at most size bytes
/// into 512 materials. Returns the bytes consumed, or 0 if the form is malformed
/// (bad tag, palette not ascending or out of size, index past the palette, short
/// input). Never reads past size. No allocation.
std::size_t unpackCanonical(const std::uint8_t* in, std::size_t size, MaterialId* out512) noexcept;

}  // namespace loam::sim
