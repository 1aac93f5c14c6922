# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/gpu-bundle.sh and scripts/gpu-check.sh: what the GPU
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

# fusekit_source_hash DIR: a hash of every file the programs are built from
# (sources, headers, CMake files), the same wherever the tree was copied.
fusekit_source_hash() {
  (cd "$1" && find include tests bench examples cmake CMakeLists.txt -type f \
      \( -name '*.cu' -o -name '*.cuh' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.h' -o -name 'CMakeLists.txt' \
         -o -name '*.cmake' -o -name '*.in' \) -not -path 'bench/results/*' -print0 |
     LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}
