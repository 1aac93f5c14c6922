#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu/programs.sh's source hash names exactly the files that travel with a
# copy of the working tree (git's tracked and untracked-but-not-ignored files):
#  - a copy without git, hashed through the recorded list, gives the tree's hash;
#  - an ignored in-source build folder changes nothing, in the tree or the copy;
#  - an edited or a missing listed file changes the hash.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$src/scripts/gpu/programs.sh"
fail() { echo "FAIL: $*"; exit 1; }

git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 0; }
fusekit_source_files "$src" > "$work/list"
[ "$(wc -l < "$work/list")" -gt 50 ] || fail "only $(wc -l < "$work/list") files listed"
grep -qx 'include/fusekit/reduce.cuh' "$work/list" || fail "include/fusekit/reduce.cuh is not listed"
grep -q '^bench/results/' "$work/list" && fail "bench/results is listed"
want=$(fusekit_source_hash "$src")

# The copy, as the GPU machine gets it: the listed files, no .git.
mkdir "$work/copy"
(cd "$src" && while IFS= read -r f; do mkdir -p "$work/copy/$(dirname "$f")"; cp "$f" "$work/copy/$f"; done < "$work/list")
export FUSEKIT_SOURCE_LIST="$work/list"
got=$(fusekit_source_hash "$work/copy")
[ "$got" = "$want" ] || fail "the copy hashes to $got, the tree to $want"

# An in-source build folder (git-ignored) in the copy: it would not travel, so it must not count.
mkdir -p "$work/copy/examples/00_hidden_layer/build"
echo 'set(X 1)' > "$work/copy/examples/00_hidden_layer/build/stale.cmake"
[ "$(fusekit_source_hash "$work/copy")" = "$want" ] || fail "an ignored build folder changed the hash"

# An edited listed file changes it; so does a missing one.
echo '// edited' >> "$work/copy/include/fusekit/reduce.cuh"
[ "$(fusekit_source_hash "$work/copy")" != "$want" ] || fail "an edited header left the hash unchanged"
rm "$work/copy/include/fusekit/reduce.cuh"
[ "$(fusekit_source_hash "$work/copy")" != "$want" ] || fail "a missing header left the hash unchanged"
echo "PASS: $(wc -l < "$work/list") files, hash $want"
