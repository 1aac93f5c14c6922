// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's system: what the iterations read, made by cuBLAS in T.
/// A = XᵀX and B = YᵀX for the fit, and a refinement's B = RᵀX with
/// R = Y − X Wᵀ, from device data (`device_system`; fusekit::cuda_staged
/// streams data anywhere, `streamed_system` in detail/train/cuda_staged.cuh);
/// fusekit::nccl sums them over the ranks.
#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/train/cublas.cuh>
#include <fusekit/detail/train/cuda_best_iterate.cuh>
#include <fusekit/train_types.hpp>

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

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
  /// One GPU holds every row (fusekit::nccl's system adds its sums over the ranks).
  static constexpr bool ranks = false;
  matrix<const T> X, Y;
  cudaStream_t stream;
  /// Rows of the whole system: the formulation and the rounding floor's are decided from them.
  [[nodiscard]] std::int64_t total_rows() const { return X.extent(0); }
  /// Elements of the scratch `residual` takes from the fit's buffers: R, K × N.
  [[nodiscard]] std::int64_t residual_scratch() const { return X.extent(0) * Y.extent(1); }
  /// X is device memory: a fit may leave A for CGLS on it (device_rows).
  [[nodiscard]] bool rows_on_device() const { return true; }
  [[nodiscard]] std::array<matrix<const T>, 2> device_rows() const { return {X, Y}; }
  void gram(const cublas_context& cublas, T* A, T* B) const { gram_matrices<T>(cublas.on(stream), X, Y, A, B); }
  void residual(const cublas_context& cublas, const T* W, T* scratch, T* B) const {
    residual_rhs<T>(cublas.on(stream), stream, X.data_handle(), Y.data_handle(), X.extent(0), X.extent(1), Y.extent(1),
                    W, scratch, T(0), B);
  }
  /// The best-iterate rule's residuals of candidate W's (device_residual_terms;
  /// `out`: the fit's buffer for the partial sums, fit_buffers::terms).
  [[nodiscard]] std::vector<double> residual_terms(const cuda& policy, const residual_candidates<T>& c, std::int64_t N,
                                                   std::int64_t L, T* out) const {
    return device_residual_terms(policy, X.data_handle(), Y.data_handle(), X.extent(0), L, N, c, out);
  }
};

}  // namespace train
}  // namespace detail
}  // namespace fusekit
