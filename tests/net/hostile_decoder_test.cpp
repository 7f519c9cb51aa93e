// Regressions for decoders of untrusted bytes, each found by reading or fuzzing
// (fuzz/): the input must never justify more memory than it carries, and never crash.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>
#include <zstd.h>

#include "net/protocol.h"
#include "net/wire.h"
#include "sim/core/fixed_point.h"
#include "sim/trace/script.h"
#include "sim/world/brick_store.h"

using namespace loam;
using Bytes = std::vector<std::uint8_t>;

TEST_CASE("a Compressed envelope whose raw_size exceeds its frame's declared size gets no scratch") {
  // A tiny zstd frame declaring 16 bytes, in an envelope that claims the 32 MB limit:
  // openServerMessage used to resize scratch to raw_size before decompressing.
  const Bytes content(16, 1);
  Bytes frame(ZSTD_compressBound(content.size()));
  frame.resize(ZSTD_compress(frame.data(), frame.size(), content.data(), content.size(), 1));
  flatbuffers::FlatBufferBuilder fbb;
  auto payload = fbb.CreateVector(frame.data(), frame.size());
  const auto claimed = static_cast<std::uint32_t>(net::kMaxServerMessageBytes);
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Compressed, wire::CreateCompressed(fbb, claimed, payload).Union()));
  const Bytes message(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  std::vector<std::uint8_t> scratch;
  CHECK(net::openServerMessage(message, net::kMaxServerMessageBytes, scratch) == nullptr);
  CHECK(scratch.capacity() < 4096);
}

TEST_CASE("fire records of a far-away cell stay far away (no int32 wrap)") {
  // fuzz/server_message.cpp: cell_x * 256 overflowed; 2^24 * 256 wrapped to 0, so a
  // record of a cell 4 billion voxels away landed in cell 0 (and was UB). Water's:
  // wire_test, "hostile water bytes".
  const sim::CellCoord far{1 << 24, -(1 << 24)};
  const sim::FireChange f = net::fromWire(wire::FireRec(5, 10, 2, 5, 6, 3, 0, 0), far);
  CHECK(f.corner.x == INT32_MAX);
  CHECK(f.corner.z == INT32_MIN);
  const sim::WorldBounds widest{{-(1 << 26), -(1 << 26), -(1 << 26)}, {1 << 26, 1 << 26, 1 << 26}};
  CHECK_FALSE(widest.containsBrick(sim::brickOf(f.corner)));
}

TEST_CASE("script positions beyond int32 units saturate instead of overflowing") {
  // fuzz/bot_script.cpp: "-2e8" metres became -2e11 units, cast to int32 (UB).
  auto script = sim::parseScript("at 10s server ignite 28,-2e8\n", "t.script");
  REQUIRE(script.has_value());
  REQUIRE(script->lines.size() == 1);
  CHECK(script->lines[0].pos.x == 28 * sim::kUnitsPerMetre);
  CHECK(script->lines[0].pos.z == INT32_MIN);
}
