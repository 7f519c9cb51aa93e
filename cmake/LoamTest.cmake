# loam_add_test(NAME n LABEL l SOURCES ... LIBS ... [TIMEOUT s])
# One doctest executable per suite, registered with ctest under one label
# (unit, determinism, net or slow: see README for which command runs which).
add_library(loam_doctest_main OBJECT ${CMAKE_SOURCE_DIR}/tests/doctest_main.cpp)
target_link_libraries(loam_doctest_main PUBLIC doctest::doctest loam_flags)

function(loam_add_test)
  cmake_parse_arguments(T "" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS;ARGS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES} $<TARGET_OBJECTS:loam_doctest_main>)
  target_link_libraries(${T_NAME} PRIVATE doctest::doctest loam_flags ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${CMAKE_SOURCE_DIR})
  # Absolute path of the checkout, for tests that read scenes and data files.
  target_compile_definitions(${T_NAME} PRIVATE LOAM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  if(LOAM_SANITIZE)  # everything costs a few times more (tests/support/sanitizer_scale.h)
    math(EXPR T_TIMEOUT "${T_TIMEOUT} * 3")
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT})
endfunction()
