// SPDX-License-Identifier: Apache-2.0
//
// 01_reduce_sum — four ways to sum 2^24 floats, and what each one costs
//
// One atomicAdd per element is the sum most people write first on a GPU: it is
// slow (every add serializes on one address) and, in float, wrong from the 6th
// digit on and different on every run. fusekit offers the usual remedies side
// by side: block_atomic (reduce inside a block, one atomic per block), cub
// (CUB's DeviceReduce), and deterministic (a fixed-order tree whose result is
// the same bits on every run, every GPU and the CPU).
//
// The program sums 2^24 uniform [0, 1) floats with each algorithm, prints the
// time, the result and its error against a double reference, and checks each
// error against the algorithm's stated bound. It runs on the GPU when one is
// present, else on the CPU, where each name runs the same algorithm with host
// threads and host atomics (so a laptop shows the same lessons) and
// `deterministic` is the same tree, bit for bit.
//
// Usage: 01_reduce_sum [n]          (default 16777216); exit status 0 when verified.

#include <fusekit/fusekit.cuh>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::reduce_algorithm;

// Milliseconds of the best of five runs of f.
template <class F>
double best_ms(F f) {
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    auto const t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t const n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t{1} << 24;
  std::mt19937 gen(2024);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> x(n);
  double reference = 0;  // every float is exact in double; n·2^-53 relative is far below float's errors
  for (auto& v : x) {
    v = uniform(gen);
    reference += v;
  }

  bool const gpu = fusekit::has_cuda_device();
  float* d_x = nullptr;
  if (gpu) {
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_x, n * sizeof(float)));
    FUSEKIT_CUDA_TRY(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  std::printf("sum of %zu uniform [0, 1) floats on the %s; reference %.10g\n", n, gpu ? "GPU" : "CPU", reference);
  std::printf("  %-14s %10s %18s %12s\n", "algorithm", "time (ms)", "result", "rel. error");

  bool ok = true;
  for (auto algorithm : fusekit::all_reduce_algorithms) {
    float result = 0;
    double ms = 0;
    if (gpu) {
      // fusekit::sum returns a host value, so each timed call includes its synchronization.
      span<const float> const in(d_x, n);
      ms = best_ms([&] { result = fusekit::sum(fusekit::cuda{}, in, algorithm); });
    } else {
      ms = best_ms([&] { result = fusekit::sum(fusekit::cpu{}, span<const float>(x), algorithm); });
    }
    double const rel = std::fabs(result - reference) / reference;
    // Stated bounds (reduce_api.hpp) on positive data, where Σ|x| = Σx: naive (n−1)·u;
    // the others are far tighter; 1e-5 is a generous common check for them.
    double const bound = algorithm == reduce_algorithm::naive_atomic ? static_cast<double>(n) * 0x1p-24 : 1e-5;
    ok = ok && rel <= bound;
    std::printf("  %-14s %10.3f %18.9g %12.2e%s\n", fusekit::to_string(algorithm), ms, result, rel,
                rel <= bound ? "" : "  (over its bound)");
  }
  // The deterministic result does not change between runs, or between GPU and CPU.
  float const again = gpu ? fusekit::sum(fusekit::cuda{}, span<const float>(d_x, n))
                          : fusekit::sum(fusekit::cpu{}, span<const float>(x));
  float const on_cpu = fusekit::sum(fusekit::cpu{}, span<const float>(x));
  ok = ok && again == on_cpu;
  std::printf("deterministic: %.9g here and %.9g on the CPU: %s\n", again, on_cpu,
              again == on_cpu ? "same bits" : "DIFFERENT");
  if (gpu) { FUSEKIT_CUDA_TRY(cudaFree(d_x)); }
  std::printf("%s\n", ok ? "verified" : "FAILED verification");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
