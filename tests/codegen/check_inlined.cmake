# SPDX-License-Identifier: Apache-2.0
# cmake -DNM=... -DOBJECTS="a.o;prog;..." -P check_inlined.cmake
# Fails when an object file or program defines an out-of-line copy of a fusekit
# functor, tanh or conversion: those must be inlined into the CPU loops, or the
# loops do not vectorize (seen: gcc kept tanh_float out of line in the bench's
# translation unit until it was forced inline; the CPU layer ran 10x slower).
# Loops and OpenMP regions themselves are functions and are fine.
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND "${NM}" -C "${object}" RESULT_VARIABLE rc OUTPUT_VARIABLE symbols ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${object}: ${err}")
  endif()
  # Search the demangled text without splitting it into a CMake list (it is full of ';' and '[').
  foreach(pattern "fusekit::detail::tanh_float\\(" "fusekit::detail::accurate_tanh\\(" "fusekit::detail::convert<"
                  "fusekit::detail::bit_cast<" "fusekit::normalize<[a-z]+>::operator\\(\\)" "fusekit::weigh::operator\\(\\)"
                  "fusekit::(fast_)?tanh_activate::operator\\(\\)" "fusekit::fused<[^\n]*>::apply<"
                  "fusekit::detail::(array|transform)_source<[^\n]*>::operator\\(\\)"
                  "fusekit::detail::(sigmoid|silu|softplus|gelu_tanh|gelu_erf)_double\\(" "fusekit::detail::exp_scaled\\("
                  "fusekit::detail::log1p_unit\\(" "fusekit::double_kernel_activation<[^\n]*>::operator\\(\\)")
    string(REGEX MATCH "[^\n]*${pattern}[^\n]*" line "${symbols}")
    if(line)
      message(FATAL_ERROR "${object} has an out-of-line function the CPU loops should inline:\n  ${line}")
    endif()
  endforeach()
  message(STATUS "${object}: every functor inlined")
endforeach()
