// SPDX-License-Identifier: Apache-2.0
// The trainer on the data users bring (docs/trainer.md, "Every kind of
// data"): what the tolerances mean, and what a fit returns when it cannot
// converge. Each expectation is the documented contract, checked against an
// independent reference (Householder QR in long double, closed forms).
#include <fusekit/fusekit.hpp>

#include "common/test_support.hpp"
#include "common/data_kinds.hpp"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using fusekit::fit_status;
using fusekit::gd_formulation;
using fusekit::gd_init;
using fusekit::gd_method;
using fusekit::gd_options;
using fusekit::gd_preconditioner;
using fusekit::stop_rule;
using fusekit::test::cpu_fit;
using fusekit::test::decaying_problem;
using fusekit::test::make_problem;
using fusekit::test::poly_problem;
using fusekit::test::problem;
using fusekit::test::relative_gradient;
using fusekit::test::residual2;
using fusekit::test::vandermonde_problem;
using fusekit::test::weighted_ridge_reference;

// ---- The documented defaults and the report ----

// gd_options::recommended() is what train_types.hpp says it is.
TEST(Contract, RecommendedIsWhatItSays) {
  gd_options const o = gd_options::recommended();
  EXPECT_EQ(o.method, gd_method::conjugate_gradient);
  EXPECT_EQ(o.preconditioner, gd_preconditioner::cholesky);
  EXPECT_EQ(o.relative_tolerance, 1e-13);
  EXPECT_FALSE(o.tolerance.has_value());
  EXPECT_EQ(o.refinement_steps, 2);
  EXPECT_EQ(o.max_iterations, 100000);
  EXPECT_EQ(o.ridge, 0.0);
  EXPECT_FALSE(o.fit_intercept);
}

// all_converged: every output converged; any other status, on any output, is not.
TEST(Contract, AllConvergedMeansEveryOutput) {
  for (auto other : {fit_status::max_iterations, fit_status::diverged, fit_status::stalled}) {
    fusekit::fit_report r;
    r.outputs.resize(3);
    for (auto& out : r.outputs) { out.status = fit_status::converged; }
    EXPECT_TRUE(r.all_converged());
    r.outputs[1].status = other;
    EXPECT_FALSE(r.all_converged()) << fusekit::to_string(other);
  }
}

// A sample weight below 0 is rejected, named with its index, W and the
// intercepts untouched.
TEST(Contract, ANegativeSampleWeightIsRejected) {
  auto const p = make_problem<double>(20, 3, 1, 80, false, 0.1);
  std::vector<double> s(20, 1.0), W(3, 0.5), b(1, 7.0);
  s[13] = -0.25;
  gd_options o = gd_options::recommended();
  o.fit_intercept = true;
  try {
    fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(p.X.data(), 20, 3),
                 fusekit::matrix<const double>(p.Y.data(), 20, 1), fusekit::matrix<double>(W.data(), 1, 3), o,
                 fusekit::fit_extras<double>{s, b});
    ADD_FAILURE() << "accepted";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sample_weight[13] is -0.25"), std::string::npos) << e.what();
  }
  EXPECT_EQ(W, std::vector<double>(3, 0.5));
  EXPECT_EQ(b, std::vector<double>(1, 7.0));
}

// A refinement's correction is taken only when w + d is finite
// (detail/train/refinement.hpp, add_correction).
TEST(Contract, ACorrectionThatOverflowsIsNotTaken) {
  fusekit::output_report fit{10, 1.0, fit_status::converged, stop_rule::relative_tolerance};
  fusekit::output_report const correction{3, 0.5, fit_status::converged, stop_rule::relative_tolerance};
  std::vector<double> w = {1.0, std::numeric_limits<double>::max()};
  std::vector<double> const d = {1e-3, std::numeric_limits<double>::max()};
  EXPECT_FALSE(fusekit::detail::add_correction(w.data(), d.data(), 2, fit, correction, 4.0));
  EXPECT_EQ(w[0], 1.0);
  EXPECT_EQ(fit.iterations, 10);
  std::vector<double> const small = {1e-3, 0.0};
  EXPECT_TRUE(fusekit::detail::add_correction(w.data(), small.data(), 2, fit, correction, 4.0));
  EXPECT_EQ(w[0], 1.001);
  EXPECT_EQ(fit.iterations, 13);
}

// ---- Tolerances (gd_options::tolerance, relative_tolerance) ----

// Features in 10^-7 units: gradᵀgrad at w = 0 is far below 1e-8 already.
problem<double> tiny_unit_problem() {
  auto p = make_problem<double>(200, 6, 2, 40, false, 0.1);
  for (auto& x : p.X) { x *= 1e-7; }
  return p;
}

TEST(Tolerances, ARelativeToleranceSetAloneIsTheOnlyRule) {
  auto const p = tiny_unit_problem();
  for (auto method : {gd_method::conjugate_gradient, gd_method::nesterov}) {
    gd_options o;  // tolerance left unset
    o.method = method;
    o.preconditioner = gd_preconditioner::jacobi;
    o.relative_tolerance = 1e-6;
    std::vector<double> W;
    auto const r = cpu_fit(p, W, o);
    for (std::int64_t n = 0; n < p.N; ++n) {
      EXPECT_EQ(r.outputs[n].status, fit_status::converged) << fusekit::to_string(method);
      EXPECT_EQ(r.outputs[n].rule, stop_rule::relative_tolerance) << fusekit::to_string(method);
      EXPECT_GT(r.outputs[n].iterations, 0) << fusekit::to_string(method);
      // the rule met, on the true gradient (far above its rounding)
      EXPECT_LE(relative_gradient(p, W, n), 1.01L * o.relative_tolerance) << fusekit::to_string(method);
    }
  }
}

TEST(Tolerances, BothSetEitherStopsAndNeitherSetIsTheAbsoluteDefault) {
  auto const p = tiny_unit_problem();
  gd_options o;
  o.method = gd_method::conjugate_gradient;
  o.relative_tolerance = 1e-6;
  o.tolerance = 1e-8;  // met at w = 0 on these units
  std::vector<double> W;
  auto r = cpu_fit(p, W, o);
  for (const auto& out : r.outputs) {
    EXPECT_EQ(out.rule, stop_rule::tolerance);
    EXPECT_EQ(out.iterations, 0);
  }
  gd_options d;  // neither: gradᵀgrad < gd_options::default_tolerance
  d.method = gd_method::conjugate_gradient;
  r = cpu_fit(p, W, d);
  for (const auto& out : r.outputs) {
    EXPECT_EQ(out.rule, stop_rule::tolerance);
    EXPECT_LT(out.grad_norm2, gd_options::default_tolerance);
  }
  EXPECT_FALSE(gd_options::recommended().tolerance.has_value());
}

TEST(Tolerances, ARelativeToleranceWhoseSquareUnderflowsIsRejected) {
  // The identity: CG with Jacobi solves it exactly in one update, where a
  // relative rule that compares against 0 never holds.
  problem<double> p{4, 4, 1, std::vector<double>(16, 0.0), {1.0, 2.0, 3.0, 4.0}, {}};
  for (int i = 0; i < 4; ++i) { p.X[i * 4 + i] = 1.0; }
  gd_options o = gd_options::recommended();
  o.relative_tolerance = gd_options::min_relative_tolerance;
  std::vector<double> W;
  auto const r = cpu_fit(p, W, o);
  ASSERT_EQ(r.outputs[0].status, fit_status::converged) << fusekit::to_string(r.outputs[0].rule);
  for (int i = 0; i < 4; ++i) { EXPECT_EQ(W[i], p.Y[i]); }
  for (double rtol : {std::nextafter(gd_options::min_relative_tolerance, 0.0), 1e-163, 1e-300}) {
    o.relative_tolerance = rtol;
    try {
      cpu_fit(p, W, o);
      ADD_FAILURE() << rtol << " accepted";
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("relative_tolerance"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("1e-150"), std::string::npos) << e.what();
    }
  }
}

// ---- Ill-conditioned, full rank: recommended() reaches 1e-8 in double ----

struct kind {
  const char* name;
  problem<double> p;
};

std::vector<kind> ill_conditioned_kinds() {
  // κ of the columns scaled to unit norm: about 10^4 .. 2·10^6
  return {{"polynomial degree 5", poly_problem<double>(2000, 5, 1, 0.1)},
          {"polynomial degree 7", poly_problem<double>(2000, 7, 2, 0.1)},
          {"vandermonde 10", vandermonde_problem<double>(1000, 10, 3, 0.01)},
          {"decaying 20 x 10^-6", decaying_problem<double>(500, 20, 6.0, 4, 1e-3)},
          {"decaying 60 x 10^-6", decaying_problem<double>(600, 60, 6.0, 5, 1e-3)}};
}

TEST(IllConditioned, RecommendedReachesTheTargetInAFewUpdatesWhateverKappa) {
  for (const auto& k : ill_conditioned_kinds()) {
    auto const W_star = fusekit::test::least_squares_reference(k.p);
    std::vector<double> W;
    auto const r = cpu_fit(k.p, W, gd_options::recommended());
    EXPECT_TRUE(r.all_converged()) << k.name << ": " << r.summary();
    EXPECT_EQ(r.preconditioner, gd_preconditioner::cholesky) << k.name;
    EXPECT_LE(fusekit::test::relative_error(W, W_star), 1e-8) << k.name;
    EXPECT_LE(r.most_iterations(), 30) << k.name;  // a few updates per solve, not O(κ) or O(L)
  }
}

TEST(IllConditioned, FloatDataReachFloatAccuracy) {
  std::vector<problem<float>> const problems = {poly_problem<float>(2000, 5, 1, 0.1),
                                                vandermonde_problem<float>(1000, 8, 3, 0.01),
                                                decaying_problem<float>(500, 20, 5.0, 4, 1e-3)};
  for (const auto& p : problems) {
    auto const W_star = fusekit::test::least_squares_reference(p);  // of the float data, as given
    std::vector<float> W;
    auto const r = cpu_fit(p, W, gd_options::recommended());
    EXPECT_TRUE(r.all_converged()) << p.L << ": " << r.summary();
    EXPECT_LE(fusekit::test::relative_error(W, W_star), 1e-5) << p.L;
  }
}

// Past what A = XᵀX can hold (κ(X) near 10^8: A singular to working
// precision), an automatic fit leaves A for CGLS, preconditioned by the
// same factor, which works on κ(X) rather than κ².
TEST(IllConditioned, BeyondWhatTheGramMatrixHoldsCglsTakesOver) {
  for (const auto& p :
       {vandermonde_problem<double>(1000, 12, 3, 0.01), decaying_problem<double>(500, 20, 7.0, 4, 1e-3)}) {
    auto const W_star = fusekit::test::least_squares_reference(p);
    std::vector<double> W;
    auto const r = cpu_fit(p, W, gd_options::recommended());
    EXPECT_EQ(r.formulation, gd_formulation::direct) << p.L;
    EXPECT_EQ(r.preconditioner, gd_preconditioner::cholesky) << p.L;
#ifndef __FAST_MATH__
    // IEEE arithmetic only: under -ffast-math (-O3) one output of the
    // Vandermonde design ended `stalled` after 15 updates with W within
    // 2.2e-9 of the solution (docs/trainer.md says so): an honest status.
    EXPECT_TRUE(r.all_converged()) << r.summary();
#endif
    EXPECT_LE(fusekit::test::relative_error(W, W_star), 1e-6) << p.L;  // κ·1e-13, κ near 10^7
    EXPECT_LE(r.most_iterations(), 30) << p.L;
    gd_options gram = gd_options::recommended();  // asked for: the Gram formulation it is
    gram.formulation = gd_formulation::gram;
    EXPECT_EQ(cpu_fit(p, W, gram).formulation, gd_formulation::gram);
  }
}

// ---- Ridge, an intercept and sample weights (scikit-learn's meaning) ----

long double max_relative(const std::vector<double>& got, const std::vector<long double>& want) {
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num = std::max(num, fabsl(got[i] - want[i]));
    den = std::max(den, fabsl(want[i]));
  }
  return den > 0 ? num / den : num;
}

// Property: on raw-unit data (the offsets and correlated pairs of tabular
// data), K ≥ L and K < L (with ridge), any weights (zeros included), λ and
// intercept, the fit matches the long-double reference to 1e-10.
TEST(RidgeInterceptWeights, MatchTheLongDoubleReference) {
  std::mt19937 gen(4040);
  for (int trial = 0; trial < 24; ++trial) {
    auto const [p, s, lambda, intercept] = fusekit::test::make_ridge_trial(gen, trial);
    std::int64_t const K = p.K, L = p.L;
    gd_options o = gd_options::recommended();
    o.ridge = lambda;
    o.fit_intercept = intercept;
    std::vector<double> W(static_cast<std::size_t>(2 * L)), b(2, 7.0);
    auto const r = fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(p.X.data(), K, L),
                                fusekit::matrix<const double>(p.Y.data(), K, 2),
                                fusekit::matrix<double>(W.data(), 2, L), o, fusekit::fit_extras<double>{s, b});
    EXPECT_TRUE(r.all_converged()) << "trial " << trial << ": " << r.summary();
    std::vector<long double> W_ref, b_ref;
    weighted_ridge_reference(p, s, lambda, intercept, W_ref, b_ref);
    EXPECT_LE(max_relative(W, W_ref), 1e-10) << "trial " << trial << " K " << K << " L " << L << " λ " << lambda;
    EXPECT_LE(max_relative(b, b_ref), 1e-10) << "trial " << trial;
    if (!intercept) { EXPECT_EQ(b, std::vector<double>(2, 0.0)); }
  }
}

// ---- Rank-deficient data: which solution each preconditioner returns ----

// K < L in mixed units: the minimum-norm solution is Xᵀ(XXᵀ)⁻¹y, by
// Gauss-Jordan in long double on the K × K system.
std::vector<long double> minimum_norm_wide(const problem<double>& p) {
  std::int64_t const K = p.K, L = p.L, N = p.N;
  std::vector<long double> M(static_cast<std::size_t>(K * (K + N)));
  for (std::int64_t i = 0; i < K; ++i) {
    for (std::int64_t j = 0; j < K; ++j) {
      long double s = 0;
      for (std::int64_t l = 0; l < L; ++l) { s += static_cast<long double>(p.X[i * L + l]) * p.X[j * L + l]; }
      M[i * (K + N) + j] = s;
    }
    for (std::int64_t n = 0; n < N; ++n) { M[i * (K + N) + K + n] = p.Y[i * N + n]; }
  }
  for (std::int64_t c = 0; c < K; ++c) {
    long double const d = M[c * (K + N) + c];
    for (std::int64_t j = 0; j < K + N; ++j) { M[c * (K + N) + j] /= d; }
    for (std::int64_t r = 0; r < K; ++r) {
      if (r == c) { continue; }
      long double const f = M[r * (K + N) + c];
      for (std::int64_t j = 0; j < K + N; ++j) { M[r * (K + N) + j] -= f * M[c * (K + N) + j]; }
    }
  }
  std::vector<long double> W(static_cast<std::size_t>(N * L), 0.0L);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t l = 0; l < L; ++l) {
      for (std::int64_t k = 0; k < K; ++k) {
        W[n * L + l] += static_cast<long double>(p.X[k * L + l]) * M[k * (K + N) + K + n];
      }
    }
  }
  return W;
}

TEST(RankDeficient, NoPreconditionerFromZeroGivesTheMinimumNormSolution) {
  gd_options o = gd_options::recommended();
  o.preconditioner = gd_preconditioner::none;  // the documented way to lstsq's answer
  // K < L, columns in units 1 .. 100
  auto wide = make_problem<double>(6, 10, 2, 51, false, 0.0);
  for (std::int64_t k = 0; k < 6; ++k) {
    for (std::int64_t l = 0; l < 10; ++l) { wide.X[k * 10 + l] *= std::pow(10.0, static_cast<double>(l % 3)); }
  }
  std::vector<double> W;
  auto r = cpu_fit(wide, W, o);
  EXPECT_TRUE(r.all_converged()) << r.summary();
  EXPECT_LE(max_relative(W, minimum_norm_wide(wide)), 1e-9);
  // a column copied in other units (×1000): w1 + 1000 w2 = β, split with the least norm
  auto dep = make_problem<double>(200, 3, 1, 52, false, 0.0);
  for (std::int64_t k = 0; k < 200; ++k) { dep.X[k * 3 + 1] = 1000.0 * dep.X[k * 3]; }
  problem<double> reduced{200, 2, 1, std::vector<double>(400), dep.Y, {}};
  for (std::int64_t k = 0; k < 200; ++k) {
    reduced.X[k * 2] = dep.X[k * 3];
    reduced.X[k * 2 + 1] = dep.X[k * 3 + 2];
  }
  auto const beta = fusekit::test::least_squares_reference(reduced);
  std::vector<long double> const want = {beta[0] / (1 + 1e6L), 1000 * beta[0] / (1 + 1e6L), beta[1]};
  // And in extreme units (X·2^-530, whose squares underflow, or X·2^600):
  // one power of two for every column keeps the minimum-norm split, W/c.
  for (int e : {0, -530, 600}) {
    problem<double> scaled = dep;
    for (auto& x : scaled.X) { x = std::ldexp(x, e); }
    std::vector<long double> want_scaled(want);
    for (auto& v : want_scaled) { v = ldexpl(v, -e); }
    for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
      o.formulation = f;
      r = cpu_fit(scaled, W, o);
      EXPECT_TRUE(r.all_converged()) << r.summary();
      EXPECT_LE(max_relative(W, want_scaled), 1e-9) << fusekit::to_string(f) << " 2^" << e;
    }
  }
}

// Every preconditioner reaches a least-squares solution (the residual
// optimal) on dependent columns; Jacobi's is the minimum of ‖D^½ w‖.
TEST(RankDeficient, EveryPreconditionerReachesTheLeastSquaresResidual) {
  auto dep = make_problem<double>(200, 4, 1, 53, false, 0.3);
  for (std::int64_t k = 0; k < 200; ++k) { dep.X[k * 4 + 3] = -0.001 * dep.X[k * 4] + 2.0 * dep.X[k * 4 + 1]; }
  problem<double> reduced{200, 3, 1, std::vector<double>(600), dep.Y, {}};
  for (std::int64_t k = 0; k < 200; ++k) {
    for (std::int64_t l = 0; l < 3; ++l) { reduced.X[k * 3 + l] = dep.X[k * 4 + l]; }
  }
  auto const beta = fusekit::test::least_squares_reference(reduced);
  std::vector<double> best(4, 0.0);
  for (std::int64_t l = 0; l < 3; ++l) { best[l] = static_cast<double>(beta[l]); }
  long double const optimum = residual2(dep, best, 0);
  for (auto pre : {gd_preconditioner::none, gd_preconditioner::jacobi, gd_preconditioner::cholesky}) {
    gd_options o = gd_options::recommended();
    o.preconditioner = pre;
    std::vector<double> W;
    auto const r = cpu_fit(dep, W, o);
    EXPECT_NE(r.outputs[0].status, fit_status::diverged) << fusekit::to_string(pre);
    EXPECT_LE(residual2(dep, W, 0), optimum * (1 + 1e-10L)) << fusekit::to_string(pre);
  }
}

// Columns dependent to 1e-12 (A' singular to working precision): the
// factor's pivot falls below its documented floor (pivot_floor·L·u), the
// factor is shifted, and CG ends in a few updates, at the least-squares
// residual (cholesky.hpp); not the thousand updates of a factor taken at
// face value.
TEST(RankDeficient, ColumnsDependentToRoundingEndInAFewCholeskyUpdates) {
  for (double dependence : {1e-10, 1e-11, 1e-12}) {
    for (std::int64_t L : {5, 12, 30}) {
      for (std::uint32_t seed = 1; seed <= 3; ++seed) {
        auto p = make_problem<double>(300, L, 1, seed, false, 0.1);
        std::mt19937 gen(seed);
        std::normal_distribution<double> normal;
        for (std::int64_t k = 0; k < 300; ++k) {
          p.X[k * L + L - 1] = 3 * p.X[k * L + 1] - p.X[k * L + 2] + dependence * normal(gen);
        }
        problem<double> reduced{300, L - 1, 1, std::vector<double>(static_cast<std::size_t>(300 * (L - 1))), p.Y, {}};
        for (std::int64_t k = 0; k < 300; ++k) {
          for (std::int64_t l = 0; l < L - 1; ++l) { reduced.X[k * (L - 1) + l] = p.X[k * L + l]; }
        }
        auto const beta = fusekit::test::least_squares_reference(reduced);
        std::vector<double> best(static_cast<std::size_t>(L), 0.0);
        for (std::int64_t l = 0; l < L - 1; ++l) { best[l] = static_cast<double>(beta[l]); }
        gd_options o = gd_options::recommended();
        o.formulation = gd_formulation::gram;
        std::vector<double> W;
        auto const r = cpu_fit(p, W, o);
        char dep[16];
        std::snprintf(dep, sizeof dep, "%g", dependence);
        std::string const what =
            std::string(dep) + ", L " + std::to_string(L) + ", seed " + std::to_string(seed) + ": " + r.summary();
        EXPECT_EQ(r.preconditioner, gd_preconditioner::cholesky) << what;
#ifndef __FAST_MATH__
        // IEEE arithmetic only: under -ffast-math CG on the shifted factor took
        // up to 92,000 updates at 1e-10 (ending stalled, not converged;
        // docs/trainer.md says so).
        EXPECT_LE(r.most_iterations(), 30) << what;
#endif
        // At the least-squares residual to the relative rule's reach: the excess is gᵀA⁻¹g, and A is
        // near singular (the dropped column's solution is an upper bound of the optimum).
        EXPECT_LE(residual2(p, W, 0), residual2(p, best, 0) * (1 + 1e-6L)) << what;
      }
    }
  }
}

// ---- Features in extreme units ----

// A column in 10^-158 or 10^-165 units (its squares subnormal or zero in
// double) or 10^200 units (its squares overflow) is rescaled by a power of
// two, exactly: the fit is the one on the columns in plain units.
TEST(ExtremeUnits, TinyAndHugeColumnsAreScaledExactly) {
  for (double unit : {1e-158, 1e-165, 1e200, 1e-300}) {
    auto p = make_problem<double>(100, 4, 1, 61, false, 0.1);
    for (std::int64_t k = 0; k < 100; ++k) { p.X[k * 4 + 1] *= unit; }
    auto const W_star = fusekit::test::least_squares_reference(p);
    for (auto pre : {gd_preconditioner::jacobi, gd_preconditioner::cholesky}) {
      gd_options o = gd_options::recommended();
      o.preconditioner = pre;
      std::vector<double> W;
      auto const r = cpu_fit(p, W, o);
      EXPECT_TRUE(r.all_converged()) << unit << " " << r.summary();
      EXPECT_GT(r.outputs[0].iterations, 0) << unit;
      for (std::int64_t l = 0; l < 4; ++l) {  // each weight to 1e-10 of itself: the units differ by 10^300
        EXPECT_LE(fabsl(W[l] - W_star[l]), 1e-10L * fabsl(W_star[l])) << unit << " column " << l;
      }
    }
  }
}

// The GPU takes the columns' ranges (whether a column is in extreme units,
// whether it is constant) with one thread per range column and slice of rows:
// its body, run here over every block and thread of the grid the GPU
// launches, gives every column's largest x, −x and |y|, computed here
// directly from the data.
TEST(ExtremeUnits, TheGpuRangeKernelBodyOverEveryThreadGivesEveryColumnsRange) {
  namespace d = fusekit::detail;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  struct shape {
    std::int64_t K, L, N;
  };
  // one slice, a partial last slice, several column blocks (2L + N > 256), one row
  for (shape const sh : {shape{10, 3, 2}, shape{1000, 7, 3}, shape{300, 130, 5}, shape{1, 1, 1}, shape{129, 200, 1}}) {
    std::vector<double> X(static_cast<std::size_t>(sh.K * sh.L)), Y(static_cast<std::size_t>(sh.K * sh.N));
    for (double& v : X) { v = normal(rng); }
    for (double& v : Y) { v = normal(rng); }
    X[0] = 1e-310;                                                     // a subnormal
    if (sh.L > 1) { X[static_cast<std::size_t>(sh.L - 1)] = -1e300; }  // a huge negative
    Y.back() = -0.0;
    std::int64_t const C = 2 * sh.L + sh.N;
    std::vector<double> expected(static_cast<std::size_t>(C), -HUGE_VAL);
    for (std::int64_t k = 0; k < sh.K; ++k) {
      for (std::int64_t l = 0; l < sh.L; ++l) {
        expected[l] = std::max(expected[l], X[k * sh.L + l]);
        expected[sh.L + l] = std::max(expected[sh.L + l], -X[k * sh.L + l]);
      }
      for (std::int64_t n = 0; n < sh.N; ++n) {
        expected[2 * sh.L + n] = std::max(expected[2 * sh.L + n], std::fabs(Y[k * sh.N + n]));
      }
    }
    for (std::int64_t rows : {d::column_range_rows(sh.K, C), std::int64_t{1}, std::int64_t{7}}) {
      std::int64_t const slices = (sh.K + rows - 1) / rows;
      std::int64_t const column_blocks = (C + d::column_range_threads - 1) / d::column_range_threads;
      std::vector<double> partial(static_cast<std::size_t>(slices * C), std::numeric_limits<double>::quiet_NaN());
      for (std::int64_t block = 0; block < slices * column_blocks; ++block) {
        for (std::int64_t thread = 0; thread < d::column_range_threads; ++thread) {
          d::column_range_thread(X.data(), Y.data(), sh.K, sh.L, sh.N, rows, column_blocks, block, thread,
                                 partial.data());
        }
      }
      for (double const v : partial) { EXPECT_FALSE(std::isnan(v)) << "a partial value was not written"; }
      std::vector<double> const got = d::merge_column_ranges(partial, slices, C);
      EXPECT_EQ(got, expected) << "K " << sh.K << ", L " << sh.L << ", N " << sh.N << ", rows " << rows;
      std::vector<double> const cpu = d::column_ranges(fusekit::matrix<const double>(X.data(), sh.K, sh.L),
                                                       fusekit::matrix<const double>(Y.data(), sh.K, sh.N));
      EXPECT_EQ(cpu, expected);
    }
  }
  EXPECT_EQ(d::column_range_rows(10, 5), 64);                             // at least 64 rows a thread
  EXPECT_EQ(d::column_range_rows(std::int64_t{1} << 30, 1024), 1 << 20);  // at most 2^20 partial values
}

// ---- Units: the relative rule and the floor are in the metric D ----

// Columns in units from 2^-10 to 2^12, and the same problem with two columns
// rescaled by 2^20 and 2^-17 (exactly).
std::pair<problem<double>, problem<double>> spread_and_rescaled(std::uint32_t seed, std::vector<int>& shift) {
  auto p = make_problem<double>(300, 6, 2, seed, false, 0.1);
  for (std::int64_t k = 0; k < p.K; ++k) {
    for (std::int64_t l = 0; l < p.L; ++l) {
      p.X[k * p.L + l] = std::ldexp(p.X[k * p.L + l], static_cast<int>(4 * l) - 10);
    }
  }
  shift = {0, -17, 0, 20, 0, 0};
  auto q = p;
  for (std::int64_t k = 0; k < p.K; ++k) {
    for (std::int64_t l = 0; l < p.L; ++l) { q.X[k * p.L + l] = std::ldexp(p.X[k * p.L + l], shift[l]); }
  }
  return {p, q};
}

// With Jacobi every method is the same on features rescaled by powers of two:
// the same stops after the same iterations, W scaled back exactly. (The
// relative rule and the preconditioner read D; the automatic rate is that of
// the scaled features.)
TEST(Units, JacobiFitsDoNotSeeAPowerOfTwoRescaling) {
  std::vector<int> shift;
  auto const [p, q] = spread_and_rescaled(70, shift);
  for (auto method : {gd_method::conjugate_gradient, gd_method::plain, gd_method::nesterov}) {
    for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
      gd_options o;
      o.method = method;
      o.formulation = f;
      o.preconditioner = gd_preconditioner::jacobi;
      o.relative_tolerance = 1e-8;
      o.max_iterations = 20000;
      std::vector<double> Wp, Wq;
      auto const rp = cpu_fit(p, Wp, o);
      auto const rq = cpu_fit(q, Wq, o);
      std::string const what = std::string(fusekit::to_string(method)) + " " + fusekit::to_string(f);
      EXPECT_TRUE(rp.all_converged()) << what << ": " << rp.summary();
      EXPECT_EQ(rp.learning_rate, rq.learning_rate) << what;
      for (std::int64_t n = 0; n < p.N; ++n) {
        EXPECT_EQ(rp.outputs[n].iterations, rq.outputs[n].iterations) << what;
        EXPECT_EQ(rp.outputs[n].rule, rq.outputs[n].rule) << what;
        for (std::int64_t l = 0; l < p.L; ++l) {
          EXPECT_EQ(Wq[n * p.L + l], std::ldexp(Wp[n * p.L + l], -shift[l])) << what << " weight " << l;
        }
      }
    }
  }
}

// Without a preconditioner too, `converged` by the relative rule means it on
// the true gradient in D (not in the plain norm, where the 2^12 feature hides
// the 2^-10 one), and a tolerance below reach ends `stalled` at the floor
// (with W the solution) within a few stall windows, not at max_iterations
// (or `converged`, where the computed gradient met even that tolerance).
TEST(Units, TheRelativeRuleAndTheFloorHoldInDWithoutAPreconditioner) {
  std::vector<int> shift;
  auto const [p, q] = spread_and_rescaled(71, shift);
  auto const W_star = fusekit::test::least_squares_reference(p);
  for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
    for (auto pre : {gd_preconditioner::none, gd_preconditioner::jacobi}) {
      std::string const what = std::string(fusekit::to_string(f)) + " " + fusekit::to_string(pre);
      gd_options o;
      o.method = gd_method::conjugate_gradient;
      o.formulation = f;
      o.preconditioner = pre;
      o.relative_tolerance = 1e-7;
      o.max_iterations = 100000;
      std::vector<double> W;
      auto r = cpu_fit(p, W, o);
      for (std::int64_t n = 0; n < p.N; ++n) {
        EXPECT_EQ(r.outputs[n].rule, stop_rule::relative_tolerance) << what;
        EXPECT_LE(relative_gradient(p, W, n), 1.01L * o.relative_tolerance + 1e-13L) << what;
      }
      o.relative_tolerance = 1e-18;  // below reach
      o.stall_window = 40;
      r = cpu_fit(p, W, o);
      for (std::int64_t n = 0; n < p.N; ++n) {
        // stalled at the floor; or converged, where the computed gradient met even this (it can be 0)
        bool const floor = r.outputs[n].status == fit_status::stalled && r.outputs[n].rule == stop_rule::rounding_floor;
        bool const met =
            r.outputs[n].status == fit_status::converged && r.outputs[n].rule == stop_rule::relative_tolerance;
        EXPECT_TRUE(floor || met) << what << " " << fusekit::to_string(r.outputs[n].status) << " "
                                  << fusekit::to_string(r.outputs[n].rule);
        EXPECT_LE(r.outputs[n].iterations, 20 * p.L + 4 * o.stall_window) << what;
      }
      EXPECT_LE(fusekit::test::relative_error(W, W_star), 1e-9) << what;
    }
  }
}

// The stall at the rounding floor does not depend on the units either: the
// same ill-conditioned design in units 2^-20, 1 and 2^20 (every column) stalls
// at the same iteration, W scaled exactly, within a few stall windows.
TEST(Units, AStallAtTheFloorIsTheSameInAnyUnits) {
  auto const base = decaying_problem<double>(400, 10, 4.0, 72, 1e-3);
  for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
    gd_options o;
    o.method = gd_method::conjugate_gradient;
    o.formulation = f;
    o.preconditioner = gd_preconditioner::jacobi;
    o.relative_tolerance = 1e-18;  // below reach
    o.stall_window = 40;
    o.max_iterations = 20000;
    std::vector<double> W0;
    auto const r0 = cpu_fit(base, W0, o);
    for (int e : {-20, 20}) {
      auto p = base;
      for (auto& x : p.X) { x = std::ldexp(x, e); }
      std::vector<double> W;
      auto const r = cpu_fit(p, W, o);
      for (std::int64_t n = 0; n < p.N; ++n) {
        EXPECT_EQ(r0.outputs[n].status, fit_status::stalled) << fusekit::to_string(f);
        EXPECT_LE(r0.outputs[n].iterations, 20 * p.L + 4 * o.stall_window) << fusekit::to_string(f);
        EXPECT_EQ(r.outputs[n].status, r0.outputs[n].status) << fusekit::to_string(f) << " 2^" << e;
        EXPECT_EQ(r.outputs[n].iterations, r0.outputs[n].iterations) << fusekit::to_string(f) << " 2^" << e;
      }
      for (std::size_t i = 0; i < W.size(); ++i) { EXPECT_EQ(W[i], std::ldexp(W0[i], -e)) << fusekit::to_string(f); }
    }
  }
}

// ---- Never worse than the best iterate (gd_options, "W on every status") ----

// CGLS asked for a relative tolerance far below its rounding floor: it stops
// at the floor, with W the best iterate (it ran into the growth rule 10^6×
// wrong after reaching the solution).
TEST(BestIterate, CglsPastItsRoundingFloorStopsThereWithTheSolution) {
  int wrong = 0;
  for (std::uint32_t seed = 0; seed < 30; ++seed) {
    auto const p = make_problem<double>(60, 5, 1, 100 + seed, true, 0.1);
    auto const W_star = fusekit::test::least_squares_reference(p);
    gd_options o = gd_options::recommended();
    o.formulation = gd_formulation::direct;
    o.relative_tolerance = 1e-18;
    std::vector<double> W;
    auto const r = cpu_fit(p, W, o);
    EXPECT_NE(r.outputs[0].status, fit_status::diverged) << "seed " << seed;
    // uniform [0, 1) columns of 60 rows: κ of the scaled columns below 100
    wrong += fusekit::test::relative_error(W, W_star) > 1e-12 ? 1 : 0;
  }
  EXPECT_EQ(wrong, 0);
}

TEST(BestIterate, ZeroTargetsFromAWarmStartEndAtZero) {
  for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
    auto p = make_problem<double>(60, 5, 1, 7, true, 0.0);
    for (auto& y : p.Y) { y = 0.0; }
    gd_options o = gd_options::recommended();
    o.formulation = f;
    o.init = gd_init::warm_start;
    std::vector<double> W(5, 1.0);
    auto const r =
        fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(p.X.data(), 60, 5),
                     fusekit::matrix<const double>(p.Y.data(), 60, 1), fusekit::matrix<double>(W.data(), 1, 5), o);
    EXPECT_NE(r.outputs[0].status, fit_status::diverged) << fusekit::to_string(f);
    // W = 0 has residual 0: a W that is not the solution has a larger one.
    EXPECT_EQ(residual2(p, W, 0), 0.0L) << fusekit::to_string(f) << " " << W[0];
  }
}

// Property: whatever the method, options and data, an output that did not
// converge ends with a residual no larger than its start's and W = 0's.
TEST(BestIterate, AnUnconvergedFitIsNeverWorseThanItsStartOrZero) {
  std::mt19937 gen(2024);
  int unconverged = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::int64_t const K = 5 + static_cast<std::int64_t>(gen() % 40), L = 1 + static_cast<std::int64_t>(gen() % 8);
    auto p = make_problem<double>(K, L, 2, static_cast<std::uint32_t>(gen()), gen() % 2 == 0, 0.5);
    for (std::int64_t l = 0; l < L; ++l) {  // columns in units from 10^-3 to 10^3
      double const s = std::pow(10.0, static_cast<double>(gen() % 7) - 3.0);
      for (std::int64_t k = 0; k < K; ++k) { p.X[k * L + l] *= s; }
    }
    gd_options o;
    o.method = static_cast<gd_method>(gen() % 3);
    o.preconditioner = static_cast<gd_preconditioner>(gen() % 2);
    o.formulation = gen() % 2 == 0 ? gd_formulation::gram : gd_formulation::direct;
    o.init = gen() % 2 == 0 ? gd_init::warm_start : gd_init::zeros;
    o.max_iterations = 1 + static_cast<std::int64_t>(gen() % 20);
    if (gen() % 3 == 0) { o.learning_rate = std::pow(10.0, static_cast<double>(gen() % 9) - 6.0); }
    std::vector<double> W(static_cast<std::size_t>(2 * L));
    for (auto& w : W) { w = static_cast<double>(gen() % 2001) / 100.0 - 10.0; }
    std::vector<double> const start = o.init == gd_init::warm_start ? W : std::vector<double>(W.size(), 0.0);
    auto const r =
        fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(p.X.data(), K, L),
                     fusekit::matrix<const double>(p.Y.data(), K, 2), fusekit::matrix<double>(W.data(), 2, L), o);
    std::vector<double> const zero(W.size(), 0.0);
    for (std::int64_t n = 0; n < 2; ++n) {
      if (r.outputs[n].status == fit_status::converged) { continue; }
      ++unconverged;
      long double const got = residual2(p, W, n), slack = 1e-12L * residual2(p, zero, n);
      EXPECT_LE(got, residual2(p, zero, n) + slack) << "trial " << trial << " " << fusekit::to_string(o.method);
      EXPECT_LE(got, residual2(p, start, n) + slack) << "trial " << trial << " " << fusekit::to_string(o.method);
    }
  }
  EXPECT_GT(unconverged, 20);  // the property was exercised
}

}  // namespace
