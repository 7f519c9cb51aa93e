#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// mesh/mesh_types.h PackedVertex: word0 = x | y << 8 | z << 16 | face << 24 | ao << 27,
// word1 = material. Positions are voxel corners relative to the chunk's minimum corner.
layout(location = 0) in uint word0;
layout(location = 1) in uint word1;
layout(location = 5) in vec4 placementA;   // the chunk's origin relative to the camera (metres)
layout(location = 6) in ivec4 placementB;  // the chunk's origin in voxels
layout(location = 0) out vec3 vLocal;   // chunk-relative voxel units
layout(location = 1) out vec3 vRel;     // camera-relative metres
layout(location = 2) out float vAo;
layout(location = 3) flat out uint vFace;
layout(location = 4) flat out uint vMaterial;
layout(location = 5) flat out ivec3 vOrigin;  // the chunk's minimum corner in voxels
void main() {
  vec3 p = vec3(float(word0 & 0xffu), float((word0 >> 8) & 0xffu), float((word0 >> 16) & 0xffu));
  vLocal = p;
  vOrigin = placementB.xyz;
  vRel = placementA.xyz + p * 0.05;
  vFace = (word0 >> 24) & 7u;
  vAo = float((word0 >> 27) & 3u) / 3.0;
  vMaterial = word1 & 0xffu;
  gl_Position = frame.viewProj * vec4(vRel, 1.0);
}
