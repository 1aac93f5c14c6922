// SPDX-License-Identifier: Apache-2.0
#pragma once
// Benchmark helpers: cudaEvent timing for UseManualTime, an L2 flush between
// iterations, and bandwidth counters relative to a copy roofline measured in
// the same run.

#include <fusekit/config.hpp>
#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/core/random.hpp>
#include <fusekit/error.hpp>

#include "arguments.hpp"

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fusekit::bench {

/// Times the GPU work issued on `stream` between construction and destruction,
/// and reports it to Google Benchmark (which must use UseManualTime()).
class cuda_event_timer {
 public:
  /// `total_seconds`, when given, accumulates the measured times.
  cuda_event_timer(benchmark::State& state, cudaStream_t stream, double* total_seconds = nullptr)
      : state_(state), stream_(stream), total_seconds_(total_seconds) {
    FUSEKIT_CUDA_TRY(cudaEventCreate(&start_));
    FUSEKIT_CUDA_TRY(cudaEventCreate(&stop_));
    FUSEKIT_CUDA_TRY(cudaEventRecord(start_, stream_));
  }
  cuda_event_timer(const cuda_event_timer&) = delete;
  cuda_event_timer& operator=(const cuda_event_timer&) = delete;
  ~cuda_event_timer() {
    FUSEKIT_CUDA_TRY_NO_THROW(cudaEventRecord(stop_, stream_));
    FUSEKIT_CUDA_TRY_NO_THROW(cudaEventSynchronize(stop_));
    float ms = 0;
    FUSEKIT_CUDA_TRY_NO_THROW(cudaEventElapsedTime(&ms, start_, stop_));
    state_.SetIterationTime(static_cast<double>(ms) / 1e3);
    if (total_seconds_ != nullptr) { *total_seconds_ += static_cast<double>(ms) / 1e3; }
    FUSEKIT_CUDA_TRY_NO_THROW(cudaEventDestroy(start_));
    FUSEKIT_CUDA_TRY_NO_THROW(cudaEventDestroy(stop_));
  }

 private:
  benchmark::State& state_;
  cudaStream_t stream_;
  double* total_seconds_;
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

/// Evicts the L2 cache (writes twice its size) so every iteration reads DRAM.
class l2_flush {
 public:
  l2_flush() {
    int device = 0;
    FUSEKIT_CUDA_TRY(cudaGetDevice(&device));
    int l2 = 0;
    FUSEKIT_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    bytes_ = 2 * static_cast<std::size_t>(l2);
    if (bytes_ > 0) { FUSEKIT_CUDA_TRY(cudaMalloc(&buffer_, bytes_)); }
  }
  l2_flush(const l2_flush&) = delete;
  l2_flush& operator=(const l2_flush&) = delete;
  ~l2_flush() { FUSEKIT_CUDA_TRY_NO_THROW(cudaFree(buffer_)); }
  void operator()(cudaStream_t stream) const {
    if (bytes_ > 0) { FUSEKIT_CUDA_TRY(cudaMemsetAsync(buffer_, 0, bytes_, stream)); }
  }

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Roofline bandwidths (bytes/s) measured in this run, by name ("gpu/copy",
/// "cpu/read", ...) and n; filled by the roofline benchmarks, which run first.
inline std::map<std::pair<std::string, std::int64_t>, double>& roofline() {
  static std::map<std::pair<std::string, std::int64_t>, double> table;
  return table;
}

/// Sets Google Benchmark's bytes_per_second, and "pct_of_<kind>": this
/// benchmark's bandwidth as a percentage of roofline `name` ("gpu/copy") at the
/// same n, when that was measured. `seconds` is the total time of the iterations.
inline void report_bandwidth(benchmark::State& state, const std::string& name, std::int64_t n,
                             double bytes_per_iteration, double seconds) {
  auto const iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes_per_iteration * iterations));
  state.counters["n"] = static_cast<double>(n);
  auto const it = roofline().find({name, n});
  if (it != roofline().end() && it->second > 0 && seconds > 0) {
    std::string const kind = name.substr(name.find('/') + 1);
    state.counters["pct_of_" + kind] = 100.0 * bytes_per_iteration * iterations / seconds / it->second;
  }
}

/// Records roofline `name` at n: `bytes_per_iteration` moved per iteration.
inline void record_roofline(benchmark::State& state, const std::string& name, std::int64_t n,
                            double bytes_per_iteration, double seconds) {
  if (seconds > 0) { roofline()[{name, n}] = bytes_per_iteration * static_cast<double>(state.iterations()) / seconds; }
  report_bandwidth(state, name, n, bytes_per_iteration, seconds);
}

/// Counter-based random numbers (fusekit's own), the same on host and device.
__host__ __device__ inline std::uint32_t hash32(std::uint64_t i, std::uint32_t seed) {
  return fusekit::detail::hash32(i, seed);
}
__host__ __device__ inline float uniform01(std::uint64_t i, std::uint32_t seed) {
  return fusekit::detail::uniform01<float>(i, seed);
}

/// N(0, 1) by Box-Muller over two uniform streams, computed in double so the
/// host, the device and NumPy (bench/peers) agree to the last bit of a float.
__host__ __device__ inline double standard_normal(std::uint64_t i, std::uint32_t seed) {
  double const u1 = (static_cast<double>(hash32(i, seed) >> 8) + 1.0) * 0x1p-24;  // (0, 1]
  double const u2 = static_cast<double>(hash32(i, seed + 1) >> 8) * 0x1p-24;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/// The hidden layer's data, as in the user's case: greyscales whole in [0, 255),
/// weights N(0.5, 0.1). Element i is the same on the host, the device and in the peers.
__host__ __device__ inline std::uint32_t greyscale_at(std::uint64_t i) { return hash32(i, 1) % 255u; }
__host__ __device__ inline float weight_at(std::uint64_t i) {
  return static_cast<float>(0.5 + 0.1 * standard_normal(i, 2));
}

/// Fills the layer's inputs on the device: greyscale_at(i) and weight_at(i).
template <class G>
__global__ void fill_layer_inputs(G* grey, float* w, std::int64_t n) {
  for (std::int64_t i = fusekit::detail::global_thread_id(); i < n; i += fusekit::detail::grid_stride()) {
    grey[i] = static_cast<G>(greyscale_at(static_cast<std::uint64_t>(i)));
    w[i] = weight_at(static_cast<std::uint64_t>(i));
  }
}

/// Keeps `value` alive for the optimizer. Google Benchmark's DoNotOptimize on a
/// non-const lvalue uses an inline-asm constraint ("+m,r") that nvcc's host pass
/// miscompiles (the value came back as 0 in our runs); the const form only reads.
template <class T>
inline void keep(const T& value) {
  benchmark::DoNotOptimize(value);
}

/// Records fusekit's version and the GPU, driver and runtime in the JSON context.
inline void add_context() {
  benchmark::AddCustomContext("fusekit_version", std::to_string(FUSEKIT_VERSION));
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    benchmark::AddCustomContext("gpu", "none");
    return;
  }
  cudaDeviceProp prop{};
  FUSEKIT_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  int runtime = 0;
  FUSEKIT_CUDA_TRY(cudaDriverGetVersion(&driver));
  FUSEKIT_CUDA_TRY(cudaRuntimeGetVersion(&runtime));
  benchmark::AddCustomContext("gpu", prop.name);
  benchmark::AddCustomContext("cuda_driver", std::to_string(driver));
  benchmark::AddCustomContext("cuda_runtime", std::to_string(runtime));
}

/// The sizes given with --sizes=LIST (empty when none were).
inline std::vector<std::int64_t>& chosen_sizes() {
  static std::vector<std::int64_t> sizes;
  return sizes;
}

/// The bench's own sizes unless --sizes chose others.
inline std::vector<std::int64_t> sizes_or(std::vector<std::int64_t> defaults) {
  return chosen_sizes().empty() ? defaults : chosen_sizes();
}

/// Takes --sizes=LIST out of argv: comma-separated numbers or powers 2^k,
/// e.g. --sizes=2^20,1000000. Returns false (and says why) on a bad list.
inline bool take_sizes_argument(int& argc, char** argv) {
  std::string const flag = "--sizes=";
  for (int i = 1; i < argc; ++i) {
    std::string const arg = argv[i];
    if (arg.rfind(flag, 0) != 0) { continue; }
    std::string list = arg.substr(flag.size());
    for (std::size_t at = 0; at <= list.size();) {
      std::size_t const comma = std::min(list.find(',', at), list.size());
      std::string const item = list.substr(at, comma - at);
      char* end = nullptr;
      long long value = 0;
      if (item.rfind("2^", 0) == 0) {
        long long const k = std::strtoll(item.c_str() + 2, &end, 10);
        value = (k >= 0 && k < 48) ? (1LL << k) : 0;
      } else {
        value = std::strtoll(item.c_str(), &end, 10);
      }
      if (item.empty() || end == nullptr || *end != '\0' || value <= 0) {
        std::fprintf(stderr, "--sizes: '%s' is not a positive size (a number or 2^k)\n", item.c_str());
        return false;
      }
      chosen_sizes().push_back(value);
      at = comma + 1;
    }
    for (int j = i; j + 1 < argc; ++j) { argv[j] = argv[j + 1]; }
    --argc;
    return true;
  }
  return true;
}

/// The main of every fusekit bench: registers the benchmarks (GPU ones only
/// when a device is present), records the context, runs them. Besides Google
/// Benchmark's options it takes --sizes=LIST (numbers or 2^k, comma-separated).
/// The main of a bench. `default_min_time` (seconds, as Google Benchmark's
/// --benchmark_min_time takes them), when given, is the bench's own default:
/// the command line's --benchmark_min_time still wins.
inline int run_benchmarks(int argc, char** argv, void (*register_benchmarks)(),
                          const char* default_min_time = nullptr) {
  std::vector<std::string> args(argv, argv + argc);
  if (default_min_time != nullptr) { args = with_default_flag(args, "benchmark_min_time", default_min_time); }
  std::vector<char*> pointers;
  for (std::string& a : args) { pointers.push_back(a.data()); }
  pointers.push_back(nullptr);
  argc = static_cast<int>(args.size());
  argv = pointers.data();
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help") {
      std::printf(
          "fusekit bench: [--sizes=LIST] (numbers or 2^k, comma-separated; default: the bench's own)\n"
          "and Google Benchmark's options:\n");
    }
  }
  if (!take_sizes_argument(argc, argv)) { return 1; }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) { return 1; }
  register_benchmarks();
  add_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

/// Wall time of a host-side region, added to a total.
class host_timer {
 public:
  explicit host_timer(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  host_timer(const host_timer&) = delete;
  host_timer& operator=(const host_timer&) = delete;
  ~host_timer() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

/// Host buffers, as (address, bytes).
using buffers = std::vector<std::pair<const void*, std::size_t>>;

/// Evicts every byte of `b` from every cache level (one clflush per 64-byte
/// line, then a fence; `dc civac` on AArch64), so that the next pass over
/// them reads memory: a pass timed after it is not flattered by data that an
/// earlier pass left in a cache, whatever the last-level cache's size.
inline void evict_from_caches(const buffers& b) {
  for (const auto& [p, bytes] : b) {
    const char* const c = static_cast<const char*>(p);
    for (std::size_t i = 0; i < bytes; i += 64) {
#if defined(__x86_64__)
      __builtin_ia32_clflush(c + i);
#elif defined(__aarch64__)
      __asm__ volatile("dc civac, %0" : : "r"(c + i) : "memory");
#endif
    }
  }
#if defined(__x86_64__)
  __builtin_ia32_mfence();
#elif defined(__aarch64__)
  __asm__ volatile("dsb ish" : : : "memory");
#endif
}

/// A roofline paired with a task: `run` times the roofline (the copy or read
/// loop) right before an iteration of the task, with the benchmark's clock
/// paused, and adds up its seconds. Where the memory bandwidth drifts (a VM's
/// by up to 2x within an hour), the ratio of the two totals compares the task
/// with the roofline over the same seconds, which medians of repetitions
/// taken minutes apart do not. Both start cold: the roofline's buffers are
/// evicted from the caches before it runs, and the task's before the task
/// runs (clock paused), so neither is flattered by what a cache kept.
class paired_roofline {
 public:
  /// `bytes`: what one run of the roofline moves; `roof_buffers` and
  /// `task_buffers`: what the roofline and the task read and write.
  paired_roofline(double bytes, buffers roof_buffers, buffers task_buffers)
      : bytes_(bytes), roof_buffers_(std::move(roof_buffers)), task_buffers_(std::move(task_buffers)) {}

  template <class Roof>
  void run(benchmark::State& state, const Roof& roof) {
    state.PauseTiming();
    evict_from_caches(roof_buffers_);
    double once = 0;
    {
      host_timer const timer(once);
      roof();
    }
    seconds_ += once;
    runs_.push_back(once);
    evict_from_caches(task_buffers_);
    state.ResumeTiming();
  }

  /// Sets "pct_of_<kind>_paired": 100 x the task's bandwidth (`task_bytes` per
  /// iteration, `task_seconds` in all) over the roofline's in the same
  /// iterations; and "roofline_spread_pct": how far the roofline's own runs
  /// spread, its 75th percentile time over its 25th, minus 1, in percent
  /// (summarize.py warns past 10%: the machine was not quiet).
  void report(benchmark::State& state, const std::string& kind, double task_bytes, double task_seconds) const {
    if (seconds_ > 0 && task_seconds > 0) {
      state.counters["pct_of_" + kind + "_paired"] = 100.0 * (task_bytes / task_seconds) / (bytes_ / seconds_);
    }
    if (runs_.size() >= 2) {
      std::vector<double> sorted = runs_;
      std::sort(sorted.begin(), sorted.end());
      double const fast = sorted[sorted.size() / 4], slow = sorted[sorted.size() - 1 - sorted.size() / 4];
      if (fast > 0) { state.counters["roofline_spread_pct"] = 100.0 * (slow / fast - 1.0); }
    }
  }

 private:
  double bytes_;
  buffers roof_buffers_;
  buffers task_buffers_;
  double seconds_ = 0;
  std::vector<double> runs_;  // each run's seconds
};

}  // namespace fusekit::bench
