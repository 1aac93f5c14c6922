# SPDX-License-Identifier: Apache-2.0
# Helpers for fusekit's own tests, benchmarks and examples (not installed).

# Warnings and optimization for fusekit's own programs; never for consumers.
function(fusekit_program_options target)
  target_link_libraries(${target} PRIVATE fusekit::fusekit)
  target_compile_features(${target} PRIVATE cxx_std_20 cuda_std_17)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda -Xcompiler=-Wall,-Wextra>)
endfunction()

# fusekit_add_gtest(NAME SOURCES... [LABELS ...]): a GoogleTest binary whose
# cases ctest runs one by one. GPU cases skip themselves without a device.
function(fusekit_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  fusekit_program_options(${name})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${ARG_LABELS}")
endfunction()
