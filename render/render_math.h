// Small vector/matrix helpers for the renderer (private to render/). Matrices are
// column-major float[16] as GLSL expects; world positions reach the GPU relative to
// the camera so floats stay precise anywhere in the world.
#pragma once
#include <array>
#include <cmath>

namespace loam::render {

struct Vec3f {
  float x = 0, y = 0, z = 0;
};
inline Vec3f operator+(Vec3f a, Vec3f b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3f operator-(Vec3f a, Vec3f b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3f operator*(Vec3f a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline float dot(Vec3f a, Vec3f b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3f cross(Vec3f a, Vec3f b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
inline Vec3f normalize(Vec3f a) {
  float l = std::sqrt(dot(a, a));
  return l > 0 ? a * (1.0f / l) : a;
}

/// Column-major 4x4: m[col * 4 + row].
using Mat4 = std::array<float, 16>;

inline Mat4 mul(const Mat4& a, const Mat4& b) {
  Mat4 r{};
  for (int c = 0; c < 4; ++c)
    for (int row = 0; row < 4; ++row) {
      float s = 0;
      for (int k = 0; k < 4; ++k) s += a[static_cast<std::size_t>(k * 4 + row)] * b[static_cast<std::size_t>(c * 4 + k)];
      r[static_cast<std::size_t>(c * 4 + row)] = s;
    }
  return r;
}

/// The camera's axes from the sim's angles: yaw 0 looks north (-z), clockwise from
/// above (pi/2 looks east, +x); pitch + looks up.
struct CameraBasis {
  Vec3f forward, right, up;
};
inline CameraBasis cameraBasis(double yaw, double pitch) {
  float cy = static_cast<float>(std::cos(yaw)), sy = static_cast<float>(std::sin(yaw));
  float cp = static_cast<float>(std::cos(pitch)), sp = static_cast<float>(std::sin(pitch));
  CameraBasis b;
  b.forward = {sy * cp, sp, -cy * cp};
  b.right = {cy, 0, sy};
  b.up = cross(b.right, b.forward);
  return b;
}

/// View (rotation only: positions are camera-relative) times a reversed-Z perspective
/// for Vulkan clip space (depth 1 at near, 0 at far; y down).
inline Mat4 viewProjection(const CameraBasis& b, float fovY, float aspect, float nearZ, float farZ) {
  Mat4 view{};
  // Rows of the view rotation: right, up, -forward.
  view[0] = b.right.x, view[4] = b.right.y, view[8] = b.right.z;
  view[1] = b.up.x, view[5] = b.up.y, view[9] = b.up.z;
  view[2] = -b.forward.x, view[6] = -b.forward.y, view[10] = -b.forward.z;
  view[15] = 1;
  float f = 1.0f / std::tan(fovY * 0.5f);
  Mat4 proj{};
  proj[0] = f / aspect;
  proj[5] = -f;
  proj[10] = nearZ / (farZ - nearZ);
  proj[11] = -1;
  proj[14] = nearZ * farZ / (farZ - nearZ);
  return mul(proj, view);
}

/// Clip-space position of a camera-relative point.
inline std::array<float, 4> transform(const Mat4& m, Vec3f p) {
  std::array<float, 4> r{};
  for (int row = 0; row < 4; ++row)
    r[static_cast<std::size_t>(row)] = m[static_cast<std::size_t>(row)] * p.x + m[static_cast<std::size_t>(4 + row)] * p.y +
                                       m[static_cast<std::size_t>(8 + row)] * p.z + m[static_cast<std::size_t>(12 + row)];
  return r;
}

/// The six frustum planes (a, b, c, d: inside when a x + b y + c z + d >= 0) of a
/// Vulkan clip matrix (Gribb-Hartmann).
inline std::array<std::array<float, 4>, 6> frustumPlanes(const Mat4& m) {
  auto row = [&](int r) {
    return std::array<float, 4>{m[static_cast<std::size_t>(r)], m[static_cast<std::size_t>(4 + r)],
                                m[static_cast<std::size_t>(8 + r)], m[static_cast<std::size_t>(12 + r)]};
  };
  auto r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
  std::array<std::array<float, 4>, 6> p{};
  for (std::size_t i = 0; i < 4; ++i) {
    p[0][i] = r3[i] + r0[i];
    p[1][i] = r3[i] - r0[i];
    p[2][i] = r3[i] + r1[i];
    p[3][i] = r3[i] - r1[i];
    p[4][i] = r2[i];          // z >= 0 (far, reversed Z)
    p[5][i] = r3[i] - r2[i];  // z <= w (near)
  }
  return p;
}

/// True when the camera-relative box [lo, hi] is at least partly inside the planes.
inline bool boxVisible(const std::array<std::array<float, 4>, 6>& planes, Vec3f lo, Vec3f hi) {
  for (const auto& p : planes) {
    Vec3f v{p[0] >= 0 ? hi.x : lo.x, p[1] >= 0 ? hi.y : lo.y, p[2] >= 0 ? hi.z : lo.z};
    if (p[0] * v.x + p[1] * v.y + p[2] * v.z + p[3] < 0) return false;
  }
  return true;
}

}  // namespace loam::render
