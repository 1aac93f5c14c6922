// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's systems and its iterative refinement (the steps of
/// detail/train/refinement.hpp). A system makes what the iterations read:
/// A = XᵀX and B = YᵀX for the fit, and a refinement's B = RᵀX with
/// R = Y − X Wᵀ, each by cuBLAS in T, from device data (`device_system`) or
/// streamed from data anywhere (`streamed_system`); fusekit::nccl sums them
/// over the ranks. The correction then runs the fit's own path on the kept A.

#include <fusekit/detail/train/cuda_parts.cuh>
#include <fusekit/detail/train/refinement.hpp>

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// B = β·B + Rᵀx over `rows` rows of x (rows × L) and y (rows × N), with
/// R = y − x Wᵀ: `scratch` (rows × N) takes x Wᵀ − y as x Wᵀ's GEMM against y,
/// then Bᶜ (L × N) = β Bᶜ − xᶜ scratchᶜᵀ. On the handle's stream `s`.
template <class T>
void residual_rhs(cublasHandle_t h, cudaStream_t s, const T* x, const T* y, std::int64_t rows, std::int64_t L,
                  std::int64_t N, const T* W, T* scratch, T beta, T* B) {
  FUSEKIT_CUDA_TRY(
      cudaMemcpyAsync(scratch, y, static_cast<std::size_t>(rows * N) * sizeof(T), cudaMemcpyDeviceToDevice, s));
  gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, N, rows, L, T(1), W, L, x, L, T(-1), scratch, N);
  gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, rows, T(-1), x, L, scratch, N, beta, B, L);
}

/// The system of a fit over device X and Y.
template <class T>
struct device_system {
  matrix<const T> X, Y;
  cudaStream_t stream;
  /// Elements of the scratch `residual` takes from the fit's buffers: R, K × N.
  [[nodiscard]] std::int64_t residual_scratch() const { return X.extent(0) * Y.extent(1); }
  void gram(const cublas_context& cublas, T* A, T* B) const { gram_matrices<T>(cublas.on(stream), X, Y, A, B); }
  void residual(const cublas_context& cublas, const T* W, T* scratch, T* B) const {
    residual_rhs<T>(cublas.on(stream), stream, X.data_handle(), Y.data_handle(), X.extent(0), X.extent(1), Y.extent(1),
                    W, scratch, T(0), B);
  }
};

/// The system of a fit over X and Y anywhere: the rows go through the
/// host-data pipeline, and each chunk adds its GEMMs (its own scratch of a
/// chunk's rows of R, taken here: the pipeline runs chunks in stream order).
template <class T>
struct streamed_system {
  const cuda& policy;
  matrix<const T> X, Y;
  [[nodiscard]] std::int64_t residual_scratch() const { return 0; }
  void gram(const cublas_context& cublas, T* A, T* B) const { streamed_gram_matrices<T>(policy, cublas, X, Y, A, B); }
  void residual(const cublas_context& cublas, const T* W, T*, T* B) const {
    std::int64_t const L = X.extent(1), N = Y.extent(1);
    std::array<pipeline_view, 2> const rows{rows_view_of(X.data_handle(), L), rows_view_of(Y.data_handle(), N)};
    stream_buffer<T> const scratch(policy, pipeline_chunk_for(policy, widest_element(rows, pipeline_view{}), 1) * N);
    cublasHandle_t const h = cublas.on(policy.stream);
    run_pipeline(policy, X.extent(0), 1, rows, pipeline_view{},
                 [&](cudaStream_t s, std::int64_t chunk, std::int64_t, std::int64_t count,
                     const std::array<const std::byte*, 2>& in, std::byte*) {
                   residual_rhs<T>(h, s, reinterpret_cast<const T*>(in[0]), reinterpret_cast<const T*>(in[1]), count, L,
                                   N, W, scratch.get(), chunk == 0 ? T(0) : T(1), B);
                 });
  }
};

/// `o.refinement_steps` steps of refinement of a Gram fit's W (device, N × L)
/// after `report`: `system.residual` writes B = RᵀX into buf.B (the rows of
/// the outputs not refined are then zeroed: their correction is 0 at once),
/// `iterate(D, p)` runs the fit's path from D = 0 and returns the reports,
/// and W + D is taken per output on the host (N × L values each way, and B
/// for each correction's starting gradient).
template <class T, class System, class Iterate>
void gpu_refine(const cuda& policy, const cublas_context& cublas, const System& system, const fit_buffers<T>& buf,
                matrix<T> W, const gd_options& o, double learning_rate, double floor_multiplier, const Iterate& iterate,
                fit_report& report) {
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
