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

# fusekit_add_gtest(NAME SOURCES... [LABELS ...] [SUFFIX .variant]): a GoogleTest
# binary whose cases ctest runs one by one (named Suite.Case, plus SUFFIX for a
# second build of the same sources). GPU cases skip themselves without a device.
function(fusekit_add_gtest name)
  cmake_parse_arguments(ARG "" "SUFFIX" "SOURCES;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  fusekit_program_options(${name})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_SUFFIX "${ARG_SUFFIX}" PROPERTIES LABELS "${ARG_LABELS}")
  fusekit_test_program(${name})
endfunction()

# fusekit_test_program(TARGET): a program the `test` workflow runs, built by
# the target fusekit_tests (the build preset "test" builds only that).
function(fusekit_test_program target)
  set_property(GLOBAL APPEND PROPERTY FUSEKIT_TEST_PROGRAMS ${target})
endfunction()

# GoogleTest and Google Benchmark: the installed packages, or, when
# FUSEKIT_DEPS_DIR names a folder made by scripts/gpu/bundle.sh, built from the
# sources in it (a bare GPU machine has neither package nor network).
set(FUSEKIT_DEPS_DIR "" CACHE PATH
  "Folder with googletest/ and benchmark/ sources to build instead of the installed packages (scripts/gpu/bundle.sh)")

function(fusekit_bundled_source name)
  if(NOT EXISTS "${FUSEKIT_DEPS_DIR}/${name}/CMakeLists.txt")
    message(FATAL_ERROR "FUSEKIT_DEPS_DIR=${FUSEKIT_DEPS_DIR} has no ${name}/ sources; make the folder with "
                        "scripts/gpu/bundle.sh")
  endif()
  add_subdirectory("${FUSEKIT_DEPS_DIR}/${name}" "${PROJECT_BINARY_DIR}/_deps/${name}" EXCLUDE_FROM_ALL)
endfunction()

macro(fusekit_require_googletest)
  if(FUSEKIT_DEPS_DIR)
    if(NOT TARGET GTest::gtest)
      set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
      set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
      fusekit_bundled_source(googletest)
    endif()
  else()
    find_package(GTest)
    if(NOT GTest_FOUND)
      message(FATAL_ERROR "GoogleTest not found. Install it (bash scripts/tools/install_deps.sh installs libgtest-dev), "
                          "or build it from source: -DFUSEKIT_DEPS_DIR=<folder made by scripts/gpu/bundle.sh>")
    endif()
  endif()
endmacro()

macro(fusekit_require_benchmark)
  if(FUSEKIT_DEPS_DIR)
    if(NOT TARGET benchmark::benchmark)
      foreach(option BENCHMARK_ENABLE_TESTING BENCHMARK_ENABLE_GTEST_TESTS BENCHMARK_ENABLE_INSTALL
                     BENCHMARK_INSTALL_DOCS BENCHMARK_ENABLE_WERROR)
        set(${option} OFF CACHE BOOL "" FORCE)
      endforeach()
      fusekit_bundled_source(benchmark)
    endif()
  else()
    find_package(benchmark)
    if(NOT benchmark_FOUND)
      message(FATAL_ERROR "Google Benchmark not found. Install it (bash scripts/tools/install_deps.sh installs "
                          "libbenchmark-dev), build without benchmarks (-DFUSEKIT_BUILD_BENCHMARKS=OFF), or build it "
                          "from source: -DFUSEKIT_DEPS_DIR=<folder made by scripts/gpu/bundle.sh>")
    endif()
  endif()
endmacro()
