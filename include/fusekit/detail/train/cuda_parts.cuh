// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's pieces (detail/train/cuda.cuh assembles them into fit):
/// A = XᵀX and B = YᵀX by cuBLAS (from device data, or streamed from host
/// data), the fit's device temporaries in one fixed order, the outputs' states
/// read back, and the cuBLAS path's iterations, captured once in a CUDA graph.

#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/train/cublas.cuh>
#include <fusekit/detail/core/cuda_graph.cuh>
#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/host_data/cuda_driver.cuh>
#include <fusekit/detail/reduce/cuda.cuh>
#include <fusekit/detail/team/block_team.cuh>
#include <fusekit/detail/train/kernels.cuh>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/train/power_iteration.hpp>
#include <fusekit/detail/train/checks.hpp>
#include <fusekit/tuning.hpp>

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
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

/// Every device temporary of a fit, taken in one fixed order from the
/// policy's resource or from a caller's workspace (`arena`); with a measuring
/// arena, what a workspace must hold. A null size is a buffer the path does not use.
template <class T>
struct fit_buffers {
  stream_buffer<std::byte> cublas_workspace;  ///< cuBLAS's (train_tuning::cublas_workspace_bytes)
  stream_buffer<T> A, B;                      ///< XᵀX; YᵀX
  stream_buffer<double> power;                ///< the power iteration's two vectors and λ
  stream_buffer<output_report> reports;       ///< single launch
  stream_buffer<T> D, previous, point, G;     ///< cuBLAS path: residual (direct), iterates, gradients
  stream_buffer<T> Q;                         ///< cuBLAS path, CGLS: X·Pᵀ, output by output (N × K)
  stream_buffer<descent_state<T>> states;     ///< cuBLAS path
  stream_buffer<int> running;                 ///< cuBLAS path
  stream_buffer<T> correction, residual;      ///< refinement: D (N × L) and the system's scratch

  fit_buffers(const cuda& policy, workspace_arena* arena, std::int64_t K, std::int64_t L, std::int64_t N, bool gram,
              bool automatic_rate, bool single, std::int64_t cublas_bytes, bool cgls = false, bool refine = false,
              std::int64_t residual_elements = 0)
      : cublas_workspace(policy, cublas_bytes, arena),
        A(policy, L * L, arena),
        B(policy, N * L, arena),
        power(policy, automatic_rate ? 2 * L + 1 : 0, arena),
        reports(policy, single ? N : 0, arena),
        D(policy, single || gram ? 0 : K * N, arena),
        previous(policy, single ? 0 : N * L, arena),
        point(policy, single ? 0 : N * L, arena),
        G(policy, single ? 0 : N * L, arena),
        Q(policy, cgls ? K * N : 0, arena),
        states(policy, single ? 0 : N, arena),
        running(policy, single ? 0 : 1, arena),
        correction(policy, refine ? N * L : 0, arena),
        residual(policy, refine ? residual_elements : 0, arena) {}
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

/// Every iteration of the cuBLAS path; returns each output's state.
template <class T>
std::vector<descent_state<T>> cublas_iterations(const cuda& policy, const train_tuning& tuning,
                                                const cublas_context& cublas, matrix<const T> X, matrix<const T> Y,
                                                matrix<T> W, const fit_buffers<T>& buf, bool gram,
                                                const descent_params<T>& p,
                                                const std::function<void(const fit_progress&)>& progress) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  cudaStream_t const stream = policy.stream;
  const T* const A = buf.A.get();
  const T* const B = buf.B.get();
  int const block = train_block_size(L, tuning.max_block_threads);
  int const rows_block = train_block_size(K, tuning.max_block_threads);  // CGLS's rows: a warp per 32 rows
  launch(begin_outputs_kernel<T>, N, block, 0, stream, buf.states.get(), W.data_handle(), buf.previous.get(),
         buf.point.get(), A, B, Y.data_handle(), K, N, L, gram, p);

  // One batch: `iterations` steps; only the last counts the outputs still running.
  bool const cgls = !gram && p.method == gd_method::conjugate_gradient;
  auto const enqueue_batch = [&](cudaStream_t s, std::int64_t iterations) {
    cublasHandle_t const h = cublas.on(s);
    FUSEKIT_CUDA_TRY(cudaMemsetAsync(buf.running.get(), 0, sizeof(int), s));
    const T* x = X.data_handle();
    for (std::int64_t b = 0; b < iterations; ++b) {
      if (cgls) {
        // Q = X Pᵀ stored output by output (N × K, column-major K × N: Qᶜ = Xᶜᵀ Pᶜ), so
        // that each output's block reads its rows in consecutive addresses; the
        // rows' residual ρ likewise (in D); Gᶜ (L × N) = Xᶜ ρᶜ: r = Xᵀρ.
        gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, K, N, L, T(1), x, L, buf.point.get(), L, T(0), buf.Q.get(), K);
        launch(cgls_rows_kernel<T>, N, rows_block, 0, s, buf.states.get(), W.data_handle(),
               static_cast<const T*>(buf.point.get()), static_cast<const T*>(buf.Q.get()), buf.D.get(), Y.data_handle(),
               K, N, L);
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, L, N, K, T(1), x, L, buf.D.get(), K, T(0), buf.G.get(), L);
      } else if (gram) {
        // Gᶜ (L × N) = Aᶜ Pᶜ, A symmetric; the step subtracts b_n.
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, L, N, L, T(1), A, L, buf.point.get(), L, T(0), buf.G.get(), L);
      } else {
        // D = X Pᵀ − Y (K × N), as Dᶜ = Pᶜᵀ Xᶜ − Yᶜ (N × K); then Gᶜ = Xᶜ Dᶜᵀ (L × N).
        FUSEKIT_CUDA_TRY(cudaMemcpyAsync(buf.D.get(), Y.data_handle(), static_cast<std::size_t>(K * N) * sizeof(T),
                                         cudaMemcpyDeviceToDevice, s));
        gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, N, K, L, T(1), buf.point.get(), L, x, L, T(-1), buf.D.get(), N);
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), x, L, buf.D.get(), N, T(0), buf.G.get(), L);
      }
      launch(step_outputs_kernel<T>, N, block, 0, s, buf.states.get(), W.data_handle(), buf.previous.get(),
             buf.point.get(), static_cast<const T*>(buf.G.get()), A, B, gram, L, p,
             b + 1 == iterations ? buf.running.get() : nullptr);
    }
  };

  std::int64_t const check_every = tuning.batch_iterations;
  // CG's calls that update nothing (its start, and the check of b − A w that
  // follows an update meeting a tolerance; detail/train/conjugate_gradient.hpp) come
  // on top of the updates: at most one per update, and one more.
  std::int64_t const calls = p.method == gd_method::conjugate_gradient ? 2 * p.max_iterations + 1 : p.max_iterations;
  captured_graph full_batch;
  int running_host = 1;
  for (std::int64_t done = 0; done < calls && running_host > 0;) {
    std::int64_t const batch = calls - done < check_every ? calls - done : check_every;
    if (batch == check_every && done > 0) {  // the first batch also warms cuBLAS up before a capture
      if (full_batch.empty()) {
        full_batch.capture([&](cudaStream_t s) { enqueue_batch(s, check_every); });
      }
      full_batch.launch(stream);
    } else {
      enqueue_batch(stream, batch);
    }
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&running_host, buf.running.get(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    done += batch;
    if (progress) { progress(progress_of(read_states(policy, buf, N))); }
  }
  (void)cublas.on(stream);  // off the capture's side stream, which is gone
  return read_states(policy, buf, N);
}

/// Whether the single-launch path fits: A and one output's state, beside the
/// kernel's static shared memory, in what a block may opt in to on the current device.
template <class T>
bool single_launch_fits(std::int64_t L) {
  cudaFuncAttributes a{};
  FUSEKIT_CUDA_TRY(cudaFuncGetAttributes(&a, fit_single_launch_kernel<T>));
  return single_launch_shared_bytes<T>(L) + a.sharedSizeBytes <=
         static_cast<std::size_t>(attributes_of(current_device()).max_shared_per_block_optin);
}

/// How `gpu_fit` chooses its path. This default takes the single launch for a
/// Gram fit whose A = XᵀX fits in shared memory, cuBLAS otherwise. Tests and
/// the benchmark pass another (fixed_path) as gpu_fit's last argument, the
/// way CUB's dispatch takes its kernel source (a typed argument with a
/// default), to run one path on purpose; production calls name nothing.
struct automatic_path {
  template <class T>
  bool single_launch(bool gram, std::int64_t L) const {
    return gram && single_launch_fits<T>(L);
  }
};

/// One path whatever the sizes: the single launch (checked to fit) or cuBLAS.
struct fixed_path {
  bool single;
  template <class T>
  bool single_launch(bool, std::int64_t) const {
    return single;
  }
};

}  // namespace train
}  // namespace detail
}  // namespace fusekit
