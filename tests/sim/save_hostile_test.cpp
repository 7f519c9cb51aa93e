// decodeSave against crafted payloads (JoinSnapshots from a hostile server, corrupt
// save files): every count is checked against the bytes its records need before the
// list is allocated, and the payload buffer grows only as zstd yields it. The
// largest single allocation is measured by tests/support/alloc_counter.h.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>
#include <xxhash.h>
#include <zstd.h>

#include "sim/save/save.h"
#include "tests/support/alloc_counter.h"

using loam::test::gLargestAlloc;

using namespace loam::sim;

namespace {

void putI32(std::vector<std::uint8_t>& out, std::int32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(v) >> (8 * i)));
}

/// A payload that starts with bounds of 64 x 32 x 64 bricks (131,072), or with
/// `wide` 1024 x 64 x 1024 (67 M), and a brick count.
std::vector<std::uint8_t> payloadStart(std::uint32_t bricks, bool wide = false) {
  std::vector<std::uint8_t> raw;
  const std::int32_t s = wide ? 16 : 1;
  for (std::int32_t v : {-32 * s, 0, -32 * s, 32 * s, 32 * (wide ? 2 : 1), 32 * s}) putI32(raw, v);
  putI32(raw, static_cast<std::int32_t>(bricks));
  return raw;
}

/// Recomputes the checksum of file bytes whose header or frame a test patched.
void reseal(std::vector<std::uint8_t>& f) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, f.data(), 56);
  XXH3_64bits_update(&st, f.data() + kSaveHeaderBytes, f.size() - kSaveHeaderBytes);
  const std::uint64_t sum = XXH3_64bits_digest(&st);
  for (int i = 0; i < 8; ++i) f[56 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(sum >> (8 * i));
}

/// decodeSave of the sealed payload; returns the error and the largest allocation.
std::string decodeError(const std::vector<std::uint8_t>& raw, std::size_t& largest) {
  auto file = sealSavePayload(SaveHeader{}, raw, 1);
  REQUIRE(file.has_value());
  gLargestAlloc = 0;
  auto data = decodeSave(*file);
  largest = gLargestAlloc.load();
  REQUIRE_FALSE(data.has_value());
  return data.error().message;
}

}  // namespace

TEST_CASE("a brick count the payload bytes cannot back allocates nothing for bricks") {
  // 64 MiB of zeros compresses to a few KB: 4.4 M bricks of 15 bytes "fit", and the
  // old decoder resized the list to 4.4 M x ~600 bytes (2.6 GB) before reading one.
  // Now the coordinates are read first: the second all-zero coordinate repeats the first.
  const std::uint32_t bricks = 4000000;
  std::vector<std::uint8_t> raw = payloadStart(bricks, true);
  raw.resize(64u << 20, 0);
  std::size_t largest = 0;
  CHECK(decodeError(raw, largest).find("out of order or repeated") != std::string::npos);
  CHECK(largest <= raw.size() + (1u << 20));  // the payload buffer itself, no brick list
}

TEST_CASE("brick counts beyond the bounds or the payload are refused before allocating") {
  std::size_t largest = 0;
  std::vector<std::uint8_t> beyondBounds = payloadStart(131073);
  beyondBounds.resize(beyondBounds.size() + 131073u * 15, 0);
  CHECK(decodeError(beyondBounds, largest).find("exceeds the bricks of the bounds") != std::string::npos);
  CHECK(largest < 8u << 20);

  std::vector<std::uint8_t> beyondPayload = payloadStart(1000);
  beyondPayload.resize(beyondPayload.size() + 999u * 15, 0);
  CHECK(decodeError(beyondPayload, largest).find("exceeds the payload") != std::string::npos);
}

TEST_CASE("delta bricks need their masks: valid coordinates alone are not enough") {
  // 5000 increasing coordinates in the first chunk row, all of kind delta (65 bytes
  // each at least), followed by too few bytes for them.
  constexpr std::uint32_t kBricks = 4096;
  std::vector<std::uint8_t> raw = payloadStart(kBricks);
  for (std::uint32_t i = 0; i < kBricks; ++i) {
    // Canonical order within the chunk at (-2, 0, -2): brickIndexInChunk = x + 16 (y + 16 z).
    putI32(raw, -32 + static_cast<std::int32_t>(i % 16));
    putI32(raw, static_cast<std::int32_t>((i / 16) % 16));
    putI32(raw, -32 + static_cast<std::int32_t>(i / 256));
  }
  raw.insert(raw.end(), kBricks, 1);
  raw.resize(raw.size() + kBricks * 20, 0);
  std::size_t largest = 0;
  CHECK(decodeError(raw, largest).find("truncated in brick contents") != std::string::npos);
  CHECK(largest < 2u << 20);
}

TEST_CASE("a zstd frame that claims more content than it holds is refused without that allocation") {
  // A frame of 100 KB whose 4-byte content size field is patched to 1 GiB (and the
  // header's raw size to match): the old decoder allocated the 1 GiB up front.
  std::vector<std::uint8_t> raw = payloadStart(0);
  raw.resize(100000, 7);
  auto file = sealSavePayload(SaveHeader{}, raw, 1);
  REQUIRE(file.has_value());
  std::vector<std::uint8_t>& f = *file;
  const std::uint8_t descriptor = f[64 + 4];
  REQUIRE((descriptor >> 6) == 2);  // 4-byte frame content size
  const std::size_t fcsAt = 64 + 4 + 1 + ((descriptor & 0x20) ? 0 : 1) + (std::size_t{1} << (descriptor & 3)) / 2;
  const std::uint32_t claimed = 1u << 30;
  std::memcpy(f.data() + fcsAt, &claimed, 4);
  std::memcpy(f.data() + 40, &claimed, 4);
  reseal(f);
  gLargestAlloc = 0;
  auto data = decodeSave(f);
  CHECK_FALSE(data.has_value());
  CHECK(gLargestAlloc.load() < 8u << 20);
}

TEST_CASE("maxPayloadBytes refuses a payload above the caller's limit") {
  std::vector<std::uint8_t> raw = payloadStart(0);
  raw.resize(4096, 0);
  auto file = sealSavePayload(SaveHeader{}, raw, 1);
  REQUIRE(file.has_value());
  auto data = decodeSave(*file, 1024);
  REQUIRE_FALSE(data.has_value());
  CHECK(data.error().message.find("exceeds the limit of 1024") != std::string::npos);
}
