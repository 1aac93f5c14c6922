# SPDX-License-Identifier: Apache-2.0
# fusekit_find_cccl(): CCCL::CCCL, the headers fusekit stands on (libcu++,
# CUB, Thrust), for fusekit's own project and for its installed package.
#   - With the CUDA toolkit found (CUDAToolkit_FOUND): the toolkit's CCCL package.
#   - Else, with FUSEKIT_CCCL_INCLUDE_DIR (a folder holding cuda/std/span): an
#     INTERFACE target over that folder. The nvidia-cuda-cccl wheel's headers
#     are in <site-packages>/nvidia/cu13/include/cccl. (Its own CMake package,
#     nvidia/cu13/cccl/lib/cmake/cccl in 13.3, looks for them in cccl/include
#     and fails.)
#   - Else CCCL's own CMake package (find_package(CCCL CONFIG), CCCL_DIR).
# Without any, CCCL::CCCL stays undefined and FUSEKIT_CCCL_WHY says what to do.
macro(fusekit_find_cccl)
  set(FUSEKIT_CCCL_INCLUDE_DIR "${FUSEKIT_CCCL_INCLUDE_DIR}" CACHE PATH
      "CCCL's headers (a folder with cuda/std/span), for the CPU backend where the CUDA toolkit is not found")
  set(FUSEKIT_CCCL_WHY "")
  if(TARGET CCCL::CCCL)
  elseif(CUDAToolkit_FOUND)
    find_package(CCCL CONFIG REQUIRED HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake")
  elseif(FUSEKIT_CCCL_INCLUDE_DIR)
    if(NOT EXISTS "${FUSEKIT_CCCL_INCLUDE_DIR}/cuda/std/span")
      message(FATAL_ERROR "FUSEKIT_CCCL_INCLUDE_DIR=${FUSEKIT_CCCL_INCLUDE_DIR} holds no cuda/std/span: give the "
                          "folder that holds CCCL's cuda/, cub/ and thrust/ (the nvidia-cuda-cccl wheel's "
                          "<site-packages>/nvidia/cu13/include/cccl)")
    endif()
    add_library(CCCL::CCCL INTERFACE IMPORTED)
    set_target_properties(CCCL::CCCL PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${FUSEKIT_CCCL_INCLUDE_DIR}")
    message(STATUS "fusekit: no CUDA toolkit; the CPU backend with CCCL's headers in ${FUSEKIT_CCCL_INCLUDE_DIR}")
  else()
    find_package(CCCL CONFIG QUIET)
    if(CCCL_FOUND)
      message(STATUS "fusekit: no CUDA toolkit; the CPU backend with CCCL from ${CCCL_DIR}")
    else()
      set(FUSEKIT_CCCL_WHY
          "fusekit needs CCCL's headers: install the CUDA toolkit, or give CCCL's CMake package (-DCCCL_DIR=...) or "
          "a folder of its headers (-DFUSEKIT_CCCL_INCLUDE_DIR=..., e.g. pip install nvidia-cuda-cccl, then "
          "<site-packages>/nvidia/cu13/include/cccl)")
    endif()
  endif()
endmacro()
