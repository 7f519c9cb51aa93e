// sim/gen: world = generateWorld(scene, seed, kGeneratorVersion). Scene files
// (scene.h), coherent noise (noise.h), scatter features and structures (scatter.h)
// and the generator itself (generator.h). Each chunk is a function of the scene, the
// seed and its coordinates only: thread count and chunk order never change a bit.
//
// May use: sim/world (and sim/core). Knows nothing of the systems or the step.
// Library: loam_gen.
#pragma once
#include "sim/gen/generator.h"
#include "sim/gen/generator_version.h"
#include "sim/gen/noise.h"
#include "sim/gen/scatter.h"
#include "sim/gen/scene.h"
