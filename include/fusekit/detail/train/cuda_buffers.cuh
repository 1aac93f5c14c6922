// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's buffers: every device temporary of a fit in one fixed
/// order (from the policy's resource or a caller's workspace), and the
/// outputs' states read back from them.
#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/train/best_iterate.hpp>
#include <fusekit/detail/train/descent_state.hpp>
#include <fusekit/detail/train/output_bodies.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/train_types.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// What a GPU fit runs, decided before it takes a buffer, so that a
/// workspace is sized for the fit it will hold (plan_gpu_fit in
/// detail/train/cuda_iterations.cuh).
struct gpu_fit_plan {
  bool gram = false;       ///< A = XᵀX is formed and iterated on
  bool single = false;     ///< the single launch (else the cuBLAS path)
  bool cgls = false;       ///< CG on the direct formulation
  bool refine = false;     ///< refinement steps follow (Gram)
  bool cholesky = false;   ///< the Cholesky preconditioner runs (detail/train/cholesky.hpp)
  bool may_leave = false;  ///< its factor may send the fit from A to CGLS on X: CGLS's buffers are taken too
  bool ranks = false;      ///< across GPUs (fusekit::nccl): sums over the rows are added over the ranks
};

/// Every device temporary of a fit, taken in one fixed order from the
/// policy's resource or from a caller's workspace (`arena`); with a measuring
/// arena, what a workspace must hold. A null size is a buffer the path does not use.
template <class T>
struct fit_buffers {
  stream_buffer<std::byte> cublas_workspace;  ///< cuBLAS's (train_tuning::cublas_workspace_bytes)
  stream_buffer<T> A, B;                      ///< XᵀX; YᵀX
  stream_buffer<double> power;                ///< the power iteration's two vectors and λ
  stream_buffer<double> factor;               ///< Cholesky: G (L × L), s (L), then δ and the smallest pivot
  stream_buffer<double> solve;                ///< Cholesky: each output's scratch of the solve (N × L)
  stream_buffer<T> z;                         ///< Cholesky on the cuBLAS path: each output's M r (N × L)
  stream_buffer<output_report> reports;       ///< single launch
  stream_buffer<T> D, previous, point, G;     ///< cuBLAS path: residual (direct), iterates, gradients
  stream_buffer<T> Q;                         ///< cuBLAS path, CGLS: X·Pᵀ, output by output (N × K)
  stream_buffer<descent_state<T>> states;     ///< cuBLAS path
  stream_buffer<int> running;                 ///< cuBLAS path
  stream_buffer<T> correction, residual;      ///< refinement: D (N × L) and the system's scratch
  stream_buffer<T> start, best;               ///< the best-iterate rule: each output's start and best iterate
  stream_buffer<double> best_g2;              ///< and the best's gradᵀgrad
  stream_buffer<T> terms;                     ///< the residuals' partial sums (residual_terms_kernel)
  stream_buffer<T> before;                    ///< refinement: W before it (N × L)
  stream_buffer<double> y2;                   ///< across GPUs, on X: each output's yᵀy over every rank's rows
  stream_buffer<T> q2;                        ///< across GPUs, CGLS: each output's qᵀq over every rank's rows

  fit_buffers(const cuda& policy, workspace_arena* arena, std::int64_t K, std::int64_t L, std::int64_t N,
              const gpu_fit_plan& plan, bool automatic_rate, std::int64_t cublas_bytes,
              std::int64_t residual_elements = 0)
      : cublas_workspace(policy, cublas_bytes, arena),
        A(policy, L * L, arena),
        B(policy, N * L, arena),
        power(policy, automatic_rate ? 2 * L + 1 : 0, arena),
        factor(policy, plan.cholesky ? L * L + L + 2 : 0, arena),
        solve(policy, plan.cholesky ? N * L : 0, arena),
        z(policy, plan.cholesky && !plan.single ? N * L : 0, arena),
        reports(policy, plan.single ? N : 0, arena),
        D(policy, plan.single || (plan.gram && !plan.may_leave) ? 0 : K * N, arena),
        previous(policy, plan.single ? 0 : N * L, arena),
        point(policy, plan.single ? 0 : N * L, arena),
        G(policy, plan.single ? 0 : N * L, arena),
        Q(policy, plan.cgls || plan.may_leave ? K * N : 0, arena),
        states(policy, plan.single ? 0 : N, arena),
        running(policy, plan.single ? 0 : 1, arena),
        correction(policy, plan.refine ? N * L : 0, arena),
        residual(policy, plan.refine ? residual_elements : 0, arena),
        start(policy, N * L, arena),
        best(policy, N * L, arena),
        best_g2(policy, N, arena),
        terms(policy, 2 * N * 4 * residual_most_slices, arena),
        before(policy, plan.refine ? N * L : 0, arena),
        y2(policy, plan.ranks && (!plan.gram || plan.may_leave) ? N : 0, arena),
        q2(policy, plan.ranks && (plan.cgls || plan.may_leave) ? N : 0, arena) {}

  /// The best-iterate rule's buffers as the kernels take them (none: `track` false).
  [[nodiscard]] best_iterate_view<T> kept(bool track) const {
    if (!track) { return {}; }
    return {start.get(), best.get(), best_g2.get()};
  }

  /// The Cholesky preconditioner's factor and scratch as the kernels take
  /// them (all null without it); `single`: z is the single launch's own.
  [[nodiscard]] cholesky_view<T> cholesky(std::int64_t L) const {
    double* const f = factor.get();
    return {f, f != nullptr ? f + L * L : nullptr, solve.get(), z.get()};
  }
};

/// The outputs' states, copied to the host (synchronizes).
template <class T>
std::vector<descent_state<T>> read_states(const cuda& policy, const fit_buffers<T>& buf, std::int64_t N) {
  std::vector<descent_state<T>> states(static_cast<std::size_t>(N));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(states.data(), buf.states.get(), states.size() * sizeof(descent_state<T>),
                                   cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  return states;
}

/// Where the outputs stand after `done` iterations, for `gd_options::progress`.
template <class T>
fit_progress progress_of(const std::vector<descent_state<T>>& states) {
  fit_progress now;
  for (const auto& s : states) { now.add(s.report, s.running); }
  return now;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
