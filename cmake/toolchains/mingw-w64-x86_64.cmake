# Cross build for 64-bit Windows (run under wine by scripts/check-determinism).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
# mingw's own C99 printf (not msvcrt's), so %zu and friends work and are checked.
add_compile_definitions(__USE_MINGW_ANSI_STDIO=1)
