# SPDX-License-Identifier: Apache-2.0
# cmake -DNVCC=... -DSOURCE=... -DINCLUDE_DIR=... -DWORK_DIR=... -DARCH=90 -P check_tree_ptx.cmake
#
# In the PTX of every deterministic-tree kernel (tree_level_kernel), floating-point
# additions are add.rn (an explicit rounding mode: ptxas never contracts them
# with a multiply into an fma), and there is no plain add.f32/add.f64 and no fma.
# Without this, nvcc fuses the product of an op such as `weigh` into the tree's
# add, and the GPU sum differs from the CPU's in its last bits.
cmake_minimum_required(VERSION 3.24)
foreach(var NVCC SOURCE INCLUDE_DIR WORK_DIR ARCH)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_tree_ptx.cmake: -D${var}=... is required")
  endif()
endforeach()
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
if(kernels LESS 3)
  message(FATAL_ERROR "found ${kernels} tree_level_kernel entries in the PTX; expected at least 3")
endif()
