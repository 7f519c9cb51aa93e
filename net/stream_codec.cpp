#include "net/stream_codec.h"

#include <limits>
#include <string>

#include "net/protocol.h"
#include "net/wire.h"
#include "sim/core/state_bytes.h"

namespace loam::net {

void appendStreamItem(std::vector<std::uint8_t>& out, std::uint32_t previous, const StreamItemView& item) {
  sim::ByteWriter w(out);
  w.varint(item.sequence - previous);
  w.u8(static_cast<std::uint8_t>(item.kind));
  if (item.kind == StreamItemKind::Mark) return w.varint(item.fullState);
  if (item.kind == StreamItemKind::Water) {
    w.varint(sim::zigzag(item.cell.x));
    w.varint(sim::zigzag(item.cell.z));
    w.varint(item.rawSize);
  }
  w.varint(static_cast<std::uint32_t>(item.bytes.size()));
  out.insert(out.end(), item.bytes.begin(), item.bytes.end());
}

sim::Result<void> decodeStream(std::span<const std::uint8_t> bytes, std::vector<StreamItemView>& items) {
  items.clear();
  sim::ByteReader r(bytes, "Stream");
  if (bytes.empty()) r.fail("no item");
  std::uint32_t previous = 0;
  while (r.ok() && r.left() > 0) {
    StreamItemView item;
    const std::uint32_t gap = r.varint();
    if (r.ok() && gap == 0)
      r.fail(previous == 0 ? "sequence 0" : "an item after " + std::to_string(previous) + " with a gap of 0");
    if (r.ok() && gap > std::numeric_limits<std::uint32_t>::max() - previous)
      r.fail("a sequence past 32 bits after " + std::to_string(previous));
    item.sequence = previous + gap;
    const auto fail = [&](const std::string& what) { r.fail("item " + std::to_string(item.sequence) + " " + what); };
    const std::uint8_t kind = r.u8();
    if (r.ok() && kind > static_cast<std::uint8_t>(StreamItemKind::Water))
      fail("of unknown kind " + std::to_string(kind));
    item.kind = static_cast<StreamItemKind>(kind);
    if (item.kind == StreamItemKind::Mark) {
      item.fullState = r.varint();
      if (r.ok() && item.fullState == 0) fail("marks full CellState 0");
    } else {
      if (item.kind == StreamItemKind::Water) {
        item.cell.x = sim::unzigzag(r.varint());
        item.cell.z = sim::unzigzag(r.varint());
        item.rawSize = r.varint();
      }
      const std::uint32_t n = r.varint();
      if (r.ok() && n == 0) fail("has 0 bytes");
      item.bytes = r.bytes(n);
    }
    if (!r.ok()) break;
    items.push_back(item);
    previous = item.sequence;
  }
  if (auto done = r.finish(); !done) {
    items.clear();
    return sim::makeError(done.error().message);
  }
  return sim::ok();
}

std::uint32_t packWater(std::span<const std::uint8_t> records, std::vector<std::uint8_t>& out) {
  if (records.size() > kCompressAboveBytes && compressIfSmaller(records, 16, out))
    return static_cast<std::uint32_t>(records.size());
  out.assign(records.begin(), records.end());
  return 0;
}

sim::Result<std::span<const std::uint8_t>> unpackWater(const StreamItemView& item,
                                                       std::vector<std::uint8_t>& scratch) {
  if (item.rawSize == 0) return item.bytes;
  if (!decompressExact(item.bytes, item.rawSize, kMaxServerMessageBytes, scratch))
    return sim::makeError("water of " + std::to_string(item.bytes.size()) + " bytes that do not decompress to " +
                          std::to_string(item.rawSize));
  return std::span<const std::uint8_t>(scratch);
}

}  // namespace loam::net
