# Finds Loam's dependencies (Debian packages; scripts/setup-deps installs them).
# Header-only libraries are found as include folders so that the core can be
# cross-compiled with LOAM_HEADER_DIR pointing at them.
function(loam_find_header var header)
  find_path(${var} ${header} HINTS ${LOAM_HEADER_DIR} NO_CMAKE_FIND_ROOT_PATH)
  if(NOT ${var})
    message(FATAL_ERROR "Loam: ${header} not found; run scripts/setup-deps")
  endif()
endfunction()

loam_find_header(LOAM_XXHASH_INCLUDE xxhash.h)
loam_find_header(LOAM_CLI11_INCLUDE CLI/CLI.hpp)
loam_find_header(LOAM_TOMLPP_INCLUDE toml++/toml.h)
loam_find_header(LOAM_STB_INCLUDE stb/stb_image_write.h)

# xxHash used header-only (XXH_INLINE_ALL): no library to cross-compile.
add_library(loam_xxhash INTERFACE)
target_include_directories(loam_xxhash SYSTEM INTERFACE ${LOAM_XXHASH_INCLUDE})
target_compile_definitions(loam_xxhash INTERFACE XXH_INLINE_ALL)

add_library(loam_cli11 INTERFACE)
target_include_directories(loam_cli11 SYSTEM INTERFACE ${LOAM_CLI11_INCLUDE})

# toml++ used header-only (material tables, scene files).
add_library(loam_tomlplusplus INTERFACE)
target_include_directories(loam_tomlplusplus SYSTEM INTERFACE ${LOAM_TOMLPP_INCLUDE})

# stb: PNG writing and reading, implemented once in cmake/stb_impl.cpp; include
# <stb/stb_image_write.h>, <stb/stb_image.h> (declarations) or the header-only
# <stb/stb_easy_font.h>.
add_library(loam_stb STATIC ${CMAKE_CURRENT_LIST_DIR}/stb_impl.cpp)
target_include_directories(loam_stb SYSTEM PUBLIC ${LOAM_STB_INCLUDE})

if(NOT LOAM_CORE_ONLY)
  find_package(doctest REQUIRED)
  find_package(benchmark REQUIRED)
  find_library(LOAM_MPFR mpfr REQUIRED)
  find_library(LOAM_GMP gmp REQUIRED)
  # zstd for save files (loam_save only; the core never links it).
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(LOAM_ZSTD REQUIRED IMPORTED_TARGET libzstd)
  # SQLite for the world database (loam_save only: sim/save/world_db.h).
  pkg_check_modules(LOAM_SQLITE REQUIRED IMPORTED_TARGET sqlite3)
endif()

if(NOT LOAM_CORE_ONLY)
  # Networking: ENet (UDP transport) and FlatBuffers (wire schema, flatc at build time).
  pkg_check_modules(LOAM_ENET REQUIRED IMPORTED_TARGET libenet)
  # Account keys: Ed25519 signatures and random nonces (net/account_key.h).
  pkg_check_modules(LOAM_SODIUM REQUIRED IMPORTED_TARGET libsodium)
  # FlatBuffers is used header-only (generated code + verifier); flatc runs at build time.
  loam_find_header(LOAM_FLATBUFFERS_INCLUDE flatbuffers/flatbuffers.h)
  find_program(LOAM_FLATC flatc REQUIRED)
  find_package(Threads REQUIRED)
endif()

if(NOT LOAM_CORE_ONLY)
  # Client: SDL2 (window, input, gamepads) and Vulkan (loader + headers); shaders are
  # compiled to SPIR-V at build time with glslc.
  pkg_check_modules(LOAM_SDL2 REQUIRED IMPORTED_TARGET sdl2)
  pkg_check_modules(LOAM_VULKAN REQUIRED IMPORTED_TARGET vulkan)
  find_program(LOAM_GLSLC glslc REQUIRED)
  # Audio: PortAudio (live output), libsndfile (WAV), kissfft (spectrograms, spectral
  # measurements in tests), libmysofa (HRTF).
  pkg_check_modules(LOAM_PORTAUDIO REQUIRED IMPORTED_TARGET portaudio-2.0)
  pkg_check_modules(LOAM_SNDFILE REQUIRED IMPORTED_TARGET sndfile)
  pkg_check_modules(LOAM_KISSFFT REQUIRED IMPORTED_TARGET kissfft-float)
  pkg_check_modules(LOAM_MYSOFA REQUIRED IMPORTED_TARGET libmysofa)
endif()

if(NOT LOAM_CORE_ONLY)
  # Operations HTTP (health, readiness, metrics, status) and the Agones SDK client:
  # cpp-httplib, header-only (Debian libcpp-httplib-dev).
  pkg_check_modules(LOAM_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
endif()
