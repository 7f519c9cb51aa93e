// The byte writer and reader of the state codec (sim/save/state_codec.h): each
// system encodes its replicated state as one little-endian blob with them. Fixed
// widths, no padding, never raw struct bytes. The reader checks every length and
// keeps the first failure, so a decoder reads on and checks ok() once per record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/core/fixed_point.h"
#include "sim/core/result.h"

namespace loam::sim {

/// Version of the state encodings (first byte of each blob).
inline constexpr std::uint8_t kStateCodecVersion = 1;

/// Zigzag of a signed value: 0, -1, 1, -2... become 0, 1, 2, 3... (small either way
/// fits a short varint).
constexpr std::uint32_t zigzag(std::int32_t v) noexcept {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
constexpr std::int32_t unzigzag(std::uint32_t z) noexcept {
  return static_cast<std::int32_t>((z >> 1) ^ (0u - (z & 1u)));
}

/// Appends little-endian values to a byte vector. Allocates as the vector grows.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) noexcept : out_(out) {}

  /// The low `bytes` bytes of v (1..8).
  void un(std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { un(v, 2); }
  void u32(std::uint32_t v) { un(v, 4); }
  void u64(std::uint64_t v) { un(v, 8); }
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  /// LEB128: 7 bits a byte, low first, the high bit set on all but the last (1..5 bytes).
  void varint(std::uint32_t v) { varint64(v); }
  /// The same for 64 bits (1..10 bytes).
  void varint64(std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) out_.push_back(static_cast<std::uint8_t>(v | 0x80));
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  /// Bytes varint(v) takes.
  static constexpr std::size_t varintBytes(std::uint32_t v) noexcept {
    std::size_t n = 1;
    for (; v >= 0x80; v >>= 7) ++n;
    return n;
  }
  /// x, y, z as i32 each.
  void vec(Vec3i v) {
    i32(v.x);
    i32(v.y);
    i32(v.z);
  }
  /// The version byte and a u32 record count (the start of every blob).
  void header(std::uint32_t count) {
    u8(kStateCodecVersion);
    u32(count);
  }
  /// Bytes written so far into the vector (including what it held before).
  std::size_t size() const noexcept { return out_.size(); }
  /// Overwrites the u32 at byte `at` (a count known only after the records).
  void patchU32(std::size_t at, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i) out_[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
  }

 private:
  std::vector<std::uint8_t>& out_;
};

/// Bounds-checked little-endian reader of one blob. After the first failure every
/// read returns 0 and the failure sticks; finish() reports it prefixed with the blob's
/// name. No allocation except the error message.
class ByteReader {
 public:
  /// Reads `bytes`; `blob` names it in errors ("players", "fire"...) and must outlive the reader.
  ByteReader(std::span<const std::uint8_t> bytes, const char* blob) noexcept : b_(bytes), blob_(blob) {}

  bool ok() const noexcept { return err_.empty(); }
  std::size_t left() const noexcept { return b_.size() - pos_; }
  std::size_t pos() const noexcept { return pos_; }
  /// `bytes` bytes (1..8) as an unsigned value; 0 and a failure when truncated.
  std::uint64_t un(int bytes);
  std::uint8_t u8() { return static_cast<std::uint8_t>(un(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(un(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(un(4)); }
  std::uint64_t u64() { return un(8); }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  /// A LEB128 varint of at most 5 bytes whose fifth carries at most 4 bits; 0 and a
  /// failure otherwise.
  std::uint32_t varint() { return static_cast<std::uint32_t>(varintOf(32)); }
  /// The same for 64 bits: at most 10 bytes, the tenth carrying at most 1 bit.
  std::uint64_t varint64() { return varintOf(64); }
  /// The next n bytes; empty and a failure when fewer are left.
  std::span<const std::uint8_t> bytes(std::size_t n);
  Vec3i vec() {
    Vec3i v;
    v.x = i32();
    v.y = i32();
    v.z = i32();
    return v;
  }
  /// Records a failure (only the first one is kept).
  void fail(const std::string& what);
  /// Reads the version byte and a record count that the remaining bytes can hold
  /// (each record at least minRecordBytes). Returns 0 on failure.
  std::uint32_t header(std::size_t minRecordBytes);
  /// Reads the version byte alone (blobs without a count).
  void version();
  /// Fails on trailing bytes; returns the first failure as "<blob>: <what>".
  Result<void> finish();

 private:
  std::uint64_t varintOf(int bits);

  std::span<const std::uint8_t> b_;
  const char* blob_;
  std::size_t pos_ = 0;
  std::string err_;
};

}  // namespace loam::sim
