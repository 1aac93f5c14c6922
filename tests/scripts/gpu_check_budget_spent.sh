#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu/check.sh, the one command, with its budget spent: every stage
# says it is skipped, at once, and the three files that come back are written
# (ctest scripts.gpu_check_with_its_budget_spent). Usage: gpu_check_budget_spent.sh WORK_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$1
rm -rf "$work"
bash "$here/../../scripts/gpu/check.sh" --budget 0 --bundle "$work/no-bundle" --out "$work/out"
echo "files: $(ls "$work/out" | tr '\n' ' ')"
