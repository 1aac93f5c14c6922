// SPDX-License-Identifier: Apache-2.0
// Iterative refinement on the host, and the system it refines: A = XᵀX and
// B = YᵀX as in-order sums, against least_squares_reference (Householder QR
// in long double) on data as users bring it (make_raw_problem).
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
using fusekit::gd_options;
using fusekit::gd_preconditioner;
using fusekit::stop_rule;
using fusekit::test::cg_jacobi;
using fusekit::test::cpu_fit;
using fusekit::test::least_squares_reference;
using fusekit::test::make_raw_problem;
using fusekit::test::relative_error;
template <class T>
using cmatrix = fusekit::matrix<const T>;

// Refinement (gd_options::refinement_steps): at L = 256 in raw units the
// Jacobi-scaled condition number is about 8·10^7, so a Jacobi fit alone, at
// rtol 1e-13, is only about κ·rtol ≈ 1e-5 .. 1e-7 accurate; one step of
// refinement must reach 1e-8.
TEST(Refinement, OneStepReachesTheTargetOnWideRawData) {
  auto const p = make_raw_problem<double>(2000, 256, 4, 31, 0.1);
  auto const W_star = least_squares_reference(p);
  gd_options o = gd_options::recommended();
  o.preconditioner = gd_preconditioner::jacobi;
  o.refinement_steps = 1;
  o.formulation = gd_formulation::gram;
  std::vector<double> W;
  auto const r = cpu_fit(p, W, o);
  ASSERT_TRUE(r.all_converged()) << fusekit::to_string(r.outputs[0].status);
  EXPECT_LE(relative_error(W, W_star), 1e-8);
  for (const auto& out : r.outputs) {
    EXPECT_EQ(out.rule, stop_rule::relative_tolerance);  // the fit's rule, kept
    EXPECT_LE(out.iterations, o.max_iterations);
  }
  // Without it, the same fit: the refinement is what reaches the target
  // (a refinement that does nothing would pass the bound above only if the
  // fit alone did).
  gd_options off = o;
  off.refinement_steps = 0;
  std::vector<double> W0;
  auto const r0 = cpu_fit(p, W0, off);
  ASSERT_TRUE(r0.all_converged());
  EXPECT_GT(relative_error(W0, W_star), 1e-8);
  for (std::size_t n = 0; n < r.outputs.size(); ++n) {
    // The correction's updates are counted, and its budget is the most any output took.
    EXPECT_GT(r.outputs[n].iterations, r0.outputs[n].iterations);
    EXPECT_LE(r.outputs[n].iterations, r0.outputs[n].iterations + r0.most_iterations());
  }
}

// Only a converged output is refined; one that stalled (a tolerance below
// double's reach) keeps its iterate, bit for bit, and so does every output of
// a direct fit (its gradient already comes from X).
// Refined: converged and stalled Gram outputs (a stalled one sits at the
// floor of A's rounding, which the correction from X gets below). Left alone:
// an output that ran out of iterations, and a direct fit (CGLS reads X).
TEST(Refinement, RefinesStalledGramOutputsAndLeavesTheOthersAlone) {
  auto const p = make_raw_problem<double>(300, 12, 3, 34, 0.1);
  auto const W_star = least_squares_reference(p);
  for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
    gd_options o = cg_jacobi(f == gd_formulation::gram ? 1e-18 : 1e-13);
    o.formulation = f;
    std::vector<double> W0, W1;
    auto const r0 = cpu_fit(p, W0, o);
    for (const auto& out : r0.outputs) {
      ASSERT_EQ(out.status, f == gd_formulation::gram ? fit_status::stalled : fit_status::converged);
    }
    o.refinement_steps = 2;
    auto const r1 = cpu_fit(p, W1, o);
    for (std::size_t n = 0; n < r0.outputs.size(); ++n) {
      EXPECT_EQ(r1.outputs[n].status, r0.outputs[n].status);
      if (f == gd_formulation::direct) { EXPECT_EQ(r1.outputs[n].iterations, r0.outputs[n].iterations); }
    }
    if (f == gd_formulation::direct) {
      EXPECT_EQ(W1, W0);
    } else {
      EXPECT_GT(r1.most_iterations(), r0.most_iterations());
      EXPECT_LE(relative_error(W1, W_star), 1e-10);
    }
  }
  gd_options o = cg_jacobi(1e-13);
  o.max_iterations = 3;
  std::vector<double> W0, W1;
  auto const r0 = cpu_fit(p, W0, o);
  for (const auto& out : r0.outputs) { ASSERT_EQ(out.status, fit_status::max_iterations); }
  o.refinement_steps = 2;
  auto const r1 = cpu_fit(p, W1, o);
  EXPECT_EQ(W1, W0);
  EXPECT_EQ(r1.most_iterations(), r0.most_iterations());
}

// Float data: the residual is taken in double from the float X and Y and the
// double iterate, and W is rounded once at the end.
TEST(Refinement, FloatFitsReachFloatAccuracyOnWideRawData) {
  auto const p = make_raw_problem<float>(2000, 256, 2, 35, 0.1);
  auto const W_star = least_squares_reference(p);
  gd_options o = gd_options::recommended();
  o.formulation = gd_formulation::gram;
  std::vector<float> W;
  auto const r = cpu_fit(p, W, o);
  ASSERT_TRUE(r.all_converged());
  EXPECT_LE(relative_error(W, W_star), 1e-5);
}

// A = XᵀX and B = YᵀX of the CPU backend: every entry the sum over rows in
// order, two roundings per term, whatever the blocking (tiles of rows of A
// and B, blocks of 64 rows of X, 8 and 4 columns in vectors and the last
// ones alone), the thread count and the CPU's vector width (the AVX2 clone
// has no FMA to contract into). Float data accumulate in double.
template <class T>
void expect_in_order_gram(std::int64_t K, std::int64_t L, std::int64_t N, unsigned seed) {
  auto const p = make_raw_problem<T>(K, L, N, seed, 0.1);
  for (int threads : {1, 2, 3}) {
    std::vector<double> A, B;
    fusekit::detail::cpu_gram<double>(threads, cmatrix<T>(p.X.data(), K, L), cmatrix<T>(p.Y.data(), K, N), &A, B);
    std::vector<double> B_alone;  // B without A (the direct formulation, a refinement): the same bits
    fusekit::detail::cpu_gram<double>(threads, cmatrix<T>(p.X.data(), K, L), cmatrix<T>(p.Y.data(), K, N), nullptr,
                                      B_alone);
    EXPECT_EQ(B_alone, B) << "threads " << threads;
    auto const in_order = [&](auto weight, std::int64_t j) {
      volatile double s = 0;  // one term at a time, in row order
      for (std::int64_t k = 0; k < K; ++k) {
        double const prod = weight(k) * static_cast<double>(p.X[k * L + j]);
        s = s + prod;
      }
      return static_cast<double>(s);
    };
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t j = 0; j < L; ++j) {
        double const s = in_order([&](std::int64_t k) { return static_cast<double>(p.X[k * L + i]); }, j);
        ASSERT_EQ(A[i * L + j], s) << K << "x" << L << "x" << N << " A " << i << "," << j << " threads " << threads;
      }
    }
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t j = 0; j < L; ++j) {
        double const s = in_order([&](std::int64_t k) { return static_cast<double>(p.Y[k * N + n]); }, j);
        ASSERT_EQ(B[n * L + j], s) << K << "x" << L << "x" << N << " B " << n << "," << j << " threads " << threads;
      }
    }
  }
}

TEST(CpuGram, EveryEntryIsTheInOrderSum) {
#ifdef __FAST_MATH__
  GTEST_SKIP() << "-ffast-math may regroup the reference sums themselves";
#else
  expect_in_order_gram<float>(333, 37, 3, 27);
  // Shapes around the blocks: one row, fewer rows than a block, a block and
  // one; fewer columns than a vector, 4, 8, 12 and 13 columns; tiles of
  // rows of A and B mixed and cut short.
  for (std::int64_t K : {1, 5, 65}) {
    for (std::int64_t L : {1, 3, 4, 8, 12, 13}) {
      for (std::int64_t N : {1, 2, 5}) {
        expect_in_order_gram<double>(K, L, N, static_cast<unsigned>(K * 100 + L * 10 + N));
        if (HasFatalFailure()) { return; }
      }
    }
  }
  expect_in_order_gram<float>(130, 21, 6, 5);
#endif
}

// The refinement's residual R = Y − X Wᵀ: each entry y_kn − Σ_l x_kl w_nl,
// the sum in l order from 0, whatever the thread count and the outputs'
// lanes (8 side by side, rows two at a time); 0 for an output not refined.
TEST(CpuResidual, EveryEntryIsTheInOrderSum) {
#ifdef __FAST_MATH__
  GTEST_SKIP() << "-ffast-math may regroup the reference sums themselves";
#else
  for (std::int64_t K : {1, 2, 7}) {
    for (std::int64_t N : {1, 8, 11}) {
      std::int64_t const L = 13;
      auto const p = make_raw_problem<float>(K, L, N, static_cast<unsigned>(K + 10 * N), 0.1);
      std::mt19937_64 g(static_cast<unsigned>(K * N));
      std::normal_distribution<double> d(0.0, 3.0);
      std::vector<double> W(static_cast<std::size_t>(N * L));
      for (double& w : W) { w = d(g); }
      std::vector<char> refined(static_cast<std::size_t>(N), 1);
      refined[0] = N > 1 ? 0 : 1;
      for (int threads : {1, 2}) {
        std::vector<double> const R =
            fusekit::detail::cpu_residual(threads, cmatrix<float>(p.X.data(), K, L), cmatrix<float>(p.Y.data(), K, N),
                                          cmatrix<double>(W.data(), N, L), refined);
        for (std::int64_t k = 0; k < K; ++k) {
          for (std::int64_t n = 0; n < N; ++n) {
            volatile double s = 0;
            for (std::int64_t l = 0; l < L; ++l) {
              double const prod = static_cast<double>(p.X[k * L + l]) * W[n * L + l];
              s = s + prod;
            }
            double const r = refined[n] != 0 ? static_cast<double>(p.Y[k * N + n]) - s : 0.0;
            ASSERT_EQ(R[k * N + n], r) << K << "x" << N << " entry " << k << "," << n << " threads " << threads;
          }
        }
      }
    }
  }
#endif
}

// The best-iterate rule's residuals of many candidates in one pass
// (residual_terms) have the bits of rows_residual2 and residual2_rounding,
// the per-candidate sums the GPU's body shares: candidates in groups of 8
// and a group cut short, W = 0 as a null candidate, rows two at a time and
// one left, signed zeros in Y and W, float and double data, any thread count.
template <class T>
void expect_residual_terms_match(std::int64_t K, std::int64_t L, std::int64_t N, int candidates_per_output) {
  namespace d = fusekit::detail;
  auto p = make_raw_problem<T>(K, L, N, static_cast<unsigned>(K * 7 + L * 3 + N), 0.1);
  if (K > 1) { p.Y[1 * N] = T(-0.0); }
  std::mt19937_64 g(static_cast<unsigned>(K + L + N));
  std::normal_distribution<double> dist(0.0, 2.0);
  std::vector<std::vector<double>> w;  // candidate m is on output m / candidates_per_output; empty: W = 0
  for (std::int64_t n = 0; n < N; ++n) {
    for (int c = 0; c < candidates_per_output; ++c) {
      std::vector<double> v(c == 3 ? 0 : static_cast<std::size_t>(L));
      for (double& x : v) { x = dist(g); }
      if (c == 1) { v[0] = -0.0; }
      w.push_back(v);
    }
  }
  d::residual_set<double> ordered(L);
  for (std::size_t m = 0; m < w.size(); ++m) {
    ordered.add(w[m].empty() ? nullptr : w[m].data(), static_cast<std::int64_t>(m) / candidates_per_output);
  }
  ordered.lay_out();
  cmatrix<T> const X(p.X.data(), K, L), Y(p.Y.data(), K, N);
  for (int threads : {1, 2, 4}) {
    std::vector<double> r2(static_cast<std::size_t>(ordered.columns)), rounding(r2.size());
    d::residual_terms(threads, 1, X, Y, ordered, r2.data(), rounding.data());
    for (std::size_t m = 0; m < w.size(); ++m) {
      std::int64_t const n = static_cast<std::int64_t>(m) / candidates_per_output;
      const double* const wm = w[m].empty() ? nullptr : w[m].data();
      ASSERT_EQ(r2[m], d::rows_residual2(X, Y, n, wm)) << K << "x" << L << "x" << N << " candidate " << m;
      ASSERT_EQ(rounding[m], d::residual2_rounding(X, Y, n, wm)) << K << "x" << L << "x" << N << " candidate " << m;
    }
  }
}

TEST(ResidualTerms, EachCandidateHasTheBitsOfItsOwnSums) {
#ifdef __FAST_MATH__
  GTEST_SKIP() << "-ffast-math may regroup either side's sums";
#else
  for (std::int64_t K : {1, 2, 5, 64}) {
    for (std::int64_t L : {1, 9}) {
      for (std::int64_t N : {1, 3, 5}) {
        for (int per_output : {2, 4}) {
          expect_residual_terms_match<double>(K, L, N, per_output);
          expect_residual_terms_match<float>(K, L, N, per_output);
          if (HasFatalFailure()) { return; }
        }
      }
    }
  }
#endif
}

// The prepared copy's scaling by powers of two, from the bits where the
// result is normal: the exact v·2^e (long double's ldexp, on the x87 unit,
// which no -ffast-math flag flushes) for every kind of double and shift,
// subnormal operands and results, overflow and ±0 included. Under -ffast-math
// only results in double's normal range are the promise (std::ldexp's own
// subnormal results flush there).
TEST(LdexpExact, IsTheExactPowerOfTwoMultiple) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.5,
                                3.141592653589793,
                                std::numeric_limits<double>::min(),
                                -std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                -std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::min() / 3,
                                -std::numeric_limits<double>::min() / 1024,
                                std::numeric_limits<double>::max(),
                                -std::numeric_limits<double>::max(),
                                0x1.fffffffffffffp-1,
                                0x1.0000000000001p+0};
  std::mt19937_64 g(11);
  for (int i = 0; i < 200; ++i) {
    std::uint64_t bits = g();
    if (i % 4 == 0) { bits &= ~(0x7ffull << 52); }  // subnormal (or zero)
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) { values.push_back(v); }
  }
  for (double v : values) {
    for (int e = -2200; e <= 2200; e += (e > -1100 && e < 1100) ? 1 : 37) {
      double const want = static_cast<double>(std::ldexp(static_cast<long double>(v), e));
      double const got = fusekit::detail::ldexp_exact(v, e);
#ifdef __FAST_MATH__
      long double const size = std::fabs(std::ldexp(static_cast<long double>(v), e));
      if (v != v || (size < std::numeric_limits<double>::min() && size != 0)) { continue; }
#endif
      std::uint64_t a, b;
      std::memcpy(&a, &want, sizeof a);
      std::memcpy(&b, &got, sizeof b);
      ASSERT_EQ(b, a) << std::hexfloat << v << " * 2^" << e;
    }
  }
}

}  // namespace
