// SPDX-License-Identifier: Apache-2.0
// Sum reductions side by side: speed and accuracy in one table.
//
//   reduce_bench [--benchmark_filter=gpu|cpu] [--benchmark_out=r.json --benchmark_out_format=json]
//
// GPU: naive_atomic (up to 2^24), block_atomic, cub, deterministic,
// thrust::reduce and a read-only kernel (the roofline), at 2^20, 2^24, 2^28
// values: float, float summed in double, int32 summed in int64. CPU: the
// OpenMP sum, the deterministic tree, std::reduce and a read-only loop, for
// those types and double, and uint8 summed in uint64 (its default).
// Counters: bytes_per_second (input bytes), pct_of_read (of the read-only
// roofline at the same n), on the CPU pct_of_read_paired (against the read
// loop over n floats run right before each iteration, clock paused: the two
// over the same seconds) and rel_error against a double (GPU) or long-double
// (CPU) reference. Data: uniform [0, 1) floats, integers in [0, 1000) (mod 256
// for uint8).
// GPU calls use a preallocated workspace, so no allocation is timed.
#include <fusekit/fusekit.cuh>

#include "common/bench_util.cuh"
#include "common/lazy_cache.hpp"
#include "../tests/common/device_buffer.cuh"

#include <benchmark/benchmark.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::reduce_algorithm;
using fusekit::bench::cuda_event_timer;
using fusekit::bench::report_bandwidth;
using fusekit::test::device_buffer;

template <class T>
__host__ __device__ T value_at(std::int64_t i) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(fusekit::bench::uniform01(static_cast<std::uint64_t>(i), 7));
  } else {
    return static_cast<T>(fusekit::bench::hash32(static_cast<std::uint64_t>(i), 7) % 1000u);
  }
}

template <class T>
__global__ void fill(T* x, std::int64_t n) {
  for (std::int64_t i = fusekit::detail::global_thread_id(); i < n; i += fusekit::detail::grid_stride()) {
    x[i] = value_at<T>(i);
  }
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, float>) { return "f32"; }
  if constexpr (std::is_same_v<T, double>) { return "f64"; }
  if constexpr (std::is_same_v<T, std::uint8_t>) { return "u8"; }
  return "i32";
}

template <class T, class Acc>
std::string series(const char* backend, const char* algorithm) {
  std::string name = std::string(backend) + "/" + algorithm + "/" + type_name<T>();
  if (!std::is_same_v<Acc, fusekit::accumulator_t<T>>) { name += "_acc_f64"; }
  return name;
}

void set_error(benchmark::State& state, long double got, long double ref) {
  state.counters["rel_error"] =
      ref == 0 ? static_cast<double>(fabsl(got)) : static_cast<double>(fabsl((got - ref) / ref));
}

// ---- GPU ---------------------------------------------------------------------

// The roofline: every value read once with 16-byte loads, one store per thread
// that never happens (the compiler cannot prove it).
__global__ void read_kernel(const float4* __restrict__ in, std::int64_t n4, float* sink) {
  float acc = 0;
  for (std::int64_t i = fusekit::detail::global_thread_id(); i < n4; i += fusekit::detail::grid_stride()) {
    float4 const v = in[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc == -1.0f) { *sink = acc; }
}

template <class T>
struct device_data {
  device_buffer<T> x;
  double reference = 0;
  explicit device_data(std::int64_t n) : x(static_cast<std::size_t>(n)) {
    fill<<<1024, 256>>>(x.data(), n);
    FUSEKIT_CHECK_LAUNCH();
    // Double reference: cub in double (integers: exact in int64).
    if constexpr (std::is_floating_point_v<T>) {
      reference =
          fusekit::sum(fusekit::cuda{}, x.cview(), reduce_algorithm::run_to_run, fusekit::accumulate_in<double>{});
    } else {
      reference = static_cast<double>(fusekit::sum(fusekit::cuda{}, x.cview(), reduce_algorithm::run_to_run));
    }
  }
};

template <class T>
device_data<T>& gpu_data(std::int64_t n) {
  static fusekit::bench::lazy_cache<std::int64_t, device_data<T>> cache(/*keep_one=*/true);
  return cache.get(n, [n] { return std::make_unique<device_data<T>>(n); });
}

void BM_gpu_read(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  auto& data = gpu_data<float>(n);
  device_buffer<float> sink(1);
  fusekit::bench::l2_flush const flush;
  int const grid = fusekit::detail::resident_grid(read_kernel, n / 4, 256);
  double seconds = 0;
  for (auto _ : state) {
    flush(nullptr);
    cuda_event_timer const timer(state, nullptr, &seconds);
    read_kernel<<<grid, 256>>>(reinterpret_cast<const float4*>(data.x.data()), n / 4, sink.data());
  }
  FUSEKIT_CHECK_LAUNCH();
  fusekit::bench::record_roofline(state, "gpu/read", n, 4.0 * static_cast<double>(n), seconds);
}

template <class T, class Acc>
void BM_gpu_reduce(benchmark::State& state, reduce_algorithm algorithm) {
  std::int64_t const n = state.range(0);
  auto& data = gpu_data<T>(n);
  device_buffer<Acc> out(1);
  device_buffer<std::byte> workspace(
      fusekit::reduce_sum_workspace_bytes<T, Acc>(static_cast<std::size_t>(n), algorithm));
  fusekit::bench::l2_flush const flush;
  double seconds = 0;
  for (auto _ : state) {
    flush(nullptr);
    cuda_event_timer const timer(state, nullptr, &seconds);
    fusekit::reduce_sum(fusekit::cuda{}, data.x.cview(), out.data(), algorithm, workspace.view());
  }
  report_bandwidth(state, "gpu/read", n, static_cast<double>(n) * sizeof(T), seconds);
  set_error(state, out.to_host()[0], data.reference);
}

template <class T, class Acc>
void BM_gpu_thrust(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  auto& data = gpu_data<T>(n);
  fusekit::bench::l2_flush const flush;
  double seconds = 0;
  Acc result{};
  for (auto _ : state) {
    flush(nullptr);
    cuda_event_timer const timer(state, nullptr, &seconds);
    result = thrust::reduce(thrust::device, data.x.data(), data.x.data() + n, Acc(0));  // returns to the host
  }
  report_bandwidth(state, "gpu/read", n, static_cast<double>(n) * sizeof(T), seconds);
  set_error(state, result, data.reference);
}

// ---- CPU ---------------------------------------------------------------------

template <class T>
struct host_data {
  std::vector<T> x;
  long double reference = 0;
  explicit host_data(std::int64_t n) : x(static_cast<std::size_t>(n)) {
    for (std::int64_t i = 0; i < n; ++i) {
      x[static_cast<std::size_t>(i)] = value_at<T>(i);
      reference += static_cast<long double>(x[static_cast<std::size_t>(i)]);
    }
  }
};

template <class T>
host_data<T>& cpu_data(std::int64_t n) {
  static fusekit::bench::lazy_cache<std::int64_t, host_data<T>> cache(/*keep_one=*/false);
  return cache.get(n, [n] { return std::make_unique<host_data<T>>(n); });
}

// The CPU roofline: every value read once, 8 wide (AVX2 like fusekit's own
// loops), all threads, each over one contiguous range with 32 running sums (4
// vectors), so that it waits on memory and not on the additions' latency. (An
// `omp parallel for simd reduction(+)` loop keeps one vector of sums: on the
// 2-core Zen 3 VM it read 2^26 floats in 13.6–14.1 ms where this takes 11–12.)
FUSEKIT_TARGET_AVX2 float read_range(const float* x, std::int64_t begin, std::int64_t end) {
  float acc[32] = {};
  std::int64_t i = begin;
  for (; i + 32 <= end; i += 32) {
#pragma omp simd
    for (int k = 0; k < 32; ++k) { acc[k] += x[i + k]; }
  }
  for (; i < end; ++i) { acc[0] += x[i]; }
  float s = 0;
  for (float a : acc) { s += a; }
  return s;
}

float read_all(const float* x, std::int64_t n) {
  fusekit::cpu const policy{};
  // The sums' own chunks and threads (detail/core/cpu_pool.hpp), so the read is paced as they are.
  fusekit::detail::cpu_chunks const split = fusekit::detail::cpu_split(n, fusekit::cpu_thread_tuning::values_grain);
  std::vector<float> parts(static_cast<std::size_t>(split.chunks), 0.0f);
  fusekit::detail::cpu_for_chunks(policy, split, n, fusekit::cpu_thread_tuning::values_parallel_from,
                                  [&](std::int64_t part, std::int64_t begin, std::int64_t end) {
                                    parts[static_cast<std::size_t>(part)] = read_range(x, begin, end);
                                  });
  float total = 0;
  for (float p : parts) { total += p; }
  return total;
}

void BM_cpu_read(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  auto const& data = cpu_data<float>(n);
  double seconds = 0;
  for (auto _ : state) {
    fusekit::bench::host_timer const timer(seconds);
    fusekit::bench::keep(read_all(data.x.data(), n));
  }
  fusekit::bench::record_roofline(state, "cpu/read", n, 4.0 * static_cast<double>(n), seconds);
}

// A CPU sum timed right after the read loop over n floats, in every iteration
// (pct_of_read_paired; bench_util.cuh, paired_roofline).
template <class T, class Acc, class Sum>
void cpu_sum_iterations(benchmark::State& state, const Sum& sum) {
  std::int64_t const n = state.range(0);
  auto const& data = cpu_data<T>(n);
  const float* const floats = cpu_data<float>(n).x.data();
  fusekit::bench::paired_roofline read(4.0 * static_cast<double>(n), {{floats, static_cast<std::size_t>(n) * 4}},
                                       {{data.x.data(), static_cast<std::size_t>(n) * sizeof(T)}});
  double seconds = 0;
  Acc result{};
  for (auto _ : state) {
    read.run(state, [&] { fusekit::bench::keep(read_all(floats, n)); });
    fusekit::bench::host_timer const timer(seconds);
    result = sum(data);
    fusekit::bench::keep(result);
  }
  double const bytes = static_cast<double>(n) * sizeof(T);
  report_bandwidth(state, "cpu/read", n, bytes, seconds);
  read.report(state, "read", bytes, seconds);
  set_error(state, result, data.reference);
}

template <class T, class Acc>
void BM_cpu_reduce(benchmark::State& state, reduce_algorithm algorithm) {
  cpu_sum_iterations<T, Acc>(state, [algorithm](const host_data<T>& data) {
    Acc result{};
    fusekit::reduce_sum(fusekit::cpu{}, span<const T>(data.x), &result, algorithm);
    return result;
  });
}

template <class T, class Acc>
void BM_cpu_std_reduce(benchmark::State& state) {
  cpu_sum_iterations<T, Acc>(
      state, [](const host_data<T>& data) { return std::reduce(data.x.begin(), data.x.end(), Acc(0)); });
}

/// A call's own cost: `sum` of 64 floats with `cpu{threads}` (0: OpenMP's
/// default), where the work is a few nanoseconds. Target: every form at most 0.3 µs.
void BM_cpu_call_overhead(benchmark::State& state) {
  std::vector<float> const x(64, 1.0f);
  fusekit::cpu const policy{static_cast<int>(state.range(0))};
  for (auto _ : state) { benchmark::DoNotOptimize(fusekit::sum(policy, x)); }
}

template <class T, class Acc>
void register_gpu(const std::vector<std::int64_t>& sizes) {
  auto add = [&](const std::string& name, auto fn, std::int64_t max_n) {
    auto* b = benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Unit(benchmark::kMicrosecond);
    for (auto n : sizes) {
      if (n <= max_n) { b->Arg(n); }
    }
  };
  constexpr std::int64_t all = std::int64_t{1} << 40;
  add(
      series<T, Acc>("gpu", "naive_atomic"),
      [](benchmark::State& s) { BM_gpu_reduce<T, Acc>(s, reduce_algorithm::naive_atomic); }, std::int64_t{1} << 24);
  add(
      series<T, Acc>("gpu", "block_atomic"),
      [](benchmark::State& s) { BM_gpu_reduce<T, Acc>(s, reduce_algorithm::block_atomic); }, all);
  add(
      series<T, Acc>("gpu", "cub"), [](benchmark::State& s) { BM_gpu_reduce<T, Acc>(s, reduce_algorithm::run_to_run); },
      all);
  add(
      series<T, Acc>("gpu", "deterministic"),
      [](benchmark::State& s) { BM_gpu_reduce<T, Acc>(s, reduce_algorithm::deterministic); }, all);
  add(series<T, Acc>("gpu", "thrust"), BM_gpu_thrust<T, Acc>, all);
}

template <class T, class Acc>
void register_cpu(const std::vector<std::int64_t>& sizes) {
  auto add = [&](const std::string& name, auto fn, std::int64_t max_n = std::int64_t{1} << 40) {
    auto* b = benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->Unit(benchmark::kMicrosecond);
    for (auto n : sizes) {
      if (n <= max_n) { b->Arg(n); }
    }
  };
  // Each name runs its own algorithm on the CPU too; naive_atomic (one contended
  // host atomic per element) only at the smallest size.
  add(
      series<T, Acc>("cpu", "naive_atomic"),
      [](benchmark::State& s) { BM_cpu_reduce<T, Acc>(s, reduce_algorithm::naive_atomic); }, sizes.front());
  add(series<T, Acc>("cpu", "block_atomic"),
      [](benchmark::State& s) { BM_cpu_reduce<T, Acc>(s, reduce_algorithm::block_atomic); });
  add(series<T, Acc>("cpu", "cub"),
      [](benchmark::State& s) { BM_cpu_reduce<T, Acc>(s, reduce_algorithm::run_to_run); });
  add(series<T, Acc>("cpu", "deterministic"),
      [](benchmark::State& s) { BM_cpu_reduce<T, Acc>(s, reduce_algorithm::deterministic); });
  add(series<T, Acc>("cpu", "std_reduce"), BM_cpu_std_reduce<T, Acc>);
}

void register_benchmarks() {
  std::vector<std::int64_t> const gpu_sizes =
      fusekit::bench::sizes_or({std::int64_t{1} << 20, std::int64_t{1} << 24, std::int64_t{1} << 28});
  std::vector<std::int64_t> const cpu_sizes =
      fusekit::bench::sizes_or({std::int64_t{1} << 20, std::int64_t{1} << 24, std::int64_t{1} << 26});
  if (fusekit::has_cuda_device()) {
    auto* read =
        benchmark::RegisterBenchmark("gpu/read/f32", BM_gpu_read)->UseManualTime()->Unit(benchmark::kMicrosecond);
    for (auto n : gpu_sizes) { read->Arg(n); }
    register_gpu<float, float>(gpu_sizes);
    register_gpu<float, double>(gpu_sizes);
    register_gpu<std::int32_t, std::int64_t>(gpu_sizes);
  }
  benchmark::RegisterBenchmark("cpu/call_overhead/sum_of_64_f32/threads", BM_cpu_call_overhead)
      ->Unit(benchmark::kMicrosecond)
      ->Arg(0)
      ->Arg(1)
      ->Arg(2)
      ->Arg(8);
  auto* read = benchmark::RegisterBenchmark("cpu/read/f32", BM_cpu_read)->UseRealTime()->Unit(benchmark::kMicrosecond);
  for (auto n : cpu_sizes) { read->Arg(n); }
  register_cpu<float, float>(cpu_sizes);
  register_cpu<float, double>(cpu_sizes);
  register_cpu<std::int32_t, std::int64_t>(cpu_sizes);
  register_cpu<double, double>(cpu_sizes);
  register_cpu<std::uint8_t, std::uint64_t>(cpu_sizes);
}

}  // namespace

int main(int argc, char** argv) { return fusekit::bench::run_benchmarks(argc, argv, register_benchmarks); }
