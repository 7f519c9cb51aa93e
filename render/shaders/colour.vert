#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Per-frame world geometry built on the CPU (entities, fire, rain, highlight):
// camera-relative position, sRGB colour with alpha, normal with w = 1 when lit.
layout(location = 0) in vec3 inPos;
layout(location = 1) in vec4 inColour;
layout(location = 2) in vec4 inNormal;
layout(location = 0) out vec4 vColour;
layout(location = 1) out vec3 vRel;
void main() {
  vec3 c = srgbToLinear(inColour.rgb);
  if (inNormal.w > 0.5) c *= lighting(normalize(inNormal.xyz));
  vColour = vec4(c, inColour.a);
  vRel = inPos;
  gl_Position = frame.viewProj * vec4(inPos, 1.0);
}
