#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every non-negative normal float below 10 through tanh_activate's SIMD loop,
# against a long-double tanh, under each flag set users build with: rerun it
# when tanh changes (docs/guide.md, "Functors and their numeric contracts"). About a minute per flag set on 2 cores.
#   scripts/tools/tanh_sweep.sh [build-dir]   (default: a temporary one)
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
cccl="${CUDA_HOME:-/usr/local/cuda}/include"
for flags in "-O3" "-O3 -ffast-math" "-O2 -ffast-math" "-O3 -march=native -ffast-math" "-O3 -mavx2 -mfma"; do
  exe="$out/tanh_sweep_$(echo "$flags" | tr -c 'a-zA-Z0-9' '_')"
  g++ -std=gnu++17 $flags -fopenmp -I "$here/include" -I "$here/tests" -I "$cccl/cccl" -isystem "$cccl" \
    "$here/tests/elementwise/tanh_sweep_test.cpp" -o "$exe" -lgtest -lgtest_main -pthread
  echo "== $flags"
  "$exe" --gtest_also_run_disabled_tests --gtest_filter='*Full*' | grep -E "tanh sweep|OK|FAILED"
done
