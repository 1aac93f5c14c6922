# SPDX-License-Identifier: Apache-2.0
# cmake -DNVCC=... -DSOURCE=... -DINCLUDE_DIR=... -DWORK_DIR=... -DARCH=90 -DMAX=3 -DALLOWED=regex -P check_entries.cmake
#
# A call compiles only the algorithm it asks for: the PTX of SOURCE has at
# most MAX kernel entries, and each one's name matches ALLOWED. For
# bench/compile/sum_fusekit.cu (`fusekit::sum(fusekit::cuda{s}, x)`, the
# default algorithm) they are the deterministic tree's level kernel and the
# store of an empty sum: no atomic kernel, no cub::DeviceReduce (not even
# CUB's EmptyKernel, which every translation unit that includes CUB's
# device-wide headers has), no staging.
cmake_minimum_required(VERSION 3.24)
foreach(var NVCC SOURCE INCLUDE_DIR WORK_DIR ARCH MAX ALLOWED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_entries.cmake: -D${var}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")
get_filename_component(stem "${SOURCE}" NAME_WE)
execute_process(COMMAND "${NVCC}" -std=c++17 -O3 -I${INCLUDE_DIR} -arch=sm_${ARCH} -ptx "${SOURCE}"
                        -o "${WORK_DIR}/${stem}.ptx"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -ptx failed:\n${err}")
endif()
file(STRINGS "${WORK_DIR}/${stem}.ptx" entries REGEX "\\.entry ")
list(LENGTH entries count)
set(bad "")
foreach(entry IN LISTS entries)
  string(REGEX REPLACE ".*\\.entry ([A-Za-z0-9_]+).*" "\\1" name "${entry}")
  if(NOT name MATCHES "${ALLOWED}")
    string(APPEND bad "\n  ${name}")
  endif()
endforeach()
if(count GREATER MAX OR NOT bad STREQUAL "")
  message(FATAL_ERROR "${SOURCE}: ${count} kernel entries (at most ${MAX}); not asked for:${bad}")
endif()
message(STATUS "PASS: ${count} kernel entries, each one asked for")
