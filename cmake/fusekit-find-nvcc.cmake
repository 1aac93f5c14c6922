# SPDX-License-Identifier: Apache-2.0
# fusekit_find_nvcc(): sets CMAKE_CUDA_COMPILER to nvcc from PATH, CUDA_PATH or
# the toolkit's usual home (/usr/local/cuda), unless CMAKE_CUDA_COMPILER or
# CUDACXX already names one; before enable_language(CUDA) or check_language(CUDA).
# For fusekit's own project and its Python package (python/CMakeLists.txt).
macro(fusekit_find_nvcc)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(FUSEKIT_NVCC nvcc PATHS /usr/local/cuda/bin ENV CUDA_PATH PATH_SUFFIXES bin)
    if(FUSEKIT_NVCC)
      set(CMAKE_CUDA_COMPILER "${FUSEKIT_NVCC}")
    endif()
  endif()
endmacro()
