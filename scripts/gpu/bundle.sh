#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Packs what a bare GPU machine (CUDA, CMake, Python; no network, no test
# libraries) needs to run scripts/gpu/check.sh, into one folder to carry:
#
#   scripts/gpu/bundle.sh [--sources-only] [DIR]      (default: .gpu-bundle, ignored by git)
#
#   DIR/prebuilt.tar.xz  the GPU stages' programs (scripts/gpu/programs.sh), built
#                        here for sm_90 from this tree, with the shared libraries
#                        the image may lack (libcudart, libbenchmark, libgomp) and a
#                        MANIFEST (commit, source hash, each program's needs);
#                        SOURCE_FILES, the hashed files (git ls-files), also beside it;
#                        gpu/check.sh runs them when the tree's hash matches.
#   DIR/googletest/      GoogleTest, from Debian's googletest package (/usr/src/googletest)
#   DIR/benchmark/       Google Benchmark, the upstream tarball of Debian's source package
#   DIR/python/          the Python package's wheel, built here for sm_90 for the image's
#                        Python (3.12: FUSEKIT_BUNDLE_PYTHON, else python3.12 or pyenv's)
#                        and for this machine's python3 when that is another version
#                        (scripts/gpu/rehearse.sh installs it here); gpu/check.sh's
#                        python stage installs the one for its python3; python/tools/
#                        holds pytest's wheels, for a python3 without pytest
#
# The sources are the fallback: gpu/check.sh builds from them (-DFUSEKIT_DEPS_DIR)
# when the programs are missing, stale or cannot load there. cuBLAS and NCCL
# are too large to carry (cuBLASLt alone is 540 MB): the image's are used, and
# gpu/check.sh finds them (the toolkit's folders or the pip wheels). Versions
# are this machine's: GoogleTest 1.12 and Google Benchmark 1.7.1 on Debian 12.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. scripts/gpu/programs.sh
prebuilt=1
if [ "${1:-}" = "--sources-only" ]; then
  prebuilt=0
  shift
fi
dest=${1:-.gpu-bundle}
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

if [ ! -f /usr/src/googletest/CMakeLists.txt ]; then
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends googletest
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Debian's source package of the installed benchmark version, through a private
# deb-src list (the system's apt configuration is left as it is).
version=$(dpkg-query -W -f='${Version}' libbenchmark-dev 2>/dev/null || true)
. /etc/os-release
mkdir -p "$work/parts" "$work/lists/partial" "$work/src"
cat > "$work/parts/src.sources" <<SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: ${VERSION_CODENAME}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_opts=(-o "APT::Sandbox::User=root" -o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$work/parts" -o "Dir::State::Lists=$work/lists")
apt-get "${apt_opts[@]}" update -q >/dev/null
(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "benchmark${version:+=$version}" >/dev/null 2>&1)
tarball=$(ls "$work"/src/benchmark_*.orig.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "gpu-bundle: could not download Google Benchmark's source package" >&2; exit 1; }

rm -rf "$dest/googletest" "$dest/benchmark"
mkdir -p "$dest/googletest" "$dest/benchmark"
cp -r /usr/src/googletest/. "$dest/googletest/"
tar -xf "$tarball" -C "$dest/benchmark" --strip-components=1
{
  echo "googletest: $(dpkg-query -W -f='${Version}' googletest 2>/dev/null || echo unknown) (/usr/src/googletest)"
  echo "benchmark: $(basename "$tarball")"
} > "$dest/VERSIONS"
echo "gpu-bundle: $dest ($(du -sh "$dest" | cut -f1)): $(tr '\n' ';' < "$dest/VERSIONS")"
((prebuilt)) || exit 0

# ---- the Python package's wheels, built here for sm_90 ---------------------------
image_python=""
for py in ${FUSEKIT_BUNDLE_PYTHON:-} python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3; do
  if "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1; then
    image_python=$py
    break
  fi
done
rm -rf "$dest/python"
mkdir -p "$dest/python"
# pytest and what it needs (pure Python), for an image without it (the check installs them there only then).
mkdir -p "$dest/python/tools"
python3 -m pip download -q --only-binary=:all: -d "$dest/python/tools" pytest > "$work/pytest.log" 2>&1 ||
  echo "gpu-bundle: pytest's wheels could not be downloaded; the check uses the image's pytest" >&2
for py in "$image_python" python3; do
  [ -n "$py" ] || { echo "gpu-bundle: no Python 3.12 here for the image's wheel (set FUSEKIT_BUNDLE_PYTHON)" >&2; continue; }
  tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  compgen -G "$dest/python/fusekit-*-$tag-*.whl" >/dev/null && continue
  t0=$(date +%s)
  if CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$py" -m pip wheel -q --no-deps -w "$dest/python" ./python > "$work/wheel-$tag.log" 2>&1; then
    echo "gpu-bundle: wheel for $tag in $(($(date +%s) - t0)) s: $(cd "$dest/python" && ls -s fusekit-*-"$tag"-*.whl)"
  else
    echo "gpu-bundle: the wheel for $tag failed; gpu/check.sh's python stage will say 'not run'" >&2
    tail -n 20 "$work/wheel-$tag.log" >&2
  fi
done

# ---- the programs, built here --------------------------------------------------
build=${FUSEKIT_PACK_BUILD:-build-gpu-pack}
export PATH="/usr/local/cuda/bin:${PATH}"
cfg=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
     -DFUSEKIT_BUILD_TESTS=ON -DFUSEKIT_BUILD_BENCHMARKS=ON -DFUSEKIT_BUILD_EXAMPLES=ON)
command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ] && cfg+=(-G Ninja)
cmake "${cfg[@]}" > "$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; exit 1; }
nccl_line=$(grep -o 'fusekit: NCCL.*' "$work/configure.log" | head -n 1)
programs=()
for p in "${FUSEKIT_GPU_TESTS[@]}" "${FUSEKIT_GPU_BENCHES[@]}" "${FUSEKIT_GPU_EXAMPLES[@]}"; do
  [ "$p" = nccl_gpu_test ] && [[ "$nccl_line" != *"NCCL found"* ]] && continue
  programs+=("$p")
done
t0=$(date +%s)
cmake --build "$build" -j "$(nproc)" --target "${programs[@]}"
echo "gpu-bundle: built ${#programs[@]} programs in $(($(date +%s) - t0)) s"

stage="$work/pack"
mkdir -p "$stage/bin" "$stage/lib"
for p in "${programs[@]}"; do cp "$(fusekit_program_path "$build" "$p")" "$stage/bin/"; done
# The shared libraries to carry: the CUDA runtime, Google Benchmark and OpenMP's
# runtime, as this machine resolves them (the C and C++ libraries, cuBLAS and
# NCCL are the image's).
for lib in $(ldd "$stage"/bin/* 2>/dev/null | awk '$1 ~ /^(libcudart|libbenchmark|libgomp)\.so/ && $3 ~ /^\// {print $3}' | sort -u); do
  cp -L "$lib" "$stage/lib/"
done
{
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(nproc) cores"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- include tests bench examples cmake CMakeLists.txt 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "source hash: $(fusekit_source_hash .)"
  echo "nvcc: $(nvcc --version | grep -o 'release [0-9.]*')"
  echo "host compiler: $(c++ --version | head -n 1)"
  echo "${nccl_line:-fusekit: NCCL: no line in the configure log}"
  echo "carried libraries: $(cd "$stage/lib" && ls | tr '\n' ' ')"
  for b in "$stage"/bin/*; do
    echo "$(basename "$b"): $(stat -c %s "$b") bytes; needs $(readelf -d "$b" | awk -F'[][]' '/NEEDED/ {printf "%s ", $2}')"
  done
} > "$stage/MANIFEST"
fusekit_source_hash . > "$stage/SOURCE_HASH"
# The hashed files, by name: gpu/check.sh hashes the same list on a copied tree without git.
fusekit_source_files . > "$stage/SOURCE_FILES"
cp "$stage/SOURCE_FILES" "$dest/SOURCE_FILES"
tar -C "$stage" -cJf "$dest/prebuilt.tar.xz" .
echo "gpu-bundle: $dest/prebuilt.tar.xz ($(du -h "$dest/prebuilt.tar.xz" | cut -f1); $(du -sh "$stage" | cut -f1) unpacked), source hash $(cat "$stage/SOURCE_HASH")"
echo "gpu-bundle: $dest in all: $(du -sh "$dest" | cut -f1)"
