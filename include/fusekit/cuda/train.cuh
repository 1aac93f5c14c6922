// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the trainer (contract in train.hpp). Link `fusekit::train`
/// (fusekit plus cuBLAS) to use it.
///
/// Both paths build A = XᵀX (and, for the Gram formulation, B = YᵀX) once with
/// cuBLAS, and find the automatic learning rate once: the power iteration of
/// detail/power_iteration.hpp in one block (λ is checked on the host before
/// anything writes W). Then every iteration is the descent step of
/// detail/descent.hpp on a `block_team`, the code the CPU tests run:
///
/// * single launch: when A and one output's state fit in shared memory (about
///   L ≤ 160 in double, L ≤ 230 in float on an H100/H200), ONE kernel runs every
///   iteration of every output: block n copies A and b_n into its shared memory
///   and iterates output n to the end.
/// * cuBLAS: otherwise, per iteration one GEMM for all outputs' gradients (two
///   for `direct`) and one launch of the step for every output, which keeps
///   each output's state on the device. Iterations run in batches of
///   `train_tuning::batch_iterations` — the first launched one by one, the
///   others replayed from a CUDA graph — and the host reads how many outputs
///   still run after each batch's last step only.
///
/// `fit` returns a host report, so it synchronizes the policy's stream.

#include <fusekit/cuda/buffer.cuh>
#include <fusekit/cuda/cublas.cuh>
#include <fusekit/cuda/graph.cuh>
#include <fusekit/cuda/launch.cuh>
#include <fusekit/cuda/reduce.cuh>
#include <fusekit/cuda/team.cuh>
#include <fusekit/detail/descent.hpp>
#include <fusekit/detail/dispatch.hpp>
#include <fusekit/detail/power_iteration.hpp>
#include <fusekit/detail/train_checks.hpp>
#include <fusekit/tuning.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fusekit {
namespace detail {

/// λ of the symmetric L × L matrix A into *lambda, by one block; v and u are L doubles of scratch each.
template <class T>
__global__ void power_iteration_kernel(const T* A, std::int64_t L, double* v, double* u, double* lambda) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  double const result = symmetric_power_iteration(team, A, L, v, u);
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
  auto s = descent_state<T>::start(p);
  do {
    gram_gradient(team, a, b, L, point, g);  // each member reads its own g[i] in the step
  } while (descent_step(team, p, s, L, w, previous, point, [&](std::int64_t i) { return g[i]; }));
  team.for_each(L, [&](std::int64_t i) { W[n * L + i] = w[i]; });
  if (team.leader()) { reports[n] = s.report; }
}

/// The cuBLAS path's per-output state, kept on the device between launches.
template <class T>
__global__ void begin_outputs_kernel(descent_state<T>* states, T* W, T* previous, T* point, std::int64_t L,
                                     descent_params<T> p) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  std::int64_t const n = blockIdx.x;
  descent_begin(team, p, n, L, W + n * L, previous + n * L, point + n * L);
  if (team.leader()) { states[n] = descent_state<T>::start(p); }
}

/// One descent step of every running output, after G holds A·point (Gram: the
/// gradient is G − B) or the gradient itself (direct: B is null); row n of each
/// matrix is output n. `running` (when not null) counts the outputs that go on.
template <class T>
__global__ void step_outputs_kernel(descent_state<T>* states, T* W, T* previous, T* point, const T* G, const T* B,
                                    std::int64_t L, descent_params<T> p, int* running) {
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  std::int64_t const n = blockIdx.x;
  descent_state<T> s = states[n];  // every member its own copy: the same values, the same answers
  if (!s.running) { return; }      // uniform across the block
  const T* const gn = G + n * L;
  const T* const bn = B != nullptr ? B + n * L : nullptr;
  bool const goes_on = descent_step(team, p, s, L, W + n * L, previous + n * L, point + n * L,
                                    [&](std::int64_t i) { return bn != nullptr ? gn[i] - bn[i] : gn[i]; });
  if (team.leader()) {  // after the step's last sync: every member has read states[n]
    states[n] = s;
    if (goes_on && running != nullptr) { atomicAdd(running, 1); }
  }
}

/// Threads per output in the iteration kernels: a warp per 32 unknowns, up to the tuning's cap.
inline int train_block_size(std::int64_t L, int most) {
  std::int64_t const warps = (L + warp_threads - 1) / warp_threads;
  std::int64_t const cap = most / warp_threads;
  return static_cast<int>(warp_threads * (warps < cap ? warps : cap));
}

/// A = XᵀX (L × L) and, when B is not null, B = YᵀX (N × L: row n is b_n = Xᵀ y_n).
/// Row-major X (K × L) is column-major Xᶜ (L × K), so A = Xᶜ Xᶜᵀ and Bᶜ (L × N) = Xᶜ Yᶜᵀ.
template <class T>
void gram_matrices(cublasHandle_t h, matrix<const T> X, matrix<const T> Y, T* A, T* B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, L, K, T(1), X.data_handle(), L, X.data_handle(), L, T(0), A, L);
  if (B != nullptr) {
    gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), X.data_handle(), L, Y.data_handle(), N, T(0), B, L);
  }
}

/// Every iteration of the cuBLAS path; returns each output's report.
template <class T>
std::vector<descent_state<T>> cublas_iterations(const cuda& policy, const train_tuning& tuning, cublasHandle_t h,
                                                matrix<const T> X, matrix<const T> Y, matrix<T> W, const T* A,
                                                const T* B, const descent_params<T>& p) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  cudaStream_t const stream = policy.stream;
  bool const gram = B != nullptr;
  stream_buffer<T> D(policy, gram ? 0 : K * N), previous(policy, N * L), point(policy, N * L), G(policy, N * L);
  stream_buffer<descent_state<T>> states(policy, N);
  stream_buffer<int> running(policy, 1);
  int const block = train_block_size(L, tuning.max_block_threads);
  launch(begin_outputs_kernel<T>, N, block, 0, stream, states.get(), W.data_handle(), previous.get(), point.get(), L, p);

  // One batch: `iterations` steps; only the last counts the outputs still running.
  auto const enqueue_batch = [&](cudaStream_t s, std::int64_t iterations) {
    FUSEKIT_CUBLAS_TRY(cublasSetStream(h, s));
    FUSEKIT_CUDA_TRY(cudaMemsetAsync(running.get(), 0, sizeof(int), s));
    const T* x = X.data_handle();
    for (std::int64_t b = 0; b < iterations; ++b) {
      if (gram) {
        // Gᶜ (L × N) = Aᶜ Pᶜ, A symmetric; the step subtracts b_n.
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, L, N, L, T(1), A, L, point.get(), L, T(0), G.get(), L);
      } else {
        // D = X Pᵀ − Y (K × N), as Dᶜ = Pᶜᵀ Xᶜ − Yᶜ (N × K); then Gᶜ = Xᶜ Dᶜᵀ (L × N).
        FUSEKIT_CUDA_TRY(cudaMemcpyAsync(D.get(), Y.data_handle(), static_cast<std::size_t>(K * N) * sizeof(T),
                                         cudaMemcpyDeviceToDevice, s));
        gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, N, K, L, T(1), point.get(), L, x, L, T(-1), D.get(), N);
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), x, L, D.get(), N, T(0), G.get(), L);
      }
      launch(step_outputs_kernel<T>, N, block, 0, s, states.get(), W.data_handle(), previous.get(), point.get(),
             static_cast<const T*>(G.get()), B, L, p, b + 1 == iterations ? running.get() : nullptr);
    }
  };

  std::int64_t const check_every = tuning.batch_iterations;
  captured_graph full_batch;
  int running_host = 1;
  for (std::int64_t done = 0; done < p.max_iterations && running_host > 0;) {
    std::int64_t const batch = p.max_iterations - done < check_every ? p.max_iterations - done : check_every;
    if (batch == check_every && done > 0) {  // the first batch also warms cuBLAS up before a capture
      if (full_batch.empty()) {
        full_batch.capture([&](cudaStream_t s) { enqueue_batch(s, check_every); });
      }
      full_batch.launch(stream);
    } else {
      enqueue_batch(stream, batch);
    }
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&running_host, running.get(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    done += batch;
  }
  FUSEKIT_CUBLAS_TRY(cublasSetStream(h, stream));
  std::vector<descent_state<T>> result(static_cast<std::size_t>(N));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(result.data(), states.get(), result.size() * sizeof(descent_state<T>),
                                   cudaMemcpyDeviceToHost, stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  return result;
}

/// Whether the single-launch path fits: A and one output's state in the shared
/// memory a block may opt in to on the current device.
template <class T>
bool single_launch_fits(std::int64_t L) {
  return single_launch_shared_bytes<T>(L) + block_team_scratch * sizeof(double) <=
         static_cast<std::size_t>(attributes_of(current_device()).max_shared_per_block_optin);
}

/// The path `fit` takes; tests and benchmarks force one.
enum class fit_path { automatic, single_launch, cublas };

template <class T>
fit_report gpu_fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                   fit_path forced) {
  check_fit(policy, X, Y, W, o);
  std::int64_t const L = X.extent(1), N = Y.extent(1);
  cudaStream_t const stream = policy.stream;
  train_tuning const tuning = tuning_of(policy).train;
  gd_formulation const formulation = resolve_formulation(o.formulation, X.extent(0), L);
  bool const single = forced == fit_path::single_launch ||
                      (forced == fit_path::automatic && formulation == gd_formulation::gram && single_launch_fits<T>(L));
  if (single) {
    FUSEKIT_EXPECTS(single_launch_fits<T>(L), "fusekit::fit: the single-launch path needs A = XᵀX in shared memory; L = " +
                                                  std::to_string(L) + " is too large on this device");
  }
  bool const gram = single || formulation == gd_formulation::gram;

  cublasHandle_t const h = cublas_handle(stream);
  // A serves the Gram iterations and the power iteration; direct with a given rate needs neither.
  bool const need_A = gram || !o.learning_rate;
  stream_buffer<T> A(policy, need_A ? L * L : 0), B(policy, gram ? N * L : 0);
  if (need_A) { gram_matrices<T>(h, X, Y, A.get(), B.get()); }
  // The automatic rate: λmax on the device, checked here before anything writes W.
  double learning_rate = o.learning_rate ? *o.learning_rate : 0.0;
  if (!o.learning_rate) {
    stream_buffer<double> power(policy, 2 * L + 1);
    launch(power_iteration_kernel<T>, 1, train_block_size(L, tuning.power_iteration_max_threads), 0, stream,
           static_cast<const T*>(A.get()), L, power.get(), power.get() + L, power.get() + 2 * L);
    double lambda = 0;
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&lambda, power.get() + 2 * L, sizeof(double), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    learning_rate = automatic_learning_rate<T>(lambda);
  }
  descent_params<T> const p = make_descent_params<T>(o, learning_rate);

  fit_report report;
  report.learning_rate = learning_rate;
  report.formulation = gram ? gd_formulation::gram : gd_formulation::direct;
  report.path = single ? "single_launch" : "cublas";
  report.outputs.resize(static_cast<std::size_t>(N));
  if (single) {
    std::size_t const shared = single_launch_shared_bytes<T>(L);
    auto const kernel = fit_single_launch_kernel<T>;
    FUSEKIT_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
    stream_buffer<output_report> d_reports(policy, N);
    launch(kernel, N, train_block_size(L, tuning.max_block_threads), shared, stream, static_cast<const T*>(A.get()),
           static_cast<const T*>(B.get()), W.data_handle(), L, p, d_reports.get());
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(report.outputs.data(), d_reports.get(), report.outputs.size() * sizeof(output_report),
                                     cudaMemcpyDeviceToHost, stream));
  } else {
    auto const states = cublas_iterations<T>(policy, tuning, h, X, Y, W, A.get(), gram ? B.get() : nullptr, p);
    for (std::size_t n = 0; n < states.size(); ++n) { report.outputs[n] = states[n].report; }
  }
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  return report;
}

template <class T>
fit_report run(fit_tag, const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o) {
  return gpu_fit(policy, X, Y, W, o, fit_path::automatic);
}

template <class T>
__global__ void predict_kernel(const T* X, const T* W, T* Y_hat, std::int64_t K, std::int64_t L, std::int64_t N) {
  for (std::int64_t e = global_thread_id(); e < K * N; e += grid_stride()) { Y_hat[e] = predict_at(X, W, L, e / N, e % N); }
}

template <class T>
void run(predict_tag, const cuda& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  check_predict(X, W, Y_hat);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
  if (K * N == 0) { return; }  // nothing to write: nothing is launched or asked of the device
  auto const kernel = predict_kernel<T>;
  int const block = tuning_of(policy).elementwise.block_threads;
  launch(kernel, resident_grid(kernel, K * N, block), block, 0, policy.stream, X.data_handle(), W.data_handle(),
         Y_hat.data_handle(), K, L, N);
}

}  // namespace detail
}  // namespace fusekit
