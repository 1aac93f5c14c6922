// SPDX-License-Identifier: Apache-2.0
// The descent step and the power iteration of detail/: the very functions the
// GPU kernels run (on a block_team), here on the CPU's serial_team, against
// closed forms. A diagonal A = diag(a) decouples the unknowns: plain descent
// from 0 gives w_t = (b/a)·(1 − (1 − lr·a)^t) per coordinate.
#include <fusekit/detail/train/conjugate_gradient.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/detail/train/power_iteration.hpp>
#include <fusekit/detail/team/cpu_team.hpp>

#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using fusekit::fit_status;
using fusekit::detail::descent_params;
using fusekit::detail::descent_state;
using fusekit::detail::serial_team;

struct diagonal_problem {
  std::vector<double> A, b;
  std::int64_t L;
  explicit diagonal_problem(const std::vector<double>& a, const std::vector<double>& rhs)
      : A(a.size() * a.size(), 0.0), b(rhs), L(static_cast<std::int64_t>(a.size())) {
    for (std::int64_t i = 0; i < L; ++i) { A[static_cast<std::size_t>(i * L + i)] = a[static_cast<std::size_t>(i)]; }
  }
};

descent_params<double> params(double lr, double tol, std::int64_t budget, bool nesterov) {
  return {lr,
          tol,
          budget,
          1000,
          0,
          fusekit::gd_init::zeros,
          nesterov ? fusekit::gd_method::nesterov : fusekit::gd_method::plain,
          false,
          0.0,
          1.0};
}

// The loop every backend runs: gradient at the point, then the shared step.
descent_state<double> descend(const diagonal_problem& pr, const descent_params<double>& p, std::vector<double>& w) {
  serial_team const team;
  std::int64_t const L = pr.L;
  w.assign(static_cast<std::size_t>(L), 0.0);
  std::vector<double> previous(w.size()), point(w.size()), g(w.size());
  fusekit::detail::descent_begin(team, p, 0, L, w.data(), previous.data(), point.data());
  auto const scaling = fusekit::detail::make_scaling(p, static_cast<const double*>(pr.A.data()), L + 1);
  auto s = descent_state<double>::start(
      p, fusekit::detail::gram_terms(team, L, fusekit::detail::element_of<double>{pr.A.data()},
                                     fusekit::detail::element_of<double>{pr.b.data()}, scaling));
  do {
    fusekit::detail::gram_gradient(team, pr.A.data(), pr.b.data(), L, point.data(), g.data());
  } while (fusekit::detail::descent_step(team, p, s, L, w.data(), previous.data(), point.data(),
                                         fusekit::detail::element_of<double>{g.data()}, scaling));
  return s;
}

TEST(DescentStep, PlainMatchesTheClosedFormIterateForIterate) {
  diagonal_problem const pr({1.0, 0.5, 0.25}, {2.0, -1.0, 0.5});
  double const lr = 1.0;  // 1/λmax
  for (std::int64_t t : {1, 2, 7, 40}) {
    std::vector<double> w;
    auto const s = descend(pr, params(lr, 1e-300, t, false), w);
    EXPECT_EQ(s.report.status, fit_status::max_iterations);
    EXPECT_EQ(s.report.iterations, t);
    for (std::size_t i = 0; i < w.size(); ++i) {
      long double const a = pr.A[i * 3 + i], b = pr.b[i];
      long double const exact =
          b / a * (1.0L - std::pow(1.0L - static_cast<long double>(lr) * a, static_cast<long double>(t)));
      EXPECT_NEAR(w[i], static_cast<double>(exact), 1e-14) << "t = " << t << ", i = " << i;
    }
  }
}

TEST(DescentStep, ConvergesWhenTheGradientMeetsTheTolerance) {
  diagonal_problem const pr({1.0, 0.5}, {1.0, 1.0});
  // gᵀg at iterate t = Σ b²(1 − a)^{2t} (lr = 1): the slow coordinate (a = 0.5)
  // dominates, 0.25^t; below 1e-12 first at t = 20 (0.25^20 ≈ 9.1e-13).
  std::vector<double> w;
  auto const s = descend(pr, params(1.0, 1e-12, 1000, false), w);
  EXPECT_EQ(s.report.status, fit_status::converged);
  EXPECT_EQ(s.report.iterations, 21);  // the update with the gradient that met the tolerance counts
  EXPECT_NEAR(w[0], 1.0, 1e-12);
  EXPECT_NEAR(w[1], 2.0, 1e-6);
}

TEST(DescentStep, NesterovReachesTheSameMinimumInFewerSteps) {
  diagonal_problem const pr({1.0, 0.01}, {1.0, 1.0});
  std::vector<double> wp, wn;
  auto const plain = descend(pr, params(1.0, 1e-16, 100000, false), wp);
  auto const nesterov = descend(pr, params(1.0, 1e-16, 100000, true), wn);
  ASSERT_EQ(plain.report.status, fit_status::converged);
  ASSERT_EQ(nesterov.report.status, fit_status::converged);
  EXPECT_LT(nesterov.report.iterations * 3, plain.report.iterations);
  EXPECT_NEAR(wn[1], 100.0, 1e-5);
  EXPECT_NEAR(wp[1], 100.0, 1e-5);
}

TEST(DescentStep, TooLargeARateDivergesAndAnUnreachableToleranceStalls) {
  diagonal_problem const pr({1.0, 0.5}, {1.0, 1.0});
  std::vector<double> w;
  auto const diverged = descend(pr, params(3.0, 1e-12, 100000, false), w);  // |1 − 3| = 2 per step
  EXPECT_EQ(diverged.report.status, fit_status::diverged);
  EXPECT_LT(diverged.report.iterations, 100);
  diagonal_problem const inexact({1.0, 0.3}, {1.0, 0.7});  // 0.7/0.3 is not a double: g stays at rounding level
  auto const stalled = descend(inexact, params(1.0, 1e-300, 100000, false), w);
  EXPECT_EQ(stalled.report.status, fit_status::stalled);
  EXPECT_LT(stalled.report.iterations, 100000);
}

TEST(DescentStep, NonFiniteWeightsAreNeverConverged) {
  // A finite gradient whose update overflows: w = 0 − lr·g with lr·g = inf.
  diagonal_problem const pr({1e-300}, {1e300});
  std::vector<double> w;
  auto const s = descend(pr, params(1e300, 1e300, 10, false), w);  // the first gᵀg (1e600 = inf) ...
  EXPECT_EQ(s.report.status, fit_status::diverged);
  // gᵀg = 1e200 is finite and below the tolerance, but the update 1e300·1e100 overflows.
  diagonal_problem const finite_gradient({1.0}, {1e100});
  auto const t = descend(finite_gradient, params(1e300, std::numeric_limits<double>::max(), 10, false), w);
  EXPECT_FALSE(fusekit::test::is_finite(w[0]));
  EXPECT_EQ(t.report.status, fit_status::diverged);
}

TEST(PowerIteration, FindsTheLargestEigenvalue) {
  // Symmetric 3 × 3 with eigenvalues 4, 2 and 1: Q diag(4, 2, 1) Qᵀ for a rotation Q.
  double const c = std::cos(0.3), s = std::sin(0.3);
  double const Q[3][3] = {{c, -s, 0}, {s, c, 0}, {0, 0, 1}};
  double const d[3] = {4, 2, 1};
  std::vector<double> A(9, 0.0);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 3; ++k) { A[static_cast<std::size_t>(i * 3 + j)] += Q[i][k] * d[k] * Q[j][k]; }
    }
  }
  std::vector<double> v(3), u(3);
  double const lambda = fusekit::detail::symmetric_power_iteration(serial_team{}, A.data(), 3, v.data(), u.data());
  EXPECT_NEAR(lambda, 4.0, 1e-9);
  EXPECT_LE(lambda, 4.0 * (1 + 1e-15));
}

// Slow but real progress is not a stall: λmin/λmax = 10^-7 makes gᵀg fall by
// about 0.02% per window of 1000 iterations, far above the rounding floor, so
// the fit runs to its budget and says so. (The rule before "stalled" meant at
// the floor stopped it after the first window.)
TEST(DescentStep, SlowProgressRunsToTheBudgetInsteadOfStalling) {
  diagonal_problem const pr({1.0, 1e-7}, {1.0, 1.0});
  std::vector<double> w;
  auto const s = descend(pr, params(1.0, 1e-300, 20000, false), w);
  EXPECT_EQ(s.report.status, fit_status::max_iterations);
  EXPECT_EQ(s.report.rule, fusekit::stop_rule::max_iterations);
  EXPECT_EQ(s.report.iterations, 20000);
  EXPECT_NEAR(w[1], -std::expm1(20000 * std::log1p(-1e-7)) / 1e-7, 1e-6);  // still moving along the slow axis
}

// Conjugate gradients on a diagonal A with k distinct eigenvalues end in k
// iterations (exact arithmetic; here to rounding), from any right-hand side;
// with the Jacobi preconditioner M A = I, so in one.
descent_state<double> conjugate(const diagonal_problem& pr, descent_params<double> p, bool jacobi,
                                std::vector<double>& w) {
  serial_team const team;
  std::int64_t const L = pr.L;
  p.method = fusekit::gd_method::conjugate_gradient;
  p.jacobi = jacobi;
  w.assign(static_cast<std::size_t>(L), 0.0);
  std::vector<double> r(w.size()), d(w.size()), q(w.size());
  fusekit::detail::descent_begin(team, p, 0, L, w.data(), r.data(), d.data());
  auto const m = fusekit::detail::make_scaling(p, static_cast<const double*>(pr.A.data()), L + 1);
  auto s = descent_state<double>::start(
      p, fusekit::detail::gram_terms(team, L, fusekit::detail::element_of<double>{pr.A.data()},
                                     fusekit::detail::element_of<double>{pr.b.data()}, m));
  do {
    fusekit::detail::gram_product(team, pr.A.data(), L, d.data(), q.data());
  } while (fusekit::detail::cg_step(team, p, s, L, w.data(), r.data(), d.data(),
                                    fusekit::detail::element_of<double>{q.data()},
                                    fusekit::detail::element_of<double>{pr.b.data()}, m));
  return s;
}

TEST(ConjugateGradientStep, EndsInAsManyIterationsAsDistinctEigenvalues) {
  diagonal_problem const pr({1, 4, 2, 4, 1, 2, 4}, {0.3, -1.2, 2.0, 0.7, -0.4, 1.1, 0.25});  // eigenvalues 1, 2, 4
  std::vector<double> w;
  auto const s = conjugate(pr, params(0.0, 1e-24, 100, false), false, w);
  EXPECT_EQ(s.report.status, fit_status::converged);
  EXPECT_EQ(s.report.iterations, 3);
  for (std::int64_t i = 0; i < pr.L; ++i) { EXPECT_NEAR(w[i], pr.b[i] / pr.A[i * pr.L + i], 1e-13) << i; }
  auto const one = conjugate(pr, params(0.0, 1e-24, 100, false), true, w);
  EXPECT_EQ(one.report.status, fit_status::converged);
  EXPECT_EQ(one.report.iterations, 1);
  for (std::int64_t i = 0; i < pr.L; ++i) { EXPECT_NEAR(w[i], pr.b[i] / pr.A[i * pr.L + i], 1e-15) << i; }
}

// CG's budget counts updates, and an unreachable tolerance ends at the
// rounding floor (stalled), within a few windows.
TEST(ConjugateGradientStep, BudgetAndRoundingFloor) {
  diagonal_problem const pr({1, 3, 7, 20, 50}, {1, 0.3, 0.7, 2, 0.9});
  std::vector<double> w;
  auto const budget = conjugate(pr, params(0.0, 1e-300, 2, false), false, w);
  EXPECT_EQ(budget.report.status, fit_status::max_iterations);
  EXPECT_EQ(budget.report.iterations, 2);
  auto p = params(0.0, 1e-300, 1000000, false);
  p.stall_window = 10;
  auto const floor = conjugate(pr, p, false, w);
  EXPECT_EQ(floor.report.status, fit_status::stalled);
  EXPECT_EQ(floor.report.rule, fusekit::stop_rule::rounding_floor);
  EXPECT_LT(floor.report.iterations, 100);
}

}  // namespace
