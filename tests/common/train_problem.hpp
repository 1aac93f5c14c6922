// SPDX-License-Identifier: Apache-2.0
#pragma once
// Least-squares problems for the trainer's tests, the CPU fit of one, and the
// user's gradient written out plainly (an independent copy of the loop's sums).

#include <fusekit/train.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace fusekit::test {

template <class T>
struct problem {
  std::int64_t K, L, N;
  std::vector<T> X, Y, W_true;
};

/// Y = X W_trueᵀ plus `noise` times `normal(gen)`, summed in double.
template <class T, class Gen>
void fill_targets(problem<T>& p, Gen& gen, std::normal_distribution<double>& normal, double noise) {
  std::int64_t const K = p.K, L = p.L, N = p.N;
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (std::int64_t l = 0; l < L; ++l) { s += static_cast<double>(p.X[k * L + l]) * p.W_true[n * L + l]; }
      p.Y[k * N + n] = static_cast<T>(s + noise * normal(gen));
    }
  }
}

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
  fill_targets(p, gen, normal, noise);
  return p;
}

/// Tabular data as users bring it, features in their own units: column l of
/// the first L − 1 is (3 + N(0, 1))·s_l, s_l log-spaced from 10^-3 to 10^4 (an
/// offset: raw features are rarely centred, which correlates them with the
/// intercept); every third of them is the one before it, rescaled, plus 1%
/// noise (a correlated pair); the last column is all ones (the intercept);
/// with `zero_column`, column 1 is all zeros. W_true's entries are N(0, 1)/s_l,
/// so every feature contributes alike, and Y = X W_trueᵀ + noise. XᵀX has a
/// condition number around 10^17 (units; NumPy's cond) and its Jacobi-scaled
/// form 2·10^6 (L = 11) to 8·10^7 (L = 256), from the offsets and the pairs.
template <class T>
problem<T> make_raw_problem(std::int64_t K, std::int64_t L, std::int64_t N, std::uint32_t seed, double noise,
                            bool zero_column = false) {
  problem<T> p{K, L, N, std::vector<T>(K * L), std::vector<T>(K * N), std::vector<T>(N * L)};
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> scale(static_cast<std::size_t>(L), 1.0);
  for (std::int64_t l = 0; l + 1 < L; ++l) {
    double const t = L > 2 ? static_cast<double>(l) / static_cast<double>(L - 2) : 0.0;
    scale[l] = std::pow(10.0, -3.0 + 7.0 * t);
  }
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t l = 0; l < L; ++l) {
      double v = 1.0;
      if (l + 1 < L) {
        v = (l % 3 == 2) ? (static_cast<double>(p.X[k * L + l - 1]) / scale[l - 1] + 0.01 * normal(gen)) * scale[l]
                         : (3.0 + normal(gen)) * scale[l];
      }
      if (zero_column && l == 1) { v = 0.0; }
      p.X[k * L + l] = static_cast<T>(v);
    }
  }
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t l = 0; l < L; ++l) { p.W_true[n * L + l] = static_cast<T>(normal(gen) / scale[l]); }
  }
  fill_targets(p, gen, normal, noise);
  return p;
}

/// The least-squares solution W* (N × L) of a problem, by Householder QR in
/// long double on X with its columns scaled to unit norm (a zero column keeps
/// weight 0): an algorithm independent of the trainer's normal equations,
/// accurate to about κ(X)·2^-64 on the scaled columns.
template <class T>
std::vector<long double> least_squares_reference(const problem<T>& p) {
  std::int64_t const K = p.K, L = p.L, N = p.N;
  std::vector<long double> Q(static_cast<std::size_t>(K * L)), R(static_cast<std::size_t>(K * N));
  std::vector<long double> scale(static_cast<std::size_t>(L), 0.0L);
  for (std::int64_t l = 0; l < L; ++l) {
    long double s2 = 0;
    for (std::int64_t k = 0; k < K; ++k) { s2 += static_cast<long double>(p.X[k * L + l]) * p.X[k * L + l]; }
    scale[l] = s2 > 0 ? 1.0L / sqrtl(s2) : 0.0L;
    for (std::int64_t k = 0; k < K; ++k) { Q[k * L + l] = static_cast<long double>(p.X[k * L + l]) * scale[l]; }
  }
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) { R[k * N + n] = p.Y[k * N + n]; }
  }
  // Column c of R takes row `pivot[c]`: a zero column takes none (weight 0).
  std::vector<std::int64_t> pivot(static_cast<std::size_t>(L), -1);
  std::int64_t row = 0;
  for (std::int64_t c = 0; c < L && row < K; ++c) {  // Householder reflection of column c, rows row..K-1
    long double norm2 = 0;
    for (std::int64_t k = row; k < K; ++k) { norm2 += Q[k * L + c] * Q[k * L + c]; }
    if (!(norm2 > 0)) { continue; }
    long double const alpha = Q[row * L + c] > 0 ? -sqrtl(norm2) : sqrtl(norm2);
    std::vector<long double> v(static_cast<std::size_t>(K - row));
    for (std::int64_t k = row; k < K; ++k) { v[k - row] = Q[k * L + c]; }
    v[0] -= alpha;
    long double v2 = 0;
    for (const long double e : v) { v2 += e * e; }
    auto const reflect = [&](std::vector<long double>& M, std::int64_t cols, std::int64_t j) {
      long double d = 0;
      for (std::int64_t k = row; k < K; ++k) { d += v[k - row] * M[k * cols + j]; }
      long double const f = 2 * d / v2;
      for (std::int64_t k = row; k < K; ++k) { M[k * cols + j] -= f * v[k - row]; }
    };
    for (std::int64_t j = c; j < L; ++j) { reflect(Q, L, j); }
    for (std::int64_t n = 0; n < N; ++n) { reflect(R, N, n); }
    pivot[c] = row++;
  }
  std::vector<long double> W(static_cast<std::size_t>(N * L), 0.0L);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t c = L - 1; c >= 0; --c) {  // back substitution on the scaled unknowns
      if (pivot[c] < 0) { continue; }
      std::int64_t const r = pivot[c];
      long double s = R[r * N + n];
      for (std::int64_t j = c + 1; j < L; ++j) { s -= Q[r * L + j] * W[n * L + j]; }
      W[n * L + c] = s / Q[r * L + c];
    }
    for (std::int64_t l = 0; l < L; ++l) { W[n * L + l] *= scale[l]; }
  }
  return W;
}

/// ‖W − W*‖ / ‖W*‖ over every output.
template <class T>
double relative_error(const std::vector<T>& W, const std::vector<long double>& W_star) {
  long double e2 = 0, s2 = 0;
  for (std::size_t i = 0; i < W.size(); ++i) {
    long double const d = static_cast<long double>(W[i]) - W_star[i];
    e2 += d * d;
    s2 += W_star[i] * W_star[i];
  }
  return static_cast<double>(sqrtl(e2 / s2));
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

/// The true gradient g = XᵀX w − Xᵀy at the fit's W, in long double; returns
/// ‖g‖_M / ‖b‖_M for output n, M = diag(XᵀX)⁻¹.
template <class T>
long double relative_gradient(const problem<T>& p, const std::vector<T>& W, std::int64_t n) {
  std::int64_t const K = p.K, L = p.L, N = p.N;
  std::vector<long double> r(static_cast<std::size_t>(K));
  for (std::int64_t k = 0; k < K; ++k) {
    long double s = p.Y[k * N + n];
    for (std::int64_t l = 0; l < L; ++l) { s -= static_cast<long double>(p.X[k * L + l]) * W[n * L + l]; }
    r[k] = s;
  }
  long double g2 = 0, b2 = 0;
  for (std::int64_t l = 0; l < L; ++l) {
    long double g = 0, b = 0, d = 0;
    for (std::int64_t k = 0; k < K; ++k) {
      long double const x = p.X[k * L + l];
      g += x * r[k];
      b += x * p.Y[k * N + n];
      d += x * x;
    }
    if (d > 0) {
      g2 += g * g / d;
      b2 += b * b / d;
    }
  }
  return sqrtl(g2 / b2);
}

/// Conjugate gradients with the Jacobi preconditioner, stopped by the
/// relative rule alone at `rtol`, within 10000 iterations.
inline fusekit::gd_options cg_jacobi(double rtol) {
  fusekit::gd_options o;
  o.method = fusekit::gd_method::conjugate_gradient;
  o.preconditioner = fusekit::gd_preconditioner::jacobi;
  o.relative_tolerance = rtol;
  o.tolerance = 0;  // the relative rule alone
  o.max_iterations = 10000;
  return o;
}

}  // namespace fusekit::test
