#!/usr/bin/env bash
# What one GPU sum costs to compile: kernel entries in the PTX and `nvcc -c`
# time of a translation unit that calls fusekit::sum(fusekit::cuda{s}, x)
# against one that calls cub::DeviceReduce::Sum (same flags, sm_90), the two
# compiled alternately, median of REPEATS (3). Also counts the backends'
# run_* entry points in include/. Usage: bench/compile/measure.sh [INCLUDE_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
include=${1:-$here/../../include}
repeats=${REPEATS:-3}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
flags=(-std=c++20 -O3 -arch=sm_90 -I "$include")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

entries() { "$nvcc" "${flags[@]}" --ptx "$here/$1.cu" -o "$work/$1.ptx" && grep -c '^\.\(visible \)\?\.entry' "$work/$1.ptx"; }
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$nvcc" "${flags[@]}" -c "$here/$1.cu" -o "$work/$1.o"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

overloads=$(grep -rhE '^[A-Za-z_:<>]+ run_[a-z_]+\(' "$include" | grep -vc ' run_pipeline(')
echo "run_* entry points in $include: $overloads"
echo "PTX kernel entries: fusekit $(entries sum_fusekit), cub $(entries sum_cub)"
: >"$work/f"; : >"$work/c"
for _ in $(seq "$repeats"); do
  seconds sum_fusekit >>"$work/f"
  seconds sum_cub >>"$work/c"
done
f=$(median <"$work/f"); c=$(median <"$work/c")
echo "nvcc -c seconds (median of $repeats): fusekit $f, cub $c, ratio $(echo "scale=3; $f / $c" | bc)"
echo "samples fusekit: $(tr '\n' ' ' <"$work/f")| cub: $(tr '\n' ' ' <"$work/c")"
