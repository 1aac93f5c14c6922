#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The one script to run on a GPU machine. Stages, in priority order:
#
#   build     configure for sm_90 and build tests, benches and examples
#   test      every test and example but the CPU-only build checks (GPU cases run)
#   bench     the four benches, short (--benchmark_min_time=0.05), JSON out
#   sanitize  compute-sanitizer memcheck and racecheck on a chosen subset of GPU tests
#   peers     NumPy, Numba, CuPy and PyTorch on the same tasks (host data too), then the tables
#
#   scripts/gpu-check.sh [--out DIR] [--bundle DIR] [--only STAGE,...] [--budget SECONDS]
#                        [--hide-system-packages]
#
#   --out DIR       where results go (default: bench/results/<date>_<gpu>)
#   --bundle DIR    GoogleTest and Google Benchmark sources (scripts/gpu-bundle.sh),
#                   built from source; default: .gpu-bundle when it exists, else the
#                   installed packages
#   --only S,...    run just these stages (a later stage builds incrementally first)
#   --budget S      seconds for the whole run (default 420): each stage gets what is
#                   left, under its own cap, and a stage that would start with under
#                   15 s left is skipped and says so
#   --hide-system-packages   ignore /usr for find_package (a rehearsal of a bare machine)
#
# At most 8 files, written as each stage ends, so a run stopped at its limit
# still returns what it did: summary.txt (machine, stage times, tests,
# sanitizers, tables), log.txt (everything), elementwise_bench.json,
# reduce_bench.json, train_bench.json, host_pipeline_bench.json and peers.json
# (every peer's results, one section per task; compare.py reads it as it reads
# peer_<task>.json).
# Commit them under bench/results/<date>_<gpu>/. README.md gives the exact call.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="/usr/local/cuda/bin:${PATH}"
export PYTHONUNBUFFERED=1

out=""
bundle=""
only="build,test,bench,sanitize,peers"
budget=420
hide=0
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --bundle) bundle=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --hide-system-packages) hide=1; shift ;;
    -h|--help) sed -n '3,31p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for s in ${only//,/ }; do
  case "$s" in build|test|bench|sanitize|peers) ;; *) echo "gpu-check: unknown stage '$s'" >&2; exit 2 ;; esac
done
[ -n "$bundle" ] || { [ -d .gpu-bundle ] && bundle=.gpu-bundle; }

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | tr ' ' '-' | tr -cd 'A-Za-z0-9_.-')
out=${out:-bench/results/$(date -u +%Y-%m-%d)_${gpu_name:-no-gpu}}
mkdir -p "$out"
summary="$out/summary.txt"
log="$out/log.txt"
: > "$summary"
: > "$log"
build=build-gpu
jobs=$(nproc)
tmp=$(mktemp -d)  # scratch outside $out: only the 8 result files go there
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s)
status=0
stage_times=()

elapsed() { echo $(($(date +%s) - t0)); }
say() { echo "$*" | tee -a "$summary"; }
wants() { [[ ",$only," == *",$1,"* ]]; }
# Seconds a stage may take: its cap, or what is left of the budget.
allow() {
  local left=$((budget - $(elapsed)))
  echo $((left < $1 ? left : $1))
}
begin() {
  stage=$1
  stage_start=$(date +%s)
  echo "[$(elapsed)s] == $stage" | tee -a "$log"
}
end() {  # end STATUS-WORD
  local took=$(($(date +%s) - stage_start))
  stage_times+=("$stage ${took}s ($1)")
  say "[$(elapsed)s] stage $stage: $1 in ${took}s"
  [ "$1" = ok ] || status=1
}
# Skips a stage when less than 15 s of the budget is left.
has_time() {
  if (($(allow 100000) < 15)); then
    say "[$(elapsed)s] stage $1: skipped, the ${budget}s budget is spent"
    stage_times+=("$1 skipped")
    status=1
    return 1
  fi
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  else
    echo "nvidia-smi: not available"
  fi
  echo "nvcc: $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo missing)"
  echo "cmake: $(cmake --version 2>/dev/null | head -n 1)"
  echo "host compiler: $(c++ --version 2>/dev/null | head -n 1)"
  echo "cpus: ${jobs}"
  echo "stages: ${only}; budget ${budget}s"
  [ -n "$bundle" ] && echo "bundle: $bundle ($(tr '\n' ' ' < "$bundle/VERSIONS" 2>/dev/null))"
} | tee -a "$summary"

# What the stages need, said plainly before anything runs.
missing=()
command -v nvcc >/dev/null || missing+=("nvcc (build)")
command -v cmake >/dev/null || missing+=("cmake (build)")
command -v python3 >/dev/null || missing+=("python3 (bench tables, peers)")
nvidia-smi -L >/dev/null 2>&1 || missing+=("a visible GPU (nvidia-smi -L): GPU tests will skip")
if wants sanitize; then command -v compute-sanitizer >/dev/null || missing+=("compute-sanitizer (sanitize)"); fi
if [ -n "$bundle" ]; then
  for dep in googletest benchmark; do
    [ -f "$bundle/$dep/CMakeLists.txt" ] || missing+=("$bundle/$dep sources (scripts/gpu-bundle.sh)")
  done
else
  [ -f /usr/include/gtest/gtest.h ] || missing+=("GoogleTest: no --bundle and no libgtest-dev (run scripts/gpu-bundle.sh where apt works; carry .gpu-bundle)")
  [ -f /usr/include/benchmark/benchmark.h ] || missing+=("Google Benchmark: no --bundle and no libbenchmark-dev (as above)")
fi
if ((${#missing[@]})); then
  for m in "${missing[@]}"; do say "missing: $m"; done
else
  say "missing: nothing"
fi

built=0
run_build() {
  local cfg=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
             -DFUSEKIT_BUILD_TESTS=ON -DFUSEKIT_BUILD_BENCHMARKS=ON -DFUSEKIT_BUILD_EXAMPLES=ON)
  command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ] && cfg+=(-G Ninja)
  [ -n "$bundle" ] && cfg+=("-DFUSEKIT_DEPS_DIR=$(cd "$bundle" && pwd)")
  ((hide)) && cfg+=("-DCMAKE_IGNORE_PREFIX_PATH=/usr;/")
  timeout "$1" cmake "${cfg[@]}" >> "$log" 2>&1 &&
    timeout "$(allow "$1")" cmake --build "$build" -j "$jobs" >> "$log" 2>&1
}
needs_build=0
for s in test bench sanitize; do wants "$s" && needs_build=1; done
if wants build || ((needs_build)); then
  if has_time build; then
    begin build
    if run_build "$(allow 330)"; then
      built=1
      end ok
    else
      grep -E "error|Error|FAILED" "$log" | tail -n 15 | tee -a "$summary"
      end FAILED
    fi
  fi
fi

for s in test bench sanitize; do
  if wants "$s" && ((!built)); then say "stage $s: skipped, nothing was built"; stage_times+=("$s skipped"); status=1; fi
done

if wants test && ((built)) && has_time test; then
  begin test
  # The CPU-only build checks (codegen, warnings, consumer projects) are CI's; the rest runs here.
  timeout "$(allow 150)" ctest --test-dir "$build" -LE "bench|install|codegen" -j 8 --output-on-failure \
    --timeout 120 2>&1 | tee -a "$log" > "$tmp/ctest.txt"
  rc=${PIPESTATUS[0]}
  grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\(Skipped\)|Not Run" "$tmp/ctest.txt" | tee -a "$summary"
  [ $rc -eq 0 ] && end ok || end "FAILED (rc $rc)"
fi

if wants bench && ((built)) && has_time bench; then
  begin bench
  bench_rc=0
  for b in elementwise_bench reduce_bench train_bench host_pipeline_bench; do
    [ "$b" = train_bench ] && cap=150 || cap=60
    "$build/bench/$b" --help >/dev/null 2>&1 || { say "bench $b: not built"; bench_rc=1; continue; }
    timeout "$(allow $cap)" "$build/bench/$b" --benchmark_min_time=0.05 --benchmark_out="$out/$b.json" \
      --benchmark_out_format=json --benchmark_counters_tabular=true >> "$log" 2>&1
    rc=$?
    say "bench $b: $([ $rc -eq 0 ] && echo ok || echo "FAILED (rc $rc$([ $rc -eq 124 ] && echo ', out of time'))")"
    [ $rc -eq 0 ] || bench_rc=1
  done
  python3 bench/summarize.py "$out" >> "$summary" 2>> "$log"
  [ $bench_rc -eq 0 ] && end ok || end FAILED
fi

if wants sanitize && ((built)) && has_time sanitize; then
  begin sanitize
  san_rc=0
  if command -v compute-sanitizer >/dev/null; then
    # Small cases that reach every kernel: elementwise, the four sums (tree, atomics,
    # CUB), both trainer paths and predict. Under a sanitizer a kernel runs 10-100x slower.
    declare -A subset=(
      [elementwise_gpu_test]="GpuTransform.FusedEqualsUnfusedBitForBit:GpuTransform.FourInputsWithADeviceLambdaInPlace:GpuTransform.GraphCapturedCallReplays"
      [reduce_gpu_test]="GpuSum.IntegersExactAndEmptyIsZero:GpuSum.SpecialValuesPropagate:GpuTransformReduce.*:GpuReduce.IntegerMinMaxWithAtomics"
      [train_gpu_test]="GpuFit.ShortFitOnBothPathsForTheSanitizers:GpuPredict.*:CudaResources.WorkspaceOverloadsAllocateNothing"
      [host_data_gpu_test]="HostData.ShortPipelineForTheSanitizers"
    )
    for tool in memcheck racecheck; do
      for bin in elementwise_gpu_test reduce_gpu_test train_gpu_test host_data_gpu_test; do
        [ "$tool" = racecheck ] && [ "$bin" = elementwise_gpu_test ] && continue  # no shared memory there
        echo "=== $tool $bin" >> "$log"
        timeout "$(allow 30)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$build/tests/$bin" \
          --gtest_filter="${subset[$bin]}" 2>&1 | tee -a "$log" > "$tmp/san.txt"
        rc=${PIPESTATUS[0]}
        say "$tool $bin: rc $rc$([ $rc -eq 124 ] && echo ', out of time'); $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp/san.txt" | tail -n 1); $(grep -E '^\[  (PASSED|FAILED)' "$tmp/san.txt" | tr '\n' ' ')"
        [ $rc -eq 0 ] || san_rc=1
      done
    done
  else
    say "compute-sanitizer not found"
    san_rc=1
  fi
  [ $san_rc -eq 0 ] && end ok || end FAILED
fi

if wants peers && has_time peers; then
  begin peers
  peers_rc=0
  # Each peer writes its JSON run by run, so one stopped by its limit keeps what it measured.
  for p in hidden_layer sum train host_pipeline; do
    extra=()
    [ "$p" = train ] && extra=(--budget 3)  # seconds per fit: long loops compare per iteration
    timeout "$(allow 90)" python3 "bench/peers/$p.py" --out "$tmp/peer_$p.json" "${extra[@]}" >> "$log" 2>&1
    rc=$?
    python3 bench/compare.py --merge-peers "$tmp" "$out/peers.json" >> "$log" 2>&1
    runs=$(grep -c '"run_type"' "$tmp/peer_$p.json" 2>/dev/null || echo 0)
    say "peer $p: $([ $rc -eq 0 ] && echo ok || echo "rc $rc$([ $rc -eq 124 ] && echo ', out of time')"), $runs runs$([ "$runs" -gt 0 ] || echo ' (see log.txt: a stack missing?)')"
    [ $rc -eq 0 ] || peers_rc=1
  done
  python3 bench/compare.py "$out" >> "$summary" 2>> "$log"
  [ $peers_rc -eq 0 ] && end ok || end FAILED
fi

say ""
say "stage times: $(IFS=';'; echo "${stage_times[*]}")"
say "[$(elapsed)s] done: $out ($([ $status -eq 0 ] && echo 'all checks passed' || echo 'SOME CHECKS FAILED'))"
say "status: $status"
exit $status
