# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/gpu/bundle.sh and scripts/gpu/check.sh: what the GPU
# machine runs, where each program sits in a build tree, and the hash that
# says whether prebuilt programs were built from this tree.

# The programs of the GPU stages: the GPU tests, the benches, the examples.
FUSEKIT_GPU_TESTS=(elementwise_gpu_test reduce_gpu_test train_gpu_test host_data_gpu_test fastmath_gpu_test
                   snippets_test nccl_gpu_test)
FUSEKIT_GPU_BENCHES=(elementwise_bench reduce_bench train_bench host_pipeline_bench)
FUSEKIT_GPU_EXAMPLES=(00_hidden_layer 01_reduce_sum 02_linear_association 03_host_data)

# fusekit_program_path BUILD NAME: the program's path in a CMake build tree.
fusekit_program_path() {
  case "$2" in
    *_bench) echo "$1/bench/$2" ;;
    [0-9][0-9]_*) echo "$1/examples/$2/$2" ;;
    *) echo "$1/tests/$2" ;;
  esac
}

# fusekit_source_files DIR: the files the programs are built from (sources,
# headers, CMake files), one per line, sorted: exactly those that travel with a
# copy of the working tree, which git names (tracked, and untracked but not
# ignored: an in-source build folder never travels, so it is never listed).
# Without git (a copied tree), the list that scripts/gpu/bundle.sh recorded.
fusekit_source_files() {
  if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$1" && git ls-files --cached --others --exclude-standard -- include tests bench examples cmake CMakeLists.txt |
       grep -E '(\.(cu|cuh|hpp|cpp|h|cmake|in)|CMakeLists\.txt)$' | grep -v '^bench/results/' | LC_ALL=C sort -u |
       while IFS= read -r f; do [ -f "$1/$f" ] && echo "$f"; done)
  elif [ -n "${FUSEKIT_SOURCE_LIST:-}" ] && [ -f "$FUSEKIT_SOURCE_LIST" ]; then
    cat "$FUSEKIT_SOURCE_LIST"
  else
    echo "fusekit_source_files: no git and no recorded list (FUSEKIT_SOURCE_LIST)" >&2
    return 1
  fi
}

# fusekit_source_hash DIR: a hash of the listed files' names and contents, the
# same wherever the tree was copied; a listed file that is missing changes it.
fusekit_source_hash() {
  local list
  list=$(fusekit_source_files "$1") || { echo "no-source-list"; return 0; }
  (cd "$1" && while IFS= read -r f; do
     if [ -f "$f" ]; then sha256sum "$f"; else echo "missing  $f"; fi
   done <<< "$list" | sha256sum | cut -c1-16)
}
