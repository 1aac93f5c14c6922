#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The GPU machine's check, one command (docs/gpu-check.md, "On a GPU machine",
# gives it exactly):
#
#   (default) prepare, test, bench, peer_layer, python, sanitize, peers in 510 s:
#             the test verdicts, the figures P1-P6 (bench/compare.py --figures),
#             the Python package's GPU tests, compute-sanitizer memcheck and
#             racecheck on a subset, and the Python peers of the sum, the
#             trainer and host data
#   --call 1  the first half alone (prepare, test, bench, peer_layer; 285 s)
#   --call 2  the second half alone (prepare, python, sanitize, peers; 225 s)
#
#   prepare    unpack the programs scripts/gpu/bundle.sh built (.gpu-bundle/
#              prebuilt.tar.xz) when their source hash is this tree's, and find
#              the image's cuBLAS and NCCL; otherwise build the same programs
#              here from source (the bundle's GoogleTest and Google Benchmark)
#   test       the GPU tests and the examples, side by side, each bounded
#   bench      the four benches' GPU runs, short (--benchmark_min_time=0.05), JSON out
#   peer_layer the hidden layer in CuPy, PyTorch (eager, torch.compile) and Numba at 2^28
#   python     the Python package's wheel (built for the image's Python by bundle.sh)
#              installed into a scratch folder: python/tests/test_gpu.py, and the
#              examples' scripts with their GPU rows (CuPy, PyTorch, Numba)
#   sanitize   compute-sanitizer on small cases that reach every kernel, side by side
#   peers      the sum, the trainer and host data in NumPy/CuPy/PyTorch/Numba
#
#   scripts/gpu/check.sh [--call 1|2] [--out DIR] [--bundle DIR] [--budget S] [--only S,...]
#                        [--no-prebuilt] [--hide-system-packages] [--bench-filter RE] [--bench-sizes LIST]
#                        [--plant]
#
#   --out DIR        where results go (default: bench/results/<date>_<gpu>)
#   --bundle DIR     what scripts/gpu/bundle.sh made (default: .gpu-bundle)
#   --budget S       seconds for the whole call (default: 510; 285 for call 1, 225 for
#                    call 2). Each stage has its own cap (stage_cap below) and each
#                    step its own within it: a step gets the least of its cap, what
#                    is left of its stage's and what is left of the budget, and one
#                    that would start with under 5 s is skipped and says so. So a
#                    stage that runs long stops at its cap, and the stages after it
#                    still run.
#   --only S,...     just these stages of the call (prepare always runs)
#   --no-prebuilt    build from source even when the prebuilt programs match
#   --hide-system-packages   a source build ignores /usr for find_package
#   --bench-filter RE, --bench-sizes LIST   what the benches run (default ^(gpu|host)/ and
#                    their own sizes; a rehearsal without a GPU picks CPU runs)
#   --plant          rehearsal only (scripts/gpu/rehearse.sh): after prepare, a
#                    program that cannot load (a library missing), a bench that
#                    crashes halfway through its JSON and a test that runs past
#                    its stage's cap take the places of host_data_gpu_test,
#                    train_bench and fastmath_gpu_test
#
# Three files, rewritten as each stage ends, so that a call stopped at its
# limit still returns what it did: summary-<call>.txt, log-<call>.txt, and
# results-<call>.tar with the four <bench>.json and the peers' peer_*.json
# (call is all, 1 or 2). Unpack the tar into bench/results/<date>_<gpu>/ beside
# the summary; bench/compare.py reads the folder whole. A bench stopped or
# crashed mid-file is closed after its last whole run (bench/close_json.py).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. scripts/gpu/programs.sh
export PATH="/usr/local/cuda/bin:${PATH}"
export PYTHONUNBUFFERED=1

call=all
out=""
bundle=.gpu-bundle
budget=""
only=""
prebuilt=1
hide=0
plant=0
bench_filter='^(gpu|host)/'  # the host-data bench's runs are host/...: GPU runs too
bench_sizes=""
while (($#)); do
  case "$1" in
    --call) call=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bundle) bundle=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-prebuilt) prebuilt=0; shift ;;
    --hide-system-packages) hide=1; shift ;;
    --bench-filter) bench_filter=$2; shift 2 ;;
    --bench-sizes) bench_sizes=$2; shift 2 ;;
    --plant) plant=1; shift ;;
    -h|--help) sed -n '3,54p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$call" in
  all) stages="test,bench,peer_layer,python,sanitize,peers"; budget=${budget:-510} ;;
  1) stages="test,bench,peer_layer"; budget=${budget:-285} ;;
  2) stages="python,sanitize,peers"; budget=${budget:-225} ;;
  *) echo "gpu-check: --call takes 1 or 2 (or nothing: the whole check; see --help)" >&2; exit 2 ;;
esac
if [ -n "$only" ]; then
  for s in ${only//,/ }; do
    [[ ",$stages," == *",$s,"* ]] || { echo "gpu-check: call $call has no stage '$s' (it has $stages)" >&2; exit 2; }
  done
  stages=$only
fi
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "gpu-check: --budget takes whole seconds" >&2; exit 2; }

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | tr ' ' '-' | tr -cd 'A-Za-z0-9_.-')
out=${out:-bench/results/$(date -u +%Y-%m-%d)_${gpu_name:-no-gpu}}
mkdir -p "$out"
summary="$out/summary-$call.txt"
log="$out/log-$call.txt"
: > "$summary"
: > "$log"
# Each stage's seconds at most (the budget is shared as well): with the
# prebuilt programs prepare takes seconds, and the seven fit 510 s.
declare -A stage_cap=([prepare]=250 [test]=90 [bench]=140 [peer_layer]=60 [python]=75 [sanitize]=90 [peers]=100)
build=build-gpu
jobs=$(nproc)
# A copied tree has no git: hash the files the bundle recorded (scripts/gpu/programs.sh).
export FUSEKIT_SOURCE_LIST="$bundle/SOURCE_FILES"
tmp=$(mktemp -d)  # scratch outside $out: only the result files go there
trap 'rm -rf "$tmp"' EXIT
res="$tmp/results"  # the JSONs, packed into $out/results-<call>.tar as each stage ends
mkdir -p "$res"
pack() { tar -cf "$out/results-$call.tar" -C "$res" . 2>> "$log"; }
t0=$(date +%s)
stage_end=$((t0 + budget))
status=0
stage_times=()

elapsed() { echo $(($(date +%s) - t0)); }
say() { echo "$*" | tee -a "$summary"; }
wants() { [[ ",$stages," == *",$1,"* ]]; }
# Seconds a step may take: its cap, or what is left of its stage's cap or of
# the budget, whichever is least; never below 0.
allow() {
  local left=$((budget - $(elapsed)))
  local in_stage=$((stage_end - $(date +%s)))
  ((in_stage < left)) && left=$in_stage
  local a=$((left < $1 ? left : $1))
  echo $((a > 0 ? a : 0))
}
# bounded CAP COMMAND...: runs COMMAND under timeout, or, with under 5 s of the
# budget left, not at all (rc 125 and a line; `timeout 0` would mean no limit).
bounded() {
  local t
  t=$(allow "$1")
  shift
  if ((t < 5)); then
    echo "skipped (the stage's cap or the ${budget}s budget is spent): $*" >> "$log"
    return 125
  fi
  timeout "$t" "$@"
}
rc_word() {  # what an exit status means here
  case "$1" in
    0) echo ok ;;
    124) echo "FAILED (out of time)" ;;
    125) echo "skipped (budget spent)" ;;
    *) echo "FAILED (rc $1)" ;;
  esac
}
begin() {
  stage=$1
  stage_start=$(date +%s)
  stage_end=$((stage_start + ${stage_cap[$stage]}))
  ((stage_end > t0 + budget)) && stage_end=$((t0 + budget))
  echo "[$(elapsed)s] == $stage (at most $((stage_end - stage_start))s)" | tee -a "$log"
}
end() {  # end STATUS-WORDS
  local took=$(($(date +%s) - stage_start))
  stage_times+=("$stage ${took}s ($1)")
  say "[$(elapsed)s] stage $stage: $1 in ${took}s"
  [ "$1" = ok ] || status=1
  stage_end=$((t0 + budget))
  pack
}
# Whether a stage has time to start; else says it is skipped.
has_time() {
  if ((budget - $(elapsed) < 5)); then
    say "[$(elapsed)s] stage $1: skipped, the ${budget}s budget is spent"
    stage_times+=("$1 skipped")
    status=1
    return 1
  fi
}

{
  echo "call $call: stages prepare,$stages; budget ${budget}s"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "source hash: $(fusekit_source_hash .)$(git rev-parse HEAD >/dev/null 2>&1 && echo "; commit $(git rev-parse HEAD)")"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  else
    echo "nvidia-smi: not available"
  fi
  echo "nvcc: $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo missing)"
  echo "cmake: $(cmake --version 2>/dev/null | head -n 1)"
  echo "python3: $(python3 --version 2>&1)"
  echo "cpus: ${jobs}"
} | tee -a "$summary"

missing=()
nvidia-smi -L >/dev/null 2>&1 || missing+=("a visible GPU (nvidia-smi -L): the GPU cases will skip")
command -v python3 >/dev/null || missing+=("python3 (bench tables, peers)")
if wants sanitize; then command -v compute-sanitizer >/dev/null || missing+=("compute-sanitizer (sanitize)"); fi
for m in "${missing[@]}"; do say "missing: $m"; done
((${#missing[@]})) || say "missing: nothing"

# ---- prepare: the programs, prebuilt or built here ------------------------------
bin=""        # folder of the programs
libs=""       # LD_LIBRARY_PATH for them
not_built=()  # "program: why"
declare -A unusable=()

# Folders that hold `lib` (a file name), from the toolkit or a pip wheel of python3.
find_library_dir() {
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$d/$1" ] && { echo "$d"; return; }
  done
  python3 - "$1" <<'PY' 2>/dev/null
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("nvidia")
for root in (spec.submodule_search_locations if spec else []):
    for hit in sorted(pathlib.Path(root).glob("*/lib/" + sys.argv[1])) + sorted(pathlib.Path(root).glob("*/*/lib/" + sys.argv[1])):
        print(hit.parent)
        sys.exit(0)
PY
}

# Sets `libs` so that every program finds its libraries; marks the others unusable.
resolve_libraries() {
  libs="$1"
  local lib d b missing_libs
  for lib in libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
    if ! ldd "$bin"/* 2>/dev/null | grep -q "$lib => not found"; then continue; fi
    d=$(find_library_dir "$lib")
    if [ -n "$d" ]; then
      libs="$libs:$d"
      say "library: $lib from $d"
    fi
  done
  for b in "$bin"/*; do
    missing_libs=$(env LD_LIBRARY_PATH="$libs" ldd "$b" 2>&1 | grep -E "not found" | awk '{print $1, $2, $3, $4}' | sort -u | tr '\n' ';')
    if [ -n "$missing_libs" ]; then
      unusable[$(basename "$b")]="$missing_libs"
      say "cannot load $(basename "$b"): $missing_libs"
    fi
  done
}

# --plant (scripts/gpu/rehearse.sh): in place of host_data_gpu_test, a program
# that needs a library that is not there; in place of train_bench, a bench
# that writes one run of its JSON and crashes in the middle of the next.
plant_programs() {
  ((plant)) || return 0
  local d="$tmp/plant"
  mkdir -p "$d"
  echo 'int fusekit_planted(void) { return 0; }' > "$d/lib.c"
  echo 'int fusekit_planted(void); int main(void) { return fusekit_planted(); }' > "$d/main.c"
  if cc -shared -fPIC -o "$d/libfusekit_planted.so" "$d/lib.c" && cc -o "$d/unloadable" "$d/main.c" -L"$d" -lfusekit_planted; then
    rm -f "$d/libfusekit_planted.so"
    rm -f "$bin/host_data_gpu_test"
    cp "$d/unloadable" "$bin/host_data_gpu_test"
  else
    say "plant: no C compiler, the unloadable program is not planted"
  fi
  rm -f "$bin/train_bench"
  cat > "$bin/train_bench" <<'PLANT'
#!/usr/bin/env bash
for a in "$@"; do case "$a" in --benchmark_out=*) out=${a#--benchmark_out=} ;; esac; done
printf '{\n  "context": {"date": "planted", "library_build_type": "release"},\n  "benchmarks": [\n' > "$out"
printf '    {"name": "planted/whole", "run_type": "iteration", "iterations": 1, "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ns"},\n' >> "$out"
printf '    {"name": "planted/cut", "run_type": "itera' >> "$out"
kill -SEGV $$
PLANT
  chmod +x "$bin/train_bench"
  rm -f "$bin/fastmath_gpu_test"
  printf '#!/bin/sh\necho "[==========] Running 1 test (planted: it outlives its stage)"\nexec sleep 1000\n' > "$bin/fastmath_gpu_test"
  chmod +x "$bin/fastmath_gpu_test"
  say "plant: host_data_gpu_test cannot load, train_bench crashes after one run, fastmath_gpu_test outlives its stage"
}

unpack_prebuilt() {
  local pack="$bundle/prebuilt.tar.xz"
  [ -f "$pack" ] || { say "prepare: no $pack (scripts/gpu/bundle.sh makes it)"; return 1; }
  rm -rf "$build/prebuilt"
  mkdir -p "$build/prebuilt"
  tar -xJf "$pack" -C "$build/prebuilt" >> "$log" 2>&1 || { say "prepare: $pack does not unpack"; return 1; }
  local want have
  want=$(fusekit_source_hash .)
  have=$(cat "$build/prebuilt/SOURCE_HASH" 2>/dev/null)
  if [ "$want" != "$have" ]; then
    say "prepare: the prebuilt programs are of another tree (source hash $have; this tree $want)"
    return 1
  fi
  bin="$build/prebuilt/bin"
  grep -E "^(built|commit|nvcc|host compiler|fusekit: NCCL|carried)" "$build/prebuilt/MANIFEST" | sed 's/^/prebuilt: /' | tee -a "$summary"
  plant_programs
  resolve_libraries "$(cd "$build/prebuilt/lib" && pwd)"
  # The others run as built; those that cannot load are skipped, each named
  # with the library it lacks (runnable), and nothing is rebuilt for them.
  ((${#unusable[@]})) && say "prepare: ${#unusable[@]} prebuilt programs cannot load here and will not run: ${!unusable[*]}"
  local nccl
  nccl=$(grep -o 'fusekit: NCCL not found.*' "$build/prebuilt/MANIFEST")
  [ -n "$nccl" ] && not_built+=("nccl_gpu_test: ${nccl#fusekit: }")
  return 0
}

build_here() {
  local src="$build/source"
  local cfg=(-S . -B "$src" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
             -DFUSEKIT_BUILD_TESTS=ON -DFUSEKIT_BUILD_BENCHMARKS=ON -DFUSEKIT_BUILD_EXAMPLES=ON)
  command -v ninja >/dev/null && [ ! -f "$src/CMakeCache.txt" ] && cfg+=(-G Ninja)
  if [ -f "$bundle/googletest/CMakeLists.txt" ] && [ -f "$bundle/benchmark/CMakeLists.txt" ]; then
    cfg+=("-DFUSEKIT_DEPS_DIR=$(cd "$bundle" && pwd)")
  fi
  ((hide)) && cfg+=("-DCMAKE_IGNORE_PREFIX_PATH=/usr;/")
  bounded 40 cmake "${cfg[@]}" > "$tmp/configure.log" 2>&1
  local rc=$?
  cat "$tmp/configure.log" >> "$log"
  ((rc == 0)) || { grep -E "Error|error" "$tmp/configure.log" | tail -n 10 | tee -a "$summary"; return 1; }
  local nccl targets=() p
  nccl=$(grep -o 'fusekit: NCCL.*' "$tmp/configure.log" | head -n 1)
  for p in "${FUSEKIT_GPU_TESTS[@]}" "${FUSEKIT_GPU_BENCHES[@]}" "${FUSEKIT_GPU_EXAMPLES[@]}"; do
    if [ "$p" = nccl_gpu_test ] && [[ "$nccl" != *"NCCL found"* ]]; then
      not_built+=("nccl_gpu_test: ${nccl#fusekit: }")
      continue
    fi
    targets+=("$p")
  done
  bounded "${FUSEKIT_BUILD_CAP:-240}" cmake --build "$src" -j "$jobs" --target "${targets[@]}" >> "$log" 2>&1
  rc=$?
  ((rc == 0)) || { grep -E "error|Error|FAILED" "$log" | tail -n 15 | tee -a "$summary"; return 1; }
  bin="$build/bin"
  rm -rf "$bin"
  mkdir -p "$bin"
  for p in "${targets[@]}"; do ln -s "$(cd "$(dirname "$(fusekit_program_path "$src" "$p")")" && pwd)/$p" "$bin/$p"; done
  plant_programs
  unusable=()
  resolve_libraries ""
}

begin prepare
prepared=0
if ((prebuilt)) && unpack_prebuilt; then
  prepared=1
  end ok
else
  unusable=()
  if has_time prepare; then
    if build_here; then
      prepared=1
      end ok
    else
      end FAILED
    fi
  fi
fi
for n in "${not_built[@]}"; do say "not built: $n"; done

# run_program NAME ARGS...: a program of the GPU stages with its libraries.
run_program() {
  local name=$1
  shift
  env LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin/$name" "$@"
}
# Whether a program can run; else says why not.
runnable() {
  if [ ! -e "$bin/$1" ]; then
    local why
    why=$(printf '%s\n' "${not_built[@]}" | grep "^$1:" || true)
    say "$1: not run (${why:-not built})"
    return 1
  fi
  if [ -n "${unusable[$1]:-}" ]; then say "$1: not run (cannot load: ${unusable[$1]})"; return 1; fi
}

for s in ${stages//,/ }; do
  if [ "$s" != peer_layer ] && [ "$s" != peers ] && ((!prepared)); then
    say "stage $s: skipped, no programs"
    stage_times+=("$s skipped")
    status=1
  fi
done

# ---- call 1 -------------------------------------------------------------------
if wants test && ((prepared)) && has_time test; then
  begin test
  test_rc=0
  declare -A pid_of=()
  for p in "${FUSEKIT_GPU_TESTS[@]}" "${FUSEKIT_GPU_EXAMPLES[@]}"; do
    runnable "$p" || { [ "$p" = nccl_gpu_test ] || test_rc=1; continue; }
    bounded 120 env LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin/$p" > "$tmp/$p.txt" 2>&1 &
    pid_of[$p]=$!
  done
  for p in "${!pid_of[@]}"; do
    wait "${pid_of[$p]}"
    rc=$?
    { echo "=== $p (rc $rc)"; cat "$tmp/$p.txt"; } >> "$log"
    verdict=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$tmp/$p.txt" |
              sed -E 's/^\[  ([A-Z]+) +\] ([0-9]+) tests?.*/\2 \1/' | tr 'A-Z' 'a-z' | paste -sd, - | sed 's/,/, /g')
    failed=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$tmp/$p.txt" | sed 's/^\[  FAILED  \] //; s/ (.*//' | sort -u | tr '\n' ' ')
    tail_line=$(tail -n 1 "$tmp/$p.txt")
    say "$p: $(rc_word $rc); ${verdict:-$tail_line}${failed:+ failed: $failed}"
    ((rc == 0)) || test_rc=1
  done
  ((test_rc == 0)) && end ok || end FAILED
fi

if wants bench && ((prepared)) && has_time bench; then
  begin bench
  bench_rc=0
  declare -A cap=([elementwise_bench]=30 [reduce_bench]=40 [train_bench]=35 [host_pipeline_bench]=35)  # 140 s: the stage cap
  for b in "${FUSEKIT_GPU_BENCHES[@]}"; do
    runnable "$b" || { bench_rc=1; continue; }
    args=("--benchmark_filter=$bench_filter" --benchmark_min_time=0.05 "--benchmark_out=$res/$b.json"
          --benchmark_out_format=json --benchmark_counters_tabular=true)
    [ -n "$bench_sizes" ] && args+=("--sizes=$bench_sizes")
    t=$(date +%s)
    bounded "${cap[$b]}" env LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin/$b" "${args[@]}" >> "$log" 2>&1
    rc=$?
    # A bench stopped by its limit or crashed leaves its JSON open: keep its whole runs.
    ((rc != 0)) && [ -f "$res/$b.json" ] && python3 bench/close_json.py "$res/$b.json" | sed "s|^$res/||" | tee -a "$summary"
    runs=$(grep -c '"run_type": "iteration"' "$res/$b.json" 2>/dev/null)
    # A bench that ran nothing (a filter that matches none of its runs) recorded nothing: a failure
    # where a GPU is visible; without one (a rehearsal) a bench of GPU runs alone has nothing to run.
    none=" (none ran)"
    if ((rc == 0 && ${runs:-0} == 0)); then
      if nvidia-smi -L >/dev/null 2>&1; then rc=3; else none=" (none ran: no GPU here)"; fi
    fi
    say "bench $b: $(rc_word $rc), ${runs:-0} runs in $(($(date +%s) - t))s$( ((${runs:-0} > 0)) || echo "$none")"
    ((rc == 0)) || bench_rc=1
  done
  mkdir -p "$build/last-call-1"
  cp "$res"/*_bench.json "$build/last-call-1/" 2>/dev/null
  python3 bench/summarize.py "$res" >> "$summary" 2>> "$log"
  ((bench_rc == 0)) && end ok || end FAILED
fi

if wants peer_layer && has_time peer_layer; then
  begin peer_layer
  bounded 80 python3 bench/peers/hidden_layer.py --gpu-only --sizes 2^28 --out "$res/peer_hidden_layer.json" >> "$log" 2>&1
  rc=$?
  runs=$(grep -c '"run_type"' "$res/peer_hidden_layer.json" 2>/dev/null)
  say "peer hidden_layer: $(rc_word $rc), ${runs:-0} runs$( ((${runs:-0} > 0)) || echo ' (see log: a stack missing?)')"
  cp "$res/peer_hidden_layer.json" "$build/last-call-1/" 2>/dev/null
  python3 bench/compare.py "$res" --figures >> "$summary" 2>> "$log"
  ((rc == 0)) && end ok || end "$(rc_word $rc)"
fi

# ---- call 2 -------------------------------------------------------------------
if wants python && has_time python; then
  begin python
  py_rc=0
  tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])' 2>/dev/null)
  wheel=$(ls "$bundle"/python/fusekit-*-"${tag:-none}"-*.whl 2>/dev/null | head -n 1)
  if [ -z "$wheel" ]; then
    say "python: not run (no wheel for ${tag:-python3} in $bundle/python: scripts/gpu/bundle.sh builds one for the image's Python)"
    end "not run"
  else
    site="$tmp/python-site"
    bounded 20 python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$wheel" >> "$log" 2>&1
    rc=$?
    say "python: $(basename "$wheel") installed: $(rc_word $rc)"
    if ((rc == 0)) && ! python3 -c 'import pytest' 2>/dev/null; then  # the bundle's, where the image has none
      bounded 20 python3 -m pip install -q --no-index --no-compile --target "$site" "$bundle"/python/tools/*.whl >> "$log" 2>&1
      say "python: pytest from the bundle: $(rc_word $?)"
    fi
    pyenv=(env PYTHONPATH="$site" LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    if ((rc == 0)); then
      # The GPU module must load here: else the package serves the CPU and test_gpu.py would only skip.
      if ! "${pyenv[@]}" python3 -c 'import fusekit, sys; print("fusekit", fusekit.__file__, "has_cuda",
fusekit.has_cuda, fusekit.cuda_unavailable); sys.exit(0 if fusekit.has_cuda else 1)' >> "$summary" 2>> "$log"; then
        say "python: the GPU module did not load (fusekit.cuda_unavailable, in the summary)"
        py_rc=1
      fi
      bounded 45 "${pyenv[@]}" python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py > "$tmp/pytest.txt" 2>&1
      rc=$?
      cat "$tmp/pytest.txt" >> "$log"
      say "python tests/test_gpu.py: $(rc_word $rc); $(grep -E '(passed|failed|skipped|error)' "$tmp/pytest.txt" | tail -n 1)"
      ((rc == 0)) || py_rc=1
      # The examples' scripts as a user runs them: their GPU rows against the user's own code.
      for ex in "hidden_layer.py 1000000" "train.py 2000 64 8" "sum.py 1000000"; do
        set -- $ex
        (cd python/examples && bounded 25 "${pyenv[@]}" python3 "$@") > "$tmp/example.txt" 2>&1
        rc=$?
        { echo "=== python/examples/$ex (rc $rc)"; cat "$tmp/example.txt"; } >> "$log"
        say "python example $ex: $(rc_word $rc); GPU rows: $(grep -ciE 'cupy|torch|cuda|gpu' "$tmp/example.txt")"
        grep -iE 'cupy|torch|cuda|gpu' "$tmp/example.txt" | sed 's/^/  /' >> "$summary"
        ((rc == 0)) || py_rc=1
      done
      set --
    else
      py_rc=1
    fi
    ((py_rc == 0)) && end ok || end FAILED
  fi
fi

if wants sanitize && ((prepared)) && has_time sanitize; then
  begin sanitize
  san_rc=0
  if command -v compute-sanitizer >/dev/null; then
    # Small cases that reach every kernel: elementwise, the four sums (tree,
    # atomics, CUB), both trainer paths and predict, the host-data pipeline.
    # Under a sanitizer a kernel runs 10-100x slower.
    declare -A subset=(
      [elementwise_gpu_test]="GpuTransform.FusedEqualsUnfusedBitForBit:GpuTransform.FourInputsWithADeviceLambdaInPlace:GpuTransform.GraphCapturedCallReplays"
      [reduce_gpu_test]="GpuSum.IntegersExactAndEmptyIsZero:GpuSum.SpecialValuesPropagate:GpuTransformReduce.*:GpuReduce.IntegerMinMaxWithAtomics"
      [train_gpu_test]="GpuFit.ShortFitOnBothPathsForTheSanitizers:GpuPredict.*:CudaResources.WorkspaceOverloadsAllocateNothing"
      [host_data_gpu_test]="HostData.ShortPipelineForTheSanitizers"
    )
    # One after another (seven at once on one GPU contend for it), each under
    # its cap and the stage's. A tool that does not get as far as starting the
    # program (no GoogleTest line in its output) is "not run", not a failure
    # of fusekit's.
    for tool in memcheck racecheck; do
      for p in elementwise_gpu_test reduce_gpu_test train_gpu_test host_data_gpu_test; do
        [ "$tool" = racecheck ] && [ "$p" = elementwise_gpu_test ] && continue  # no shared memory there
        runnable "$p" || { san_rc=1; continue; }
        k="$tool.$p"
        bounded 60 env LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" compute-sanitizer --tool "$tool" \
          --error-exitcode 3 "$bin/$p" --gtest_filter="${subset[$p]}" > "$tmp/$k.txt" 2>&1
        rc=$?
        { echo "=== $k (rc $rc)"; cat "$tmp/$k.txt"; } >> "$log"
        if ((rc == 125)); then
          say "$k: $(rc_word $rc)"
          san_rc=1
        elif ((rc != 0)) && ! grep -q '^\[==========\] Running' "$tmp/$k.txt"; then
          say "$k: not run (the tool did not start the program: $(grep -v '^\s*$' "$tmp/$k.txt" | tail -n 1))"
        else
          say "$k: $(rc_word $rc); $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp/$k.txt" | tail -n 1); $(grep -E '^\[  (PASSED|FAILED)' "$tmp/$k.txt" | tr '\n' ' ')"
          ((rc == 0)) || san_rc=1
        fi
      done
    done
  else
    say "compute-sanitizer not found"
    san_rc=1
  fi
  ((san_rc == 0)) && end ok || end FAILED
fi

if wants peers && has_time peers; then
  begin peers
  peers_rc=0
  # Each peer writes its JSON run by run, so one stopped by its limit keeps what it measured.
  for p in sum train host_pipeline; do
    extra=()
    [ "$p" = train ] && extra=(--budget 3)  # seconds per fit: long loops compare per iteration
    bounded 55 python3 "bench/peers/$p.py" --gpu-only --out "$res/peer_$p.json" "${extra[@]}" >> "$log" 2>&1
    rc=$?
    runs=$(grep -c '"run_type"' "$res/peer_$p.json" 2>/dev/null)
    say "peer $p: $(rc_word $rc), ${runs:-0} runs$( ((${runs:-0} > 0)) || echo ' (see log: a stack missing?)')"
    ((rc == 0)) || peers_rc=1
  done
  # The tables against fusekit: this call's benches, or call 1's still on this machine.
  if compgen -G "$res/*_bench.json" >/dev/null; then
    python3 bench/compare.py "$res" >> "$summary" 2>> "$log"
  elif compgen -G "$build/last-call-1/*.json" >/dev/null; then
    cp "$res"/peer_*.json "$build/last-call-1/" 2>/dev/null
    python3 bench/compare.py "$build/last-call-1" >> "$summary" 2>> "$log"
  fi
  ((peers_rc == 0)) && end ok || end FAILED
fi

pack
say ""
say "stage times: $(IFS=';'; echo "${stage_times[*]}")"
say "[$(elapsed)s] done: $out ($([ $status -eq 0 ] && echo 'all checks passed' || echo 'SOME CHECKS FAILED'))"
say "status: $status"
exit $status
