// SPDX-License-Identifier: Apache-2.0
// No false success, no silent overwrite (docs/trainer.md, "W on every status"
// and "Every kind of data"): a fit that says `converged` has finite W and b
// and the right answer; one that cannot reach it says so; every output of
// every call shares no byte with an input or another output. Each test is
// written from the documented contract against an independent reference
// (Householder QR in long double, duplicated rows, W = 0), never from a
// particular bug. This file is also built with -ffast-math
// (train_adversarial_test.fastmath): the weights are read from their bits.
#include <fusekit/fusekit.hpp>

#include "common/data_kinds.hpp"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using fusekit::fit_extras;
using fusekit::fit_report;
using fusekit::fit_status;
using fusekit::gd_formulation;
using fusekit::gd_method;
using fusekit::gd_options;
using fusekit::gd_preconditioner;
using fusekit::matrix;
using fusekit::stop_rule;
using fusekit::test::cpu_fit;
using fusekit::test::least_squares_reference;
using fusekit::test::make_problem;
using fusekit::test::problem;
using fusekit::test::relative_error;

// A fit with extras on the CPU; W and b resized.
fit_report fit_with(const problem<double>& p, std::vector<double>& W, std::vector<double>& b,
                    const std::vector<double>& s, const gd_options& o) {
  W.resize(static_cast<std::size_t>(p.N * p.L));
  b.resize(static_cast<std::size_t>(p.N));
  return fusekit::fit(fusekit::cpu{}, matrix<const double>(p.X.data(), p.K, p.L),
                      matrix<const double>(p.Y.data(), p.K, p.N), matrix<double>(W.data(), p.N, p.L), o,
                      fit_extras<double>{s, b});
}

// Y = X W_trueᵀ exactly as the reference sees it (no noise).
void exact_targets(problem<double>& p) {
  for (std::int64_t k = 0; k < p.K; ++k) {
    for (std::int64_t n = 0; n < p.N; ++n) {
      double s = 0;
      for (std::int64_t l = 0; l < p.L; ++l) { s += p.X[k * p.L + l] * p.W_true[n * p.L + l]; }
      p.Y[k * p.N + n] = s;
    }
  }
}

std::vector<gd_options> every_preconditioner() {
  std::vector<gd_options> all;
  for (auto pc : {gd_preconditioner::none, gd_preconditioner::jacobi, gd_preconditioner::cholesky}) {
    for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
      gd_options o = gd_options::recommended();
      o.preconditioner = pc;
      o.formulation = f;
      all.push_back(o);
    }
  }
  return all;
}

// Decided on the bits: -ffast-math compares subnormals as 0.
bool power_of_two(double c) {
  std::uint64_t u = 0;
  std::memcpy(&u, &c, sizeof u);
  std::uint64_t const fraction = u & 0xfffffffffffffull, field = (u >> 52) & 0x7ffu;
  return field != 0 ? fraction == 0 : __builtin_popcountll(fraction) == 1;
}

std::string describe(const gd_options& o) {
  return std::string(fusekit::to_string(o.preconditioner)) + " " + fusekit::to_string(o.formulation);
}

// ---- A success status means the right answer ----

// Features in tiny units (their squares subnormal or 0) or huge ones (their
// squares overflow), with every preconditioner, `none` (the minimum-norm
// setting) included: converged, to the reference. Targets in such units
// likewise, with X in ordinary units.
TEST(NoFalseSuccess, TinyAndHugeUnitsAreSolvedWithEveryPreconditioner) {
  for (double unit : {1e-150, 1e-158, 1e-165, 1e-300, 1e250}) {
    for (bool tiny_x : {true, false}) {
      auto p = make_problem<double>(50, 4, 2, 7, false, 0.0);
      for (auto& x : p.X) { x = tiny_x ? x * unit : x; }
      for (auto& w : p.W_true) { w = tiny_x ? w : w * unit; }
      exact_targets(p);
      auto const W_star = least_squares_reference(p);
      for (const gd_options& o : every_preconditioner()) {
        std::vector<double> W;
        fit_report const r = cpu_fit(p, W, o);
        std::string const what = std::to_string(unit) + (tiny_x ? " X " : " Y ") + describe(o);
        EXPECT_TRUE(r.all_converged()) << what << ": " << r.summary();
        EXPECT_LE(relative_error(W, W_star), 1e-10) << what;
      }
    }
  }
}

// Columns 2^700 below the ridge: the ridge's row sets their scale, so Xᵀy
// is 2^-700 of it, whose square the stopping rules cannot hold; the targets
// are scaled up (exactly) until they can, and the answer, about Xᵀy/λ, is
// reached and converged, to the long-double reference.
TEST(NoFalseSuccess, ColumnsFarBelowTheRidgeAreSolved) {
  auto p = make_problem<double>(30, 3, 2, 14, false, 0.1);
  for (auto& x : p.X) { x = std::ldexp(x, -700); }
  for (bool intercept : {false, true}) {
    // The closed form: W = (X̃ᵀX̃ + I)⁻¹ X̃ᵀỸ = X̃ᵀỸ to 2^-1400 relatively (X̃ᵀX̃ is
    // 2^-1400 of I), X̃ and Ỹ centred with an intercept; in long double.
    std::vector<long double> x_mean(3, 0.0L), y_mean(2, 0.0L), W_ref(6, 0.0L);
    for (std::int64_t k = 0; k < 30 && intercept; ++k) {
      for (std::int64_t l = 0; l < 3; ++l) { x_mean[l] += static_cast<long double>(p.X[k * 3 + l]) / 30; }
      for (std::int64_t n = 0; n < 2; ++n) { y_mean[n] += static_cast<long double>(p.Y[k * 2 + n]) / 30; }
    }
    for (std::int64_t k = 0; k < 30; ++k) {
      for (std::int64_t n = 0; n < 2; ++n) {
        for (std::int64_t l = 0; l < 3; ++l) {
          W_ref[n * 3 + l] += (p.X[k * 3 + l] - x_mean[l]) * (p.Y[k * 2 + n] - y_mean[n]);
        }
      }
    }
    for (gd_options o : every_preconditioner()) {
      o.ridge = 1.0;
      o.fit_intercept = intercept;
      std::vector<double> W, b;
      fit_report const r = fit_with(p, W, b, {}, o);
      std::string const what = std::to_string(intercept) + " " + describe(o);
      EXPECT_TRUE(r.all_converged()) << what << ": " << r.summary();
      EXPECT_LE(relative_error(W, W_ref), 1e-10) << what;
    }
  }
}

// A weight counts as that many copies of its row: a common positive factor
// of the weights changes nothing (ridge 0). Subnormal (1e-310, 5e-324 on
// the rows that carry it), tiny, huge (1e300, whose sums overflow) and
// powers of two from 2^-1074 to 2^1000, with and without an intercept, every
// preconditioner: the unweighted answer; a power of two gives its bits.
TEST(NoFalseSuccess, SampleWeightsAreACommonFactorAtAnyScale) {
  auto p = make_problem<double>(40, 3, 2, 9, false, 0.1);
  std::vector<double> const ones(40, 1.0);
  for (bool intercept : {false, true}) {
    std::vector<long double> W_ref, b_ref;
    fusekit::test::weighted_ridge_reference(p, ones, 0.0, intercept, W_ref, b_ref);
    for (gd_options o : every_preconditioner()) {
      o.fit_intercept = intercept;
      std::vector<double> W1, b1;
      ASSERT_TRUE(fit_with(p, W1, b1, ones, o).all_converged());
      for (double c : {0x1p-1074, 0x1p-1060, 5e-324, 1e-310, 1e-300, 0x1p-600, 1e300, 1e308, 0x1p1000}) {
        std::vector<double> const s(40, c), s1(40, c);
        std::vector<double> W, b;
        fit_report const r = fit_with(p, W, b, s, o);
        char scale[32];
        std::snprintf(scale, sizeof scale, " c=%a", c);
        std::string const what = std::to_string(intercept) + " " + describe(o) + scale;
        ASSERT_TRUE(r.all_converged()) << what << ": " << r.summary();
        EXPECT_LE(relative_error(W, W_ref), 1e-10) << what;
        for (std::int64_t n = 0; n < p.N; ++n) {
          EXPECT_LE(fabsl(b[n] - b_ref[n]), 1e-10L * (1 + fabsl(b_ref[n]))) << what;
        }
        if (power_of_two(c)) {
          EXPECT_EQ(0, std::memcmp(W.data(), W1.data(), W.size() * sizeof(double))) << what;
          EXPECT_EQ(0, std::memcmp(b.data(), b1.data(), b.size() * sizeof(double))) << what;
        }
      }
    }
  }
}

// Ridge scales with the weights: weights c·s with ridge c·λ is the fit of
// s with λ (the objective multiplied by c), c a power of two down to 2^-1000.
TEST(NoFalseSuccess, RidgeScalesWithTheWeights) {
  auto const p = make_problem<double>(30, 4, 1, 12, false, 0.2);
  std::vector<double> s(30);
  for (std::size_t k = 0; k < s.size(); ++k) { s[k] = 0.25 + static_cast<double>(k % 5); }
  gd_options o = gd_options::recommended();
  o.fit_intercept = true;
  o.ridge = 3.0;
  std::vector<double> W1, b1;
  ASSERT_TRUE(fit_with(p, W1, b1, s, o).all_converged());
  for (int e : {-1000, -300, 300, 900}) {
    std::vector<double> sc(s);
    for (double& v : sc) { v = std::ldexp(v, e); }
    gd_options oc = o;
    oc.ridge = std::ldexp(o.ridge, e);
    std::vector<double> W, b;
    ASSERT_TRUE(fit_with(p, W, b, sc, oc).all_converged()) << e;
    EXPECT_EQ(W, W1) << e;
    EXPECT_EQ(b, b1) << e;
  }
}

// A weight past double's range (a column of subnormal values: its
// least-squares weight is about 1e313) is not a success: `diverged`, by the
// rule `non_finite`; without fit_intercept the intercepts are 0, as
// documented, and with it b is the non-finite one and the status says so.
TEST(NoFalseSuccess, AWeightPastDoubleIsNotASuccess) {
  auto p = make_problem<double>(30, 3, 1, 11, false, 0.0);
  for (std::int64_t k = 0; k < 30; ++k) { p.X[k * 3 + 1] *= 4.94e-314; }
  for (bool intercept : {false, true}) {
    for (gd_options o : every_preconditioner()) {
      o.fit_intercept = intercept;
      std::vector<double> W, b;
      fit_report const r = fit_with(p, W, b, {}, o);
      std::string const what = std::to_string(intercept) + " " + describe(o);
      bool const finite = std::isfinite(W[0]) && std::isfinite(W[1]) && std::isfinite(W[2]) && std::isfinite(b[0]);
      if (r.outputs[0].status == fit_status::converged) {
        EXPECT_TRUE(finite) << what;
      } else {
        EXPECT_EQ(r.outputs[0].status, fit_status::diverged) << what;
      }
      if (!finite) { EXPECT_EQ(r.outputs[0].rule, stop_rule::non_finite) << what; }
      if (!intercept) { EXPECT_EQ(b[0], 0.0) << what; }
    }
  }
}

// Every weight 0: nothing to fit. Rejected naming sample_weight (not X),
// before W or b is written.
TEST(NoFalseSuccess, AllZeroWeightsAreRejectedNamingSampleWeight) {
  auto const p = make_problem<double>(20, 3, 1, 80, false, 0.1);
  for (bool intercept : {false, true}) {
    gd_options o;  // plain descent, the automatic rate
    o.fit_intercept = intercept;
    std::vector<double> W(3, 0.5), b(1, 7.0);
    std::vector<double> const s(20, 0.0);
    try {
      fusekit::fit(fusekit::cpu{}, matrix<const double>(p.X.data(), 20, 3), matrix<const double>(p.Y.data(), 20, 1),
                   matrix<double>(W.data(), 1, 3), o, fit_extras<double>{s, b});
      ADD_FAILURE() << "accepted";
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("every sample_weight is 0"), std::string::npos) << e.what();
    }
    EXPECT_EQ(W, std::vector<double>(3, 0.5));
    EXPECT_EQ(b, std::vector<double>(1, 7.0));
  }
}

// A negative weight or ridge is rejected however small (a negative
// subnormal, which -ffast-math's comparisons read as 0), and -0 is 0.
TEST(NoFalseSuccess, ANegativeSubnormalWeightOrRidgeIsRejected) {
  auto const p = make_problem<double>(20, 3, 1, 81, false, 0.1);
  std::vector<double> s(20, 1.0), W(3, 0.5), b(1, 7.0);
  auto const run = [&](const gd_options& o) {
    fusekit::fit(fusekit::cpu{}, matrix<const double>(p.X.data(), 20, 3), matrix<const double>(p.Y.data(), 20, 1),
                 matrix<double>(W.data(), 1, 3), o, fit_extras<double>{s, b});
  };
  gd_options o = gd_options::recommended();
  o.fit_intercept = true;
  s[4] = -4.9e-324;
  EXPECT_THROW(run(o), fusekit::invalid_argument);
  s[4] = -0.0;
  EXPECT_NO_THROW(run(o));
  s[4] = 1.0;
  o.ridge = -1e-310;
  EXPECT_THROW(run(o), fusekit::invalid_argument);
  std::vector<float> Xf(p.X.begin(), p.X.end()), Yf(p.Y.begin(), p.Y.end()), Wf(3), sf(20, 1.0f);
  sf[2] = -1e-45f;
  EXPECT_THROW(
      fusekit::fit(fusekit::cpu{}, matrix<const float>(Xf.data(), 20, 3), matrix<const float>(Yf.data(), 20, 1),
                   matrix<float>(Wf.data(), 1, 3), gd_options::recommended(), fit_extras<float>{sf, {}}),
      fusekit::invalid_argument);
}

// Subnormal float weights (1e-40f, which -ffast-math flushes when
// converted) with an intercept: the unweighted answer.
TEST(NoFalseSuccess, SubnormalFloatWeightsAreWeights) {
  auto const p = make_problem<float>(40, 3, 1, 15, false, 0.1);
  std::vector<float> W1(3), W(3), b1(1), b(1), s1(40, 1.0f), s(40, 1e-40f);
  gd_options o = gd_options::recommended();
  o.fit_intercept = true;
  auto const run = [&](std::vector<float>& w, std::vector<float>& bb, const std::vector<float>& weights) {
    return fusekit::fit(fusekit::cpu{}, matrix<const float>(p.X.data(), 40, 3), matrix<const float>(p.Y.data(), 40, 1),
                        matrix<float>(w.data(), 1, 3), o, fit_extras<float>{weights, bb});
  };
  ASSERT_TRUE(run(W1, b1, s1).all_converged());
  ASSERT_TRUE(run(W, b, s).all_converged());
  for (int l = 0; l < 3; ++l) { EXPECT_NEAR(W[l], W1[l], 1e-5f * (1 + std::fabs(W1[l]))); }
  EXPECT_NEAR(b[0], b1[0], 1e-5f * (1 + std::fabs(b1[0])));
}

// ---- W on every status: the best-iterate rule is the last word ----

// Nearly dependent columns (column 3 = 3·col1 + col0 + 1e-10·noise) and the
// Gram formulation: refinement corrects by the gradient of A's rounded
// system, which can point far off; the fit's residual ‖y − Xw‖² is never
// above W = 0's, nor above the unrefined fit's (beyond rounding).
TEST(NoFalseSuccess, ARefinedFitIsNeverWorseThanTheUnrefinedFitOrZero) {
  std::normal_distribution<double> normal;
  for (std::uint32_t seed = 0; seed < 1000; ++seed) {
    problem<double> p{50, 5, 1, std::vector<double>(250), std::vector<double>(50), std::vector<double>(5)};
    std::mt19937 gen(seed);
    for (auto& x : p.X) { x = normal(gen); }
    for (auto& y : p.Y) { y = normal(gen); }
    for (std::int64_t k = 0; k < 50; ++k) { p.X[k * 5 + 3] = 3 * p.X[k * 5 + 1] + p.X[k * 5] + 1e-10 * normal(gen); }
    auto const residual = [&](const std::vector<double>& w) {
      long double r2 = 0;
      for (std::int64_t k = 0; k < 50; ++k) {
        long double r = p.Y[k];
        for (std::int64_t l = 0; l < 5; ++l) { r -= static_cast<long double>(p.X[k * 5 + l]) * w[l]; }
        r2 += r * r;
      }
      return r2;
    };
    for (auto pc : {gd_preconditioner::cholesky, gd_preconditioner::jacobi}) {
      gd_options o = gd_options::recommended();
      o.preconditioner = pc;
      o.formulation = pc == gd_preconditioner::cholesky ? gd_formulation::gram : gd_formulation::automatic;
      gd_options unrefined = o;
      unrefined.refinement_steps = 0;
      std::vector<double> W, W0;
      cpu_fit(p, W, o);
      cpu_fit(p, W0, unrefined);
      // "Within their rounding" (keep_best_iterate): the band 2(K + L)·u, and
      // what rounding y − X w in double can move ‖r‖² by, 2(L + 2)·u·Σ|r_k|·(|y_k| +
      // Σ|x_kl w_l|) for each side; large opposite weights on the dependent
      // columns make that the larger.
      auto const rounding = [&](const std::vector<double>& w) {
        long double e = 0;
        for (std::int64_t k = 0; k < 50; ++k) {
          long double r = p.Y[k], a = std::fabs(p.Y[k]);
          for (std::int64_t l = 0; l < 5; ++l) {
            r -= static_cast<long double>(p.X[k * 5 + l]) * w[l];
            a += std::fabs(static_cast<long double>(p.X[k * 5 + l]) * w[l]);
          }
          e += 2 * fabsl(r) * a * 7 * 0x1p-53L;
        }
        return e;
      };
      std::vector<double> const zero(5, 0.0);
      long double const got = residual(W), unrefined_r2 = residual(W0), zero_r2 = residual(zero);
      long double const band = 1 + 2 * 55 * 0x1p-53L;
      EXPECT_LE(got, unrefined_r2 * band + rounding(W) + rounding(W0))
          << "seed " << seed << " " << fusekit::to_string(pc) << std::setprecision(20) << ": " << got << " against "
          << unrefined_r2 << " (unrefined)";
      EXPECT_LE(got, zero_r2 * band + rounding(W))
          << "seed " << seed << " " << fusekit::to_string(pc) << std::setprecision(20) << ": " << got << " against "
          << zero_r2 << " (zero)";
    }
  }
}

// Refinement's corrections count in max_iterations: no output passes it,
// whatever the budget (gd_options::refinement_steps).
TEST(NoFalseSuccess, RefinementNeverPassesMaxIterations) {
  auto const p = fusekit::test::make_raw_problem<double>(200, 11, 3, 5, 0.1);
  for (std::int64_t budget = 1; budget <= 40; ++budget) {
    gd_options o = gd_options::recommended();
    o.preconditioner = gd_preconditioner::jacobi;
    o.formulation = gd_formulation::gram;
    o.max_iterations = budget;
    std::vector<double> W;
    fit_report const r = cpu_fit(p, W, o);
    for (const auto& out : r.outputs) { EXPECT_LE(out.iterations, budget) << r.summary(); }
  }
}

// An accepted correction reports its own last gradient (the fit's, from X,
// is what refinement improves): the reported gradᵀgrad is no larger than
// ‖Xᵀ(y − X w)‖² at the unrefined w, taken from X here.
TEST(NoFalseSuccess, AnAcceptedCorrectionReportsItsGradient) {
  auto const p = fusekit::test::make_raw_problem<double>(400, 11, 2, 6, 0.1);
  gd_options o = gd_options::recommended();
  o.preconditioner = gd_preconditioner::jacobi;
  o.formulation = gd_formulation::gram;
  gd_options unrefined = o;
  unrefined.refinement_steps = 0;
  std::vector<double> W, W0;
  fit_report const r = cpu_fit(p, W, o), r0 = cpu_fit(p, W0, unrefined);
  for (std::int64_t n = 0; n < p.N; ++n) {
    ASSERT_GT(r.outputs[n].iterations, r0.outputs[n].iterations) << "no correction was taken";
    long double g2 = 0;
    for (std::int64_t l = 0; l < p.L; ++l) {
      long double g = 0;
      for (std::int64_t k = 0; k < p.K; ++k) {
        long double res = p.Y[k * p.N + n];
        for (std::int64_t j = 0; j < p.L; ++j) { res -= static_cast<long double>(p.X[k * p.L + j]) * W0[n * p.L + j]; }
        g += static_cast<long double>(p.X[k * p.L + l]) * res;
      }
      g2 += g * g;
    }
    EXPECT_NE(r.outputs[n].grad_norm2, r0.outputs[n].grad_norm2) << n;
    EXPECT_LE(r.outputs[n].grad_norm2, static_cast<double>(g2) * (1 + 1e-6)) << n;
  }
}

// ---- What the extras mean ----

// Sample weights alone (no ridge, no intercept): integer weights are the
// same rows duplicated.
TEST(NoFalseSuccess, WeightsAloneAreDuplicatedRows) {
  auto const p = make_problem<double>(25, 4, 2, 31, false, 0.5);
  std::vector<double> s(25);
  problem<double> dup{0, 4, 2, {}, {}, {}};
  for (std::int64_t k = 0; k < 25; ++k) {
    s[k] = static_cast<double>(k % 4);  // 0 to 3 copies
    for (int c = 0; c < static_cast<int>(s[k]); ++c) {
      dup.X.insert(dup.X.end(), p.X.begin() + k * 4, p.X.begin() + k * 4 + 4);
      dup.Y.insert(dup.Y.end(), p.Y.begin() + k * 2, p.Y.begin() + k * 2 + 2);
      ++dup.K;
    }
  }
  auto const W_star = least_squares_reference(dup);
  for (const gd_options& o : every_preconditioner()) {
    std::vector<double> W, b;
    ASSERT_TRUE(fit_with(p, W, b, s, o).all_converged()) << describe(o);
    EXPECT_LE(relative_error(W, W_star), 1e-10) << describe(o);
    EXPECT_EQ(b, std::vector<double>(2, 0.0));
  }
}

// An intercept span holds N values or none, with or without fit_intercept;
// rejected before W is written.
TEST(NoFalseSuccess, AnInterceptOfTheWrongLengthIsRejected) {
  auto const p = make_problem<double>(20, 3, 2, 82, false, 0.1);
  for (bool intercept : {false, true}) {
    for (std::size_t size : {std::size_t{1}, std::size_t{3}}) {
      gd_options o = gd_options::recommended();
      o.fit_intercept = intercept;
      std::vector<double> W(6, 0.5), b(size, 7.0);
      try {
        fusekit::fit(fusekit::cpu{}, matrix<const double>(p.X.data(), 20, 3), matrix<const double>(p.Y.data(), 20, 2),
                     matrix<double>(W.data(), 2, 3), o, fit_extras<double>{{}, b});
        ADD_FAILURE() << intercept << " " << size;
      } catch (const fusekit::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("intercept has " + std::to_string(size) + " values"), std::string::npos)
            << e.what();
      }
      EXPECT_EQ(W, std::vector<double>(6, 0.5));
      EXPECT_EQ(b, std::vector<double>(size, 7.0));
    }
  }
}

// ---- Aliasing: one rule for every call ----

// Every output of every call, placed over (a generated part of) every input
// and every other output: rejected naming both, nothing written.
TEST(Aliasing, EveryOutputIsApartFromEveryInputAndOutput) {
  std::int64_t const K = 6, L = 3, N = 2;
  // One arena: X, Y, s, W, b, Y_hat side by side; an overlap moves one view.
  std::vector<double> arena(200);
  std::mt19937 gen(3);
  std::normal_distribution<double> normal;
  for (auto& v : arena) { v = 1.0 + std::fabs(normal(gen)); }
  struct layout {
    std::size_t X = 0, Y = 18, s = 30, W = 36, b = 42, Y_hat = 44;
  };
  auto const expect_rejected = [&](const char* what, const layout& at, auto call) {
    std::vector<double> const before = arena;
    try {
      call(at);
      ADD_FAILURE() << what << ": accepted";
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("overlaps"), std::string::npos) << what << ": " << e.what();
    }
    EXPECT_EQ(arena, before) << what << ": written";
  };
  auto const fit = [&](const layout& at) {
    gd_options o = gd_options::recommended();
    o.fit_intercept = true;
    fusekit::fit(fusekit::cpu{}, matrix<const double>(&arena[at.X], K, L), matrix<const double>(&arena[at.Y], K, N),
                 matrix<double>(&arena[at.W], N, L), o,
                 fit_extras<double>{{&arena[at.s], static_cast<std::size_t>(K)}, {&arena[at.b], 2}});
  };
  auto const predict = [&](const layout& at) {
    fusekit::predict(fusekit::cpu{}, matrix<const double>(&arena[at.X], K, L), matrix<const double>(&arena[at.W], N, L),
                     ::cuda::std::span<const double>(&arena[at.b], 2), matrix<double>(&arena[at.Y_hat], K, N));
  };
  // Each written view over each other view, at its start, end and middle.
  std::size_t layout::*const fit_outputs[] = {&layout::W, &layout::b};
  std::size_t layout::*const fit_views[] = {&layout::X, &layout::Y, &layout::s, &layout::W, &layout::b};
  for (auto out : fit_outputs) {
    for (auto other : fit_views) {
      if (out == other) { continue; }
      layout at;
      std::size_t const size = other == &layout::b ? 2 : other == &layout::s || other == &layout::W ? 6 : 12;
      for (std::size_t shift : {std::size_t{0}, std::size_t{1}, size - 1}) {  // its start, second and last value
        at.*out = layout{}.*other + shift;
        expect_rejected("fit", at, fit);
      }
    }
  }
  for (auto other : {&layout::X, &layout::W, &layout::b}) {
    for (std::size_t shift : {0, 1}) {
      layout at;
      at.Y_hat = at.*other + shift - (other == &layout::b && shift == 1 ? 2 : 0);
      expect_rejected("predict", at, predict);
    }
  }
  // The reductions' result, and the elementwise layer's out (exactly an
  // input is in place and allowed; a part of one is not).
  std::vector<double> values(64, 1.0);
  EXPECT_THROW(fusekit::reduce_sum(fusekit::cpu{}, ::cuda::std::span<const double>(values.data(), 64), &values[63]),
               fusekit::invalid_argument);
  std::vector<float> layer(64, 0.5f);
  std::vector<std::uint8_t> grey(32, 7);
  EXPECT_THROW(fusekit::hidden_layer_unfused(fusekit::cpu{}, ::cuda::std::span<const std::uint8_t>(grey),
                                             ::cuda::std::span<const float>(layer.data(), 32),
                                             ::cuda::std::span<float>(layer.data() + 16, 32)),
               fusekit::invalid_argument);
  EXPECT_THROW(fusekit::hidden_layer(fusekit::cpu{}, ::cuda::std::span<const std::uint8_t>(grey),
                                     ::cuda::std::span<const float>(layer.data(), 32),
                                     ::cuda::std::span<float>(layer.data() + 16, 32)),
               fusekit::invalid_argument);
  EXPECT_THROW(fusekit::transform(fusekit::cpu{}, ::cuda::std::span<float>(layer.data() + 1, 32), fusekit::weigh{},
                                  ::cuda::std::span<const float>(layer.data(), 32),
                                  ::cuda::std::span<const float>(layer.data() + 32, 32)),
               fusekit::invalid_argument);
  float* const into = reinterpret_cast<float*>(values.data() + 10);
  EXPECT_THROW(fusekit::reduce(fusekit::cpu{}, ::cuda::std::span<const double>(values.data(), 64), &values[5],
                               fusekit::maximum{}, 0.0),
               fusekit::invalid_argument);
  EXPECT_THROW(
      fusekit::transform_reduce_sum(fusekit::cpu{}, into, fusekit::reduce_algorithm::deterministic, fusekit::weigh{},
                                    ::cuda::std::span<const float>(layer.data(), 32),
                                    ::cuda::std::span<const float>(reinterpret_cast<const float*>(values.data()), 32)),
      fusekit::invalid_argument);
  // In place, exactly: the one documented exception.
  EXPECT_NO_THROW(fusekit::transform(fusekit::cpu{}, ::cuda::std::span<float>(layer.data(), 32), fusekit::weigh{},
                                     ::cuda::std::span<const float>(layer.data(), 32),
                                     ::cuda::std::span<const float>(layer.data() + 32, 32)));
}

}  // namespace
