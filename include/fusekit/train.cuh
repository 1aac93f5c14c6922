// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the trainer (see train.hpp for the contract). Link
/// `fusekit::train` (fusekit plus cuBLAS) to use it.
///
/// Both paths build A = XᵀX (and, for the Gram formulation, B = YᵀX) once with
/// cuBLAS, and find the automatic learning rate once, by the power iteration on
/// A in one block (its λmax is checked on the host before anything writes W).
/// Then:
///
/// * single launch: when A and one output's state fit in shared memory (about
///   L ≤ 160 in double, L ≤ 230 in float on an H100/H200), ONE kernel runs every
///   iteration of every output: block n copies A and b_n into its shared memory
///   and iterates output n to the end.
/// * cuBLAS: otherwise, per iteration one GEMM for all outputs' gradients (two
///   for `direct`) and one update kernel that keeps each output's state and
///   stopping flags on the device. Iterations run in batches of 64 — the first
///   launched one by one, the others replayed from a CUDA graph — and the host
///   reads how many outputs still run after each batch's last step only.
///
/// The cuBLAS handle is the calling thread's, cached per device (detail/cublas.cuh).
/// `fit` returns a host report, so it synchronizes the policy's stream.

#include <fusekit/detail/cublas.cuh>
#include <fusekit/detail/gd.hpp>
#include <fusekit/detail/launch.cuh>
#include <fusekit/reduce.cuh>
#include <fusekit/train.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fusekit {
namespace detail {

/// What the kernels need of gd_options, by value.
struct gd_kernel_options {
  double learning_rate;  ///< given, or 1/λmax (checked on the host first)
  double tolerance;
  std::int64_t max_iterations;
  std::int64_t stall_window;
  std::uint64_t seed;
  int init;
  int nesterov;
};

struct device_output_report {
  std::int64_t iterations;
  double grad_norm2;
  int status;
};

/// Sum over a block of one value per thread, in a fixed order (the same bits
/// every run): warps by shuffles, then warp sums in order by thread 0.
/// `scratch` holds 33 values.
template <class T>
__device__ T block_sum(T v, T* scratch) {
  for (int s = 16; s >= 1; s /= 2) { v += __shfl_down_sync(0xffffffffu, v, s); }
  int const warp = static_cast<int>(threadIdx.x / 32);
  if (threadIdx.x % 32 == 0) { scratch[warp] = v; }
  __syncthreads();
  if (threadIdx.x == 0) {
    T total = T(0);
    for (int i = 0; i < static_cast<int>(blockDim.x / 32); ++i) { total += scratch[i]; }
    scratch[32] = total;
  }
  __syncthreads();
  T const total = scratch[32];
  __syncthreads();  // scratch is reused by the next call
  return total;
}

/// Whether the L values at v are all finite, for every thread of the block
/// (each thread checks a stride; a block sum gathers the count).
template <class T>
__device__ bool block_all_finite(const T* v, std::int64_t L, int* scratch) {
  int bad = 0;
  for (std::int64_t i = threadIdx.x; i < L; i += blockDim.x) { bad += is_finite(v[i]) ? 0 : 1; }
  return block_sum(bad, scratch) == 0;
}

/// λ into *lambda_out, from the power iteration on the symmetric L × L matrix A
/// in one block: the loop of `power_iteration` in train.hpp, in double. v and u
/// are L doubles of scratch each. A is read by columns (A[j·L + i] for thread i):
/// coalesced, and the same values as rows since A is symmetric.
template <class T>
__global__ void power_iteration_kernel(const T* A, std::int64_t L, double* v, double* u, double* lambda_out) {
  __shared__ double scratch[40];
  std::int64_t const t = threadIdx.x;
  std::int64_t const threads = blockDim.x;
  for (std::int64_t i = t; i < L; i += threads) { v[i] = 1.0 / sqrt(static_cast<double>(L)); }
  __syncthreads();
  double lambda = 0;
  for (int it = 0; it < 1000; ++it) {
    double dot = 0, norm2 = 0;
    for (std::int64_t i = t; i < L; i += threads) {
      double s = 0;
      for (std::int64_t j = 0; j < L; ++j) { s += static_cast<double>(A[j * L + i]) * v[j]; }
      u[i] = s;
      dot += v[i] * s;
      norm2 += s * s;
    }
    dot = block_sum(dot, scratch);
    norm2 = block_sum(norm2, scratch);
    double const before = lambda;
    lambda = dot;
    if (!(norm2 > 0)) { break; }
    double const inv = 1.0 / sqrt(norm2);
    for (std::int64_t i = t; i < L; i += threads) { v[i] = u[i] * inv; }
    __syncthreads();
    if (it > 0 && fabs(lambda - before) <= 1e-10 * lambda) { break; }
  }
  if (t == 0) { *lambda_out = lambda; }
}

/// Shared memory of the single-launch kernel for L unknowns: block sums, A, and
/// b, w, the previous w, the extrapolated point and the gradient.
template <class T>
constexpr std::size_t single_launch_shared_bytes(std::int64_t L) {
  return 40 * sizeof(double) + static_cast<std::size_t>(L * L + 5 * L) * sizeof(T);
}

/// Every iteration of output blockIdx.x (Gram formulation), in one block, from
/// A (L × L) and B (N × L, row n = b_n) built once.
template <class T>
__global__ void fit_single_launch_kernel(const T* A, const T* B, T* W, std::int64_t L, gd_kernel_options o,
                                         device_output_report* report) {
  extern __shared__ double shared[];
  double* const scratch = shared;  // 40: block sums
  T* const a = reinterpret_cast<T*>(scratch + 40);
  T* const b = a + L * L;
  T* const w = b + L;
  T* const previous = w + L;
  T* const point = previous + L;
  T* const g = point + L;
  std::int64_t const n = blockIdx.x;
  std::int64_t const t = threadIdx.x;
  std::int64_t const threads = blockDim.x;

  for (std::int64_t idx = t; idx < L * L; idx += threads) { a[idx] = A[idx]; }
  for (std::int64_t i = t; i < L; i += threads) {
    b[i] = B[n * L + i];
    w[i] = initial_weight<T>(static_cast<gd_init>(o.init), o.seed, n, i, L, W[n * L + i]);
    previous[i] = w[i];
  }
  __syncthreads();
  T const step = static_cast<T>(o.learning_rate);

  gd_monitor<T> monitor{static_cast<T>(o.tolerance), o.stall_window};
  nesterov_state momentum;
  device_output_report r{o.max_iterations, 0.0, static_cast<int>(fit_status::max_iterations)};
  for (std::int64_t it = 0; it < o.max_iterations; ++it) {
    const T* at = w;
    if (o.nesterov) {
      T const mu = momentum.coefficient<T>();
      for (std::int64_t i = t; i < L; i += threads) { point[i] = w[i] + mu * (w[i] - previous[i]); }
      __syncthreads();
      at = point;
    }
    // grad_i = Σ_j A[i, j] at[j] − b_i, read as A[j, i] (A is symmetric): consecutive
    // threads read consecutive words, so a warp hits 32 different banks.
    T part = T(0);
    for (std::int64_t i = t; i < L; i += threads) {
      T s = T(0);
      for (std::int64_t j = 0; j < L; ++j) { s = s + a[j * L + i] * at[j]; }
      g[i] = s - b[i];
      part = part + g[i] * g[i];
    }
    T const g2 = block_sum(part, reinterpret_cast<T*>(scratch));
    r.grad_norm2 = static_cast<double>(g2);
    int const stop = monitor.check(g2, it);
    if (stop >= 0) {
      r.status = stop;
      r.iterations = it;
      break;
    }
    T uphill = T(0);
    for (std::int64_t i = t; i < L; i += threads) {
      T const next = at[i] - step * g[i];
      uphill = uphill + g[i] * (next - w[i]);
      previous[i] = w[i];
      w[i] = next;
    }
    if (o.nesterov) { momentum.advance(block_sum(uphill, reinterpret_cast<T*>(scratch)) > T(0)); }
    __syncthreads();
    if (g2 < static_cast<T>(o.tolerance)) {
      r.status = static_cast<int>(fit_status::converged);
      r.iterations = it + 1;
      break;
    }
  }
  // Success means finite weights: the last update can overflow where its gradient did not.
  if (!block_all_finite(w, L, reinterpret_cast<int*>(scratch))) { r.status = static_cast<int>(fit_status::diverged); }
  for (std::int64_t i = t; i < L; i += threads) { W[n * L + i] = w[i]; }
  if (t == 0) { report[n] = r; }
}

/// Per-output state of the cuBLAS path, kept on the device between launches.
template <class T>
struct output_state {
  gd_monitor<T> monitor;
  nesterov_state momentum;
  device_output_report report;
  int running;
};

template <class T>
__global__ void init_outputs_kernel(output_state<T>* state, T* W, T* previous, T* point, std::int64_t L,
                                    gd_kernel_options o) {
  std::int64_t const n = blockIdx.x;
  for (std::int64_t i = threadIdx.x; i < L; i += blockDim.x) {
    T const w = initial_weight<T>(static_cast<gd_init>(o.init), o.seed, n, i, L, W[n * L + i]);
    W[n * L + i] = w;
    previous[n * L + i] = w;
    point[n * L + i] = w;
  }
  if (threadIdx.x == 0) {
    state[n] = output_state<T>{gd_monitor<T>{static_cast<T>(o.tolerance), o.stall_window}, nesterov_state{},
                               device_output_report{0, 0.0, static_cast<int>(fit_status::max_iterations)}, 1};
  }
}

/// One iteration for every running output, after G holds A·point (Gram: the
/// gradient is G − B) or the gradient itself (direct: B is null); row n of each
/// matrix is output n. Writes the next point. `running_count` (when not null)
/// counts the outputs still running after this step.
template <class T>
__global__ void update_outputs_kernel(output_state<T>* state, T* W, T* previous, T* point, const T* G, const T* B,
                                      std::int64_t L, gd_kernel_options o, int* running_count) {
  __shared__ double scratch[40];
  std::int64_t const n = blockIdx.x;
  output_state<T>& s = state[n];
  if (!s.running) { return; }  // uniform across the block
  T* const w = W + n * L;
  T* const prev = previous + n * L;
  T* const pt = point + n * L;
  const T* const gn = G + n * L;
  const T* const bn = B != nullptr ? B + n * L : nullptr;
  auto const grad = [&](std::int64_t i) { return bn != nullptr ? gn[i] - bn[i] : gn[i]; };
  T const lr = static_cast<T>(o.learning_rate);
  T part = T(0);
  for (std::int64_t i = threadIdx.x; i < L; i += blockDim.x) {
    T const g = grad(i);
    part = part + g * g;
  }
  T const g2 = block_sum(part, reinterpret_cast<T*>(scratch));
  std::int64_t const it = s.report.iterations;
  gd_monitor<T> monitor = s.monitor;  // a copy per thread: the same state, the same answer
  int stop = monitor.check(g2, it);
  __syncthreads();  // every thread has read the state before thread 0 writes it
  if (stop < 0) {
    T uphill = T(0);
    for (std::int64_t i = threadIdx.x; i < L; i += blockDim.x) {
      T const g = grad(i);
      T const next = pt[i] - lr * g;
      uphill = uphill + g * (next - w[i]);
      prev[i] = w[i];
      w[i] = next;
    }
    bool const restart = o.nesterov ? block_sum(uphill, reinterpret_cast<T*>(scratch)) > T(0) : false;
    nesterov_state momentum = s.momentum;
    if (o.nesterov) { momentum.advance(restart); }
    T const mu = o.nesterov ? momentum.coefficient<T>() : T(0);
    for (std::int64_t i = threadIdx.x; i < L; i += blockDim.x) { pt[i] = w[i] + mu * (w[i] - prev[i]); }
    if (g2 < static_cast<T>(o.tolerance)) {
      stop = static_cast<int>(fit_status::converged);
    } else if (it + 1 >= o.max_iterations) {
      stop = static_cast<int>(fit_status::max_iterations);
    }
    // Success means finite weights: the update can overflow where its gradient did not.
    __syncthreads();
    if (stop >= 0 && !block_all_finite(w, L, reinterpret_cast<int*>(scratch))) {
      stop = static_cast<int>(fit_status::diverged);
    }
    if (threadIdx.x == 0) {
      s.momentum = momentum;
      s.report.iterations = it + 1;
    }
  }
  if (threadIdx.x == 0) {
    s.monitor = monitor;
    s.report.grad_norm2 = static_cast<double>(g2);
    if (stop >= 0) {
      s.report.status = stop;  // diverged and stalled stop before the update: iterations stays `it`
      s.running = 0;
    } else if (running_count != nullptr) {
      atomicAdd(running_count, 1);
    }
  }
}

/// Device buffer freed in stream order on scope exit.
template <class T>
class stream_buffer {
 public:
  stream_buffer(std::int64_t n, cudaStream_t stream) : stream_(stream) {
    if (n > 0) {
      FUSEKIT_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), static_cast<std::size_t>(n) * sizeof(T), stream));
    }
  }
  stream_buffer(const stream_buffer&) = delete;
  stream_buffer& operator=(const stream_buffer&) = delete;
  ~stream_buffer() {
    if (data_ != nullptr) { FUSEKIT_CUDA_TRY_NO_THROW(cudaFreeAsync(data_, stream_)); }
  }
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  cudaStream_t stream_;
};

/// A CUDA graph captured once and launched many times; destroyed on scope exit.
class captured_graph {
 public:
  captured_graph() = default;
  captured_graph(const captured_graph&) = delete;
  captured_graph& operator=(const captured_graph&) = delete;
  ~captured_graph() {
    if (exec_ != nullptr) { FUSEKIT_CUDA_TRY_NO_THROW(cudaGraphExecDestroy(exec_)); }
  }

  [[nodiscard]] bool empty() const { return exec_ == nullptr; }

  /// Records what `enqueue(stream)` issues, on a stream of its own (the caller's
  /// may be the legacy default stream, which cannot be captured).
  template <class Enqueue>
  void capture(Enqueue enqueue) {
    cudaStream_t side = nullptr;
    FUSEKIT_CUDA_TRY(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    try {
      FUSEKIT_CUDA_TRY(cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal));
      try {
        enqueue(side);
      } catch (...) {
        if (cudaStreamEndCapture(side, &graph) != cudaSuccess) { (void)cudaGetLastError(); }
        throw;
      }
      FUSEKIT_CUDA_TRY(cudaStreamEndCapture(side, &graph));
      FUSEKIT_CUDA_TRY(cudaGraphInstantiate(&exec_, graph, 0));
    } catch (...) {
      if (graph != nullptr) { FUSEKIT_CUDA_TRY_NO_THROW(cudaGraphDestroy(graph)); }
      FUSEKIT_CUDA_TRY_NO_THROW(cudaStreamDestroy(side));
      throw;
    }
    FUSEKIT_CUDA_TRY_NO_THROW(cudaGraphDestroy(graph));
    FUSEKIT_CUDA_TRY_NO_THROW(cudaStreamDestroy(side));
  }

  void launch(cudaStream_t stream) const { FUSEKIT_CUDA_TRY(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

/// Threads per output in the iteration kernels: a warp per 32 unknowns, at most 8 warps.
inline int train_block_size(std::int64_t L) {
  std::int64_t const warps = (L + 31) / 32;
  return static_cast<int>(32 * (warps < 8 ? warps : 8));
}

/// Threads of the power iteration's one block: a warp per 32 unknowns, at most 32 warps.
inline int power_block_size(std::int64_t L) {
  std::int64_t const warps = (L + 31) / 32;
  return static_cast<int>(32 * (warps < 32 ? warps : 32));
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
std::vector<output_state<T>> cublas_iterations(cudaStream_t stream, cublasHandle_t h, matrix<const T> X,
                                               matrix<const T> Y, matrix<T> W, const T* A, const T* B,
                                               const gd_options& o, const gd_kernel_options& ko) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  bool const gram = B != nullptr;
  stream_buffer<T> D(gram ? 0 : K * N, stream), previous(N * L, stream), point(N * L, stream), G(N * L, stream);
  stream_buffer<output_state<T>> state(N, stream);
  stream_buffer<int> running(1, stream);
  int const block = train_block_size(L);
  launch(init_outputs_kernel<T>, N, block, 0, stream, state.get(), W.data_handle(), previous.get(), point.get(), L, ko);

  // One batch: `iterations` steps; only the last counts the outputs still running.
  auto const enqueue_batch = [&](cudaStream_t s, std::int64_t iterations) {
    FUSEKIT_CUBLAS_TRY(cublasSetStream(h, s));
    FUSEKIT_CUDA_TRY(cudaMemsetAsync(running.get(), 0, sizeof(int), s));
    const T* x = X.data_handle();
    for (std::int64_t b = 0; b < iterations; ++b) {
      if (gram) {
        // Gᶜ (L × N) = Aᶜ Pᶜ, A symmetric; the update subtracts b_n.
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, L, N, L, T(1), A, L, point.get(), L, T(0), G.get(), L);
      } else {
        // D = X Pᵀ − Y (K × N), as Dᶜ = Pᶜᵀ Xᶜ − Yᶜ (N × K); then Gᶜ = Xᶜ Dᶜᵀ (L × N).
        FUSEKIT_CUDA_TRY(cudaMemcpyAsync(D.get(), Y.data_handle(), static_cast<std::size_t>(K * N) * sizeof(T),
                                         cudaMemcpyDeviceToDevice, s));
        gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, N, K, L, T(1), point.get(), L, x, L, T(-1), D.get(), N);
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), x, L, D.get(), N, T(0), G.get(), L);
      }
      launch(update_outputs_kernel<T>, N, block, 0, s, state.get(), W.data_handle(), previous.get(), point.get(),
             static_cast<const T*>(G.get()), B, L, ko, b + 1 == iterations ? running.get() : nullptr);
    }
  };

  constexpr std::int64_t check_every = 64;
  captured_graph full_batch;
  int running_host = 1;
  for (std::int64_t done = 0; done < o.max_iterations && running_host > 0;) {
    std::int64_t const batch = o.max_iterations - done < check_every ? o.max_iterations - done : check_every;
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
  std::vector<output_state<T>> states(static_cast<std::size_t>(N));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(states.data(), state.get(), states.size() * sizeof(output_state<T>),
                                   cudaMemcpyDeviceToHost, stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  return states;
}

/// Whether the single-launch path fits: A and one output's state in the shared
/// memory a block may opt in to on the current device.
template <class T>
bool single_launch_fits(std::int64_t L) {
  return single_launch_shared_bytes<T>(L) <=
         static_cast<std::size_t>(attributes_of(current_device()).max_shared_per_block_optin);
}

/// Forces a path, for tests and benchmarks: 0 = automatic, 1 = single launch, 2 = cuBLAS.
template <class T>
fit_report gpu_fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                   int forced_path) {
  check_fit(policy, X, Y, W, o);
  std::int64_t const L = X.extent(1), N = Y.extent(1);
  cudaStream_t const stream = policy.stream;
  gd_formulation const formulation = resolve_formulation(o.formulation, X.extent(0), L);
  bool const single = forced_path == 1 || (forced_path == 0 && formulation == gd_formulation::gram && single_launch_fits<T>(L));
  if (single) {
    FUSEKIT_EXPECTS(single_launch_fits<T>(L), "fusekit::fit: the single-launch path needs A = XᵀX in shared memory; L = " +
                                                  std::to_string(L) + " is too large on this device");
  }
  bool const gram = single || formulation == gd_formulation::gram;

  cublasHandle_t const h = cublas_handle(stream);
  // A serves the Gram iterations and the power iteration; direct with a given rate needs neither.
  bool const need_A = gram || !o.learning_rate;
  stream_buffer<T> A(need_A ? L * L : 0, stream), B(gram ? N * L : 0, stream);
  if (need_A) { gram_matrices<T>(h, X, Y, A.get(), B.get()); }
  // The automatic rate: λmax on the device, checked here before anything writes W.
  double learning_rate = o.learning_rate ? *o.learning_rate : 0.0;
  if (!o.learning_rate) {
    stream_buffer<double> power(2 * L + 1, stream);
    launch(power_iteration_kernel<T>, 1, power_block_size(L), 0, stream, static_cast<const T*>(A.get()), L,
           power.get(), power.get() + L, power.get() + 2 * L);
    double lambda = 0;
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&lambda, power.get() + 2 * L, sizeof(double), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    learning_rate = automatic_learning_rate<T>(lambda);
  }
  gd_kernel_options const ko{learning_rate, o.tolerance, o.max_iterations, o.stall_window, o.seed,
                             static_cast<int>(o.init), o.method == gd_method::nesterov ? 1 : 0};

  std::vector<device_output_report> reports(static_cast<std::size_t>(N));
  if (single) {
    std::size_t const shared = single_launch_shared_bytes<T>(L);
    auto const kernel = fit_single_launch_kernel<T>;
    FUSEKIT_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
    stream_buffer<device_output_report> d_reports(N, stream);
    launch(kernel, N, train_block_size(L), shared, stream, static_cast<const T*>(A.get()), static_cast<const T*>(B.get()),
           W.data_handle(), L, ko, d_reports.get());
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(reports.data(), d_reports.get(), reports.size() * sizeof(device_output_report),
                                     cudaMemcpyDeviceToHost, stream));
  } else {
    auto const states = cublas_iterations<T>(stream, h, X, Y, W, A.get(), gram ? B.get() : nullptr, o, ko);
    for (std::size_t n = 0; n < states.size(); ++n) { reports[n] = states[n].report; }
  }
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  fit_report report;
  report.learning_rate = learning_rate;
  report.formulation = gram ? gd_formulation::gram : gd_formulation::direct;
  report.path = single ? "single_launch" : "cublas";
  report.outputs.resize(reports.size());
  for (std::size_t n = 0; n < reports.size(); ++n) {
    report.outputs[n] = {reports[n].iterations, reports[n].grad_norm2, static_cast<fit_status>(reports[n].status)};
  }
  return report;
}

template <class T>
fit_report run_fit(train_tag, const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o) {
  return gpu_fit(policy, X, Y, W, o, 0);
}

/// Y_hat[k, n] = Σ_l X[k, l] W[n, l], sums in l order, one thread per element.
template <class T>
__global__ void predict_kernel(const T* X, const T* W, T* Y_hat, std::int64_t K, std::int64_t L, std::int64_t N) {
  for (std::int64_t e = global_thread_id(); e < K * N; e += grid_stride()) {
    std::int64_t const k = e / N, n = e % N;
    T s = T(0);
    for (std::int64_t l = 0; l < L; ++l) { s = s + X[k * L + l] * W[n * L + l]; }
    Y_hat[e] = s;
  }
}

template <class T>
void run_predict(train_tag, const cuda& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  check_predict(X, W, Y_hat);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
  auto const kernel = predict_kernel<T>;
  // K·N = 0: an empty grid, and nothing is launched or asked of the device.
  launch(kernel, resident_grid(kernel, K * N, default_block_size), default_block_size, 0, policy.stream,
         X.data_handle(), W.data_handle(), Y_hat.data_handle(), K, L, N);
}

}  // namespace detail
}  // namespace fusekit
