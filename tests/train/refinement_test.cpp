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
// order, two roundings per term, whatever the blocking, the thread count and
// the CPU's vector width (the AVX2 clone has no FMA to contract into). Float
// data accumulate in double.
TEST(CpuGram, EveryEntryIsTheInOrderSum) {
#ifdef __FAST_MATH__
  GTEST_SKIP() << "-ffast-math may regroup the reference sums themselves";
#else
  auto const p = make_raw_problem<float>(333, 37, 3, 27, 0.1);
  std::int64_t const K = p.K, L = p.L, N = p.N;
  for (int threads : {1, 2}) {
    std::vector<double> A, B;
    fusekit::detail::cpu_gram<double>(threads, cmatrix<float>(p.X.data(), K, L), cmatrix<float>(p.Y.data(), K, N), &A,
                                      B);
    std::vector<double> B_alone;  // B without A (the direct formulation, a refinement): the same bits
    fusekit::detail::cpu_gram<double>(threads, cmatrix<float>(p.X.data(), K, L), cmatrix<float>(p.Y.data(), K, N),
                                      nullptr, B_alone);
    EXPECT_EQ(B_alone, B) << "threads " << threads;
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t j = 0; j < L; ++j) {
        volatile double s = 0;  // one term at a time, in row order
        for (std::int64_t k = 0; k < K; ++k) {
          double const prod = static_cast<double>(p.X[k * L + i]) * static_cast<double>(p.X[k * L + j]);
          s = s + prod;
        }
        ASSERT_EQ(A[i * L + j], s) << i << "," << j << " threads " << threads;
      }
    }
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t j = 0; j < L; ++j) {
        volatile double s = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          double const prod = static_cast<double>(p.Y[k * N + n]) * static_cast<double>(p.X[k * L + j]);
          s = s + prod;
        }
        ASSERT_EQ(B[n * L + j], s) << n << "," << j << " threads " << threads;
      }
    }
  }
#endif
}

}  // namespace
