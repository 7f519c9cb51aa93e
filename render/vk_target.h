// Where frames go (private to render/): a window's swapchain or one offscreen colour
// image, plus the depth buffer, the render pass and the framebuffers.
//
// Colour is an sRGB format whenever one is offered, so shaders write linear light
// and the hardware encodes; encodeSrgb() tells the shaders to encode themselves
// when the swapchain only offers UNORM. Depth is D32 float, reversed Z (cleared to 0).
// The render pass leaves an offscreen image in TRANSFER_SRC layout (readback) and a
// swapchain image in PRESENT_SRC.
#pragma once
#include <cstdint>
#include <vector>

#include "render/vk_context.h"

namespace loam::render::vk {

class Target {
 public:
  /// Offscreen (no surface) or swapchain on ctx.surface. The render pass survives
  /// recreation (formats do not change).
  static sim::Result<std::unique_ptr<Target>> create(Context& ctx, bool offscreen, std::uint32_t width, std::uint32_t height,
                                                     bool vsync);
  ~Target();
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;

  /// Rebuilds images and framebuffers at the new size (waits for the device). A
  /// swapchain takes the surface's current extent when it defines one.
  sim::Result<void> recreate(std::uint32_t width, std::uint32_t height);

  VkRenderPass renderPass() const { return renderPass_; }
  VkExtent2D extent() const { return extent_; }
  VkFormat colourFormat() const { return colourFormat_; }
  bool offscreen() const { return offscreen_; }
  bool encodeSrgb() const { return encodeSrgb_; }
  std::uint32_t imageCount() const { return static_cast<std::uint32_t>(framebuffers_.size()); }
  VkFramebuffer framebuffer(std::uint32_t i) const { return framebuffers_[i]; }
  VkImage colourImage(std::uint32_t i) const { return offscreen_ ? colour_.image : swapImages_[i]; }
  VkSwapchainKHR swapchain() const { return swapchain_; }

 private:
  explicit Target(Context& ctx) : ctx_(ctx) {}
  sim::Result<void> build(std::uint32_t width, std::uint32_t height);
  void release();

  Context& ctx_;
  bool offscreen_ = true;
  bool vsync_ = true;
  bool encodeSrgb_ = false;
  VkFormat colourFormat_ = VK_FORMAT_R8G8B8A8_SRGB;
  VkColorSpaceKHR colourSpace_ = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR;
  VkExtent2D extent_{};
  VkRenderPass renderPass_ = VK_NULL_HANDLE;
  Image colour_;  ///< offscreen only
  Image depth_;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
  std::vector<VkImage> swapImages_;
  std::vector<VkImageView> swapViews_;
  std::vector<VkFramebuffer> framebuffers_;
};

}  // namespace loam::render::vk
