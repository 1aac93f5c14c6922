# SPDX-License-Identifier: Apache-2.0
# cmake -DSOURCE_DIR=... -DWORK_DIR=... -P find_nccl_wheel.cmake
#
# cmake/fusekit-find-nccl.cmake finds NCCL where the GPU image has it: the pip
# wheel nvidia-nccl-cu13 of python3, laid out as the wheel is
# (nvidia/nccl/include/nccl.h, nvidia/nccl/lib/libnccl.so.2 and no libnccl.so),
# with nothing in the toolkit's folders and no NCCL_ROOT.
foreach(var SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "find_nccl_wheel.cmake: -D${var}=... is required")
  endif()
endforeach()
set(site "${WORK_DIR}/site")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${site}/nvidia/nccl/include" "${site}/nvidia/nccl/lib")
file(WRITE "${site}/nvidia/nccl/include/nccl.h" "/* a wheel's header */\n")
file(WRITE "${site}/nvidia/nccl/lib/libnccl.so.2" "")
set(ENV{PYTHONPATH} "${site}")
unset(ENV{NCCL_ROOT})
set(CUDAToolkit_INCLUDE_DIRS "${WORK_DIR}/no-toolkit/include")
set(CUDAToolkit_LIBRARY_DIR "${WORK_DIR}/no-toolkit/lib")
include("${SOURCE_DIR}/cmake/fusekit-find-nccl.cmake")
fusekit_find_nccl()
message(STATUS "nccl.h: ${FUSEKIT_NCCL_INCLUDE_DIR}; libnccl: ${FUSEKIT_NCCL_LIBRARY}; why not: ${FUSEKIT_NCCL_WHY}")
if(NOT FUSEKIT_NCCL_INCLUDE_DIR STREQUAL "${site}/nvidia/nccl/include")
  message(FATAL_ERROR "nccl.h not found in the wheel: ${FUSEKIT_NCCL_INCLUDE_DIR}")
endif()
if(NOT FUSEKIT_NCCL_LIBRARY STREQUAL "${site}/nvidia/nccl/lib/libnccl.so.2")
  message(FATAL_ERROR "libnccl.so.2 not found in the wheel: ${FUSEKIT_NCCL_LIBRARY}")
endif()
