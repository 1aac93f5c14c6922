// SPDX-License-Identifier: Apache-2.0
//
// 00_hidden_layer — one fused kernel for activate(weigh(normalize(greyscale), weights))
//
// The layer a small network spends its time in: n = 1,000,000 greyscales (whole
// numbers in [0, 255)), weights drawn from N(0.5, 0.1), and
//
//     out[i] = tanh((grey[i] / 255) * w[i])
//
// Written as three GPU passes (normalize, weigh, activate) every pass reads and
// writes device memory. fusekit composes the three functors at compile time
// into ONE kernel that reads grey and w once and writes out once; the same
// functor object runs on the CPU when there is no GPU. tanh_activate stays
// accurate (within 1.6 ulp) and returns ±1, never NaN, where (e^x − e^−x) /
// (e^x + e^−x) overflows.
//
// The program runs on the GPU when one is present, else on the CPU, checks
// every output against a long-double reference and prints the times of the
// fused layer and of the three-pass version.
//
// Usage: 00_hidden_layer [n]        (default 1000000); exit status 0 when verified.

#include <fusekit/fusekit.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

using ::cuda::std::span;

// The user's data: greyscales whole in [0, 255), weights from N(0.5, 0.1).
std::vector<std::uint8_t> make_greyscales(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(0, 254);
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) { x = static_cast<std::uint8_t>(dist(gen)); }
  return v;
}

std::vector<float> make_weights(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.5, 0.1);
  std::vector<float> v(n);
  for (auto& x : v) { x = static_cast<float>(dist(gen)); }
  return v;
}

// Largest error of out against tanhl of the same normalized, weighted value, in ulps.
double worst_ulp(const std::vector<std::uint8_t>& grey, const std::vector<float>& w, const std::vector<float>& out) {
  double worst = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    float const x = (static_cast<float>(grey[i]) / 255.0f) * w[i];
    long double const ref = tanhl(static_cast<long double>(x));
    int e = 0;
    (void)std::frexp(std::fabs(ref), &e);
    long double const ulp = std::ldexp(1.0L, (e < -125 ? -125 : e) - 24);
    worst = std::max(worst, static_cast<double>(std::fabs(out[i] - ref) / ulp));
  }
  return worst;
}

// Milliseconds of `layer` on the GPU, by CUDA events, best of a few runs.
template <class F>
double gpu_ms(F layer) {
  cudaEvent_t start, stop;
  FUSEKIT_CUDA_TRY(cudaEventCreate(&start));
  FUSEKIT_CUDA_TRY(cudaEventCreate(&stop));
  float best = 1e30f;
  for (int run = 0; run < 5; ++run) {
    FUSEKIT_CUDA_TRY(cudaEventRecord(start));
    layer();
    FUSEKIT_CUDA_TRY(cudaEventRecord(stop));
    FUSEKIT_CUDA_TRY(cudaEventSynchronize(stop));
    float ms = 0;
    FUSEKIT_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms);
  }
  FUSEKIT_CUDA_TRY(cudaEventDestroy(start));
  FUSEKIT_CUDA_TRY(cudaEventDestroy(stop));
  return best;
}

template <class F>
double cpu_ms(F layer) {
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    auto const t0 = std::chrono::steady_clock::now();
    layer();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t const n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  auto const grey = make_greyscales(n, 2024);
  auto const w = make_weights(n, 7);
  std::vector<float> out(n);
  double fused_ms = 0;
  double unfused_ms = 0;
  char const* where = "CPU";

  if (fusekit::has_cuda_device()) {
    where = "GPU";
    std::uint8_t* d_grey = nullptr;
    float* d_w = nullptr;
    float* d_out = nullptr;
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_grey, n));
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_w, n * sizeof(float)));
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_out, n * sizeof(float)));
    FUSEKIT_CUDA_TRY(cudaMemcpy(d_grey, grey.data(), n, cudaMemcpyHostToDevice));
    FUSEKIT_CUDA_TRY(cudaMemcpy(d_w, w.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    span<const std::uint8_t> const g(d_grey, n);
    span<const float> const wv(d_w, n);
    span<float> const o(d_out, n);
    fusekit::cuda const gpu{};  // the default stream; pass your own cudaStream_t
    unfused_ms = gpu_ms([&] { fusekit::hidden_layer_unfused(gpu, g, wv, o); });
    fused_ms = gpu_ms([&] { fusekit::hidden_layer(gpu, g, wv, o); });  // one kernel
    FUSEKIT_CUDA_TRY(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    FUSEKIT_CUDA_TRY(cudaFree(d_grey));
    FUSEKIT_CUDA_TRY(cudaFree(d_w));
    FUSEKIT_CUDA_TRY(cudaFree(d_out));
  } else {
    span<const std::uint8_t> const g(grey);
    span<const float> const wv(w);
    span<float> const o(out);
    fusekit::cpu const host{};  // fusekit's threads; cpu{4} asks for four at most
    unfused_ms = cpu_ms([&] { fusekit::hidden_layer_unfused(host, g, wv, o); });
    fused_ms = cpu_ms([&] { fusekit::hidden_layer(host, g, wv, o); });
  }

  double const worst = worst_ulp(grey, w, out);
  bool const ok = worst <= fusekit::tanh_activate::max_ulp;
  std::printf("hidden layer, n = %zu, on the %s\n", n, where);
  std::printf("  fused (one pass):     %8.3f ms\n", fused_ms);
  std::printf("  unfused (three):      %8.3f ms  (%.2fx the fused time)\n", unfused_ms, unfused_ms / fused_ms);
  std::printf("  largest error:        %8.3f ulp of tanh (bound %.1f)\n", worst, fusekit::tanh_activate::max_ulp);
  std::printf("%s\n", ok ? "verified" : "FAILED verification");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
