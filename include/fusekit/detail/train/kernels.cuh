// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The trainer's kernels: each is indices around a body the CPU tests run —
/// the power iteration, the Cholesky factor, the per-output fit, step and CGLS rows, and
/// predict's rows, on a block_team or per thread (detail/train/power_iteration.hpp,
/// detail/train/output_bodies.hpp, detail/train/predict.hpp).

#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/team/block_team.cuh>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/detail/train/conjugate_gradient.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/detail/train/output_bodies.hpp>
#include <fusekit/detail/train/power_iteration.hpp>
#include <fusekit/detail/train/predict.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// λ of the symmetric L × L matrix A (of M^½ A M^½ with `jacobi`) into
/// *lambda, by one block of up to 1024 threads (train_tuning's
/// power_iteration_max_threads); v and u are L doubles of scratch each. The
/// launch bound holds ptxas to the 64 registers a 1024-thread block can have,
/// so that a larger L never makes the launch fail.
template <class T>
__global__ void __launch_bounds__(1024)
    power_iteration_kernel(const T* A, std::int64_t L, double* v, double* u, double* lambda, bool jacobi) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  double const result = symmetric_power_iteration(team, A, L, v, u, jacobi);
  if (team.leader()) { *lambda = result; }
}

/// The Cholesky preconditioner's factor of A (cholesky_factor_body,
/// detail/train/cholesky.hpp) by one block of up to 1024 threads: G (L × L)
/// and s (L), then δ and the smallest pivot in out[0] and out[1].
template <class T>
__global__ void __launch_bounds__(1024)
    cholesky_factor_kernel(const T* A, std::int64_t L, double* G, double* s, double* out) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  cholesky_outcome const result = cholesky_factor_body(team, A, L, G, s);
  if (team.leader()) {
    out[0] = result.shift;
    out[1] = result.smallest_pivot;
  }
}

/// Every iteration of output blockIdx.x (Gram formulation), in one block
/// (single_launch_body, detail/train/output_bodies.hpp).
template <class T>
__global__ void fit_single_launch_kernel(const T* A, const T* B, T* W, std::int64_t L, descent_params<T> p,
                                         output_report* reports, cholesky_view<T> cholesky, best_iterate_view<T> kept) {
  __shared__ double scratch[block_team_scratch];
  extern __shared__ double shared[];
  single_launch_body(block_team(scratch), static_cast<std::int64_t>(blockIdx.x), A, B, W, L, p, reports,
                     reinterpret_cast<T*>(shared), cholesky, kept);
}

/// The cuBLAS path's per-output state, kept on the device between launches
/// (begin_output_body, detail/train/output_bodies.hpp).
template <class T>
__global__ void begin_outputs_kernel(descent_state<T>* states, T* W, T* previous, T* point, const T* A, const T* B,
                                     const T* Y, std::int64_t K, std::int64_t N, std::int64_t L, bool gram,
                                     descent_params<T> p, best_iterate_view<T> kept, const double* y2_total) {
  __shared__ double scratch[block_team_scratch];
  begin_output_body(block_team(scratch), static_cast<std::int64_t>(blockIdx.x), states, W, previous, point, A, B, Y, K,
                    N, L, gram, p, kept, y2_total);
}

/// Each output's y_nᵀy_n over this rank's rows (target_square_sum), for a fit across GPUs.
template <class T>
__global__ void target_square_sums_kernel(const T* Y, std::int64_t K, std::int64_t N, double* out) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  auto const n = static_cast<std::int64_t>(blockIdx.x);
  double const y2 = target_square_sum(team, Y, K, N, n);
  if (team.leader()) { out[n] = y2; }
}

/// Each running output's qᵀq over this rank's rows (cgls_square_sum_body), for a fit across GPUs.
template <class T>
__global__ void cgls_square_sums_kernel(const descent_state<T>* states, const T* Q, std::int64_t K, T* out) {
  __shared__ double scratch[block_team_scratch];
  cgls_square_sum_body(block_team(scratch), static_cast<std::int64_t>(blockIdx.x), states, Q, K, out);
}

/// One step of every running output (step_output_body, detail/train/output_bodies.hpp).
/// `running` (when not null) counts the outputs that go on.
template <class T>
__global__ void step_outputs_kernel(descent_state<T>* states, T* W, T* previous, T* point, const T* G, const T* A,
                                    const T* B, bool gram, std::int64_t L, descent_params<T> p,
                                    cholesky_view<T> cholesky, best_iterate_view<T> kept, int* running) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  bool const goes_on = step_output_body(team, static_cast<std::int64_t>(blockIdx.x), states, W, previous, point, G, A,
                                        B, gram, L, p, cholesky, kept);
  if (team.leader() && goes_on && running != nullptr) { atomicAdd(running, 1); }
}

/// CGLS's update of every running output's rows residual (cgls_rows_body,
/// detail/train/output_bodies.hpp).
template <class T>
__global__ void cgls_rows_kernel(descent_state<T>* states, T* W, const T* point, const T* Q, T* R, const T* Y,
                                 std::int64_t K, std::int64_t N, std::int64_t L, const T* q2_total) {
  __shared__ double scratch[block_team_scratch];
  cgls_rows_body(block_team(scratch), static_cast<std::int64_t>(blockIdx.x), states, W, point, Q, R, Y, K, N, L,
                 q2_total);
}

/// Threads per output in the iteration kernels: a warp per 32 unknowns, up to the tuning's cap.
inline int train_block_size(std::int64_t L, int most) {
  std::int64_t const warps = (L + warp_threads - 1) / warp_threads;
  std::int64_t const cap = most / warp_threads;
  return static_cast<int>(warp_threads * (warps < cap ? warps : cap));
}

/// predict where one row of X does not fit the staging tile: a thread per element.
template <class T>
__global__ void predict_kernel(const T* X, const T* W, const T* b, T* Y_hat, std::int64_t K, std::int64_t L,
                               std::int64_t N) {
  for (std::int64_t e = global_thread_id(); e < K * N; e += grid_stride()) {
    Y_hat[e] = plus_intercept(predict_at(X, W, L, e / N, e % N), b, e % N);
  }
}

/// Bytes of shared memory a predict block stages rows of X in.
inline constexpr std::int64_t predict_tile_bytes = 16 * 1024;

/// Rows of X a predict block stages at once (0: one row does not fit).
template <class T>
constexpr std::int64_t predict_tile_rows(std::int64_t L) {
  return predict_tile_bytes / (predict_tile_stride(L) * static_cast<std::int64_t>(sizeof(T)));
}

/// predict, `rows` rows of X per block at a time, staged in shared memory
/// (predict_rows_body): X read and Y_hat written in consecutive addresses.
template <class T>
__global__ void predict_rows_kernel(const T* X, const T* W, const T* b, T* Y_hat, std::int64_t K, std::int64_t L,
                                    std::int64_t N, std::int64_t rows) {
  __shared__ double scratch[block_team_scratch];
  __shared__ double tile[predict_tile_bytes / sizeof(double)];
  block_team const team(scratch);
  for (std::int64_t k0 = blockIdx.x * rows; k0 < K; k0 += std::int64_t{gridDim.x} * rows) {
    predict_rows_body(team, k0, K - k0 < rows ? K - k0 : rows, X, W, b, Y_hat, L, N, reinterpret_cast<T*>(tile));
  }
}

/// Y_hat = X Wᵀ (+ b, b null: none) for K rows on `stream`: rows staged in
/// shared memory when one fits (predict_rows_kernel), else a thread per
/// element (predict_kernel).
template <class T>
void launch_predict(cudaStream_t stream, int block, const T* X, const T* W, const T* b, T* Y_hat, std::int64_t K,
                    std::int64_t L, std::int64_t N) {
  std::int64_t const rows = predict_tile_rows<T>(L);
  if (rows > 0) {
    auto const kernel = predict_rows_kernel<T>;
    launch(kernel, resident_grid(kernel, (K + rows - 1) / rows, block, 1), block, 0, stream, X, W, b, Y_hat, K, L, N,
           rows);
  } else {
    auto const kernel = predict_kernel<T>;
    launch(kernel, resident_grid(kernel, K * N, block), block, 0, stream, X, W, b, Y_hat, K, L, N);
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
