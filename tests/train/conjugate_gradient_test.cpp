// SPDX-License-Identifier: Apache-2.0
// Conjugate gradients, preconditioning and the relative tolerance on the
// host, on data as users bring it (make_raw_problem: units from 10^-3 to
// 10^4, correlated pairs, an intercept column), against
// least_squares_reference (Householder QR in long double: not the normal
// equations the trainer solves).
#include <fusekit/fusekit.hpp>

#include "common/test_support.hpp"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using fusekit::fit_status;
using fusekit::gd_formulation;
using fusekit::gd_method;
using fusekit::gd_options;
using fusekit::gd_preconditioner;
using fusekit::stop_rule;
using fusekit::test::cg_jacobi;
using fusekit::test::cpu_fit;
using fusekit::test::least_squares_reference;
using fusekit::test::make_problem;
using fusekit::test::make_raw_problem;
using fusekit::test::problem;
using fusekit::test::relative_error;
using fusekit::test::relative_gradient;

TEST(ConjugateGradient, WithJacobiSolvesRawUnitDataInDouble) {
  auto const p = make_raw_problem<double>(300, 12, 3, 21, 0.1);
  auto const W_star = least_squares_reference(p);
  double const rtol = 1e-13;
  for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
    gd_options o = cg_jacobi(rtol);
    o.formulation = f;
    std::vector<double> W;
    auto const r = cpu_fit(p, W, o);
    for (std::int64_t n = 0; n < p.N; ++n) {
      auto const& out = r.outputs[n];
      ASSERT_EQ(out.status, fit_status::converged) << fusekit::to_string(f) << " " << fusekit::to_string(out.rule);
      EXPECT_EQ(out.rule, stop_rule::relative_tolerance);
      EXPECT_LE(out.iterations, 4 * p.L) << fusekit::to_string(f);  // L in exact arithmetic
      // What `converged` promises, on the true gradient: ‖g‖_M ≤ rtol ‖b‖_M,
      // up to the rounding of the gradient the fit computed (u·L·κ-free: M-norm).
      EXPECT_LE(relative_gradient(p, W, n), 1.01L * rtol + 64 * p.L * 0x1p-53L) << fusekit::to_string(f);
    }
    EXPECT_LE(relative_error(W, W_star), 1e-8) << fusekit::to_string(f);
  }
}

TEST(ConjugateGradient, WithJacobiReachesFloatAccuracyOnFloatData) {
  auto const p = make_raw_problem<float>(400, 10, 2, 22, 0.1);
  auto const W_star = least_squares_reference(p);
  for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
    gd_options o = cg_jacobi(1e-13);
    o.formulation = f;
    std::vector<float> W;
    auto const r = cpu_fit(p, W, o);
    ASSERT_TRUE(r.all_converged()) << fusekit::to_string(f) << " " << fusekit::to_string(r.outputs[0].status);
    // The weights are the double solution rounded once to float: 2^-24 relatively.
    EXPECT_LE(relative_error(W, W_star), 1e-5) << fusekit::to_string(f);
  }
}

TEST(ConjugateGradient, StopsAtTheBudgetAndCountsUpdates) {
  auto const p = make_raw_problem<double>(200, 12, 2, 23, 0.1);
  gd_options o = cg_jacobi(1e-13);
  o.max_iterations = 3;
  std::vector<double> W;
  for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
    o.formulation = f;
    auto const r = cpu_fit(p, W, o);
    for (const auto& out : r.outputs) {
      EXPECT_EQ(out.status, fit_status::max_iterations);
      EXPECT_EQ(out.rule, stop_rule::max_iterations);
      EXPECT_EQ(out.iterations, 3);
    }
  }
}

TEST(ConjugateGradient, GramAndCglsAgree) {
  auto const p = make_raw_problem<double>(150, 9, 2, 24, 0.1);
  gd_options o = cg_jacobi(1e-14);
  std::vector<double> W_gram, W_cgls;
  o.formulation = gd_formulation::gram;
  ASSERT_TRUE(cpu_fit(p, W_gram, o).all_converged());
  o.formulation = gd_formulation::direct;
  ASSERT_TRUE(cpu_fit(p, W_cgls, o).all_converged());
  std::vector<long double> gram(W_gram.begin(), W_gram.end());
  EXPECT_LE(relative_error(W_cgls, gram), 1e-9);
}

// Every method, with and without Jacobi, on data with a column of zeros: its
// weight stays exactly 0 (its gradient is exactly 0) and nothing is NaN.
TEST(Preconditioner, ZeroColumnKeepsItsWeightAtZero) {
  auto const p = make_raw_problem<double>(120, 6, 2, 25, 0.1, true);
  auto const W_star = least_squares_reference(p);
  // The Cholesky factor: a zero column's row and column of A' are the
  // identity's (cholesky.hpp), so the rest being full rank, no shift.
  std::vector<double> A(static_cast<std::size_t>(p.L * p.L), 0.0);
  for (std::int64_t i = 0; i < p.L; ++i) {
    for (std::int64_t j = 0; j < p.L; ++j) {
      for (std::int64_t k = 0; k < p.K; ++k) { A[i * p.L + j] += p.X[k * p.L + i] * p.X[k * p.L + j]; }
    }
  }
  EXPECT_EQ(fusekit::detail::make_cholesky(A.data(), p.L).shift, 0.0);
  for (auto m : {gd_method::plain, gd_method::nesterov, gd_method::conjugate_gradient}) {
    for (auto pc : {gd_preconditioner::none, gd_preconditioner::jacobi, gd_preconditioner::cholesky}) {
      for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
        if (pc == gd_preconditioner::cholesky && m != gd_method::conjugate_gradient) { continue; }
        gd_options o;
        o.method = m;
        o.preconditioner = pc;
        o.formulation = f;
        o.max_iterations = 2000;
        std::vector<double> W;
        auto const r = cpu_fit(p, W, o);
        std::string const what =
            std::string(fusekit::to_string(m)) + " " + fusekit::to_string(pc) + " " + fusekit::to_string(f);
        for (std::int64_t n = 0; n < p.N; ++n) {
          EXPECT_EQ(W[n * p.L + 1], 0.0) << what;
          EXPECT_NE(r.outputs[n].status, fit_status::diverged) << what;
          for (std::int64_t l = 0; l < p.L; ++l) { EXPECT_TRUE(std::isfinite(W[n * p.L + l])) << what; }
        }
        if (m == gd_method::conjugate_gradient && pc == gd_preconditioner::jacobi) {
          o = cg_jacobi(1e-13);
          o.formulation = f;
          ASSERT_TRUE(cpu_fit(p, W, o).all_converged()) << what;
          EXPECT_LE(relative_error(W, W_star), 1e-8) << what;
        }
        if (pc == gd_preconditioner::cholesky) {  // the zero column's pivot is 1: no shift, a few updates
                                                  // (Jacobi in its place on the direct formulation)
          o = gd_options::recommended();
          o.formulation = f;
          auto const rc = cpu_fit(p, W, o);
          ASSERT_TRUE(rc.all_converged()) << what << ": " << rc.summary();
          if (f == gd_formulation::gram) {
            EXPECT_EQ(rc.preconditioner, gd_preconditioner::cholesky) << what;
            EXPECT_STREQ(rc.preconditioner_note, "") << what;
          } else if (f == gd_formulation::direct) {  // the report says which ran, and why
            EXPECT_EQ(rc.preconditioner, gd_preconditioner::jacobi) << what;
            EXPECT_NE(std::string(rc.preconditioner_note).find("direct formulation"), std::string::npos) << what;
            EXPECT_NE(rc.summary().find(rc.preconditioner_note), std::string::npos) << what;
          }
          EXPECT_LE(relative_error(W, W_star), 1e-8) << what;
          EXPECT_LE(rc.most_iterations(), 30) << what;
          for (std::int64_t n = 0; n < p.N; ++n) { EXPECT_EQ(W[n * p.L + 1], 0.0) << what; }
        }
      }
    }
  }
}

// Plain descent with Jacobi is plain descent on the features scaled to unit
// norm, mapped back: w = s∘v with v the iterate on X·diag(s), s_l = 1/‖x_l‖.
TEST(Preconditioner, JacobiPlainIsPlainDescentOnScaledFeatures) {
  auto const p = make_raw_problem<double>(60, 5, 2, 26, 0.1);
  problem<double> scaled = p;
  std::vector<double> s(static_cast<std::size_t>(p.L));
  for (std::int64_t l = 0; l < p.L; ++l) {
    long double d = 0;
    for (std::int64_t k = 0; k < p.K; ++k) { d += static_cast<long double>(p.X[k * p.L + l]) * p.X[k * p.L + l]; }
    s[l] = static_cast<double>(1.0L / sqrtl(d));
    for (std::int64_t k = 0; k < p.K; ++k) { scaled.X[k * p.L + l] = p.X[k * p.L + l] * s[l]; }
  }
  for (auto m : {gd_method::plain, gd_method::nesterov}) {
    gd_options o;
    o.method = m;
    o.formulation = gd_formulation::gram;
    o.tolerance = 1e-300;
    o.max_iterations = 40;
    std::vector<double> W_scaled, W;
    auto const on_scaled = cpu_fit(scaled, W_scaled, o);
    o.preconditioner = gd_preconditioner::jacobi;
    auto const jacobi = cpu_fit(p, W, o);
    EXPECT_NEAR(jacobi.learning_rate, on_scaled.learning_rate, 1e-9 * on_scaled.learning_rate);
    for (std::int64_t n = 0; n < p.N; ++n) {
      EXPECT_EQ(jacobi.outputs[n].iterations, 40);
      for (std::int64_t l = 0; l < p.L; ++l) {
        double const want = s[l] * W_scaled[n * p.L + l];
        EXPECT_NEAR(W[n * p.L + l], want, 1e-9 * std::fabs(want) + 1e-12) << fusekit::to_string(m) << " " << l;
      }
    }
  }
}

// The relative rule stops the user's loop at the first gradient with
// ‖g‖_D ≤ rtol·‖Xᵀy‖_D (D = diag(XᵀX)), iterate for iterate.
TEST(RelativeTolerance, PlainStopsWhereTheUsersLoopWould) {
  auto const p = make_problem<double>(40, 9, 3, 2, true, 0.0);
  double const lr = 0.01, rtol = 1e-5;
  gd_options o;
  o.learning_rate = lr;
  o.tolerance = 1e-300;
  o.relative_tolerance = rtol;
  o.max_iterations = 1000000;
  o.formulation = gd_formulation::direct;
  std::vector<double> W;
  auto const r = cpu_fit(p, W, o);
  // d_l = ‖x_l‖², the metric of the relative rule, summed as the fit sums it.
  std::vector<double> inv_d(static_cast<std::size_t>(p.L));
  for (std::int64_t l = 0; l < p.L; ++l) {
    double d = 0;
    for (std::int64_t k = 0; k < p.K; ++k) { d = d + p.X[k * p.L + l] * p.X[k * p.L + l]; }
    inv_d[l] = 1.0 / d;
  }
  for (std::int64_t n = 0; n < p.N; ++n) {
    double b2 = 0;
    for (std::int64_t l = 0; l < p.L; ++l) {
      double b = 0;
      for (std::int64_t k = 0; k < p.K; ++k) { b += p.X[k * p.L + l] * p.Y[k * p.N + n]; }
      b2 += inv_d[l] * b * b;
    }
    // The user's loop with the relative rule, written out: stop after the update
    // whose gradient has Σ g_l²/d_l ≤ rtol²·Σ b_l²/d_l.
    std::vector<double> w(static_cast<std::size_t>(p.L), 0.0), g;
    std::int64_t want = -1;
    for (std::int64_t it = 1; it <= o.max_iterations && want < 0; ++it) {
      fusekit::test::direct_gradient_reference(p, n, w, g);
      double gd2 = 0;
      for (std::int64_t l = 0; l < p.L; ++l) { gd2 += inv_d[l] * g[l] * g[l]; }
      for (std::int64_t l = 0; l < p.L; ++l) { w[l] -= lr * g[l]; }
      if (gd2 <= rtol * rtol * b2) { want = it; }
    }
    ASSERT_GT(want, 0);
    EXPECT_EQ(r.outputs[n].iterations, want) << n;
    EXPECT_EQ(r.outputs[n].status, fit_status::converged);
    EXPECT_EQ(r.outputs[n].rule, stop_rule::relative_tolerance);
  }
  o.relative_tolerance = 0;  // off: the absolute rule alone, which 1e-300 never meets here
  o.max_iterations = 5000;
  auto const off = cpu_fit(p, W, o);
  for (const auto& out : off.outputs) { EXPECT_NE(out.rule, stop_rule::relative_tolerance); }
}

// The seed's absolute rule stays the default and says so in the report.
TEST(RelativeTolerance, AbsoluteRuleIsTheDefaultAndIsReported) {
  auto const p = make_problem<double>(40, 9, 2, 2, true, 0.0);
  gd_options o;
  EXPECT_EQ(o.relative_tolerance, 0.0);
  EXPECT_EQ(o.method, gd_method::plain);
  EXPECT_EQ(o.preconditioner, gd_preconditioner::none);
  std::vector<double> W;
  auto const r = cpu_fit(p, W, o);
  for (const auto& out : r.outputs) {
    EXPECT_EQ(out.status, fit_status::converged);
    EXPECT_EQ(out.rule, stop_rule::tolerance);
    EXPECT_LT(out.grad_norm2, o.tolerance.value_or(fusekit::gd_options::default_tolerance));
  }
}

}  // namespace
