#include "render/vk_pipelines.h"

#include <vector>

namespace loam::render::vk {

namespace {

// SPIR-V compiled by glslc at build time (render/CMakeLists.txt).
const std::uint32_t kSkyVert[] = {
#include "shaders/sky.vert.spv.inc"
};
const std::uint32_t kSkyFrag[] = {
#include "shaders/sky.frag.spv.inc"
};
const std::uint32_t kVoxelVert[] = {
#include "shaders/voxel.vert.spv.inc"
};
const std::uint32_t kVoxelFrag[] = {
#include "shaders/voxel.frag.spv.inc"
};
const std::uint32_t kVoxelBandFrag[] = {
#include "shaders/voxel_band.frag.spv.inc"
};
const std::uint32_t kWaterFrag[] = {
#include "shaders/water.frag.spv.inc"
};
const std::uint32_t kFarVert[] = {
#include "shaders/far.vert.spv.inc"
};
const std::uint32_t kFarFrag[] = {
#include "shaders/far.frag.spv.inc"
};
const std::uint32_t kColourVert[] = {
#include "shaders/colour.vert.spv.inc"
};
const std::uint32_t kColourFrag[] = {
#include "shaders/colour.frag.spv.inc"
};
const std::uint32_t kGlowFrag[] = {
#include "shaders/glow.frag.spv.inc"
};
const std::uint32_t kHudVert[] = {
#include "shaders/hud.vert.spv.inc"
};
const std::uint32_t kHudFrag[] = {
#include "shaders/hud.frag.spv.inc"
};

enum class Blend { None, Alpha, Additive, Multiply };

struct Desc {
  const std::uint32_t* vert = nullptr;
  std::size_t vertBytes = 0;
  const std::uint32_t* frag = nullptr;
  std::size_t fragBytes = 0;
  std::vector<VkVertexInputBindingDescription> bindings;
  std::vector<VkVertexInputAttributeDescription> attributes;
  VkPrimitiveTopology topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  Blend blend = Blend::None;
  bool depthTest = true;
  bool depthWrite = true;
  float depthBias = 0;
  bool cullBack = false;
};

VkShaderModule module(VkDevice device, const std::uint32_t* code, std::size_t bytes) {
  VkShaderModuleCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  ci.codeSize = bytes;
  ci.pCode = code;
  VkShaderModule m = VK_NULL_HANDLE;
  vkCreateShaderModule(device, &ci, nullptr, &m);
  return m;
}

sim::Result<VkPipeline> build(VkDevice device, VkRenderPass pass, VkPipelineLayout layout, const Desc& d) {
  VkShaderModule vs = module(device, d.vert, d.vertBytes);
  VkShaderModule fs = module(device, d.frag, d.fragBytes);
  VkPipelineShaderStageCreateInfo stages[2]{};
  stages[0] = {};
  stages[0].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vs;
  stages[0].pName = "main";
  stages[1] = {};
  stages[1].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = fs;
  stages[1].pName = "main";

  VkPipelineVertexInputStateCreateInfo vi{};
  vi.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
  vi.vertexBindingDescriptionCount = static_cast<std::uint32_t>(d.bindings.size());
  vi.pVertexBindingDescriptions = d.bindings.data();
  vi.vertexAttributeDescriptionCount = static_cast<std::uint32_t>(d.attributes.size());
  vi.pVertexAttributeDescriptions = d.attributes.data();
  VkPipelineInputAssemblyStateCreateInfo ia{};
  ia.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO;
  ia.topology = d.topology;
  VkPipelineViewportStateCreateInfo vp{};
  vp.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO;
  vp.viewportCount = 1;
  vp.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo rs{};
  rs.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO;
  rs.polygonMode = VK_POLYGON_MODE_FILL;
  // Chunk quads are counter-clockwise seen from outside (mesh/brick_mesher.cpp); the
  // projection flips y, which keeps on-screen winding. Water stays two-sided (seen
  // from below), as do the CPU-built shapes.
  rs.cullMode = d.cullBack ? VK_CULL_MODE_BACK_BIT : VK_CULL_MODE_NONE;
  rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  rs.lineWidth = 1.0f;
  if (d.depthBias != 0) {
    rs.depthBiasEnable = VK_TRUE;
    rs.depthBiasConstantFactor = d.depthBias;
  }
  VkPipelineMultisampleStateCreateInfo ms{};
  ms.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO;
  ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineDepthStencilStateCreateInfo ds{};
  ds.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO;
  ds.depthTestEnable = d.depthTest ? VK_TRUE : VK_FALSE;
  ds.depthWriteEnable = d.depthWrite ? VK_TRUE : VK_FALSE;
  ds.depthCompareOp = VK_COMPARE_OP_GREATER_OR_EQUAL;  // reversed Z
  VkPipelineColorBlendAttachmentState cba{};
  cba.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  if (d.blend != Blend::None) {
    cba.blendEnable = VK_TRUE;
    cba.srcColorBlendFactor = d.blend == Blend::Multiply ? VK_BLEND_FACTOR_ZERO : VK_BLEND_FACTOR_SRC_ALPHA;
    cba.dstColorBlendFactor = d.blend == Blend::Alpha      ? VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA
                              : d.blend == Blend::Multiply ? VK_BLEND_FACTOR_SRC_COLOR
                                                           : VK_BLEND_FACTOR_ONE;
    cba.colorBlendOp = VK_BLEND_OP_ADD;
    cba.srcAlphaBlendFactor = VK_BLEND_FACTOR_ZERO;
    cba.dstAlphaBlendFactor = VK_BLEND_FACTOR_ONE;
    cba.alphaBlendOp = VK_BLEND_OP_ADD;
  }
  VkPipelineColorBlendStateCreateInfo cb{};
  cb.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO;
  cb.attachmentCount = 1;
  cb.pAttachments = &cba;
  VkDynamicState dyn[2] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dy{};
  dy.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO;
  dy.dynamicStateCount = 2;
  dy.pDynamicStates = dyn;

  VkGraphicsPipelineCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO;
  pci.stageCount = 2;
  pci.pStages = stages;
  pci.pVertexInputState = &vi;
  pci.pInputAssemblyState = &ia;
  pci.pViewportState = &vp;
  pci.pRasterizationState = &rs;
  pci.pMultisampleState = &ms;
  pci.pDepthStencilState = &ds;
  pci.pColorBlendState = &cb;
  pci.pDynamicState = &dy;
  pci.layout = layout;
  pci.renderPass = pass;
  VkPipeline p = VK_NULL_HANDLE;
  VkResult r = vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &pci, nullptr, &p);
  vkDestroyShaderModule(device, vs, nullptr);
  vkDestroyShaderModule(device, fs, nullptr);
  if (r != VK_SUCCESS) return vkError("vkCreateGraphicsPipelines", r);
  return p;
}

}  // namespace

sim::Result<Pipelines> createPipelines(VkDevice device, VkRenderPass renderPass) {
  Pipelines p;
  VkDescriptorSetLayoutBinding b[2]{};
  b[0].binding = 0;
  b[0].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
  b[0].descriptorCount = 1;
  b[0].stageFlags = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
  b[1] = b[0];
  b[1].binding = 1;
  VkDescriptorSetLayoutCreateInfo dl{};
  dl.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dl.bindingCount = 2;
  dl.pBindings = b;
  if (VkResult r = vkCreateDescriptorSetLayout(device, &dl, nullptr, &p.setLayout); r != VK_SUCCESS)
    return vkError("vkCreateDescriptorSetLayout", r);
  VkPushConstantRange pcr{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo pl{};
  pl.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &p.setLayout;
  pl.pushConstantRangeCount = 1;
  pl.pPushConstantRanges = &pcr;
  if (VkResult r = vkCreatePipelineLayout(device, &pl, nullptr, &p.layout); r != VK_SUCCESS)
    return vkError("vkCreatePipelineLayout", r);

  auto make = [&](VkPipeline& out, const Desc& d) -> bool {
    auto r = build(device, renderPass, p.layout, d);
    if (!r) return false;
    out = *r;
    return true;
  };
  Desc sky;
  sky.vert = kSkyVert, sky.vertBytes = sizeof(kSkyVert);
  sky.frag = kSkyFrag, sky.fragBytes = sizeof(kSkyFrag);
  sky.depthTest = false;
  sky.depthWrite = false;

  Desc voxel;
  voxel.vert = kVoxelVert, voxel.vertBytes = sizeof(kVoxelVert);
  voxel.frag = kVoxelFrag, voxel.fragBytes = sizeof(kVoxelFrag);
  // Binding 1: the frame's Placements, one per instance (the draw's firstInstance).
  const VkVertexInputBindingDescription placements{1, sizeof(Placement), VK_VERTEX_INPUT_RATE_INSTANCE};
  voxel.bindings = {{0, 8, VK_VERTEX_INPUT_RATE_VERTEX}, placements};
  voxel.attributes = {{0, 0, VK_FORMAT_R32_UINT, 0},
                      {1, 0, VK_FORMAT_R32_UINT, 4},
                      {5, 1, VK_FORMAT_R32G32B32A32_SFLOAT, 0},
                      {6, 1, VK_FORMAT_R32G32B32A32_SINT, 16}};
  voxel.cullBack = true;
  Desc voxelBand = voxel;
  voxelBand.frag = kVoxelBandFrag, voxelBand.fragBytes = sizeof(kVoxelBandFrag);
  Desc water = voxel;
  water.cullBack = false;
  water.frag = kWaterFrag, water.fragBytes = sizeof(kWaterFrag);
  water.blend = Blend::Multiply;
  water.depthWrite = false;
  Desc waterLight = water;
  waterLight.blend = Blend::Additive;

  // mesh/far_terrain.h FarVertex (16 bytes).
  Desc far;
  far.vert = kFarVert, far.vertBytes = sizeof(kFarVert);
  far.frag = kFarFrag, far.fragBytes = sizeof(kFarFrag);
  far.bindings = {{0, 16, VK_VERTEX_INPUT_RATE_VERTEX}, placements};
  far.attributes = {{0, 0, VK_FORMAT_R32G32_SFLOAT, 0},
                    {1, 0, VK_FORMAT_R8G8_UINT, 8},
                    {2, 0, VK_FORMAT_R8G8_SINT, 10},
                    {3, 0, VK_FORMAT_R8G8B8A8_UINT, 12},
                    {5, 1, VK_FORMAT_R32G32B32A32_SFLOAT, 0},
                    {6, 1, VK_FORMAT_R32G32B32A32_SINT, 16}};
  far.cullBack = true;

  Desc solid;
  solid.vert = kColourVert, solid.vertBytes = sizeof(kColourVert);
  solid.frag = kColourFrag, solid.fragBytes = sizeof(kColourFrag);
  solid.bindings = {{0, sizeof(ColourVertex), VK_VERTEX_INPUT_RATE_VERTEX}};
  solid.attributes = {{0, 0, VK_FORMAT_R32G32B32_SFLOAT, 0},
                      {1, 0, VK_FORMAT_R8G8B8A8_UNORM, 12},
                      {2, 0, VK_FORMAT_R8G8B8A8_SNORM, 16}};
  Desc blend = solid;
  blend.blend = Blend::Alpha;
  blend.depthWrite = false;
  Desc glow = blend;
  glow.frag = kGlowFrag, glow.fragBytes = sizeof(kGlowFrag);
  glow.blend = Blend::Additive;
  Desc lines = blend;
  lines.topology = VK_PRIMITIVE_TOPOLOGY_LINE_LIST;

  Desc hud;
  hud.vert = kHudVert, hud.vertBytes = sizeof(kHudVert);
  hud.frag = kHudFrag, hud.fragBytes = sizeof(kHudFrag);
  hud.bindings = {{0, sizeof(HudVertex), VK_VERTEX_INPUT_RATE_VERTEX}};
  hud.attributes = {{0, 0, VK_FORMAT_R32G32_SFLOAT, 0}, {1, 0, VK_FORMAT_R8G8B8A8_UNORM, 8}};
  hud.blend = Blend::Alpha;
  hud.depthTest = false;
  hud.depthWrite = false;

  if (!make(p.sky, sky) || !make(p.voxel, voxel) || !make(p.voxelBand, voxelBand) || !make(p.water, water) ||
      !make(p.waterLight, waterLight) || !make(p.far, far) || !make(p.solid, solid) || !make(p.blend, blend) ||
      !make(p.glow, glow) || !make(p.lines, lines) || !make(p.hud, hud)) {
    destroyPipelines(device, p);
    return sim::makeError("graphics pipeline creation failed");
  }
  return p;
}

void destroyPipelines(VkDevice device, Pipelines& p) {
  for (VkPipeline* x : {&p.sky, &p.voxel, &p.voxelBand, &p.water, &p.waterLight, &p.far, &p.solid, &p.blend, &p.glow,
                        &p.lines, &p.hud})
    if (*x) vkDestroyPipeline(device, *x, nullptr);
  if (p.layout) vkDestroyPipelineLayout(device, p.layout, nullptr);
  if (p.setLayout) vkDestroyDescriptorSetLayout(device, p.setLayout, nullptr);
  p = Pipelines{};
}

}  // namespace loam::render::vk
