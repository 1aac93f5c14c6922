# SPDX-License-Identifier: Apache-2.0
# cmake -DNVCC=... -DSOURCES="a.cu;b.cu" -DINCLUDE_DIR=... -DFORBIDDEN=regex -P check_includes.cmake
#
# A GPU call parses only what it asks for: no header that SOURCES reach
# (nvcc -M, every file the preprocessor opens) matches FORBIDDEN. For the
# default sum and a transform on fusekit::cuda: not the CPU's backends and
# their threads, and not CUB's device-wide algorithms (run_to_run.cuh's).
cmake_minimum_required(VERSION 3.24)
foreach(var NVCC SOURCES INCLUDE_DIR FORBIDDEN)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_includes.cmake: -D${var}=... is required")
  endif()
endforeach()
set(bad "")
foreach(source IN LISTS SOURCES)
  execute_process(COMMAND "${NVCC}" -std=c++17 -I${INCLUDE_DIR} -arch=sm_90 -M "${source}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc -M ${source} failed:\n${err}")
  endif()
  string(REGEX MATCHALL "[^ \t\r\n\\\\]+" files "${deps}")
  list(LENGTH files count)
  if(count LESS 20)
    message(FATAL_ERROR "nvcc -M ${source}: ${count} files, too few to be a dependency list")
  endif()
  foreach(file IN LISTS files)
    if(file MATCHES "${FORBIDDEN}")
      string(APPEND bad "\n  ${source}: ${file}")
    endif()
  endforeach()
endforeach()
if(NOT bad STREQUAL "")
  message(FATAL_ERROR "headers a GPU call did not ask for:${bad}")
endif()
message(STATUS "PASS: none of the headers matches ${FORBIDDEN}")
