#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(location = 0) in vec4 vColour;
layout(location = 1) in vec3 vRel;
layout(location = 0) out vec4 outColour;
void main() {
  outColour = encodeOut(applyFog(vColour.rgb, vRel), vColour.a);
}
