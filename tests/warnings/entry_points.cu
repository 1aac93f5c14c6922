// SPDX-License-Identifier: Apache-2.0
// Every entry point under nvcc, for both policies, with the GPU-only overloads
// (see entry_points.hpp).
#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include "entry_points.hpp"

void gpu_entry_points(float* f, double* d, std::uint8_t* u8, __half* h, std::int32_t* i32, std::size_t n,
                      std::byte* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  fusekit::test::entry_points(fusekit::cuda{stream}, f, d, u8, h, i32, n);
  fusekit::test::entry_points(fusekit::cpu{}, f, d, u8, h, i32, n);
  ::cuda::std::span<const float> const in(f, n);
  ::cuda::std::span<std::byte> const ws(workspace, workspace_bytes);
  std::size_t const need = fusekit::reduce_sum_workspace_bytes<float>(n, fusekit::reduce_algorithm::deterministic) +
                           fusekit::reduce_sum_workspace_bytes<float, double>(n, fusekit::reduce_algorithm::cub);
  if (need <= workspace_bytes) {
    fusekit::reduce_sum(fusekit::cuda{stream}, in, f + n, fusekit::reduce_algorithm::deterministic, ws);
    fusekit::reduce_sum(fusekit::cuda{stream}, in, d, fusekit::reduce_algorithm::cub, ws);
  }
}
