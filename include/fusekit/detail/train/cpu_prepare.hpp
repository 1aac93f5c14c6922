// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Preparing the data, what a CPU (and MPI) fit adds to X, Y and W: sample weights, an intercept
/// and ridge (gd_options::ridge, fit_intercept; fit_extras), and the
/// power-of-two scaling of columns in extreme units. Each is a change of the
/// data, made once in a copy in double, after which the fit is the plain one:
///
///     x̄ = Σ s_k x_k / Σ s_k,  ȳ likewise           (0 without an intercept)
///     X'_k = √s_k (x_k − x̄) ∘ 2^e,  Y'_k = √s_k (y_k − ȳ)
///     ridge: L more rows, √λ·2^e_l e_lᵀ in X' and 0 in Y' (on one process)
///     fit W' on X', Y';  W = W' ∘ 2^e;  b = ȳ − W x̄
///
/// so min Σ_k s_k ‖y_k − W x_k − b‖² + λ‖W‖_F² (scikit-learn's Ridge: the
/// intercept is not penalized). e_l is 0 unless column l's largest magnitude
/// is below 2^-300 or above 2^300: then 2^e_l brings it to [1, 2), exactly, so
/// that XᵀX neither underflows (a subnormal diagonal entry has lost bits, and
/// 1/d overflows) nor overflows; a column of zeros stays zero (its weight 0).
/// With Jacobi or Cholesky the iterates are the same as on the unscaled
/// columns, scaled; the absolute tolerance and grad_norm2 then refer to X'.

#include <fusekit/detail/train/checks.hpp>
#include <fusekit/train_types.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// v rounded to T as IEEE rounds it, ±inf past T's range, without the
/// undefined behaviour of a C++ conversion out of range (UBSan's
/// float-cast-overflow): a float W or intercept that overflows is ±inf.
template <class T>
T round_to(double v) {
  if constexpr (std::is_same_v<T, float>) {
    double const inf_from = 0x1.ffffffp127;  // FLT_MAX plus half an ulp: rounds to inf
    if (v >= inf_from) { return INFINITY; }
    if (v <= -inf_from) { return -INFINITY; }
    if (v > 0x1.fffffep127) { return 0x1.fffffep127f; }
    if (v < -0x1.fffffep127) { return -0x1.fffffep127f; }
  }
  return static_cast<T>(v);
}

/// Columns with their largest magnitude outside [2^-300, 2^300] are rescaled.
inline constexpr int extreme_exponent = 300;

/// Checks the extras of a fit of K rows (this process's) and N outputs.
template <class T, class Count>
void check_fit_extras(const fit_extras<T>& e, const gd_options& o, std::int64_t K, std::int64_t N, const Count& count) {
  const char* const f = "fusekit::fit";
  FUSEKIT_EXPECTS(is_finite(o.ridge) && o.ridge >= 0,
                  std::string(f) + ": ridge is " + describe_value(o.ridge) + "; it must be finite and at least 0");
  if (!e.sample_weight.empty()) {
    FUSEKIT_EXPECTS(static_cast<std::int64_t>(e.sample_weight.size()) == K,
                    std::string(f) + ": sample_weight has " + std::to_string(e.sample_weight.size()) +
                        " values but X has " + std::to_string(K) + " rows; it needs one weight per row");
    expect_finite(f, "sample_weight", matrix<const T>(e.sample_weight.data(), 1, K), count);
    for (std::int64_t k = 0; k < K; ++k) {
      FUSEKIT_EXPECTS(e.sample_weight[k] >= T(0), std::string(f) + ": sample_weight[" + std::to_string(k) + "] is " +
                                                      describe_value(static_cast<double>(e.sample_weight[k])) +
                                                      "; every weight must be at least 0");
    }
  }
  FUSEKIT_EXPECTS(!o.fit_intercept || static_cast<std::int64_t>(e.intercept.size()) == N,
                  std::string(f) + ": fit_intercept is set but intercept has " + std::to_string(e.intercept.size()) +
                      " values; it needs one per output (N = " + std::to_string(N) + ")");
  FUSEKIT_EXPECTS(e.intercept.empty() || static_cast<std::int64_t>(e.intercept.size()) == N,
                  std::string(f) + ": intercept has " + std::to_string(e.intercept.size()) +
                      " values; it needs one per output (N = " + std::to_string(N) + ") or none");
}

/// Whether a fit needs the prepared copy: extras, ridge, an intercept, or a
/// column in extreme units (`exponents` nonzero).
template <class T>
bool needs_preparation(const fit_extras<T>& e, const gd_options& o, const std::vector<int>& exponents) {
  bool extreme = false;
  for (const int x : exponents) { extreme = extreme || x != 0; }
  return extreme || o.ridge > 0 || o.fit_intercept || !e.sample_weight.empty();
}

/// e_l of every column (see the file comment), and the columns' largest and
/// smallest values (`high`, `low`: a constant column is one where they
/// agree); `max(values, count)` takes the largest over the processes. Without
/// a preconditioner (the problem as given) every e_l is 0.
template <class T, class MaxOverProcesses>
std::vector<int> column_exponents(matrix<const T> X, const gd_options& o, const MaxOverProcesses& max,
                                  std::vector<double>& high, std::vector<double>& low) {
  std::int64_t const K = X.extent(0), L = X.extent(1);
  std::vector<double> range(static_cast<std::size_t>(2 * L), -HUGE_VAL);  // max x, max −x
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t l = 0; l < L; ++l) {
      double const v = static_cast<double>(X(k, l));
      range[l] = v > range[l] ? v : range[l];
      range[L + l] = -v > range[L + l] ? -v : range[L + l];
    }
  }
  max(range.data(), 2 * L);
  high.assign(range.begin(), range.begin() + L);
  low.resize(static_cast<std::size_t>(L));
  for (std::int64_t l = 0; l < L; ++l) { low[l] = -range[L + l]; }
  std::vector<double> largest(static_cast<std::size_t>(L), 0.0);
  for (std::int64_t l = 0; l < L; ++l) { largest[l] = std::fmax(std::fabs(high[l]), std::fabs(low[l])); }
  std::vector<int> e(static_cast<std::size_t>(L), 0);
  for (std::int64_t l = 0; l < L && o.preconditioner != gd_preconditioner::none; ++l) {
    bool const extreme = largest[l] > 0 && (largest[l] < std::ldexp(1.0, -extreme_exponent) ||
                                            largest[l] > std::ldexp(1.0, extreme_exponent));
    e[l] = extreme ? -std::ilogb(largest[l]) : 0;
  }
  return e;
}

/// X' and Y' (see the file comment), with the means and the exponents.
struct prepared_data {
  std::vector<double> X, Y, x_mean, y_mean;
  std::vector<int> exponent;
  std::int64_t rows = 0;  ///< of X' on this process
};

/// The copy, on this process's rows; `ridge_rows`: this process adds the
/// ridge's L rows (one process does). `sum` as in cpu_fit_checked; `high`
/// and `low` from column_exponents.
template <class T, class SumOverProcesses>
prepared_data prepare(matrix<const T> X, matrix<const T> Y, const fit_extras<T>& e, const gd_options& o,
                      std::vector<int> exponent, const std::vector<double>& high, const std::vector<double>& low,
                      bool ridge_rows, const SumOverProcesses& sum) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  prepared_data d;
  d.exponent = std::move(exponent);
  d.x_mean.assign(static_cast<std::size_t>(L), 0.0);
  d.y_mean.assign(static_cast<std::size_t>(N), 0.0);
  auto const weight = [&](std::int64_t k) {
    return e.sample_weight.empty() ? 1.0 : static_cast<double>(e.sample_weight[k]);
  };
  if (o.fit_intercept) {
    std::vector<double> sums(static_cast<std::size_t>(L + N + 1), 0.0);
    for (std::int64_t k = 0; k < K; ++k) {
      double const s = weight(k);
      for (std::int64_t l = 0; l < L; ++l) { sums[l] += s * static_cast<double>(X(k, l)); }
      for (std::int64_t n = 0; n < N; ++n) { sums[L + n] += s * static_cast<double>(Y(k, n)); }
      sums[L + N] += s;
    }
    sum(sums.data(), L + N + 1);
    FUSEKIT_EXPECTS(sums[L + N] > 0, "fusekit::fit: the sample weights sum to 0; an intercept needs some weight");
    // A constant column's mean is its value, exactly (the division may round
    // otherwise, and -ffast-math's reciprocal does): centred, it is zero.
    for (std::int64_t l = 0; l < L; ++l) { d.x_mean[l] = high[l] == low[l] ? high[l] : sums[l] / sums[L + N]; }
    for (std::int64_t n = 0; n < N; ++n) { d.y_mean[n] = sums[L + n] / sums[L + N]; }
  }
  std::int64_t const extra = o.ridge > 0 && ridge_rows ? L : 0;
  d.rows = K + extra;
  d.X.assign(static_cast<std::size_t>(d.rows * L), 0.0);
  d.Y.assign(static_cast<std::size_t>(d.rows * N), 0.0);
  for (std::int64_t k = 0; k < K; ++k) {
    double const r = std::sqrt(weight(k));
    for (std::int64_t l = 0; l < L; ++l) {
      d.X[k * L + l] = std::ldexp(r * (static_cast<double>(X(k, l)) - d.x_mean[l]), d.exponent[l]);
    }
    for (std::int64_t n = 0; n < N; ++n) { d.Y[k * N + n] = r * (static_cast<double>(Y(k, n)) - d.y_mean[n]); }
  }
  for (std::int64_t l = 0; l < extra; ++l) { d.X[(K + l) * L + l] = std::ldexp(std::sqrt(o.ridge), d.exponent[l]); }
  return d;
}

/// A fit through the prepared copy: W (in C, `view`) scaled into X'’s
/// columns, the fit, W scaled back and the intercepts. `fit(Xp, Yp, Wp)` is
/// the plain fit on this process's rows of X' and Y'.
template <class C, class T, class Fit>
fit_report fit_prepared(const prepared_data& d, std::int64_t N, std::int64_t L, matrix<C> view, const fit_extras<T>& e,
                        const Fit& fit) {
  auto const scale = [&](int sign) {
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t l = 0; l < L; ++l) { view(n, l) = std::ldexp(view(n, l), sign * d.exponent[l]); }
    }
  };
  scale(-1);
  fit_report report;
  try {
    report = fit(matrix<const double>(d.X.data(), d.rows, L), matrix<const double>(d.Y.data(), d.rows, N), view);
  } catch (...) {
    scale(1);
    throw;
  }
  scale(1);
  for (std::int64_t n = 0; n < N && !e.intercept.empty(); ++n) {
    double b = d.y_mean[n];
    for (std::int64_t l = 0; l < L; ++l) { b -= static_cast<double>(view(n, l)) * d.x_mean[l]; }
    e.intercept[n] = round_to<T>(b);
  }
  return report;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
