// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `fit` and `predict` on `fusekit::cuda_staged` (staged: X, Y and W anywhere). With
/// the Gram formulation, `fit` streams X and Y through the GPU in chunks of
/// rows and accumulates A = XᵀX and B = YᵀX chunk by chunk (one GEMM each,
/// β = 1 after the first), so K can exceed the GPU's memory; the iterations
/// then run on the L × L system on the device. The chunks depend on K, L, N
/// and the tuning only, so the result has the same bits from run to run; it
/// differs from the one-shot GEMM by the order of the additions, within
/// |ΔA_ij| ≤ 2 K u Σ_k |x_ki x_kj| (u: the unit roundoff of T). The direct
/// formulation reads X at every step: on host data it copies X and Y to the
/// device once. W in host memory is copied in and back. `predict` streams X
/// and Ŷ by rows. With every view in device memory each call is
/// `fusekit::cuda`'s.

#include <fusekit/detail/train/cuda.cuh>
#include <fusekit/detail/train/cuda_system.cuh>
#include <fusekit/detail/host_data/cuda_pipeline.cuh>
#include <fusekit/detail/host_data/router.hpp>
#include <fusekit/policy.hpp>

#include <cuda_runtime.h>

#include <array>
#include <memory>
#include <cstddef>
#include <cstdint>

namespace fusekit {
namespace detail {

// This file is fusekit::cuda_staged's backend of these algorithms (see detail/core/dispatch.hpp).
template <>
struct backend_available<fit_tag, cuda_staged> : std::true_type {};
template <>
struct backend_available<predict_tag, cuda_staged> : std::true_type {};

inline namespace train {

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

/// The system of a fit over X and Y anywhere: the rows go through the
/// host-data pipeline, and each chunk adds its GEMMs (its own scratch of a
/// chunk's rows of R, taken here: the pipeline runs chunks in stream order).
template <class T>
struct streamed_system {
  static constexpr bool ranks = false;  ///< one GPU (device_system's)
  const cuda& policy;
  matrix<const T> X, Y;
  [[nodiscard]] std::int64_t total_rows() const { return X.extent(0); }
  [[nodiscard]] std::int64_t residual_scratch() const { return 0; }
  /// A fit may leave A for CGLS on X (a Cholesky factor says so): X and Y
  /// are then copied to the device once (device_rows), as the direct
  /// formulation's fit on host data does.
  [[nodiscard]] bool rows_on_device() const { return true; }
  [[nodiscard]] std::array<matrix<const T>, 2> device_rows() const {
    std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
    x_ = std::make_shared<on_device<const T>>(policy, X.data_handle(), K * L, memory_space_of(X.data_handle()));
    y_ = std::make_shared<on_device<const T>>(policy, Y.data_handle(), K * N, memory_space_of(Y.data_handle()));
    return {matrix<const T>(x_->data, K, L), matrix<const T>(y_->data, K, N)};
  }
  mutable std::shared_ptr<on_device<const T>> x_ = nullptr, y_ = nullptr;  ///< device_rows' copies
  void gram(const cublas_context& cublas, T* A, T* B) const { streamed_gram_matrices<T>(policy, cublas, X, Y, A, B); }
  /// The best-iterate rule's residuals of candidate W's (device memory): the
  /// rows stream through, residual_terms_kernel takes each chunk's slices,
  /// and the partial sums are added in chunk and slice order (in a buffer of
  /// their own: the chunks' sums outnumber what the fit's holds).
  [[nodiscard]] std::vector<double> residual_terms(const cuda&, const residual_candidates<T>& c, std::int64_t N,
                                                   std::int64_t L, T*) const {
    std::int64_t const K = X.extent(0), pairs = N * c.count;
    std::vector<double> terms(static_cast<std::size_t>(2 * pairs + 1), 0.0);
    terms.back() = static_cast<double>(K);
    if (K == 0 || pairs == 0) { return terms; }
    std::array<pipeline_view, 2> const rows{rows_view_of(X.data_handle(), L), rows_view_of(Y.data_handle(), N)};
    std::int64_t const chunk_rows = pipeline_chunk_for(policy, widest_element(rows, pipeline_view{}), 1);
    std::int64_t const chunks = (K + chunk_rows - 1) / chunk_rows, most = residual_most_slices;
    stream_buffer<T> const out(policy, chunks * pairs * most * 2);
    std::vector<std::int64_t> slices(static_cast<std::size_t>(chunks), 0);
    run_pipeline(policy, K, 1, rows, pipeline_view{},
                 [&](cudaStream_t s, std::int64_t chunk, std::int64_t, std::int64_t count,
                     const std::array<const std::byte*, 2>& in, std::byte*) {
                   std::int64_t const slice_rows = residual_slice_rows(count);
                   std::int64_t const n_slices = (count + slice_rows - 1) / slice_rows;
                   slices[static_cast<std::size_t>(chunk)] = n_slices;
                   launch(residual_terms_kernel<T>, pairs * n_slices, 256, 0, s, reinterpret_cast<const T*>(in[0]),
                          reinterpret_cast<const T*>(in[1]), count, L, N, c, slice_rows, n_slices,
                          out.get() + chunk * pairs * most * 2);
                 });
    std::vector<T> host(static_cast<std::size_t>(chunks * pairs * most * 2));
    FUSEKIT_CUDA_TRY(
        cudaMemcpyAsync(host.data(), out.get(), host.size() * sizeof(T), cudaMemcpyDeviceToHost, policy.stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      std::int64_t const n_slices = slices[static_cast<std::size_t>(chunk)];
      const T* const part = host.data() + chunk * pairs * most * 2;
      for (std::int64_t p = 0; p < pairs; ++p) {
        for (std::int64_t sl = 0; sl < n_slices; ++sl) {
          terms[2 * p] += static_cast<double>(part[(p * n_slices + sl) * 2]);
          terms[2 * p + 1] += static_cast<double>(part[(p * n_slices + sl) * 2 + 1]);
        }
      }
    }
    return terms;
  }
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

/// `fit` with X, Y and W anywhere (see the file comment for host memory),
/// after its checks (gpu_fit_with_extras, detail/train/cuda_prepare.cuh).
template <class T>
fit_report cuda_fit_anywhere(const cuda_staged& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W,
                             const gd_options& o) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  on_device<T> const w(policy, W.data_handle(), N * L, memory_space_of(W.data_handle()));
  matrix<T> const Wd(w.data, N, L);
  bool const gram = resolve_formulation(o.formulation, K, L) == gd_formulation::gram;
  fit_report const report = route_by_memory(
      std::array<pipeline_view, 2>{rows_view_of(X.data_handle(), L), rows_view_of(Y.data_handle(), N)},
      std::array<memory_space, 0>{},
      [&] {
        return cuda_fit_checked(policy, X, Y, Wd, o, nullptr, device_system<T>{X, Y, policy.stream}, automatic_path{});
      },
      [&] {
        if (gram) {  // X and Y stream through the pipeline into A and B (and a refinement's B)
          return cuda_fit_checked(policy, X, Y, Wd, o, nullptr, streamed_system<T>{policy, X, Y}, automatic_path{});
        }
        // direct: X and Y on the device once
        on_device<const T> const x(policy, X.data_handle(), K * L, memory_space_of(X.data_handle()));
        on_device<const T> const y(policy, Y.data_handle(), K * N, memory_space_of(Y.data_handle()));
        matrix<const T> const Xd(x.data, K, L), Yd(y.data, K, N);
        return cuda_fit_checked(policy, Xd, Yd, Wd, o, nullptr, device_system<T>{Xd, Yd, policy.stream},
                                automatic_path{});
      });
  w.write_back(true);  // cuda_fit_checked has synchronized: only a copy back to host memory waits again
  return report;
}

/// `fusekit::cuda_staged`'s routes, which the GPU's fit and predict hooks
/// (detail/train/cuda.cuh) take for that policy: X, Y and W anywhere (a fit
/// after its checks, on the data as given).
template <class T>
fit_report staged_fit(fit_tag, const cuda_staged& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W,
                      const gd_options& o) {
  return cuda_fit_anywhere(policy, X, Y, W, o);
}

template <class T>
void staged_predict(predict_tag, const cuda_staged& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat,
                    ::cuda::std::span<const T> b = {}) {
  check_predict(X, W, Y_hat, b);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
  if (K * N == 0) { return; }  // nothing to write: nothing is launched or asked of the device
  int const block = tuning_of(policy).elementwise.block_threads;
  on_device<const T> const w(policy, W.data_handle(), N * L, memory_space_of(W.data_handle()));
  on_device<const T> const intercept(policy, b.data(), static_cast<std::int64_t>(b.size()), memory_space_of(b.data()));
  const T* const bd = b.empty() ? nullptr : intercept.data;
  pipeline_view const x = rows_view_of(X.data_handle(), L), y = rows_view_of(Y_hat.data_handle(), N);
  auto const predict_rows = [&](cudaStream_t s, const T* x_rows, T* y_rows, std::int64_t rows) {
    launch_predict(s, block, x_rows, w.data, bd, y_rows, rows, L, N);
  };
  route_by_memory(
      std::array<pipeline_view, 1>{x}, std::array<memory_space, 1>{y.space},
      [&] { predict_rows(policy.stream, X.data_handle(), Y_hat.data_handle(), K); },
      [&] {
        run_pipeline(policy, K, 1, std::array<pipeline_view, 1>{x}, y,
                     [&](cudaStream_t s, std::int64_t, std::int64_t, std::int64_t rows,
                         const std::array<const std::byte*, 1>& in, std::byte* out) {
                       predict_rows(s, reinterpret_cast<const T*>(in[0]), reinterpret_cast<T*>(out), rows);
                     });
      });
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
