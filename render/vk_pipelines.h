// The renderer's graphics pipelines (private to render/). Every pipeline shares one
// layout: set 0 = {frame uniforms, material colours}, push constants = 32 bytes
// (shaders/common.glsl). Viewport and scissor are dynamic, so pipelines survive a
// resize.
#pragma once
#include <cstdint>

#include "render/vk_context.h"

namespace loam::render::vk {

/// Uniform block "Frame" of shaders/common.glsl (std140: vec4s and a mat4 only).
struct FrameUniforms {
  float viewProj[16];
  float camRight[4], camUp[4], camForward[4];
  float sunDir[4], lightDir[4], lightColour[4], ambient[4];
  float zenith[4], horizon[4], fog[4], camPos[4], wind[4], lod[4], farBounds[4];
};

/// Uniform block "Materials": 256 linear colours.
struct MaterialUniforms {
  float colour[256][4];
};

/// Push constants (32 bytes, all stages).
struct PushConstants {
  float a[4];
  std::int32_t b[4];
};

/// Where a voxel chunk or far tile drawn this frame lies: one per mesh drawn, in a
/// per-frame buffer bound as vertex binding 1 at instance rate, so each draw's
/// firstInstance selects its own (vertex attributes 5 and 6: placementA, placementB in
/// voxel.vert and far.vert). Voxel chunks: a.xyz = origin
/// relative to the camera (metres), b.xyz = origin in voxels. Far tiles: a.xyz = minimum
/// corner relative to the camera (a.y = -camera y), a.w = cell size, b.xy = the level's
/// morph band (float bits).
struct Placement {
  float a[4];
  std::int32_t b[4];
};
static_assert(sizeof(Placement) == 32);  // std430 array stride

/// Vertex of the per-frame world geometry (colour.vert): camera-relative position,
/// sRGB colour, normal (snorm8) with w = 127 when lit, 0 when emissive.
struct ColourVertex {
  float x, y, z;
  std::uint8_t r, g, b, a;
  std::int8_t nx, ny, nz, lit;
};
static_assert(sizeof(ColourVertex) == 20);

/// Vertex of the 2-D layer (hud.vert): pixels from the top-left, sRGB colour.
struct HudVertex {
  float x, y;
  std::uint8_t r, g, b, a;
};
static_assert(sizeof(HudVertex) == 12);

struct Pipelines {
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline sky = VK_NULL_HANDLE;       ///< full-screen gradient, sun, stars
  VkPipeline voxel = VK_NULL_HANDLE;     ///< opaque chunk meshes
  VkPipeline voxelBand = VK_NULL_HANDLE; ///< the same, reaching into the near/far handover band (dithered out)
  VkPipeline water = VK_NULL_HANDLE;     ///< water pass 1: multiply by transmittance (no depth write)
  VkPipeline waterLight = VK_NULL_HANDLE;  ///< water pass 2: add reflected and scattered light
  VkPipeline far = VK_NULL_HANDLE;       ///< far terrain tiles (mesh/far_terrain.h)
  VkPipeline solid = VK_NULL_HANDLE;     ///< ColourVertex triangles, depth write (entities)
  VkPipeline blend = VK_NULL_HANDLE;     ///< ColourVertex triangles, alpha blend (rain)
  VkPipeline glow = VK_NULL_HANDLE;      ///< ColourVertex triangles, additive (fire)
  VkPipeline lines = VK_NULL_HANDLE;     ///< ColourVertex lines (highlight)
  VkPipeline hud = VK_NULL_HANDLE;       ///< HudVertex triangles, alpha blend, no depth
};

/// Builds every pipeline for renderPass. Errors: shader or pipeline creation failed.
sim::Result<Pipelines> createPipelines(VkDevice device, VkRenderPass renderPass);
void destroyPipelines(VkDevice device, Pipelines& p);

}  // namespace loam::render::vk
