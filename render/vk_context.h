// Vulkan instance, device and memory helpers (private to render/).
//
// One graphics queue (that can also present to the window's surface, if any). The
// validation layer, when asked for, reports through a debug-utils messenger that
// counts and prints every error. Buffers are host-visible and persistently mapped
// (preferring device-local memory that is host-visible): meshes are written once
// and read by the GPU, so no staging copies are needed.
#pragma once
#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/result.h"

struct SDL_Window;

namespace loam::render::vk {

/// A buffer with its memory, mapped for its whole life.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
};

/// A device-local image with its memory and a view.
struct Image {
  VkImage image = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkFormat format = VK_FORMAT_UNDEFINED;
};

/// Returns "what: VK_ERROR_..." as an Error.
sim::Error vkError(const char* what, VkResult r);

class Context {
 public:
  /// Instance (+ SDL's surface extensions and a surface when window is set), device,
  /// queue and command pool. Errors: no driver, no device, missing validation layer.
  static sim::Result<std::unique_ptr<Context>> create(SDL_Window* window, bool validation);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// A mapped buffer of size bytes. Errors: out of memory.
  sim::Result<Buffer> createBuffer(VkDeviceSize size, VkBufferUsageFlags usage);
  void destroy(Buffer& b);
  /// A 2-D image with a view (colour or depth aspect from format).
  sim::Result<Image> createImage(std::uint32_t w, std::uint32_t h, VkFormat format, VkImageUsageFlags usage);
  void destroy(Image& i);
  /// Records with fn into a one-time command buffer, submits and waits.
  template <class F>
  VkResult oneShot(F&& fn) {
    VkCommandBuffer cb = beginOneShot();
    fn(cb);
    return endOneShot(cb);
  }
  /// Validation messages of severity error so far.
  std::uint64_t validationErrors() const { return validationErrors_.load(); }

  VkInstance instance = VK_NULL_HANDLE;
  VkSurfaceKHR surface = VK_NULL_HANDLE;  ///< window mode only
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t queueFamily = 0;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  std::string deviceName;
  VkPhysicalDeviceProperties properties{};

 private:
  Context() = default;
  VkCommandBuffer beginOneShot();
  VkResult endOneShot(VkCommandBuffer cb);
  std::uint32_t memoryType(std::uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) const;
  static VKAPI_ATTR VkBool32 VKAPI_CALL debugCallback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                      VkDebugUtilsMessageTypeFlagsEXT types,
                                                      const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  std::atomic<std::uint64_t> validationErrors_{0};
};

}  // namespace loam::render::vk
