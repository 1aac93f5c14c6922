// SPDX-License-Identifier: Apache-2.0
//
// 05_cpu_only: the three building blocks with a host compiler alone
//
// No GPU, no nvcc and no CUDA runtime: fusekit.hpp is the CPU backend, and g++
// (or clang++) builds it with CCCL's headers alone. The program runs the fused
// hidden layer over 10^6 pixels, sums its output with every algorithm (the
// deterministic one gives the bits a GPU would), sums it per row (one sum
// per sample, each with the bits of that row's own sum), and fits a
// least-squares model on features in raw units, each checked against a
// long-double reference computed here.
//
// Build (CUDA 13 keeps CCCL in include/cccl; any CCCL checkout works too):
//   g++ -O2 -fopenmp -I <fusekit>/include -I /usr/local/cuda/include/cccl cpu_only.cpp -o cpu_only
// or with CMake, when the folder is copied out: see CMakeLists.txt.
//
// Usage: 05_cpu_only                 exit status 0 when verified.

#include <fusekit/fusekit.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  fusekit::cpu const host{};
  bool ok = true;

  // 1. The hidden layer, fused: tanh(grey / 255 · w) in one pass.
  std::size_t const n = 1000000;
  std::vector<std::uint8_t> grey(n);
  std::vector<float> w(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    grey[i] = static_cast<std::uint8_t>((i * 37) % 256);
    w[i] = 0.25f + static_cast<float>(i % 13) * 0.125f;
  }
  fusekit::hidden_layer(host, grey, w, out);
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    long double const ref = std::tanh(static_cast<long double>(grey[i]) / 255.0L * static_cast<long double>(w[i]));
    double const err = static_cast<double>(std::fabs(static_cast<long double>(out[i]) - ref));
    worst = err > worst ? err : worst;
  }
  std::printf("hidden layer over %zu pixels: max |error| %.2e against long double\n", n, worst);
  ok = ok && worst < 1e-6;

  // 2. The sum of the layer, by each algorithm, against a long-double sum.
  long double exact = 0.0L;
  for (float v : out) { exact += v; }
  for (fusekit::reduce_algorithm a : fusekit::all_reduce_algorithms) {
    double const s = fusekit::sum(host, out, a, fusekit::accumulate_in<double>{});
    double const rel = static_cast<double>(std::fabs((static_cast<long double>(s) - exact) / exact));
    std::printf("  sum (%-13s) %.10f  relative error %.1e\n", fusekit::to_string(a), s, rel);
    ok = ok && rel < 1e-9;  // n·u of double, the loosest algorithm's bound in double, with room
  }

  // 2b. One sum per row of the layer's output seen as 1000 samples of 1000
  //     values: each has the bits of the deterministic sum of its own row.
  std::int64_t const samples = 1000, width = static_cast<std::int64_t>(n) / samples;
  std::vector<double> per_sample(static_cast<std::size_t>(samples));
  fusekit::row_sums(host, fusekit::matrix<const float>(out.data(), samples, width),
                    ::cuda::std::span<double>(per_sample));
  double worst_row = 0.0;
  bool rows_same_bits = true;
  for (std::int64_t r = 0; r < samples; ++r) {
    ::cuda::std::span<const float> const row(out.data() + r * width, static_cast<std::size_t>(width));
    long double row_exact = 0.0L;
    for (float v : row) { row_exact += v; }
    double const rel = static_cast<double>(
        std::fabs((per_sample[static_cast<std::size_t>(r)] - row_exact) / (std::fabs(row_exact) + 1.0L)));
    worst_row = rel > worst_row ? rel : worst_row;
    double const single = fusekit::sum(host, row, fusekit::deterministic{}, fusekit::accumulate_in<double>{});
    rows_same_bits = rows_same_bits && single == per_sample[static_cast<std::size_t>(r)];
  }
  std::printf("  per-row sums of %lld rows: worst relative error %.1e, each row's own sum's bits: %s\n",
              static_cast<long long>(samples), worst_row, rows_same_bits ? "yes" : "NO");
  ok = ok && rows_same_bits && worst_row < 1e-12;

  // 3. A least-squares fit on features in raw units (metres, grams, an
  //    intercept column): Y = X W_trueᵀ exactly, so the answer is W_true.
  std::int64_t const K = 500, L = 3, N = 1;
  double const W_true[L] = {0.002, -3.5, 40.0};
  std::vector<double> X(static_cast<std::size_t>(K * L)), Y(static_cast<std::size_t>(K * N));
  for (std::int64_t k = 0; k < K; ++k) {
    double const row[L] = {1000.0 + 37.0 * static_cast<double>(k % 29), 0.01 * static_cast<double>(k % 17), 1.0};
    double y = 0.0;
    for (std::int64_t l = 0; l < L; ++l) {
      X[static_cast<std::size_t>(k * L + l)] = row[l];
      y += row[l] * W_true[l];
    }
    Y[static_cast<std::size_t>(k)] = y;
  }
  fusekit::linear_association<double> net(L, N);  // gd_options::recommended(): CG with the Cholesky preconditioner
  fusekit::fit_report const r =
      net.fit(fusekit::matrix<const double>(X.data(), K, L), fusekit::matrix<const double>(Y.data(), K, N));
  std::printf("fit: %s\n", r.summary().c_str());
  for (std::int64_t l = 0; l < L; ++l) {
    double const rel = std::fabs(net.weights()(0, l) - W_true[l]) / std::fabs(W_true[l]);
    std::printf("  w[%lld] = %.12g (true %.12g, relative error %.1e)\n", static_cast<long long>(l), net.weights()(0, l),
                W_true[l], rel);
    ok = ok && rel < 1e-8;
  }
  ok = ok && r.all_converged();
  std::printf(ok ? "verified\n" : "NOT verified\n");
  return ok ? 0 : 1;
}
