#include "sim/world/brick_view.h"

#include <cstring>

namespace loam::sim {

using internal::minimalBitsLog2;
using internal::paletteOffset;

namespace {

template <unsigned K>
void decodeK(const std::uint8_t* rec, MaterialId* out) noexcept {
  const std::uint8_t* pal = rec + paletteOffset(K);
  constexpr unsigned kBits = 1u << K;
  constexpr unsigned kPerByte = 8u / kBits;
  constexpr unsigned kMask = (1u << kBits) - 1u;
  for (unsigned j = 0; j < (64u << K); ++j) {
    unsigned byte = rec[j];
    for (unsigned t = 0; t < kPerByte; ++t) out[j * kPerByte + t] = pal[(byte >> (t * kBits)) & kMask];
  }
}

}  // namespace

void BrickView::decode(MaterialId* out512) const noexcept {
  if (!rec_) {
    std::memset(out512, uniform_, kBrickVoxels);
    return;
  }
  switch (bitsLog2_) {
    case 0:
      decodeK<0>(rec_, out512);
      break;
    case 1:
      decodeK<1>(rec_, out512);
      break;
    case 2:
      decodeK<2>(rec_, out512);
      break;
    default:
      std::memcpy(out512, rec_, kBrickVoxels);  // 8 bits: the indices are the materials
      break;
  }
}

std::size_t BrickView::packCanonical(std::uint8_t* out) const noexcept {
  if (!rec_) {
    out[0] = 0;
    out[1] = uniform_;
    return 2;
  }
  const unsigned k = bitsLog2_;
  if (k == 3) {
    out[0] = 4;
    std::memcpy(out + 1, rec_, kBrickVoxels);
    return 1 + kBrickVoxels;
  }
  const std::uint8_t* pal = rec_ + paletteOffset(k);
  const unsigned n = distinct_;
  const unsigned dataBytes = 64u << k;
  // Already canonical: no holes, ascending, minimal width (the store keeps widths
  // minimal). Then the stored bits are the canonical bits.
  bool canonical = n >= 2 && fill_ == n && minimalBitsLog2(n) == k;
  for (unsigned p = 1; canonical && p < n; ++p) canonical = pal[p - 1] < pal[p];
  if (canonical) {
    out[0] = static_cast<std::uint8_t>(1 + k);
    out[1] = static_cast<std::uint8_t>(n);
    std::memcpy(out + 2, pal, n);
    std::memcpy(out + 2 + n, rec_, dataBytes);
    return 2 + n + dataBytes;
  }
  // Not canonical (holes or order from edits): re-pack from the voxels.
  MaterialId buf[kBrickVoxels];
  decode(buf);
  return loam::sim::packCanonical(buf, out);
}

std::size_t packCanonical(const MaterialId* buf, std::uint8_t* out) noexcept {
  std::uint8_t present[256] = {};
  for (int i = 0; i < kBrickVoxels; ++i) present[buf[i]] = 1;
  std::uint8_t map[256];
  unsigned used = 0;
  std::uint8_t sorted[16];
  for (unsigned m = 0; m < 256; ++m) {
    if (!present[m]) continue;
    if (used < 16) sorted[used] = static_cast<std::uint8_t>(m);
    map[m] = static_cast<std::uint8_t>(used++);
  }
  if (used == 1) {
    out[0] = 0;
    out[1] = buf[0];
    return 2;
  }
  if (used > 16) {
    out[0] = 4;
    std::memcpy(out + 1, buf, kBrickVoxels);
    return 1 + kBrickVoxels;
  }
  const unsigned ck = minimalBitsLog2(used);
  const unsigned bits = 1u << ck, perByte = 8u / bits, cBytes = 64u << ck;
  out[0] = static_cast<std::uint8_t>(1 + ck);
  out[1] = static_cast<std::uint8_t>(used);
  std::memcpy(out + 2, sorted, used);
  std::uint8_t* data = out + 2 + used;
  for (unsigned j = 0; j < cBytes; ++j) {
    unsigned byte = 0;
    for (unsigned t = 0; t < perByte; ++t) byte |= static_cast<unsigned>(map[buf[j * perByte + t]]) << (t * bits);
    data[j] = static_cast<std::uint8_t>(byte);
  }
  return 2 + used + cBytes;
}

std::size_t unpackCanonical(const std::uint8_t* in, std::size_t size, MaterialId* out512) noexcept {
  if (size < 2) return 0;
  unsigned tag = in[0];
  if (tag == 0) {
    std::memset(out512, in[1], kBrickVoxels);
    return 2;
  }
  if (tag == 4) {
    if (size < 1 + kBrickVoxels) return 0;
    std::memcpy(out512, in + 1, kBrickVoxels);
    return 1 + kBrickVoxels;
  }
  if (tag > 4) return 0;
  const unsigned k = tag - 1;
  const unsigned n = in[1];
  if (n < 2 || minimalBitsLog2(n) != k) return 0;
  const std::size_t total = 2 + n + (64u << k);
  if (size < total) return 0;
  const std::uint8_t* pal = in + 2;
  for (unsigned p = 1; p < n; ++p)
    if (pal[p - 1] >= pal[p]) return 0;
  const std::uint8_t* data = pal + n;
  const unsigned bits = 1u << k, perByte = 8u / bits, mask = (1u << bits) - 1u;
  unsigned bad = 0;
  for (unsigned j = 0; j < (64u << k); ++j) {
    unsigned byte = data[j];
    for (unsigned t = 0; t < perByte; ++t) {
      unsigned idx = (byte >> (t * bits)) & mask;
      bad |= idx >= n;
      out512[j * perByte + t] = pal[idx < n ? idx : 0];
    }
  }
  return bad ? 0 : total;
}

}  // namespace loam::sim
