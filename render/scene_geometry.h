// CPU side of a frame (private to render/): sun, sky and fog parameters from the
// environment, and the small per-frame geometry (entities, fire, rain, highlight)
// as camera-relative ColourVertex triangles and lines.
#pragma once
#include <array>
#include <vector>

#include "render/render_math.h"
#include "render/renderer.h"
#include "render/vk_pipelines.h"

namespace loam::render {

/// Fills the lighting, sky and fog fields of u (everything but the camera fields)
/// from env. viewDistance sets the fog range.
void fillEnvironment(const Environment& env, double viewDistance, vk::FrameUniforms& u);

/// What the per-frame geometry needs of the camera.
struct GeometryView {
  std::array<double, 3> eye{};  ///< world metres
  CameraBasis basis;
  double time = 0;              ///< animation seconds
};

/// Entities as lit boxes (players: body and head; animals: body and head).
void appendEntities(std::span<const EntityDraw> entities, const GeometryView& view, std::vector<vk::ColourVertex>& out);
/// Fire: a flickering glow box per burning brick and rising particles (additive).
void appendFire(std::span<const FireDraw> fires, const GeometryView& view, std::vector<vk::ColourVertex>& out);
/// Rain streaks in a box around the eye, count from env.rain, slanted by the wind.
void appendRain(const Environment& env, const GeometryView& view, std::vector<vk::ColourVertex>& out);
/// The 12 edges of voxel v as a line list.
void appendHighlight(sim::VoxelCoord v, const GeometryView& view, std::vector<vk::ColourVertex>& out);

}  // namespace loam::render
