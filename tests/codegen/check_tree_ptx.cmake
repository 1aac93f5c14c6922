# SPDX-License-Identifier: Apache-2.0
# cmake -DNVCC=... -DSOURCE=... -DINCLUDE_DIR=... -DWORK_DIR=... -DARCH=90 -P check_tree_ptx.cmake
#
# In the PTX of every deterministic-tree kernel (tree_level_kernel) that sums
# floating-point values, the additions are add.rn (an explicit rounding mode:
# ptxas never contracts them with a multiply into an fma), and there is no plain
# add.f32/add.f64 and no fma. Without this, nvcc fuses the product of an op such
# as `weigh` into the tree's add, and the GPU sum differs from the CPU's in its
# last bits.
#
# In the sm_90 cubin, every tree_level_kernel uses at most MAX_REGISTERS
# registers (default 64: the cap its __launch_bounds__ sets, 4 blocks of 256
# threads per SM) and has no stack frame and no spills. A wider accumulator
# that keeps all 32 of a lane's loads in registers reached 154.
cmake_minimum_required(VERSION 3.24)
foreach(var NVCC SOURCE INCLUDE_DIR WORK_DIR ARCH)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_tree_ptx.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED MAX_REGISTERS)
  set(MAX_REGISTERS 64)
endif()
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND "${NVCC}" -std=c++17 -O3 -I${INCLUDE_DIR} -arch=sm_${ARCH} -ptx "${SOURCE}"
                        -o "${WORK_DIR}/tree.ptx"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -ptx failed:\n${err}")
endif()
file(READ "${WORK_DIR}/tree.ptx" ptx)

# Walk the entries; PTX is searched with string(FIND), never split into CMake lists.
set(kernels 0)
set(float_sums 0)
set(rest "${ptx}")
while(TRUE)
  string(FIND "${rest}" ".entry " at)
  if(at EQUAL -1)
    break()
  endif()
  math(EXPR at "${at} + 7")
  string(SUBSTRING "${rest}" ${at} -1 rest)
  string(FIND "${rest}" ".entry " next)
  if(next GREATER -1)
    string(SUBSTRING "${rest}" 0 ${next} body)
  else()
    set(body "${rest}")
  endif()
  string(REGEX MATCH "^[A-Za-z0-9_]+" name "${body}")
  if(NOT name MATCHES "tree_level_kernel")
    continue()
  endif()
  math(EXPR kernels "${kernels} + 1")
  # Accumulator f or d (the first template argument), op plus: a floating-point sum.
  if(NOT name MATCHES "tree_level_kernelI[fd].*4plus")
    continue()
  endif()
  math(EXPR float_sums "${float_sums} + 1")
  string(REGEX MATCHALL "add\\.rn\\.f(32|64)" rounded "${body}")
  string(REGEX MATCHALL "add\\.f(32|64)" plain "${body}")
  string(REGEX MATCHALL "fma\\.rn\\.f(32|64)" fmas "${body}")
  list(LENGTH rounded n_rounded)
  list(LENGTH plain n_plain)
  list(LENGTH fmas n_fmas)
  message(STATUS "${name}: ${n_rounded} add.rn, ${n_plain} plain add, ${n_fmas} fma")
  if(n_rounded EQUAL 0)
    message(FATAL_ERROR "${name}: no add.rn; the tree's additions must carry an explicit rounding mode")
  endif()
  if(n_plain GREATER 0 OR n_fmas GREATER 0)
    message(FATAL_ERROR "${name}: ${n_plain} plain adds and ${n_fmas} fmas; ptxas may fuse them with the op's product")
  endif()
endwhile()
if(kernels LESS 6 OR float_sums LESS 3)
  message(FATAL_ERROR "found ${kernels} tree_level_kernel entries (${float_sums} floating-point sums) in the PTX; "
                      "expected at least 6 (3)")
endif()

# Registers and local memory, per entry, from ptxas's report on the cubin.
execute_process(COMMAND "${NVCC}" -std=c++17 -O3 -I${INCLUDE_DIR} -arch=sm_${ARCH} -cubin -Xptxas -v "${SOURCE}"
                        -o "${WORK_DIR}/tree.cubin"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE report)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -cubin failed:\n${report}")
endif()
string(REPLACE ";" "," report "${report}")
string(REPLACE "\n" ";" lines "${report}")
set(entry "")
set(checked 0)
foreach(line IN LISTS lines)
  if(line MATCHES "Compiling entry function '([A-Za-z0-9_]+)'")
    set(entry "${CMAKE_MATCH_1}")
  elseif(entry MATCHES "tree_level_kernel" AND line MATCHES "([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores")
    if(NOT CMAKE_MATCH_1 EQUAL 0 OR NOT CMAKE_MATCH_2 EQUAL 0)
      message(FATAL_ERROR "${entry}: ${line}")
    endif()
  elseif(entry MATCHES "tree_level_kernel" AND line MATCHES "Used ([0-9]+) registers")
    message(STATUS "${entry}: ${CMAKE_MATCH_1} registers (cap ${MAX_REGISTERS})")
    if(CMAKE_MATCH_1 GREATER MAX_REGISTERS)
      message(FATAL_ERROR "${entry} uses ${CMAKE_MATCH_1} registers, more than ${MAX_REGISTERS}")
    endif()
    math(EXPR checked "${checked} + 1")
    set(entry "")
  endif()
endforeach()
if(NOT checked EQUAL kernels)
  message(FATAL_ERROR "ptxas reported registers for ${checked} tree kernels; the PTX has ${kernels}")
endif()
