#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(location = 0) in vec2 vNdc;
layout(location = 0) out vec4 outColour;
void main() {
  // NDC y points down in Vulkan.
  vec3 dir = normalize(frame.camForward.xyz + vNdc.x * frame.camRight.w * frame.camRight.xyz -
                       vNdc.y * frame.camUp.w * frame.camUp.xyz);
  vec3 c = skyColour(dir);

  // Sun disc and halo.
  float s = dot(dir, frame.sunDir.xyz);
  if (frame.sunDir.y > -0.05) {
    c += vec3(1.0, 0.9, 0.7) * smoothstep(0.9994, 0.9997, s) * 8.0;
    c += vec3(1.0, 0.8, 0.5) * pow(max(s, 0.0), 200.0) * 0.4;
  }
  // Moon opposite the sun, and sparse stars, at night.
  float night = frame.fog.w;
  if (night > 0.0 && dir.y > 0.0) {
    float m = dot(dir, -frame.sunDir.xyz);
    c += vec3(0.7, 0.75, 0.85) * smoothstep(0.9995, 0.9997, m) * night;
    vec3 q = dir * 300.0;
    ivec3 cell = ivec3(floor(q));
    uint h = hash3(cell);
    if ((h & 1023u) < 3u) {
      vec3 centre = vec3(cell) + 0.5;
      float d = length(q - centre);
      float twinkle = 0.7 + 0.3 * sin(frame.camForward.w * 2.0 + float(h >> 16));
      c += vec3(0.9, 0.9, 1.0) * smoothstep(0.35, 0.0, d) * night * twinkle * clamp(dir.y * 4.0, 0.0, 1.0);
    }
  }
  outColour = encodeOut(c, 1.0);
}
