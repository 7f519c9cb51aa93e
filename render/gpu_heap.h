// GpuHeap: vertex memory for every mesh the renderer keeps (voxel chunks, far
// terrain tiles), carved out of a few large mapped buffers instead of one Vulkan
// allocation per mesh (drivers limit and slow down many small allocations). Ranges
// come from a RangeAllocator per block; a mesh bigger than a block gets a block of
// its own. Private to render/; one thread.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "render/range_allocator.h"
#include "render/vk_context.h"

namespace loam::render::vk {

/// A range of a GpuHeap block. size == 0: none.
struct GpuRange {
  std::uint32_t block = 0;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  ///< host address of the range's first byte
};

class GpuHeap {
 public:
  /// Blocks of blockBytes (created as needed) for usage.
  GpuHeap(Context& ctx, VkDeviceSize blockBytes, VkBufferUsageFlags usage);
  ~GpuHeap();
  GpuHeap(const GpuHeap&) = delete;
  GpuHeap& operator=(const GpuHeap&) = delete;

  /// A range of at least bytes (> 0). Creates a block when none has room. Errors: out
  /// of device memory. O(log ranges) per block tried.
  sim::Result<GpuRange> allocate(VkDeviceSize bytes);
  /// Returns a range (the GPU must be done with it). No-op for an empty range.
  void free(const GpuRange& range);
  VkBuffer buffer(std::uint32_t block) const { return blocks_[block].buffer.buffer; }
  /// Bytes in live ranges.
  VkDeviceSize used() const;
  /// Bytes of GPU memory the blocks hold.
  VkDeviceSize reserved() const;
  std::size_t blockCount() const { return blocks_.size(); }

 private:
  struct Block {
    Buffer buffer;
    std::unique_ptr<RangeAllocator> ranges;
  };
  Context& ctx_;
  VkDeviceSize blockBytes_;
  VkBufferUsageFlags usage_;
  std::vector<Block> blocks_;
};

}  // namespace loam::render::vk
