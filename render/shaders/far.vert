#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// mesh/far_terrain.h FarVertex: heights (own, parent level's), grid (i, j), normal
// x and z (snorm8), material, skirt, canopy material and cover. The tile's placement:
// a.xyz = its minimum corner relative to the camera (metres; a.y = -camera y), a.w =
// its cell size; b.xy = its level's morph band (float bits, plan metres from the eye).
layout(location = 0) in vec2 heights;
layout(location = 1) in uvec2 grid;
layout(location = 2) in ivec2 normalXZ;
layout(location = 3) in uvec4 materialSkirtCanopy;
layout(location = 5) in vec4 placementA;
layout(location = 6) in ivec4 placementB;
layout(location = 0) out vec3 vRel;      // camera-relative metres
layout(location = 1) out vec3 vNormal;
layout(location = 2) flat out uint vMaterial;
layout(location = 3) flat out uint vCanopy;
layout(location = 4) out float vCover;
void main() {
  vec2 rel = placementA.xz + vec2(grid) * placementA.w;
  // Slide to the parent level's surface across the morph band: at its end the tile
  // has its coarser neighbour's shape, so the seam between them closes.
  float start = intBitsToFloat(placementB.x), end = intBitsToFloat(placementB.y);
  float morph = clamp((length(rel) - start) / (end - start), 0.0, 1.0);
  float h = mix(heights.x, heights.y, morph);
  vRel = vec3(rel.x, h + placementA.y, rel.y);
  vec2 n = vec2(normalXZ) / 127.0;
  vNormal = vec3(n.x, sqrt(max(0.0, 1.0 - dot(n, n))), n.y);
  vMaterial = materialSkirtCanopy.x;
  vCanopy = materialSkirtCanopy.z;
  vCover = float(materialSkirtCanopy.w) / 255.0;
  gl_Position = frame.viewProj * vec4(vRel, 1.0);
}
