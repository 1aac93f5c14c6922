// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's system: what the iterations read, made by cuBLAS in T.
/// A = XᵀX and B = YᵀX for the fit, and a refinement's B = RᵀX with
/// R = Y − X Wᵀ, from device data (`device_system`) or streamed from data
/// anywhere through the host-data pipeline (`streamed_system`);
/// fusekit::nccl sums them over the ranks.
#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/host_data/cuda_pipeline.cuh>
#include <fusekit/detail/train/cublas.cuh>
#include <fusekit/train_types.hpp>

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// A = XᵀX (L × L) and, when B is not null, B = YᵀX (N × L: row n is b_n = Xᵀ y_n).
/// Every fit makes both: the stopping rules read ‖A‖, diag(A) and b_n.
/// Row-major X (K × L) is column-major Xᶜ (L × K), so A = Xᶜ Xᶜᵀ and Bᶜ (L × N) = Xᶜ Yᶜᵀ.
template <class T>
void gram_matrices(cublasHandle_t h, matrix<const T> X, matrix<const T> Y, T* A, T* B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, L, K, T(1), X.data_handle(), L, X.data_handle(), L, T(0), A, L);
  if (B != nullptr) {
    gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), X.data_handle(), L, Y.data_handle(), N, T(0), B, L);
  }
}

/// A and B as `gram_matrices` makes them, for X and Y anywhere: the rows go
/// through the host-data pipeline and each chunk adds its GEMMs to A and B.
template <class T>
void streamed_gram_matrices(const cuda& policy, const cublas_context& cublas, matrix<const T> X, matrix<const T> Y,
                            T* A, T* B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  std::array<pipeline_view, 2> const rows{rows_view_of(X.data_handle(), L), rows_view_of(Y.data_handle(), N)};
  cublasHandle_t const h = cublas.on(policy.stream);
  run_pipeline(policy, K, 1, rows, pipeline_view{},
               [&](cudaStream_t, std::int64_t chunk, std::int64_t, std::int64_t count,
                   const std::array<const std::byte*, 2>& in, std::byte*) {
                 auto const x = reinterpret_cast<const T*>(in[0]);
                 auto const y = reinterpret_cast<const T*>(in[1]);
                 T const beta = chunk == 0 ? T(0) : T(1);
                 gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, L, count, T(1), x, L, x, L, beta, A, L);
                 if (B != nullptr) { gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, count, T(1), x, L, y, N, beta, B, L); }
               });
}

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

}  // namespace train
}  // namespace detail
}  // namespace fusekit
