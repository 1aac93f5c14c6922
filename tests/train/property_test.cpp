// SPDX-License-Identifier: Apache-2.0
// Property-based tests of the trainer (fit, predict) on the CPU, with
// RapidCheck: each property states the promise it checks (the bits, the
// bound, the status, or the error and nothing written) against an
// independent reference, on generated shapes (0, 1, tile edges ± 1), data
// (NaN, ±inf, ±0, subnormals, spread units) and options (at and past their
// limits). A failure shrinks to a small case and prints it.
//
// Case count and seed: RC_PARAMS, e.g. RC_PARAMS="seed=2026 max_success=100"
// (ctest's `test` preset: a fixed seed; the `nightly` test preset runs 100×).
#include <fusekit/fusekit.hpp>

#include "common/property_generators.hpp"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using fusekit::test::floats;
using fusekit::test::same_value;

// predict: Y_hat[k, n] = Σ_l X[k, l]·W[n, l], summed in l order from 0,
// the same bits as that loop, for any shape (K = 0 included).
RC_GTEST_PROP(TrainProperties, PredictIsTheSumInLOrder, ()) {
  std::int64_t const K = *rc::gen::inRange<std::int64_t>(0, 40), L = *rc::gen::inRange<std::int64_t>(1, 13),
                     N = *rc::gen::inRange<std::int64_t>(1, 6);
  auto const X = *rc::gen::container<std::vector<float>>(static_cast<std::size_t>(K * L), floats());
  auto const W = *rc::gen::container<std::vector<float>>(static_cast<std::size_t>(N * L), floats());
  std::vector<float> Y(static_cast<std::size_t>(K * N), 7.0f);
  fusekit::predict(fusekit::cpu{}, fusekit::matrix<const float>(X.data(), K, L),
                   fusekit::matrix<const float>(W.data(), N, L), fusekit::matrix<float>(Y.data(), K, N));
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      float s = 0.0f;
      for (std::int64_t l = 0; l < L; ++l) { s = s + X[k * L + l] * W[n * L + l]; }
      RC_ASSERT(same_value(Y[k * N + n], s));
    }
  }
}

/// Options drawn at and past every limit (some valid, many not).
fusekit::gd_options any_options() {
  fusekit::gd_options o;
  double const reals[] = {0.0, -0.0, 1e-300, 1e-163, 1e-150, 1e-40, 1e-13,   1e-8,
                          0.5, 1.0,  2.0,    -1e-3,  1e39,   NAN,   INFINITY};
  std::vector<double> const r(std::begin(reals), std::end(reals));
  if (*rc::gen::arbitrary<bool>()) { o.learning_rate = *rc::gen::elementOf(r); }
  if (*rc::gen::arbitrary<bool>()) { o.tolerance = *rc::gen::elementOf(r); }
  o.relative_tolerance = *rc::gen::weightedOneOf<double>({{2, rc::gen::just(0.0)}, {3, rc::gen::elementOf(r)}});
  o.max_iterations = *rc::gen::element<std::int64_t>(-1, 0, 1, 2, 50);
  o.stall_window = *rc::gen::element<std::int64_t>(0, 1, 5, 1000);
  o.progress_every = *rc::gen::element<std::int64_t>(0, 1, 3);
  o.refinement_steps = *rc::gen::element<std::int64_t>(-1, 0, 1, 8, 9);
  o.method = static_cast<fusekit::gd_method>(*rc::gen::inRange(0, 4));
  o.preconditioner = static_cast<fusekit::gd_preconditioner>(*rc::gen::inRange(0, 4));
  o.formulation = static_cast<fusekit::gd_formulation>(*rc::gen::inRange(0, 4));
  o.init = static_cast<fusekit::gd_init>(*rc::gen::inRange(0, 4));
  o.ridge = *rc::gen::element(0.0, 0.5, -1.0, NAN, INFINITY);
  o.fit_intercept = *rc::gen::arbitrary<bool>();
  return o;
}

/// The documented limits of gd_options (train_types.hpp), for a float fit.
bool valid_for_float(const fusekit::gd_options& o) {
  auto const positive_float = [](double v) {
    return std::isfinite(v) && v > 0 && std::isfinite(static_cast<float>(v)) && static_cast<float>(v) > 0;
  };
  bool const relative = o.relative_tolerance > 0;
  if (o.learning_rate && !positive_float(*o.learning_rate)) { return false; }
  if (!(std::isfinite(o.relative_tolerance) && o.relative_tolerance >= 0 && o.relative_tolerance < 1)) { return false; }
  if (relative && o.relative_tolerance < fusekit::gd_options::min_relative_tolerance) { return false; }
  if (o.tolerance && !positive_float(*o.tolerance) && !(relative && *o.tolerance == 0)) { return false; }
  if (o.max_iterations < 1 || o.stall_window < 1 || o.progress_every < 1) { return false; }
  if (o.refinement_steps < 0 || o.refinement_steps > fusekit::gd_options::max_refinement_steps) { return false; }
  if (static_cast<int>(o.method) > 2 || static_cast<int>(o.preconditioner) > 2 || static_cast<int>(o.formulation) > 2 ||
      static_cast<int>(o.init) > 2) {
    return false;
  }
  if (o.preconditioner == fusekit::gd_preconditioner::cholesky && o.method != fusekit::gd_method::conjugate_gradient) {
    return false;
  }
  return std::isfinite(o.ridge) && o.ridge >= 0;
}

// fit's options: rejected exactly when outside their documented limits, with
// an invalid_argument and W's bytes as they were; accepted ones end within
// max_iterations, and `converged` comes with finite weights. With an
// intercept the intercepts are written, and only then.
RC_GTEST_PROP(TrainProperties, FitOptionsAreRejectedExactlyOutsideTheirLimits, ()) {
  fusekit::gd_options const o = any_options();
  auto const p = fusekit::test::make_problem<float>(20, 3, 2, *rc::gen::arbitrary<std::uint32_t>(), true, 0.1);
  std::vector<float> W(6, 0.25f), b(2, 9.0f);
  std::vector<float> const before = W;
  bool rejected = false;
  fusekit::fit_report r;
  try {
    r = fusekit::fit(fusekit::cpu{}, fusekit::matrix<const float>(p.X.data(), 20, 3),
                     fusekit::matrix<const float>(p.Y.data(), 20, 2), fusekit::matrix<float>(W.data(), 2, 3), o,
                     fusekit::fit_extras<float>{{}, b});
  } catch (const fusekit::invalid_argument&) { rejected = true; }
  RC_ASSERT(rejected == !valid_for_float(o));
  if (rejected) {
    RC_ASSERT(std::memcmp(W.data(), before.data(), W.size() * sizeof(float)) == 0);
    RC_ASSERT(b == std::vector<float>(2, 9.0f));
    return;
  }
  for (std::size_t n = 0; n < r.outputs.size(); ++n) {
    RC_ASSERT(r.outputs[n].iterations <= o.max_iterations);
    if (r.outputs[n].status == fusekit::fit_status::converged) {
      RC_ASSERT(std::all_of(W.begin() + 3 * n, W.begin() + 3 * n + 3, [](float w) { return std::isfinite(w); }));
    }
  }
  if (!o.fit_intercept) { RC_ASSERT(b == std::vector<float>(2, 0.0f)); }
}

// A fit that does not converge is never worse than its start or W = 0, by
// the residual ‖y − Xw‖² (the CPU keeps the best iterate), whatever the
// method, preconditioner, formulation, start, units and budget.
RC_GTEST_PROP(TrainProperties, AnUnconvergedFitIsNeverWorseThanItsStartOrZero, ()) {
  std::int64_t const L = *rc::gen::inRange<std::int64_t>(1, 7), K = *rc::gen::inRange<std::int64_t>(1, 30);
  auto p = fusekit::test::make_problem<double>(K, L, 1, *rc::gen::arbitrary<std::uint32_t>(), false, 0.5);
  for (std::int64_t l = 0; l < L; ++l) {
    int const e = *rc::gen::inRange(-12, 13);
    for (std::int64_t k = 0; k < K; ++k) { p.X[k * L + l] = std::ldexp(p.X[k * L + l], e); }
  }
  fusekit::gd_options o;
  o.method = static_cast<fusekit::gd_method>(*rc::gen::inRange(0, 3));
  o.preconditioner = static_cast<fusekit::gd_preconditioner>(*rc::gen::inRange(0, 2));
  o.formulation = static_cast<fusekit::gd_formulation>(*rc::gen::inRange(0, 3));
  o.init = *rc::gen::arbitrary<bool>() ? fusekit::gd_init::warm_start : fusekit::gd_init::zeros;
  o.max_iterations = *rc::gen::inRange<std::int64_t>(1, 30);
  if (*rc::gen::arbitrary<bool>()) { o.learning_rate = std::ldexp(1.0, *rc::gen::inRange(-30, 4)); }
  std::vector<double> W(static_cast<std::size_t>(L));
  for (auto& w : W) { w = static_cast<double>(*rc::gen::inRange(-100, 101)) / 10.0; }
  std::vector<double> const start = o.init == fusekit::gd_init::warm_start ? W : std::vector<double>(W.size(), 0.0);
  auto const r =
      fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(p.X.data(), K, L),
                   fusekit::matrix<const double>(p.Y.data(), K, 1), fusekit::matrix<double>(W.data(), 1, L), o);
  RC_PRE(r.outputs[0].status != fusekit::fit_status::converged);
  auto const residual2 = [&](const std::vector<double>& w) {
    long double s = 0;
    for (std::int64_t k = 0; k < K; ++k) {
      long double e = p.Y[k];
      for (std::int64_t l = 0; l < L; ++l) { e -= static_cast<long double>(p.X[k * L + l]) * w[l]; }
      s += e * e;
    }
    return s;
  };
  long double const zero = residual2(std::vector<double>(W.size(), 0.0));
  long double const slack = 1e-12L * (zero + residual2(start));
  RC_ASSERT(residual2(W) <= zero + slack);
  RC_ASSERT(residual2(W) <= residual2(start) + slack);
}

// ---- "converged" means a right answer (docs/trainer.md, "W on every status") ----

/// A drawn problem as users bring it: Gaussian columns in units 2^e_l
/// (ordinary, tiny, subnormal, huge), targets in units 2^f, weights in
/// units 2^g (subnormal to huge, some rows 0), ridge and an intercept.
struct drawn_fit {
  fusekit::test::problem<double> p;
  std::vector<double> s;  ///< empty: unweighted
  fusekit::gd_options o;
};

drawn_fit draw_fit() {
  std::int64_t const L = *rc::gen::inRange<std::int64_t>(1, 6), K = *rc::gen::inRange<std::int64_t>(1, 25);
  std::int64_t const N = *rc::gen::inRange<std::int64_t>(1, 3);
  drawn_fit d{fusekit::test::make_problem<double>(K, L, N, *rc::gen::arbitrary<std::uint32_t>(), false, 0.3), {}, {}};
  for (std::int64_t l = 0; l < L; ++l) {
    int const e = *rc::gen::element(0, 0, 0, -7, 9, -520, -1040, -1060, 600, 1000);
    for (std::int64_t k = 0; k < K; ++k) { d.p.X[k * L + l] = std::ldexp(d.p.X[k * L + l], e); }
  }
  int const f = *rc::gen::element(0, 0, -540, -1000, 700);
  for (auto& y : d.p.Y) { y = std::ldexp(y, f); }
  if (*rc::gen::arbitrary<bool>()) {
    int const g = *rc::gen::element(0, -1040, -1070, -600, 900, 1015);
    std::mt19937 gen(static_cast<std::uint32_t>(K * 7 + L));
    std::uniform_real_distribution<double> spread(0.25, 4.0);
    d.s.resize(static_cast<std::size_t>(K));
    for (auto& v : d.s) { v = gen() % 5 == 0 ? 0.0 : std::ldexp(spread(gen), g); }
    d.s[0] = std::ldexp(1.0, g);  // one positive weight at least
  }
  fusekit::gd_options& o = d.o;
  o = fusekit::gd_options::recommended();
  o.method = static_cast<fusekit::gd_method>(*rc::gen::element(2, 2, 2, 0, 1));
  int const pc = *rc::gen::inRange(0, o.method == fusekit::gd_method::conjugate_gradient ? 3 : 2);
  o.preconditioner = static_cast<fusekit::gd_preconditioner>(pc);
  o.formulation = static_cast<fusekit::gd_formulation>(*rc::gen::inRange(0, 3));
  o.max_iterations = 3000;
  o.ridge = *rc::gen::element(0.0, 0.0, 1e-3, 2.0);
  o.fit_intercept = *rc::gen::arbitrary<bool>();
  return d;
}

/// The user's objective Σ s_k ‖y_k − W x_k − b‖² + λ‖W‖² of output n, and
/// its gradient in W, in long double (whose range holds every drawn unit).
struct objective_at {
  long double value = 0;
  std::vector<long double> gradient;
};

objective_at objective(const drawn_fit& d, std::int64_t n, const double* w, double b) {
  auto const& p = d.p;
  objective_at out;
  out.gradient.assign(static_cast<std::size_t>(p.L), 0.0L);
  for (std::int64_t k = 0; k < p.K; ++k) {
    long double const s = d.s.empty() ? 1.0L : d.s[k];
    long double r = static_cast<long double>(p.Y[k * p.N + n]) - b;
    for (std::int64_t l = 0; l < p.L; ++l) { r -= static_cast<long double>(p.X[k * p.L + l]) * w[l]; }
    out.value += s * r * r;
    for (std::int64_t l = 0; l < p.L; ++l) { out.gradient[l] -= s * r * p.X[k * p.L + l]; }
  }
  for (std::int64_t l = 0; l < p.L; ++l) {
    out.value += d.o.ridge * static_cast<long double>(w[l]) * w[l];
    out.gradient[l] += d.o.ridge * static_cast<long double>(w[l]);
  }
  return out;
}

fusekit::fit_report run(const drawn_fit& d, const std::vector<double>& s, double ridge, std::vector<double>& W,
                        std::vector<double>& b) {
  auto const& p = d.p;
  W.assign(static_cast<std::size_t>(p.N * p.L), 0.0);
  b.assign(static_cast<std::size_t>(p.N), 0.0);
  fusekit::gd_options o = d.o;
  o.ridge = ridge;
  return fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(p.X.data(), p.K, p.L),
                      fusekit::matrix<const double>(p.Y.data(), p.K, p.N), fusekit::matrix<double>(W.data(), p.N, p.L),
                      o, fusekit::fit_extras<double>{s, b});
}

// Every output that says `converged`, for every method and preconditioner,
// with and without ridge, an intercept and weights, on columns, targets and
// weights from subnormal to huge units:
// - W and b are finite;
// - the objective is no worse than at W = 0 (with b its best there, ȳ);
// - the relative rule holds on the true gradient in the user's units, in
//   the metric D = diag of the weighted, centred Gram matrix (plus λ), to
//   the rounding of the fit's arithmetic (1e-9 of ‖Xᵀy‖_D at most);
// - a common rescaling of the weights and the ridge by a power of two
//   (down to subnormal, up to huge) gives the same bits and statuses.
RC_GTEST_PROP(TrainProperties, ConvergedMeansARightAnswer, ()) {
  drawn_fit const d = draw_fit();
  auto const& p = d.p;
  std::vector<double> W, b;
  fusekit::fit_report const r = run(d, d.s, d.o.ridge, W, b);
  for (std::int64_t n = 0; n < p.N; ++n) {
    RC_ASSERT(r.outputs[n].iterations <= d.o.max_iterations);
    if (r.outputs[n].status != fusekit::fit_status::converged) { continue; }
    const double* const w = W.data() + n * p.L;
    RC_ASSERT(std::isfinite(b[n]));
    for (std::int64_t l = 0; l < p.L; ++l) { RC_ASSERT(std::isfinite(w[l])); }
    // The weighted means: b's best at W = 0, and the centring of D.
    long double total = 0, y_mean = 0;
    std::vector<long double> x_mean(static_cast<std::size_t>(p.L), 0.0L);
    for (std::int64_t k = 0; k < p.K && d.o.fit_intercept; ++k) {
      long double const s = d.s.empty() ? 1.0L : d.s[k];
      total += s;
      y_mean += s * p.Y[k * p.N + n];
      for (std::int64_t l = 0; l < p.L; ++l) { x_mean[l] += s * p.X[k * p.L + l]; }
    }
    if (total > 0) {
      y_mean /= total;
      for (auto& m : x_mean) { m /= total; }
    }
    std::vector<double> const zero(static_cast<std::size_t>(p.L), 0.0);
    long double const at_zero = objective(d, n, zero.data(), static_cast<double>(y_mean)).value;
    objective_at const here = objective(d, n, w, b[n]);
    RC_ASSERT(here.value <= at_zero * (1 + 1e-9L));
    // ‖g‖²_D⁻¹, ‖Xᵀy‖²_D⁻¹ (X and y weighted and centred), and the part of
    // g that rounding W and b to double alone can make (half an ulp each,
    // at least half the smallest subnormal: an answer below double's range
    // rounds to 0 or a subnormal, the nearest double).
    auto const half_ulp = [](double v) {
      return std::max(std::fabs(static_cast<long double>(v)) * 0x1p-53L, static_cast<long double>(0x1p-1075L));
    };
    long double g2 = 0, ref2 = 0, round2 = 0;
    for (std::int64_t l = 0; l < p.L; ++l) {
      long double dl = d.o.ridge, xy = 0, rounding = std::fabs(x_mean[l]) * total * half_ulp(b[n]);
      for (std::int64_t k = 0; k < p.K; ++k) {
        long double const s = d.s.empty() ? 1.0L : d.s[k];
        long double const x = p.X[k * p.L + l] - x_mean[l];
        dl += s * x * x;
        xy += s * x * (static_cast<long double>(p.Y[k * p.N + n]) - y_mean);
        for (std::int64_t j = 0; j < p.L; ++j) {
          rounding += s * std::fabs(x * (p.X[k * p.L + j] - x_mean[j])) * half_ulp(w[j]);
        }
      }
      rounding += d.o.ridge * half_ulp(w[l]);
      if (dl > 0) {
        g2 += here.gradient[l] * here.gradient[l] / dl;
        ref2 += xy * xy / dl;
        round2 += rounding * rounding / dl;
      }
    }
    RC_ASSERT(sqrtl(g2) <= 1e-9L * sqrtl(ref2) + 2 * sqrtl(round2));
  }
  if (d.s.empty()) { return; }
  int const h = *rc::gen::element(-1074, -600, -200, 200, 600);
  std::vector<double> scaled(d.s);
  bool exact = std::isfinite(std::ldexp(d.o.ridge, h)) && std::ldexp(std::ldexp(d.o.ridge, h), -h) == d.o.ridge;
  for (auto& v : scaled) {
    v = std::ldexp(v, h);
    exact = exact && std::isfinite(v) && std::ldexp(v, -h) == std::ldexp(std::ldexp(v, -h), 0) &&
            std::ldexp(v, -h) == d.s[static_cast<std::size_t>(&v - scaled.data())];
  }
  RC_PRE(exact);
  std::vector<double> W2, b2;
  fusekit::fit_report const r2 = run(d, scaled, std::ldexp(d.o.ridge, h), W2, b2);
  RC_ASSERT(std::memcmp(W.data(), W2.data(), W.size() * sizeof(double)) == 0);
  RC_ASSERT(std::memcmp(b.data(), b2.data(), b.size() * sizeof(double)) == 0);
  for (std::int64_t n = 0; n < p.N; ++n) { RC_ASSERT(r.outputs[n].status == r2.outputs[n].status); }
}

}  // namespace
