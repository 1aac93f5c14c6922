// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's iterations on the cuBLAS path (every output's step in
/// batches, captured once in a CUDA graph, the outputs still running read
/// back between them), and how a fit picks that path or the single launch
/// (`automatic_path`, `fixed_path`).
#include <fusekit/detail/core/cuda_graph.cuh>
#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/train/checks.hpp>
#include <fusekit/detail/train/cublas.cuh>
#include <fusekit/detail/train/cuda_buffers.cuh>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/detail/train/kernels.cuh>
#include <fusekit/tuning.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// Every iteration of the cuBLAS path; returns each output's state. `track`:
/// keep each output's start and best iterate (buf.kept) for the best-iterate
/// rule. Across GPUs (`System::ranks`, fusekit::nccl) the sums over X's rows
/// are added over the ranks (`system.sum_over_ranks`, on the policy's
/// stream): yᵀy at the start, then per iteration qᵀq (CGLS) and the
/// gradient Xᵀ(…) of the direct formulation, between launches and outside a
/// graph; a rank without rows (K = 0) adds zeros.
template <class T, class System>
std::vector<descent_state<T>> cublas_iterations(const cuda& policy, const train_tuning& tuning,
                                                const cublas_context& cublas, matrix<const T> X, matrix<const T> Y,
                                                matrix<T> W, const fit_buffers<T>& buf, bool gram,
                                                const descent_params<T>& p,
                                                const std::function<void(const fit_progress&)>& progress, bool track,
                                                const System& system) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  cudaStream_t const stream = policy.stream;
  const T* const A = buf.A.get();
  const T* const B = buf.B.get();
  int const block = train_block_size(L, tuning.max_block_threads);
  int const rows_block = train_block_size(K > 0 ? K : 1, tuning.max_block_threads);  // CGLS's rows: a warp per 32
  const double* y2 = nullptr;
  if constexpr (System::ranks) {
    if (!gram) {
      launch(target_square_sums_kernel<T>, N, block, 0, stream, Y.data_handle(), K, N,
             buf.y2.get());  // begin_outputs_kernel's team
      system.sum_over_ranks(buf.y2.get(), N);
      y2 = buf.y2.get();
    }
  }
  launch(begin_outputs_kernel<T>, N, block, 0, stream, buf.states.get(), W.data_handle(), buf.previous.get(),
         buf.point.get(), A, B, Y.data_handle(), K, N, L, gram, p, buf.kept(track), y2);

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
        if (K > 0) {
          gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, K, N, L, T(1), x, L, buf.point.get(), L, T(0), buf.Q.get(), K);
        }
        const T* q2 = nullptr;
        if constexpr (System::ranks) {
          launch(cgls_square_sums_kernel<T>, N, rows_block, 0, s,
                 static_cast<const descent_state<T>*>(buf.states.get()), static_cast<const T*>(buf.Q.get()), K,
                 buf.q2.get());
          system.sum_over_ranks(buf.q2.get(), N);
          q2 = buf.q2.get();
        }
        launch(cgls_rows_kernel<T>, N, rows_block, 0, s, buf.states.get(), W.data_handle(),
               static_cast<const T*>(buf.point.get()), static_cast<const T*>(buf.Q.get()), buf.D.get(), Y.data_handle(),
               K, N, L, q2);
        if (K > 0) {
          gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, L, N, K, T(1), x, L, buf.D.get(), K, T(0), buf.G.get(), L);
        } else {  // no rows here: this rank's Xᵀρ is 0
          FUSEKIT_CUDA_TRY(cudaMemsetAsync(buf.G.get(), 0, static_cast<std::size_t>(N * L) * sizeof(T), s));
        }
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
      if constexpr (System::ranks) {
        if (!gram) { system.sum_over_ranks(buf.G.get(), N * L); }  // Xᵀ(…) over every rank's rows
      }
      launch(step_outputs_kernel<T>, N, block, 0, s, buf.states.get(), W.data_handle(), buf.previous.get(),
             buf.point.get(), static_cast<const T*>(buf.G.get()), A, B, gram, L, p, buf.cholesky(L), buf.kept(track),
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
    // The first batch also warms cuBLAS up before a capture; across GPUs the
    // batches are enqueued as they are (NCCL's calls stay out of a graph).
    if (batch == check_every && done > 0 && !System::ranks) {
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

/// How `cuda_fit` chooses its path. This default takes the single launch for a
/// Gram fit whose A = XᵀX fits in shared memory and which stays on A, cuBLAS
/// otherwise (`may_leave`: a Cholesky factor may send it to CGLS, which runs
/// on the cuBLAS path). Tests and the benchmark pass another (fixed_path) as
/// cuda_fit's last argument, the way CUB's dispatch takes its kernel source (a
/// typed argument with a default), to run one path on purpose; production
/// calls name nothing.
struct automatic_path {
  template <class T>
  bool single_launch(bool gram, std::int64_t L, bool may_leave) const {
    return gram && !may_leave && single_launch_fits<T>(L);
  }
};

/// One path whatever the sizes: the single launch (checked to fit; a fit
/// there stays on A) or cuBLAS.
struct fixed_path {
  bool single;
  template <class T>
  bool single_launch(bool, std::int64_t, bool) const {
    return single;
  }
};

/// The plan of a fit of K × L data (K: every rank's rows) with options `o` (gpu_fit_plan): the
/// formulation, then whether the Cholesky preconditioner runs (CG on A, L ≤
/// cholesky_max_columns, as on the CPU) and may leave A for CGLS (an
/// automatic formulation, and X on the device: `rows_on_device`), then the
/// path. `single_fits` answers the path's question (a measuring caller asks
/// no device).
template <class T, class Path>
gpu_fit_plan plan_gpu_fit(std::int64_t K, std::int64_t L, const gd_options& o, bool rows_on_device, const Path& path) {
  gpu_fit_plan plan;
  bool const gram = resolve_formulation(o.formulation, K, L) == gd_formulation::gram;
  plan.cholesky = gram && o.preconditioner == gd_preconditioner::cholesky &&
                  o.method == gd_method::conjugate_gradient && L <= cholesky_max_columns;
  bool const may_leave = plan.cholesky && o.formulation == gd_formulation::automatic && rows_on_device;
  plan.single = path.template single_launch<T>(gram, L, may_leave);
  plan.may_leave = may_leave && !plan.single;
  plan.gram = plan.single || gram;
  plan.cgls = !plan.gram && o.method == gd_method::conjugate_gradient;
  plan.refine = plan.gram && o.refinement_steps > 0;
  return plan;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
