// Regressions for decoders of untrusted bytes, each found by reading or fuzzing
// (fuzz/): the input must never justify more memory than it carries, and never crash.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>
#include <zstd.h>

#include "net/protocol.h"
#include "net/wire.h"

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
