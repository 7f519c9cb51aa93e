#version 450
#extension GL_GOOGLE_include_directive : require
#define LOAM_HANDOVER
#include "voxel_surface.glsl"
