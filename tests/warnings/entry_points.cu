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
                           fusekit::reduce_sum_workspace_bytes<float, double>(n, fusekit::reduce_algorithm::run_to_run);
  if (need <= workspace_bytes) {
    fusekit::reduce_sum(fusekit::cuda{stream}, in, f + n, fusekit::reduce_algorithm::deterministic, ws);
    fusekit::reduce_sum(fusekit::cuda{stream}, in, d, fusekit::reduce_algorithm::run_to_run, ws);
  }
  fusekit::cuda const pooled{::cuda::stream_ref(stream)};
  fusekit::tuning t = fusekit::tuning_for(9, 0);
  t.train.batch_iterations = 8;
  if (fusekit::sum_workspace_bytes<float>(n, fusekit::reduce_algorithm::deterministic) <= workspace_bytes) {
    (void)fusekit::sum(pooled.with(t), in, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<float>{},
                       ws);
    (void)fusekit::transform_reduce(pooled, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<double>{},
                                    fusekit::weigh{}, ws, in, in);
    fusekit::transform_reduce_sum(pooled, d, fusekit::reduce_algorithm::deterministic, fusekit::weigh{}, ws, in, in);
  }
  fusekit::gd_options const o;
  if (fusekit::fit_workspace_bytes<float>(4, 2, 3, o) <= workspace_bytes) {
    (void)fusekit::fit(pooled, fusekit::matrix<const float>(f, 4, 2), fusekit::matrix<const float>(f + 8, 4, 3),
                       fusekit::matrix<float>(f + 20, 3, 2), o, ws);
  }
}
