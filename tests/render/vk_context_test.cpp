// The validation plumbing itself: a deliberately invalid call must be counted, or
// "zero validation errors" in the other render tests would prove nothing.
#include <doctest/doctest.h>

#include "render/vk_context.h"

using namespace loam::render;

TEST_CASE("the validation messenger counts an invalid call") {
  auto ctx = vk::Context::create(nullptr, true);
  if (!ctx) FAIL("Context::create: " << ctx.error().message);
  vk::Context& c = **ctx;
  CHECK_FALSE(c.deviceName.empty());
  CHECK(c.validationErrors() == 0);
  // A buffer of size 0 is invalid (VUID-VkBufferCreateInfo-size-00912).
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = 0;
  bci.usage = VK_BUFFER_USAGE_VERTEX_BUFFER_BIT;
  VkBuffer b = VK_NULL_HANDLE;
  if (vkCreateBuffer(c.device, &bci, nullptr, &b) == VK_SUCCESS && b) vkDestroyBuffer(c.device, b, nullptr);
  CHECK(c.validationErrors() >= 1);
}

TEST_CASE("mapped buffers and images are created and released cleanly") {
  auto ctx = vk::Context::create(nullptr, true);
  REQUIRE(ctx.has_value());
  vk::Context& c = **ctx;
  auto b = c.createBuffer(4096, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
  REQUIRE(b.has_value());
  CHECK(b->mapped != nullptr);
  static_cast<unsigned char*>(b->mapped)[4095] = 7;
  c.destroy(*b);
  CHECK(b->buffer == VK_NULL_HANDLE);
  auto img = c.createImage(64, 32, VK_FORMAT_R8G8B8A8_SRGB, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT);
  REQUIRE(img.has_value());
  CHECK(img->view != VK_NULL_HANDLE);
  c.destroy(*img);
  CHECK(c.validationErrors() == 0);
}
