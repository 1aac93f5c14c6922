// SPDX-License-Identifier: Apache-2.0
// The trainer: time to convergence and iterations at (K, L, N) = (9, 9, 9) and
// (1000, 100, 10), plain (capped at 10^6 iterations) and Nesterov; time per
// iteration at (100000, 256, 32), direct and Gram. X uniform [0, 1), Y = X W_trueᵀ
// with W_true ~ N(0, 1), automatic learning rate, tol 1e-8 (double) and 1e-4 (float).
//
// GPU: the single-launch path, the cuBLAS path, and "one kernel per array
// operation" (the shape the user hit: four launches and a host read of gradᵀgrad
// per iteration; timed over its first 1000 iterations per output and reported per
// iteration, since running it to convergence takes minutes). CPU: direct and Gram.
//
// The recommended method for real data, conjugate gradients with the Jacobi
// preconditioner and the relative tolerance alone (gd_options::recommended()),
// to convergence at the same shapes and at (100000, 256, 32); and every method
// and preconditioner on raw-unit tabular data (tests/common/train_problem.hpp's
// make_raw_problem: units from 10^-3 to 10^4, correlated pairs, an intercept),
// with its status, iterations and error against a long-double QR solution.
//
//   train_bench [--benchmark_filter=gpu|cpu] [--benchmark_out=r.json --benchmark_out_format=json]
#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include "common/bench_util.cuh"
#include "common/lazy_cache.hpp"
#include "../tests/common/device_buffer.cuh"
#include "../tests/common/train_problem.hpp"

#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace {

using fusekit::gd_formulation;
using fusekit::gd_method;
using fusekit::gd_options;
using fusekit::test::device_buffer;
template <class T>
using cmatrix = fusekit::matrix<const T>;

template <class T>
struct problem {
  std::int64_t K, L, N;
  std::vector<T> X, Y;
};

template <class T>
std::unique_ptr<problem<T>> make_problem(std::int64_t K, std::int64_t L, std::int64_t N) {
  auto p = std::make_unique<problem<T>>(problem<T>{K, L, N, std::vector<T>(K * L), std::vector<T>(K * N)});
  std::vector<double> w(N * L);
  for (std::int64_t i = 0; i < N * L; ++i) {
    w[i] = fusekit::bench::standard_normal(static_cast<std::uint64_t>(i), 12);
  }
  for (std::int64_t i = 0; i < K * L; ++i) {
    p->X[i] = fusekit::detail::uniform01<T>(static_cast<std::uint64_t>(i), 11);
  }
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (std::int64_t l = 0; l < L; ++l) { s += static_cast<double>(p->X[k * L + l]) * w[n * L + l]; }
      p->Y[k * N + n] = static_cast<T>(s);
    }
  }
  return p;
}

template <class T>
const problem<T>& get_problem(std::int64_t K, std::int64_t L, std::int64_t N) {
  static fusekit::bench::lazy_cache<std::tuple<std::int64_t, std::int64_t, std::int64_t>, problem<T>> cache(
      /*keep_one=*/false);
  return cache.get({K, L, N}, [=] { return make_problem<T>(K, L, N); });
}

template <class T>
gd_options options(gd_method method, gd_formulation formulation, std::int64_t fixed_iterations) {
  gd_options o;
  o.method = method;
  o.formulation = formulation;
  o.tolerance = std::is_same_v<T, double> ? 1e-8 : 1e-4;
  o.max_iterations = 1000000;  // plain gradient descent is capped here
  if (fixed_iterations > 0) {  // exactly this many: a tolerance nothing meets, no stall check
    o.tolerance = static_cast<double>(std::numeric_limits<T>::min());
    o.max_iterations = fixed_iterations;
    o.stall_window = fixed_iterations + 1;
  }
  return o;
}

void report(benchmark::State& state, const fusekit::fit_report& r, double seconds) {
  std::int64_t converged = 0;
  for (const auto& out : r.outputs) { converged += out.status == fusekit::fit_status::converged; }
  state.counters["iterations"] = static_cast<double>(r.most_iterations());
  state.counters["converged"] = static_cast<double>(converged);
  state.counters["outputs"] = static_cast<double>(r.outputs.size());
  double const its = static_cast<double>(r.most_iterations()) * static_cast<double>(state.iterations());
  if (its > 0) { state.counters["us_per_iteration"] = seconds / its * 1e6; }
  // Per output and iteration, the unit of the kernel-per-op loop, which takes
  // the outputs one after another (compare.py's P6 divides the two).
  double output_its = 0;
  for (const auto& out : r.outputs) { output_its += static_cast<double>(out.iterations); }
  output_its *= static_cast<double>(state.iterations());
  if (output_its > 0) { state.counters["us_per_output_iteration"] = seconds / output_its * 1e6; }
}

// ---- CPU ---------------------------------------------------------------------

template <class T>
void cpu_fit_to_state(benchmark::State& state, std::int64_t K, std::int64_t L, std::int64_t N, const gd_options& o) {
  auto const& p = get_problem<T>(K, L, N);
  std::vector<T> W(N * L);
  fusekit::fit_report r;
  double seconds = 0;
  for (auto _ : state) {
    fusekit::bench::host_timer const timer(seconds);
    r = fusekit::fit(fusekit::cpu{}, cmatrix<T>(p.X.data(), K, L), cmatrix<T>(p.Y.data(), K, N),
                     fusekit::matrix<T>(W.data(), N, L), o);
  }
  report(state, r, seconds);
}

template <class T>
void BM_cpu_fit(benchmark::State& state, std::int64_t K, std::int64_t L, std::int64_t N, gd_method m, gd_formulation f,
                std::int64_t fixed) {
  cpu_fit_to_state<T>(state, K, L, N, options<T>(m, f, fixed));
}

// The recommended method to convergence (relative tolerance alone).
template <class T>
void BM_cpu_recommended(benchmark::State& state, std::int64_t K, std::int64_t L, std::int64_t N) {
  cpu_fit_to_state<T>(state, K, L, N, fusekit::gd_options::recommended());
}

// Raw-unit data (tabular sizes): status, iterations and ‖W − W*‖/‖W*‖ of a
// method and preconditioner, W* from least_squares_reference. `stopped` counts
// outputs by status: converged, max_iterations, diverged, stalled.
template <class T>
void BM_cpu_raw(benchmark::State& state, std::int64_t K, std::int64_t L, std::int64_t N, gd_method m,
                fusekit::gd_preconditioner pc) {
  struct raw {
    fusekit::test::problem<T> p;
    std::vector<long double> W_star;
  };
  static fusekit::bench::lazy_cache<std::tuple<std::int64_t, std::int64_t, std::int64_t>, raw> cache(
      /*keep_one=*/true);
  auto const& entry = cache.get({K, L, N}, [=] {
    auto problem = fusekit::test::make_raw_problem<T>(K, L, N, 77, 0.1);
    auto W_star = fusekit::test::least_squares_reference(problem);
    return std::make_unique<raw>(raw{std::move(problem), std::move(W_star)});
  });
  auto const& p = entry.p;
  auto const& W_star = entry.W_star;
  gd_options o = fusekit::gd_options::recommended();
  o.method = m;
  o.preconditioner = pc;
  o.max_iterations = 2000000;
  std::vector<T> W(N * L);
  fusekit::fit_report r;
  double seconds = 0;
  for (auto _ : state) {
    fusekit::bench::host_timer const timer(seconds);
    r = fusekit::fit(fusekit::cpu{}, cmatrix<T>(p.X.data(), K, L), cmatrix<T>(p.Y.data(), K, N),
                     fusekit::matrix<T>(W.data(), N, L), o);
  }
  report(state, r, seconds);
  for (auto s : {fusekit::fit_status::max_iterations, fusekit::fit_status::diverged, fusekit::fit_status::stalled}) {
    std::int64_t count = 0;
    for (const auto& out : r.outputs) { count += out.status == s; }
    state.counters[fusekit::to_string(s)] = static_cast<double>(count);
  }
  state.counters["rel_error"] = fusekit::test::relative_error(W, W_star);
}

// A competing process for as long as it lives: a child that spins on a core,
// as another program on a busy machine does. A small fit should not notice it
// (one descheduled OpenMP thread used to stall the whole call: 24 ms for 0.65).
class competing_process {
 public:
  competing_process() : pid_(fork()) {
    if (pid_ == 0) {
      for (;;) { __asm__ volatile(""); }
    }
  }
  competing_process(const competing_process&) = delete;
  competing_process& operator=(const competing_process&) = delete;
  ~competing_process() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

 private:
  pid_t pid_;
};

template <class T>
void BM_cpu_fit_loaded(benchmark::State& state, std::int64_t K, std::int64_t L, std::int64_t N) {
  competing_process const busy;
  BM_cpu_fit<T>(state, K, L, N, gd_method::plain, gd_formulation::gram, 0);
}

// ---- GPU ---------------------------------------------------------------------

template <class T>
struct device_problem {
  device_buffer<T> X, Y, W;
  explicit device_problem(const problem<T>& p) : X(p.X), Y(p.Y), W(static_cast<std::size_t>(p.N * p.L)) {}
};

template <class T>
void BM_gpu_fit(benchmark::State& state, std::int64_t K, std::int64_t L, std::int64_t N, gd_method m, gd_formulation f,
                std::int64_t fixed, bool single_launch) {
  auto const& p = get_problem<T>(K, L, N);
  device_problem<T> d(p);
  fusekit::fit_report r;
  double seconds = 0;
  for (auto _ : state) {
    fusekit::bench::host_timer const timer(seconds);  // fit synchronizes: wall time is GPU time plus launch
    r = fusekit::detail::cuda_fit(fusekit::cuda{}, cmatrix<T>(d.X.data(), K, L), cmatrix<T>(d.Y.data(), K, N),
                                  fusekit::matrix<T>(d.W.data(), N, L), options<T>(m, f, fixed),
                                  fusekit::detail::fixed_path{single_launch});
  }
  report(state, r, seconds);
}

// The slow shape: one kernel per array operation, gradᵀgrad read by the host each iteration.
template <class T>
__global__ void matvec_minus(const T* X, const T* w, const T* Y, T* delta, std::int64_t K, std::int64_t L,
                             std::int64_t N, std::int64_t n) {
  for (std::int64_t k = fusekit::detail::global_thread_id(); k < K; k += fusekit::detail::grid_stride()) {
    T s = 0;
    for (std::int64_t l = 0; l < L; ++l) { s += X[k * L + l] * w[l]; }
    delta[k] = s - Y[k * N + n];
  }
}
template <class T>
__global__ void transpose_matvec(const T* X, const T* delta, T* g, std::int64_t K, std::int64_t L) {
  for (std::int64_t l = fusekit::detail::global_thread_id(); l < L; l += fusekit::detail::grid_stride()) {
    T s = 0;
    for (std::int64_t k = 0; k < K; ++k) { s += X[k * L + l] * delta[k]; }
    g[l] = s;
  }
}
template <class T>
__global__ void dot_self(const T* g, T* out, std::int64_t L) {
  if (fusekit::detail::global_thread_id() == 0) {
    T s = 0;
    for (std::int64_t l = 0; l < L; ++l) { s += g[l] * g[l]; }
    *out = s;
  }
}
template <class T>
__global__ void axpy(T* w, const T* g, T lr, std::int64_t L) {
  for (std::int64_t l = fusekit::detail::global_thread_id(); l < L; l += fusekit::detail::grid_stride()) {
    w[l] -= lr * g[l];
  }
}

template <class T>
void BM_gpu_per_operation(benchmark::State& state, std::int64_t K, std::int64_t L, std::int64_t N) {
  auto const& p = get_problem<T>(K, L, N);
  device_problem<T> d(p);
  device_buffer<T> delta(K), g(L), g2(1);
  T const lr = static_cast<T>(fusekit::fit(fusekit::cpu{}, cmatrix<T>(p.X.data(), K, L), cmatrix<T>(p.Y.data(), K, N),
                                           fusekit::matrix<T>(std::vector<T>(N * L).data(), N, L),
                                           options<T>(gd_method::plain, gd_formulation::direct, 1))
                                  .learning_rate);
  constexpr std::int64_t measured = 1000;  // iterations per output
  double seconds = 0;
  for (auto _ : state) {
    fusekit::bench::host_timer const timer(seconds);
    FUSEKIT_CUDA_TRY(cudaMemset(d.W.data(), 0, N * L * sizeof(T)));
    for (std::int64_t n = 0; n < N; ++n) {
      T* w = d.W.data() + n * L;
      for (std::int64_t it = 0; it < measured; ++it) {
        matvec_minus<<<(K + 255) / 256, 256>>>(d.X.data(), w, d.Y.data(), delta.data(), K, L, N, n);
        transpose_matvec<<<(L + 255) / 256, 256>>>(d.X.data(), delta.data(), g.data(), K, L);
        dot_self<<<1, 32>>>(g.data(), g2.data(), L);
        axpy<<<(L + 255) / 256, 256>>>(w, g.data(), lr, L);
        T host_g2 = 0;  // `if grad @ grad < tol`: the host waits for the value each iteration
        FUSEKIT_CUDA_TRY(cudaMemcpy(&host_g2, g2.data(), sizeof(T), cudaMemcpyDeviceToHost));
        fusekit::bench::keep(host_g2);
      }
    }
  }
  FUSEKIT_CHECK_LAUNCH();
  // One output at a time: each iteration is one output's.
  state.counters["us_per_iteration"] = seconds / (static_cast<double>(measured * N) * state.iterations()) * 1e6;
  state.counters["us_per_output_iteration"] = state.counters["us_per_iteration"];
}

std::string shape(std::int64_t K, std::int64_t L, std::int64_t N) {
  return std::to_string(K) + "x" + std::to_string(L) + "x" + std::to_string(N);
}

template <class T>
void register_type(const char* type, bool gpu) {
  auto name = [&](const char* backend, const char* variant, std::int64_t K, std::int64_t L, std::int64_t N) {
    return std::string(backend) + "/" + variant + "/" + type + "/" + shape(K, L, N);
  };
  struct dims {
    std::int64_t K, L, N;
  };
  for (dims const d : {dims{9, 9, 9}, dims{1000, 100, 10}}) {
    std::int64_t const K = d.K, L = d.L, N = d.N;
    for (auto m : {gd_method::plain, gd_method::nesterov}) {
      std::string const method = fusekit::to_string(m);
      for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
        benchmark::RegisterBenchmark(name("cpu", (method + "_" + fusekit::to_string(f)).c_str(), K, L, N).c_str(),
                                     [=](benchmark::State& s) { BM_cpu_fit<T>(s, K, L, N, m, f, 0); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->Iterations(1);
      }
      if (gpu) {
        benchmark::RegisterBenchmark(
            name("gpu", (method + "_single_launch").c_str(), K, L, N).c_str(),
            [=](benchmark::State& s) { BM_gpu_fit<T>(s, K, L, N, m, gd_formulation::gram, 0, true); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->Iterations(3);
        benchmark::RegisterBenchmark(
            name("gpu", (method + "_cublas").c_str(), K, L, N).c_str(),
            [=](benchmark::State& s) { BM_gpu_fit<T>(s, K, L, N, m, gd_formulation::gram, 0, false); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->Iterations(1);
      }
    }
    if (K * L * N < 10000) {  // a small fit, with another process spinning on a core
      benchmark::RegisterBenchmark(name("cpu", "plain_gram_loaded", K, L, N).c_str(),
                                   [=](benchmark::State& s) { BM_cpu_fit_loaded<T>(s, K, L, N); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(20);
    }
    if (gpu) {
      benchmark::RegisterBenchmark(name("gpu", "plain_per_operation", K, L, N).c_str(),
                                   [=](benchmark::State& s) { BM_gpu_per_operation<T>(s, K, L, N); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
    }
  }
  // The recommended method to convergence, where lstsq is the peer.
  for (dims const d : {dims{9, 9, 9}, dims{1000, 100, 10}, dims{100000, 256, 32}}) {
    std::int64_t const K = d.K, L = d.L, N = d.N;
    benchmark::RegisterBenchmark(name("cpu", "cg_jacobi", K, L, N).c_str(),
                                 [=](benchmark::State& s) { BM_cpu_recommended<T>(s, K, L, N); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(K * L > 1000000 ? 1 : 5);
  }
  // Raw-unit tabular data: every method and preconditioner, to convergence or their status.
  for (dims const d : {dims{442, 11, 3}, dims{20000, 64, 4}}) {
    std::int64_t const K = d.K, L = d.L, N = d.N;
    for (auto m : {gd_method::plain, gd_method::nesterov, gd_method::conjugate_gradient}) {
      for (auto pc : {fusekit::gd_preconditioner::none, fusekit::gd_preconditioner::jacobi}) {
        std::string const variant = std::string("raw_") + fusekit::to_string(m) + "_" + fusekit::to_string(pc);
        benchmark::RegisterBenchmark(name("cpu", variant.c_str(), K, L, N).c_str(),
                                     [=](benchmark::State& s) { BM_cpu_raw<T>(s, K, L, N, m, pc); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->Iterations(1);
      }
    }
  }
  // Per iteration at (100000, 256, 32): 100 iterations (CPU direct: 3, about a second each).
  std::int64_t const K = 100000, L = 256, N = 32;
  for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
    std::int64_t const fixed = f == gd_formulation::direct ? 3 : 100;
    benchmark::RegisterBenchmark(name("cpu", (std::string("fixed_") + fusekit::to_string(f)).c_str(), K, L, N).c_str(),
                                 [=](benchmark::State& s) { BM_cpu_fit<T>(s, K, L, N, gd_method::plain, f, fixed); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    if (gpu) {
      benchmark::RegisterBenchmark(
          name("gpu", (std::string("fixed_") + fusekit::to_string(f)).c_str(), K, L, N).c_str(),
          [=](benchmark::State& s) { BM_gpu_fit<T>(s, K, L, N, gd_method::plain, f, 100, false); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
    }
  }
}

void register_benchmarks() {
  bool const gpu = fusekit::has_cuda_device();
  register_type<double>("f64", gpu);
  register_type<float>("f32", gpu);
}

}  // namespace

int main(int argc, char** argv) { return fusekit::bench::run_benchmarks(argc, argv, register_benchmarks); }
