// Fragment shaders only (gl_FragCoord); after common.glsl.
// Near/far handover: the share of the far terrain at a camera-relative position (0
// near, 1 beyond the band). A pixel shows the voxel meshes where the share is below
// its ordered-dither threshold and the far terrain elsewhere, so the two never
// overlap and the seam is a dissolve rather than a line.
float farShare(vec3 rel) {
  if (frame.lod.y <= 0.0) return 0.0;
  return clamp((length(rel.xz) - frame.lod.x) / (frame.lod.y - frame.lod.x), 0.0, 1.0);
}
float ditherThreshold() {
  // 4x4 Bayer matrix, (index + 0.5) / 16.
  const float bayer[16] = float[16](0.0, 8.0, 2.0, 10.0, 12.0, 4.0, 14.0, 6.0, 3.0, 11.0, 1.0, 9.0, 15.0, 7.0, 13.0, 5.0);
  ivec2 p = ivec2(gl_FragCoord.xy) & 3;
  return (bayer[p.y * 4 + p.x] + 0.5) / 16.0;
}
