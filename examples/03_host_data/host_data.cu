// SPDX-License-Identifier: Apache-2.0
//
// 03_host_data — the hidden layer on data that live in host memory, in one call
//
// The first user's task: n = 1,000,000 greyscales and weights in std::vectors
// (as they come from a camera or from NumPy), and
//
//     out[i] = tanh((grey[i] / 255) * w[i])
//
// back in a std::vector. On an H200 the fused kernel itself takes
// microseconds: the copies over PCIe are the whole cost. The usual GPU port
// copies everything in, computes, and copies everything back, one step after
// the other. Given host memory, fusekit::cuda_staged cuts the call into chunks and
// keeps both copy directions and the kernels busy at once, so the call costs
// about its larger copy. Pageable memory (a plain std::vector) goes through
// pinned staging buffers that fusekit keeps; pinned memory (cudaMallocHost)
// goes straight to the DMA engines.
//
// The program runs on the GPU when one is present, else on the CPU, checks
// every output against a long-double reference, and prints the time of the
// one call next to the copy-compute-copy version.
//
// Usage: 03_host_data [n]        (default 1000000); exit status 0 when verified.

#include <fusekit/elementwise.hpp>  // the layer on fusekit::cpu, to compare
#include <fusekit/host_data.cuh>    // fusekit::cuda_staged: GPU calls on host memory

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

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

// Milliseconds of `call`, host to host, best of a few runs.
template <class F>
double best_ms(F call) {
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    auto const t0 = std::chrono::steady_clock::now();
    call();
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
  bool const gpu = fusekit::has_cuda_device();
  bool ok = true;

  if (gpu) {
    cudaStream_t stream = nullptr;
    FUSEKIT_CUDA_TRY(cudaStreamCreate(&stream));
    fusekit::cuda_staged const policy{stream};

    // The one call: host vectors in, host vector out (returns with `out` written).
    double const one_call_ms = best_ms([&] { fusekit::hidden_layer(policy, grey, w, out); });
    double const worst = worst_ulp(grey, w, out);
    ok = worst <= fusekit::tanh_activate::max_ulp;

    // The same data in pinned memory: the DMA engines read and write it directly.
    std::uint8_t* p_grey = nullptr;
    float* p_w = nullptr;
    float* p_out = nullptr;
    FUSEKIT_CUDA_TRY(cudaMallocHost(&p_grey, n));
    FUSEKIT_CUDA_TRY(cudaMallocHost(&p_w, n * sizeof(float)));
    FUSEKIT_CUDA_TRY(cudaMallocHost(&p_out, n * sizeof(float)));
    std::copy(grey.begin(), grey.end(), p_grey);
    std::copy(w.begin(), w.end(), p_w);
    ::cuda::std::span<const std::uint8_t> const pg(p_grey, n);
    ::cuda::std::span<const float> const pw(p_w, n);
    ::cuda::std::span<float> const po(p_out, n);
    double const pinned_ms = best_ms([&] {
      fusekit::hidden_layer(policy, pg, pw, po);
      FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));  // asynchronous: wait before reading p_out
    });
    ok = ok && std::equal(out.begin(), out.end(), p_out);

    // Copy everything in, compute, copy everything back: one step after the other.
    std::uint8_t* d_grey = nullptr;
    float* d_w = nullptr;
    float* d_out = nullptr;
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_grey, n));
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_w, n * sizeof(float)));
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_out, n * sizeof(float)));
    std::vector<float> out_sequential(n);
    double const sequential_ms = best_ms([&] {
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d_grey, grey.data(), n, cudaMemcpyHostToDevice, stream));
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(d_w, w.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
      fusekit::hidden_layer(policy, ::cuda::std::span<const std::uint8_t>(d_grey, n),
                            ::cuda::std::span<const float>(d_w, n), ::cuda::std::span<float>(d_out, n));
      FUSEKIT_CUDA_TRY(
          cudaMemcpyAsync(out_sequential.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
      FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    });
    ok = ok && out_sequential == out;

    double const gb = static_cast<double>(n) * (1 + 4 + 4) / 1e9;
    std::printf("hidden layer on host data, n = %zu, on the GPU (%.1f MB moved per call)\n", n, gb * 1e3);
    std::printf("  one call, std::vector (pageable): %8.3f ms  %6.2f GB/s\n", one_call_ms, gb / one_call_ms * 1e3);
    std::printf("  one call, pinned memory:          %8.3f ms  %6.2f GB/s\n", pinned_ms, gb / pinned_ms * 1e3);
    std::printf("  copy in, compute, copy back:      %8.3f ms  %6.2f GB/s  (%.2fx the pageable call)\n", sequential_ms,
                gb / sequential_ms * 1e3, sequential_ms / one_call_ms);
    std::printf("  largest error:                    %8.3f ulp of tanh (bound %.1f)\n", worst,
                fusekit::tanh_activate::max_ulp);
    FUSEKIT_CUDA_TRY(cudaFree(d_grey));
    FUSEKIT_CUDA_TRY(cudaFree(d_w));
    FUSEKIT_CUDA_TRY(cudaFree(d_out));
    FUSEKIT_CUDA_TRY(cudaFreeHost(p_grey));
    FUSEKIT_CUDA_TRY(cudaFreeHost(p_w));
    FUSEKIT_CUDA_TRY(cudaFreeHost(p_out));
    FUSEKIT_CUDA_TRY(cudaStreamDestroy(stream));
  } else {
    // The same call on the CPU: the vectors are read where they are.
    double const ms = best_ms([&] { fusekit::hidden_layer(fusekit::cpu{}, grey, w, out); });
    double const worst = worst_ulp(grey, w, out);
    ok = worst <= fusekit::tanh_activate::max_ulp;
    std::printf("hidden layer on host data, n = %zu, on the CPU (no CUDA device: the pipeline needs one)\n", n);
    std::printf("  one call:       %8.3f ms\n", ms);
    std::printf("  largest error:  %8.3f ulp of tanh (bound %.1f)\n", worst, fusekit::tanh_activate::max_ulp);
  }
  std::printf("%s\n", ok ? "verified" : "FAILED verification");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
