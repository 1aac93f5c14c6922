// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the trainer (see train.hpp for the contract). Link
/// `fusekit::train` (fusekit plus cuBLAS) to use it.
///
/// * Single launch: when A = XᵀX and one output's state fit in shared memory
///   (about L ≤ 160 in double, L ≤ 230 in float on an H100/H200), ONE kernel
///   runs the whole fit: each block builds A and b_n, finds the learning rate,
///   and iterates its output to the end, with no host round trip.
/// * cuBLAS: otherwise A and B (GEMM) once, then per iteration one GEMM for all
///   outputs' gradients and one update kernel that keeps each output's state and
///   stopping flags on the device; the host looks at the number of outputs still
///   running every `check_every` iterations only.
///
/// `fit` returns a host report, so it synchronizes the policy's stream.

#include <fusekit/detail/gd.hpp>
#include <fusekit/detail/launch.cuh>
#include <fusekit/reduce.cuh>
#include <fusekit/train.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fusekit {
namespace detail {

#define FUSEKIT_CUBLAS_TRY(call)                                                                           \
  do {                                                                                                     \
    cublasStatus_t const fusekit_cublas_status_ = (call);                                                  \
    if (fusekit_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      throw std::runtime_error(std::string("fusekit: cuBLAS call '") + #call + "' failed at " + __FILE__ + \
                               ":" + std::to_string(__LINE__) + " with status " +                          \
                               std::to_string(static_cast<int>(fusekit_cublas_status_)));                 \
    }                                                                                                      \
  } while (0)

/// What the kernels need of gd_options, by value.
struct gd_kernel_options {
  double learning_rate;  ///< ≤ 0: automatic
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
template <class T>
__device__ T block_sum(T v, T* scratch) {
  for (int s = 16; s >= 1; s /= 2) { v += __shfl_down_sync(0xffffffffu, v, s); }
  int const warp = threadIdx.x / 32;
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

/// Shared memory of the single-launch kernel for L unknowns.
template <class T>
constexpr std::size_t single_launch_shared_bytes(std::int64_t L) {
  return static_cast<std::size_t>(L * L + 5 * L) * sizeof(T) + static_cast<std::size_t>(2 * L + 40) * sizeof(double);
}

/// The whole fit of output blockIdx.x, in one block (Gram formulation).
template <class T>
__global__ void fit_single_launch_kernel(const T* X, const T* Y, T* W, std::int64_t K, std::int64_t L, std::int64_t N,
                                         gd_kernel_options o, device_output_report* report, double* learning_rate) {
  extern __shared__ double shared[];
  double* const v = shared;             // power iteration, L
  double* const u = v + L;              // power iteration, L
  double* const scratch = u + L;        // 40: block sums
  T* const A = reinterpret_cast<T*>(scratch + 40);
  T* const b = A + L * L;
  T* const w = b + L;
  T* const previous = w + L;
  T* const point = previous + L;
  T* const g = point + L;
  std::int64_t const n = blockIdx.x;
  int const t = static_cast<int>(threadIdx.x);
  int const threads = static_cast<int>(blockDim.x);

  // A = XᵀX and b = Xᵀ y_n, sums over k in order.
  for (std::int64_t idx = t; idx < L * L; idx += threads) {
    std::int64_t const i = idx / L, j = idx % L;
    T s = T(0);
    for (std::int64_t k = 0; k < K; ++k) { s = s + X[k * L + i] * X[k * L + j]; }
    A[idx] = s;
  }
  for (std::int64_t i = t; i < L; i += threads) {
    T s = T(0);
    for (std::int64_t k = 0; k < K; ++k) { s = s + X[k * L + i] * Y[k * N + n]; }
    b[i] = s;
    w[i] = initial_weight<T>(static_cast<gd_init>(o.init), o.seed, n, i, L, W[n * L + i]);
    previous[i] = w[i];
  }
  __syncthreads();

  // Learning rate: given, or 1/λ from the same power iteration as the CPU's.
  double lr = o.learning_rate;
  if (lr <= 0) {
    for (std::int64_t i = t; i < L; i += threads) { v[i] = 1.0 / sqrt(static_cast<double>(L)); }
    __syncthreads();
    double lambda = 0;
    for (int it = 0; it < 1000; ++it) {
      double dot = 0, norm2 = 0;
      for (std::int64_t i = t; i < L; i += threads) {
        double s = 0;
        for (std::int64_t j = 0; j < L; ++j) { s += static_cast<double>(A[i * L + j]) * v[j]; }
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
    lr = 1.0 / lambda;
  }
  if (n == 0 && t == 0) { *learning_rate = lr; }
  T const step = static_cast<T>(lr);

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
    T part = T(0);
    for (std::int64_t i = t; i < L; i += threads) {
      T s = T(0);
      for (std::int64_t j = 0; j < L; ++j) { s = s + A[i * L + j] * at[j]; }
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

/// One iteration for every running output, after G holds the gradients at
/// `point` (row n of each matrix is output n). Writes the next point.
template <class T>
__global__ void update_outputs_kernel(output_state<T>* state, T* W, T* previous, T* point, const T* G,
                                      std::int64_t L, T lr, gd_kernel_options o, int* running_count) {
  __shared__ double scratch[40];
  std::int64_t const n = blockIdx.x;
  output_state<T>& s = state[n];
  if (!s.running) { return; }  // uniform across the block
  T* const w = W + n * L;
  T* const prev = previous + n * L;
  T* const pt = point + n * L;
  const T* const g = G + n * L;
  T part = T(0);
  for (std::int64_t i = threadIdx.x; i < L; i += blockDim.x) { part = part + g[i] * g[i]; }
  T const g2 = block_sum(part, reinterpret_cast<T*>(scratch));
  std::int64_t const it = s.report.iterations;
  gd_monitor<T> monitor = s.monitor;  // a copy per thread: the same state, the same answer
  int stop = monitor.check(g2, it);
  __syncthreads();  // every thread has read the state before thread 0 writes it
  if (stop < 0) {
    T uphill = T(0);
    for (std::int64_t i = threadIdx.x; i < L; i += blockDim.x) {
      T const next = pt[i] - lr * g[i];
      uphill = uphill + g[i] * (next - w[i]);
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
    __syncthreads();
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
    } else {
      atomicAdd(running_count, 1);  // nonzero while any output runs
    }
  }
}

/// cuBLAS handle bound to a stream, released on scope exit.
class cublas_handle {
 public:
  explicit cublas_handle(cudaStream_t stream) {
    FUSEKIT_CUBLAS_TRY(cublasCreate(&handle_));
    FUSEKIT_CUBLAS_TRY(cublasSetStream(handle_, stream));
  }
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;
  ~cublas_handle() { cublasDestroy(handle_); }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_{};
};

/// Column-major GEMM C = alpha·op(A)·op(B) + beta·C in T.
template <class T>
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n,
          std::int64_t k, T alpha, const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C,
          std::int64_t ldc) {
  if constexpr (std::is_same_v<T, double>) {
    FUSEKIT_CUBLAS_TRY(cublasDgemm(h, ta, tb, int(m), int(n), int(k), &alpha, A, int(lda), B, int(ldb), &beta, C, int(ldc)));
  } else {
    FUSEKIT_CUBLAS_TRY(cublasSgemm(h, ta, tb, int(m), int(n), int(k), &alpha, A, int(lda), B, int(ldb), &beta, C, int(ldc)));
  }
}

/// Device buffer freed in stream order on scope exit.
template <class T>
class stream_buffer {
 public:
  stream_buffer(std::size_t n, cudaStream_t stream) : stream_(stream) {
    if (n > 0) { FUSEKIT_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), n * sizeof(T), stream)); }
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

inline int train_block_size(std::int64_t L) {
  std::int64_t const warps = (L + 31) / 32;
  return static_cast<int>(32 * (warps < 8 ? warps : 8));
}

template <class T>
fit_report gpu_fit_cublas(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                          const gd_kernel_options& ko, gd_formulation formulation) {
  cudaStream_t const stream = policy.stream;
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  cublas_handle const handle(stream);
  cublasHandle_t const h = handle.get();
  bool const gram = formulation == gd_formulation::gram;
  // Row-major M (r × c) is column-major Mᶜ = Mᵀ (c × r): X is Xᶜ (L × K), W and the
  // point P are (L × N), Y is Yᶜ (N × K), the gradients G are Gᶜ (L × N).
  stream_buffer<T> A(gram ? L * L : 0, stream), B(gram ? N * L : 0, stream), D(gram ? 0 : K * N, stream);
  stream_buffer<T> previous(N * L, stream), point(N * L, stream), G(N * L, stream);
  stream_buffer<output_state<T>> state(N, stream);
  stream_buffer<int> running(1, stream);
  const T* x = X.data_handle();
  const T* y = Y.data_handle();
  if (gram) {
    gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, L, K, T(1), x, L, x, L, T(0), A.get(), L);  // Aᶜ = Xᶜ Xᶜᵀ = XᵀX
    gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), x, L, y, N, T(0), B.get(), L);  // Bᶜ (L × N) = Xᵀ Y
  }
  fit_report report;
  report.formulation = formulation;
  report.path = "cublas";
  if (o.learning_rate) {
    report.learning_rate = *o.learning_rate;
  } else {
    // λmax from the host power iteration on A (L × L, copied once), the CPU's own routine.
    std::vector<T> a_host(static_cast<std::size_t>(L * L));
    if (gram) {
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(a_host.data(), A.get(), L * L * sizeof(T), cudaMemcpyDeviceToHost, stream));
    } else {
      stream_buffer<T> a(L * L, stream);
      gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, L, K, T(1), x, L, x, L, T(0), a.get(), L);
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(a_host.data(), a.get(), L * L * sizeof(T), cudaMemcpyDeviceToHost, stream));
    }
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    report.learning_rate = 1.0 / power_iteration(L, [&](const double* v, double* u) {
      for (std::int64_t i = 0; i < L; ++i) {
        double s = 0;
        for (std::int64_t j = 0; j < L; ++j) { s += static_cast<double>(a_host[i * L + j]) * v[j]; }
        u[i] = s;
      }
    });
  }
  auto const lr = static_cast<T>(report.learning_rate);
  int const block = train_block_size(L);
  init_outputs_kernel<T><<<N, block, 0, stream>>>(state.get(), W.data_handle(), previous.get(), point.get(), L, ko);
  FUSEKIT_CHECK_LAUNCH();
  constexpr std::int64_t check_every = 64;
  int running_host = static_cast<int>(N);
  for (std::int64_t done = 0; done < o.max_iterations && running_host > 0; done += check_every) {
    FUSEKIT_CUDA_TRY(cudaMemsetAsync(running.get(), 0, sizeof(int), stream));
    std::int64_t const batch = o.max_iterations - done < check_every ? o.max_iterations - done : check_every;
    for (std::int64_t b = 0; b < batch; ++b) {
      if (gram) {
        // Gᶜ (L × N) = Aᶜ Pᶜ − Bᶜ, A symmetric.
        FUSEKIT_CUDA_TRY(cudaMemcpyAsync(G.get(), B.get(), N * L * sizeof(T), cudaMemcpyDeviceToDevice, stream));
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, L, N, L, T(1), A.get(), L, point.get(), L, T(-1), G.get(), L);
      } else {
        // D = X Pᵀ − Y (K × N), as Dᶜ = Pᶜᵀ Xᶜ − Yᶜ (N × K); then Gᶜ = Xᶜ Dᶜᵀ (L × N).
        FUSEKIT_CUDA_TRY(cudaMemcpyAsync(D.get(), y, K * N * sizeof(T), cudaMemcpyDeviceToDevice, stream));
        gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, N, K, L, T(1), point.get(), L, x, L, T(-1), D.get(), N);
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), x, L, D.get(), N, T(0), G.get(), L);
      }
      update_outputs_kernel<T><<<N, block, 0, stream>>>(state.get(), W.data_handle(), previous.get(), point.get(),
                                                        G.get(), L, lr, ko, running.get());
      FUSEKIT_CHECK_LAUNCH();
    }
    // Every launch of the batch added the outputs still running: nonzero while any runs.
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&running_host, running.get(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  std::vector<output_state<T>> states(static_cast<std::size_t>(N));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(states.data(), state.get(), N * sizeof(output_state<T>), cudaMemcpyDeviceToHost, stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  report.outputs.resize(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) {
    report.outputs[n] = {states[n].report.iterations, states[n].report.grad_norm2,
                         static_cast<fit_status>(states[n].report.status)};
  }
  return report;
}

/// Which GPU path `fit` takes: "single_launch" when the Gram state fits in shared memory.
template <class T>
bool single_launch_fits(std::int64_t L) {
  int device = 0;
  FUSEKIT_CUDA_TRY(cudaGetDevice(&device));
  int optin = 0;
  FUSEKIT_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return single_launch_shared_bytes<T>(L) <= static_cast<std::size_t>(optin);
}

/// Forces a path, for tests and benchmarks: 0 = automatic, 1 = single launch, 2 = cuBLAS.
template <class T>
fit_report gpu_fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                   int forced_path) {
  check_fit(policy, X, Y, W, o);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  gd_kernel_options const ko{o.learning_rate ? *o.learning_rate : 0.0, o.tolerance, o.max_iterations, o.stall_window,
                             o.seed, static_cast<int>(o.init), o.method == gd_method::nesterov ? 1 : 0};
  gd_formulation const formulation = resolve_formulation(o.formulation, K, L);
  bool const single = forced_path == 1 || (forced_path == 0 && formulation == gd_formulation::gram && single_launch_fits<T>(L));
  if (!single) { return gpu_fit_cublas(policy, X, Y, W, o, ko, formulation); }
  FUSEKIT_EXPECTS(single_launch_fits<T>(L), "fusekit::fit: the single-launch path needs A = XᵀX in shared memory; L = " +
                                                std::to_string(L) + " is too large on this device");
  std::size_t const shared = single_launch_shared_bytes<T>(L);
  auto const kernel = fit_single_launch_kernel<T>;
  FUSEKIT_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  stream_buffer<device_output_report> reports(N, policy.stream);
  stream_buffer<double> lr(1, policy.stream);
  kernel<<<N, train_block_size(L), shared, policy.stream>>>(X.data_handle(), Y.data_handle(), W.data_handle(), K, L, N,
                                                             ko, reports.get(), lr.get());
  FUSEKIT_CHECK_LAUNCH();
  std::vector<device_output_report> host(static_cast<std::size_t>(N));
  fit_report report;
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(host.data(), reports.get(), N * sizeof(device_output_report), cudaMemcpyDeviceToHost,
                                   policy.stream));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&report.learning_rate, lr.get(), sizeof(double), cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  report.formulation = gd_formulation::gram;
  report.path = "single_launch";
  report.outputs.resize(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) {
    report.outputs[n] = {host[n].iterations, host[n].grad_norm2, static_cast<fit_status>(host[n].status)};
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
  kernel<<<resident_grid(kernel, K * N, default_block_size), default_block_size, 0, policy.stream>>>(
      X.data_handle(), W.data_handle(), Y_hat.data_handle(), K, L, N);
  FUSEKIT_CHECK_LAUNCH();
}

}  // namespace detail
}  // namespace fusekit
