// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The trainer's kernels: each is indices around a body the CPU tests run —
/// the power iteration, the descent step and predict_at, on a block_team or
/// per thread (detail/train/power_iteration.hpp, detail/train/descent.hpp,
/// detail/train/checks.hpp).

#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/team/block_team.cuh>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/detail/train/conjugate_gradient.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/detail/train/power_iteration.hpp>
#include <fusekit/detail/train/checks.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// λ of the symmetric L × L matrix A (of M^½ A M^½ with `jacobi`) into
/// *lambda, by one block; v and u are L doubles of scratch each.
template <class T>
__global__ void power_iteration_kernel(const T* A, std::int64_t L, double* v, double* u, double* lambda, bool jacobi) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  double const result = symmetric_power_iteration(team, A, L, v, u, jacobi);
  if (team.leader()) { *lambda = result; }
}

/// Shared memory of the single-launch kernel for L unknowns: A, then b, w,
/// previous, point and the gradient.
template <class T>
constexpr std::size_t single_launch_shared_bytes(std::int64_t L) {
  return static_cast<std::size_t>(L * L + 5 * L) * sizeof(T);
}

/// Every iteration of output blockIdx.x (Gram formulation), in one block.
template <class T>
__global__ void fit_single_launch_kernel(const T* A, const T* B, T* W, std::int64_t L, descent_params<T> p,
                                         output_report* reports) {
  __shared__ double scratch[block_team_scratch];
  extern __shared__ double shared[];
  block_team const team(scratch);
  std::int64_t const n = blockIdx.x;
  T* const a = reinterpret_cast<T*>(shared);
  T* const b = a + L * L;
  T* const w = b + L;
  T* const previous = w + L;
  T* const point = previous + L;
  T* const g = point + L;
  team.for_each(L * L, [&](std::int64_t i) { a[i] = A[i]; });
  team.for_each(L, [&](std::int64_t i) {
    b[i] = B[n * L + i];
    w[i] = W[n * L + i];
  });
  descent_begin(team, p, n, L, w, previous, point);  // ends with a sync: a, b and w are in place
  auto const m = make_scaling(p, static_cast<const T*>(a), L + 1);
  auto s = descent_state<T>::start(p, gram_terms(team, L, element_of<T>{a}, element_of<T>{b}, m));
  if (p.method == gd_method::conjugate_gradient) {
    do {
      gram_product(team, a, L, point, g);  // q = A·d; d is `point`, r is `previous`
    } while (cg_step(team, p, s, L, w, previous, point, element_of<T>{g}, element_of<T>{b}, m));
  } else {
    do {
      gram_gradient(team, a, b, L, point, g);  // each member reads its own g[i] in the step
    } while (descent_step(team, p, s, L, w, previous, point, element_of<T>{g}, m));
  }
  team.for_each(L, [&](std::int64_t i) { W[n * L + i] = w[i]; });
  if (team.leader()) { reports[n] = s.report; }
}

/// The cuBLAS path's per-output state, kept on the device between launches.
/// A is XᵀX and B is YᵀX (both formulations); Y (K × N) is read by the direct
/// formulation only (`gram` false), for ‖y_n‖.
template <class T>
__global__ void begin_outputs_kernel(descent_state<T>* states, T* W, T* previous, T* point, const T* A, const T* B,
                                     const T* Y, std::int64_t K, std::int64_t N, std::int64_t L, bool gram,
                                     descent_params<T> p) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  std::int64_t const n = blockIdx.x;
  descent_begin(team, p, n, L, W + n * L, previous + n * L, point + n * L);
  auto const m = make_scaling(p, A, L + 1);
  element_of<T> const b{B + n * L};
  output_terms terms;
  if (gram) {
    terms = gram_terms(team, L, element_of<T>{A}, b, m);
  } else {
    double const y2 = team.template sum<double>(K, [&](std::int64_t k) {
      double const y = static_cast<double>(Y[k * N + n]);
      return y * y;
    });
    terms = direct_terms(team, L, b, m, y2);
  }
  if (team.leader()) { states[n] = descent_state<T>::start(p, terms); }
}

/// One step of every running output, after G holds A·point (Gram: the
/// gradient is G − B; CG takes G itself as A·d) or the gradient itself
/// (direct: `gram` false); row n of each matrix is output n. `running` (when
/// not null) counts the outputs that go on.
template <class T>
__global__ void step_outputs_kernel(descent_state<T>* states, T* W, T* previous, T* point, const T* G, const T* A,
                                    const T* B, bool gram, std::int64_t L, descent_params<T> p, int* running) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  std::int64_t const n = blockIdx.x;
  descent_state<T> s = states[n];  // every member its own copy: the same values, the same answers
  if (!s.running) { return; }      // uniform across the block
  const T* const gn = G + n * L;
  const T* const bn = B + n * L;
  auto const m = make_scaling(p, A, L + 1);
  bool goes_on = false;
  if (p.method == gd_method::conjugate_gradient && gram) {
    goes_on =
        cg_step(team, p, s, L, W + n * L, previous + n * L, point + n * L, element_of<T>{gn}, element_of<T>{bn}, m);
  } else if (p.method == gd_method::conjugate_gradient) {  // CGLS: G holds r = Xᵀρ (cgls_rows_kernel ran first)
    goes_on = cg_direction(team, p, s, L, W + n * L, gn, point + n * L, m);
  } else {
    goes_on = descent_step(
        team, p, s, L, W + n * L, previous + n * L, point + n * L,
        [&](std::int64_t i) { return gram ? gn[i] - bn[i] : gn[i]; }, m);
  }
  if (team.leader()) {  // after the step's last sync: every member has read states[n]
    states[n] = s;
    if (goes_on && running != nullptr) { atomicAdd(running, 1); }
  }
}

/// CGLS's update of every running output's rows residual (ρ: R, K × N,
/// column n for output n), after Q (K × N) holds X·Pᵀ; it runs before the
/// GEMM that makes Xᵀρ and the step (detail/train/conjugate_gradient.hpp).
template <class T>
__global__ void cgls_rows_kernel(descent_state<T>* states, T* W, const T* point, const T* Q, T* R, const T* Y,
                                 std::int64_t K, std::int64_t N, std::int64_t L) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  std::int64_t const n = blockIdx.x;
  descent_state<T> s = states[n];
  if (!s.running) { return; }  // uniform across the block
  cgls_rows(
      team, s, K, L, W + n * L, point + n * L, [&](std::int64_t k) { return Q[k * N + n]; },
      [&](std::int64_t k) { return Y[k * N + n]; }, [&](std::int64_t k) -> T& { return R[k * N + n]; });
  if (team.leader()) { states[n] = s; }  // after cgls_rows' last sync: every member has read states[n]
}

/// Threads per output in the iteration kernels: a warp per 32 unknowns, up to the tuning's cap.
inline int train_block_size(std::int64_t L, int most) {
  std::int64_t const warps = (L + warp_threads - 1) / warp_threads;
  std::int64_t const cap = most / warp_threads;
  return static_cast<int>(warp_threads * (warps < cap ? warps : cap));
}

template <class T>
__global__ void predict_kernel(const T* X, const T* W, T* Y_hat, std::int64_t K, std::int64_t L, std::int64_t N) {
  for (std::int64_t e = global_thread_id(); e < K * N; e += grid_stride()) {
    Y_hat[e] = predict_at(X, W, L, e / N, e % N);
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
