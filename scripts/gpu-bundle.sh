#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Packs the sources of GoogleTest and Google Benchmark into one folder that a
# bare GPU machine (CUDA, CMake, no network, no test libraries) can build the
# tests and benches from:
#
#   scripts/gpu-bundle.sh [DIR]        (default: .gpu-bundle, ignored by git)
#
#   DIR/googletest/   GoogleTest, from Debian's googletest package (/usr/src/googletest)
#   DIR/benchmark/    Google Benchmark, the upstream tarball of Debian's source package
#
# Sources rather than libraries: a library built here may not link against the
# GPU image's system libraries. Then configure with -DFUSEKIT_DEPS_DIR=DIR
# (scripts/gpu-check.sh --bundle DIR does). Versions are this machine's:
# GoogleTest 1.12 and Google Benchmark 1.7.1 on Debian 12.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
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

rm -rf "$dest"
mkdir -p "$dest/googletest" "$dest/benchmark"
cp -r /usr/src/googletest/. "$dest/googletest/"
tar -xf "$tarball" -C "$dest/benchmark" --strip-components=1
{
  echo "googletest: $(dpkg-query -W -f='${Version}' googletest 2>/dev/null || echo unknown) (/usr/src/googletest)"
  echo "benchmark: $(basename "$tarball")"
} > "$dest/VERSIONS"
echo "gpu-bundle: $dest ($(du -sh "$dest" | cut -f1)): $(tr '\n' ';' < "$dest/VERSIONS")"
