#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// The 2-D layer: pixel positions from the top-left corner, sRGB colours.
layout(location = 0) in vec2 inPos;
layout(location = 1) in vec4 inColour;
layout(location = 0) out vec4 vColour;
void main() {
  vColour = vec4(srgbToLinear(inColour.rgb), inColour.a);
  gl_Position = vec4(inPos / pc.a.xy * 2.0 - 1.0, 0.0, 1.0);
}
