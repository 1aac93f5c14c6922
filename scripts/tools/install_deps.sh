#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what fusekit's tests and benchmarks need beyond the CUDA toolkit, on
# Debian or Ubuntu: CMake, Ninja, GoogleTest, Google Benchmark, RapidCheck, Open MPI, Python 3,
# clang-format 14; NumPy, Numba and matplotlib for bench/compare.py, and with
# --peers JAX, numexpr and scikit-learn too.
# Does nothing when they are already there.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)  # the presets' generator
command -v python3 >/dev/null || need+=(python3)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
[ -f /usr/include/benchmark/benchmark.h ] || need+=(libbenchmark-dev)
[ -f /usr/include/rapidcheck.h ] || need+=(librapidcheck-dev)  # the property tests (tests/*/property_test.cpp)
command -v g++ >/dev/null || need+=(g++)
# Open MPI: fusekit::mpi, its tests (mpirun with 1 to 4 ranks) and example 04.
command -v mpicxx >/dev/null || need+=(libopenmpi-dev)
command -v mpirun >/dev/null || need+=(openmpi-bin)
# venv for the Python package's test (scripts/check/python_package.sh; Debian splits it out).
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || need+=(python3-venv)
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${need[@]}"
fi
# clang-format 14 checks the code's format (ctest layout.clang_format, which
# skips without it: optional where the distribution has another version).
if ! command -v clang-format-14 >/dev/null; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  { "${sudo_cmd[@]}" apt-get update -q >/dev/null &&
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends clang-format-14 >/dev/null; } ||
    echo "note: clang-format-14 not installed; ctest layout.clang_format will skip"
fi
# The Python peers of bench/compare.py (optional: each missing stack is skipped).
if ! python3 -c "import numpy, numba" >/dev/null 2>&1; then
  python3 -m pip install -q numpy numba >/dev/null 2>&1 || echo "note: numpy/numba not installed; bench/compare.py will skip those peers"
fi
# JAX (jit) and numexpr, the strongest CPU peers of the layer and the sum: a
# large download, so only with --peers (the bench preset's users; CI needs none).
if [ "${1:-}" = "--peers" ] && ! python3 -c "import jax, numexpr, sklearn" >/dev/null 2>&1; then
  python3 -m pip install -q jax numexpr scikit-learn >/dev/null 2>&1 ||
    echo "note: jax/numexpr/scikit-learn not installed; bench/compare.py and bench/peers/data_kinds.py will skip those peers"
fi
# CCCL's own CMake package (the nvidia-cuda-cccl wheel): ctest's CPU-only consumer
# configured where the CUDA toolkit cannot be found takes CCCL from it.
if ! python3 -c "import importlib.util as u, glob; s = u.find_spec('nvidia'); raise SystemExit(not (s and any(glob.glob(d + '/cu*/cccl/lib/cmake/cccl') for d in s.submodule_search_locations)))" >/dev/null 2>&1; then
  python3 -m pip install -q nvidia-cuda-cccl >/dev/null 2>&1 || echo "note: nvidia-cuda-cccl not installed; the toolkit-less consumer test takes the toolkit's CCCL package"
fi
# cuobjdump and nvdisasm (pip wheels where the toolkit lacks them): ctest's
# codegen.tree_loads_in_flight disassembles the deterministic tree's sm_90 code.
if ! command -v cuobjdump >/dev/null && [ ! -x /usr/local/cuda/bin/cuobjdump ] &&
   ! python3 -c "import glob, sysconfig; raise SystemExit(not glob.glob(sysconfig.get_paths()['purelib'] + '/nvidia/cu*/bin/nvdisasm'))" >/dev/null 2>&1; then
  python3 -m pip install -q nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >/dev/null 2>&1 ||
    echo "note: cuobjdump/nvdisasm not installed; codegen.tree_loads_in_flight will skip"
fi
# matplotlib draws bench/compare.py --plot (optional: without it --plot says so and draws nothing).
if ! python3 -c "import matplotlib" >/dev/null 2>&1; then
  python3 -m pip install -q matplotlib >/dev/null 2>&1 || echo "note: matplotlib not installed; bench/compare.py --plot will skip"
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDACXX:-}" ]; then
  echo "error: no nvcc: install the CUDA toolkit (12.x or 13.x) or set CUDACXX" >&2
  exit 1
fi
