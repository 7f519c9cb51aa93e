#include "sim/core/state_bytes.h"

#include "sim/core/internal/format.h"

namespace loam::sim {

std::uint64_t ByteReader::un(int bytes) {
  if (!ok()) return 0;
  if (left() < static_cast<std::size_t>(bytes)) {
    fail(internal::format("truncated at byte %zu", pos_));
    return 0;
  }
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{b_[pos_ + static_cast<std::size_t>(i)]} << (8 * i);
  pos_ += static_cast<std::size_t>(bytes);
  return v;
}

std::uint64_t ByteReader::varintOf(int bits) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < bits; shift += 7) {
    const std::size_t at = pos_;
    const std::uint8_t byte = u8();
    if (!ok()) return 0;
    if (bits - shift < 7 && byte >= (1u << (bits - shift))) {
      fail(internal::format("varint over %d bits at byte %zu", bits, at));
      return 0;
    }
    v |= std::uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80)) return v;
  }
  return 0;  // unreachable: the last byte has no continuation bit
}

std::span<const std::uint8_t> ByteReader::bytes(std::size_t n) {
  if (!ok()) return {};
  if (left() < n) {
    fail(internal::format("truncated at byte %zu", pos_));
    return {};
  }
  pos_ += n;
  return b_.subspan(pos_ - n, n);
}

void ByteReader::fail(const std::string& what) {
  if (ok()) err_ = what;
}

void ByteReader::version() {
  const std::uint8_t v = u8();
  if (ok() && v != kStateCodecVersion) {
    fail(internal::format("version %u, expected %u", unsigned{v}, unsigned{kStateCodecVersion}));
  }
}

std::uint32_t ByteReader::header(std::size_t minRecordBytes) {
  version();
  const std::uint32_t n = u32();
  if (ok() && n > left() / minRecordBytes) fail(internal::format("count %u does not fit in %zu bytes", n, left()));
  return ok() ? n : 0;
}

Result<void> ByteReader::finish() {
  if (ok() && left() != 0) fail(internal::format("%zu trailing bytes", left()));
  if (ok()) return {};
  return makeError(std::string(blob_) + ": " + err_);
}

}  // namespace loam::sim
