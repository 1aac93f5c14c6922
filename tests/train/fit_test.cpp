// SPDX-License-Identifier: Apache-2.0
// The trainer on the host: least-squares accuracy against a long-double
// normal-equations solve, iteration counts against an independent copy of the
// user's loop, the formulations and methods against each other, the stopping
// rules, argument validation and predict. Every iteration here runs
// detail::descent_step and every automatic rate detail::power_iteration, the
// functions both GPU paths run (tests/train/descent_test.cpp checks them alone).
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
#include <type_traits>
#include <vector>

namespace {

using fusekit::fit_status;
using fusekit::gd_formulation;
using fusekit::gd_method;
using fusekit::gd_options;
using fusekit::test::cpu_fit;
using fusekit::test::make_problem;
using fusekit::test::problem;
template <class T>
using cmatrix = fusekit::matrix<const T>;

// Long-double normal equations: A = XᵀX, solutions W*, and ‖A⁻¹‖_F, by Gauss-Jordan.
template <class T>
void normal_equations(const problem<T>& p, std::vector<long double>& W_star, long double& inv_norm) {
  std::int64_t const L = p.L, K = p.K, N = p.N;
  std::vector<long double> M(L * (L + L + N), 0);  // [A | I | B]
  std::int64_t const cols = 2 * L + N;
  for (std::int64_t i = 0; i < L; ++i) {
    for (std::int64_t j = 0; j < L; ++j) {
      long double s = 0;
      for (std::int64_t k = 0; k < K; ++k) { s += static_cast<long double>(p.X[k * L + i]) * p.X[k * L + j]; }
      M[i * cols + j] = s;
    }
    M[i * cols + L + i] = 1;
    for (std::int64_t n = 0; n < N; ++n) {
      long double s = 0;
      for (std::int64_t k = 0; k < K; ++k) { s += static_cast<long double>(p.X[k * L + i]) * p.Y[k * N + n]; }
      M[i * cols + 2 * L + n] = s;
    }
  }
  for (std::int64_t c = 0; c < L; ++c) {
    std::int64_t piv = c;
    for (std::int64_t r = c + 1; r < L; ++r) {
      if (fabsl(M[r * cols + c]) > fabsl(M[piv * cols + c])) { piv = r; }
    }
    for (std::int64_t j = 0; j < cols; ++j) { std::swap(M[c * cols + j], M[piv * cols + j]); }
    long double const d = M[c * cols + c];
    for (std::int64_t j = 0; j < cols; ++j) { M[c * cols + j] /= d; }
    for (std::int64_t r = 0; r < L; ++r) {
      if (r == c) { continue; }
      long double const f = M[r * cols + c];
      for (std::int64_t j = 0; j < cols; ++j) { M[r * cols + j] -= f * M[c * cols + j]; }
    }
  }
  W_star.assign(N * L, 0);
  inv_norm = 0;
  for (std::int64_t i = 0; i < L; ++i) {
    for (std::int64_t j = 0; j < L; ++j) { inv_norm += M[i * cols + L + j] * M[i * cols + L + j]; }
    for (std::int64_t n = 0; n < N; ++n) { W_star[n * L + i] = M[i * cols + 2 * L + n]; }
  }
  inv_norm = sqrtl(inv_norm);
}

// The user's loop, written out independently: lr, zeros start, tol on gradᵀgrad.
std::int64_t reference_iterations(const problem<double>& p, std::int64_t n, double lr, double tol,
                                  std::int64_t max_iterations) {
  std::int64_t const K = p.K, L = p.L, N = p.N;
  std::vector<double> w(L, 0.0), delta(K), grad(L);
  for (std::int64_t it = 1; it <= max_iterations; ++it) {
    for (std::int64_t k = 0; k < K; ++k) {
      double xw = 0;
      for (std::int64_t l = 0; l < L; ++l) { xw += p.X[k * L + l] * w[l]; }
      delta[k] = xw - p.Y[k * N + n];
    }
    for (std::int64_t l = 0; l < L; ++l) {
      double s = 0;
      for (std::int64_t k = 0; k < K; ++k) { s += p.X[k * L + l] * delta[k]; }
      grad[l] = s;
    }
    double g2 = 0;
    for (std::int64_t l = 0; l < L; ++l) {
      w[l] -= lr * grad[l];
      g2 += grad[l] * grad[l];
    }
    if (g2 < tol) { return it; }
  }
  return -1;
}

TEST(Fit, MatchesLongDoubleLeastSquaresWithinStatedBound) {
  auto const p = make_problem<double>(200, 12, 4, 1, false, 0.5);
  std::vector<long double> W_star;
  long double inv_norm = 0;
  normal_equations(p, W_star, inv_norm);
  for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
    for (auto m : {gd_method::plain, gd_method::nesterov}) {
      gd_options o;
      o.tolerance = 1e-20;
      o.max_iterations = 200000;
      o.formulation = f;
      o.method = m;
      std::vector<double> W;
      auto const r = cpu_fit(p, W, o);
      ASSERT_TRUE(r.all_converged()) << fusekit::to_string(f) << " " << fusekit::to_string(m);
      // ‖w − w*‖ ≤ ‖A⁻¹‖·‖grad‖, and the last gradient met gradᵀgrad < tol.
      long double const bound = inv_norm * sqrtl(1e-20L) * 1.01L + 1e-12L;
      for (std::int64_t n = 0; n < p.N; ++n) {
        long double err2 = 0;
        for (std::int64_t l = 0; l < p.L; ++l) {
          long double const d = W[n * p.L + l] - W_star[n * p.L + l];
          err2 += d * d;
        }
        EXPECT_LE(sqrtl(err2), bound) << "output " << n;
      }
    }
  }
}

TEST(Fit, PlainDirectTakesExactlyTheReferenceIterations) {
  auto const p = make_problem<double>(40, 9, 5, 2, true, 0.0);
  gd_options o;
  o.learning_rate = 0.01;
  o.tolerance = 1e-10;
  o.max_iterations = 1000000;
  o.formulation = gd_formulation::direct;
  std::vector<double> W;
  auto const r = cpu_fit(p, W, o);
  for (std::int64_t n = 0; n < p.N; ++n) {
    std::int64_t const want = reference_iterations(p, n, 0.01, 1e-10, o.max_iterations);
    ASSERT_GT(want, 0);
    EXPECT_EQ(r.outputs[n].iterations, want) << "output " << n;
    EXPECT_EQ(r.outputs[n].status, fit_status::converged);
  }
}

TEST(Fit, GramAndDirectAgreeAndNesterovIsFaster) {
  auto const p = make_problem<double>(1000, 100, 10, 3, true, 0.0);
  gd_options o;
  o.tolerance = 1e-8;
  o.max_iterations = 1000000;
  std::vector<double> W_direct, W_gram, W_nesterov;
  o.formulation = gd_formulation::direct;
  auto const direct = cpu_fit(p, W_direct, o);
  o.formulation = gd_formulation::gram;
  auto const gram = cpu_fit(p, W_gram, o);
  o.method = gd_method::nesterov;
  auto const nesterov = cpu_fit(p, W_nesterov, o);
  ASSERT_TRUE(direct.all_converged() && gram.all_converged() && nesterov.all_converged());
  EXPECT_NEAR(direct.learning_rate, gram.learning_rate, 1e-9 * gram.learning_rate);
  for (std::int64_t n = 0; n < p.N; ++n) {
    // Same iterates up to rounding: iteration counts within 0.1%, weights within the tolerance's reach.
    EXPECT_NEAR(static_cast<double>(direct.outputs[n].iterations), static_cast<double>(gram.outputs[n].iterations),
                1 + 1e-3 * static_cast<double>(gram.outputs[n].iterations));
    EXPECT_LT(5 * nesterov.outputs[n].iterations, gram.outputs[n].iterations) << "output " << n;
  }
  for (std::size_t i = 0; i < W_gram.size(); ++i) {
    EXPECT_NEAR(W_direct[i], W_gram[i], 1e-6);
    EXPECT_NEAR(W_nesterov[i], W_gram[i], 1e-5);
  }
  EXPECT_EQ(gram.formulation, gd_formulation::gram);
}

TEST(Fit, AutomaticFormulationFollowsShape) {
  auto const tall = make_problem<double>(50, 5, 2, 4, false, 0.1);
  auto const wide = make_problem<double>(5, 50, 2, 5, false, 0.1);
  std::vector<double> W;
  gd_options o;
  o.max_iterations = 50;
  EXPECT_EQ(cpu_fit(tall, W, o).formulation, gd_formulation::gram);
  EXPECT_EQ(cpu_fit(wide, W, o).formulation, gd_formulation::direct);
}

TEST(Fit, TooLargeLearningRateDivergesWithinBound) {
  auto const p = make_problem<double>(300, 20, 3, 6, true, 0.0);
  std::vector<double> W;
  gd_options o;
  o.max_iterations = 100;
  double const lr_auto = cpu_fit(p, W, o).learning_rate;  // 1/λmax
  o.learning_rate = 3.0 * lr_auto;
  o.max_iterations = 1000000;
  for (auto m : {gd_method::plain, gd_method::nesterov}) {
    o.method = m;
    auto const r = cpu_fit(p, W, o);
    for (const auto& out : r.outputs) {
      EXPECT_EQ(out.status, fit_status::diverged) << fusekit::to_string(m);
      EXPECT_LE(out.iterations, 100) << fusekit::to_string(m);
    }
  }
}

TEST(Fit, FloatWithUnreachableToleranceStopsInBoundedTime) {
  auto const p = make_problem<float>(100, 10, 3, 7, true, 0.0);
  std::vector<float> W;
  gd_options o;
  o.tolerance = 1e-30;
  o.max_iterations = 10000000;
  for (auto m : {gd_method::plain, gd_method::nesterov}) {
    o.method = m;
    auto const r = cpu_fit(p, W, o);
    for (const auto& out : r.outputs) {
      EXPECT_TRUE(out.status == fit_status::stalled || out.status == fit_status::max_iterations)
          << fusekit::to_string(out.status);
      EXPECT_LT(out.iterations, o.max_iterations);
    }
  }
}

TEST(Fit, InitialWeightsAndThreadIndependence) {
  auto const p = make_problem<double>(120, 10, 4, 8, false, 0.2);
  gd_options o;
  o.tolerance = 1e-16;
  o.max_iterations = 100000;
  std::vector<double> W1, W2;
  auto const r1 = cpu_fit(p, W1, o, 1);
  auto const r2 = cpu_fit(p, W2, o, 2);
  EXPECT_EQ(0, std::memcmp(W1.data(), W2.data(), W1.size() * sizeof(double)));
  // Warm start at the solution: the first gradient already meets the tolerance.
  o.init = fusekit::gd_init::warm_start;
  auto const warm = cpu_fit(p, W1, o);
  for (const auto& out : warm.outputs) { EXPECT_EQ(out.iterations, 1); }
  // Uniform [0, 1) from a seed: reproducible, and a different start than zeros.
  o.init = fusekit::gd_init::uniform;
  o.max_iterations = 1;
  o.seed = 42;
  std::vector<double> U1, U2;
  cpu_fit(p, U1, o);
  cpu_fit(p, U2, o);
  EXPECT_EQ(U1, U2);
  EXPECT_NE(U1, W2);  // a different start than zeros ends elsewhere after one step
}

template <class F>
void expect_invalid(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "not rejected: " << needle;
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(FitArguments, Rejected) {
  auto p = make_problem<double>(10, 4, 2, 9, false, 0.0);
  std::vector<double> W(8, 0.0);
  fusekit::cpu const cpu{};
  auto X = cmatrix<double>(p.X.data(), 10, 4);
  auto Y = cmatrix<double>(p.Y.data(), 10, 2);
  auto Wm = fusekit::matrix<double>(W.data(), 2, 4);
  gd_options o;
  expect_invalid([&] { fusekit::fit(cpu, X, cmatrix<double>(p.Y.data(), 9, 2), Wm, o); }, "Y has 9 rows but X has 10");
  expect_invalid([&] { fusekit::fit(cpu, X, Y, fusekit::matrix<double>(W.data(), 2, 3), o); },
                 "W is 2 x 3 but must be N x L = 2 x 4");
  expect_invalid(
      [&] { fusekit::fit(cpu, cmatrix<double>(p.X.data(), 10, 0), Y, fusekit::matrix<double>(W.data(), 2, 0), o); },
      "X is 10 x 0");
  expect_invalid(
      [&] { fusekit::fit(cpu, X, cmatrix<double>(p.Y.data(), 10, 0), fusekit::matrix<double>(W.data(), 0, 4), o); },
      "Y has no columns");
  for (double lr : {0.0, -1.0, double(NAN), double(INFINITY)}) {
    gd_options bad;
    bad.learning_rate = lr;
    expect_invalid([&] { fusekit::fit(cpu, X, Y, Wm, bad); }, "learning_rate");
  }
  for (double tol : {0.0, -1e-8, double(NAN), double(INFINITY)}) {
    gd_options bad;
    bad.tolerance = tol;
    expect_invalid([&] { fusekit::fit(cpu, X, Y, Wm, bad); }, "tolerance");
  }
  // The message names the first non-finite value by row and column (X is 10 x 4, Y 10 x 2).
  p.X[17] = NAN;
  expect_invalid([&] { fusekit::fit(cpu, X, Y, Wm, o); }, "X(4, 1) is NaN (1 value of X not finite)");
  p.X[39] = INFINITY;
  p.X[9] = -INFINITY;
  expect_invalid([&] { fusekit::fit(cpu, X, Y, Wm, o); }, "X(2, 1) is -inf (3 values of X not finite)");
  p.X[9] = p.X[17] = p.X[39] = 0;
  p.Y[3] = -INFINITY;
  expect_invalid([&] { fusekit::fit(cpu, X, Y, Wm, o); }, "Y(1, 1) is -inf (1 value of Y not finite)");
  p.Y[3] = 0;
  p.Y[19] = INFINITY;
  expect_invalid([&] { fusekit::fit(cpu, X, Y, Wm, o); }, "Y(9, 1) is inf");
  p.Y[19] = 0;
  expect_invalid([&] { fusekit::fit(cpu, X, Y, fusekit::matrix<double>(p.X.data(), 2, 4), o); }, "W overlaps X");
  gd_options zero_iterations;
  zero_iterations.max_iterations = 0;
  expect_invalid([&] { fusekit::fit(cpu, X, Y, Wm, zero_iterations); }, "max_iterations");
  std::vector<double> Yh(20);
  expect_invalid(
      [&] { fusekit::predict(cpu, X, cmatrix<double>(W.data(), 2, 3), fusekit::matrix<double>(Yh.data(), 10, 2)); },
      "W has 3 columns but X has 4");
  expect_invalid(
      [&] { fusekit::predict(cpu, X, cmatrix<double>(W.data(), 2, 4), fusekit::matrix<double>(Yh.data(), 10, 1)); },
      "Y_hat is 10 x 1");
}

// The count of non-finite values in the message: a loop on the bits up to
// non_finite_counter::one_loop_up_to values, the policy's tree beyond; both
// give is_finite's answer on every class of value, float and double.
template <class T>
void expect_non_finite_bit_is_is_finite() {
  using bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  constexpr int mantissa = std::numeric_limits<T>::digits - 1;
  constexpr bits exponents = bits{1} << (sizeof(T) * 8 - 1 - mantissa);
  for (bits e = 0; e < exponents; ++e) {  // every exponent, with mantissas 0, 1, the top bit and all ones
    for (bits m : {bits{0}, bits{1}, bits{1} << (mantissa - 1), (bits{1} << mantissa) - 1}) {
      for (bits sign : {bits{0}, bits{1}}) {
        bits const b = (sign << (sizeof(T) * 8 - 1)) | (e << mantissa) | m;
        T x;
        std::memcpy(&x, &b, sizeof x);
        ASSERT_EQ(fusekit::detail::train::non_finite_bit(x), fusekit::detail::is_finite(x) ? 0 : 1)
            << "bits " << std::hex << b;
      }
    }
  }
}

TEST(FitArguments, NonFiniteValuesAreCountedOnEveryClassAndSize) {
  expect_non_finite_bit_is_is_finite<float>();
  expect_non_finite_bit_is_is_finite<double>();
  fusekit::cpu cpu{};
  cpu.threads = 2;
  gd_options const o;
  for (std::int64_t K : {std::int64_t{10}, std::int64_t{(1 << 18) / 4}, std::int64_t{(1 << 18) / 4 + 1}}) {
    std::vector<double> X(static_cast<std::size_t>(K * 4), 1.0), Y(static_cast<std::size_t>(K), 1.0), W(4);
    X[static_cast<std::size_t>(K * 4 - 1)] = -INFINITY;
    X[6] = NAN;
    X[static_cast<std::size_t>(K * 2)] = INFINITY;
    expect_invalid(
        [&] {
          fusekit::fit(cpu, cmatrix<double>(X.data(), K, 4), cmatrix<double>(Y.data(), K, 1),
                       fusekit::matrix<double>(W.data(), 1, 4), o);
        },
        "X(1, 2) is NaN (3 values of X not finite)");
  }
}

TEST(Predict, MatchesReferenceProduct) {
  auto const p = make_problem<float>(77, 13, 5, 10, false, 0.0);
  std::vector<float> Y_hat(77 * 5);
  fusekit::predict(fusekit::cpu{}, cmatrix<float>(p.X.data(), 77, 13), cmatrix<float>(p.W_true.data(), 5, 13),
                   fusekit::matrix<float>(Y_hat.data(), 77, 5));
  for (std::int64_t k = 0; k < 77; ++k) {
    for (std::int64_t n = 0; n < 5; ++n) {
      long double s = 0, a = 0;
      for (std::int64_t l = 0; l < 13; ++l) {
        s += static_cast<long double>(p.X[k * 13 + l]) * p.W_true[n * 13 + l];
        a += fabsl(static_cast<long double>(p.X[k * 13 + l]) * p.W_true[n * 13 + l]);
      }
      EXPECT_LE(fabsl(Y_hat[k * 5 + n] - s), 14 * 0x1p-24L * a) << k << "," << n;
    }
  }
}

TEST(CpuFit, ProgressReportsTheFitWithoutChangingIt) {
  auto const p = make_problem<double>(400, 20, 5, 17, true, 0.0);
  gd_options o;
  o.tolerance = 1e-10;
  std::vector<double> W_plain, W_watched;
  auto const plain = cpu_fit(p, W_plain, o);
  std::vector<fusekit::fit_progress> seen;
  o.progress = [&](const fusekit::fit_progress& now) { seen.push_back(now); };
  o.progress_every = 250;
  auto const watched = cpu_fit(p, W_watched, o);
  EXPECT_EQ(W_watched, W_plain);  // the same iterates: progress only looks
  for (std::size_t n = 0; n < plain.outputs.size(); ++n) {
    EXPECT_EQ(watched.outputs[n].iterations, plain.outputs[n].iterations);
  }
  ASSERT_FALSE(seen.empty());
  std::int64_t const most = plain.most_iterations();
  EXPECT_EQ(seen.size(), static_cast<std::size_t>((most + 249) / 250));  // until the last output stops
  for (std::size_t k = 0; k < seen.size(); ++k) {
    // While an output runs, the iteration is the one every running output has
    // reached; once none runs, the last output's own count, exactly.
    EXPECT_EQ(seen[k].iteration, k + 1 < seen.size() ? static_cast<std::int64_t>(250 * (k + 1)) : most);
    if (k > 0) { EXPECT_LE(seen[k].running, seen[k - 1].running); }
    EXPECT_GE(seen[k].worst_grad_norm2,
              seen[k].running > 0 ? o.tolerance.value_or(fusekit::gd_options::default_tolerance) : 0.0);
    std::int64_t stopped = 0;
    for (std::int64_t e : seen[k].ended) { stopped += e; }
    EXPECT_EQ(stopped + seen[k].running, static_cast<std::int64_t>(plain.outputs.size()));
  }
  EXPECT_EQ(seen.back().running, 0);
  EXPECT_EQ(seen.back().ended[static_cast<int>(fusekit::fit_status::converged)],
            static_cast<std::int64_t>(plain.outputs.size()));
  EXPECT_EQ(seen.back().text(), std::to_string(most) + " iterations: 0 running, 5 converged");
  o.progress_every = 0;
  EXPECT_THROW(cpu_fit(p, W_watched, o), fusekit::invalid_argument);
}

// A progress callback that throws stops the fit, and W holds the iterate
// reached, in float as in double (the CPU iterates in double either way, so
// the float fit's W is the double fit's, rounded), never the values W held
// before the call.
TEST(CpuFit, AThrowingProgressCallbackLeavesTheIterateReachedInEveryType) {
  auto const pd = make_problem<double>(200, 8, 2, 31, true, 0.0);
  auto const pf = make_problem<float>(200, 8, 2, 31, true, 0.0);
  problem<double> exact = pd;  // the float data, in double: the same iterates
  for (std::size_t i = 0; i < pf.X.size(); ++i) { exact.X[i] = pf.X[i]; }
  for (std::size_t i = 0; i < pf.Y.size(); ++i) { exact.Y[i] = pf.Y[i]; }
  gd_options o;
  o.max_iterations = 1000000;
  o.tolerance = 1e-30;
  o.progress_every = 100;
  o.progress = [](const fusekit::fit_progress& now) {
    if (now.iteration >= 300) { throw std::runtime_error("stop"); }
  };
  std::vector<double> Wd(16, 123.0);
  std::vector<float> Wf(16, 123.0f);
  EXPECT_THROW(cpu_fit(exact, Wd, o), std::runtime_error);
  EXPECT_THROW(cpu_fit(pf, Wf, o), std::runtime_error);
  for (std::size_t i = 0; i < Wf.size(); ++i) {
    EXPECT_NE(Wd[i], 123.0) << i;
    EXPECT_EQ(Wf[i], static_cast<float>(Wd[i])) << i;
  }
}

// A fit that runs out of iterations says so in its last progress line, at the
// budget exactly (one that progress_every does not divide), and its summary
// says what to try; a fit that converges says that alone.
TEST(CpuFit, ProgressAndSummaryNameHowTheOutputsEnded) {
  auto const p = make_problem<double>(300, 60, 3, 23, true, 0.0);
  gd_options o;  // plain descent: thousands of iterations on 60 correlated (uniform, positive) features
  o.tolerance = 1e-20;
  o.max_iterations = 2500;
  o.progress_every = 1000;
  std::vector<fusekit::fit_progress> seen;
  o.progress = [&](const fusekit::fit_progress& now) { seen.push_back(now); };
  std::vector<double> W;
  auto const slow = cpu_fit(p, W, o);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].iteration, 1000);
  EXPECT_EQ(seen[1].iteration, 2000);
  EXPECT_EQ(seen[2].iteration, 2500);
  EXPECT_EQ(seen[2].running, 0);
  EXPECT_EQ(seen[2].ended[static_cast<int>(fusekit::fit_status::max_iterations)], 3);
  EXPECT_NE(seen[2].text().find("2500 iterations: 0 running, 3 max_iterations"), std::string::npos) << seen[2].text();
  EXPECT_FALSE(slow.all_converged());
  EXPECT_EQ(slow.method, fusekit::gd_method::plain);
  std::string const advice = slow.summary();
  EXPECT_NE(advice.find("3 of 3 outputs max_iterations"), std::string::npos) << advice;
  EXPECT_NE(advice.find("gd_options::recommended()"), std::string::npos) << advice;

  auto const fast = cpu_fit(p, W, fusekit::gd_options::recommended());
  ASSERT_TRUE(fast.all_converged());
  EXPECT_EQ(fast.method, fusekit::gd_method::conjugate_gradient);
  EXPECT_EQ(fast.preconditioner, fusekit::gd_preconditioner::cholesky);
  std::string const done = fast.summary();
  EXPECT_NE(done.find("3 of 3 outputs converged (conjugate_gradient with cholesky"), std::string::npos) << done;
  EXPECT_EQ(done.find("try"), std::string::npos) << done;

  // With refinement (recommended() takes up to two steps) the progress goes on from
  // the fit's iterations, never back, and names the fit's statuses: a
  // correction's own budget running out is not the fit's.
  std::vector<fusekit::fit_progress> refined;
  gd_options watched = fusekit::gd_options::recommended();
  watched.preconditioner = fusekit::gd_preconditioner::jacobi;  // a fit of many updates: a correction takes fewer
  watched.progress_every = 1;
  watched.progress = [&](const fusekit::fit_progress& now) { refined.push_back(now); };
  auto const again = cpu_fit(p, W, watched);
  ASSERT_TRUE(again.all_converged());
  ASSERT_GE(refined.size(), 2u);
  for (std::size_t k = 1; k < refined.size(); ++k) { EXPECT_GE(refined[k].iteration, refined[k - 1].iteration) << k; }
  for (const auto& now : refined) {
    EXPECT_EQ(now.ended[static_cast<int>(fusekit::fit_status::max_iterations)], 0) << now.text();
    EXPECT_EQ(now.ended[static_cast<int>(fusekit::fit_status::stalled)], 0) << now.text();
  }
  EXPECT_EQ(refined.back().ended[static_cast<int>(fusekit::fit_status::converged)], 3) << refined.back().text();

  gd_options wild;  // a learning rate far past 2/λmax: the iterates grow without bound
  wild.learning_rate = 1e6;
  auto const diverged = cpu_fit(p, W, wild);
  ASSERT_EQ(diverged.outputs[0].status, fusekit::fit_status::diverged);
  EXPECT_NE(diverged.summary().find("leave learning_rate unset"), std::string::npos) << diverged.summary();
}

}  // namespace
