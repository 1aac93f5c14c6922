# SPDX-License-Identifier: Apache-2.0
# cmake -DNVCC=... -DSOURCE=... -DINCLUDE_DIR=... -DWORK_DIR=... -DARCH=90 -P check_ptx.cmake
#
# Static checks of the generated code, which need no GPU:
#   * PTX of the fused float kernel has 16-byte global loads (ld.global[.nc].v4)
#     and stores (st.global.v4);
#   * no local memory in the PTX, and ptxas reports no stack frame and no spills.
foreach(var NVCC SOURCE INCLUDE_DIR WORK_DIR ARCH)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_ptx.cmake: -D${var}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")
set(common -std=c++17 -O3 -I${INCLUDE_DIR} -arch=sm_${ARCH})

execute_process(COMMAND "${NVCC}" ${common} -ptx "${SOURCE}" -o "${WORK_DIR}/fused.ptx"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -ptx failed:\n${err}")
endif()
file(READ "${WORK_DIR}/fused.ptx" ptx)

# Find the float kernel (mangled input pack "JffE": float, float; the kernel
# takes them as const float*) and
# take its body up to the next .entry. PTX is full of ';' and '[', so the text
# is searched with string(FIND), never split into CMake lists.
string(REGEX MATCH "\\.entry [A-Za-z0-9_]*tanh_activate[A-Za-z0-9_]*JffE[A-Za-z0-9_]*" float_entry "${ptx}")
if(NOT float_entry)
  message(FATAL_ERROR "no fused float kernel in the PTX")
endif()
string(FIND "${ptx}" "${float_entry}" begin)
string(SUBSTRING "${ptx}" ${begin} -1 body)
string(LENGTH "${float_entry}" skip)
string(SUBSTRING "${body}" ${skip} -1 rest)
string(FIND "${rest}" ".entry " next)
if(next GREATER -1)
  string(SUBSTRING "${rest}" 0 ${next} rest)
endif()
string(REGEX MATCHALL "ld\\.global(\\.nc)?\\.v4\\.[a-z0-9]+" v4_loads "${rest}")
string(REGEX MATCHALL "st\\.global\\.v4\\.[a-z0-9]+" v4_stores "${rest}")
list(LENGTH v4_loads n_loads)
list(LENGTH v4_stores n_stores)
message(STATUS "${float_entry}: ${n_loads} 16-byte loads, ${n_stores} 16-byte stores")
if(n_loads LESS 2)
  message(FATAL_ERROR "the fused float kernel has ${n_loads} 16-byte global loads; expected one per input")
endif()
if(n_stores LESS 1)
  message(FATAL_ERROR "the fused float kernel has no 16-byte global store")
endif()
if(ptx MATCHES "(ld|st)\\.local")
  message(FATAL_ERROR "the PTX uses local memory")
endif()

execute_process(COMMAND "${NVCC}" ${common} -cubin -Xptxas -v "${SOURCE}" -o "${WORK_DIR}/fused.cubin"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE report)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -cubin failed:\n${report}")
endif()
string(REGEX MATCHALL "[0-9]+ bytes stack frame, [0-9]+ bytes spill stores, [0-9]+ bytes spill loads" frames "${report}")
string(REGEX MATCHALL "Used [0-9]+ registers" registers "${report}")
message(STATUS "ptxas: ${frames}; ${registers}")
list(LENGTH frames n_frames)
if(n_frames EQUAL 0)
  message(FATAL_ERROR "no ptxas report found:\n${report}")
endif()
foreach(f IN LISTS frames)
  if(NOT f STREQUAL "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads")
    message(FATAL_ERROR "ptxas reports local memory: ${f}\n${report}")
  endif()
endforeach()
# The registers, reported (no ceiling: they move with every nvcc; the
# checks above hold what is a property of the code).
foreach(signature "JffE" "JhfE")
  if(report MATCHES "entry function '[^']*elementwise_kernel[^']*${signature}[^']*' for 'sm_[0-9]+'[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*Used ([0-9]+) registers")
    message(STATUS "fused layer ${signature}: ${CMAKE_MATCH_1} registers")
  endif()
endforeach()
