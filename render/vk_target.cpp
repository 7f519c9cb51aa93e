#include "render/vk_target.h"

#include <algorithm>

namespace loam::render::vk {

sim::Result<std::unique_ptr<Target>> Target::create(Context& ctx, bool offscreen, std::uint32_t width,
                                                    std::uint32_t height, bool vsync) {
  std::unique_ptr<Target> t(new Target(ctx));
  t->offscreen_ = offscreen;
  t->vsync_ = vsync;
  if (!offscreen) {
    std::uint32_t n = 0;
    vkGetPhysicalDeviceSurfaceFormatsKHR(ctx.physical, ctx.surface, &n, nullptr);
    std::vector<VkSurfaceFormatKHR> formats(n);
    vkGetPhysicalDeviceSurfaceFormatsKHR(ctx.physical, ctx.surface, &n, formats.data());
    if (formats.empty()) return sim::makeError("the window surface offers no formats");
    VkSurfaceFormatKHR chosen = formats[0];
    bool srgb = false;
    for (const auto& f : formats)
      if ((f.format == VK_FORMAT_B8G8R8A8_SRGB || f.format == VK_FORMAT_R8G8B8A8_SRGB) &&
          f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) {
        chosen = f;
        srgb = true;
        break;
      }
    if (!srgb)
      for (const auto& f : formats)
        if (f.format == VK_FORMAT_B8G8R8A8_UNORM || f.format == VK_FORMAT_R8G8B8A8_UNORM) {
          chosen = f;
          break;
        }
    t->colourFormat_ = chosen.format;
    t->colourSpace_ = chosen.colorSpace;
    t->encodeSrgb_ = !srgb;
  }

  VkAttachmentDescription att[2]{};
  att[0].format = t->colourFormat_;
  att[0].samples = VK_SAMPLE_COUNT_1_BIT;
  att[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  att[0].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  att[0].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  att[0].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[0].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  att[0].finalLayout = offscreen ? VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL : VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
  att[1].format = VK_FORMAT_D32_SFLOAT;
  att[1].samples = VK_SAMPLE_COUNT_1_BIT;
  att[1].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  att[1].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[1].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  att[1].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[1].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  att[1].finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
  VkAttachmentReference colourRef{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkAttachmentReference depthRef{1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.colorAttachmentCount = 1;
  sub.pColorAttachments = &colourRef;
  sub.pDepthStencilAttachment = &depthRef;
  // Frames overlap: the previous frame's colour writes / readback copy and depth
  // tests must finish before this frame clears the same images.
  VkSubpassDependency deps[2]{};
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT |
                         VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT;
  deps[0].srcAccessMask = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT |
                          VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  VkRenderPassCreateInfo rpi{};
  rpi.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO;
  rpi.attachmentCount = 2;
  rpi.pAttachments = att;
  rpi.subpassCount = 1;
  rpi.pSubpasses = &sub;
  rpi.dependencyCount = 2;
  rpi.pDependencies = deps;
  if (VkResult r = vkCreateRenderPass(ctx.device, &rpi, nullptr, &t->renderPass_); r != VK_SUCCESS)
    return vkError("vkCreateRenderPass", r);
  if (auto r = t->build(width, height); !r) return r.error();
  return t;
}

Target::~Target() {
  vkDeviceWaitIdle(ctx_.device);
  release();
  if (swapchain_) vkDestroySwapchainKHR(ctx_.device, swapchain_, nullptr);
  if (renderPass_) vkDestroyRenderPass(ctx_.device, renderPass_, nullptr);
}

void Target::release() {
  for (VkFramebuffer f : framebuffers_) vkDestroyFramebuffer(ctx_.device, f, nullptr);
  framebuffers_.clear();
  for (VkImageView v : swapViews_) vkDestroyImageView(ctx_.device, v, nullptr);
  swapViews_.clear();
  swapImages_.clear();
  ctx_.destroy(colour_);
  ctx_.destroy(depth_);
}

sim::Result<void> Target::recreate(std::uint32_t width, std::uint32_t height) {
  vkDeviceWaitIdle(ctx_.device);
  release();
  return build(width, height);
}

sim::Result<void> Target::build(std::uint32_t width, std::uint32_t height) {
  std::vector<VkImageView> views;
  if (offscreen_) {
    extent_ = {std::max(width, 1u), std::max(height, 1u)};
    auto c = ctx_.createImage(extent_.width, extent_.height, colourFormat_,
                              VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
    if (!c) return c.error();
    colour_ = *c;
    views.push_back(colour_.view);
  } else {
    VkSurfaceCapabilitiesKHR caps;
    vkGetPhysicalDeviceSurfaceCapabilitiesKHR(ctx_.physical, ctx_.surface, &caps);
    if (caps.currentExtent.width != UINT32_MAX) {
      extent_ = caps.currentExtent;
    } else {
      extent_.width = std::clamp(width, caps.minImageExtent.width, caps.maxImageExtent.width);
      extent_.height = std::clamp(height, caps.minImageExtent.height, caps.maxImageExtent.height);
    }
    if (extent_.width == 0 || extent_.height == 0) return {};  // minimised: no images until restored
    std::uint32_t pn = 0;
    vkGetPhysicalDeviceSurfacePresentModesKHR(ctx_.physical, ctx_.surface, &pn, nullptr);
    std::vector<VkPresentModeKHR> modes(pn);
    vkGetPhysicalDeviceSurfacePresentModesKHR(ctx_.physical, ctx_.surface, &pn, modes.data());
    VkPresentModeKHR mode = VK_PRESENT_MODE_FIFO_KHR;  // always offered
    if (!vsync_) {
      if (std::find(modes.begin(), modes.end(), VK_PRESENT_MODE_MAILBOX_KHR) != modes.end())
        mode = VK_PRESENT_MODE_MAILBOX_KHR;
      else if (std::find(modes.begin(), modes.end(), VK_PRESENT_MODE_IMMEDIATE_KHR) != modes.end())
        mode = VK_PRESENT_MODE_IMMEDIATE_KHR;
    }
    std::uint32_t count = std::max(caps.minImageCount + 1, 3u);
    if (caps.maxImageCount) count = std::min(count, caps.maxImageCount);
    VkSwapchainCreateInfoKHR sci{};
    sci.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR;
    sci.surface = ctx_.surface;
    sci.minImageCount = count;
    sci.imageFormat = colourFormat_;
    sci.imageColorSpace = colourSpace_;
    sci.imageExtent = extent_;
    sci.imageArrayLayers = 1;
    sci.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    if (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) sci.imageUsage |= VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    sci.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
    sci.preTransform = caps.currentTransform;
    sci.compositeAlpha = (caps.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR)
                             ? VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR
                             : static_cast<VkCompositeAlphaFlagBitsKHR>(caps.supportedCompositeAlpha & -caps.supportedCompositeAlpha);
    sci.presentMode = mode;
    sci.clipped = VK_TRUE;
    sci.oldSwapchain = swapchain_;
    VkSwapchainKHR fresh = VK_NULL_HANDLE;
    VkResult r = vkCreateSwapchainKHR(ctx_.device, &sci, nullptr, &fresh);
    if (swapchain_) vkDestroySwapchainKHR(ctx_.device, swapchain_, nullptr);
    swapchain_ = fresh;
    if (r != VK_SUCCESS) return vkError("vkCreateSwapchainKHR", r);
    std::uint32_t n = 0;
    vkGetSwapchainImagesKHR(ctx_.device, swapchain_, &n, nullptr);
    swapImages_.resize(n);
    vkGetSwapchainImagesKHR(ctx_.device, swapchain_, &n, swapImages_.data());
    for (VkImage img : swapImages_) {
      VkImageViewCreateInfo vci{};
      vci.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
      vci.image = img;
      vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
      vci.format = colourFormat_;
      vci.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
      VkImageView v = VK_NULL_HANDLE;
      if (VkResult vr = vkCreateImageView(ctx_.device, &vci, nullptr, &v); vr != VK_SUCCESS)
        return vkError("vkCreateImageView (swapchain)", vr);
      swapViews_.push_back(v);
    }
    views = swapViews_;
  }
  auto d = ctx_.createImage(extent_.width, extent_.height, VK_FORMAT_D32_SFLOAT, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT);
  if (!d) return d.error();
  depth_ = *d;
  for (VkImageView v : views) {
    VkImageView att[2] = {v, depth_.view};
    VkFramebufferCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO;
    fci.renderPass = renderPass_;
    fci.attachmentCount = 2;
    fci.pAttachments = att;
    fci.width = extent_.width;
    fci.height = extent_.height;
    fci.layers = 1;
    VkFramebuffer fb = VK_NULL_HANDLE;
    if (VkResult r = vkCreateFramebuffer(ctx_.device, &fci, nullptr, &fb); r != VK_SUCCESS)
      return vkError("vkCreateFramebuffer", r);
    framebuffers_.push_back(fb);
  }
  return {};
}

}  // namespace loam::render::vk
