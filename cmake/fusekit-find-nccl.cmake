# SPDX-License-Identifier: Apache-2.0
# Finds NCCL for fusekit::nccl, in fusekit's own build and in a consumer's
# (fusekit-config.cmake includes this file too). Sets FUSEKIT_NCCL_INCLUDE_DIR,
# FUSEKIT_NCCL_LIBRARY and FUSEKIT_NCCL_WHY (why not, when one is missing).
#
# Where it looks: the CUDA toolkit's folders, NCCL_ROOT, and the pip wheel
# (nvidia-nccl-cu12 or -cu13) of the python3 on PATH, whose nvidia/nccl/
# holds include/nccl.h and lib/libnccl.so.2, without the unversioned
# libnccl.so link that find_library looks for by default.
macro(fusekit_find_nccl)
  set(fusekit_nccl_hints "")
  find_program(FUSEKIT_PYTHON3_FOR_NCCL NAMES python3 python)
  if(FUSEKIT_PYTHON3_FOR_NCCL)
    execute_process(
      COMMAND "${FUSEKIT_PYTHON3_FOR_NCCL}" -c
              "import importlib.util as u; s = u.find_spec('nvidia.nccl'); print(list(s.submodule_search_locations)[0] if s else '')"
      OUTPUT_VARIABLE fusekit_nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE fusekit_nccl_rc)
    if(fusekit_nccl_rc EQUAL 0 AND fusekit_nccl_wheel)
      list(APPEND fusekit_nccl_hints "${fusekit_nccl_wheel}")
    endif()
  endif()
  find_path(FUSEKIT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_ROOT ${fusekit_nccl_hints}
            PATH_SUFFIXES include)
  find_library(FUSEKIT_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_ROOT
               ${fusekit_nccl_hints} PATH_SUFFIXES lib lib64)
  set(FUSEKIT_NCCL_WHY "")
  if(NOT FUSEKIT_NCCL_INCLUDE_DIR)
    string(APPEND FUSEKIT_NCCL_WHY "no nccl.h; ")
  endif()
  if(NOT FUSEKIT_NCCL_LIBRARY)
    string(APPEND FUSEKIT_NCCL_WHY "no libnccl.so or libnccl.so.2; ")
  endif()
  if(FUSEKIT_NCCL_WHY)
    string(APPEND FUSEKIT_NCCL_WHY "looked in the CUDA toolkit, NCCL_ROOT and the python3 wheel nvidia.nccl"
           " (${fusekit_nccl_wheel})")
  endif()
endmacro()
