// SPDX-License-Identifier: Apache-2.0
// train.hpp, called the way a careless or unlucky user would: degenerate and
// extreme data, options out of range or out of the type's range, and random
// problems with random options. Every call either throws invalid_argument
// naming the argument, with W untouched, or returns statuses that tell the
// truth: `converged` only with finite weights whose last gradient met the
// tolerance. Also the loop's exact behaviour against independent copies:
// Nesterov's iteration counts, the automatic rate against a long-double
// eigenvalue, the divergence threshold, the uniform start and the automatic
// formulation's boundary.
#include <fusekit/fusekit.hpp>
#include <fusekit/linear_association.hpp>

#include "common/test_support.hpp"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using fusekit::fit_status;
using fusekit::gd_formulation;
using fusekit::gd_init;
using fusekit::gd_method;
using fusekit::gd_options;
using fusekit::test::cpu_fit;
using fusekit::test::make_problem;
using fusekit::test::problem;
template <class T>
using cmatrix = fusekit::matrix<const T>;

// Rejected with every needle in the message, and W's bytes as they were.
template <class T>
void expect_rejected(const problem<T>& p, const gd_options& o, const std::vector<std::string>& needles) {
  std::vector<T> W(static_cast<std::size_t>(p.N * p.L));
  for (std::size_t i = 0; i < W.size(); ++i) { W[i] = static_cast<T>(0.5 + static_cast<double>(i)); }
  std::vector<T> const before = W;
  try {
    fusekit::fit(fusekit::cpu{}, cmatrix<T>(p.X.data(), p.K, p.L), cmatrix<T>(p.Y.data(), p.K, p.N),
                 fusekit::matrix<T>(W.data(), p.N, p.L), o);
    ADD_FAILURE() << "not rejected: " << needles[0];
  } catch (const fusekit::invalid_argument& e) {
    for (const auto& needle : needles) { EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); }
  }
  EXPECT_EQ(0, std::memcmp(W.data(), before.data(), W.size() * sizeof(T))) << "W written before rejecting";
}

template <class T>
problem<T> scaled(problem<T> p, double s) {
  for (auto& x : p.X) { x = static_cast<T>(static_cast<double>(x) * s); }
  return p;
}

// ---- degenerate data: no automatic rate, a clear error -----------------------

TEST(AdversarialFit, ZeroXHasNoAutomaticRate) {
  auto p = make_problem<double>(30, 5, 2, 1, false, 0.0);
  for (auto& x : p.X) { x = 0; }
  for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
    gd_options o;
    o.formulation = f;
    expect_rejected(p, o, {"fusekit::fit", "λmax", "= 0", "learning_rate"});
  }
  // With a rate given, a zero X is a problem every W solves: the gradient is 0 at once.
  gd_options o;
  o.learning_rate = 0.1;
  std::vector<double> W;
  auto const r = cpu_fit(p, W, o);
  for (const auto& out : r.outputs) {
    EXPECT_EQ(out.status, fit_status::converged);
    EXPECT_EQ(out.iterations, 1);
  }
  for (double w : W) { EXPECT_EQ(w, 0.0); }
}

TEST(AdversarialFit, TinyOrHugeXGetsAnAutomaticRate) {
  // X·1e-160, whose XᵀX underflows in double: rescaled by one power of two
  // for every column also without a preconditioner (docs/trainer.md,
  // "Features in extreme units"), so the automatic rate exists and the fit
  // runs, W untouched by the scaling but for W_true's units.
  auto const pd = make_problem<double>(40, 6, 2, 2, false, 0.0);
  {
    std::vector<double> W;
    gd_options o;
    o.max_iterations = 10;
    auto const r = cpu_fit(scaled(pd, 1e-160), W, o);
    EXPECT_GT(r.learning_rate, 0.0);
    for (double w : W) { EXPECT_TRUE(std::isfinite(w)); }
  }
  // Float data: the CPU forms XᵀX and iterates in double (cpu_compute_t), so
  // X·1e-25 (1/λ ≈ 1e48, not a float) and X·1e20 (XᵀX beyond float) fit, and
  // W = W_true / s is a float again.
  auto const pf = make_problem<float>(40, 6, 2, 3, false, 0.0);
  for (double s : {1e-25, 1e20}) {
    auto const p = scaled(pf, s);
    gd_options o;
    o.method = gd_method::conjugate_gradient;
    o.preconditioner = fusekit::gd_preconditioner::jacobi;
    o.relative_tolerance = 1e-12;
    o.tolerance = 0;  // the relative rule alone
    std::vector<float> W;
    auto const r = cpu_fit(p, W, o);
    EXPECT_TRUE(r.all_converged()) << s;
    for (std::size_t i = 0; i < W.size(); ++i) {
      double const want = static_cast<double>(p.W_true[i]) / s;
      EXPECT_NEAR(W[i], want, 1e-5 * std::fabs(want)) << s << " " << i;
    }
    o.method = gd_method::plain;  // the automatic rate exists in double
    o.max_iterations = 10;
    EXPECT_GT(cpu_fit(p, W, o).learning_rate, 0.0) << s;
  }
}

// ---- options checked in the precision they are used in ---------------------

TEST(AdversarialFit, OptionsOutOfTheirTypesRange) {
  auto const pf = make_problem<float>(20, 4, 2, 4, false, 0.0);
  auto const pd = make_problem<double>(20, 4, 2, 4, false, 0.0);
  for (double lr : {1e39, 1e-50, 0.0, -1.0, double(NAN), double(INFINITY), -double(INFINITY)}) {
    gd_options o;
    o.learning_rate = lr;
    expect_rejected(pf, o, {"learning_rate", "float"});
  }
  for (double lr : {0.0, -0.0, double(NAN), -double(INFINITY)}) {
    gd_options o;
    o.learning_rate = lr;
    expect_rejected(pd, o, {"learning_rate", "double"});
  }
  for (double tol : {1e39, 1e-50, 0.0, -1e-8, double(NAN), double(INFINITY)}) {
    gd_options o;
    o.tolerance = tol;
    expect_rejected(pf, o, {"tolerance", "float"});
  }
  gd_options o;
  o.learning_rate = 1e30;  // a float, and finite: accepted
  o.max_iterations = 3;
  std::vector<float> W;
  EXPECT_NO_THROW(cpu_fit(pf, W, o));
}

TEST(AdversarialFit, CountsAndEnumsOutOfRange) {
  auto const p = make_problem<double>(20, 4, 2, 5, false, 0.0);
  {
    gd_options o;
    o.stall_window = 0;
    expect_rejected(p, o, {"stall_window", "0", "at least 1"});
  }
  {
    gd_options o;
    o.max_iterations = -5;
    expect_rejected(p, o, {"max_iterations", "-5"});
  }
  for (std::int64_t steps : {std::int64_t{-1}, gd_options::max_refinement_steps + 1}) {
    gd_options o;
    o.refinement_steps = steps;
    expect_rejected(p, o, {"refinement_steps", std::to_string(steps), "0 .. 8"});
  }
  {
    gd_options o;
    o.method = static_cast<gd_method>(7);
    expect_rejected(p, o, {"method", "7", "plain, nesterov or conjugate_gradient"});
  }
  {
    gd_options o;
    o.preconditioner = static_cast<fusekit::gd_preconditioner>(3);
    expect_rejected(p, o, {"preconditioner", "3", "none, jacobi or cholesky"});
  }
  for (auto m : {gd_method::plain, gd_method::nesterov}) {  // a full preconditioner is CG's alone
    gd_options o;
    o.method = m;
    o.preconditioner = fusekit::gd_preconditioner::cholesky;
    expect_rejected(p, o, {"preconditioner cholesky needs method conjugate_gradient", fusekit::to_string(m)});
  }
  for (double bad : {-1e-3, 1.0, 2.0, static_cast<double>(NAN), static_cast<double>(INFINITY)}) {
    gd_options o;
    o.relative_tolerance = bad;
    expect_rejected(p, o, {"relative_tolerance", "0 (off) or in [1e-150, 1)"});
    // The same beside tolerance 0 (recommended()'s): the message names the
    // field that is wrong, relative_tolerance, not the tolerance it switches off.
    gd_options r = gd_options::recommended();
    r.relative_tolerance = bad;
    expect_rejected(p, r, {"relative_tolerance is", "0 (off) or in [1e-150, 1)"});
  }
  // A tolerance that is not a number is rejected beside a relative tolerance
  // too, also under -ffast-math (where NaN == 0.0 may fold to true): the check
  // reads the bits.
  for (double bad : {static_cast<double>(NAN), -static_cast<double>(NAN), static_cast<double>(INFINITY), -1e-8}) {
    gd_options o = gd_options::recommended();
    o.tolerance = bad;
    expect_rejected(p, o, {"tolerance is", "positive and finite"});
  }
  {
    gd_options o;
    o.formulation = static_cast<gd_formulation>(-1);
    expect_rejected(p, o, {"formulation", "-1"});
  }
  {
    gd_options o;
    o.init = static_cast<gd_init>(3);
    expect_rejected(p, o, {"init", "3"});
  }
  std::vector<double> W(8);
  EXPECT_THROW(fusekit::fit(fusekit::cpu{-2}, cmatrix<double>(p.X.data(), 20, 4), cmatrix<double>(p.Y.data(), 20, 2),
                            fusekit::matrix<double>(W.data(), 2, 4)),
               fusekit::invalid_argument);
}

// ---- a success is a right answer ---------------------------------------------

// gradᵀgrad ≈ 1e20 meets a tolerance of 1e30, but the step lr·grad ≈ 1e40
// overflows float: the weights are not a solution, so the output diverged.
TEST(AdversarialFit, ConvergedNeverHasNonFiniteWeights) {
  auto p = make_problem<float>(20, 3, 2, 6, true, 0.0);
  for (auto& x : p.X) { x *= 1e4f; }
  for (auto& y : p.Y) { y *= 1e4f; }
  for (auto m : {gd_method::plain, gd_method::nesterov}) {
    for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
      gd_options o;
      o.learning_rate = 1e30;
      o.tolerance = 1e30;
      o.method = m;
      o.formulation = f;
      std::vector<float> W;
      auto const r = cpu_fit(p, W, o);
      for (std::int64_t n = 0; n < p.N; ++n) {
        bool finite = true;
        for (std::int64_t l = 0; l < p.L; ++l) { finite = finite && fusekit::test::is_finite(W[n * p.L + l]); }
        EXPECT_FALSE(finite);
        EXPECT_EQ(r.outputs[n].status, fit_status::diverged) << fusekit::to_string(r.outputs[n].status);
      }
    }
  }
}

// Random problems, random options, some absurd: whatever the status, it is true.
TEST(AdversarialFit, RandomOptionsGiveTruthfulStatuses) {
  std::mt19937 gen(2024);
  std::uniform_int_distribution<int> dim(1, 12), pick(0, 5);
  std::uniform_real_distribution<double> log_scale(-8.0, 8.0);
  for (int trial = 0; trial < 150; ++trial) {
    std::int64_t const K = dim(gen), L = dim(gen), N = dim(gen) % 4 + 1;
    auto p = make_problem<double>(K, L, N, static_cast<std::uint32_t>(trial), trial % 2 == 0, 0.1);
    double const scale = std::pow(10.0, log_scale(gen) / 2);
    for (auto& x : p.X) { x *= scale; }
    gd_options o;
    if (pick(gen) < 4) { o.learning_rate = std::pow(10.0, log_scale(gen)); }
    o.tolerance = std::pow(10.0, log_scale(gen) * 2);
    o.max_iterations = 1 + pick(gen) * 400;
    o.stall_window = 1 + pick(gen) * 50;
    o.method = static_cast<gd_method>(pick(gen) % 3);
    o.preconditioner = static_cast<fusekit::gd_preconditioner>(pick(gen) % 2);
    if (pick(gen) < 2) { o.relative_tolerance = std::pow(10.0, -1 - pick(gen) * 3); }
    o.formulation = static_cast<gd_formulation>(pick(gen) % 3);
    o.init = static_cast<gd_init>(pick(gen) % 3);
    std::vector<double> W(static_cast<std::size_t>(N * L), 0.25);
    fusekit::fit_report r;
    try {
      r = fusekit::fit(fusekit::cpu{}, cmatrix<double>(p.X.data(), K, L), cmatrix<double>(p.Y.data(), K, N),
                       fusekit::matrix<double>(W.data(), N, L), o);
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("learning rate"), std::string::npos) << e.what();
      continue;  // only the automatic rate may be impossible for this data
    }
    ASSERT_EQ(r.outputs.size(), static_cast<std::size_t>(N));
    for (std::int64_t n = 0; n < N; ++n) {
      const auto& out = r.outputs[n];
      bool finite = true;
      for (std::int64_t l = 0; l < L; ++l) { finite = finite && fusekit::test::is_finite(W[n * L + l]); }
      EXPECT_GE(out.iterations, 0);
      EXPECT_LE(out.iterations, o.max_iterations);
      using fusekit::stop_rule;
      if (out.status == fit_status::converged) {
        EXPECT_TRUE(finite) << "trial " << trial;
        EXPECT_TRUE(out.rule == stop_rule::tolerance || out.rule == stop_rule::relative_tolerance) << "trial " << trial;
        if (out.rule == stop_rule::tolerance) {
          EXPECT_LT(out.grad_norm2, o.tolerance.value_or(fusekit::gd_options::default_tolerance)) << "trial " << trial;
        }
        if (out.rule == stop_rule::relative_tolerance) { EXPECT_GT(o.relative_tolerance, 0.0) << "trial " << trial; }
      }
      if (out.status == fit_status::diverged) {
        EXPECT_TRUE(out.rule == stop_rule::non_finite || out.rule == stop_rule::growth) << "trial " << trial;
      }
      if (out.status == fit_status::stalled) { EXPECT_EQ(out.rule, stop_rule::rounding_floor) << "trial " << trial; }
      if (out.status == fit_status::max_iterations) {
        EXPECT_EQ(out.rule, stop_rule::max_iterations) << "trial " << trial;
        EXPECT_EQ(out.iterations, o.max_iterations) << "trial " << trial;
      }
      if (!finite) { EXPECT_EQ(out.status, fit_status::diverged) << "trial " << trial; }
    }
  }
}

// ---- the loop, against independent copies ------------------------------------

// Nesterov with adaptive restart, written out plainly (direct formulation, the
// sums in index order): momentum j/(j+3), gradient at the extrapolated point,
// restart when gᵀ(w_next − w) > 0, stop when gradᵀgrad < tol after the update.
std::int64_t nesterov_reference_iterations(const problem<double>& p, std::int64_t n, double lr, double tol,
                                           std::int64_t max_iterations) {
  std::int64_t const L = p.L;
  std::vector<double> w(L, 0.0), prev(L, 0.0), point(L), g;
  std::int64_t j = 0;
  for (std::int64_t it = 0; it < max_iterations; ++it) {
    double const mu = static_cast<double>(j) / static_cast<double>(j + 3);
    for (std::int64_t l = 0; l < L; ++l) { point[l] = w[l] + mu * (w[l] - prev[l]); }
    double const g2 = fusekit::test::direct_gradient_reference(p, n, point, g);
    double uphill = 0;
    for (std::int64_t l = 0; l < L; ++l) {
      double const next = point[l] - lr * g[l];
      uphill = uphill + g[l] * (next - w[l]);
      prev[l] = w[l];
      w[l] = next;
    }
    j = uphill > 0 ? 0 : j + 1;
    if (g2 < tol) { return it + 1; }
  }
  return -1;
}

TEST(AdversarialFit, NesterovTakesExactlyTheReferenceIterations) {
  auto const p = make_problem<double>(60, 8, 4, 7, true, 0.0);
  gd_options o;
  o.learning_rate = 0.005;
  o.tolerance = 1e-12;
  o.max_iterations = 200000;
  o.stall_window = 200000;
  o.method = gd_method::nesterov;
  o.formulation = gd_formulation::direct;
  std::vector<double> W;
  auto const r = cpu_fit(p, W, o);
  for (std::int64_t n = 0; n < p.N; ++n) {
    std::int64_t const want = nesterov_reference_iterations(p, n, 0.005, 1e-12, o.max_iterations);
    ASSERT_GT(want, 0);
    EXPECT_EQ(r.outputs[n].status, fit_status::converged);
#if defined(__FAST_MATH__)  // reassociated sums: the same iterates up to rounding
    EXPECT_NEAR(static_cast<double>(r.outputs[n].iterations), static_cast<double>(want), 2 + 0.01 * want) << n;
#else
    EXPECT_EQ(r.outputs[n].iterations, want) << "output " << n;
#endif
  }
}

// λmax of A = XᵀX by Jacobi rotations in long double: an independent algorithm.
long double largest_eigenvalue(const problem<double>& p) {
  std::int64_t const L = p.L, K = p.K;
  std::vector<long double> A(L * L, 0);
  for (std::int64_t i = 0; i < L; ++i) {
    for (std::int64_t j = 0; j < L; ++j) {
      for (std::int64_t k = 0; k < K; ++k) {
        A[i * L + j] += static_cast<long double>(p.X[k * L + i]) * p.X[k * L + j];
      }
    }
  }
  for (int sweep = 0; sweep < 100; ++sweep) {
    long double off = 0;
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t j = i + 1; j < L; ++j) { off += A[i * L + j] * A[i * L + j]; }
    }
    if (off < 1e-40L) { break; }
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t j = i + 1; j < L; ++j) {
        long double const aij = A[i * L + j];
        if (fabsl(aij) < 1e-300L) { continue; }
        long double const theta = (A[j * L + j] - A[i * L + i]) / (2 * aij);
        long double const t = (theta >= 0 ? 1 : -1) / (fabsl(theta) + sqrtl(theta * theta + 1));
        long double const c = 1 / sqrtl(t * t + 1), s = t * c;
        for (std::int64_t k = 0; k < L; ++k) {  // A ← Jᵀ A J
          long double const aki = A[k * L + i], akj = A[k * L + j];
          A[k * L + i] = c * aki - s * akj;
          A[k * L + j] = s * aki + c * akj;
        }
        for (std::int64_t k = 0; k < L; ++k) {
          long double const aik = A[i * L + k], ajk = A[j * L + k];
          A[i * L + k] = c * aik - s * ajk;
          A[j * L + k] = s * aik + c * ajk;
        }
      }
    }
  }
  long double lambda = A[0];
  for (std::int64_t i = 1; i < L; ++i) { lambda = A[i * L + i] > lambda ? A[i * L + i] : lambda; }
  return lambda;
}

TEST(AdversarialFit, AutomaticRateIsOneOverTheLargestEigenvalue) {
  for (std::uint32_t seed : {8u, 9u, 10u}) {
    auto const p = make_problem<double>(200, 15, 1, seed, seed % 2 == 0, 0.0);
    long double const lambda = largest_eigenvalue(p);
    for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
      gd_options o;
      o.formulation = f;
      o.max_iterations = 1;
      std::vector<double> W;
      double const lr = cpu_fit(p, W, o).learning_rate;
      EXPECT_NEAR(static_cast<double>(lr * lambda), 1.0, 1e-8) << "seed " << seed << " " << fusekit::to_string(f);
    }
  }
}

// With Jacobi the automatic rate is 1/λmax(M^½ XᵀX M^½): the largest
// eigenvalue of the features scaled to unit norm, on both formulations
// (the direct one applies M^½ by its square roots), in spread units.
TEST(AdversarialFit, JacobiRateIsOneOverTheLargestEigenvalueOfTheScaledFeatures) {
  for (std::uint32_t seed : {11u, 12u}) {
    auto p = make_problem<double>(200, 9, 1, seed, seed % 2 == 0, 0.0);
    auto scaled = p;
    for (std::int64_t l = 0; l < p.L; ++l) {
      double const unit = std::pow(10.0, static_cast<double>(l % 5) - 2.0);
      long double norm2 = 0;
      for (std::int64_t k = 0; k < p.K; ++k) {
        p.X[k * p.L + l] *= unit;
        norm2 += static_cast<long double>(p.X[k * p.L + l]) * p.X[k * p.L + l];
      }
      for (std::int64_t k = 0; k < p.K; ++k) {
        scaled.X[k * p.L + l] = static_cast<double>(p.X[k * p.L + l] / sqrtl(norm2));
      }
    }
    long double const lambda = largest_eigenvalue(scaled);
    for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
      gd_options o;
      o.formulation = f;
      o.preconditioner = fusekit::gd_preconditioner::jacobi;
      o.max_iterations = 1;
      std::vector<double> W;
      double const lr = cpu_fit(p, W, o).learning_rate;
      EXPECT_NEAR(static_cast<double>(lr * lambda), 1.0, 1e-8) << "seed " << seed << " " << fusekit::to_string(f);
    }
  }
}

// The power iteration's uniform start is orthogonal to the one row
// (1, −1, −1, 1): A v = 0 there. Found by the property tests: the fit threw
// "λmax(XᵀX) = 0 ... X is zero". It now restarts from e_0, e_1, ...: λ = 4
// with Jacobi (the row scaled to ±1), ‖x‖² without.
TEST(AdversarialFit, AutomaticRateOfARowOrthogonalToTheUniformStart) {
  problem<double> p{1, 4, 1, {3.0, -3.0, -3.0, 3.0}, {1.0}, {}};
  for (auto pre : {fusekit::gd_preconditioner::none, fusekit::gd_preconditioner::jacobi}) {
    gd_options o;
    o.preconditioner = pre;
    o.max_iterations = 1;
    std::vector<double> W;
    double const lr = cpu_fit(p, W, o).learning_rate;
    EXPECT_DOUBLE_EQ(lr, pre == fusekit::gd_preconditioner::jacobi ? 0.25 : 1.0 / 36.0);
  }
}

// A float fit computes in double and rounds W once: an output any of whose
// weights overflows float there is not a success, whichever weight it is.
TEST(AdversarialFit, FloatWeightsThatOverflowAnywhereInTheRowAreDiverged) {
  for (std::int64_t big : {0, 2}) {  // the first or a middle weight overflows, the last does not
    problem<float> p{60, 4, 1, std::vector<float>(240), std::vector<float>(60), {}};
    std::mt19937 gen(5);
    std::normal_distribution<float> nd;
    for (std::int64_t k = 0; k < 60; ++k) {
      for (std::int64_t l = 0; l < 4; ++l) { p.X[k * 4 + l] = l == big ? 1e-30f * (1.0f + nd(gen)) : nd(gen); }
      // weight `big` about 1e40 > FLT_MAX (the product in double: no float overflow on the way)
      p.Y[k] = static_cast<float>(1e40 * static_cast<double>(p.X[k * 4 + big]) + static_cast<double>(nd(gen)));
    }
    std::vector<float> W;
    auto const r = cpu_fit(p, W, gd_options::recommended());
    EXPECT_EQ(r.outputs[0].status, fit_status::diverged) << "weight " << big << ": " << W[big];
    EXPECT_EQ(r.outputs[0].rule, fusekit::stop_rule::non_finite) << "weight " << big;
  }
}

// Divergence: gradᵀgrad above 10^12 times its first value. The reference loop
// finds the first iteration where that holds; fit must stop exactly there.
TEST(AdversarialFit, DivergenceThresholdIsPinned) {
  auto const p = make_problem<double>(100, 6, 2, 11, true, 0.0);
  gd_options probe;
  probe.max_iterations = 1;
  std::vector<double> W;
  double const lr = 2.5 * cpu_fit(p, W, probe).learning_rate;
  std::int64_t const L = p.L, N = p.N;
  for (std::int64_t n = 0; n < N; ++n) {
    std::vector<double> w(L, 0.0), g;
    double first = -1;
    std::int64_t want = -1;
    for (std::int64_t it = 0; it < 10000 && want < 0; ++it) {
      double const g2 = fusekit::test::direct_gradient_reference(p, n, w, g);
      if (first < 0) {
        first = g2;
      } else if (g2 > 1e12 * first) {
        want = it;  // stops before this iteration's update
      }
      for (std::int64_t l = 0; l < L; ++l) { w[l] = w[l] - lr * g[l]; }
    }
    ASSERT_GT(want, 0);
    gd_options o;
    o.learning_rate = lr;
    o.formulation = gd_formulation::direct;
    o.max_iterations = 100000;
    auto const r = cpu_fit(p, W, o);
    EXPECT_EQ(r.outputs[n].status, fit_status::diverged);
#if defined(__FAST_MATH__)
    EXPECT_NEAR(static_cast<double>(r.outputs[n].iterations), static_cast<double>(want), 1.0);
#else
    EXPECT_EQ(r.outputs[n].iterations, want) << "output " << n;
#endif
  }
}

// gd_init::uniform starts output n at u(n·L + l) = (hash(n·L + l, seed) >> 8) / 2^24,
// hash = splitmix64's finalizer of i·φ + seed·c + d: rewritten here from the formula.
double uniform_start(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ull + seed * 0xd1b54a32d192ed03ull + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  auto const bits = static_cast<std::uint32_t>((z ^ (z >> 31)) >> 32);
  return std::ldexp(static_cast<double>(bits >> 8), -24);
}

TEST(AdversarialFit, UniformStartFollowsItsFormula) {
  // Targets near the uniform start, so that the one update improves on it and
  // on W = 0 (an unconverged fit returns the best of them).
  auto p = make_problem<double>(30, 5, 3, 12, false, 0.0);
  for (std::int64_t n = 0; n < p.N; ++n) {
    for (std::int64_t k = 0; k < p.K; ++k) {
      double y = 0.01 * std::cos(static_cast<double>(k + n));
      for (std::int64_t l = 0; l < p.L; ++l) {
        y += p.X[k * p.L + l] * uniform_start(static_cast<std::uint64_t>(n * p.L + l), 77);
      }
      p.Y[k * p.N + n] = y;
    }
  }
  gd_options o;
  o.init = gd_init::uniform;
  o.seed = 77;
  o.learning_rate = 1e-3;
  o.max_iterations = 1;
  o.formulation = gd_formulation::direct;
  std::vector<double> W;
  cpu_fit(p, W, o);
  std::int64_t const L = p.L, N = p.N;
  for (std::int64_t n = 0; n < N; ++n) {
    std::vector<double> w(L), g;
    for (std::int64_t l = 0; l < L; ++l) { w[l] = uniform_start(static_cast<std::uint64_t>(n * L + l), 77); }
    fusekit::test::direct_gradient_reference(p, n, w, g);
    for (std::int64_t l = 0; l < L; ++l) { EXPECT_NEAR(W[n * L + l], w[l] - 1e-3 * g[l], 1e-12) << n << "," << l; }
  }
}

TEST(AdversarialFit, AutomaticFormulationSwitchesAboveKEqualsL) {
  std::vector<double> W;
  gd_options o;
  o.max_iterations = 2;
  EXPECT_EQ(cpu_fit(make_problem<double>(6, 6, 1, 13, false, 0.1), W, o).formulation, gd_formulation::direct);
  EXPECT_EQ(cpu_fit(make_problem<double>(7, 6, 1, 14, false, 0.1), W, o).formulation, gd_formulation::gram);
}

// The monitor on a made-up gradient sequence: a window without 0.1% progress
// is reported exactly stall_window iterations into it (the step then asks
// whether g is at the rounding floor), divergence exactly when gradᵀgrad
// exceeds 10^12 times its first value.
TEST(AdversarialFit, MonitorStopsExactlyOnItsRules) {
  using fusekit::detail::monitor_verdict;
  fusekit::detail::gd_monitor<double> flat{5};
  for (std::int64_t it = 0; it < 5; ++it) { ASSERT_EQ(flat.check(1.0, it), monitor_verdict::go_on) << it; }
  EXPECT_EQ(flat.check(1.0, 5), monitor_verdict::no_progress);
  for (std::int64_t it = 6; it < 10; ++it) { ASSERT_EQ(flat.check(1.0, it), monitor_verdict::go_on) << it; }
  EXPECT_EQ(flat.check(1.0, 10), monitor_verdict::no_progress);  // the next window
  fusekit::detail::gd_monitor<double> slow{3};                   // 0.2% per window is progress enough
  for (std::int64_t it = 0; it < 30; ++it) {
    ASSERT_EQ(slow.check(std::pow(0.998, static_cast<double>(it) / 3), it), monitor_verdict::go_on) << it;
  }
  fusekit::detail::gd_monitor<float> grow{1000};
  EXPECT_EQ(grow.check(2.0f, 0), monitor_verdict::go_on);
  EXPECT_EQ(grow.check(2e12f, 1), monitor_verdict::go_on);     // 10^12 times: not yet
  EXPECT_EQ(grow.check(2.1e12f, 2), monitor_verdict::growth);  // above it
  fusekit::detail::gd_monitor<double> dip{1000};               // against the first value, not the best
  EXPECT_EQ(dip.check(2.0, 0), monitor_verdict::go_on);
  EXPECT_EQ(dip.check(1.0, 1), monitor_verdict::go_on);
  EXPECT_EQ(dip.check(1.5e12, 2), monitor_verdict::go_on);
  fusekit::detail::gd_monitor<float> nan{1000};
  EXPECT_EQ(nan.check(NAN, 0), monitor_verdict::non_finite);
  EXPECT_EQ(nan.check(INFINITY, 0), monitor_verdict::non_finite);
}

// ---- predict -----------------------------------------------------------------

TEST(AdversarialPredict, EmptyShapesAndBadViews) {
  std::vector<double> X(12, 1.0), W(8, 2.0), Y(6, -1.0);
  fusekit::predict(fusekit::cpu{}, cmatrix<double>(nullptr, 0, 4), cmatrix<double>(W.data(), 2, 4),
                   fusekit::matrix<double>(nullptr, 0, 2));
  fusekit::predict(fusekit::cpu{}, cmatrix<double>(X.data(), 3, 0), cmatrix<double>(nullptr, 2, 0),
                   fusekit::matrix<double>(Y.data(), 3, 2));
  for (double y : Y) { EXPECT_EQ(y, 0.0); }  // an empty sum is 0
  EXPECT_THROW(fusekit::predict(fusekit::cpu{}, cmatrix<double>(X.data(), 3, 4), cmatrix<double>(W.data(), 2, 4),
                                fusekit::matrix<double>(X.data() + 2, 3, 2)),
               fusekit::invalid_argument);  // Y_hat overlaps X
  EXPECT_THROW(fusekit::predict(fusekit::cpu{}, cmatrix<double>(X.data(), 3, 4), cmatrix<double>(W.data(), 2, 4),
                                fusekit::matrix<double>(W.data() + 1, 3, 2)),
               fusekit::invalid_argument);  // Y_hat overlaps W
  auto* odd = reinterpret_cast<double*>(reinterpret_cast<unsigned char*>(Y.data()) + 4);
  EXPECT_THROW(fusekit::predict(fusekit::cpu{}, cmatrix<double>(X.data(), 1, 4), cmatrix<double>(W.data(), 1, 4),
                                fusekit::matrix<double>(odd, 1, 1)),
               fusekit::invalid_argument);
}

// Extents whose element count wraps int64: K·L of 2^62 × 4 is 0 modulo 2^64,
// which let null views through to a segfault. Every count is now checked for
// overflow, naming the matrix, before anything is read.
TEST(AdversarialPredict, ExtentsWhoseProductWrapsAreRejected) {
  std::int64_t const huge = std::int64_t{1} << 62;
  std::vector<double> W(8, 1.0);
  try {
    fusekit::predict(fusekit::cpu{}, cmatrix<double>(nullptr, huge, 4), cmatrix<double>(W.data(), 2, 4),
                     fusekit::matrix<double>(nullptr, huge, 2));
    ADD_FAILURE() << "accepted";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("than a 64-bit address space holds"), std::string::npos) << e.what();
  }
  std::vector<double> Y(4, 1.0);
  EXPECT_THROW(fusekit::fit(fusekit::cpu{}, cmatrix<double>(nullptr, huge, 4), cmatrix<double>(nullptr, huge, 1),
                            fusekit::matrix<double>(W.data(), 1, 4)),
               fusekit::invalid_argument);
  // A count that fits int64 but whose bytes do not (2^61 doubles).
  EXPECT_THROW(
      fusekit::predict(fusekit::cpu{}, cmatrix<double>(nullptr, std::int64_t{1} << 59, 4),
                       cmatrix<double>(W.data(), 2, 4), fusekit::matrix<double>(nullptr, std::int64_t{1} << 59, 2)),
      fusekit::invalid_argument);
  // The same with views that are not null: the size check is what rejects
  // them (a null check cannot), on fit and predict, the bytes wrapping too.
  std::vector<double> buffer(64, 1.0);
  for (std::int64_t rows : {huge, std::int64_t{1} << 59}) {
    try {
      fusekit::predict(fusekit::cpu{}, cmatrix<double>(buffer.data(), rows, 4), cmatrix<double>(W.data(), 2, 4),
                       fusekit::matrix<double>(buffer.data() + 32, rows, 2));
      ADD_FAILURE() << "accepted " << rows;
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("than a 64-bit address space holds"), std::string::npos) << e.what();
    }
    try {
      fusekit::fit(fusekit::cpu{}, cmatrix<double>(buffer.data(), rows, 4),
                   cmatrix<double>(buffer.data() + 32, rows, 1), fusekit::matrix<double>(W.data(), 1, 4));
      ADD_FAILURE() << "accepted " << rows;
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("than a 64-bit address space holds"), std::string::npos) << e.what();
    }
  }
  // inputs × outputs that wraps: the model had no storage.
  EXPECT_THROW((fusekit::linear_association<float>(std::int64_t{1} << 32, std::int64_t{1} << 32)),
               fusekit::invalid_argument);
}

// A warm start reads W, so W must be finite; any other start overwrites W,
// so a non-finite W is fine there.
TEST(AdversarialFit, WarmStartNeedsFiniteWeightsOtherStartsDoNot) {
  auto const p = fusekit::test::make_problem<double>(50, 3, 2, 3, false, 0.0);
  using cm = fusekit::matrix<const double>;
  cm const X(p.X.data(), 50, 3), Y(p.Y.data(), 50, 2);
  for (auto init : {fusekit::gd_init::warm_start, fusekit::gd_init::zeros, fusekit::gd_init::uniform}) {
    std::vector<double> W(6, 0.5);
    W[4] = std::numeric_limits<double>::quiet_NaN();
    fusekit::gd_options o;
    o.init = init;
    o.max_iterations = 20;
    if (init == fusekit::gd_init::warm_start) {
      try {
        (void)fusekit::fit(fusekit::cpu{}, X, Y, fusekit::matrix<double>(W.data(), 2, 3), o);
        ADD_FAILURE() << "a NaN warm start was accepted";
      } catch (const fusekit::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("W(1, 1), the warm start, is NaN (1 value of W not finite)"),
                  std::string::npos)
            << e.what();
      }
    } else {
      auto const r = fusekit::fit(fusekit::cpu{}, X, Y, fusekit::matrix<double>(W.data(), 2, 3), o);
      EXPECT_EQ(r.outputs.size(), 2u);
      for (double w : W) { EXPECT_TRUE(fusekit::detail::is_finite(w)); }
    }
  }
}

}  // namespace
