# SPDX-License-Identifier: Apache-2.0
# cmake -DMODE=package|subdirectory|fetchcontent|example -DSOURCE_DIR=... -DBUILD_DIR=... -DWORK_DIR=...
#       [-DCUDA=ON] [-DCUDA_ARCHITECTURES=90] -P run_consumer.cmake
# Configures, builds and runs tests/consumer against fusekit; for "package",
# installs fusekit from BUILD_DIR into WORK_DIR/prefix first.
foreach(var MODE SOURCE_DIR BUILD_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED CUDA)
  set(CUDA OFF)
endif()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${out}")
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")

# "example": install, copy one installed example folder out, build and run it
# on its own against the installed package, as a user starting from it would.
if(MODE STREQUAL "example")
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
  file(COPY "${WORK_DIR}/prefix/share/fusekit/examples/${EXAMPLE}" DESTINATION "${WORK_DIR}/copy")
  set(example_args "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DCMAKE_BUILD_TYPE=Release)
  if(DEFINED CUDA_ARCHITECTURES)
    list(APPEND example_args -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES})
  endif()
  run(${CMAKE_COMMAND} -S "${WORK_DIR}/copy/${EXAMPLE}" -B "${WORK_DIR}/build" ${example_args})
  run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
  run("${WORK_DIR}/build/${EXAMPLE}")
  return()
endif()
set(args -DFUSEKIT_CONSUME=${MODE} -DFUSEKIT_SOURCE_DIR=${SOURCE_DIR} -DFUSEKIT_CONSUMER_CUDA=${CUDA})
if(DEFINED CUDA_ARCHITECTURES)
  list(APPEND args -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES})
endif()
if(MODE STREQUAL "package")
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
  list(APPEND args "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
endif()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build" -DCMAKE_BUILD_TYPE=Release ${args})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
if(CUDA)
  run("${WORK_DIR}/build/consumer_cuda")
endif()
