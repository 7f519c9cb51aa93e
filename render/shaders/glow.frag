#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Additive glow (fire): fog fades it instead of tinting it.
layout(location = 0) in vec4 vColour;
layout(location = 1) in vec3 vRel;
layout(location = 0) out vec4 outColour;
void main() {
  float f = smoothstep(frame.fog.x, frame.fog.y, length(vRel));
  outColour = encodeOut(vColour.rgb * (1.0 - f), vColour.a);
}
