#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "handover.glsl"
// Far terrain: the surface material's colour, lit by the smooth normal, with a slow
// variation over the ground so large areas are not flat paint; fogged like the rest.
layout(location = 0) in vec3 vRel;
layout(location = 1) in vec3 vNormal;
layout(location = 2) flat in uint vMaterial;
layout(location = 3) flat in uint vCanopy;
layout(location = 4) in float vCover;
layout(location = 0) out vec4 outColour;
void main() {
  if (farShare(vRel) <= ditherThreshold()) discard;  // the voxel meshes draw here
  vec3 n = normalize(vNormal);
  vec3 world = vRel + frame.camPos.xyz;
  if (any(lessThan(world.xz, frame.farBounds.xy)) || any(greaterThanEqual(world.xz, frame.farBounds.zw))) discard;
  uint h = hash3(ivec3(floor(world.xz / 4.0), 0).xzy);
  float grain = (float(h & 255u) / 255.0 - 0.5) * 0.08;
  vec3 base = materials.colour[vMaterial].rgb * (1.0 + grain);
  // Trees are not drawn this far: their crowns tint the ground, darker for the shade
  // between them.
  base = mix(base, materials.colour[vCanopy].rgb * 0.7 * (1.0 + 2.0 * grain), vCover);
  // Steep ground shows less of its top layer (grass) and more rock-like shade.
  base *= mix(0.8, 1.0, smoothstep(0.55, 0.85, n.y));
  outColour = encodeOut(applyFog(base * lighting(n), vRel), 1.0);
}
