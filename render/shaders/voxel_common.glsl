// Face normals in sim::Face order: -x, +x, -y, +y, -z, +z.
vec3 faceNormal(uint f) {
  vec3 n = vec3(0.0);
  float s = (f & 1u) == 1u ? 1.0 : -1.0;
  if (f < 2u) n.x = s; else if (f < 4u) n.y = s; else n.z = s;
  return n;
}
// The world voxel a face fragment belongs to (inside the surface).
// origin: the chunk's minimum corner in voxels (voxel.vert's vOrigin).
ivec3 voxelOf(vec3 local, vec3 n, ivec3 origin) {
  return ivec3(floor(local - n * 0.5)) + origin;
}
