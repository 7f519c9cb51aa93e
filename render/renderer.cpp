// Renderer: frame orchestration. Vulkan plumbing lives in vk_context (instance,
// device, memory), vk_target (swapchain / offscreen image, render pass) and
// vk_pipelines (shaders, pipelines); CPU-built geometry in scene_geometry and
// hud_text.
#include "render/renderer.h"

#include <SDL2/SDL.h>
#include <SDL2/SDL_vulkan.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "mesh/far_terrain.h"
#include "mesh/mesh_cache.h"
#include "render/hud_text.h"
#include "render/render_math.h"
#include "render/gpu_heap.h"
#include "render/scene_geometry.h"
#include "render/vk_context.h"
#include "render/vk_pipelines.h"
#include "render/vk_target.h"

namespace loam::render {

namespace {

constexpr std::uint32_t kFramesInFlight = 2;
constexpr double kMetresPerVoxel = 1.0 / sim::kVoxelsPerMetre;
constexpr double kChunkMetres = mesh::kChunkVoxels * kMetresPerVoxel;
constexpr VkDeviceSize kHeapBlockBytes = 64ull << 20;  // mesh memory is reserved in blocks this big
// The voxel meshes hand over to the far terrain over this band, ending this far inside
// the view distance (the mesh cache's radius: every brick column nearer is meshed).
constexpr double kHandoverBandMetres = 16.0;
constexpr double kHandoverInsetMetres = 4.0;

/// One chunk's mesh on the GPU: opaque quads grouped by face direction (sim::Face
/// order), then water quads, in one buffer. Grouping lets a frame skip the faces
/// that point away from the eye for the whole chunk (about half of the side faces
/// of distant chunks) before the GPU transforms them.
struct ChunkGpu {
  vk::GpuRange range;
  std::array<std::uint32_t, 7> faceStart{};  ///< first quad of each face group; [6] = opaqueQuads
  std::uint32_t opaqueQuads = 0;
  std::uint32_t waterQuads = 0;
  std::array<double, 3> lo{}, hi{};  ///< world metres, the mesh's bounds
};

/// One far terrain tile on the GPU (mesh/far_terrain.h).
struct FarGpu {
  vk::GpuRange range;
  float minY = 0, maxY = 0;
};

/// Resources of one frame in flight.
struct FrameSlot {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkSemaphore acquired = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  vk::Buffer uniforms;
  vk::Buffer colourVerts;
  vk::Buffer hudVerts;
  vk::Buffer placements;  ///< vk::Placement per mesh drawn (vertex binding 1, per instance)
  vk::Buffer commands;    ///< VkDrawIndexedIndirectCommand per draw of a mesh (or of its face groups)
};

/// Indirect draws of one heap block: count commands from first in the frame's list.
struct IndirectRun {
  std::uint32_t block, first, count;
};

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

float srgbToLinear(std::uint8_t c) {
  float x = static_cast<float>(c) / 255.0f;
  return x <= 0.04045f ? x / 12.92f : std::pow((x + 0.055f) / 1.055f, 2.4f);
}

/// Makes a copy's writes into buffer visible to host reads (after the fence).
void transferToHostBarrier(VkCommandBuffer cb, VkBuffer buffer) {
  VkBufferMemoryBarrier bb{};
  bb.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
  bb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  bb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  bb.srcQueueFamilyIndex = bb.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  bb.buffer = buffer;
  bb.size = VK_WHOLE_SIZE;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &bb, 0, nullptr);
}

}  // namespace

Rgba8 Image::at(int x, int y) const {
  std::size_t i = (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 4;
  return {rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3]};
}

struct Renderer::Impl {
  RendererConfig config;
  std::unique_ptr<vk::Context> ctx;
  std::unique_ptr<vk::Target> target;
  vk::Pipelines pipes;
  VkDescriptorPool descriptorPool = VK_NULL_HANDLE;
  vk::Buffer materialUniforms;
  vk::Buffer indices;
  std::uint32_t indexQuads = 0;
  std::array<FrameSlot, kFramesInFlight> slots;
  std::vector<VkSemaphore> renderDone;  ///< per swapchain image
  std::uint64_t frameCounter = 0;       ///< frames submitted
  std::vector<std::pair<std::uint64_t, vk::Buffer>> retired;  ///< freed once no frame in flight uses them
  std::vector<std::pair<std::uint64_t, vk::GpuRange>> retiredRanges;  ///< likewise, ranges of heap
  std::unique_ptr<vk::GpuHeap> heap;  ///< vertex memory of every mesh (chunks, far tiles)

  const sim::BrickStore* world = nullptr;
  const sim::MaterialTable* materials = nullptr;
  std::unique_ptr<mesh::MeshCache> cache;
  std::array<double, 3> centre{};
  std::map<sim::ChunkCoord, ChunkGpu> chunks;
  std::unique_ptr<mesh::FarTerrainCache> far;  ///< set by setFarTerrain with a view beyond the voxel meshes
  std::shared_ptr<const sim::TerrainSampler> farSampler;  ///< setFarTerrain's
  /// The server's surface changes, kept across far caches of one world (setFarView).
  std::shared_ptr<mesh::FarSurface> farSurface = std::make_shared<mesh::FarSurface>();
  std::map<mesh::FarTileKey, FarGpu> farTiles;
  vk::Buffer farIndices;  ///< mesh::farTileIndices()

  bool needRecreate = false;
  bool haveFrame = false;      ///< the offscreen image / capture buffer holds a frame
  bool captureNext = false;
  vk::Buffer readback;
  FrameStats stats;

  std::vector<vk::ColourVertex> solid, glow, blend, lines;
  std::vector<vk::HudVertex> hud;
  struct VisibleChunk {
    const ChunkGpu* chunk;
    sim::ChunkCoord coord;
    double distance;
    bool band;  ///< reaches into the near/far handover band (drawn with pipes.voxelBand)
    std::uint32_t placement = 0;  ///< its index in placements
  };
  std::vector<VisibleChunk> visible;
  // The frame's meshes (rebuilt each frame, kept for their capacity): where each lies,
  // the indirect commands that draw them, per heap block while they are gathered.
  std::vector<vk::Placement> placements;
  std::vector<VkDrawIndexedIndirectCommand> commands;
  std::vector<std::vector<VkDrawIndexedIndirectCommand>> byBlock;
  std::vector<IndirectRun> voxelRuns, bandRuns, farRuns;

  ~Impl() {
    if (!ctx) return;
    vkDeviceWaitIdle(ctx->device);
    cache.reset();
    far.reset();
    chunks.clear();
    farTiles.clear();
    retiredRanges.clear();
    heap.reset();
    for (auto& [f, b] : retired) ctx->destroy(b);
    for (FrameSlot& s : slots) {
      ctx->destroy(s.uniforms);
      ctx->destroy(s.colourVerts);
      ctx->destroy(s.hudVerts);
      ctx->destroy(s.placements);
      ctx->destroy(s.commands);
      if (s.fence) vkDestroyFence(ctx->device, s.fence, nullptr);
      if (s.acquired) vkDestroySemaphore(ctx->device, s.acquired, nullptr);
    }
    for (VkSemaphore s : renderDone) vkDestroySemaphore(ctx->device, s, nullptr);
    ctx->destroy(materialUniforms);
    ctx->destroy(indices);
    ctx->destroy(farIndices);
    ctx->destroy(readback);
    if (descriptorPool) vkDestroyDescriptorPool(ctx->device, descriptorPool, nullptr);
    vk::destroyPipelines(ctx->device, pipes);
    target.reset();
  }

  void retire(vk::Buffer& b) {
    if (b.buffer) retired.emplace_back(frameCounter, b);
    b = vk::Buffer{};
  }
  void retire(vk::GpuRange& r) {
    if (r.size != 0) retiredRanges.emplace_back(frameCounter, r);
    r = vk::GpuRange{};
  }
  // Called after waiting for the oldest frame in flight: anything retired before
  // the frames still running can go.
  void freeRetired() {
    std::erase_if(retiredRanges, [&](auto& r) {
      if (r.first + kFramesInFlight <= frameCounter) {
        heap->free(r.second);
        return true;
      }
      return false;
    });
    std::erase_if(retired, [&](auto& r) {
      if (r.first + kFramesInFlight <= frameCounter) {
        ctx->destroy(r.second);
        return true;
      }
      return false;
    });
  }

  sim::Result<void> makeSemaphores() {
    for (VkSemaphore s : renderDone) vkDestroySemaphore(ctx->device, s, nullptr);
    renderDone.assign(target->imageCount(), VK_NULL_HANDLE);
    VkSemaphoreCreateInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    for (VkSemaphore& s : renderDone)
      if (VkResult r = vkCreateSemaphore(ctx->device, &si, nullptr, &s); r != VK_SUCCESS) return vk::vkError("vkCreateSemaphore", r);
    return {};
  }

  sim::Result<void> init() {
    auto c = vk::Context::create(config.offscreen ? nullptr : config.window, config.validation);
    if (!c) return c.error();
    ctx = std::move(*c);
    stats.deviceName = ctx->deviceName;
    int w = config.width, h = config.height;
    if (!config.offscreen) SDL_Vulkan_GetDrawableSize(config.window, &w, &h);
    auto t = vk::Target::create(*ctx, config.offscreen, static_cast<std::uint32_t>(std::max(w, 0)),
                                static_cast<std::uint32_t>(std::max(h, 0)), config.vsync);
    if (!t) return t.error();
    target = std::move(*t);
    auto p = vk::createPipelines(ctx->device, target->renderPass());
    if (!p) return p.error();
    pipes = *p;

    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 2 * kFramesInFlight};
    VkDescriptorPoolCreateInfo dpi{};
    dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpi.maxSets = kFramesInFlight;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    if (VkResult r = vkCreateDescriptorPool(ctx->device, &dpi, nullptr, &descriptorPool); r != VK_SUCCESS)
      return vk::vkError("vkCreateDescriptorPool", r);
    auto mu = ctx->createBuffer(sizeof(vk::MaterialUniforms), VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT);
    if (!mu) return mu.error();
    materialUniforms = *mu;
    std::memset(materialUniforms.mapped, 0, sizeof(vk::MaterialUniforms));
    if (auto r = ensureIndices(1 << 14); !r) return r;
    heap = std::make_unique<vk::GpuHeap>(*ctx, kHeapBlockBytes, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
    const auto farIdx = mesh::farTileIndices();
    auto fi = ctx->createBuffer(farIdx.size_bytes(), VK_BUFFER_USAGE_INDEX_BUFFER_BIT);
    if (!fi) return fi.error();
    farIndices = *fi;
    std::memcpy(farIndices.mapped, farIdx.data(), farIdx.size_bytes());

    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = ctx->commandPool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    for (FrameSlot& s : slots) {
      vkAllocateCommandBuffers(ctx->device, &ai, &s.cmd);
      VkFenceCreateInfo fi{};
      fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
      fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;
      vkCreateFence(ctx->device, &fi, nullptr, &s.fence);
      VkSemaphoreCreateInfo si{};
      si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
      vkCreateSemaphore(ctx->device, &si, nullptr, &s.acquired);
      auto u = ctx->createBuffer(sizeof(vk::FrameUniforms), VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT);
      if (!u) return u.error();
      s.uniforms = *u;
      VkDescriptorSetAllocateInfo dai{};
      dai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
      dai.descriptorPool = descriptorPool;
      dai.descriptorSetCount = 1;
      dai.pSetLayouts = &pipes.setLayout;
      if (VkResult r = vkAllocateDescriptorSets(ctx->device, &dai, &s.set); r != VK_SUCCESS)
        return vk::vkError("vkAllocateDescriptorSets", r);
      VkDescriptorBufferInfo bi[2] = {{s.uniforms.buffer, 0, sizeof(vk::FrameUniforms)},
                                      {materialUniforms.buffer, 0, sizeof(vk::MaterialUniforms)}};
      VkWriteDescriptorSet wr[2]{};
      for (std::uint32_t i = 0; i < 2; ++i) {
        wr[i] = {};
        wr[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        wr[i].dstSet = s.set;
        wr[i].dstBinding = i;
        wr[i].descriptorCount = 1;
        wr[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
        wr[i].pBufferInfo = &bi[i];
      }
      vkUpdateDescriptorSets(ctx->device, 2, wr, 0, nullptr);
    }
    if (!config.offscreen) return makeSemaphores();
    return {};
  }

  /// The shared quad index pattern (0,1,2, 0,2,3 per quad) for at least quads quads.
  sim::Result<void> ensureIndices(std::uint32_t quads) {
    if (quads <= indexQuads) return {};
    std::uint32_t n = std::max(quads, indexQuads * 2);
    auto b = ctx->createBuffer(static_cast<VkDeviceSize>(n) * 6 * sizeof(std::uint32_t), VK_BUFFER_USAGE_INDEX_BUFFER_BIT);
    if (!b) return b.error();
    auto* p = static_cast<std::uint32_t*>(b->mapped);
    for (std::uint32_t q = 0; q < n; ++q) {
      std::uint32_t v = q * 4;
      p[q * 6 + 0] = v, p[q * 6 + 1] = v + 1, p[q * 6 + 2] = v + 2;
      p[q * 6 + 3] = v, p[q * 6 + 4] = v + 2, p[q * 6 + 5] = v + 3;
    }
    retire(indices);
    indices = *b;
    indexQuads = n;
    return {};
  }

  /// Grows a per-frame buffer (its slot is idle: its fence was waited for).
  bool ensureCapacity(vk::Buffer& b, VkDeviceSize bytes, VkBufferUsageFlags usage) {
    if (b.size >= bytes) return true;
    ctx->destroy(b);
    auto r = ctx->createBuffer(std::max<VkDeviceSize>(bytes + bytes / 2, 64 * 1024), usage);
    if (!r) {
      std::fprintf(stderr, "renderer: %s\n", r.error().message.c_str());
      return false;
    }
    b = *r;
    return true;
  }

  /// Queues a draw of a mesh in heap block `block` (gathered per block; see takeRuns).
  void addDraw(std::uint32_t block, std::uint32_t indexCount, std::int32_t firstVertex, std::uint32_t placement) {
    if (byBlock.size() <= block) byBlock.resize(block + 1);
    byBlock[block].push_back({indexCount, 1, 0, firstVertex, placement});
  }

  /// Moves the draws queued since the last call to commands, a run per heap block.
  void takeRuns(std::vector<IndirectRun>& runs) {
    runs.clear();
    for (std::uint32_t b = 0; b < byBlock.size(); ++b) {
      std::vector<VkDrawIndexedIndirectCommand>& list = byBlock[b];
      if (list.empty()) continue;
      runs.push_back({b, static_cast<std::uint32_t>(commands.size()), static_cast<std::uint32_t>(list.size())});
      commands.insert(commands.end(), list.begin(), list.end());
      list.clear();
    }
  }

  /// Records runs: one indirect draw per heap block.
  void drawRuns(VkCommandBuffer cb, VkBuffer commandBuffer, const std::vector<IndirectRun>& runs,
                std::uint32_t& bound) {
    for (const IndirectRun& r : runs) {
      bindBlock(cb, r.block, bound);
      vkCmdDrawIndexedIndirect(cb, commandBuffer, VkDeviceSize{r.first} * sizeof(VkDrawIndexedIndirectCommand), r.count,
                               sizeof(VkDrawIndexedIndirectCommand));
    }
  }

  void uploadMeshes() {
    if (!cache) return;
    for (mesh::ChunkMesh& m : cache->takeChunkUpdates()) {
      auto it = chunks.find(m.chunk);
      if (it != chunks.end()) {
        retire(it->second.range);
        chunks.erase(it);
      }
      if (m.opaque.empty() && m.water.empty()) continue;
      std::size_t verts = m.opaque.size() + m.water.size();
      auto b = heap->allocate(verts * sizeof(mesh::PackedVertex));
      if (!b) {
        std::fprintf(stderr, "renderer: chunk upload: %s\n", b.error().message.c_str());
        continue;
      }
      ChunkGpu g;
      g.range = *b;
      g.opaqueQuads = static_cast<std::uint32_t>(m.opaque.size() / 4);
      m.opaque.resize(std::size_t{g.opaqueQuads} * 4);  // whole quads only
      g.waterQuads = static_cast<std::uint32_t>(m.water.size() / 4);
      auto* dst = static_cast<mesh::PackedVertex*>(g.range.mapped);
      // Counting sort of the opaque quads by face.
      std::array<std::uint32_t, 6> counts{};
      for (std::size_t q = 0; q < g.opaqueQuads; ++q) ++counts[static_cast<std::size_t>(mesh::vertexFace(m.opaque[q * 4]) % 6)];
      for (std::size_t f = 0; f < 6; ++f) g.faceStart[f + 1] = g.faceStart[f] + counts[f];
      std::array<std::uint32_t, 6> next{};
      for (std::size_t f = 0; f < 6; ++f) next[f] = g.faceStart[f];
      for (std::size_t q = 0; q < g.opaqueQuads; ++q) {
        std::uint32_t at = next[static_cast<std::size_t>(mesh::vertexFace(m.opaque[q * 4]) % 6)]++;
        std::memcpy(dst + at * 4, m.opaque.data() + q * 4, 4 * sizeof(mesh::PackedVertex));
      }
      // memcpy with an empty vector's null data() is undefined even for 0 bytes (UBSan).
      if (!m.water.empty())
        std::memcpy(dst + m.opaque.size(), m.water.data(), m.water.size() * sizeof(mesh::PackedVertex));
      int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
      for (std::size_t i = 0; i < verts; ++i) {
        int p[3] = {mesh::vertexX(dst[i]), mesh::vertexY(dst[i]), mesh::vertexZ(dst[i])};
        for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], p[a]), hi[a] = std::max(hi[a], p[a]);
      }
      int origin[3] = {m.chunk.x, m.chunk.y, m.chunk.z};
      for (int a = 0; a < 3; ++a) {
        g.lo[static_cast<std::size_t>(a)] = origin[a] * kChunkMetres + lo[a] * kMetresPerVoxel;
        g.hi[static_cast<std::size_t>(a)] = origin[a] * kChunkMetres + hi[a] * kMetresPerVoxel;
      }
      if (auto r = ensureIndices(std::max(g.opaqueQuads, g.waterQuads)); !r)
        std::fprintf(stderr, "renderer: %s\n", r.error().message.c_str());
      chunks.emplace(m.chunk, g);
    }
  }

  void uploadFarTiles(mesh::FarTerrainUpdate update) {
    for (const mesh::FarTileKey& k : update.released) {
      auto it = farTiles.find(k);
      if (it == farTiles.end()) continue;
      retire(it->second.range);
      farTiles.erase(it);
    }
    for (const mesh::FarTileMesh& t : update.built) {
      if (auto it = farTiles.find(t.key); it != farTiles.end()) {
        retire(it->second.range);
        farTiles.erase(it);
      }
      auto b = heap->allocate(t.vertices.size() * sizeof(mesh::FarVertex));
      if (!b) {
        std::fprintf(stderr, "renderer: far tile upload: %s\n", b.error().message.c_str());
        continue;
      }
      std::memcpy(b->mapped, t.vertices.data(), t.vertices.size() * sizeof(mesh::FarVertex));
      farTiles.emplace(t.key, FarGpu{*b, t.minY, t.maxY});
    }
  }

  bool recreateSwapchain() {
    int w = 0, h = 0;
    SDL_Vulkan_GetDrawableSize(config.window, &w, &h);
    if (w <= 0 || h <= 0) return false;  // minimised: try again next frame
    if (auto r = target->recreate(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h)); !r) {
      std::fprintf(stderr, "renderer: swapchain: %s\n", r.error().message.c_str());
      return false;
    }
    if (target->imageCount() == 0) return false;
    if (auto r = makeSemaphores(); !r) return false;
    needRecreate = false;
    haveFrame = false;
    return true;
  }

  void buildHud(const FrameInput& f, const Mat4& viewProj, float w, float h) {
    hud.clear();
    // Name tags: centred above the head, over a dark backing rect, fading out with distance.
    for (const EntityDraw& e : f.entities) {
      if (e.tag.empty()) continue;
      double lift = e.shape == EntityDraw::Shape::Player ? 2.05 : 0.75;
      Vec3f p{static_cast<float>(e.feet[0] - f.camera.position[0]), static_cast<float>(e.feet[1] + lift - f.camera.position[1]),
              static_cast<float>(e.feet[2] - f.camera.position[2])};
      float dist = std::sqrt(dot(p, p));
      if (dist > 48.0f) continue;
      auto clip = transform(viewProj, p);
      if (clip[3] < 0.1f) continue;  // behind the eye
      float sx = (clip[0] / clip[3] * 0.5f + 0.5f) * w, sy = (clip[1] / clip[3] * 0.5f + 0.5f) * h;
      float scale = dist < 16.0f ? 2.0f : 1.5f;
      float tw = textWidth(e.tag, scale), th = 7.0f * scale;
      if (sx + tw < 0 || sx - tw > w || sy < 0 || sy - th > h) continue;
      std::uint8_t alpha = static_cast<std::uint8_t>(255.0f * std::clamp((48.0f - dist) / 8.0f, 0.0f, 1.0f));
      float pad = 2.0f * scale;
      appendRect(hud, {sx - tw / 2 - pad, sy - th - 2 * pad, tw + 2 * pad, th + 2 * pad,
                       Rgba8{0, 0, 0, static_cast<std::uint8_t>(alpha / 2)}});
      HudText t;
      t.x = sx - tw / 2;
      t.y = sy - th - pad;
      t.scale = scale;
      t.colour = Rgba8{255, 255, 255, alpha};
      t.text = e.tag;
      appendText(hud, t);
    }
    if (f.hud) {
      for (const HudRect& r : f.hud->rects) appendRect(hud, r);
      for (const HudText& t : f.hud->texts) appendText(hud, t);
    }
    if (f.crosshair) {
      float cx = std::floor(w / 2), cy = std::floor(h / 2);
      Rgba8 dark{0, 0, 0, 140}, light{255, 255, 255, 230};
      appendRect(hud, {cx - 8, cy - 2, 16, 4, dark});
      appendRect(hud, {cx - 2, cy - 8, 4, 16, dark});
      appendRect(hud, {cx - 7, cy - 1, 14, 2, light});
      appendRect(hud, {cx - 1, cy - 7, 2, 14, light});
    }
  }

  /// Binds heap block `block` as the vertex buffer unless it is `bound` already: meshes
  /// in one block are drawn with a vertex offset (firstVertex), not a bind each.
  void bindBlock(VkCommandBuffer cb, std::uint32_t block, std::uint32_t& bound) {
    if (block == bound) return;
    VkBuffer vb = heap->buffer(block);
    const VkDeviceSize zero = 0;
    vkCmdBindVertexBuffers(cb, 0, 1, &vb, &zero);
    bound = block;
  }
  /// A range's first vertex in its block (ranges are 256-byte aligned, so whole vertices).
  template <class Vertex>
  static std::int32_t firstVertex(const vk::GpuRange& r) {
    return static_cast<std::int32_t>(r.offset / sizeof(Vertex));
  }

  /// Far terrain tiles, culled against the frustum, into placements and farRuns;
  /// returns how many are drawn.
  std::size_t gatherFarTiles(const Camera& cam, const std::array<std::array<float, 4>, 6>& planes) {
    const mesh::FarTerrainConfig& fc = far->config();
    const auto indexCount = static_cast<std::uint32_t>(mesh::farTileIndices().size());
    std::size_t drawn = 0;
    for (const mesh::FarTileKey& k : far->drawn()) {
      auto it = farTiles.find(k);
      if (it == farTiles.end()) continue;
      const FarGpu& g = it->second;
      const double size = mesh::farTileMetres(fc, k.level);
      const double x0 = k.x * size - cam.position[0], z0 = k.z * size - cam.position[2];
      Vec3f lo{static_cast<float>(x0), static_cast<float>(g.minY - cam.position[1]), static_cast<float>(z0)};
      Vec3f hi{static_cast<float>(x0 + size), static_cast<float>(g.maxY - cam.position[1]), static_cast<float>(z0 + size)};
      if (!boxVisible(planes, lo, hi)) continue;
      vk::Placement p{};
      p.a[0] = lo.x;
      p.a[1] = static_cast<float>(-cam.position[1]);
      p.a[2] = lo.z;
      p.a[3] = static_cast<float>(mesh::farCellMetres(fc, k.level));
      const auto band = mesh::farMorphRange(fc, k.level);
      const float start = static_cast<float>(band[0]), end = static_cast<float>(band[1]);
      std::memcpy(&p.b[0], &start, sizeof start);
      std::memcpy(&p.b[1], &end, sizeof end);
      addDraw(g.range.block, indexCount, firstVertex<mesh::FarVertex>(g.range),
              static_cast<std::uint32_t>(placements.size()));
      placements.push_back(p);
      ++drawn;
    }
    takeRuns(farRuns);
    return drawn;
  }

  bool render(const FrameInput& f) {
    auto start = std::chrono::steady_clock::now();
    if (world && cache) {
      centre = f.camera.position;
      cache->update(*world, centre, config.meshBudgetMs);
      uploadMeshes();
    }
    if (far) uploadFarTiles(far->update(f.camera.position[0], f.camera.position[2]));
    if (f.worldReleased) f.worldReleased();
    if (config.slowFrameMs > 0)
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(config.slowFrameMs));
    if (!config.offscreen && (needRecreate || target->imageCount() == 0)) {
      if (!recreateSwapchain()) {
        stats.cpuMs = seconds(std::chrono::steady_clock::now() - start) * 1e3;
        return false;
      }
    }
    FrameSlot& s = slots[frameCounter % kFramesInFlight];
    auto waitStart = std::chrono::steady_clock::now();
    vkWaitForFences(ctx->device, 1, &s.fence, VK_TRUE, UINT64_MAX);
    stats.gpuWaitMs = seconds(std::chrono::steady_clock::now() - waitStart) * 1e3;
    freeRetired();

    std::uint32_t imageIndex = 0;
    if (!config.offscreen) {
      VkResult r = vkAcquireNextImageKHR(ctx->device, target->swapchain(), UINT64_MAX, s.acquired, VK_NULL_HANDLE, &imageIndex);
      if (r == VK_ERROR_OUT_OF_DATE_KHR) {
        needRecreate = true;
        return false;
      }
      if (r == VK_SUBOPTIMAL_KHR) needRecreate = true;
      else if (r != VK_SUCCESS) {
        std::fprintf(stderr, "renderer: vkAcquireNextImageKHR failed (%d)\n", static_cast<int>(r));
        return false;
      }
    }
    vkResetFences(ctx->device, 1, &s.fence);

    // Uniforms.
    VkExtent2D ext = target->extent();
    float w = static_cast<float>(ext.width), h = static_cast<float>(ext.height);
    const Camera& cam = f.camera;
    CameraBasis basis = cameraBasis(cam.yaw, cam.pitch);
    float fovY = static_cast<float>(std::clamp(cam.fovYDegrees, 10.0, 150.0) * 3.14159265358979323846 / 180.0);
    float aspect = w / h;
    const double sight = far ? std::max(config.farViewMetres, config.viewDistanceMetres) : config.viewDistanceMetres;
    float farZ = static_cast<float>(sight * 1.5 + kChunkMetres);
    Mat4 viewProj = viewProjection(basis, fovY, aspect, 0.05f, farZ);
    vk::FrameUniforms u{};
    fillEnvironment(f.environment, sight, u);
    if (far) {
      u.lod[1] = static_cast<float>(config.viewDistanceMetres - kHandoverInsetMetres);
      u.lod[0] = u.lod[1] - static_cast<float>(kHandoverBandMetres);
      const mesh::FarTerrainConfig& fc = far->config();
      u.farBounds[0] = static_cast<float>(fc.minX);
      u.farBounds[1] = static_cast<float>(fc.minZ);
      u.farBounds[2] = static_cast<float>(fc.maxX);
      u.farBounds[3] = static_cast<float>(fc.maxZ);
    }
    std::memcpy(u.viewProj, viewProj.data(), sizeof(u.viewProj));
    float tanY = std::tan(fovY / 2);
    auto put = [](float* d, Vec3f v, float wv) { d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = wv; };
    put(u.camRight, basis.right, tanY * aspect);
    put(u.camUp, basis.up, tanY);
    put(u.camForward, basis.forward, static_cast<float>(std::fmod(f.animationSeconds, 10000.0)));
    u.camPos[0] = static_cast<float>(cam.position[0]);
    u.camPos[1] = static_cast<float>(cam.position[1]);
    u.camPos[2] = static_cast<float>(cam.position[2]);
    u.fog[2] = target->encodeSrgb() ? 1.0f : 0.0f;
    std::memcpy(s.uniforms.mapped, &u, sizeof(u));

    // Per-frame geometry: [solid][lines][glow][blend] in one buffer, the HUD in another.
    GeometryView gv{cam.position, basis, f.animationSeconds};
    solid.clear(), lines.clear(), glow.clear(), blend.clear();
    appendEntities(f.entities, gv, solid);
    if (f.highlight) appendHighlight(*f.highlight, gv, lines);
    appendFire(f.fires, gv, glow);
    appendRain(f.environment, gv, blend);
    buildHud(f, viewProj, w, h);
    std::size_t colourCount = solid.size() + lines.size() + glow.size() + blend.size();
    bool geometryOk =
        ensureCapacity(s.colourVerts, std::max<std::size_t>(colourCount, 1) * sizeof(vk::ColourVertex), VK_BUFFER_USAGE_VERTEX_BUFFER_BIT) &&
        ensureCapacity(s.hudVerts, std::max<std::size_t>(hud.size(), 1) * sizeof(vk::HudVertex), VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
    std::uint32_t firstLines = 0, firstGlow = 0, firstBlend = 0;
    if (geometryOk) {
      auto* cv = static_cast<vk::ColourVertex*>(s.colourVerts.mapped);
      std::size_t at = 0;
      for (auto* list : {&solid, &lines, &glow, &blend}) {
        if (list == &lines) firstLines = static_cast<std::uint32_t>(at);
        if (list == &glow) firstGlow = static_cast<std::uint32_t>(at);
        if (list == &blend) firstBlend = static_cast<std::uint32_t>(at);
        if (!list->empty()) std::memcpy(cv + at, list->data(), list->size() * sizeof(vk::ColourVertex));
        at += list->size();
      }
      if (!hud.empty()) std::memcpy(s.hudVerts.mapped, hud.data(), hud.size() * sizeof(vk::HudVertex));
    }

    // The meshes in view, culled against the frustum and the view distance: where each
    // lies (placements) and the indirect commands that draw them, a run per heap block.
    auto planes = frustumPlanes(viewProj);
    visible.clear();
    placements.clear();
    commands.clear();
    farRuns.clear();
    std::size_t culled = 0, quads = 0;
    double maxDist = config.viewDistanceMetres + kChunkMetres;
    for (const auto& [coord, g] : chunks) {
      Vec3f lo{static_cast<float>(g.lo[0] - cam.position[0]), static_cast<float>(g.lo[1] - cam.position[1]),
               static_cast<float>(g.lo[2] - cam.position[2])};
      Vec3f hi{static_cast<float>(g.hi[0] - cam.position[0]), static_cast<float>(g.hi[1] - cam.position[1]),
               static_cast<float>(g.hi[2] - cam.position[2])};
      double dx = std::max({0.0f, lo.x, -hi.x}), dz = std::max({0.0f, lo.z, -hi.z});
      double dist = std::sqrt(dx * dx + dz * dz);
      if (dist > maxDist || !boxVisible(planes, lo, hi)) {
        ++culled;
        continue;
      }
      double cx = (lo.x + hi.x) * 0.5, cy = (lo.y + hi.y) * 0.5, cz = (lo.z + hi.z) * 0.5;
      const double fx = std::max(std::fabs(lo.x), std::fabs(hi.x)), fz = std::max(std::fabs(lo.z), std::fabs(hi.z));
      const bool band = u.lod[1] > 0 && fx * fx + fz * fz > double{u.lod[0]} * u.lod[0];
      vk::Placement p{};
      p.a[0] = static_cast<float>(coord.x * kChunkMetres - cam.position[0]);
      p.a[1] = static_cast<float>(coord.y * kChunkMetres - cam.position[1]);
      p.a[2] = static_cast<float>(coord.z * kChunkMetres - cam.position[2]);
      p.b[0] = coord.x * mesh::kChunkVoxels;
      p.b[1] = coord.y * mesh::kChunkVoxels;
      p.b[2] = coord.z * mesh::kChunkVoxels;
      visible.push_back({&g, coord, std::sqrt(cx * cx + cy * cy + cz * cz), band,
                         static_cast<std::uint32_t>(placements.size())});
      placements.push_back(p);
    }
    // Near to far: early depth tests reject most hidden fragments. Chunks in the
    // handover band (whose shader discards, which costs early depth tests) go last.
    std::sort(visible.begin(), visible.end(), [](const VisibleChunk& a, const VisibleChunk& b) {
      return a.band != b.band ? b.band : a.distance < b.distance;
    });
    for (int bandPass = 0; bandPass < 2; ++bandPass) {
      for (const VisibleChunk& v : visible) {
        const ChunkGpu& g = *v.chunk;
        if (g.opaqueQuads == 0 || v.band != (bandPass == 1)) continue;
        const std::int32_t first = firstVertex<mesh::PackedVertex>(g.range);
        // Face group f (normal -x, +x, -y, +y, -z, +z) can face the eye only if the eye
        // is on its outer side of some face plane inside the mesh's bounds; adjacent
        // groups that can are one draw.
        std::uint32_t runStart = 0, runEnd = 0;
        auto flush = [&] {
          if (runEnd > runStart) {
            addDraw(g.range.block, (runEnd - runStart) * 6, first + static_cast<std::int32_t>(runStart * 4),
                    v.placement);
            quads += runEnd - runStart;
          }
        };
        for (std::size_t f = 0; f < 6; ++f) {
          std::size_t axis = f / 2;
          bool positive = (f & 1) != 0;
          bool facing = positive ? cam.position[axis] > g.lo[axis] : cam.position[axis] < g.hi[axis];
          std::uint32_t a = g.faceStart[f], b = g.faceStart[f + 1];
          if (!facing || a == b) continue;
          if (a != runEnd) {
            flush();
            runStart = a;
          }
          runEnd = b;
        }
        flush();
      }
      takeRuns(bandPass == 0 ? voxelRuns : bandRuns);
    }
    const std::size_t farDrawn = far ? gatherFarTiles(cam, planes) : 0;
    const bool meshesOk =
        ensureCapacity(s.placements, std::max<std::size_t>(placements.size(), 1) * sizeof(vk::Placement),
                       VK_BUFFER_USAGE_VERTEX_BUFFER_BIT) &&
        ensureCapacity(s.commands, std::max<std::size_t>(commands.size(), 1) * sizeof(VkDrawIndexedIndirectCommand),
                       VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT);
    if (meshesOk) {
      if (!placements.empty())
        std::memcpy(s.placements.mapped, placements.data(), placements.size() * sizeof(vk::Placement));
      if (!commands.empty())
        std::memcpy(s.commands.mapped, commands.data(), commands.size() * sizeof(VkDrawIndexedIndirectCommand));
    }

    // Record.
    VkCommandBuffer cb = s.cmd;
    vkResetCommandBuffer(cb, 0);
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &bi);
    VkClearValue clear[2]{};
    clear[0].color = {{0, 0, 0, 1}};
    clear[1].depthStencil = {0.0f, 0};  // reversed Z: 0 is far
    VkRenderPassBeginInfo rp{};
    rp.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO;
    rp.renderPass = target->renderPass();
    rp.framebuffer = target->framebuffer(config.offscreen ? 0 : imageIndex);
    rp.renderArea = {{0, 0}, ext};
    rp.clearValueCount = 2;
    rp.pClearValues = clear;
    vkCmdBeginRenderPass(cb, &rp, VK_SUBPASS_CONTENTS_INLINE);
    VkViewport vp{0, 0, w, h, 0, 1};
    VkRect2D sc{{0, 0}, ext};
    vkCmdSetViewport(cb, 0, 1, &vp);
    vkCmdSetScissor(cb, 0, 1, &sc);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.layout, 0, 1, &s.set, 0, nullptr);
    vk::PushConstants push{};
    auto pushConstants = [&] {
      vkCmdPushConstants(cb, pipes.layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(push), &push);
    };
    pushConstants();

    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.sky);
    vkCmdDraw(cb, 3, 1, 0, 0);

    std::uint32_t bound = UINT32_MAX;
    VkDeviceSize zero = 0;
    if (meshesOk) {
      vkCmdBindVertexBuffers(cb, 1, 1, &s.placements.buffer, &zero);  // for the water pass too
      vkCmdBindIndexBuffer(cb, indices.buffer, 0, VK_INDEX_TYPE_UINT32);
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.voxel);
      drawRuns(cb, s.commands.buffer, voxelRuns, bound);
      if (!bandRuns.empty()) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.voxelBand);
        drawRuns(cb, s.commands.buffer, bandRuns, bound);
      }
      if (!farRuns.empty()) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.far);
        vkCmdBindIndexBuffer(cb, farIndices.buffer, 0, VK_INDEX_TYPE_UINT16);
        drawRuns(cb, s.commands.buffer, farRuns, bound);
      }
    }
    vkCmdBindIndexBuffer(cb, indices.buffer, 0, VK_INDEX_TYPE_UINT32);

    if (geometryOk && colourCount > 0) {
      vkCmdBindVertexBuffers(cb, 0, 1, &s.colourVerts.buffer, &zero);
      if (!solid.empty()) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.solid);
        vkCmdDraw(cb, static_cast<std::uint32_t>(solid.size()), 1, 0, 0);
      }
      if (!lines.empty()) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.lines);
        vkCmdDraw(cb, static_cast<std::uint32_t>(lines.size()), 1, firstLines, 0);
      }
    }

    // Water, far to near (per chunk), blended over everything opaque: direct draws,
    // two passes per chunk, so that each chunk blends over the ones behind it.
    bound = UINT32_MAX;  // the entity pass bound its own buffer since
    std::sort(visible.begin(), visible.end(), [](const VisibleChunk& a, const VisibleChunk& b) { return a.distance > b.distance; });
    for (const VisibleChunk& v : visible) {
      if (!meshesOk || v.chunk->waterQuads == 0) continue;
      bindBlock(cb, v.chunk->range.block, bound);
      // Two passes per chunk (push.b[3] selects): behind * transmittance, then + light.
      for (int pass = 0; pass < 2; ++pass) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pass == 0 ? pipes.water : pipes.waterLight);
        push.b[3] = pass;
        pushConstants();
        const std::int32_t water = static_cast<std::int32_t>(v.chunk->opaqueQuads * 4);
        vkCmdDrawIndexed(cb, v.chunk->waterQuads * 6, 1, 0, firstVertex<mesh::PackedVertex>(v.chunk->range) + water,
                         v.placement);
      }
      push.b[3] = 0;
      quads += v.chunk->waterQuads;
    }
    if (geometryOk && colourCount > 0) {
      vkCmdBindVertexBuffers(cb, 0, 1, &s.colourVerts.buffer, &zero);
      if (!glow.empty()) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.glow);
        vkCmdDraw(cb, static_cast<std::uint32_t>(glow.size()), 1, firstGlow, 0);
      }
      if (!blend.empty()) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.blend);
        vkCmdDraw(cb, static_cast<std::uint32_t>(blend.size()), 1, firstBlend, 0);
      }
    }
    if (geometryOk && !hud.empty()) {
      push.a[0] = w, push.a[1] = h;
      pushConstants();
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipes.hud);
      vkCmdBindVertexBuffers(cb, 0, 1, &s.hudVerts.buffer, &zero);
      vkCmdDraw(cb, static_cast<std::uint32_t>(hud.size()), 1, 0, 0);
    }
    vkCmdEndRenderPass(cb);

    bool capture = !config.offscreen && captureNext && recordCapture(cb, target->colourImage(imageIndex));
    captureNext = false;
    vkEndCommandBuffer(cb);

    VkPipelineStageFlags waitStage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    if (!config.offscreen) {
      si.waitSemaphoreCount = 1;
      si.pWaitSemaphores = &s.acquired;
      si.pWaitDstStageMask = &waitStage;
      si.signalSemaphoreCount = 1;
      si.pSignalSemaphores = &renderDone[imageIndex];
    }
    if (VkResult r = vkQueueSubmit(ctx->queue, 1, &si, s.fence); r != VK_SUCCESS) {
      std::fprintf(stderr, "renderer: vkQueueSubmit failed (%d)\n", static_cast<int>(r));
      return false;
    }
    ++frameCounter;
    if (!config.offscreen) {
      VkSwapchainKHR sw = target->swapchain();
      VkPresentInfoKHR pi{};
      pi.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR;
      pi.waitSemaphoreCount = 1;
      pi.pWaitSemaphores = &renderDone[imageIndex];
      pi.swapchainCount = 1;
      pi.pSwapchains = &sw;
      pi.pImageIndices = &imageIndex;
      VkResult r = vkQueuePresentKHR(ctx->queue, &pi);
      if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) needRecreate = true;
      haveFrame = capture;
    } else {
      haveFrame = true;
    }

    stats.chunksDrawn = visible.size();
    stats.chunksCulled = culled;
    stats.quadsDrawn = quads;
    stats.farTilesDrawn = farDrawn;
    stats.trianglesDrawn = 2 * quads + farDrawn * (mesh::farTileIndices().size() / 3);
    stats.meshBytes = heap->used();
    stats.meshReservedBytes = heap->reserved();
    stats.frames = frameCounter;
    stats.cpuMs = seconds(std::chrono::steady_clock::now() - start) * 1e3;
    return true;
  }

  /// Window screenshots: copies the swapchain image into the readback buffer
  /// (PRESENT_SRC -> TRANSFER_SRC -> PRESENT_SRC).
  bool recordCapture(VkCommandBuffer cb, VkImage image) {
    VkExtent2D ext = target->extent();
    VkDeviceSize bytes = static_cast<VkDeviceSize>(ext.width) * ext.height * 4;
    if (readback.size < bytes) {
      ctx->destroy(readback);  // the previous capture was read after a wait-idle
      auto b = ctx->createBuffer(bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
      if (!b) return false;
      readback = *b;
    }
    VkImageMemoryBarrier ib{};
    ib.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
    ib.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    ib.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    ib.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    ib.image = image;
    ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
                         nullptr, 1, &ib);
    VkBufferImageCopy copy{};
    copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    copy.imageExtent = {ext.width, ext.height, 1};
    vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback.buffer, 1, &copy);
    ib.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    ib.dstAccessMask = 0;
    ib.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    ib.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 0, nullptr,
                         1, &ib);
    transferToHostBarrier(cb, readback.buffer);
    return true;
  }

  sim::Result<Image> read() {
    if (!haveFrame)
      return sim::makeError(config.offscreen ? "readPixels: no frame rendered yet"
                                             : "readPixels: the last frame was not captured (call captureNextFrame first)");
    vkDeviceWaitIdle(ctx->device);
    VkExtent2D ext = target->extent();
    VkDeviceSize bytes = static_cast<VkDeviceSize>(ext.width) * ext.height * 4;
    if (config.offscreen) {
      if (readback.size < bytes) {
        ctx->destroy(readback);
        auto b = ctx->createBuffer(bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
        if (!b) return b.error();
        readback = *b;
      }
      VkImage image = target->colourImage(0);
      VkResult r = ctx->oneShot([&](VkCommandBuffer cb) {
        VkBufferImageCopy copy{};
        copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        copy.imageExtent = {ext.width, ext.height, 1};
        vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback.buffer, 1, &copy);
        transferToHostBarrier(cb, readback.buffer);
      });
      if (r != VK_SUCCESS) return vk::vkError("readPixels copy", r);
    }
    Image img;
    img.width = static_cast<int>(ext.width);
    img.height = static_cast<int>(ext.height);
    img.rgba.resize(static_cast<std::size_t>(bytes));
    std::memcpy(img.rgba.data(), readback.mapped, img.rgba.size());
    VkFormat fmt = target->colourFormat();
    if (fmt == VK_FORMAT_B8G8R8A8_SRGB || fmt == VK_FORMAT_B8G8R8A8_UNORM)
      for (std::size_t i = 0; i < img.rgba.size(); i += 4) std::swap(img.rgba[i], img.rgba[i + 2]);
    return img;
  }
};

Renderer::Renderer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Renderer::~Renderer() = default;

sim::Result<std::unique_ptr<Renderer>> Renderer::create(const RendererConfig& config) {
  if (!config.offscreen && !config.window) return sim::makeError("Renderer: a window is required unless offscreen");
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->config.meshThreads = std::max(1, config.meshThreads);
  if (auto r = impl->init(); !r) return r.error();
  return std::unique_ptr<Renderer>(new Renderer(std::move(impl)));
}

void Renderer::setWorld(const sim::BrickStore& world, const sim::MaterialTable& materials,
                        const std::array<double, 3>& centreMetres, const sim::VoxelOverlay* overlay) {
  Impl& m = *impl_;
  vkDeviceWaitIdle(m.ctx->device);
  for (auto& [c, g] : m.chunks) m.heap->free(g.range);
  m.chunks.clear();
  auto* mu = static_cast<vk::MaterialUniforms*>(m.materialUniforms.mapped);
  std::memset(mu, 0, sizeof(*mu));
  for (std::size_t i = 0; i < materials.size() && i < 256; ++i) {
    const sim::Rgb8& c = materials[static_cast<sim::MaterialId>(i)].colour;
    mu->colour[i][0] = srgbToLinear(c.r);
    mu->colour[i][1] = srgbToLinear(c.g);
    mu->colour[i][2] = srgbToLinear(c.b);
    mu->colour[i][3] = 1.0f;
  }
  if (!m.cache || m.materials != &materials) {
    m.cache.reset();
    m.cache = std::make_unique<mesh::MeshCache>(
        materials, mesh::MeshCacheConfig{m.config.meshThreads, m.config.viewDistanceMetres,
                                         {m.config.coarseMetres[0], m.config.coarseMetres[1]}});
  }
  m.world = &world;
  m.materials = &materials;
  m.centre = centreMetres;
  m.cache->setOverlay(overlay);
  m.cache->reset(world, centreMetres);
  m.cache->takeChunkUpdates();  // removals of chunks we already dropped
}

void Renderer::setFarTerrain(std::shared_ptr<const sim::TerrainSampler> sampler) {
  Impl& m = *impl_;
  vkDeviceWaitIdle(m.ctx->device);
  m.far.reset();
  for (auto& [k, g] : m.farTiles) m.heap->free(g.range);
  m.farTiles.clear();
  // Another world's sampler: the surface changes were that world's.
  if (sampler != m.farSampler) m.farSurface = std::make_shared<mesh::FarSurface>();
  m.farSampler = sampler;
  if (!sampler || m.config.farViewMetres <= m.config.viewDistanceMetres) return;
  mesh::FarTerrainConfig fc;
  fc.nearMetres = m.config.viewDistanceMetres - kHandoverInsetMetres - kHandoverBandMetres;
  fc.farMetres = m.config.farViewMetres;
  if (m.world) {
    const sim::WorldBounds& b = m.world->bounds();
    const double brick = static_cast<double>(sim::kBrickSize) / sim::kVoxelsPerMetre;
    fc.minX = b.minBrick.x * brick, fc.minZ = b.minBrick.z * brick;
    fc.maxX = b.maxBrick.x * brick, fc.maxZ = b.maxBrick.z * brick;
  }
  m.far = std::make_unique<mesh::FarTerrainCache>(std::move(sampler), fc, m.config.meshThreads, m.farSurface);
}

void Renderer::setFarView(double metres) {
  impl_->config.farViewMetres = metres;
  setFarTerrain(impl_->farSampler);
}

void Renderer::applySurfaceChanges(std::span<const sim::SurfaceChange> changes) {
  // Through the cache when there is one, so the tiles the changes touch are rebuilt.
  if (impl_->far) {
    impl_->far->applySurfaceChanges(changes);
  } else {
    impl_->farSurface->apply(changes);
  }
}

void Renderer::markDirty(std::span<const sim::BrickCoord> bricks) {
  if (impl_->cache) impl_->cache->markDirty(bricks);
}

bool Renderer::renderFrame(const FrameInput& frame) { return impl_->render(frame); }

void Renderer::resize(int width, int height) {
  Impl& m = *impl_;
  if (m.config.offscreen) {
    if (width <= 0 || height <= 0) return;
    if (auto r = m.target->recreate(static_cast<std::uint32_t>(width), static_cast<std::uint32_t>(height)); !r)
      std::fprintf(stderr, "renderer: resize: %s\n", r.error().message.c_str());
    m.haveFrame = false;
    return;
  }
  m.needRecreate = true;  // the drawable size is read again when the next frame starts
}

sim::Result<Image> Renderer::readPixels() { return impl_->read(); }

void Renderer::captureNextFrame() { impl_->captureNext = true; }

void Renderer::finishMeshing() {
  Impl& m = *impl_;
  if (m.cache && m.world) {
    m.cache->finish(*m.world, m.centre);
    m.uploadMeshes();
  }
  if (m.far) m.uploadFarTiles(m.far->finish(m.centre[0], m.centre[2]));
}

bool Renderer::meshIdle() const {
  return (!impl_->cache || impl_->cache->idle()) && (!impl_->far || impl_->far->idle());
}

FrameStats Renderer::stats() const {
  FrameStats s = impl_->stats;
  s.validationErrors = impl_->ctx->validationErrors();
  if (impl_->cache) {
    auto cs = impl_->cache->stats();
    s.meshQueue = cs.queuedBricks + cs.inFlightBricks;
    s.meshWaiting = cs.waitingForColumns;
  }
  return s;
}

}  // namespace loam::render
