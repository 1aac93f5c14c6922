# SPDX-License-Identifier: Apache-2.0
# cmake -DOBJDUMP=... -DOBJECTS="a.o" -P check_stream_stores.cmake
# The CPU transform loop stores an output past the caches with non-temporal
# stores (detail/core/stream_store.hpp) in its AVX2 clone (vmovntdq) and on
# the baseline ISA (movntdq), and fences them (sfence) before its threads
# join: without the fence another thread may read what it wrote before the
# stores reach memory.
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn "${object}" RESULT_VARIABLE rc OUTPUT_VARIABLE code
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "objdump failed on ${object}: ${err}")
  endif()
  foreach(instruction vmovntdq movntdq sfence)
    if(NOT code MATCHES "\t${instruction} ")
      if(NOT code MATCHES "\t${instruction}\n")
        message(FATAL_ERROR "${object}: no ${instruction} (the transform loop's stores past the caches)")
      endif()
    endif()
  endforeach()
  message(STATUS "${object}: stream stores in both clones, fenced")
endforeach()
