// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Preparing the data, what a fit on every backend adds to X, Y and W: sample weights, an intercept
/// and ridge (gd_options::ridge, fit_intercept; fit_extras), and the
/// power-of-two scaling of columns in extreme units. Each is a change of the
/// data, made once in a copy in double, after which the fit is the plain one:
///
///     s'_k = s_k·2^-q,  q: the exponent of the largest weight (0 unweighted)
///     x̄ = Σ s'_k x_k / Σ s'_k,  ȳ likewise         (0 without an intercept)
///     X'_k = √s'_k (x_k − x̄) ∘ 2^e,  Y'_k = √s'_k (y_k − ȳ)
///     ridge: L more rows, √(λ·2^-q)·2^e_l e_lᵀ in X' and 0 in Y' (on one process;
///            in the column's largest magnitude that sets e_l)
///     Y'_n ∘ 2^f_n (f_n: 0 unless Y's column n is in extreme units)
///     fit W' on X', Y';  W_n = W'_n ∘ 2^e · 2^-f_n;  b = ȳ − W x̄
///
/// so min Σ_k s_k ‖y_k − W x_k − b‖² + λ‖W‖_F² (scikit-learn's Ridge: the
/// intercept is not penalized), multiplied by 2^-q: a weight counts as that
/// many copies of its row, so a common factor of the weights (with the ridge)
/// changes nothing, and the largest weight in [1, 2) keeps subnormal weights
/// (1e-310) and huge ones (1e308, whose products overflow) out of the sums.
/// The weights are read from their bits, so -ffast-math's flush of subnormal
/// inputs to zero does not zero them. e_l is 0 unless column l of √s'(x − x̄)
/// has its largest magnitude below 2^-200 or above 2^200: then 2^e_l brings
/// it to [1, 2), exactly, so that XᵀX neither underflows (a subnormal
/// diagonal entry has lost bits, and 1/d overflows) nor overflows; a column of
/// zeros stays zero (its weight 0). With Jacobi or Cholesky the iterates are
/// the same as on the unscaled columns, scaled. Without a preconditioner
/// every column takes one exponent, that of the largest magnitude of all,
/// which keeps the minimum-norm solution the minimum-norm one; a column
/// more than 2^200 below the largest still takes its own (the unique
/// least-squares solution is the same; of a rank-deficient problem, the
/// one of least norm in those columns' scaled units). The absolute
/// tolerance and grad_norm2 then refer to X' and Y'. A W or b that the scaling
/// back takes past double's range is not a success (fit_status::diverged,
/// stop_rule::non_finite).

#include <fusekit/detail/base/exact_bits.hpp>
#include <fusekit/detail/train/checks.hpp>
#include <fusekit/detail/train/column_ranges.hpp>
#include <fusekit/train_types.hpp>

#include <algorithm>
#include <climits>
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

/// Columns with their largest magnitude outside [2^-200, 2^200] are rescaled:
/// within it, XᵀX (K·2^400 at most) and the power iteration's ‖Av‖² stay in
/// double's range (2^300 lets ‖Av‖² reach 2^1200).
inline constexpr int extreme_exponent = 200;

/// Checks the ridge and the sizes of the extras of a fit of K rows (this
/// process's) and N outputs: every check of the extras that reads no value.
template <class T>
void check_fit_extras_sizes(const fit_extras<T>& e, const gd_options& o, std::int64_t K, std::int64_t N) {
  const char* const f = "fusekit::fit";
  FUSEKIT_EXPECTS(is_finite(o.ridge) && !exact_bits(o.ridge).negative,
                  std::string(f) + ": ridge is " + describe_value(o.ridge) + "; it must be finite and at least 0");
  FUSEKIT_EXPECTS(e.sample_weight.empty() || static_cast<std::int64_t>(e.sample_weight.size()) == K,
                  std::string(f) + ": sample_weight has " + std::to_string(e.sample_weight.size()) +
                      " values but X has " + std::to_string(K) + " rows; it needs one weight per row");
  FUSEKIT_EXPECTS(!o.fit_intercept || static_cast<std::int64_t>(e.intercept.size()) == N,
                  std::string(f) + ": fit_intercept is set but intercept has " + std::to_string(e.intercept.size()) +
                      " values; it needs one per output (N = " + std::to_string(N) + ")");
  FUSEKIT_EXPECTS(e.intercept.empty() || static_cast<std::int64_t>(e.intercept.size()) == N,
                  std::string(f) + ": intercept has " + std::to_string(e.intercept.size()) +
                      " values; it needs one per output (N = " + std::to_string(N) + ") or none");
}

/// Checks the extras of a fit of K rows (this process's) and N outputs:
/// check_fit_extras_sizes, then the weights (host memory) finite and at least 0.
template <class T, class Count>
void check_fit_extras(const fit_extras<T>& e, const gd_options& o, std::int64_t K, std::int64_t N, const Count& count) {
  const char* const f = "fusekit::fit";
  check_fit_extras_sizes(e, o, K, N);
  if (!e.sample_weight.empty()) {
    expect_finite(f, "sample_weight", matrix<const T>(e.sample_weight.data(), 1, K), count);
    for (std::int64_t k = 0; k < K; ++k) {
      FUSEKIT_EXPECTS(!exact_bits(e.sample_weight[k]).negative,
                      std::string(f) + ": sample_weight[" + std::to_string(k) + "] is " +
                          describe_value(static_cast<double>(e.sample_weight[k])) +
                          "; every weight must be at least 0");
    }
  }
}

/// Whether λ is set: nonzero by its bits (a subnormal λ counts, also under
/// -ffast-math, where the weights' scaling may make it large).
inline bool has_ridge(const gd_options& o) { return exact_bits(o.ridge).mantissa != 0; }

/// Whether a fit needs the prepared copy: extras, ridge, an intercept, or a
/// column in extreme units (`exponents` nonzero); `weighted`: sample weights
/// are given (on every process, also one without rows).
inline bool needs_preparation(bool weighted, const gd_options& o, const std::vector<int>& exponents) {
  bool extreme = false;
  for (const int x : exponents) { extreme = extreme || x != 0; }
  return extreme || has_ridge(o) || o.fit_intercept || weighted;
}

/// Whether a column whose largest magnitude is v is in extreme units.
inline bool extreme_units(double v) {
  return v > 0 && (v < std::ldexp(1.0, -extreme_exponent) || v > std::ldexp(1.0, extreme_exponent));
}

/// f_n of every output (Y's columns) from the leading exponent of its
/// largest magnitude: Y in extreme units (targets of 1e-165, whose gradients
/// square to 0) is rescaled, exactly, whatever the preconditioner (a common
/// factor of y_n scales w_n alone and keeps its minimum-norm solution).
inline std::vector<int> output_exponents(const std::vector<int>& lead) {
  std::vector<int> f(lead.size(), 0);
  for (std::size_t n = 0; n < lead.size(); ++n) {
    bool const extreme = lead[n] != INT_MIN && (lead[n] < -extreme_exponent || lead[n] >= extreme_exponent);
    f[n] = extreme ? -lead[n] : 0;
  }
  return f;
}

/// Raises f_n where Xᵀy_n would be below 2^-200 (its square, which the
/// stopping rules compare, underflows: a fit would stop at once at W = 0):
/// a data column far below the ridge (whose row then sets the column's
/// scale) or a tiny target. The bound max_l |X'_l|·|Y'_n| sets it, as far as
/// Y'_n stays below 2^500 (its squares summed over the rows stay finite).
/// `columns` and `outputs`: the leading exponents of the data in X's and
/// Y's columns, before e_l and f_n. Returns the outputs still below 2^-200
/// (with Y' at 2^500: X's data 2^700 below its largest entry, say a column
/// under a ridge 2^1000 times larger), whose stopping rules cannot be judged
/// in double.
inline std::vector<char> lift_small_right_hand_sides(const std::vector<int>& columns, const std::vector<int>& exponent,
                                                     const std::vector<int>& outputs, std::vector<int>& f) {
  std::vector<char> below(f.size(), 0);
  int top = INT_MIN;  // the leading exponent of X's largest entry, scaled
  for (std::size_t l = 0; l < exponent.size(); ++l) {
    if (columns[l] != INT_MIN) { top = std::max(top, columns[l] + exponent[l]); }
  }
  for (std::size_t n = 0; n < f.size() && top != INT_MIN; ++n) {
    if (outputs[n] == INT_MIN) { continue; }
    int const y = outputs[n] + f[n];
    int const b = top + y;
    if (b < -extreme_exponent) { f[n] += std::min(-b, 500 - y); }
    below[n] = top + outputs[n] + f[n] < -extreme_exponent ? 1 : 0;
  }
  return below;
}

/// The leading exponent (ilogb) of a column's largest magnitude, INT_MIN for 0.
inline int leading_exponent(double largest) { return largest > 0 ? std::ilogb(largest) : INT_MIN; }

/// e_l of every column from the leading exponent of its largest magnitude
/// (see the file comment): each extreme column its own with a
/// preconditioner; without, one for all (the largest's), and its own for a
/// column still extreme after it (2^200 below the largest: its squares
/// would underflow, so the problem as given has no answer in double).
/// Extreme: below -200 or from 200 on (extreme_exponent).
inline std::vector<int> extreme_exponents(const std::vector<int>& lead, const gd_options& o) {
  auto const extreme = [](int x) { return x != INT_MIN && (x < -extreme_exponent || x >= extreme_exponent); };
  std::vector<int> e(lead.size(), 0);
  int common = 0;
  if (o.preconditioner == gd_preconditioner::none) {
    int top = INT_MIN;
    for (const int x : lead) { top = x > top ? x : top; }
    common = extreme(top) ? -top : 0;
  }
  for (std::size_t l = 0; l < lead.size(); ++l) {
    bool const own = lead[l] != INT_MIN && extreme(lead[l] + common);
    e[l] = own ? -lead[l] : lead[l] == INT_MIN ? 0 : common;
  }
  return e;
}

/// extreme_exponents of columns given by their largest magnitudes.
inline std::vector<int> extreme_exponents(const std::vector<double>& largest, const gd_options& o) {
  std::vector<int> lead(largest.size());
  for (std::size_t l = 0; l < largest.size(); ++l) { lead[l] = leading_exponent(largest[l]); }
  return extreme_exponents(lead, o);
}

/// e_l of every column of X as given (see the file comment), then 1 for
/// each of Y's columns in extreme units (0 else), from `range` (column_ranges,
/// taken over every process); Y's columns' largest magnitudes (`y_largest`),
/// and the columns' largest and smallest values (`high`, `low`: a constant
/// column is one where they agree).
inline std::vector<int> exponents_from_ranges(const std::vector<double>& range, std::int64_t L, const gd_options& o,
                                              std::vector<double>& high, std::vector<double>& low,
                                              std::vector<double>& y_largest) {
  high.assign(range.begin(), range.begin() + L);
  low.resize(static_cast<std::size_t>(L));
  for (std::int64_t l = 0; l < L; ++l) { low[l] = -range[L + l]; }
  std::vector<double> largest(static_cast<std::size_t>(L), 0.0);
  for (std::int64_t l = 0; l < L; ++l) { largest[l] = std::fmax(std::fabs(high[l]), std::fabs(low[l])); }
  std::vector<int> e = extreme_exponents(largest, o);
  y_largest.assign(range.begin() + 2 * L, range.end());
  for (double const y : y_largest) { e.push_back(extreme_units(y) ? 1 : 0); }
  return e;  // X's e_l, then 1 for each output in extreme units
}

/// exponents_from_ranges of this process's rows, the ranges taken over the
/// processes by `max(values, count)`.
template <class T, class MaxOverProcesses>
std::vector<int> column_exponents(matrix<const T> X, matrix<const T> Y, const gd_options& o,
                                  const MaxOverProcesses& max, std::vector<double>& high, std::vector<double>& low,
                                  std::vector<double>& y_largest) {
  std::vector<double> range = column_ranges(X, Y);
  max(range.data(), static_cast<std::int64_t>(range.size()));
  return exponents_from_ranges(range, X.extent(1), o, high, low, y_largest);
}

/// q of the file comment: the leading exponent of the largest weight over
/// the processes (`max`), 0 without weights. Throws naming sample_weight
/// when every weight is 0 (no row counts: nothing to fit).
template <class T, class MaxOverProcesses>
int weight_exponent(const fit_extras<T>& e, bool weighted, const MaxOverProcesses& max) {
  if (!weighted) { return 0; }
  double constexpr none = -1e6;  // below any exponent; a finite sentinel (-ffast-math folds tests on inf)
  double top = none;
  for (const T s : e.sample_weight) {
    exact_binary const b = exact_bits(s);
    if (b.mantissa != 0) { top = std::fmax(top, static_cast<double>(b.leading())); }
  }
  max(&top, 1);
  FUSEKIT_EXPECTS(top > none / 2,
                  "fusekit::fit: every sample_weight is 0; at least one row needs a positive weight "
                  "(a weight counts as that many copies of its row)");
  return static_cast<int>(top);
}

/// The ridge rows' entry √(λ·2^-q) before the columns' scaling, as
/// root·2^exponent (root in [1, 2^27)): λ·2^-q may pass double's range
/// (weights of 1e-310 with λ = 1, or a ridge beside a column of 1e-313,
/// whose scaling multiplies it by 2^1040), its root and scaled entry not.
struct ridge_root {
  double root = 0;  ///< 0: no ridge
  int exponent = 0;
  /// Its leading exponent, a column's largest magnitude as the ridge row counts in it.
  [[nodiscard]] int leading() const { return root > 0 ? std::ilogb(root) + exponent : INT_MIN; }
  /// The entry of a column scaled by 2^e.
  [[nodiscard]] double entry(int e) const { return root > 0 ? std::ldexp(root, exponent + e) : 0.0; }
};

inline ridge_root ridge_root_of(const gd_options& o, int q) {
  exact_binary const b = exact_bits(o.ridge);
  if (b.mantissa == 0) { return {}; }
  int t = b.exponent - q;
  double m = static_cast<double>(b.mantissa);
  if (t % 2 != 0) {  // an even power of two: its root is exact
    m *= 2;
    t -= 1;
  }
  return {std::sqrt(m), t / 2};
}

/// X' and Y' (see the file comment), with the means and the exponents.
struct prepared_data {
  std::vector<double> X, Y, x_mean, y_mean;
  std::vector<int> exponent, output_exponent;  ///< e_l of X's columns, f_n of Y's
  std::vector<int> x_pre;                      ///< x_mean is x̄_l·2^x_pre_l (exact)
  std::int64_t rows = 0;                       ///< of X' on this process
  /// X' is zero on every process while X is not (constant columns centred
  /// away, or one row with weight): every W has gradient 0, W = 0 is the
  /// minimum-norm answer and b = ȳ; no learning rate is needed.
  bool zero_design = false;
  /// Outputs whose Xᵀy is below 2^-200 also after f_n: their squares, which
  /// the stopping rules compare, underflow; none of them ends converged.
  std::vector<char> unjudged;
};

/// The copy, on this process's rows; `weighted` as in needs_preparation;
/// `ridge_rows`: this process adds the ridge's L rows (one process does).
/// `sum` and `max` over the processes as in cpu_fit_with_extras; `high`,
/// `low` and `y_largest` from column_exponents. A column in extreme units is
/// first scaled as given (exactly: a subnormal column's bits become a
/// normal's), so that centring and weighting round as for any other; then
/// the exponents of the columns as the fit sees them (weighted, centred, the
/// ridge's row included) replace those.
template <class T, class SumOverProcesses, class MaxOverProcesses>
prepared_data prepare(matrix<const T> X, matrix<const T> Y, const fit_extras<T>& e, bool weighted, const gd_options& o,
                      const std::vector<double>& high, const std::vector<double>& low,
                      const std::vector<double>& y_largest, bool ridge_rows, const SumOverProcesses& sum,
                      const MaxOverProcesses& max) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  int const q = weight_exponent(e, weighted, max);
  std::vector<double> s(static_cast<std::size_t>(K), 1.0);  // s'_k
  for (std::int64_t k = 0; k < K && weighted; ++k) { s[k] = exact_bits(e.sample_weight[k]).scaled(-q); }
  std::vector<int> pre(static_cast<std::size_t>(L + N), 0);  // the scaling as given, X's then Y's
  for (std::int64_t l = 0; l < L; ++l) {
    double const largest = std::fmax(std::fabs(high[l]), std::fabs(low[l]));
    pre[l] = extreme_units(largest) ? -std::ilogb(largest) : 0;
  }
  for (std::int64_t n = 0; n < N; ++n) { pre[L + n] = extreme_units(y_largest[n]) ? -std::ilogb(y_largest[n]) : 0; }
  bool const given_scaled = std::any_of(pre.begin(), pre.end(), [](int shift) { return shift != 0; });
  prepared_data d;
  std::vector<double> x_mean(static_cast<std::size_t>(L), 0.0), y_mean(static_cast<std::size_t>(N), 0.0);
  std::int64_t const extra = has_ridge(o) && ridge_rows ? L : 0;
  d.rows = K + extra;
  d.X.assign(static_cast<std::size_t>(d.rows * L), 0.0);
  d.Y.assign(static_cast<std::size_t>(d.rows * N), 0.0);
  std::vector<double> largest(static_cast<std::size_t>(L + N), 0.0);  // X's columns, then Y's
  // The two passes, compiled apart with and without the scaling as given
  // (the loops without it vectorize).
  auto const passes = [&](auto scaled) {
    auto const x = [&](std::int64_t k, std::int64_t l) {
      return decltype(scaled)::value ? ldexp_exact(static_cast<double>(X(k, l)), pre[l]) : static_cast<double>(X(k, l));
    };
    auto const y = [&](std::int64_t k, std::int64_t n) {
      return decltype(scaled)::value ? ldexp_exact(static_cast<double>(Y(k, n)), pre[L + n])
                                     : static_cast<double>(Y(k, n));
    };
    if (o.fit_intercept) {
      std::vector<double> sums(static_cast<std::size_t>(L + N + 1), 0.0);
      for (std::int64_t k = 0; k < K; ++k) {
        for (std::int64_t l = 0; l < L; ++l) { sums[l] += s[k] * x(k, l); }
        for (std::int64_t n = 0; n < N; ++n) { sums[L + n] += s[k] * y(k, n); }
        sums[L + N] += s[k];
      }
      sum(sums.data(), L + N + 1);
      // The largest weight is in [1, 2) (weight_exponent): the sum is at least 1.
      // A constant column's mean is its value, exactly (the division may round
      // otherwise, and -ffast-math's reciprocal does): centred, it is zero.
      for (std::int64_t l = 0; l < L; ++l) {
        x_mean[l] = high[l] == low[l] ? std::ldexp(high[l], pre[l]) : sums[l] / sums[L + N];
      }
      for (std::int64_t n = 0; n < N; ++n) { y_mean[n] = sums[L + n] / sums[L + N]; }
    }
    for (std::int64_t k = 0; k < K; ++k) {
      double const r = std::sqrt(s[k]);
      for (std::int64_t l = 0; l < L; ++l) {
        double const v = r * (x(k, l) - x_mean[l]);
        d.X[k * L + l] = v;
        largest[l] = std::fabs(v) > largest[l] ? std::fabs(v) : largest[l];  // fmax, inline: v is not NaN
      }
      for (std::int64_t n = 0; n < N; ++n) {
        double const v = r * (y(k, n) - y_mean[n]);
        d.Y[k * N + n] = v;
        largest[L + n] = std::fabs(v) > largest[L + n] ? std::fabs(v) : largest[L + n];  // fmax, inline: v is not NaN
      }
    }
  };
  given_scaled ? passes(std::true_type{}) : passes(std::false_type{});
  max(largest.data(), L + N);
  // Leading exponents as given (the pre-scaling taken off), the ridge's row
  // in its column's.
  auto const as_given = [&](double v, std::size_t i) {
    int const lead = leading_exponent(v);
    return lead == INT_MIN ? INT_MIN : lead - pre[i];
  };
  ridge_root const ridge = ridge_root_of(o, q);
  std::vector<int> data(static_cast<std::size_t>(L)), lead(data.size()), outputs(static_cast<std::size_t>(N));
  for (std::int64_t l = 0; l < L; ++l) {
    data[l] = as_given(largest[l], l);
    lead[l] = std::max(data[l], ridge.leading());
  }
  for (std::int64_t n = 0; n < N; ++n) { outputs[n] = as_given(largest[L + n], L + n); }
  d.exponent = extreme_exponents(lead, o);
  d.zero_design = std::all_of(lead.begin(), lead.end(), [](int v) { return v == INT_MIN; });
  d.output_exponent = output_exponents(outputs);
  d.unjudged = lift_small_right_hand_sides(data, d.exponent, outputs, d.output_exponent);
  bool rescaled = false;  // by a power of two other than 1
  for (std::int64_t l = 0; l < L; ++l) { rescaled = rescaled || d.exponent[l] != pre[l]; }
  for (std::int64_t n = 0; n < N; ++n) { rescaled = rescaled || d.output_exponent[n] != pre[L + n]; }
  for (std::int64_t k = 0; k < K && rescaled; ++k) {
    for (std::int64_t l = 0; l < L; ++l) { d.X[k * L + l] = ldexp_exact(d.X[k * L + l], d.exponent[l] - pre[l]); }
    for (std::int64_t n = 0; n < N; ++n) {
      d.Y[k * N + n] = ldexp_exact(d.Y[k * N + n], d.output_exponent[n] - pre[L + n]);
    }
  }
  for (std::int64_t l = 0; l < extra; ++l) { d.X[(K + l) * L + l] = ridge.entry(d.exponent[l]); }
  d.y_mean.resize(static_cast<std::size_t>(N));
  d.x_mean = x_mean;  // scaled as given by 2^pre: W_l·2^-pre_l times it is W_l·x̄_l, without x̄'s rounding
  for (std::int64_t n = 0; n < N; ++n) { d.y_mean[n] = std::ldexp(y_mean[n], -pre[L + n]); }
  d.x_pre.assign(pre.begin(), pre.begin() + L);
  return d;
}

/// An output whose weights lost bits below their type's range (scaled back
/// into the user's units, or rounded to float: the answer is smaller than
/// the type holds, and rounds to 0 or a subnormal) is not a success even if
/// its iterations converged: the nearest representable W need not solve the
/// problem (a weight of 2^-1140 on a column of 2^600 matters). It ends
/// stalled, by the rule rounding_floor (the type's floor).
inline void mark_underflow(output_report& out) {
  if (out.status == fit_status::converged) {
    out.status = fit_status::stalled;
    out.rule = stop_rule::rounding_floor;
  }
}

/// A fit through the prepared copy: W (in C, `view`) scaled into X'’s
/// columns, the fit, W scaled back and the intercepts (0 without
/// `fit_intercept`). `fit(Xp, Yp, Wp)` is the plain fit on this process's rows
/// of X' and Y'.
template <class C, class T, class Fit>
fit_report fit_prepared(const prepared_data& d, std::int64_t N, std::int64_t L, matrix<C> view, const fit_extras<T>& e,
                        bool fit_intercept, const Fit& fit) {
  std::vector<char> lossy(static_cast<std::size_t>(N), 0);  // a weight that lost bits scaled back
  auto const scale = [&](int sign) {
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t l = 0; l < L; ++l) {
        int const by = sign * (d.exponent[l] - d.output_exponent[n]);
        C const before = view(n, l);
        view(n, l) = std::ldexp(before, by);
        lossy[n] = lossy[n] || std::ldexp(view(n, l), -by) != before;
      }
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
  lossy = d.unjudged;
  scale(1);
  for (std::int64_t n = 0; n < N; ++n) {
    if (lossy[n] != 0) { mark_underflow(report.outputs[static_cast<std::size_t>(n)]); }
  }
  for (std::int64_t n = 0; n < N && !e.intercept.empty(); ++n) {
    double b = d.y_mean[n];
    for (std::int64_t l = 0; l < L; ++l) {  // x̄ = 0 without an intercept (b is 0 then, below)
      b -= std::ldexp(static_cast<double>(view(n, l)), -d.x_pre[l]) * d.x_mean[l];
    }
    e.intercept[n] = fit_intercept ? round_to<T>(b) : T(0);
  }
  return report;
}

/// The last word on every CPU and MPI fit: an output whose W row or intercept
/// is not finite in T (a weight past T's range once scaled back or rounded)
/// is not a success, whatever its iterations said: diverged, by the rule
/// non_finite.
template <class T>
void expect_finite_outputs(matrix<const T> W, ::cuda::std::span<const T> intercept, fit_report& report) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  for (std::int64_t n = 0; n < N; ++n) {
    bool finite = intercept.empty() || is_finite(intercept[n]);
    for (std::int64_t l = 0; l < L; ++l) { finite = finite && is_finite(W(n, l)); }
    auto& out = report.outputs[static_cast<std::size_t>(n)];
    if (!finite && out.status != fit_status::diverged) {
      out.status = fit_status::diverged;
      out.rule = stop_rule::non_finite;
    }
  }
}

/// W's rows in C: W itself when T is C, else a copy (rounded back by `finish`).
template <class C, class T>
struct compute_weights {
  std::vector<C> copy;
  matrix<C> view;
  explicit compute_weights(matrix<T> W) : view(nullptr, 0, 0) {
    if constexpr (std::is_same_v<C, T>) {
      view = W;
    } else {
      copy.assign(W.data_handle(), W.data_handle() + W.extent(0) * W.extent(1));
      view = matrix<C>(copy.data(), W.extent(0), W.extent(1));
    }
  }
  /// W rounded from the copy (nothing to do where the fit ran in W itself).
  void write(matrix<T> W) const {
    if constexpr (!std::is_same_v<C, T>) {
      for (std::size_t i = 0; i < copy.size(); ++i) { W.data_handle()[i] = round_to<T>(copy[i]); }
    } else {
      (void)W;
    }
  }
  /// write(W); an output whose W row or intercept is not finite in T, or
  /// whose weights lost bits below T's range, is not a success
  /// (expect_finite_outputs, mark_underflow).
  void finish(matrix<T> W, ::cuda::std::span<const T> intercept, fit_report& report) const {
    write(W);
    if constexpr (!std::is_same_v<C, T>) {
      std::int64_t const N = W.extent(0), L = W.extent(1);
      for (std::int64_t n = 0; n < N; ++n) {
        bool lossy = false;
        for (std::int64_t l = 0; l < L; ++l) {
          double const c = static_cast<double>(copy[n * L + l]), t = static_cast<double>(W(n, l));
          lossy = lossy || (c != 0 && !(std::fabs(t - c) <= 0x1p-24 * std::fabs(c)));
        }
        if (lossy) { mark_underflow(report.outputs[static_cast<std::size_t>(n)]); }
      }
    }
    expect_finite_outputs(matrix<const T>(W.data_handle(), W.extent(0), W.extent(1)), intercept, report);
  }
};

/// The ranges of X's and Y's columns that `prepare` reads (exponents_from_ranges).
struct column_bounds {
  const std::vector<double>& high;
  const std::vector<double>& low;
  const std::vector<double>& y_largest;
};

/// A fit through the prepared copy, on every backend: `prepare` on this
/// process's rows of X and Y (host memory), then `fit(Xp, Yp, Wp, options,
/// rows)`, the backend's plain fit over the copy in double (`rows`: over every
/// process, the ridge's included), W (host memory, in T) and the intercepts
/// written from it (compute_weights::finish). `sum`, `max` and `ridge_rows` as
/// `prepare` takes them.
template <class T, class SumOverProcesses, class MaxOverProcesses, class Fit>
fit_report prepare_and_fit(matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                           const fit_extras<T>& e, bool weighted, std::int64_t total_rows, const column_bounds& bounds,
                           bool ridge_rows, const SumOverProcesses& sum, const MaxOverProcesses& max, const Fit& fit) {
  std::int64_t const L = X.extent(1), N = Y.extent(1);
  prepared_data const d =
      prepare(X, Y, e, weighted, o, bounds.high, bounds.low, bounds.y_largest, ridge_rows, sum, max);
  std::int64_t const rows = total_rows + (has_ridge(o) ? L : 0);
  compute_weights<double, T> weights(W);
  fit_report report;
  try {
    gd_options fit_options = o;
    if (d.zero_design && !o.learning_rate) { fit_options.learning_rate = 1.0; }  // any: every gradient is 0
    report = fit_prepared(d, N, L, weights.view, e, o.fit_intercept,
                          [&](auto Xp, auto Yp, auto Wp) { return fit(Xp, Yp, Wp, fit_options, rows); });
  } catch (...) {
    weights.write(W);
    throw;
  }
  weights.finish(W, ::cuda::std::span<const T>(e.intercept.data(), e.intercept.size()), report);
  return report;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
