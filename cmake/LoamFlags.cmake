# Compile flags every Loam target uses, carried by the interface target loam_flags.
# The floating-point flags are part of the determinism contract (DESIGN.md): no
# contraction into FMA, no fast-math, SSE2 rather than x87 on 32-bit x86, and no
# errno side path (which makes GCC call libm's sqrt for negative inputs).
# Warnings are errors in the presets, CI and scripts/check-determinism
# (CMAKE_COMPILE_WARNING_AS_ERROR), not here: a packager's own flags (-O3
# -march=native) meet warnings in system headers that no Loam commit can fix.
add_library(loam_flags INTERFACE)
target_compile_options(loam_flags INTERFACE
  -Wall -Wextra -Wpedantic
  -ffp-contract=off -fno-fast-math -fno-math-errno)
# GCC 12's SLP vectoriser was seen forming FMA instructions despite -ffp-contract=off
# when the target has FMA (it changed double atan results under -march=native).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(loam_flags INTERFACE -fno-tree-slp-vectorize)
endif()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(i.86|x86)$")
  target_compile_options(loam_flags INTERFACE -msse2 -mfpmath=sse)
endif()

option(LOAM_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(LOAM_SANITIZE)
  target_compile_options(loam_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(loam_flags INTERFACE -fsanitize=address,undefined)
  # GCC 12's -Warray-bounds misfires on vector::resize under the sanitizers, and its
  # -Wmaybe-uninitialized inside libstdc++'s std::regex (scene and ops HTTP tests).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(loam_flags INTERFACE -Wno-array-bounds -Wno-maybe-uninitialized)
  endif()
endif()
