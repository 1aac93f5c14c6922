# SPDX-License-Identifier: Apache-2.0
# cmake -DNM=... -DOBJDUMP=... -DOBJECTS="a.o;b.o" -P check_host_tree.cmake
# In each object (tests/codegen/host_tree.cpp under one set of flags), every
# AVX2 clone of the deterministic tree's host vector code
# (detail/team/cpu_columns.hpp: cpu_column_reduce_avx2, cpu_combine_pairs_avx2;
# detail/reduce/cpu_exact_tiles.hpp: cpu_exact_sum_avx2, the integer tiles' sums)
# must add in packed 32-byte registers (vadd*/vpadd* on %ymm) and never fuse a multiply into an
# add (no vfmadd/vfmsub/vfnmadd). The column passes over arrays of float,
# double and float into double, and the exact sums, must also read no vector
# from the stack: their rows go from the array into registers (a vector
# assembled through the stack costs a failed store forwarding per load, half
# the read bandwidth and less). The column passes over arrays of float,
# double and float into double prefetch their rows into L2 and into L1
# (prefetcht2, prefetcht0), and float into double widens each vector in one
# instruction from memory (vcvtps2pd from an address into a %ymm register).
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND "${NM}" --defined-only "${object}" RESULT_VARIABLE rc OUTPUT_VARIABLE symbols ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${object}: ${err}")
  endif()
  # Mangled names (fusekit::detail::team:: and ::reduce::, the inline
  # namespaces of team/ and reduce/): no list separators or brackets in them.
  string(REGEX MATCHALL "_ZN7fusekit6detail4team(22cpu_column_reduce|22cpu_combine_pairs)_avx2[A-Za-z0-9_.]*|_ZN7fusekit6detail6reduce18cpu_exact_sum_avx2[A-Za-z0-9_.]*" functions "${symbols}")
  list(REMOVE_DUPLICATES functions)
  list(LENGTH functions found)
  # A column pass for each of f32, f64 and f32 in f64, an exact sum for each
  # of i32, i64 and u8 into 64 bits, and a pairwise step for each accumulator
  # type (f32 in f64 shares double's, the integers share theirs).
  if(found LESS 9)
    message(FATAL_ERROR "${object}: ${found} AVX2 tree functions, expected at least 9 (inlined away?)")
  endif()
  foreach(kind 4team22cpu_column_reduce 6reduce18cpu_exact_sum)
    if(NOT functions MATCHES "_ZN7fusekit6detail${kind}_avx2")
      message(FATAL_ERROR "${object}: no AVX2 function ${kind} (inlined away?)")
    endif()
  endforeach()
  foreach(function IN LISTS functions)
    execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn "--disassemble=${function}" "${object}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE code ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "objdump failed on ${object}: ${err}")
    endif()
    string(SUBSTRING "${function}" 0 120 name)
    if(NOT code MATCHES "\tv(p)?add[a-z]* +[^\n]*%ymm")
      message(FATAL_ERROR "${object}: no packed 32-byte add in ${name}...\n${code}")
    endif()
    # array_source<float, float>, <double, double>, <double, float>; every
    # exact sum
    if(((function MATCHES "^_ZN7fusekit6detail4team22cpu_column_reduce_avx2" AND
         function MATCHES "12array_sourceI(ff|dd|df)E") OR
        function MATCHES "^_ZN7fusekit6detail6reduce18cpu_exact_sum_avx2") AND
       code MATCHES "\\((%rsp|%rbp)\\),%ymm")
      string(REGEX MATCH "[^\n]*\\((%rsp|%rbp)\\),%ymm[^\n]*" line "${code}")
      message(FATAL_ERROR "${object}: a vector read from the stack in ${name}...\n  ${line}")
    endif()
    # array_source<float, float>, <double, double>, <double, float>: the
    # row-by-row pass reads each line ahead into L2 (prefetcht2) and into L1
    # (prefetcht0).
    if(function MATCHES "^_ZN7fusekit6detail4team22cpu_column_reduce_avx2" AND
       function MATCHES "12array_sourceI(ff|dd|df)E")
      foreach(hint t0 t2)
        if(NOT code MATCHES "\tprefetch${hint} ")
          message(FATAL_ERROR "${object}: no prefetch${hint} in the column pass ${name}...\n${code}")
        endif()
      endforeach()
    endif()
    # array_source<double, float>: each row vector widened from memory.
    if(function MATCHES "^_ZN7fusekit6detail4team22cpu_column_reduce_avx2" AND
       function MATCHES "12array_sourceIdfE" AND NOT code MATCHES "\tvcvtps2pd +(-?0x[0-9a-f]+)?\\(%[a-z0-9]+(,%[a-z0-9]+,[1248])?\\),%ymm")
      message(FATAL_ERROR "${object}: float into double not widened from memory into %ymm in ${name}...\n${code}")
    endif()
    if(code MATCHES "vf(n)?m(add|sub)")
      string(REGEX MATCH "[^\n]*vf(n)?m(add|sub)[^\n]*" line "${code}")
      message(FATAL_ERROR "${object}: a fused multiply-add in the tree's additions, ${name}...\n  ${line}")
    endif()
  endforeach()
  message(STATUS "${object}: ${found} AVX2 tree functions, each with packed 32-byte adds and no FMA")
endforeach()
