// Renderer: draws a client's world copy with Vulkan 1.2 (lavapipe in CI), into an
// SDL2 window's swapchain or, offscreen, into an image that readPixels() returns.
//
// Per frame: sky (gradient, sun, stars by time of day), opaque voxel chunks
// (frustum-culled, per-material colour with a procedural per-voxel texture, voxel
// AO, sun and sky light, fog), entities (players and animals as simple shapes),
// water (translucent, moving), fire (glowing particles at burning cells), rain
// streaks, the targeted-voxel highlight, then a 2-D layer: name tags above entities,
// the HUD's rects and text (an embedded bitmap font, stb_easy_font), crosshair.
//
// Meshing is the MeshCache's (mesh/mesh_cache.h); the renderer uploads the chunk
// meshes it hands over. Validation (VK_LAYER_KHRONOS_validation) counts every error
// message; tests fail on any.
//
// Thread: one (the caller's), except the MeshCache's workers.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include "sim/gen/generator.h"
#include "sim/world/brick_store.h"
#include "sim/world/material.h"
#include "sim/world/surface_change.h"
#include "sim/world/voxel_overlay.h"
#include "sim/core/result.h"

struct SDL_Window;

namespace loam::render {

struct Rgba8 {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
};

/// The eye. Angles in radians with the sim's convention: yaw 0 looks north (-z) and
/// grows clockwise seen from above (pi/2 looks east, +x); pitch + looks up.
struct Camera {
  std::array<double, 3> position{};  ///< eye, metres (world)
  double yaw = 0;
  double pitch = 0;
  double fovYDegrees = 70;
};

/// A player or animal drawn as a box (players) or a small body (animals).
struct EntityDraw {
  enum class Shape : std::uint8_t { Player, Bird, Walker };
  Shape shape = Shape::Player;
  std::array<double, 3> feet{};  ///< metres, bottom centre
  double yaw = 0;                ///< radians, as Camera
  Rgba8 colour;
  std::string tag;               ///< name tag drawn above it ("" = none)
};

/// A burning cell (a brick, 40 cm): glowing particles rise from it.
struct FireDraw {
  std::array<double, 3> corner{};  ///< metres, the brick's minimum corner
  float intensity = 0;             ///< 0..1
};

/// Time and weather as seen (the sky, light, fog, rain streaks, water motion).
struct Environment {
  double timeOfDay = 0.5;  ///< 0..1 of a day, 0 midnight, 0.25 sunrise, 0.5 noon, 0.75 sunset
  float rain = 0;          ///< 0..1
  float windX = 0, windZ = 0;  ///< m/s (rain slant, water ripples)
};

/// The 2-D layer, in pixels from the top-left corner.
struct HudRect {
  float x = 0, y = 0, w = 0, h = 0;
  Rgba8 colour;
};
struct HudText {
  float x = 0, y = 0;  ///< top-left of the first character
  float scale = 2;     ///< 1 = the font's native 6x7-pixel cells (stb_easy_font)
  Rgba8 colour{255, 255, 255, 255};
  std::string text;    ///< ASCII; '\n' starts a new line
};
struct HudLayer {
  std::vector<HudRect> rects;  ///< drawn first, in order
  std::vector<HudText> texts;  ///< then these
};
/// Pixel width of text as drawn at scale (for centring and layout).
float textWidth(const std::string& text, float scale);

struct FrameInput {
  Camera camera;
  Environment environment;
  double animationSeconds = 0;          ///< client clock for animation (water, fire, rain)
  std::span<const EntityDraw> entities;
  std::span<const FireDraw> fires;
  std::optional<sim::VoxelCoord> highlight;  ///< targeted voxel, outlined
  bool crosshair = true;
  const HudLayer* hud = nullptr;
  /// Called once the renderer no longer reads the world this frame (meshing has
  /// copied what it needs; the GPU work follows): a caller whose world another thread
  /// also drives lets go of it here (client/client_app.h, the network thread).
  std::function<void()> worldReleased;
};

struct RendererConfig {
  bool offscreen = false;     ///< no window: render into an image (readPixels)
  SDL_Window* window = nullptr;  ///< required unless offscreen (created with SDL_WINDOW_VULKAN)
  int width = 1280, height = 720;  ///< offscreen size; a window's drawable size otherwise
  bool validation = false;    ///< enable VK_LAYER_KHRONOS_validation (error if missing)
  bool vsync = true;          ///< FIFO present; false: MAILBOX/IMMEDIATE when offered
  int meshThreads = 1;        ///< MeshCache workers
  double meshBudgetMs = 3.0;  ///< main-thread copy budget per frame
  double viewDistanceMetres = 96.0;  ///< voxel meshes reach this far
  /// Voxel chunks at least this far (plan metres) are meshed from 2x2x2, then 4x4x4
  /// blocks (mesh::MeshCacheConfig::coarseMetres); 0 = that level off.
  std::array<double, 2> coarseMetres{32.0, 64.0};
  /// Far terrain (setFarTerrain) reaches this far; at or below viewDistanceMetres, none.
  double farViewMetres = 0;
  /// A deliberately slow renderer: every frame also waits this long after the world
  /// is released, as a frame bound by a slow GPU would (loam-client --slow-frame-ms;
  /// the test that ping does not follow the frame rate).
  double slowFrameMs = 0;
};

struct FrameStats {
  double cpuMs = 0;            ///< renderFrame() wall time on the calling thread
  double gpuWaitMs = 0;        ///< of cpuMs, time blocked waiting for a free frame slot (GPU behind)
  std::size_t chunksDrawn = 0;
  std::size_t chunksCulled = 0;
  std::size_t quadsDrawn = 0;
  std::size_t farTilesDrawn = 0;
  std::size_t trianglesDrawn = 0;  ///< voxel quads * 2 plus far terrain triangles (skirts included)
  std::size_t meshBytes = 0;       ///< GPU memory in use by meshes (chunks and far tiles)
  std::size_t meshReservedBytes = 0;  ///< GPU memory reserved for meshes (the heap's blocks)
  std::size_t meshQueue = 0;   ///< bricks waiting or in flight
  std::size_t meshWaiting = 0; ///< bricks waiting for a streamed world's columns (MeshCacheStats::waitingForColumns)
  std::uint64_t frames = 0;
  std::uint64_t validationErrors = 0;
  std::string deviceName;
};

/// Tightly packed RGBA8 pixels, rows top to bottom.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;
  Rgba8 at(int x, int y) const;
};

class Renderer {
 public:
  /// Creates the instance, device, swapchain or offscreen target, pipelines.
  /// Errors: no Vulkan driver / no suitable device / missing validation layer.
  static sim::Result<std::unique_ptr<Renderer>> create(const RendererConfig& config);
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  /// The world to draw, kept by reference until the next setWorld (the caller keeps
  /// it alive), seen through overlay when there is one (the predicted edits:
  /// mesh::MeshCache::setOverlay); queues a full mesh around centre.
  void setWorld(const sim::BrickStore& world, const sim::MaterialTable& materials,
                const std::array<double, 3>& centreMetres, const sim::VoxelOverlay* overlay = nullptr);
  /// The landscape beyond the voxel meshes, out to RendererConfig::farViewMetres,
  /// sampled from the scene's generator (mesh/far_terrain.h) on the mesh threads;
  /// null: none. The voxel meshes hand over to it over a dithered band ending just
  /// inside viewDistanceMetres. It stops at the bounds of the world setWorld gave
  /// (call that first).
  void setFarTerrain(std::shared_ptr<const sim::TerrainSampler> sampler);
  /// Changes RendererConfig::farViewMetres (rebuilds the far terrain's tiles).
  void setFarView(double metres);
  /// The server's surface changes (sim/world/surface_change.h): laid over the far
  /// terrain's generated heights from now on, kept across setFarView (setFarTerrain with
  /// another sampler, another world, drops them);
  /// the tiles they touch are rebuilt on the mesh threads (the old ones stay drawn
  /// until then). Allocates; about 20 hash updates per change, plus a few set lookups.
  void applySurfaceChanges(std::span<const sim::SurfaceChange> changes);
  /// Bricks changed since the last frame (ClientConnection::takeWorldChanges and
  /// takePredictedChanges).
  void markDirty(std::span<const sim::BrickCoord> bricks);
  /// Meshing within the budget, then records, submits and presents one frame.
  /// Returns false when nothing was drawn (minimised window, no world yet is fine:
  /// sky and HUD are still drawn then).
  bool renderFrame(const FrameInput& frame);
  /// The window's drawable size changed (recreates the swapchain; 0x0 = minimised).
  void resize(int width, int height);
  /// Waits for the GPU and returns the last frame's pixels (offscreen or window).
  /// Errors: no frame rendered yet; in window mode, the last frame was not captured
  /// (call captureNextFrame() before renderFrame()).
  sim::Result<Image> readPixels();
  /// Window mode: the next renderFrame() also copies its image for readPixels()
  /// (a screenshot costs one copy; offscreen frames are always readable).
  void captureNextFrame();
  /// Blocks until the mesh cache is idle and uploaded (offscreen shots, tests).
  void finishMeshing();
  bool meshIdle() const;
  FrameStats stats() const;

 private:
  struct Impl;
  explicit Renderer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Writes image as a PNG (stb_image_write). Errors: the path cannot be written.
sim::Result<void> writePng(const std::string& path, const Image& image);

}  // namespace loam::render
