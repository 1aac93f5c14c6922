// SPDX-License-Identifier: Apache-2.0
#pragma once
// Least-squares problems for the trainer's tests, the CPU fit of one, and the
// user's gradient written out plainly (an independent copy of the loop's sums).

#include <fusekit/train.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace fusekit::test {

template <class T>
struct problem {
  std::int64_t K, L, N;
  std::vector<T> X, Y, W_true;
};

/// X with N(0, 1) entries (well conditioned when K ≫ L), or uniform [0, 1) as
/// in the user's case; Y = X W_trueᵀ plus optional noise.
template <class T>
problem<T> make_problem(std::int64_t K, std::int64_t L, std::int64_t N, std::uint32_t seed, bool uniform_x,
                        double noise) {
  problem<T> p{K, L, N, std::vector<T>(K * L), std::vector<T>(K * N), std::vector<T>(N * L)};
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (auto& x : p.X) { x = static_cast<T>(uniform_x ? uniform(gen) : normal(gen)); }
  for (auto& w : p.W_true) { w = static_cast<T>(normal(gen)); }
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (std::int64_t l = 0; l < L; ++l) { s += static_cast<double>(p.X[k * L + l]) * p.W_true[n * L + l]; }
      p.Y[k * N + n] = static_cast<T>(s + noise * normal(gen));
    }
  }
  return p;
}

/// fit on the CPU, W resized to N × L.
template <class T>
fusekit::fit_report cpu_fit(const problem<T>& p, std::vector<T>& W, const fusekit::gd_options& o, int threads = 0) {
  W.resize(static_cast<std::size_t>(p.N * p.L));
  return fusekit::fit(fusekit::cpu{threads}, fusekit::matrix<const T>(p.X.data(), p.K, p.L),
                      fusekit::matrix<const T>(p.Y.data(), p.K, p.N), fusekit::matrix<T>(W.data(), p.N, p.L), o);
}

/// grad = Xᵀ(X w − y_n), the sums in index order (k, then l); returns gradᵀgrad.
inline double direct_gradient_reference(const problem<double>& p, std::int64_t n, const std::vector<double>& w,
                                        std::vector<double>& g) {
  std::int64_t const K = p.K, L = p.L, N = p.N;
  std::vector<double> delta(static_cast<std::size_t>(K));
  for (std::int64_t k = 0; k < K; ++k) {
    double s = 0;
    for (std::int64_t l = 0; l < L; ++l) { s = s + p.X[k * L + l] * w[l]; }
    delta[k] = s - p.Y[k * N + n];
  }
  g.assign(static_cast<std::size_t>(L), 0.0);
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t l = 0; l < L; ++l) { g[l] = g[l] + p.X[k * L + l] * delta[k]; }
  }
  double g2 = 0;
  for (std::int64_t l = 0; l < L; ++l) { g2 = g2 + g[l] * g[l]; }
  return g2;
}

}  // namespace fusekit::test
