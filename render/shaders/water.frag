#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "voxel_common.glsl"
#include "handover.glsl"
// Water in two passes over the same quads (pc.b.w): 0 multiplies what is behind by
// the water's transmittance (tinted, less where the surface reflects more), 1 adds
// the light the water sends to the eye (in-scattered colour, sky reflection, sun
// glint). Together: behind * T + E, per channel, with core blending only.
layout(location = 0) in vec3 vLocal;
layout(location = 1) in vec3 vRel;
layout(location = 2) in float vAo;
layout(location = 3) flat in uint vFace;
layout(location = 4) flat in uint vMaterial;
layout(location = 0) out vec4 outColour;
void main() {
  if (farShare(vRel) > ditherThreshold()) discard;  // the far terrain draws here
  vec3 n = faceNormal(vFace);
  float t = frame.camForward.w;
  vec3 world = vRel + frame.camPos.xyz;
  // Ripples: a few travelling waves, drifting with the wind, perturb the normal.
  vec2 q = world.xz + frame.wind.xz * t * 0.15;
  vec2 g = vec2(0.0);
  g += vec2(0.8, 0.3) * cos(dot(q, vec2(0.8, 0.3)) * 7.0 + t * 2.1);
  g += vec2(-0.4, 0.9) * cos(dot(q, vec2(-0.4, 0.9)) * 11.0 + t * 2.9);
  g += vec2(0.6, -0.7) * cos(dot(q, vec2(0.6, -0.7)) * 17.0 - t * 3.7) * 0.6;
  if (vFace == 3u) n = normalize(vec3(-g.x * 0.06, 1.0, -g.y * 0.06));
  float d = length(vRel);
  vec3 viewDir = vRel / max(d, 1e-4);
  vec3 base = materials.colour[vMaterial].rgb;
  vec3 r = reflect(viewDir, n);
  float fresnel = 0.04 + 0.96 * pow(1.0 - abs(dot(viewDir, n)), 5.0);
  float fog = d <= frame.fog.x ? 0.0 : smoothstep(frame.fog.x, frame.fog.y, d);
  if (pc.b.w == 0) {
    // Transmittance: towards the water's hue (red absorbed most), less at grazing angles.
    vec3 tint = base / max(max(base.r, base.g), max(base.b, 1e-3));
    vec3 T = mix(vec3(1.0), tint, 0.6) * 0.6 * (1.0 - fresnel);
    outColour = vec4(mix(T, vec3(1.0), fog), 1.0);  // colour = blend factor: no sRGB encoding
  } else {
    vec3 E = base * lighting(n) * 0.35 * (0.6 + 0.4 * vAo);
    E += skyColour(r) * fresnel;
    E += frame.lightColour.rgb * pow(max(dot(r, frame.lightDir.xyz), 0.0), 120.0) * 0.8;
    outColour = encodeOut(E * (1.0 - fog), 1.0);
  }
}
