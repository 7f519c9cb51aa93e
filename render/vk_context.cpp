#include "render/vk_context.h"

#include <SDL2/SDL.h>
#include <SDL2/SDL_vulkan.h>

#include <cstdio>
#include <cstring>

namespace loam::render::vk {

namespace {

const char* resultName(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_SURFACE_LOST_KHR: return "VK_ERROR_SURFACE_LOST_KHR";
    case VK_ERROR_OUT_OF_DATE_KHR: return "VK_ERROR_OUT_OF_DATE_KHR";
    case VK_SUBOPTIMAL_KHR: return "VK_SUBOPTIMAL_KHR";
    default: return "VkResult";
  }
}

bool hasLayer(const char* name) {
  std::uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

}  // namespace

sim::Error vkError(const char* what, VkResult r) {
  return sim::makeError(std::string(what) + ": " + resultName(r) + " (" + std::to_string(static_cast<int>(r)) + ")");
}

VKAPI_ATTR VkBool32 VKAPI_CALL Context::debugCallback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                      VkDebugUtilsMessageTypeFlagsEXT,
                                                      const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    static_cast<Context*>(user)->validationErrors_.fetch_add(1);
    std::fprintf(stderr, "vulkan validation error: %s\n", data && data->pMessage ? data->pMessage : "?");
  }
  return VK_FALSE;
}

sim::Result<std::unique_ptr<Context>> Context::create(SDL_Window* window, bool validation) {
  std::unique_ptr<Context> c(new Context());
  std::vector<const char*> extensions;
  if (window) {
    unsigned n = 0;
    if (!SDL_Vulkan_GetInstanceExtensions(window, &n, nullptr))
      return sim::makeError(std::string("SDL_Vulkan_GetInstanceExtensions: ") + SDL_GetError());
    extensions.resize(n);
    SDL_Vulkan_GetInstanceExtensions(window, &n, extensions.data());
  }
  std::vector<const char*> layers;
  if (validation) {
    if (!hasLayer("VK_LAYER_KHRONOS_validation"))
      return sim::makeError("validation requested but VK_LAYER_KHRONOS_validation is not installed");
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "loam";
  app.pEngineName = "loam";
  app.apiVersion = VK_API_VERSION_1_2;
  VkDebugUtilsMessengerCreateInfoEXT dbg{};
  dbg.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dbg.pfnUserCallback = &Context::debugCallback;
  dbg.pUserData = c.get();

  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &app;
  ici.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  ici.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  if (validation) ici.pNext = &dbg;  // also catches errors of vkCreateInstance itself
  if (VkResult r = vkCreateInstance(&ici, nullptr, &c->instance); r != VK_SUCCESS)
    return vkError("vkCreateInstance (is a Vulkan driver installed?)", r);

  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(c->instance, "vkCreateDebugUtilsMessengerEXT"));
    if (!create || create(c->instance, &dbg, nullptr, &c->messenger_) != VK_SUCCESS)
      return sim::makeError("vkCreateDebugUtilsMessengerEXT failed");
  }
  if (window && !SDL_Vulkan_CreateSurface(window, c->instance, &c->surface))
    return sim::makeError(std::string("SDL_Vulkan_CreateSurface: ") + SDL_GetError());

  // Device: a graphics queue (that presents, with a window) and indirect draws of many
  // meshes at once (multiDrawIndirect, drawIndirectFirstInstance: every desktop GPU and
  // lavapipe); prefer discrete, then integrated, then anything (lavapipe is a CPU device).
  std::uint32_t n = 0;
  vkEnumeratePhysicalDevices(c->instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(c->instance, &n, devices.data());
  int bestScore = -1;
  for (VkPhysicalDevice pd : devices) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    if (props.apiVersion < VK_API_VERSION_1_2) continue;
    VkPhysicalDeviceFeatures features;
    vkGetPhysicalDeviceFeatures(pd, &features);
    if (!features.multiDrawIndirect || !features.drawIndirectFirstInstance) continue;
    std::uint32_t qn = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qs(qn);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qs.data());
    int family = -1;
    for (std::uint32_t i = 0; i < qn && family < 0; ++i) {
      if (!(qs[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) continue;
      if (c->surface) {
        VkBool32 present = VK_FALSE;
        vkGetPhysicalDeviceSurfaceSupportKHR(pd, i, c->surface, &present);
        if (!present) continue;
      }
      family = static_cast<int>(i);
    }
    if (family < 0) continue;
    int score = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 3
                : props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 2
                                                                             : 1;
    if (score > bestScore) {
      bestScore = score;
      c->physical = pd;
      c->queueFamily = static_cast<std::uint32_t>(family);
      c->properties = props;
    }
  }
  if (!c->physical)
    return sim::makeError("no Vulkan 1.2 device with a suitable graphics queue and multi-draw indirect");
  c->deviceName = c->properties.deviceName;
  vkGetPhysicalDeviceMemoryProperties(c->physical, &c->memory_);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = c->queueFamily;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  std::vector<const char*> devExt;
  if (c->surface) devExt.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<std::uint32_t>(devExt.size());
  dci.ppEnabledExtensionNames = devExt.data();
  VkPhysicalDeviceFeatures enabled{};
  enabled.multiDrawIndirect = VK_TRUE;
  enabled.drawIndirectFirstInstance = VK_TRUE;
  dci.pEnabledFeatures = &enabled;
  if (VkResult r = vkCreateDevice(c->physical, &dci, nullptr, &c->device); r != VK_SUCCESS)
    return vkError("vkCreateDevice", r);
  vkGetDeviceQueue(c->device, c->queueFamily, 0, &c->queue);

  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = c->queueFamily;
  if (VkResult r = vkCreateCommandPool(c->device, &pci, nullptr, &c->commandPool); r != VK_SUCCESS)
    return vkError("vkCreateCommandPool", r);
  return c;
}

Context::~Context() {
  if (device) {
    vkDeviceWaitIdle(device);
    vkDestroyCommandPool(device, commandPool, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  if (surface) vkDestroySurfaceKHR(instance, surface, nullptr);
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance, messenger_, nullptr);
  }
  if (instance) vkDestroyInstance(instance, nullptr);
}

std::uint32_t Context::memoryType(std::uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) const {
  for (int pass = 0; pass < 2; ++pass) {
    VkMemoryPropertyFlags flags = pass == 0 ? (want | prefer) : want;
    for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & flags) == flags) return i;
  }
  return UINT32_MAX;
}

sim::Result<Buffer> Context::createBuffer(VkDeviceSize size, VkBufferUsageFlags usage) {
  Buffer b;
  b.size = size;
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = size;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (VkResult r = vkCreateBuffer(device, &bci, nullptr, &b.buffer); r != VK_SUCCESS) return vkError("vkCreateBuffer", r);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                   VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (mai.memoryTypeIndex == UINT32_MAX) {
    destroy(b);
    return sim::makeError("no host-visible coherent memory type");
  }
  if (VkResult r = vkAllocateMemory(device, &mai, nullptr, &b.memory); r != VK_SUCCESS) {
    destroy(b);
    return vkError("vkAllocateMemory (buffer)", r);
  }
  vkBindBufferMemory(device, b.buffer, b.memory, 0);
  if (VkResult r = vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped); r != VK_SUCCESS) {
    destroy(b);
    return vkError("vkMapMemory", r);
  }
  return b;
}

void Context::destroy(Buffer& b) {
  if (b.buffer) vkDestroyBuffer(device, b.buffer, nullptr);
  if (b.memory) vkFreeMemory(device, b.memory, nullptr);  // unmaps implicitly
  b = Buffer{};
}

sim::Result<Image> Context::createImage(std::uint32_t w, std::uint32_t h, VkFormat format, VkImageUsageFlags usage) {
  Image img;
  img.format = format;
  VkImageCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  ici.imageType = VK_IMAGE_TYPE_2D;
  ici.format = format;
  ici.extent = {w, h, 1};
  ici.mipLevels = 1;
  ici.arrayLayers = 1;
  ici.samples = VK_SAMPLE_COUNT_1_BIT;
  ici.tiling = VK_IMAGE_TILING_OPTIMAL;
  ici.usage = usage;
  ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  if (VkResult r = vkCreateImage(device, &ici, nullptr, &img.image); r != VK_SUCCESS) return vkError("vkCreateImage", r);
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(device, img.image, &req);
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  if (mai.memoryTypeIndex == UINT32_MAX) mai.memoryTypeIndex = memoryType(req.memoryTypeBits, 0, 0);
  if (VkResult r = vkAllocateMemory(device, &mai, nullptr, &img.memory); r != VK_SUCCESS) {
    destroy(img);
    return vkError("vkAllocateMemory (image)", r);
  }
  vkBindImageMemory(device, img.image, img.memory, 0);
  bool depth = format == VK_FORMAT_D32_SFLOAT || format == VK_FORMAT_D24_UNORM_S8_UINT || format == VK_FORMAT_D16_UNORM;
  VkImageViewCreateInfo vci{};
  vci.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
  vci.image = img.image;
  vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vci.format = format;
  vci.subresourceRange = {static_cast<VkImageAspectFlags>(depth ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT), 0, 1,
                          0, 1};
  if (VkResult r = vkCreateImageView(device, &vci, nullptr, &img.view); r != VK_SUCCESS) {
    destroy(img);
    return vkError("vkCreateImageView", r);
  }
  return img;
}

void Context::destroy(Image& i) {
  if (i.view) vkDestroyImageView(device, i.view, nullptr);
  if (i.image) vkDestroyImage(device, i.image, nullptr);
  if (i.memory) vkFreeMemory(device, i.memory, nullptr);
  i = Image{};
}

VkCommandBuffer Context::beginOneShot() {
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = commandPool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  vkAllocateCommandBuffers(device, &ai, &cb);
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cb, &bi);
  return cb;
}

VkResult Context::endOneShot(VkCommandBuffer cb) {
  vkEndCommandBuffer(cb);
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  VkResult r = vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE);
  if (r == VK_SUCCESS) r = vkQueueWaitIdle(queue);
  vkFreeCommandBuffers(device, commandPool, 1, &cb);
  return r;
}

}  // namespace loam::render::vk
