#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package the way a new user installs it (README.md): a fresh venv,
# `pip install ./python`, then `pytest python/tests`. Twice:
#   - full:     where nvcc is found, the CPU and GPU backends (the GPU tests
#               skip without a device);
#   - cpu-only: as a machine without the CUDA toolkit builds it: the CPU
#               backend alone, CCCL's headers from the nvidia-cuda-cccl wheel.
#   scripts/check/python_package.sh [full|cpu-only]...     (default: both)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for kind in "${@:-full cpu-only}"; do
  for k in $kind; do
    echo "== the Python package, $k build"
    python3 -m venv "$work/$k"
    args=""
    [ "$k" = cpu-only ] && args="-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE -DFUSEKIT_PYTHON_CUDA=OFF"
    CMAKE_ARGS="$args" "$work/$k/bin/python" -m pip install -q ./python pytest
    "$work/$k/bin/python" -c "import fusekit; print('fusekit', 'GPU backend:', fusekit.has_cuda, '| half types:', fusekit.has_half_types)"
    "$work/$k/bin/python" -m pytest -q python/tests
  done
done
