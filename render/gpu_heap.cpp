#include "render/gpu_heap.h"

#include <algorithm>

namespace loam::render::vk {

GpuHeap::GpuHeap(Context& ctx, VkDeviceSize blockBytes, VkBufferUsageFlags usage)
    : ctx_(ctx), blockBytes_(blockBytes), usage_(usage) {}

GpuHeap::~GpuHeap() {
  for (Block& b : blocks_) ctx_.destroy(b.buffer);
}

sim::Result<GpuRange> GpuHeap::allocate(VkDeviceSize bytes) {
  if (bytes == 0) return sim::makeError("GpuHeap: empty allocation");
  auto place = [&](std::uint32_t i) -> GpuRange {
    Block& b = blocks_[i];
    auto offset = b.ranges->allocate(bytes);
    if (!offset) return {};
    return GpuRange{i, *offset, bytes, static_cast<char*>(b.buffer.mapped) + *offset};
  };
  for (std::uint32_t i = 0; i < blocks_.size(); ++i)
    if (blocks_[i].ranges->largestFree() >= bytes)
      if (GpuRange r = place(i); r.size != 0) return r;
  // A mesh bigger than a block gets one of its own size (freed with the heap).
  const VkDeviceSize size =
      std::max<VkDeviceSize>(blockBytes_, RangeAllocator::roundUp(bytes, RangeAllocator::kDefaultAlignment));
  auto buffer = ctx_.createBuffer(size, usage_);
  if (!buffer) return buffer.error();
  blocks_.push_back(Block{*buffer, std::make_unique<RangeAllocator>(size)});
  GpuRange r = place(static_cast<std::uint32_t>(blocks_.size() - 1));
  if (r.size == 0) return sim::makeError("GpuHeap: a new block has no room");
  return r;
}

void GpuHeap::free(const GpuRange& range) {
  if (range.size == 0) return;
  blocks_[range.block].ranges->free(range.offset);
}

VkDeviceSize GpuHeap::used() const {
  VkDeviceSize n = 0;
  for (const Block& b : blocks_) n += b.ranges->used();
  return n;
}

VkDeviceSize GpuHeap::reserved() const {
  VkDeviceSize n = 0;
  for (const Block& b : blocks_) n += b.buffer.size;
  return n;
}

}  // namespace loam::render::vk
