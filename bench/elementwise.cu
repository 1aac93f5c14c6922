// SPDX-License-Identifier: Apache-2.0
// The fused hidden layer against the same three functors run as three passes,
// and against a plain copy (the roofline), on the GPU and on the CPU.
//
//   elementwise_bench [--benchmark_filter=gpu|cpu] [--benchmark_out=r.json --benchmark_out_format=json]
//
// Counters: bytes_per_second counts the layer's minimum traffic (read grey and
// w, write out) for every variant, so fused and unfused compare by time;
// pct_of_copy is that bandwidth over the copy kernel's (read + write) at the
// same n, measured in the same run; on the CPU, pct_of_copy_paired is the same
// ratio against a copy of n floats run right before each iteration, clock
// paused (the two over the same seconds). GPU times come from CUDA events, with
// the L2 cache flushed before each iteration.
#include <fusekit/fusekit.cuh>

#include "common/bench_util.cuh"
#include "../tests/common/device_buffer.cuh"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::bench::cuda_event_timer;
using fusekit::bench::report_bandwidth;
using fusekit::test::device_buffer;

// ---- GPU ---------------------------------------------------------------------

// The roofline: a float4 grid-stride copy, n divisible by 4.
__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::int64_t n4) {
  for (std::int64_t i = fusekit::detail::global_thread_id(); i < n4; i += fusekit::detail::grid_stride()) {
    out[i] = in[i];
  }
}

void BM_gpu_copy(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  device_buffer<float> in(n), out(n);
  FUSEKIT_CUDA_TRY(cudaMemset(in.data(), 0x3c, n * sizeof(float)));
  fusekit::bench::l2_flush const flush;
  int const grid = fusekit::detail::resident_grid(copy_kernel, n / 4, 256);
  double seconds = 0;
  for (auto _ : state) {
    flush(nullptr);
    cuda_event_timer const timer(state, nullptr, &seconds);
    copy_kernel<<<grid, 256>>>(reinterpret_cast<const float4*>(in.data()), reinterpret_cast<float4*>(out.data()),
                               n / 4);
  }
  FUSEKIT_CHECK_LAUNCH();
  fusekit::bench::record_roofline(state, "gpu/copy", n, 8.0 * static_cast<double>(n), seconds);
}

template <class G, bool Fused>
void BM_gpu_layer(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  device_buffer<G> grey(n);
  device_buffer<float> w(n), out(n);
  fusekit::bench::fill_layer_inputs<<<1024, 256>>>(grey.data(), w.data(), n);
  FUSEKIT_CHECK_LAUNCH();
  fusekit::bench::l2_flush const flush;
  double seconds = 0;
  for (auto _ : state) {
    flush(nullptr);
    cuda_event_timer const timer(state, nullptr, &seconds);
    if constexpr (Fused) {
      fusekit::hidden_layer(fusekit::cuda{}, grey.cview(), w.cview(), out.view());
    } else {
      fusekit::hidden_layer_unfused(fusekit::cuda{}, grey.cview(), w.cview(), out.view());
    }
  }
  report_bandwidth(state, "gpu/copy", n, static_cast<double>(n) * (sizeof(G) + 2 * sizeof(float)), seconds);
}

// ---- CPU ---------------------------------------------------------------------

// The CPU roofline: a copy loop, 8 wide (AVX2 like fusekit's own loops), all threads.
FUSEKIT_TARGET_AVX2 void copy_all(const float* src, float* dst, std::int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < n; ++i) { dst[i] = src[i]; }
}

void BM_cpu_copy(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  std::vector<float> in(n, 1.0f), out(n);
  double seconds = 0;
  for (auto _ : state) {
    fusekit::bench::host_timer const timer(seconds);
    copy_all(in.data(), out.data(), n);
    fusekit::bench::keep(out.data());
  }
  fusekit::bench::record_roofline(state, "cpu/copy", n, 8.0 * static_cast<double>(n), seconds);
}

// A CPU task (`bytes` of traffic per call) timed right after a copy of n
// floats, in every iteration (pct_of_copy_paired; bench_util.cuh, paired_roofline).
template <class Task>
void cpu_copy_paired_iterations(benchmark::State& state, double bytes, fusekit::bench::buffers task_buffers,
                                const Task& task) {
  std::int64_t const n = state.range(0);
  std::vector<float> copy_in(n, 1.0f), copy_out(n);
  std::size_t const floats = static_cast<std::size_t>(n) * sizeof(float);
  fusekit::bench::paired_roofline copy(8.0 * static_cast<double>(n),
                                       {{copy_in.data(), floats}, {copy_out.data(), floats}}, std::move(task_buffers));
  double seconds = 0;
  for (auto _ : state) {
    copy.run(state, [&] { copy_all(copy_in.data(), copy_out.data(), n); });
    fusekit::bench::host_timer const timer(seconds);
    task();
  }
  report_bandwidth(state, "cpu/copy", n, bytes, seconds);
  copy.report(state, "copy", bytes, seconds);
}

template <class G, bool Fused>
void BM_cpu_layer(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  std::vector<G> grey(n);
  std::vector<float> w(n), out(n);
  for (std::int64_t i = 0; i < n; ++i) {
    grey[i] = static_cast<G>(fusekit::bench::greyscale_at(static_cast<std::uint64_t>(i)));
    w[i] = fusekit::bench::weight_at(static_cast<std::uint64_t>(i));
  }
  std::size_t const un = static_cast<std::size_t>(n);
  cpu_copy_paired_iterations(
      state, static_cast<double>(n) * (sizeof(G) + 2 * sizeof(float)),
      {{grey.data(), un * sizeof(G)}, {w.data(), un * 4}, {out.data(), un * 4}}, [&] {
        if constexpr (Fused) {
          fusekit::hidden_layer(fusekit::cpu{}, span<const G>(grey), span<const float>(w), span<float>(out));
        } else {
          fusekit::hidden_layer_unfused(fusekit::cpu{}, span<const G>(grey), span<const float>(w), span<float>(out));
        }
        fusekit::bench::keep(out.data());
      });
}

// The layer's two parts alone, for where its time goes (docs/performance.md):
// normalize and weigh (12 bytes an element: grey and w in, out), and tanh over
// the layer's own arguments (8 bytes: x in, out).
template <bool Tanh>
void BM_cpu_part(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  std::vector<float> grey(n), w(n), x(n), out(n);
  for (std::int64_t i = 0; i < n; ++i) {
    grey[i] = static_cast<float>(fusekit::bench::greyscale_at(static_cast<std::uint64_t>(i)));
    w[i] = fusekit::bench::weight_at(static_cast<std::uint64_t>(i));
    x[i] = grey[i] / 255.0f * w[i];
  }
  std::size_t const bytes = static_cast<std::size_t>(n) * sizeof(float);
  fusekit::bench::buffers touched{{out.data(), bytes}};
  if (Tanh) {
    touched.push_back({x.data(), bytes});
  } else {
    touched.push_back({grey.data(), bytes});
    touched.push_back({w.data(), bytes});
  }
  cpu_copy_paired_iterations(state, static_cast<double>(n) * (Tanh ? 8.0 : 12.0), std::move(touched), [&] {
    if constexpr (Tanh) {
      fusekit::transform(fusekit::cpu{}, span<float>(out), fusekit::tanh_activate{}, span<const float>(x));
    } else {
      fusekit::transform(fusekit::cpu{}, span<float>(out), fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}),
                         span<const float>(grey), span<const float>(w));
    }
    fusekit::bench::keep(out.data());
  });
}

void register_benchmarks() {
  std::vector<std::int64_t> const gpu_sizes =
      fusekit::bench::sizes_or({std::int64_t{1} << 20, std::int64_t{1} << 24, std::int64_t{1} << 28});
  std::vector<std::int64_t> const cpu_sizes =
      fusekit::bench::sizes_or({std::int64_t{1} << 20, 10000000, std::int64_t{1} << 24});
  auto sizes = [](benchmark::internal::Benchmark* b, const std::vector<std::int64_t>& ns) {
    for (auto n : ns) { b->Arg(n); }
  };
  if (fusekit::has_cuda_device()) {
    // The copy first: the others report their bandwidth as a share of it.
    sizes(benchmark::RegisterBenchmark("gpu/copy", BM_gpu_copy)->UseManualTime()->Unit(benchmark::kMicrosecond),
          gpu_sizes);
    sizes(benchmark::RegisterBenchmark("gpu/fused/f32", BM_gpu_layer<float, true>)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond),
          gpu_sizes);
    sizes(benchmark::RegisterBenchmark("gpu/unfused/f32", BM_gpu_layer<float, false>)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond),
          gpu_sizes);
    sizes(benchmark::RegisterBenchmark("gpu/fused/u8", BM_gpu_layer<std::uint8_t, true>)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond),
          gpu_sizes);
    sizes(benchmark::RegisterBenchmark("gpu/unfused/u8", BM_gpu_layer<std::uint8_t, false>)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond),
          gpu_sizes);
  }
  sizes(benchmark::RegisterBenchmark("cpu/copy", BM_cpu_copy)->UseRealTime()->Unit(benchmark::kMicrosecond), cpu_sizes);
  sizes(benchmark::RegisterBenchmark("cpu/fused/f32", BM_cpu_layer<float, true>)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond),
        cpu_sizes);
  sizes(benchmark::RegisterBenchmark("cpu/unfused/f32", BM_cpu_layer<float, false>)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond),
        cpu_sizes);
  sizes(benchmark::RegisterBenchmark("cpu/fused/u8", BM_cpu_layer<std::uint8_t, true>)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond),
        cpu_sizes);
  sizes(benchmark::RegisterBenchmark("cpu/unfused/u8", BM_cpu_layer<std::uint8_t, false>)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond),
        cpu_sizes);
  sizes(benchmark::RegisterBenchmark("cpu/part/normalize_weigh", BM_cpu_part<false>)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond),
        cpu_sizes);
  sizes(benchmark::RegisterBenchmark("cpu/part/tanh", BM_cpu_part<true>)->UseRealTime()->Unit(benchmark::kMicrosecond),
        cpu_sizes);
}

}  // namespace

int main(int argc, char** argv) { return fusekit::bench::run_benchmarks(argc, argv, register_benchmarks); }
