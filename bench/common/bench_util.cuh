// SPDX-License-Identifier: Apache-2.0
#pragma once
// Benchmark helpers: cudaEvent timing for UseManualTime, an L2 flush between
// iterations, and bandwidth counters relative to a copy roofline measured in
// the same run.

#include <fusekit/error.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <map>

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

/// Copy-roofline bandwidths (bytes/s) by (device, n), filled by the copy benchmarks.
inline std::map<std::pair<bool, std::int64_t>, double>& roofline() {
  static std::map<std::pair<bool, std::int64_t>, double> table;
  return table;
}

/// Sets Google Benchmark's bytes_per_second, and "pct_of_copy": this
/// benchmark's bandwidth as a percentage of the copy roofline at the same n,
/// when that was measured. `seconds` is the total time the iterations took.
inline void report_bandwidth(benchmark::State& state, bool gpu, std::int64_t n, double bytes_per_iteration,
                             double seconds) {
  auto const iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes_per_iteration * iterations));
  state.counters["n"] = static_cast<double>(n);
  auto const it = roofline().find({gpu, n});
  if (it != roofline().end() && it->second > 0 && seconds > 0) {
    state.counters["pct_of_copy"] = 100.0 * bytes_per_iteration * iterations / seconds / it->second;
  }
}

/// Records the copy roofline at n: `bytes_per_iteration` moved per iteration.
inline void record_roofline(benchmark::State& state, bool gpu, std::int64_t n, double bytes_per_iteration,
                            double seconds) {
  if (seconds > 0) { roofline()[{gpu, n}] = bytes_per_iteration * static_cast<double>(state.iterations()) / seconds; }
  report_bandwidth(state, gpu, n, bytes_per_iteration, seconds);
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

}  // namespace fusekit::bench
