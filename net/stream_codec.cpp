#include "net/stream_codec.h"

#include <limits>
#include <string>

#include "sim/core/state_bytes.h"

namespace loam::net {

void appendStreamItem(std::vector<std::uint8_t>& out, std::uint32_t previous, const StreamItemView& item) {
  sim::ByteWriter w(out);
  w.varint(item.sequence - previous);
  w.varint(item.fullState);
  if (item.fullState != 0) return;
  w.varint(static_cast<std::uint32_t>(item.message.size()));
  out.insert(out.end(), item.message.begin(), item.message.end());
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
    item.fullState = r.varint();
    if (r.ok() && item.fullState == 0) {
      const std::uint32_t n = r.varint();
      if (r.ok() && n == 0) r.fail("item " + std::to_string(item.sequence) + " has a message of 0 bytes");
      item.message = r.bytes(n);
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

}  // namespace loam::net
