# SPDX-License-Identifier: Apache-2.0
# The library's targets, fusekit::fusekit and (with the CUDA toolkit)
# fusekit::train, over the headers in ../include: included by the project's
# CMakeLists.txt and by the Python package's (python/CMakeLists.txt, which
# reaches this folder as python/cpp/cmake, in the repository and in its sdist).
# Reads fusekit_programs (ON: fusekit's own programs, which need the toolkit)
# and FUSEKIT_ENABLE_OPENMP; sets FUSEKIT_USES_OPENMP.

# The CPU backend (fusekit.hpp) needs only CCCL's headers: from the CUDA
# toolkit when it is there, else CCCL's own CMake package (CCCL_DIR), or a
# folder of CCCL's headers (FUSEKIT_CCCL_INCLUDE_DIR; cmake/fusekit-find-cccl.cmake).
# fusekit's own programs are CUDA programs, and need the toolkit.
if(fusekit_programs)
  find_package(CUDAToolkit REQUIRED)
else()
  find_package(CUDAToolkit QUIET)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/fusekit-find-cccl.cmake)
fusekit_find_cccl()
if(NOT TARGET CCCL::CCCL)
  message(FATAL_ERROR "${FUSEKIT_CCCL_WHY}")
endif()
if(FUSEKIT_ENABLE_OPENMP)
  find_package(OpenMP COMPONENTS CXX)
endif()
set(FUSEKIT_USES_OPENMP ${OpenMP_CXX_FOUND})
# The CPU backend's helper threads (std::thread; detail/core/cpu_pool.hpp).
find_package(Threads REQUIRED)

include(GNUInstallDirs)

# The library: headers only. No code-generation flags are put on consumers;
# architectures, optimization and fast-math stay the consumer's choice.
get_filename_component(fusekit_include_dir "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)
add_library(fusekit INTERFACE)
add_library(fusekit::fusekit ALIAS fusekit)
target_include_directories(fusekit INTERFACE
  $<BUILD_INTERFACE:${fusekit_include_dir}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(fusekit INTERFACE cxx_std_17)
# The CUDA runtime where the consumer has the toolkit (its headers give the
# half types and fusekit::cuda); a CPU-only consumer without it links CCCL alone.
target_link_libraries(fusekit INTERFACE CCCL::CCCL $<INSTALL_INTERFACE:$<TARGET_NAME_IF_EXISTS:CUDA::cudart>>)
if(CUDAToolkit_FOUND)
  target_link_libraries(fusekit INTERFACE $<BUILD_INTERFACE:CUDA::cudart>)
endif()
target_link_libraries(fusekit INTERFACE Threads::Threads)
if(FUSEKIT_USES_OPENMP)
  # OpenMP (its `omp simd` pragmas vectorize the CPU loops) covers .cpp files;
  # nvcc hands the flag to its host compiler.
  target_link_libraries(fusekit INTERFACE OpenMP::OpenMP_CXX)
  target_compile_options(fusekit INTERFACE
    "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:SHELL:-Xcompiler=${OpenMP_CXX_FLAGS}>")
endif()
# CUDA 17 as well where the including project compiles CUDA (a CUDA feature on
# a project without the CUDA language is a configure error). The installed
# config file makes the same check in the consumer's project.
get_property(fusekit_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if("CUDA" IN_LIST fusekit_languages)
  target_compile_features(fusekit INTERFACE $<BUILD_INTERFACE:cuda_std_17>)
endif()

# The trainer's GPU path (fusekit/train.cuh) uses cuBLAS: its own target, so
# users of the other headers do not link cuBLAS.
if(CUDAToolkit_FOUND)
  add_library(fusekit_train INTERFACE)
  add_library(fusekit::train ALIAS fusekit_train)
  set_target_properties(fusekit_train PROPERTIES EXPORT_NAME train)
  target_link_libraries(fusekit_train INTERFACE fusekit CUDA::cublas)
endif()
