#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The one script to run on a GPU machine: configure for sm_90, build, run every
# test, run compute-sanitizer (memcheck, racecheck) over the GPU test binaries,
# run the benchmarks with JSON output, and print a summary. About 5 minutes on
# an H200 with 16 cores.
#
#   scripts/gpu-check.sh [outdir]      (default: bench/results/<date>_<gpu>)
#
# outdir receives: device.txt, build.log, ctest.log, sanitizer.log,
# <bench>.json, summary.txt. Commit it under bench/results/.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="/usr/local/cuda/bin:${PATH}"

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | tr ' ' '-' | tr -cd 'A-Za-z0-9_.-')
out=${1:-bench/results/$(date -u +%Y-%m-%d)_${gpu_name:-unknown-gpu}}
mkdir -p "$out"
build=build-gpu
jobs=$(nproc)
status=0
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  nvcc --version | tail -n 2
  echo "cpus: ${jobs}"
} > "$out/device.txt"
cat "$out/device.txt"

stamp "configure + build (sm_90)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if ! { cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DFUSEKIT_BUILD_TESTS=ON -DFUSEKIT_BUILD_BENCHMARKS=ON -DFUSEKIT_BUILD_EXAMPLES=ON &&
       cmake --build "$build" -j "$jobs"; } > "$out/build.log" 2>&1; then
  tail -n 40 "$out/build.log"
  echo "BUILD FAILED"
  exit 1
fi

stamp "ctest (every test but the benches)"
ctest --test-dir "$build" -LE bench -j 4 --output-on-failure --timeout 600 > "$out/ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed|Skipped|Failed|\*\*\*" "$out/ctest.log" | tail -n 25

stamp "compute-sanitizer"
: > "$out/sanitizer.log"
if command -v compute-sanitizer >/dev/null; then
  # The 2^31-element case moves 19 GB: too slow under the sanitizers, and covered by the plain run.
  filter='--gtest_filter=-*MoreThanTwoToThe31*'
  for bin in "$build"/tests/*_gpu_test; do
    for tool in memcheck racecheck; do
      echo "=== $tool $(basename "$bin")" >> "$out/sanitizer.log"
      compute-sanitizer --tool "$tool" --error-exitcode 3 "$bin" "$filter" >> "$out/sanitizer.log" 2>&1 || status=1
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer.log" | tail -n 1 | sed "s/^/  $tool $(basename "$bin"): /"
    done
  done
else
  echo "compute-sanitizer not found" | tee -a "$out/sanitizer.log"
  status=1
fi

stamp "benchmarks"
for bin in "$build"/bench/*_bench; do
  name=$(basename "$bin")
  "$bin" --benchmark_out="$out/$name.json" --benchmark_out_format=json --benchmark_counters_tabular=true \
    > "$out/$name.txt" 2>&1 || status=1
  rm -f "$out/$name.txt"  # the JSON holds every number; keep the folder small
done
python3 bench/summarize.py "$out" | tee "$out/summary.txt"

stamp "done: $out ($([ $status -eq 0 ] && echo all checks passed || echo SOME CHECKS FAILED))"
exit $status
