#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Rehearses the GPU machine's one command here, as that machine will see it:
# GoogleTest and Google Benchmark hidden (headers, libraries, CMake packages
# and sources, behind empty mounts in a private mount namespace), the bundle
# of scripts/gpu/bundle.sh in .gpu-bundle, and the files in a folder of their
# own, as the device tool's $OUT. With --plant, as a rehearsal should: a
# program that cannot load, a bench that crashes mid-JSON and a test that
# outlives its stage; then it checks that the others still ran from the
# prebuilt programs (no rebuild), that the crashed bench's whole run was kept,
# that the test stage stopped at its cap and the next stage ran, and that at
# most 8 files came back. Prints the stage times.
#
#   scripts/gpu/rehearse.sh [OUT]          (default: /tmp/gpu-rehearsal; needs root for unshare)
#   scripts/gpu/rehearse.sh OUT --source   the same, building the programs from source
#                                          (the fallback when the prebuilt ones cannot run),
#                                          with a budget that lets 2 cores finish, to time it
#
# Without a GPU the GPU cases skip, and the benches run a few CPU cases at a
# small size instead of their GPU runs, so that every file still gets written.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${1:-/tmp/gpu-rehearsal}
extra=()
if [ "${2:-}" = "--source" ]; then
  # Two cores build for longer than the GPU machine's 16: a budget that lets the build finish, to time it.
  extra=(--no-prebuilt --hide-system-packages --budget 1500)
  export FUSEKIT_BUILD_CAP=1400
  rm -rf build-gpu/source
fi
[ -d .gpu-bundle ] || { echo "gpu-rehearse: no .gpu-bundle (bash scripts/gpu/bundle.sh)" >&2; exit 2; }
if ! nvidia-smi -L >/dev/null 2>&1; then
  extra+=(--bench-filter '^cpu/((copy|fused|unfused)/|(read|cub|deterministic)/f32/|plain_gram/f64/9x9x9)'
          --bench-sizes 2^16)
fi
rm -rf "$out"
mkdir -p "$out/check"
hidden=(/usr/include/gtest /usr/include/gmock /usr/include/benchmark /usr/src/googletest
        /usr/lib/x86_64-linux-gnu/cmake/GTest /usr/lib/x86_64-linux-gnu/cmake/benchmark)
hidden+=(/usr/lib/x86_64-linux-gnu/libgtest*.a /usr/lib/x86_64-linux-gnu/libgmock*.a
         /usr/lib/x86_64-linux-gnu/libbenchmark*)
unshare -m --propagation private bash -s -- "$out" "${extra[@]}" <<SCRIPT
set -uo pipefail
out=\$1
shift
empty=\$(mktemp -d)
for p in ${hidden[*]}; do
  [ -e "\$p" ] || continue
  if [ -d "\$p" ]; then mount --bind "\$empty" "\$p"; else mount --bind /dev/null "\$p"; fi
done
[ ! -s /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian ] && [ ! -e /usr/include/gtest/gtest.h ] &&
  echo "gpu-rehearse: GoogleTest and Google Benchmark hidden"
# A sanitizer that refuses to start, where none is installed: its runs must
# read "not run", not a failure of fusekit's.
if ! command -v compute-sanitizer >/dev/null; then
  mkdir -p "\$out/fake-tools"
  printf '#!/bin/sh\necho "========= Error: no device the tool can attach to (planted)"\nexit 1\n' > "\$out/fake-tools/compute-sanitizer"
  chmod +x "\$out/fake-tools/compute-sanitizer"
  export PATH="\$out/fake-tools:\$PATH"
  fake_sanitizer=1
else
  fake_sanitizer=0
fi
start=\$(date +%s)
bash scripts/gpu/check.sh --plant --out "\$out/check" "\$@" > "\$out/check.console" 2>&1
rc=\$?
files=\$(ls "\$out/check" | wc -l)
echo "check: rc \$rc in \$((\$(date +%s) - start)) s; \$files files: \$(ls "\$out/check" | tr '\n' ' ')"
summary="\$out/check/summary-all.txt"
grep -E "^stage times:|^\[[0-9]+s\] done" "\$summary"
bad=0
expect() {  # expect REGEX WHAT
  if grep -Eq "\$1" "\$summary"; then echo "rehearsal: \$2: yes"; else echo "rehearsal: \$2: NO"; bad=1; fi
}
expect '^host_data_gpu_test: not run [(]cannot load: libfusekit_planted' "the unloadable program is named and skipped"
expect '^elementwise_gpu_test: ok' "the programs that load ran as prebuilt"
expect 'train_bench.json: closed after 1 runs' "the crashed bench's whole run is kept"
expect '^bench train_bench: FAILED [(]rc [0-9]+[)], 1 runs' "the crash is reported with what it wrote"
expect '^fastmath_gpu_test: FAILED [(]out of time[)]' "a test past its stage's cap is stopped"
expect '^[[][0-9]+s[]] stage test: FAILED in (8[5-9]|9[0-5])s' "the test stage ended at its 90 s cap"
expect '^bench elementwise_bench: ok' "the stage after it still ran"
expect '^python tests/test_gpu.py: ok' "the Python package's wheel installed and its GPU tests ran"
expect '^python example train.py 2000 64 8: ok' "the Python examples ran on the installed wheel"
expect '^[[][0-9]+s[]] stage peers: ' "the last stage was reached"
if ((fake_sanitizer)); then
  expect '^memcheck.reduce_gpu_test: not run [(]the tool did not start the program' "a sanitizer that does not start is not run"
fi
if grep -q 'prepare: the prebuilt programs are of another tree' "\$summary"; then
  echo "rehearsal: the prebuilt programs are not this tree's (bash scripts/gpu/bundle.sh)"; bad=1
fi
tar -tf "\$out/check/results-all.tar" | grep 'train_bench.json' > /dev/null || { echo "rehearsal: results-all.tar lacks train_bench.json"; bad=1; }
((files <= 8)) || { echo "rehearsal: \$files files came back, more than 8"; bad=1; }
exit \$bad
SCRIPT
