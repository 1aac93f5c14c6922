#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Rehearses the GPU machine's two calls here, as that machine will see them:
# GoogleTest and Google Benchmark hidden (headers, libraries, CMake packages
# and sources, behind empty mounts in a private mount namespace), the bundle
# of scripts/gpu/bundle.sh in .gpu-bundle, and each call's files in a folder
# of its own, as the device tool's $OUT. Then prints each call's stage times.
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
mkdir -p "$out/call1" "$out/call2"
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
for call in 1 2; do
  start=\$(date +%s)
  bash scripts/gpu/check.sh --call \$call --out "\$out/call\$call" "\$@" > "\$out/call\$call.console" 2>&1
  echo "call \$call: rc \$? in \$((\$(date +%s) - start)) s; \$(ls "\$out/call\$call" | wc -l) files: \$(ls "\$out/call\$call" | tr '\n' ' ')"
  grep -E "^stage times:|^\[[0-9]+s\] done" "\$out/call\$call/summary-\$call.txt"
done
SCRIPT
