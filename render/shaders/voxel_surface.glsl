// The opaque voxel fragment shader's body, compiled twice: voxel.frag for chunks
// wholly inside the near/far handover band's start, voxel_band.frag (LOAM_HANDOVER)
// for those that reach into it. Only the second discards, so the chunks drawn most
// keep early depth testing.
#include "common.glsl"
#include "voxel_common.glsl"
#ifdef LOAM_HANDOVER
#include "handover.glsl"
#endif
layout(location = 0) in vec3 vLocal;
layout(location = 1) in vec3 vRel;
layout(location = 2) in float vAo;
layout(location = 3) flat in uint vFace;
layout(location = 4) flat in uint vMaterial;
layout(location = 5) flat in ivec3 vOrigin;
layout(location = 0) out vec4 outColour;
void main() {
#ifdef LOAM_HANDOVER
  if (farShare(vRel) > ditherThreshold()) discard;  // the far terrain draws here
#endif
  vec3 n = faceNormal(vFace);
  ivec3 v = voxelOf(vLocal, n, vOrigin);
  // Subtle per-voxel texture: each voxel's brightness and hue wobble a little, and
  // 2x2 blocks vary slower so large surfaces are not uniformly noisy.
  uint h = hash3(v);
  uint h2 = hash3(v >> 2);
  float grain = (float(h & 255u) / 255.0 - 0.5) * 0.12 + (float(h2 & 255u) / 255.0 - 0.5) * 0.08;
  vec3 base = materials.colour[vMaterial].rgb;
  base *= 1.0 + grain + vec3(float((h >> 8) & 15u), float((h >> 12) & 15u), float((h >> 16) & 15u)) * 0.004 - 0.03;
  float ao = 0.35 + 0.65 * vAo;
  vec3 c = base * lighting(n) * ao;
  outColour = encodeOut(applyFog(c, vRel), 1.0);
}
