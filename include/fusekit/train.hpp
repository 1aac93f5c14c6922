// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Gradient-descent trainer for the linear association network: K input
/// vectors of length L (X, K × L) map to K outputs of length N (Y, K × N)
/// through W (N × L), Y ≈ X Wᵀ. Each output n trains on its own, as the user's
/// loop does:
///
///     repeat  delta = X w − y_n;  grad = Xᵀ delta;  w = w − lr · grad   until gradᵀgrad < tol
///
/// `iterations` counts the updates; the last update uses the gradient that met
/// the tolerance, as in that loop.
///
///     fusekit::gd_options opt;  opt.tolerance = 1e-8;  opt.max_iterations = 100000;
///     fusekit::fit_report r = fusekit::fit(fusekit::cpu{}, X, Y, W, opt);
///     fusekit::predict(fusekit::cpu{}, X, W, Y_hat);
///
/// * Views are row-major `cuda::std::mdspan`s (`fusekit::matrix<T>`), host
///   memory for `fusekit::cpu`, device memory for `fusekit::cuda`; float or double.
/// * `learning_rate`: a value, or (unset) automatic = 1/λ with λ the Rayleigh
///   quotient of a power iteration on XᵀX (λ ≤ λmax, converged to 1e-10).
/// * `method`: plain gradient descent (the user's algorithm, iterate for
///   iterate) or Nesterov's accelerated gradient with adaptive restart
///   (momentum j/(j+3), j reset to 0 when a step goes uphill, gᵀ(w_new − w) > 0:
///   O'Donoghue and Candès, "Adaptive restart for accelerated gradient
///   schemes", 2015); gradient and stopping rule at the extrapolated point.
/// * `formulation`: `direct` (every iteration touches X: 2·K·L flops per output)
///   or `gram` (A = XᵀX and b = Xᵀy once, then grad = A w − b: 2·L² per
///   output, independent of K); `automatic` picks gram when K > L. The iterates
///   agree up to rounding.
/// * Stopping: `converged` (gradᵀgrad < tolerance), `max_iterations`, `diverged`
///   (non-finite, or gradᵀgrad above 10^12 times its first value: within about
///   40 iterations for lr = 3/λmax), `stalled` (the best gradᵀgrad did not drop
///   by 0.1% over `stall_window` iterations, e.g. a tolerance below what the type
///   can reach). Outputs stop independently; every loop is bounded by
///   `max_iterations`.
/// * `fit` returns a host report, so with `fusekit::cuda` it synchronizes.
///
/// CPU backend: outputs in parallel (OpenMP); within an output the sums run in
/// a fixed order, so results do not depend on the thread count.

#include <fusekit/config.hpp>
#include <fusekit/detail/gd.hpp>
#include <fusekit/detail/random.hpp>
#include <fusekit/detail/validate.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/reduce.hpp>

#include <cuda/std/mdspan>
#include <cuda/std/span>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#if FUSEKIT_HAS_OPENMP
#include <omp.h>
#endif

namespace fusekit {

/// A row-major matrix view.
template <class T>
using matrix = ::cuda::std::mdspan<T, ::cuda::std::dextents<std::int64_t, 2>>;

enum class gd_method { plain, nesterov };
enum class gd_formulation { automatic, direct, gram };
enum class gd_init { zeros, warm_start, uniform };

constexpr const char* to_string(gd_method m) { return m == gd_method::plain ? "plain" : "nesterov"; }
constexpr const char* to_string(gd_formulation f) {
  return f == gd_formulation::direct ? "direct" : (f == gd_formulation::gram ? "gram" : "automatic");
}

struct gd_options {
  std::optional<double> learning_rate;  ///< unset: automatic, 1/λmax(XᵀX)
  double tolerance = 1e-8;              ///< on gradᵀgrad, per output
  std::int64_t max_iterations = 100000;
  gd_init init = gd_init::zeros;  ///< warm_start: W's values on entry
  std::uint64_t seed = 0;         ///< for gd_init::uniform: uniform [0, 1)
  gd_method method = gd_method::plain;
  gd_formulation formulation = gd_formulation::automatic;
  std::int64_t stall_window = 1000;
};

struct output_report {
  std::int64_t iterations = 0;
  double grad_norm2 = 0;  ///< gradᵀgrad of the last gradient computed
  fit_status status = fit_status::max_iterations;
};

struct fit_report {
  std::vector<output_report> outputs;  ///< one per row of W
  double learning_rate = 0;            ///< the one used
  gd_formulation formulation = gd_formulation::automatic;  ///< the one used
  const char* path = "cpu";            ///< "cpu", "single_launch" or "cublas"

  [[nodiscard]] bool all_converged() const {
    for (const auto& o : outputs) {
      if (o.status != fit_status::converged) { return false; }
    }
    return true;
  }
  [[nodiscard]] std::int64_t most_iterations() const {
    std::int64_t m = 0;
    for (const auto& o : outputs) { m = o.iterations > m ? o.iterations : m; }
    return m;
  }
};

namespace detail {

/// First argument of the backend entry points (see reduce_tag).
struct train_tag {};

/// Non-finite elements, counted by a one-pass reduction (on the bits: -ffast-math safe).
struct count_non_finite {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE std::int64_t operator()(T x) const {
    return is_finite(x) ? 0 : 1;
  }
};

template <class M>
named_range describe_matrix(const char* name, const M& m) {
  return {name, reinterpret_cast<std::uintptr_t>(m.data_handle()),
          static_cast<std::size_t>(m.extent(0) * m.extent(1)), sizeof(typename M::element_type)};
}

template <class Policy, class M>
void expect_finite(const Policy& policy, const char* function, const char* name, const M& m) {
  using T = std::remove_cv_t<typename M::element_type>;
  ::cuda::std::span<const T> const all(m.data_handle(), static_cast<std::size_t>(m.extent(0) * m.extent(1)));
  std::int64_t const bad = transform_reduce(policy, reduce_algorithm::deterministic, accumulate_in<std::int64_t>{},
                                            count_non_finite{}, all);
  FUSEKIT_EXPECTS(bad == 0, std::string(function) + ": " + name + " has " + std::to_string(bad) +
                                " non-finite values; every value must be finite");
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

template <class Policy, class T>
void check_fit(const Policy& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o) {
  check_train_type<T>();
  const char* const f = "fusekit::fit";
  FUSEKIT_EXPECTS(X.extent(0) > 0 && X.extent(1) > 0, std::string(f) + ": X is " + std::to_string(X.extent(0)) +
                                                          " x " + std::to_string(X.extent(1)) +
                                                          "; it needs at least one row (K) and one column (L)");
  FUSEKIT_EXPECTS(Y.extent(1) > 0, std::string(f) + ": Y has no columns; it needs at least one output (N)");
  FUSEKIT_EXPECTS(Y.extent(0) == X.extent(0), std::string(f) + ": Y has " + std::to_string(Y.extent(0)) +
                                                  " rows but X has " + std::to_string(X.extent(0)) +
                                                  "; both need one row per input vector (K)");
  FUSEKIT_EXPECTS(W.extent(0) == Y.extent(1) && W.extent(1) == X.extent(1),
                  std::string(f) + ": W is " + std::to_string(W.extent(0)) + " x " + std::to_string(W.extent(1)) +
                      " but must be N x L = " + std::to_string(Y.extent(1)) + " x " + std::to_string(X.extent(1)));
  if (o.learning_rate) {
    FUSEKIT_EXPECTS(positive_finite_in<T>(*o.learning_rate),
                    std::string(f) + ": learning_rate is " + describe_value(*o.learning_rate) + "; it must be positive " +
                        "and finite in " + type_name<T>() + " (or unset for the automatic rate)");
  }
  FUSEKIT_EXPECTS(positive_finite_in<T>(o.tolerance), std::string(f) + ": tolerance is " + describe_value(o.tolerance) +
                                                          "; it must be positive and finite in " + type_name<T>());
  FUSEKIT_EXPECTS(o.max_iterations >= 1, std::string(f) + ": max_iterations is " + std::to_string(o.max_iterations) +
                                             "; it must be at least 1");
  FUSEKIT_EXPECTS(o.stall_window >= 1, std::string(f) + ": stall_window is " + std::to_string(o.stall_window) +
                                           "; it must be at least 1");
  FUSEKIT_EXPECTS(o.method == gd_method::plain || o.method == gd_method::nesterov,
                  std::string(f) + ": method is " + std::to_string(static_cast<int>(o.method)) +
                      ", not a gd_method (plain or nesterov)");
  FUSEKIT_EXPECTS(o.formulation == gd_formulation::automatic || o.formulation == gd_formulation::direct ||
                      o.formulation == gd_formulation::gram,
                  std::string(f) + ": formulation is " + std::to_string(static_cast<int>(o.formulation)) +
                      ", not a gd_formulation (automatic, direct or gram)");
  FUSEKIT_EXPECTS(o.init == gd_init::zeros || o.init == gd_init::warm_start || o.init == gd_init::uniform,
                  std::string(f) + ": init is " + std::to_string(static_cast<int>(o.init)) +
                      ", not a gd_init (zeros, warm_start or uniform)");
  named_range const x = describe_matrix("X", X), y = describe_matrix("Y", Y), w = describe_matrix("W", W);
  for (const auto& r : {x, y, w}) {
    expect_not_null(f, r);
    expect_aligned(f, r);
  }
  expect_disjoint(f, w, x);
  expect_disjoint(f, w, y);
  expect_finite(policy, f, "X", X);
  expect_finite(policy, f, "Y", Y);
  if (o.init == gd_init::warm_start) { expect_finite(policy, f, "W (the warm start)", matrix<const T>(W.data_handle(), W.extent(0), W.extent(1))); }
}

template <class T>
void check_predict(matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  check_train_type<T>();
  const char* const f = "fusekit::predict";
  FUSEKIT_EXPECTS(W.extent(1) == X.extent(1), std::string(f) + ": W has " + std::to_string(W.extent(1)) +
                                                  " columns but X has " + std::to_string(X.extent(1)) +
                                                  "; both need one per input component (L)");
  FUSEKIT_EXPECTS(Y_hat.extent(0) == X.extent(0) && Y_hat.extent(1) == W.extent(0),
                  std::string(f) + ": Y_hat is " + std::to_string(Y_hat.extent(0)) + " x " +
                      std::to_string(Y_hat.extent(1)) + " but must be K x N = " + std::to_string(X.extent(0)) +
                      " x " + std::to_string(W.extent(0)));
  named_range const x = describe_matrix("X", X), w = describe_matrix("W", W), y = describe_matrix("Y_hat", Y_hat);
  for (const auto& r : {x, w, y}) {
    expect_not_null(f, r);
    expect_aligned(f, r);
  }
  expect_disjoint(f, y, x);
  expect_disjoint(f, y, w);
}

inline gd_formulation resolve_formulation(gd_formulation requested, std::int64_t K, std::int64_t L) {
  if (requested != gd_formulation::automatic) { return requested; }
  return K > L ? gd_formulation::gram : gd_formulation::direct;
}

/// Initial weights for row n (of length L) as `init` asks.
template <class T>
FUSEKIT_HD inline T initial_weight(gd_init init, std::uint64_t seed, std::int64_t n, std::int64_t l, std::int64_t L,
                                   T current) {
  if (init == gd_init::zeros) { return T(0); }
  if (init == gd_init::uniform) { return uniform01<T>(static_cast<std::uint64_t>(n * L + l), seed); }
  return current;
}

/// λ of a power iteration on a symmetric positive semi-definite operator
/// `apply(v, out)` of size L, in double; the Rayleigh quotient, ≤ λmax.
template <class Apply>
double power_iteration(std::int64_t L, Apply apply) {
  std::vector<double> v(static_cast<std::size_t>(L), 1.0 / std::sqrt(static_cast<double>(L)));
  std::vector<double> u(static_cast<std::size_t>(L));
  double lambda = 0;
  for (int it = 0; it < 1000; ++it) {
    apply(v.data(), u.data());
    double dot = 0, norm2 = 0;
    for (std::int64_t i = 0; i < L; ++i) {
      dot += v[i] * u[i];
      norm2 += u[i] * u[i];
    }
    double const previous = lambda;
    lambda = dot;
    if (!(norm2 > 0)) { break; }
    double const inv = 1.0 / std::sqrt(norm2);
    for (std::int64_t i = 0; i < L; ++i) { v[i] = u[i] * inv; }
    if (it > 0 && std::fabs(lambda - previous) <= 1e-10 * lambda) { break; }
  }
  return lambda;
}

/// A = XᵀX (L × L) and B = YᵀX (N × L, row n is b_n = Xᵀ y_n), sums over k in order.
template <class T>
void cpu_gram(int threads, matrix<const T> X, matrix<const T> Y, std::vector<T>& A, std::vector<T>& B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  A.assign(static_cast<std::size_t>(L * L), T(0));
  B.assign(static_cast<std::size_t>(N * L), T(0));
  const T* x = X.data_handle();
  const T* y = Y.data_handle();
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (K * L * L >= cpu_parallel_threshold)
#endif
  for (std::int64_t i = 0; i < L; ++i) {
    T* a = A.data() + i * L;
    for (std::int64_t k = 0; k < K; ++k) {
      T const xi = x[k * L + i];
      const T* xk = x + k * L;
      for (std::int64_t j = 0; j < L; ++j) { a[j] = a[j] + xi * xk[j]; }
    }
  }
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (K * L * N >= cpu_parallel_threshold)
#endif
  for (std::int64_t n = 0; n < N; ++n) {
    T* b = B.data() + n * L;
    for (std::int64_t k = 0; k < K; ++k) {
      T const ykn = y[k * N + n];
      const T* xk = x + k * L;
      for (std::int64_t l = 0; l < L; ++l) { b[l] = b[l] + xk[l] * ykn; }
    }
  }
}

/// grad = Xᵀ(X v − y_n), the user's two products, sums in index order. Returns gradᵀgrad.
template <class T>
T direct_gradient(matrix<const T> X, matrix<const T> Y, std::int64_t n, const T* v, T* delta, T* g) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  const T* x = X.data_handle();
  for (std::int64_t k = 0; k < K; ++k) {
    T s = T(0);
    for (std::int64_t l = 0; l < L; ++l) { s = s + x[k * L + l] * v[l]; }
    delta[k] = s - Y.data_handle()[k * N + n];
  }
  for (std::int64_t l = 0; l < L; ++l) { g[l] = T(0); }
  for (std::int64_t k = 0; k < K; ++k) {
    T const d = delta[k];
    for (std::int64_t l = 0; l < L; ++l) { g[l] = g[l] + x[k * L + l] * d; }
  }
  T g2 = T(0);
  for (std::int64_t l = 0; l < L; ++l) { g2 = g2 + g[l] * g[l]; }
  return g2;
}

/// grad = A v − b_n, each grad_i summed over j in order; A is symmetric, so
/// row j serves as column j and the loop over i vectorizes. Returns gradᵀgrad.
template <class T>
T gram_gradient(const T* A, const T* b, std::int64_t L, const T* v, T* g) {
  for (std::int64_t i = 0; i < L; ++i) { g[i] = T(0); }
  for (std::int64_t j = 0; j < L; ++j) {
    T const vj = v[j];
    const T* a = A + j * L;
    for (std::int64_t i = 0; i < L; ++i) { g[i] = g[i] + a[i] * vj; }
  }
  T g2 = T(0);
  for (std::int64_t i = 0; i < L; ++i) {
    g[i] = g[i] - b[i];
    g2 = g2 + g[i] * g[i];
  }
  return g2;
}

/// Whether every one of the n values at v is finite (on the bits).
template <class T>
bool all_finite(const T* v, std::int64_t n) {
  bool finite = true;
  for (std::int64_t i = 0; i < n; ++i) { finite = finite && is_finite(v[i]); }
  return finite;
}

/// Trains one output: w (length L) in place; `gradient(v, g)` returns gradᵀgrad at v.
template <class T, class Gradient>
output_report cpu_descend(T* w, std::int64_t L, T lr, const gd_options& o, Gradient gradient) {
  std::vector<T> g(static_cast<std::size_t>(L)), previous(w, w + L), point(static_cast<std::size_t>(L));
  gd_monitor<T> monitor{static_cast<T>(o.tolerance), o.stall_window};
  nesterov_state momentum;
  output_report r;
  r.status = fit_status::max_iterations;
  r.iterations = o.max_iterations;
  for (std::int64_t it = 0; it < o.max_iterations; ++it) {
    const T* at = w;
    if (o.method == gd_method::nesterov) {
      T const mu = momentum.coefficient<T>();
      for (std::int64_t l = 0; l < L; ++l) { point[l] = w[l] + mu * (w[l] - previous[l]); }
      at = point.data();
    }
    T const g2 = gradient(at, g.data());
    r.grad_norm2 = static_cast<double>(g2);
    int const stop = monitor.check(g2, it);
    if (stop >= 0) {
      r.status = static_cast<fit_status>(stop);
      r.iterations = it;
      break;
    }
    if (o.method == gd_method::nesterov) {
      // Restart when the step goes uphill: gᵀ(w_new − w) > 0, w_new = point − lr·g.
      T uphill = T(0);
      for (std::int64_t l = 0; l < L; ++l) {
        T const next = at[l] - lr * g[l];
        uphill = uphill + g[l] * (next - w[l]);
        previous[l] = w[l];
        w[l] = next;
      }
      momentum.advance(uphill > T(0));
    } else {
      for (std::int64_t l = 0; l < L; ++l) { w[l] = at[l] - lr * g[l]; }
    }
    if (g2 < static_cast<T>(o.tolerance)) {
      r.status = fit_status::converged;
      r.iterations = it + 1;
      break;
    }
  }
  // Success means finite weights: the last update can overflow where its gradient did not.
  if (!all_finite(w, L)) { r.status = fit_status::diverged; }
  return r;
}

template <class T>
fit_report run_fit(train_tag, const cpu& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o) {
  check_fit(policy, X, Y, W, o);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  int const threads = cpu_thread_count(policy);
  fit_report report;
  report.formulation = resolve_formulation(o.formulation, K, L);
  report.path = "cpu";
  std::vector<T> A, B;
  bool const gram = report.formulation == gd_formulation::gram;
  if (gram) { cpu_gram(threads, X, Y, A, B); }
  if (o.learning_rate) {
    report.learning_rate = *o.learning_rate;
  } else if (gram) {
    report.learning_rate = automatic_learning_rate<T>(power_iteration(L, [&](const double* v, double* u) {
      for (std::int64_t i = 0; i < L; ++i) {
        double s = 0;
        for (std::int64_t j = 0; j < L; ++j) { s += static_cast<double>(A[i * L + j]) * v[j]; }
        u[i] = s;
      }
    }));
  } else {
    std::vector<double> t(static_cast<std::size_t>(K));
    report.learning_rate = automatic_learning_rate<T>(power_iteration(L, [&](const double* v, double* u) {
      for (std::int64_t k = 0; k < K; ++k) {
        double s = 0;
        for (std::int64_t l = 0; l < L; ++l) { s += static_cast<double>(X(k, l)) * v[l]; }
        t[k] = s;
      }
      for (std::int64_t l = 0; l < L; ++l) { u[l] = 0; }
      for (std::int64_t k = 0; k < K; ++k) {
        for (std::int64_t l = 0; l < L; ++l) { u[l] += static_cast<double>(X(k, l)) * t[k]; }
      }
    }));
  }
  auto const lr = static_cast<T>(report.learning_rate);
  report.outputs.resize(static_cast<std::size_t>(N));
  T* const w_all = W.data_handle();
  // Outputs in parallel only when one iteration over all of them is work enough:
  // a team for a small fit costs more than it saves, and on a busy machine one
  // descheduled thread stalls the whole call (a (9, 9, 9) fit took 24 ms instead of 0.65).
  bool const parallel = N * L * (gram ? L : K) >= cpu_parallel_threshold;
  (void)parallel;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (parallel)
#endif
  for (std::int64_t n = 0; n < N; ++n) {
    T* w = w_all + n * L;
    for (std::int64_t l = 0; l < L; ++l) { w[l] = initial_weight<T>(o.init, o.seed, n, l, L, w[l]); }
    if (gram) {
      report.outputs[n] = cpu_descend<T>(w, L, lr, o, [&](const T* v, T* g) {
        return gram_gradient<T>(A.data(), B.data() + n * L, L, v, g);
      });
    } else {
      std::vector<T> delta(static_cast<std::size_t>(K));
      report.outputs[n] = cpu_descend<T>(w, L, lr, o, [&](const T* v, T* g) {
        return direct_gradient<T>(X, Y, n, v, delta.data(), g);
      });
    }
  }
  return report;
}

template <class T>
void run_predict(train_tag, const cpu& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  check_predict(X, W, Y_hat);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
  int const threads = cpu_thread_count(policy);
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (K * N * L >= cpu_parallel_threshold)
#endif
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      T s = T(0);
      for (std::int64_t l = 0; l < L; ++l) { s = s + X(k, l) * W(n, l); }
      Y_hat(k, n) = s;
    }
  }
}

}  // namespace detail

namespace detail {
template <class M>
struct is_mdspan : std::false_type {};
template <class T, class E, class L, class A>
struct is_mdspan<::cuda::std::mdspan<T, E, L, A>> : std::true_type {};

template <class M>
struct is_not_row_major : std::false_type {};
template <class T, class E, class L, class A>
struct is_not_row_major<::cuda::std::mdspan<T, E, L, A>>
    : std::bool_constant<!std::is_same_v<L, ::cuda::std::layout_right>> {};

/// Whether `Ms` are mdspans and one of them is not row-major (layout_right).
template <class... Ms>
inline constexpr bool any_not_row_major_v = (is_mdspan<Ms>::value && ...) && (is_not_row_major<Ms>::value || ...);

template <class...>
inline constexpr bool always_false_v = false;
}  // namespace detail

/// Trains W (N × L) so that X Wᵀ ≈ Y, one output (row of W) at a time; see the
/// file comment. Returns a host report (synchronizes with `fusekit::cuda`).
template <class Policy, class T>
fit_report fit(const Policy& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& options = {}) {
  return run_fit(detail::train_tag{}, policy, X, Y, W, options);
}

/// Y_hat = X Wᵀ (K × N).
template <class Policy, class T>
void predict(const Policy& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  run_predict(detail::train_tag{}, policy, X, W, Y_hat);
}

/// A strided or column-major view is rejected at compile time: fusekit reads
/// every matrix as row-major and contiguous, and converting such a view to
/// `fusekit::matrix` would read the wrong elements.
template <class Policy, class MX, class MY, class MW,
          std::enable_if_t<detail::any_not_row_major_v<MX, MY, MW>, int> = 0>
fit_report fit(const Policy&, const MX&, const MY&, const MW&, const gd_options& = {}) {
  static_assert(detail::always_false_v<MX>,
                "fusekit::fit reads X, Y and W as row-major contiguous matrices (cuda::std::layout_right); "
                "copy a strided or column-major view into a fusekit::matrix first");
  return {};
}

template <class Policy, class MX, class MW, class MY,
          std::enable_if_t<detail::any_not_row_major_v<MX, MW, MY>, int> = 0>
void predict(const Policy&, const MX&, const MW&, const MY&) {
  static_assert(detail::always_false_v<MX>,
                "fusekit::predict reads X, W and Y_hat as row-major contiguous matrices (cuda::std::layout_right); "
                "copy a strided or column-major view into a fusekit::matrix first");
}

}  // namespace fusekit
