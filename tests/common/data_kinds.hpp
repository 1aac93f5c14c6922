// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kinds of data users bring to the trainer (docs/trainer.md, "Every kind
// of data"), for tests/train/data_kinds_test.cpp and bench/data_kinds.cpp:
// polynomial features, Vandermonde designs, and a spectrum that decays
// geometrically (ill-conditioned) or linearly (no gap), with Y = X W_trueᵀ
// plus noise.

#include "common/train_problem.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace fusekit::test {

/// Polynomial features of x uniform in [0, 10): 1, x, ..., x^degree.
template <class T>
problem<T> poly_problem(std::int64_t K, int degree, std::uint32_t seed, double noise) {
  std::int64_t L = degree + 1;
  problem<T> p{K, L, 2, std::vector<T>(K * L), std::vector<T>(K * 2), std::vector<T>(2 * L)};
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 10.0);
  std::normal_distribution<double> nd;
  for (std::int64_t k = 0; k < K; ++k) {
    double x = u(gen);
    double v = 1;
    for (std::int64_t l = 0; l < L; ++l) {
      p.X[k * L + l] = static_cast<T>(v);
      v *= x;
    }
  }
  for (auto& w : p.W_true) w = static_cast<T>(nd(gen));
  fusekit::test::fill_targets(p, gen, nd, noise);
  return p;
}
/// Vandermonde on t = k/(K-1): t^0 .. t^(L-1).
template <class T>
problem<T> vandermonde_problem(std::int64_t K, std::int64_t L, std::uint32_t seed, double noise) {
  problem<T> p{K, L, 2, std::vector<T>(K * L), std::vector<T>(K * 2), std::vector<T>(2 * L)};
  std::mt19937 gen(seed);
  std::normal_distribution<double> nd;
  for (std::int64_t k = 0; k < K; ++k) {
    double t = double(k) / double(K - 1);
    double v = 1;
    for (std::int64_t l = 0; l < L; ++l) {
      p.X[k * L + l] = static_cast<T>(v);
      v *= t;
    }
  }
  for (auto& w : p.W_true) w = static_cast<T>(nd(gen));
  fusekit::test::fill_targets(p, gen, nd, noise);
  return p;
}
/// R × C with orthonormal columns: Gram-Schmidt, twice, in long double.
inline std::vector<long double> orthonormal(std::int64_t R, std::int64_t C, std::mt19937& gen) {
  std::normal_distribution<double> nd;
  std::vector<long double> Q(R * C);
  for (auto& q : Q) q = nd(gen);
  for (std::int64_t c = 0; c < C; ++c) {
    for (int pass = 0; pass < 2; ++pass)
      for (std::int64_t j = 0; j < c; ++j) {
        long double d = 0;
        for (std::int64_t r = 0; r < R; ++r) d += Q[r * C + c] * Q[r * C + j];
        for (std::int64_t r = 0; r < R; ++r) Q[r * C + c] -= d * Q[r * C + j];
      }
    long double n = 0;
    for (std::int64_t r = 0; r < R; ++r) n += Q[r * C + c] * Q[r * C + c];
    n = sqrtl(n);
    for (std::int64_t r = 0; r < R; ++r) Q[r * C + c] /= n;
  }
  return Q;
}
/// X = U diag(σ) Vᵀ, U (K × L) and V (L × L) random orthonormal, σ from 1 to
/// 10^-decades: geometric (a decaying tail), or with `linear` evenly spaced
/// (no gap in the singular values).
template <class T>
problem<T> decaying_problem(std::int64_t K, std::int64_t L, double decades, std::uint32_t seed, double noise,
                            bool linear = false) {
  problem<T> p{K, L, 2, std::vector<T>(K * L), std::vector<T>(K * 2), std::vector<T>(2 * L)};
  std::mt19937 gen(seed);
  std::normal_distribution<double> nd;
  auto U = orthonormal(K, L, gen);
  auto V = orthonormal(L, L, gen);
  std::vector<long double> sigma(static_cast<std::size_t>(L));  // 1 down to 10^-decades
  for (std::int64_t i = 0; i < L; ++i) {
    long double const t = L > 1 ? static_cast<long double>(i) / (L - 1) : 0.0L;
    sigma[i] = linear ? 1.0L - (1.0L - powl(10.0L, -decades)) * t : powl(10.0L, -decades * t);
  }
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t l = 0; l < L; ++l) {
      long double s = 0;
      for (std::int64_t i = 0; i < L; ++i) s += U[k * L + i] * sigma[i] * V[l * L + i];
      p.X[k * L + l] = static_cast<T>(s);
    }
  for (auto& w : p.W_true) w = static_cast<T>(nd(gen));
  fusekit::test::fill_targets(p, gen, nd, noise);
  return p;
}

/// ‖y_n − X w_n‖² in long double.
template <class T, class W>
long double residual2(const problem<T>& p, const std::vector<W>& w, std::int64_t n) {
  long double s = 0;
  for (std::int64_t k = 0; k < p.K; ++k) {
    long double r = p.Y[k * p.N + n];
    for (std::int64_t l = 0; l < p.L; ++l) { r -= static_cast<long double>(p.X[k * p.L + l]) * w[n * p.L + l]; }
    s += r * r;
  }
  return s;
}

/// The reference: min Σ s_k‖y_k − W x_k − b‖² + λ‖W‖² in long double, by
/// centring with the weighted means, scaling rows by √s_k, appending √λ·I, and
/// Householder QR; b = ȳ − W x̄.
template <class T>
void weighted_ridge_reference(const problem<T>& p, const std::vector<T>& s, double lambda, bool intercept,
                              std::vector<long double>& W, std::vector<long double>& b) {
  std::int64_t const K = p.K, L = p.L, N = p.N;
  std::vector<long double> xm(L, 0.0L), ym(N, 0.0L);
  long double total = 0;
  for (std::int64_t k = 0; k < K && intercept; ++k) {
    for (std::int64_t l = 0; l < L; ++l) { xm[l] += static_cast<long double>(s[k]) * p.X[k * L + l]; }
    for (std::int64_t n = 0; n < N; ++n) { ym[n] += static_cast<long double>(s[k]) * p.Y[k * N + n]; }
    total += s[k];
  }
  for (std::int64_t l = 0; l < L; ++l) {  // a constant column's mean is its value (no rounding, -ffast-math too)
    bool constant = true;
    for (std::int64_t k = 1; k < K; ++k) { constant = constant && p.X[k * L + l] == p.X[l]; }
    xm[l] = !intercept ? 0.0L : constant ? static_cast<long double>(p.X[l]) : xm[l] / total;
  }
  for (auto& v : ym) { v = intercept ? v / total : 0.0L; }
  std::int64_t const rows = K + (lambda > 0 ? L : 0);
  problem<long double> q{rows, L, N, std::vector<long double>(rows * L, 0.0L), std::vector<long double>(rows * N, 0.0L),
                         {}};
  for (std::int64_t k = 0; k < K; ++k) {
    long double const r = sqrtl(static_cast<long double>(s[k]));
    for (std::int64_t l = 0; l < L; ++l) { q.X[k * L + l] = r * (p.X[k * L + l] - xm[l]); }
    for (std::int64_t n = 0; n < N; ++n) { q.Y[k * N + n] = r * (p.Y[k * N + n] - ym[n]); }
  }
  for (std::int64_t l = 0; l < L && lambda > 0; ++l) { q.X[(K + l) * L + l] = sqrtl(static_cast<long double>(lambda)); }
  W = fusekit::test::least_squares_reference(q);
  b.assign(N, 0.0L);
  for (std::int64_t n = 0; n < N; ++n) {
    b[n] = ym[n];
    for (std::int64_t l = 0; l < L; ++l) { b[n] -= W[n * L + l] * xm[l]; }
  }
}

/// One problem of the ridge, intercept and weights trials (raw units, K ≥ L
/// and, every fourth, K < L under a ridge; weights 0 .. 3 with zeros on odd
/// trials; λ and the intercept by trial), drawn from `gen`.
struct ridge_trial {
  problem<double> p;
  std::vector<double> s;
  double lambda;
  bool intercept;
};

inline ridge_trial make_ridge_trial(std::mt19937& gen, int trial) {
  bool const wide = trial % 4 == 3;  // K < L: only with ridge
  std::int64_t const L = 3 + static_cast<std::int64_t>(gen() % 10);
  std::int64_t const K = wide ? L - 2 : L + 5 + static_cast<std::int64_t>(gen() % 200);
  ridge_trial t{make_raw_problem<double>(K, L, 2, static_cast<std::uint32_t>(gen()), 0.3),
                std::vector<double>(static_cast<std::size_t>(K), 1.0),
                wide ? 0.5 : std::vector<double>{0.0, 1e-3, 0.5, 20.0}[trial % 4], trial % 3 != 2};
  if (trial % 2 == 1) {
    for (auto& v : t.s) { v = static_cast<double>(gen() % 7) / 2.0; }  // 0 .. 3, zeros included
    t.s[0] = 1.0;
  }
  return t;
}

}  // namespace fusekit::test
