// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's iterative refinement (the steps of
/// detail/train/refinement.hpp): a system (detail/train/cuda_system.cuh)
/// makes B = RᵀX with R = Y − X Wᵀ, and the correction runs the fit's own
/// path on the kept A.

#include <fusekit/detail/train/cuda_buffers.cuh>
#include <fusekit/detail/train/cuda_system.cuh>
#include <fusekit/detail/train/refinement.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// `o.refinement_steps` steps of refinement of a Gram fit's W (device, N × L)
/// after `report`: `system.residual` writes B = RᵀX into buf.B (the rows of
/// the outputs not refined are then zeroed: their correction is 0 at once),
/// `iterate(D, p)` runs the fit's path from D = 0 and returns the reports,
/// and W + D is taken per output on the host (N × L values each way, and B
/// for each correction's starting gradient).
template <class T, class System, class Iterate>
void cuda_refine(const cuda& policy, const cublas_context& cublas, const System& system, const fit_buffers<T>& buf,
                 matrix<T> W, const gd_options& o, double learning_rate, double floor_multiplier,
                 const Iterate& iterate, fit_report& report) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  cudaStream_t const stream = policy.stream;
  std::size_t const bytes = static_cast<std::size_t>(N * L) * sizeof(T);
  for (std::int64_t step = 0; step < o.refinement_steps; ++step) {
    refinement_plan const plan = plan_refinement(report, o.max_iterations);
    if (plan.budget < 1) { return; }
    gd_options const c = correction_options(o, plan.budget, report);
    system.residual(cublas, W.data_handle(), buf.residual.get(), buf.B.get());
    for (std::int64_t n = 0; n < N; ++n) {
      if (plan.outputs[static_cast<std::size_t>(n)] == 0) {
        FUSEKIT_CUDA_TRY(cudaMemsetAsync(buf.B.get() + n * L, 0, static_cast<std::size_t>(L) * sizeof(T), stream));
      }
    }
    std::vector<output_report> const corrections = iterate(
        matrix<T>(buf.correction.get(), N, L), make_descent_params<T>(c, learning_rate, floor_multiplier), c.progress);
    std::vector<T> w(static_cast<std::size_t>(N * L)), d(w.size()), rhs(w.size());
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(w.data(), W.data_handle(), bytes, cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d.data(), buf.correction.get(), bytes, cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(rhs.data(), buf.B.get(), bytes, cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    for (std::int64_t n = 0; n < N; ++n) {
      add_correction(w.data() + n * L, d.data() + n * L, L, report.outputs[static_cast<std::size_t>(n)],
                     corrections[static_cast<std::size_t>(n)], squared_norm(rhs.data() + n * L, L));
    }
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(W.data_handle(), w.data(), bytes, cudaMemcpyHostToDevice, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));  // w is a local
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
