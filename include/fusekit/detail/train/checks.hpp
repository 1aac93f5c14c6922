// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The argument checks of `fit` and `predict`, shared by every backend: each
/// check names the argument and the constraint, and runs before anything is
/// launched or written.

#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/core/checks.hpp>
#include <fusekit/detail/reduce/reduction.hpp>
#include <fusekit/error.hpp>
#include <fusekit/reduce_types.hpp>
#include <fusekit/train_types.hpp>

#include <cuda/std/span>

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace train {

/// Non-finite elements, counted by a one-pass reduction (on the bits: -ffast-math safe).
struct count_non_finite {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE std::int64_t operator()(T x) const {
    return is_finite(x) ? 0 : 1;
  }
};

/// m's elements, checked: extents whose product wraps int64 are rejected
/// (checked_elements), before a null view of "0" elements could pass.
template <class M>
std::int64_t matrix_elements(const std::string& function, const char* name, const M& m) {
  return checked_elements(function, name, m.extent(0), m.extent(1), sizeof(typename M::element_type));
}

template <class M>
named_range describe_matrix(const std::string& function, const char* name, const M& m) {
  return {name, reinterpret_cast<std::uintptr_t>(m.data_handle()),
          static_cast<std::size_t>(matrix_elements(function, name, m)), sizeof(typename M::element_type)};
}

template <class T>
named_range describe_values(const char* name, ::cuda::std::span<T> values) {
  return {name, reinterpret_cast<std::uintptr_t>(values.data()), values.size(), sizeof(T)};
}

/// The first non-finite value of a view and its index (−1: none).
template <class T>
struct first_non_finite {
  std::int64_t index = -1;
  T value{};
};

/// first_non_finite of host memory.
template <class T>
first_non_finite<T> cpu_first_non_finite(const T* values, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_finite(values[i])) { return {static_cast<std::int64_t>(i), values[i]}; }
  }
  return {};
}

/// The same where the values may be in device memory: copied back a slice at
/// a time on the policy's stream (detail/train/cuda.cuh; an error path only).
template <class T>
first_non_finite<T> device_first_non_finite(const cuda& policy, ::cuda::std::span<const T> values);

/// 1 where x is not finite, else 0, as is_finite decides, by adds and shifts
/// on the bits (a loop of them vectorizes without 64-bit compares): the
/// exponent field plus one carries into the sign bit only when it is all ones.
template <class T>
FUSEKIT_FORCEINLINE std::int64_t non_finite_bit(T x) {
  if constexpr (std::is_same_v<T, double>) {
    return static_cast<std::int64_t>(((bit_cast<std::uint64_t>(x) & 0x7ff0000000000000ull) + 0x0010000000000000ull) >>
                                     63);
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<std::int64_t>(((bit_cast<std::uint32_t>(x) & 0x7f800000u) + 0x00800000u) >> 31);
  } else {
    return is_finite(x) ? 0 : 1;
  }
}

/// Counts the non-finite values of a view with the policy's own deterministic
/// sum: its backend's reduction hook, called directly, whose backend the
/// caller has included; `locate` finds the first one.
template <class Policy>
struct non_finite_counter {
  const Policy& policy;
  /// Host values up to this many are counted in one loop on the calling
  /// thread (a count is exact in any order; below this, waking the pool's
  /// helpers and the tree's tiles cost more than the pass).
  static constexpr std::size_t one_loop_up_to = std::size_t{1} << 18;
  template <class T>
  std::int64_t operator()(::cuda::std::span<const T> values) const {
    if constexpr (std::is_same_v<Policy, cpu>) {
      if (values.size() <= one_loop_up_to) {
        std::int64_t count = 0;
        const T* const v = values.data();
        for (std::size_t i = 0; i < values.size(); ++i) { count += non_finite_bit(v[i]); }
        return count;
      }
    }
    return reduce_on(
        policy,
        transform_reduction<true>("fusekit::fit", count_non_finite{}, static_cast<std::int64_t*>(nullptr), values),
        deterministic{});
  }
  template <class T>
  first_non_finite<T> locate(::cuda::std::span<const T> values) const {
    if constexpr (std::is_same_v<Policy, cuda> || std::is_same_v<Policy, cuda_staged>) {
      return device_first_non_finite(policy, values);
    } else {
      return cpu_first_non_finite(values.data(), values.size());
    }
  }
};

/// "NaN", "inf" or "-inf".
template <class T>
const char* non_finite_name(T x) {
  return is_nan(x) ? "NaN" : x < T(0) ? "-inf" : "inf";
}

/// Every value of m finite; `count` counts the non-finite ones and `locate`s
/// the first (non_finite_counter, or a backend's own). The message names it:
/// "fusekit::fit: X(17, 3) is NaN (2 values of X not finite); every value must be finite".
template <class M, class Count>
void expect_finite(const char* function, const char* name, const M& m, const Count& count, const char* what = "") {
  using T = std::remove_cv_t<typename M::element_type>;
  ::cuda::std::span<const T> const values(m.data_handle(),
                                          static_cast<std::size_t>(matrix_elements(function, name, m)));
  std::int64_t const bad = count(values);
  if (bad == 0) { return; }
  first_non_finite<T> const first = count.locate(values);
  std::string where = std::string(name) + what + " has a value that is not finite";
  if (first.index >= 0) {
    auto const cols = static_cast<std::int64_t>(m.extent(1));
    where = std::string(name) + "(" + std::to_string(first.index / cols) + ", " + std::to_string(first.index % cols) +
            ")" + what + " is " + non_finite_name(first.value);
  }
  FUSEKIT_EXPECTS(false, std::string(function) + ": " + where + " (" + std::to_string(bad) + " value" +
                             (bad == 1 ? "" : "s") + " of " + name + " not finite); every value must be finite");
}

template <class T>
constexpr void check_train_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "fusekit::fit and fusekit::predict train in float or double");
}

template <class T>
constexpr const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

/// A double for a message: "nan", "inf" and exponents spelled out (-ffast-math safe).
inline std::string describe_value(double v) {
  if (is_nan(v)) { return "NaN"; }
  if (!is_finite(v)) { return v > 0 ? "+inf" : "-inf"; }
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

/// Whether v is positive and finite, also once rounded to T (1e39 is inf and
/// 1e-50 is 0 in float). Decided on the bits, so NaN is caught under -ffast-math.
template <class T>
bool positive_finite_in(double v) {
  return is_finite(v) && v > 0 && is_finite(static_cast<T>(v)) && static_cast<T>(v) > T(0);
}

/// The automatic learning rate 1/λ from the power iteration's λ, or a clear
/// error when X cannot give one: λ = 0 (X is zero, or so small that XᵀX
/// underflows), λ not finite (XᵀX overflows T), or 1/λ not finite in T.
template <class T>
double automatic_learning_rate(double lambda) {
  double const rate = 1.0 / lambda;
  FUSEKIT_EXPECTS(is_finite(lambda) && lambda > 0 && positive_finite_in<T>(rate),
                  std::string("fusekit::fit: X gives λmax(XᵀX) = ") + describe_value(lambda) +
                      ", so the automatic learning rate 1/λmax is not a positive finite " + type_name<T>() +
                      " (X is zero, or too small or too large for its squares in " + type_name<T>() +
                      "); scale X, or pass a learning_rate");
  return rate;
}

inline void check_options(const char* f, const gd_options& o, bool (*representable)(double), const char* type) {
  if (o.learning_rate) {
    FUSEKIT_EXPECTS(representable(*o.learning_rate),
                    std::string(f) + ": learning_rate is " + describe_value(*o.learning_rate) +
                        "; it must be positive and finite in " + type + " (or unset for the automatic rate)");
  }
  // relative_tolerance first: tolerance 0 is valid only beside a valid one, so
  // a wrong relative_tolerance is the error to name.
  bool const relative = o.relative_tolerance > 0;
  FUSEKIT_EXPECTS(is_finite(o.relative_tolerance) && o.relative_tolerance >= 0 && o.relative_tolerance < 1 &&
                      (!relative || o.relative_tolerance >= gd_options::min_relative_tolerance),
                  std::string(f) + ": relative_tolerance is " + describe_value(o.relative_tolerance) +
                      "; it must be 0 (off) or in [1e-150, 1) (below 1e-150 its square underflows)");
  if (o.tolerance) {
    // ±0 on the bits: under -ffast-math `tolerance == 0.0` may hold for a NaN,
    // and a NaN test after it may be folded with the zero it implies.
    bool const zero = (bit_cast<std::uint64_t>(*o.tolerance) << 1) == 0;
    FUSEKIT_EXPECTS(representable(*o.tolerance) || (relative && zero),
                    std::string(f) + ": tolerance is " + describe_value(*o.tolerance) +
                        "; it must be positive and finite in " + type +
                        (relative ? " (or 0: off, with the relative_tolerance alone)" : " (or unset: 1e-8)"));
  }
  FUSEKIT_EXPECTS(o.max_iterations >= 1, std::string(f) + ": max_iterations is " + std::to_string(o.max_iterations) +
                                             "; it must be at least 1");
  FUSEKIT_EXPECTS(o.stall_window >= 1,
                  std::string(f) + ": stall_window is " + std::to_string(o.stall_window) + "; it must be at least 1");
  FUSEKIT_EXPECTS(o.progress_every >= 1, std::string(f) + ": progress_every is " + std::to_string(o.progress_every) +
                                             "; it must be at least 1");
  FUSEKIT_EXPECTS(o.refinement_steps >= 0 && o.refinement_steps <= gd_options::max_refinement_steps,
                  std::string(f) + ": refinement_steps is " + std::to_string(o.refinement_steps) +
                      "; it must be in 0 .. " + std::to_string(gd_options::max_refinement_steps));
  FUSEKIT_EXPECTS(
      o.method == gd_method::plain || o.method == gd_method::nesterov || o.method == gd_method::conjugate_gradient,
      std::string(f) + ": method is " + std::to_string(static_cast<int>(o.method)) +
          ", not a gd_method (plain, nesterov or conjugate_gradient)");
  FUSEKIT_EXPECTS(o.preconditioner == gd_preconditioner::none || o.preconditioner == gd_preconditioner::jacobi ||
                      o.preconditioner == gd_preconditioner::cholesky,
                  std::string(f) + ": preconditioner is " + std::to_string(static_cast<int>(o.preconditioner)) +
                      ", not a gd_preconditioner (none, jacobi or cholesky)");
  FUSEKIT_EXPECTS(o.preconditioner != gd_preconditioner::cholesky || o.method == gd_method::conjugate_gradient,
                  std::string(f) + ": preconditioner cholesky needs method conjugate_gradient (method is " +
                      to_string(o.method) + "); plain and Nesterov descent take none or jacobi");
  FUSEKIT_EXPECTS(o.formulation == gd_formulation::automatic || o.formulation == gd_formulation::direct ||
                      o.formulation == gd_formulation::gram,
                  std::string(f) + ": formulation is " + std::to_string(static_cast<int>(o.formulation)) +
                      ", not a gd_formulation (automatic, direct or gram)");
  FUSEKIT_EXPECTS(o.init == gd_init::zeros || o.init == gd_init::warm_start || o.init == gd_init::uniform,
                  std::string(f) + ": init is " + std::to_string(static_cast<int>(o.init)) +
                      ", not a gd_init (zeros, warm_start or uniform)");
}

/// Checks the shapes, the options and the memory of `fit`'s views (W and the
/// intercepts written, apart from X, Y, the weights and each other): every
/// check that reads no value.
template <class T>
void check_fit_arguments(matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                         bool rows_may_be_empty = false, const fit_extras<T>& extras = {}) {
  check_train_type<T>();
  const char* const f = "fusekit::fit";
  FUSEKIT_EXPECTS((X.extent(0) > 0 || rows_may_be_empty) && X.extent(1) > 0,
                  std::string(f) + ": X is " + std::to_string(X.extent(0)) + " x " + std::to_string(X.extent(1)) +
                      "; it needs at least one row (K) and one column (L)");
  FUSEKIT_EXPECTS(Y.extent(1) > 0, std::string(f) + ": Y has no columns; it needs at least one output (N)");
  FUSEKIT_EXPECTS(Y.extent(0) == X.extent(0), std::string(f) + ": Y has " + std::to_string(Y.extent(0)) +
                                                  " rows but X has " + std::to_string(X.extent(0)) +
                                                  "; both need one row per input vector (K)");
  FUSEKIT_EXPECTS(W.extent(0) == Y.extent(1) && W.extent(1) == X.extent(1),
                  std::string(f) + ": W is " + std::to_string(W.extent(0)) + " x " + std::to_string(W.extent(1)) +
                      " but must be N x L = " + std::to_string(Y.extent(1)) + " x " + std::to_string(X.extent(1)));
  check_options(f, o, &positive_finite_in<T>, type_name<T>());
  expect_apart(
      f, {describe_matrix(f, "W", W), describe_values("intercept", extras.intercept)},
      {describe_matrix(f, "X", X), describe_matrix(f, "Y", Y), describe_values("sample_weight", extras.sample_weight)});
}

/// Checks that X, Y and a warm start W are finite; `count` counts a matrix's
/// non-finite values.
template <class T, class Count>
void check_fit_values(matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o, const Count& count) {
  const char* const f = "fusekit::fit";
  expect_finite(f, "X", X, count);
  expect_finite(f, "Y", Y, count);
  if (o.init == gd_init::warm_start) {
    expect_finite(f, "W", matrix<const T>(W.data_handle(), W.extent(0), W.extent(1)), count, ", the warm start,");
  }
}

/// Checks every argument of `fit`: check_fit_arguments, then check_fit_values.
template <class T, class Count>
void check_fit(matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o, const Count& count,
               bool rows_may_be_empty = false, const fit_extras<T>& extras = {}) {
  check_fit_arguments(X, Y, W, o, rows_may_be_empty, extras);
  check_fit_values(X, Y, W, o, count);
}

/// Checks every argument of `predict`, and `intercept` (N values or none)
/// against Y_hat.
template <class T>
void check_predict(matrix<const T> X, matrix<const T> W, matrix<T> Y_hat, ::cuda::std::span<const T> intercept = {}) {
  check_train_type<T>();
  const char* const f = "fusekit::predict";
  FUSEKIT_EXPECTS(W.extent(1) == X.extent(1), std::string(f) + ": W has " + std::to_string(W.extent(1)) +
                                                  " columns but X has " + std::to_string(X.extent(1)) +
                                                  "; both need one per input component (L)");
  FUSEKIT_EXPECTS(Y_hat.extent(0) == X.extent(0) && Y_hat.extent(1) == W.extent(0),
                  std::string(f) + ": Y_hat is " + std::to_string(Y_hat.extent(0)) + " x " +
                      std::to_string(Y_hat.extent(1)) + " but must be K x N = " + std::to_string(X.extent(0)) + " x " +
                      std::to_string(W.extent(0)));
  expect_apart(f, {describe_matrix(f, "Y_hat", Y_hat)},
               {describe_matrix(f, "X", X), describe_matrix(f, "W", W), describe_values("intercept", intercept)});
}

/// `automatic`: gram when there are more rows than unknowns (K > L).
inline gd_formulation resolve_formulation(gd_formulation requested, std::int64_t K, std::int64_t L) {
  if (requested != gd_formulation::automatic) { return requested; }
  return K > L ? gd_formulation::gram : gd_formulation::direct;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
