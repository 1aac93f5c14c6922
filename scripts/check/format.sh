#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that every C++ and CUDA file of fusekit is formatted by .clang-format
# (clang-format 14, the version the style was written for; another version
# formats some constructs differently, so the check skips with exit code 77).
#   scripts/check/format.sh [--fix]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tool=""
for name in clang-format-14 clang-format; do
  if command -v "$name" >/dev/null && "$name" --version | grep -q "version 14\."; then tool="$name"; break; fi
done
if [ -z "$tool" ]; then
  echo "skipped: clang-format 14 not found (scripts/tools/install_deps.sh installs it)"
  exit 77
fi
mapfile -t files < <(git ls-files 'include/*.hpp' 'include/*.cuh' 'tests/*.hpp' 'tests/*.cuh' 'tests/*.cpp' 'tests/*.cu' \
  'bench/*.hpp' 'bench/*.cuh' 'bench/*.cpp' 'bench/*.cu' 'examples/*.hpp' 'examples/*.cuh' 'examples/*.cpp' 'examples/*.cu' \
  'python/*.hpp' 'python/*.cpp' 'python/*.cu' \
  2>/dev/null || true)
if [ "${#files[@]}" -eq 0 ]; then
  mapfile -t files < <(find include tests bench examples python/src \( -name '*.hpp' -o -name '*.cuh' -o -name '*.cpp' -o -name '*.cu' \) | sort)
fi
if [ "${1:-}" = "--fix" ]; then
  "$tool" -i "${files[@]}"
  echo "formatted ${#files[@]} files"
  exit 0
fi
if "$tool" --dry-run --Werror "${files[@]}"; then
  echo "${#files[@]} files formatted as .clang-format says"
else
  echo "some files differ from .clang-format: run scripts/check/format.sh --fix"
  exit 1
fi
