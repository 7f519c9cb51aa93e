// Shared by every shader: the per-frame uniform block, push constants, sky colour,
// lighting and output encoding. Positions reach the shaders relative to the camera.

layout(set = 0, binding = 0) uniform Frame {
  mat4 viewProj;     // camera-relative world -> clip (reversed Z)
  vec4 camRight;     // xyz, w = tan(fovX / 2)
  vec4 camUp;        // xyz, w = tan(fovY / 2)
  vec4 camForward;   // xyz, w = animation seconds
  vec4 sunDir;       // towards the sun; w = daylight 0..1
  vec4 lightDir;     // towards the key light (sun by day, moon by night)
  vec4 lightColour;  // linear rgb
  vec4 ambient;      // linear rgb (sky light)
  vec4 zenith;       // linear rgb
  vec4 horizon;      // linear rgb
  vec4 fog;          // x start metres, y end metres, z encodeSrgb (0/1), w night 0..1
  vec4 camPos;       // world metres, w = rain 0..1
  vec4 wind;         // x, z m/s
  vec4 lod;          // x, y: plan distance band (metres) over which far terrain takes over; y = 0: none
  vec4 farBounds;    // the world's plan bounds, metres: min x, min z, max x, max z (far terrain stops there)
} frame;

layout(set = 0, binding = 1) uniform Materials {
  vec4 colour[256];  // linear rgb
} materials;

// Water: b.w = the pass. The 2-D layer: a.xy = viewport size in pixels. Where a voxel
// chunk or far tile lies comes with its draw instead (render/vk_pipelines.h Placement,
// vertex attributes 5 and 6), so that a heap block's meshes are one indirect draw.
layout(push_constant) uniform Push {
  vec4 a;
  ivec4 b;
} pc;

vec3 srgbToLinear(vec3 c) {
  return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(0.04045, c));
}
vec3 linearToSrgb(vec3 c) {
  c = clamp(c, 0.0, 1.0);
  return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, c));
}
vec4 encodeOut(vec3 linear, float alpha) {
  return vec4(frame.fog.z > 0.5 ? linearToSrgb(linear) : linear, alpha);
}

// Sky along a view direction (no sun disc): zenith-horizon gradient with a warm glow
// around the sun near the horizon (dawn, dusk).
vec3 skyColour(vec3 dir) {
  float up = clamp(dir.y, 0.0, 1.0);
  vec3 c = mix(frame.horizon.rgb, frame.zenith.rgb, pow(up, 0.55));
  if (dir.y < 0.0) c = mix(frame.horizon.rgb, frame.horizon.rgb * 0.55, clamp(-dir.y * 3.0, 0.0, 1.0));
  float s = max(dot(dir, frame.sunDir.xyz), 0.0);
  float low = 1.0 - clamp(abs(frame.sunDir.y) * 3.0, 0.0, 1.0);  // strongest when the sun is low
  c += vec3(1.0, 0.45, 0.15) * pow(s, 8.0) * low * 0.6 * (1.0 - up);
  return c;
}

// Distance fog towards the sky behind the fragment.
vec3 applyFog(vec3 colour, vec3 rel) {
  float d = length(rel);
  if (d <= frame.fog.x) return colour;  // most fragments: skip the sky evaluation
  float f = smoothstep(frame.fog.x, frame.fog.y, d);
  return mix(colour, skyColour(rel / d), f);
}

// Key light plus sky ambient for a surface normal (no shadows).
vec3 lighting(vec3 n) {
  float ndl = max(dot(n, frame.lightDir.xyz), 0.0);
  float sky = 0.55 + 0.45 * n.y;  // surfaces facing up see more sky
  return frame.lightColour.rgb * ndl + frame.ambient.rgb * sky;
}

uint hash3(ivec3 p) {
  uint h = uint(p.x) * 0x8da6b343u ^ uint(p.y) * 0xd8163841u ^ uint(p.z) * 0xcb1ab31fu;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return h;
}
