# SPDX-License-Identifier: Apache-2.0
# cmake -DNM=... -DOBJDUMP=... -DOBJECTS="a.o;prog;..." -P check_dispatch.cmake
# Every AVX2 entry of the CPU dispatch (detail/core/cpu_parallel.hpp:
# call_avx2, call_avx512, call_avx2_without_fma) holds its loop, compiled for AVX2 (VEX
# instructions, no call or jump to the lambda's operator(), mangled ...clEv),
# rather than a jump to a copy of the loop compiled for the baseline ISA. In a .cu file nvcc's front end drops
# always_inline from lambdas; without `flatten` the fused layer ran there 4x
# slower than the same call in a .cpp file.
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND "${NM}" -S --defined-only "${object}" RESULT_VARIABLE rc OUTPUT_VARIABLE symbols
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${object}: ${err}")
  endif()
  string(REGEX MATCHALL "[0-9a-f]+ [0-9a-f]+ [TtWw] _ZN7fusekit6detail4core(9call_avx2|11call_avx512|21call_avx2_without_fma)I[A-Za-z0-9_.]*"
         entries "${symbols}")
  list(LENGTH entries found)
  if(found EQUAL 0)
    message(FATAL_ERROR "${object}: no AVX2 dispatch entry (call_avx2) found")
  endif()
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE "^([0-9a-f]+) ([0-9a-f]+) .*" "\\1;\\2" range "${entry}")
    list(GET range 0 start)
    list(GET range 1 size)
    math(EXPR stop "0x${start} + 0x${size}" OUTPUT_FORMAT HEXADECIMAL)
    string(REGEX REPLACE "^[0-9a-f]+ [0-9a-f]+ [TtWw] " "" symbol "${entry}")
    # An object file's sections each start at 0, so an address range is
    # ambiguous there: it is disassembled by symbol; a program by its range.
    if(object MATCHES "\\.o$")
      set(where "--disassemble=${symbol}")
    else()
      set(where "--start-address=0x${start}" "--stop-address=${stop}")
    endif()
    execute_process(COMMAND "${OBJDUMP}" -d -r --no-show-raw-insn ${where} "${object}" RESULT_VARIABLE rc
                    OUTPUT_VARIABLE code ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "objdump failed on ${object}: ${err}")
    endif()
    # A call or jump to the lambda: to its address in a program, through a
    # relocation in an object file.
    if(code MATCHES "\t(call|jmp) +[0-9a-f]+ <[^>+\n]*clEv>" OR code MATCHES "R_X86_64_[A-Z0-9]+\t[^\n]*clEv"
       OR NOT code MATCHES "\tv[a-z0-9]+ ")
      string(SUBSTRING "${symbol}" 0 160 name)
      message(FATAL_ERROR "${object}: the AVX2 entry ${name}... (${size} bytes) holds no AVX2 code: its loop was "
                          "not inlined into it\n${code}")
    endif()
  endforeach()
  message(STATUS "${object}: ${found} AVX2 dispatch entries, each with its loop")
endforeach()
