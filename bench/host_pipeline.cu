// SPDX-License-Identifier: Apache-2.0
// Host-resident data through the GPU (detail/host_data/cuda_pipeline.cuh): the fused hidden
// layer and the deterministic sum given host memory, pinned and pageable,
// against the copy-everything-in, compute, copy-everything-back version, and
// against the roofline of the bus: pinned H2D alone, D2H alone, and both at
// once moving the layer's bytes (grey and w in, out back).
//
//   host_pipeline_bench [--sizes=LIST] [--benchmark_filter=...] [--benchmark_out=r.json --benchmark_out_format=json]
//
// Every time is host to host (a call, then a wait for its stream), from the
// first byte read to the last byte written in host memory, as a user sees it.
// bytes_per_second counts the bytes that must cross the bus (layer: 9 per
// element; sum: 4); pct_of_both and pct_of_h2d give that bandwidth as a share
// of the concurrent and the H2D-only copy measured in the same run. Without a
// CUDA device it registers nothing (the CPU has no bus to cross).
#include <fusekit/fusekit.cuh>

#include "common/bench_util.cuh"
#include "common/lazy_cache.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using ::cuda::std::span;

// Pinned host memory of n values of T.
template <class T>
struct pinned_array {
  explicit pinned_array(std::int64_t n) : size(n) {
    FUSEKIT_CUDA_TRY(cudaMallocHost(&data, static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(T)));
  }
  pinned_array(const pinned_array&) = delete;
  pinned_array& operator=(const pinned_array&) = delete;
  ~pinned_array() { FUSEKIT_CUDA_TRY_NO_THROW(cudaFreeHost(data)); }
  T* data = nullptr;
  std::int64_t size = 0;
};

template <class T>
struct device_array {
  explicit device_array(std::int64_t n) {
    FUSEKIT_CUDA_TRY(cudaMalloc(&data, static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(T)));
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { FUSEKIT_CUDA_TRY_NO_THROW(cudaFree(data)); }
  T* data = nullptr;
};

// The layer's data in every memory kind, for one n (one size lives at a time).
struct layer_data {
  explicit layer_data(std::int64_t n)
      : n(n),
        grey(static_cast<std::size_t>(n)),
        w(static_cast<std::size_t>(n)),
        out(static_cast<std::size_t>(n)),
        p_grey(n),
        p_w(n),
        p_out(n),
        d_grey(n),
        d_w(n),
        d_out(n) {
    fusekit::bench::fill_layer_inputs<<<1024, 256>>>(d_grey.data, d_w.data, n);
    FUSEKIT_CHECK_LAUNCH();
    FUSEKIT_CUDA_TRY(cudaMemcpy(p_grey.data, d_grey.data, static_cast<std::size_t>(n), cudaMemcpyDeviceToHost));
    FUSEKIT_CUDA_TRY(cudaMemcpy(p_w.data, d_w.data, static_cast<std::size_t>(n) * 4, cudaMemcpyDeviceToHost));
    std::memcpy(grey.data(), p_grey.data, static_cast<std::size_t>(n));
    std::memcpy(w.data(), p_w.data, static_cast<std::size_t>(n) * 4);
    FUSEKIT_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    FUSEKIT_CUDA_TRY(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking));
  }
  ~layer_data() {
    FUSEKIT_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream));
    FUSEKIT_CUDA_TRY_NO_THROW(cudaStreamDestroy(second));
  }
  std::int64_t n;
  std::vector<std::uint8_t> grey;
  std::vector<float> w, out;
  pinned_array<std::uint8_t> p_grey;
  pinned_array<float> p_w, p_out;
  device_array<std::uint8_t> d_grey;
  device_array<float> d_w, d_out;
  cudaStream_t stream = nullptr;
  cudaStream_t second = nullptr;
};

layer_data& data_for(std::int64_t n) {
  static fusekit::bench::lazy_cache<std::int64_t, layer_data> cache(true);
  return cache.get(n, [n] { return std::make_unique<layer_data>(n); });
}

// Runs `call` (which ends by waiting for its work) once per iteration, timed host to host.
template <class Call>
double time_host_to_host(benchmark::State& state, const Call& call) {
  call();  // warm: the pipeline's streams, staging buffers and kernels
  double seconds = 0;
  for (auto _ : state) {
    auto const t0 = std::chrono::steady_clock::now();
    call();
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(s);
    seconds += s;
  }
  return seconds;
}

// ---- the roofline: pinned copies -------------------------------------------------

// One direction alone: n floats between pinned memory and the device.
template <cudaMemcpyKind Kind>
void BM_copy(benchmark::State& state) {
  layer_data& d = data_for(state.range(0));
  std::size_t const bytes = static_cast<std::size_t>(d.n) * 4;
  bool const up = Kind == cudaMemcpyHostToDevice;
  double const s = time_host_to_host(state, [&] {
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(up ? static_cast<void*>(d.d_w.data) : d.p_out.data,
                                     up ? static_cast<const void*>(d.p_w.data) : d.d_out.data, bytes, Kind, d.stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(d.stream));
  });
  fusekit::bench::record_roofline(state, up ? "host/h2d" : "host/d2h", d.n, static_cast<double>(bytes), s);
}

// The layer's bytes both ways at once: grey and w in on one stream, out back on another.
void BM_both(benchmark::State& state) {
  layer_data& d = data_for(state.range(0));
  auto const n = static_cast<std::size_t>(d.n);
  double const s = time_host_to_host(state, [&] {
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d.d_grey.data, d.p_grey.data, n, cudaMemcpyHostToDevice, d.stream));
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d.d_w.data, d.p_w.data, n * 4, cudaMemcpyHostToDevice, d.stream));
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d.p_out.data, d.d_out.data, n * 4, cudaMemcpyDeviceToHost, d.second));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(d.stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(d.second));
  });
  fusekit::bench::record_roofline(state, "host/both", d.n, 9.0 * static_cast<double>(n), s);
}

// ---- the fused layer on host data ------------------------------------------------

enum class layer_variant { pinned, pageable, sequential_pinned, sequential_pageable };

template <layer_variant V>
void BM_layer(benchmark::State& state) {
  layer_data& d = data_for(state.range(0));
  auto const n = static_cast<std::size_t>(d.n);
  fusekit::cuda_staged const policy{d.stream};
  auto const device_layer = [&] {
    fusekit::hidden_layer(policy, span<const std::uint8_t>(d.d_grey.data, n), span<const float>(d.d_w.data, n),
                          span<float>(d.d_out.data, n));
  };
  double const s = time_host_to_host(state, [&] {
    if constexpr (V == layer_variant::pinned) {
      fusekit::hidden_layer(policy, span<const std::uint8_t>(d.p_grey.data, n), span<const float>(d.p_w.data, n),
                            span<float>(d.p_out.data, n));
    } else if constexpr (V == layer_variant::pageable) {
      fusekit::hidden_layer(policy, d.grey, d.w, d.out);
    } else {
      const std::uint8_t* grey = V == layer_variant::sequential_pinned ? d.p_grey.data : d.grey.data();
      const float* w = V == layer_variant::sequential_pinned ? d.p_w.data : d.w.data();
      float* out = V == layer_variant::sequential_pinned ? d.p_out.data : d.out.data();
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d.d_grey.data, grey, n, cudaMemcpyHostToDevice, d.stream));
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d.d_w.data, w, n * 4, cudaMemcpyHostToDevice, d.stream));
      device_layer();
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(out, d.d_out.data, n * 4, cudaMemcpyDeviceToHost, d.stream));
    }
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(d.stream));
  });
  fusekit::bench::report_bandwidth(state, "host/both", d.n, 9.0 * static_cast<double>(n), s);
}

// ---- the deterministic sum on host data ------------------------------------------

enum class sum_variant { pinned, pageable, sequential_pinned };

template <sum_variant V>
void BM_sum(benchmark::State& state) {
  layer_data& d = data_for(state.range(0));
  auto const n = static_cast<std::size_t>(d.n);
  fusekit::cuda_staged const policy{d.stream};
  auto const det = fusekit::reduce_algorithm::deterministic;
  float const expected = fusekit::sum(policy, span<const float>(d.d_w.data, n), det);
  float got = 0;
  double const s = time_host_to_host(state, [&] {
    if constexpr (V == sum_variant::pinned) {
      got = fusekit::sum(policy, span<const float>(d.p_w.data, n), det);
    } else if constexpr (V == sum_variant::pageable) {
      got = fusekit::sum(policy, d.w, det);
    } else {
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d.d_w.data, d.p_w.data, n * 4, cudaMemcpyHostToDevice, d.stream));
      got = fusekit::sum(policy, span<const float>(d.d_w.data, n), det);
    }
  });
  // The same bits as over device memory, or the run fails.
  if (std::memcmp(&got, &expected, sizeof got) != 0) { state.SkipWithError("host sum differs from the device sum"); }
  fusekit::bench::report_bandwidth(state, "host/h2d", d.n, 4.0 * static_cast<double>(n), s);
}

void register_benchmarks() {
  if (!fusekit::has_cuda_device()) {
    std::printf("host_pipeline_bench: no CUDA device; nothing to measure\n");
    return;
  }
  std::vector<std::int64_t> const sizes =
      fusekit::bench::sizes_or({std::int64_t{1} << 20, std::int64_t{1} << 24, std::int64_t{1} << 28});
  // Size by size, so that one size's data (2.25 GB per kind at 2^28) is built
  // once and the rooflines at n are measured before the calls they scale.
  for (std::int64_t const n : sizes) {
    auto reg = [&](const char* name, void (*fn)(benchmark::State&)) {
      benchmark::RegisterBenchmark(name, fn)->UseManualTime()->Unit(benchmark::kMillisecond)->Arg(n);
    };
    reg("host/h2d/f32", BM_copy<cudaMemcpyHostToDevice>);
    reg("host/d2h/f32", BM_copy<cudaMemcpyDeviceToHost>);
    reg("host/both/layer", BM_both);
    reg("host/fused_pinned/layer", BM_layer<layer_variant::pinned>);
    reg("host/fused_pageable/layer", BM_layer<layer_variant::pageable>);
    reg("host/sequential_pinned/layer", BM_layer<layer_variant::sequential_pinned>);
    reg("host/sequential_pageable/layer", BM_layer<layer_variant::sequential_pageable>);
    reg("host/sum_pinned/f32", BM_sum<sum_variant::pinned>);
    reg("host/sum_pageable/f32", BM_sum<sum_variant::pageable>);
    reg("host/sum_sequential_pinned/f32", BM_sum<sum_variant::sequential_pinned>);
  }
}

}  // namespace

// 0.2 s per benchmark unless --benchmark_min_time says otherwise: 30 of them,
// each moving up to 2.25 GB per iteration over the bus.
int main(int argc, char** argv) { return fusekit::bench::run_benchmarks(argc, argv, register_benchmarks, "0.2"); }
