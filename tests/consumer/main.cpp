// SPDX-License-Identifier: Apache-2.0
// Built against fusekit as users build: the CPU entry points checked against a
// plain reference, then every CPU entry point of tests/warnings/entry_points.hpp
// called once. ctest builds it with the CUDA toolkit's include directory, as
// README's g++ line gives it, with CCCL's headers alone
// (consumer.gxx_cccl_only), with each compiler's defaults (consumer.defaults_*:
// g++ -O0, clang++ -O0, nvcc and nvcc -G through main_cpu.cu) and in CMake
// Debug and Release builds of this folder.
#include <fusekit/fusekit.hpp>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <vector>

#if FUSEKIT_HAS_CUDA_HEADERS  // entry_points.hpp takes __half inputs
#include "../warnings/entry_points.hpp"
#endif

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  fusekit::cpu const host{};

  // The hidden layer, spelled out and fused, over std::vector.
  std::vector<unsigned char> grey = {0, 51, 128, 254};
  std::vector<float> w = {0.5f, 0.5f, 1.0f, 2.0f};
  std::vector<float> out(grey.size());
  std::vector<float> fused(grey.size());
  fusekit::hidden_layer(host, grey, w, out);
  fusekit::transform(host, fused, fusekit::make_hidden_layer(), grey, w);
  for (std::size_t i = 0; i < out.size(); ++i) {
    double const ref = std::tanh(grey[i] / 255.0 * w[i]);
    expect(std::fabs(out[i] - ref) <= 1e-6, "hidden_layer matches tanh(grey / 255 * w)");
    expect(out[i] == fused[i], "hidden_layer and the fused transform give the same bits");
  }

  // Sums: integers-valued floats are exact in every algorithm.
  std::vector<float> x(100000);
  for (std::size_t i = 0; i < x.size(); ++i) { x[i] = static_cast<float>(i % 7); }
  double exact = 0.0;
  for (float v : x) { exact += v; }
  for (fusekit::reduce_algorithm a : fusekit::all_reduce_algorithms) {
    expect(fusekit::sum(host, x, a) == static_cast<float>(exact), "sum of small integers is exact");
  }
  float lo = 0.0f;
  fusekit::reduce(host, ::cuda::std::span<const float>(x), &lo, fusekit::minimum{}, 1.0e30f);
  expect(lo == 0.0f, "reduce with minimum");
  double const dot = fusekit::transform_reduce(host, fusekit::reduce_algorithm::deterministic,
                                               fusekit::accumulate_in<double>{}, fusekit::weigh{}, x, x);
  double dot_ref = 0.0;
  for (float v : x) { dot_ref += static_cast<double>(v) * v; }
  expect(dot == dot_ref, "transform_reduce of x·x");

  // The trainer: X of full column rank and Y = X Wᵀ exactly, so the
  // least-squares W is W_true.
  std::int64_t const K = 64, L = 3, N = 2;
  double const W_true[N][L] = {{1.0, -2.0, 0.5}, {0.25, 3.0, -1.0}};
  std::vector<double> X(static_cast<std::size_t>(K * L)), Y(static_cast<std::size_t>(K * N));
  std::uint32_t state = 12345u;
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t l = 0; l < L; ++l) {
      state = state * 1664525u + 1013904223u;  // an LCG: uniform in [-1, 1)
      X[static_cast<std::size_t>(k * L + l)] = static_cast<double>(state >> 8) / double(1u << 23) - 1.0;
    }
    for (std::int64_t j = 0; j < N; ++j) {
      double y = 0.0;
      for (std::int64_t l = 0; l < L; ++l) { y += X[static_cast<std::size_t>(k * L + l)] * W_true[j][l]; }
      Y[static_cast<std::size_t>(k * N + j)] = y;
    }
  }
  fusekit::gd_options options;
  options.tolerance = 1e-10;
  options.max_iterations = 100000;
  fusekit::linear_association<double> net(L, N, options);
  fusekit::fit_report const report =
      net.fit(fusekit::matrix<const double>(X.data(), K, L), fusekit::matrix<const double>(Y.data(), K, N));
  expect(report.all_converged(), "fit converges");
  for (std::int64_t j = 0; j < N; ++j) {
    for (std::int64_t l = 0; l < L; ++l) {
      expect(std::fabs(net.weights()(j, l) - W_true[j][l]) <= 1e-6, "fit recovers W");
    }
  }
  std::vector<double> Y_hat(Y.size());
  net.predict(fusekit::matrix<const double>(X.data(), K, L), fusekit::matrix<double>(Y_hat.data(), K, N));
  for (std::size_t i = 0; i < Y.size(); ++i) { expect(std::fabs(Y_hat[i] - Y[i]) <= 1e-6, "predict gives X Wᵀ"); }

#if FUSEKIT_HAS_CUDA_HEADERS
  // Every CPU entry point, instantiated and run once on small finite data.
  {
    std::size_t const n = 64;
    std::vector<float> f(3 * n);
    std::vector<double> d(3 * n);
    std::vector<std::uint8_t> u8(n);
    std::vector<__half> h(n);
    std::vector<std::int32_t> i32(3 * n);
    for (std::size_t i = 0; i < 3 * n; ++i) {
      f[i] = static_cast<float>(i % 5) * 0.25f;
      d[i] = static_cast<double>(i % 3) * 0.5;
      i32[i] = static_cast<std::int32_t>(i % 11);
    }
    for (std::size_t i = 0; i < n; ++i) {
      u8[i] = static_cast<std::uint8_t>(i * 3);
      h[i] = __float2half(static_cast<float>(i % 4));
    }
    fusekit::test::entry_points(host, f.data(), d.data(), u8.data(), h.data(), i32.data(), n);
    bool finite = true;
    for (float v : f) { finite = finite && std::isfinite(v); }
    expect(finite, "every CPU entry point leaves finite values");
  }
#endif

  if (failures != 0) { return 1; }
  std::printf("consumer ok (fusekit %d, CUDA toolkit headers: %s)\n", FUSEKIT_VERSION,
              FUSEKIT_HAS_CUDA_HEADERS ? "yes" : "no");
  return 0;
}
