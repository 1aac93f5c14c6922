// SPDX-License-Identifier: Apache-2.0
// The trainer on the GPU: the single-launch path and the cuBLAS path against
// the CPU backend and each other, the stopping rules, the methods and
// refinement, predict and the model. Argument validation runs without a
// device.
#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include "common/cuda_fit.cuh"
#include "common/data_kinds.hpp"
#include "common/device_buffer.cuh"
#include "common/test_support.hpp"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using fusekit::fit_status;
using fusekit::gd_formulation;
using fusekit::gd_method;
using fusekit::gd_options;
using fusekit::test::cpu_fit;
using fusekit::test::device_buffer;
using fusekit::test::expect_same_fit;
using fusekit::test::gpu_fit;
using fusekit::test::make_problem;
template <class T>
using cmatrix = fusekit::matrix<const T>;

TEST(GpuFit, SingleLaunchAndCublasMatchTheCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  for (auto m : {gd_method::plain, gd_method::nesterov}) {
    auto const p = make_problem<double>(300, 30, 6, 1);
    gd_options o;
    o.tolerance = 1e-10;
    o.max_iterations = 1000000;
    o.method = m;
    o.formulation = gd_formulation::gram;
    std::vector<double> Wc, Ws, Wb;
    auto const cpu = cpu_fit(p, Wc, o);
    auto const single = gpu_fit(p, Ws, o, 1);
    auto const cublas = gpu_fit(p, Wb, o, 2);
    EXPECT_STREQ(fusekit::to_string(single.path), "single_launch");
    EXPECT_STREQ(fusekit::to_string(cublas.path), "cublas");
    ASSERT_TRUE(cpu.all_converged());
    expect_same_fit(single, Ws, cpu, Wc, 1e-6);
    expect_same_fit(cublas, Wb, cpu, Wc, 1e-6);
    o.formulation = gd_formulation::direct;
    auto const direct = gpu_fit(p, Wb, o, 2);
    expect_same_fit(direct, Wb, cpu, Wc, 1e-6);
  }
}

// The extras' sizes and the ridge are checked before any CUDA call (no
// device needed: here host pointers, which a device check would name instead).
TEST(CudaFitErrors, ExtrasAreCheckedBeforeAnyCudaCall) {
  std::vector<double> X(6, 1.0), Y(3, 1.0), W(2, 0.0), s(3, 1.0), b(1), b3(3);
  fusekit::matrix<const double> const Xv(X.data(), 3, 2), Yv(Y.data(), 3, 1);
  fusekit::matrix<double> const Wv(W.data(), 1, 2);
  auto const expect_rejected = [&](const gd_options& o, const fusekit::fit_extras<double>& e, const char* says) {
    for (int staged = 0; staged < 2; ++staged) {
      try {
        if (staged == 1) {
          (void)fusekit::fit(fusekit::cuda_staged{}, Xv, Yv, Wv, o, e);
        } else {
          (void)fusekit::fit(fusekit::cuda{}, Xv, Yv, Wv, o, e);
        }
        ADD_FAILURE() << "accepted";
      } catch (const fusekit::invalid_argument& err) {
        EXPECT_NE(std::string(err.what()).find(says), std::string::npos) << err.what();
      }
    }
  };
  gd_options o;
  o.ridge = -0.5;
  expect_rejected(o, {}, "ridge is -0.5; it must be finite and at least 0");
  o.ridge = 0;
  o.fit_intercept = true;
  expect_rejected(o, {}, "fit_intercept is set but intercept has 0 values");
  o.fit_intercept = false;
  expect_rejected(o, {{}, b3}, "intercept has 3 values; it needs one per output (N = 1)");
  expect_rejected(o, {::cuda::std::span<const double>(s.data(), 2), {}}, "sample_weight has 2 values but X has 3 rows");
  EXPECT_EQ(W, std::vector<double>(2, 0.0));
}

// ---- Ridge, an intercept and sample weights: the CPU's fit on the GPU ----

// A fit with its extras on the GPU: device memory for fusekit::cuda, the
// host's for fusekit::cuda_staged.
template <class T>
fusekit::fit_report gpu_fit_with_extras(bool staged, const fusekit::test::problem<T>& p, const std::vector<T>& s,
                                        const gd_options& o, std::vector<T>& W, std::vector<T>& b) {
  W.assign(static_cast<std::size_t>(p.N * p.L), T(0));
  b.assign(static_cast<std::size_t>(p.N), T(7));
  if (staged) {
    return fusekit::fit(fusekit::cuda_staged{}, cmatrix<T>(p.X.data(), p.K, p.L), cmatrix<T>(p.Y.data(), p.K, p.N),
                        fusekit::matrix<T>(W.data(), p.N, p.L), o, fusekit::fit_extras<T>{s, b});
  }
  device_buffer<T> X(p.X), Y(p.Y), dW(W), db(b);
  std::vector<T> const none;
  device_buffer<T> ds(s.empty() ? none : s);
  auto const r = fusekit::fit(fusekit::cuda{}, cmatrix<T>(X.data(), p.K, p.L), cmatrix<T>(Y.data(), p.K, p.N),
                              fusekit::matrix<T>(dW.data(), p.N, p.L), o,
                              fusekit::fit_extras<T>{::cuda::std::span<const T>(ds.data(), s.size()), db.view()});
  W = dW.to_host();
  b = db.to_host();
  return r;
}

template <class T>
fusekit::fit_report cpu_fit_with_extras(const fusekit::test::problem<T>& p, const std::vector<T>& s,
                                        const gd_options& o, std::vector<T>& W, std::vector<T>& b) {
  W.assign(static_cast<std::size_t>(p.N * p.L), T(0));
  b.assign(static_cast<std::size_t>(p.N), T(7));
  return fusekit::fit(fusekit::cpu{}, cmatrix<T>(p.X.data(), p.K, p.L), cmatrix<T>(p.Y.data(), p.K, p.N),
                      fusekit::matrix<T>(W.data(), p.N, p.L), o, fusekit::fit_extras<T>{s, b});
}

// max |a − b| / max |b|.
template <class T>
double max_relative_gap(const std::vector<T>& a, const std::vector<T>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    den = std::max(den, std::fabs(static_cast<double>(b[i])));
  }
  return den > 0 ? num / den : num;
}

// The problems of data_kinds_test's RidgeInterceptWeights (raw units,
// weights with zeros, K < L under a ridge, with and without an intercept):
// on device and host data the GPU ends as the CPU does, with W and b within
// 1e-10 relative in double (the preconditioner Jacobi on both, and a relative
// tolerance of 1e-14: the same algorithm; on the CPU these reach 4e-11 of the
// long-double solution), and in float within two units in the last place of
// the CPU's (both fit the same double copy and round once).
TEST(GpuFit, RidgeInterceptAndWeightsMatchTheCpuOnDeviceAndHostData) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::mt19937 gen(4040);
  for (int trial = 0; trial < 16; ++trial) {
    auto [p, s, lambda, intercept] = fusekit::test::make_ridge_trial(gen, trial);
    if (trial % 8 == 4) { s.clear(); }  // unweighted
    gd_options o = gd_options::recommended();
    o.preconditioner = fusekit::gd_preconditioner::jacobi;
    o.relative_tolerance = 1e-14;
    o.ridge = lambda;
    o.fit_intercept = intercept;
    std::vector<double> Wc, bc;
    auto const rc = cpu_fit_with_extras(p, s, o, Wc, bc);
    for (bool const staged : {false, true}) {
      std::vector<double> Wg, bg;
      auto const rg = gpu_fit_with_extras(staged, p, s, o, Wg, bg);
      for (std::size_t n = 0; n < rc.outputs.size(); ++n) {
        EXPECT_EQ(rg.outputs[n].status, rc.outputs[n].status) << "trial " << trial << " staged " << staged;
      }
      EXPECT_LE(max_relative_gap(Wg, Wc), 1e-10) << "trial " << trial << " staged " << staged;
      EXPECT_LE(max_relative_gap(bg, bc), 1e-10) << "trial " << trial << " staged " << staged;
      if (!o.fit_intercept) { EXPECT_EQ(bg, std::vector<double>(2, 0.0)); }
    }
    // float: the same problem rounded to float, the same copy fitted in double
    fusekit::test::problem<float> pf{p.K, p.L, p.N, {}, {}, {}};
    for (double v : p.X) { pf.X.push_back(static_cast<float>(v)); }
    for (double v : p.Y) { pf.Y.push_back(static_cast<float>(v)); }
    std::vector<float> sf(s.begin(), s.end()), Wcf, bcf, Wgf, bgf;
    gd_options of = o;
    of.relative_tolerance = 1e-12;
    auto const rcf = cpu_fit_with_extras(pf, sf, of, Wcf, bcf);
    auto const rgf = gpu_fit_with_extras(false, pf, sf, of, Wgf, bgf);
    for (std::size_t n = 0; n < rcf.outputs.size(); ++n) { EXPECT_EQ(rgf.outputs[n].status, rcf.outputs[n].status); }
    for (std::size_t i = 0; i < Wcf.size(); ++i) {
      EXPECT_LE(std::fabs(Wgf[i] - Wcf[i]), 0x1p-22f * std::fabs(Wcf[i]) + 1e-30f) << "trial " << trial << " " << i;
    }
    for (std::size_t i = 0; i < bcf.size(); ++i) {
      EXPECT_LE(std::fabs(bgf[i] - bcf[i]), 0x1p-22f * std::fabs(bcf[i]) + 1e-30f) << "trial " << trial << " " << i;
    }
  }
}

// A column in extreme units (10^-300, 10^200) is rescaled on the GPU as on
// the CPU (no extras asked for): each weight within 1e-10 of the CPU's.
TEST(GpuFit, ExtremeUnitColumnsAreRescaledAsOnTheCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  for (double unit : {1e-300, 1e-165, 1e200}) {
    auto p = fusekit::test::make_problem<double>(100, 4, 1, 61, false, 0.1);
    for (std::int64_t k = 0; k < 100; ++k) { p.X[k * 4 + 1] *= unit; }
    gd_options o = gd_options::recommended();
    o.preconditioner = fusekit::gd_preconditioner::jacobi;
    o.relative_tolerance = 1e-14;
    std::vector<double> Wc, bc, Wg, bg;
    std::vector<double> const none;
    auto const rc = cpu_fit_with_extras(p, none, o, Wc, bc);
    for (bool const staged : {false, true}) {
      auto const rg = gpu_fit_with_extras(staged, p, none, o, Wg, bg);
      EXPECT_TRUE(rg.all_converged()) << unit << " " << rg.summary();
      EXPECT_EQ(rg.outputs[0].status, rc.outputs[0].status);
      for (std::int64_t l = 0; l < 4; ++l) {  // each weight to 1e-10 of itself: the units differ by 10^300
        EXPECT_LE(std::fabs(Wg[l] - Wc[l]), 1e-10 * std::fabs(Wc[l])) << unit << " column " << l;
      }
      EXPECT_EQ(bg, std::vector<double>(1, 0.0));  // no intercept asked for: b = 0
    }
  }
}

// recommended()'s Cholesky preconditioner on the GPU: the factor of A on the
// device (the CPU's body, detail/train/cholesky.hpp), as on the CPU on every
// kind of data (tests/train/data_kinds_test.cpp's): the same statuses and
// formulation (an automatic one leaves A for CGLS where the factor says so),
// and the CPU's bounds against the long-double solution: 1e-10 relative to the
// CPU's W on the hidden layer's shape, 1e-8 on ill-conditioned designs, 1e-6
// past what A holds; on a rank-deficient design, the least-squares residual.
// Gram asked for: the single launch and the cuBLAS path; and host data
// (streamed into A, copied to the device where the fit leaves A).
TEST(GpuFit, CholeskyRunsOnTheDeviceAsOnTheCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  using fusekit::gd_preconditioner;
  using fusekit::test::decaying_problem;
  using fusekit::test::poly_problem;
  using fusekit::test::vandermonde_problem;
  struct data {
    const char* name;
    fusekit::test::problem<double> p;
    double bound;  // against the long-double solution (0: against the CPU's W, 1e-10)
  };
  std::vector<data> kinds = {{"hidden layer", fusekit::test::make_raw_problem<double>(400, 12, 3, 71, 0.1), 0},
                             {"polynomial degree 7", poly_problem<double>(2000, 7, 2, 0.1), 1e-8},
                             {"vandermonde 10", vandermonde_problem<double>(1000, 10, 3, 0.01), 1e-8},
                             {"decaying 60 x 10^-6", decaying_problem<double>(600, 60, 6.0, 5, 1e-3), 1e-8},
                             {"vandermonde 12 (leaves A)", vandermonde_problem<double>(1000, 12, 3, 0.01), 1e-6},
                             {"decaying 20 x 10^-7 (leaves A)", decaying_problem<double>(500, 20, 7.0, 4, 1e-3), 1e-6}};
  for (const data& d : kinds) {
    auto const W_star = fusekit::test::least_squares_reference(d.p);
    std::vector<double> Wc, Wg;
    auto const rc = cpu_fit(d.p, Wc, gd_options::recommended());
    auto const rg = gpu_fit(d.p, Wg, gd_options::recommended(), 0);
    EXPECT_EQ(rg.preconditioner, gd_preconditioner::cholesky) << d.name;
    EXPECT_EQ(rg.formulation, rc.formulation) << d.name;
    for (std::size_t n = 0; n < rc.outputs.size(); ++n) {
      EXPECT_EQ(rg.outputs[n].status, rc.outputs[n].status) << d.name << " " << n;
    }
    EXPECT_LE(rg.most_iterations(), 30) << d.name;
    if (d.bound == 0) {
      EXPECT_LE(max_relative_gap(Wg, Wc), 1e-10) << d.name;
    } else {
      EXPECT_LE(fusekit::test::relative_error(Wg, W_star), d.bound) << d.name;
    }
    gd_options gram = gd_options::recommended();
    gram.formulation = gd_formulation::gram;
    for (int path : {1, 2}) {
      if (d.bound > 1e-8 || (path == 1 && d.p.L > 60)) { continue; }  // A kept past what it holds: no bound
      auto const rp = gpu_fit(d.p, Wg, gram, path);
      EXPECT_EQ(rp.preconditioner, gd_preconditioner::cholesky) << d.name;
      EXPECT_TRUE(rp.all_converged()) << d.name << " path " << path << ": " << rp.summary();
      EXPECT_LE(fusekit::test::relative_error(Wg, d.bound == 0 ? fusekit::test::least_squares_reference(d.p) : W_star),
                1e-8)
          << d.name << " path " << path;
    }
    {  // host data: streamed into A, copied to the device where the fit leaves it
      std::vector<double> Wh(Wc.size(), 0.0);
      auto const rh = fusekit::fit(fusekit::cuda_staged{}, cmatrix<double>(d.p.X.data(), d.p.K, d.p.L),
                                   cmatrix<double>(d.p.Y.data(), d.p.K, d.p.N),
                                   fusekit::matrix<double>(Wh.data(), d.p.N, d.p.L), gd_options::recommended());
      EXPECT_EQ(rh.preconditioner, gd_preconditioner::cholesky) << d.name;
      EXPECT_EQ(rh.formulation, rc.formulation) << d.name << " (host data)";
      for (std::size_t n = 0; n < rc.outputs.size(); ++n) {
        EXPECT_EQ(rh.outputs[n].status, rc.outputs[n].status) << d.name << " (host data) " << n;
      }
      EXPECT_LE(fusekit::test::relative_error(Wh, W_star), d.bound == 0 ? 1e-8 : d.bound) << d.name << " (host data)";
    }
  }
  // Rank-deficient: a column dependent to 1e-11 (A singular to working
  // precision: a shifted factor); the least-squares residual, as on the CPU.
  for (std::int64_t L : {5, 30}) {
    auto p = fusekit::test::make_problem<double>(300, L, 1, 3, false, 0.1);
    std::mt19937 gen(3);
    std::normal_distribution<double> normal;
    for (std::int64_t k = 0; k < 300; ++k) {
      p.X[k * L + L - 1] = 3 * p.X[k * L + 1] - p.X[k * L + 2] + 1e-11 * normal(gen);
    }
    gd_options o = gd_options::recommended();
    o.formulation = gd_formulation::gram;
    std::vector<double> Wc, Wg;
    auto const rc = cpu_fit(p, Wc, o);
    auto const rg = gpu_fit(p, Wg, o, 0);
    EXPECT_EQ(rg.outputs[0].status, rc.outputs[0].status) << L;
    EXPECT_EQ(rg.preconditioner, gd_preconditioner::cholesky) << L;
    EXPECT_LE(fusekit::test::residual2(p, Wg, 0), fusekit::test::residual2(p, Wc, 0) * (1 + 1e-6L)) << L;
  }
  // Weighted, with ridge and an intercept: the CPU's fit within 1e-10.
  std::mt19937 gen(5151);
  for (int trial = 0; trial < 6; ++trial) {
    auto [p, s, lambda, intercept] = fusekit::test::make_ridge_trial(gen, trial);
    gd_options o = gd_options::recommended();
    o.relative_tolerance = 1e-14;
    o.ridge = lambda;
    o.fit_intercept = intercept;
    std::vector<double> Wc, bc, Wg, bg;
    auto const rc = cpu_fit_with_extras(p, s, o, Wc, bc);
    auto const rg = gpu_fit_with_extras(false, p, s, o, Wg, bg);
    EXPECT_EQ(rg.preconditioner, rc.preconditioner) << "trial " << trial;
    for (std::size_t n = 0; n < rc.outputs.size(); ++n) {
      EXPECT_EQ(rg.outputs[n].status, rc.outputs[n].status) << "trial " << trial;
    }
    EXPECT_LE(max_relative_gap(Wg, Wc), 1e-10) << "trial " << trial;
    EXPECT_LE(max_relative_gap(bg, bc), 1e-10) << "trial " << trial;
  }
}

// The best-iterate rule on the GPU (tests/train/data_kinds_test.cpp's
// property): whatever the method, options and data, an output that did not
// converge ends with a residual ‖y − Xw‖² no larger than its start's and
// W = 0's (up to 1e-12 of the latter), on device data (both paths) and on
// host data (the streamed system's residuals); and zero targets from a warm
// start end at W = 0 exactly.
TEST(GpuFit, AnUnconvergedFitIsNeverWorseThanItsStartOrZero) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  using fusekit::test::residual2;
  std::mt19937 gen(2025);
  int unconverged = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::int64_t const K = 5 + static_cast<std::int64_t>(gen() % 40), L = 1 + static_cast<std::int64_t>(gen() % 8);
    auto p = fusekit::test::make_problem<double>(K, L, 2, static_cast<std::uint32_t>(gen()), gen() % 2 == 0, 0.5);
    for (std::int64_t l = 0; l < L; ++l) {
      double const s = std::pow(10.0, static_cast<double>(gen() % 7) - 3.0);
      for (std::int64_t k = 0; k < K; ++k) { p.X[k * L + l] *= s; }
    }
    gd_options o;
    o.method = static_cast<gd_method>(gen() % 3);
    o.preconditioner = static_cast<fusekit::gd_preconditioner>(gen() % 2);
    o.formulation = gen() % 2 == 0 ? gd_formulation::gram : gd_formulation::direct;
    o.init = gen() % 2 == 0 ? fusekit::gd_init::warm_start : fusekit::gd_init::zeros;
    o.max_iterations = 1 + static_cast<std::int64_t>(gen() % 20);
    if (gen() % 3 == 0) { o.learning_rate = std::pow(10.0, static_cast<double>(gen() % 9) - 6.0); }
    std::vector<double> W0(static_cast<std::size_t>(2 * L));
    for (auto& w : W0) { w = static_cast<double>(gen() % 2001) / 100.0 - 10.0; }
    std::vector<double> const start = o.init == fusekit::gd_init::warm_start ? W0 : std::vector<double>(W0.size(), 0.0);
    std::vector<double> const zero(W0.size(), 0.0);
    for (int where = 0; where < 2; ++where) {  // device data, host data
      std::vector<double> W = W0;
      fusekit::fit_report r;
      if (where == 0) {
        device_buffer<double> X(p.X), Y(p.Y), dW(W);
        r = fusekit::fit(fusekit::cuda{}, cmatrix<double>(X.data(), K, L), cmatrix<double>(Y.data(), K, 2),
                         fusekit::matrix<double>(dW.data(), 2, L), o);
        W = dW.to_host();
      } else {
        r = fusekit::fit(fusekit::cuda_staged{}, cmatrix<double>(p.X.data(), K, L), cmatrix<double>(p.Y.data(), K, 2),
                         fusekit::matrix<double>(W.data(), 2, L), o);
      }
      for (std::int64_t n = 0; n < 2; ++n) {
        if (r.outputs[n].status == fit_status::converged) { continue; }
        ++unconverged;
        long double const got = residual2(p, W, n), slack = 1e-12L * residual2(p, zero, n);
        EXPECT_LE(got, residual2(p, zero, n) + slack) << "trial " << trial << " where " << where;
        EXPECT_LE(got, residual2(p, start, n) + slack) << "trial " << trial << " where " << where;
      }
    }
  }
  EXPECT_GT(unconverged, 20);  // the property was exercised
  for (auto f : {gd_formulation::direct, gd_formulation::gram}) {
    auto p = fusekit::test::make_problem<double>(60, 5, 1, 7, true, 0.0);
    for (auto& y : p.Y) { y = 0.0; }
    gd_options o = gd_options::recommended();
    o.formulation = f;
    o.init = fusekit::gd_init::warm_start;
    device_buffer<double> X(p.X), Y(p.Y), dW(std::vector<double>(5, 1.0));
    auto const r = fusekit::fit(fusekit::cuda{}, cmatrix<double>(X.data(), 60, 5), cmatrix<double>(Y.data(), 60, 1),
                                fusekit::matrix<double>(dW.data(), 1, 5), o);
    EXPECT_NE(r.outputs[0].status, fit_status::diverged) << fusekit::to_string(f);
    EXPECT_EQ(residual2(p, dW.to_host(), 0), 0.0L) << fusekit::to_string(f);
  }
}

// predict with intercepts: (Σ_l x_l w_l) + b_n in one kernel, the CPU's bits,
// on device data (fusekit::cuda) and host data (fusekit::cuda_staged).
TEST(GpuPredict, TheInterceptIsAddedWithTheCpusBits) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  for (std::int64_t L : {std::int64_t{5}, std::int64_t{3000}}) {  // rows staged in a tile, and a thread per element
    std::int64_t const K = 257, N = 3;
    std::vector<double> X(static_cast<std::size_t>(K * L)), W(static_cast<std::size_t>(N * L)), b{1e3, -0.5, 7.25};
    for (double& v : X) { v = normal(rng); }
    for (double& v : W) { v = normal(rng); }
    std::vector<double> Yc(static_cast<std::size_t>(K * N)), Ys(Yc.size());
    fusekit::predict(fusekit::cpu{}, cmatrix<double>(X.data(), K, L), cmatrix<double>(W.data(), N, L), b,
                     fusekit::matrix<double>(Yc.data(), K, N));
    device_buffer<double> dX(X), dW(W), db(b), dY(Yc.size());
    fusekit::predict(fusekit::cuda{}, cmatrix<double>(dX.data(), K, L), cmatrix<double>(dW.data(), N, L), db.cview(),
                     fusekit::matrix<double>(dY.data(), K, N));
    EXPECT_EQ(dY.to_host(), Yc) << "L " << L;
    fusekit::predict(fusekit::cuda_staged{}, cmatrix<double>(X.data(), K, L), cmatrix<double>(W.data(), N, L), b,
                     fusekit::matrix<double>(Ys.data(), K, N));
    EXPECT_EQ(Ys, Yc) << "L " << L;
  }
}

// The model on the GPU fits intercepts, keeps a host copy, and predicts
// with them, as the CPU's model does.
TEST(GpuLinearAssociation, InterceptsAsOnTheCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = fusekit::test::make_raw_problem<double>(500, 6, 2, 17, 0.1);
  std::vector<double> s(static_cast<std::size_t>(p.K));
  for (std::size_t k = 0; k < s.size(); ++k) { s[k] = 0.5 + static_cast<double>(k % 3); }
  fusekit::linear_association<double> cpu_net(p.L, p.N);
  fusekit::linear_association<double, fusekit::cuda> gpu_net(p.L, p.N);
  for (auto* o : {&cpu_net.options(), &gpu_net.options()}) {
    o->preconditioner = fusekit::gd_preconditioner::jacobi;
    o->relative_tolerance = 1e-14;
    o->fit_intercept = true;
    o->ridge = 0.25;
  }
  (void)cpu_net.fit(cmatrix<double>(p.X.data(), p.K, p.L), cmatrix<double>(p.Y.data(), p.K, p.N), s);
  device_buffer<double> X(p.X), Y(p.Y), ds(s), dY(p.Y.size());
  auto const r = gpu_net.fit(cmatrix<double>(X.data(), p.K, p.L), cmatrix<double>(Y.data(), p.K, p.N), ds.cview());
  EXPECT_TRUE(r.all_converged()) << r.summary();
  EXPECT_LE(max_relative_gap(gpu_net.intercepts(), cpu_net.intercepts()), 1e-10);
  gpu_net.predict(cmatrix<double>(X.data(), p.K, p.L), fusekit::matrix<double>(dY.data(), p.K, p.N));
  std::vector<double> Yc(p.Y.size());
  cpu_net.predict(cmatrix<double>(p.X.data(), p.K, p.L), fusekit::matrix<double>(Yc.data(), p.K, p.N));
  EXPECT_LE(max_relative_gap(dY.to_host(), Yc), 1e-10);
}

TEST(GpuFit, UsersNineByNineRunsInOneLaunchInFloatAndDouble) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const pd = make_problem<double>(9, 9, 9, 2);
  auto const pf = make_problem<float>(9, 9, 9, 2);
  gd_options o;
  o.max_iterations = 2000000;
  o.formulation = gd_formulation::gram;
  o.tolerance = 1e-8;
  std::vector<double> Wd, Wdc;
  auto const gd = gpu_fit(pd, Wd, o, 0);
  auto const cd = cpu_fit(pd, Wdc, o);
  EXPECT_STREQ(fusekit::to_string(gd.path), "single_launch");
  expect_same_fit(gd, Wd, cd, Wdc, 1e-4);
  o.tolerance = 1e-4;
  std::vector<float> Wf, Wfc;
  auto const gf = gpu_fit(pf, Wf, o, 0);
  auto const cf = cpu_fit(pf, Wfc, o);
  for (std::size_t n = 0; n < gf.outputs.size(); ++n) { EXPECT_EQ(gf.outputs[n].status, cf.outputs[n].status); }
}

TEST(GpuFit, StoppingRulesOnBothPaths) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<float>(200, 16, 3, 3);
  std::vector<float> W;
  gd_options o;
  o.max_iterations = 10;
  double const lr = cpu_fit(p, W, o).learning_rate;
  for (int path : {1, 2}) {
    gd_options diverge;
    diverge.learning_rate = 3 * lr;
    diverge.max_iterations = 100000;
    diverge.formulation = gd_formulation::gram;
    for (const auto& out : gpu_fit(p, W, diverge, path).outputs) {
      EXPECT_EQ(out.status, fit_status::diverged) << path;
      EXPECT_LE(out.iterations, 100);
    }
    gd_options stall;
    stall.tolerance = 1e-30;
    stall.max_iterations = 10000000;
    stall.formulation = gd_formulation::gram;
    for (const auto& out : gpu_fit(p, W, stall, path).outputs) {
      EXPECT_TRUE(out.status == fit_status::stalled || out.status == fit_status::max_iterations) << path;
    }
  }
}

TEST(GpuPredict, MatchesCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<double>(1000, 37, 11, 4);
  std::vector<double> W(11 * 37);
  for (std::size_t i = 0; i < W.size(); ++i) { W[i] = std::sin(static_cast<double>(i)); }
  std::vector<double> cpu(1000 * 11);
  fusekit::predict(fusekit::cpu{}, cmatrix<double>(p.X.data(), 1000, 37), cmatrix<double>(W.data(), 11, 37),
                   fusekit::matrix<double>(cpu.data(), 1000, 11));
  device_buffer<double> dX(p.X), dW(W), dY(1000 * 11);
  fusekit::predict(fusekit::cuda{}, cmatrix<double>(dX.data(), 1000, 37), cmatrix<double>(dW.data(), 11, 37),
                   fusekit::matrix<double>(dY.data(), 1000, 11));
  auto const gpu = dY.to_host();
  for (std::size_t i = 0; i < cpu.size(); ++i) { EXPECT_NEAR(gpu[i], cpu[i], 1e-12 * (1 + std::fabs(cpu[i]))); }
}

// Rows of X longer than predict's 16 KB staging tile (2100 doubles) take a
// thread per element; float rows of 1100 stage 3 a block (K = 100 leaves a tile of 1).
TEST(GpuPredict, RowsLongerThanTheTileAndPartialTilesMatchCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const check = [](auto zero, std::int64_t K, std::int64_t L, std::int64_t N) {
    using T = decltype(zero);
    std::vector<T> X(static_cast<std::size_t>(K * L)), W(static_cast<std::size_t>(N * L));
    for (std::size_t i = 0; i < X.size(); ++i) { X[i] = static_cast<T>(std::cos(0.37 * static_cast<double>(i))); }
    for (std::size_t i = 0; i < W.size(); ++i) { W[i] = static_cast<T>(std::sin(static_cast<double>(i))); }
    std::vector<T> cpu(static_cast<std::size_t>(K * N));
    fusekit::predict(fusekit::cpu{}, cmatrix<T>(X.data(), K, L), cmatrix<T>(W.data(), N, L),
                     fusekit::matrix<T>(cpu.data(), K, N));
    device_buffer<T> dX(X), dW(W), dY(cpu.size());
    fusekit::predict(fusekit::cuda{}, cmatrix<T>(dX.data(), K, L), cmatrix<T>(dW.data(), N, L),
                     fusekit::matrix<T>(dY.data(), K, N));
    auto const gpu = dY.to_host();
    // Both sum in l order, each within γ_L·Σ|x·w| ≈ L·u·Σ|x·w| of the exact
    // sum (the GPU's contracted multiply-adds round less, never more).
    double const u = std::numeric_limits<T>::epsilon() / 2;
    for (std::int64_t k = 0; k < K; ++k) {
      for (std::int64_t n = 0; n < N; ++n) {
        long double magnitude = 0;
        for (std::int64_t l = 0; l < L; ++l) {
          magnitude += std::fabs(static_cast<long double>(X[static_cast<std::size_t>(k * L + l)]) *
                                 W[static_cast<std::size_t>(n * L + l)]);
        }
        std::size_t const e = static_cast<std::size_t>(k * N + n);
        EXPECT_NEAR(gpu[e], cpu[e], 2.0 * 1.01 * static_cast<double>(L) * u * static_cast<double>(magnitude))
            << "K " << K << ", L " << L << ", row " << k << ", output " << n;
      }
    }
  };
  check(0.0, 50, 2100, 3);
  check(0.0f, 100, 1100, 2);
}

// Iteration budgets that are not a multiple of the host's 64-iteration check:
// the cuBLAS path runs exactly the budget (a partial last batch, no extra one).
TEST(GpuFit, CublasPathRunsExactlyTheIterationBudget) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<double>(400, 20, 5, 6);
  for (std::int64_t budget : {1, 63, 64, 65, 200}) {
    for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
      gd_options o;
      o.tolerance = 1e-300;
      o.stall_window = budget + 1;
      o.max_iterations = budget;
      o.formulation = f;
      std::vector<double> Wg, Wc;
      auto const gpu = gpu_fit(p, Wg, o, 2);
      auto const cpu = cpu_fit(p, Wc, o);
      for (const auto& out : gpu.outputs) {
        EXPECT_EQ(out.status, fit_status::max_iterations) << budget;
        EXPECT_EQ(out.iterations, budget);
      }
      for (std::size_t i = 0; i < Wg.size(); ++i) {
        EXPECT_NEAR(Wg[i], Wc[i], 1e-9 * (1 + std::fabs(Wc[i]))) << budget;
      }
    }
  }
}

// A short fit on both paths, plain and Nesterov, automatic rate, across one
// 64-iteration batch boundary (the first batch runs launch by launch, the next
// from a graph): small enough for compute-sanitizer (scripts/gpu/check.sh).
TEST(GpuFit, ShortFitOnBothPathsForTheSanitizers) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<float>(64, 20, 3, 7);
  for (auto m : {gd_method::plain, gd_method::nesterov}) {
    gd_options o;
    o.method = m;
    o.formulation = gd_formulation::gram;
    o.tolerance = 1e-30;
    o.max_iterations = 150;
    o.stall_window = 151;
    std::vector<float> Wc, Ws, Wb;
    auto const cpu = cpu_fit(p, Wc, o);
    for (int path : {1, 2}) {
      std::vector<float>& W = path == 1 ? Ws : Wb;
      auto const gpu = gpu_fit(p, W, o, path);
      EXPECT_NEAR(gpu.learning_rate, cpu.learning_rate, 1e-4 * cpu.learning_rate) << path;
      for (const auto& out : gpu.outputs) {
        EXPECT_EQ(out.status, fit_status::max_iterations) << path;
        EXPECT_EQ(out.iterations, 150) << path;
      }
      // Plain descent contracts, so rounding differences stay small; Nesterov's
      // restarts may flip on a rounding, so its iterates are only checked finite.
      for (std::size_t i = 0; i < W.size(); ++i) {
        EXPECT_TRUE(fusekit::test::is_finite(W[i])) << path;
        if (m == gd_method::plain) { EXPECT_NEAR(W[i], Wc[i], 1e-3f * (1 + std::fabs(Wc[i]))) << path; }
      }
    }
  }
  // recommended(): the Cholesky factor and its solves on both paths (Gram asked
  // for: the single launch), and CGLS where the factor leaves A (automatic).
  auto const v = fusekit::test::vandermonde_problem<double>(300, 12, 3, 0.01);
  for (int path : {0, 1}) {
    gd_options o = gd_options::recommended();
    if (path == 1) { o.formulation = gd_formulation::gram; }
    std::vector<double> W;
    auto const r = gpu_fit(v, W, o, path);
    EXPECT_EQ(r.preconditioner, fusekit::gd_preconditioner::cholesky) << path;
    for (double w : W) { EXPECT_TRUE(fusekit::test::is_finite(w)) << path; }
  }
}

TEST(GpuFit, OneCublasHandlePerThreadAndDevice) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  cublasHandle_t const first = fusekit::detail::cublas_handle();
  EXPECT_EQ(fusekit::detail::cublas_handle(), first);
  cublasHandle_t other = nullptr;
  std::thread([&] { other = fusekit::detail::cublas_handle(); }).join();
  EXPECT_NE(other, nullptr);
  EXPECT_NE(other, first);
}

// cuBLAS failures are fusekit::cuda_error naming the status (no device needed).
TEST(CudaFitErrors, CublasStatusIsACudaErrorWithItsName) {
  try {
    FUSEKIT_CUBLAS_TRY(CUBLAS_STATUS_INVALID_VALUE);
    ADD_FAILURE() << "not thrown";
  } catch (const fusekit::cuda_error& e) {
    EXPECT_EQ(e.library_status(), static_cast<int>(CUBLAS_STATUS_INVALID_VALUE));
    EXPECT_NE(std::string(e.what()).find("cuBLAS call 'CUBLAS_STATUS_INVALID_VALUE' failed"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(": CUBLAS_STATUS_INVALID_VALUE ("), std::string::npos) << e.what();
  }
}

// K·N = 0: nothing to compute, so nothing is launched (a 0-block grid is a CUDA
// error) and the device is not even asked for its attributes.
TEST(CudaPredict, EmptyOutputLaunchesNothing) {
  std::vector<float> X(12), W(8);
  EXPECT_NO_THROW(fusekit::predict(fusekit::cuda{}, cmatrix<float>(nullptr, 0, 4), cmatrix<float>(W.data(), 2, 4),
                                   fusekit::matrix<float>(nullptr, 0, 2)));
  EXPECT_NO_THROW(fusekit::predict(fusekit::cuda{}, cmatrix<float>(X.data(), 3, 4), cmatrix<float>(nullptr, 0, 4),
                                   fusekit::matrix<float>(nullptr, 3, 0)));
}

// Shapes are checked before anything touches the device.
TEST(CudaFitArguments, ShapesRejectedBeforeAnyLaunch) {
  std::vector<float> X(20), Y(10), W(8);
  EXPECT_THROW(fusekit::fit(fusekit::cuda{}, cmatrix<float>(X.data(), 5, 4), cmatrix<float>(Y.data(), 4, 2),
                            fusekit::matrix<float>(W.data(), 2, 4)),
               fusekit::invalid_argument);
  gd_options bad;
  bad.tolerance = -1;
  EXPECT_THROW(fusekit::fit(fusekit::cuda{}, cmatrix<float>(X.data(), 5, 4), cmatrix<float>(Y.data(), 5, 2),
                            fusekit::matrix<float>(W.data(), 2, 4), bad),
               fusekit::invalid_argument);
}

TEST(GpuLinearAssociation, TheModelIsTheFreeFunctions) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<float>(400, 16, 3, 21);
  device_buffer<float> X(p.X), Y(p.Y);
  gd_options o;
  o.tolerance = 1e-6;
  fusekit::linear_association<float, fusekit::cuda> net(p.L, p.N, o);
  auto const r = net.fit(cmatrix<float>(X.data(), p.K, p.L), cmatrix<float>(Y.data(), p.K, p.N));
  std::vector<float> W_free;
  auto const free = gpu_fit(p, W_free, o, 0);
  ASSERT_EQ(r.outputs.size(), free.outputs.size());
  for (std::size_t n = 0; n < r.outputs.size(); ++n) { EXPECT_EQ(r.outputs[n].iterations, free.outputs[n].iterations); }
  std::vector<float> W(W_free.size());
  ASSERT_EQ(cudaMemcpy(W.data(), net.weights().data_handle(), W.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(W, W_free);
}

TEST(GpuFit, ProgressAtEachHostCheck) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<double>(300, 24, 4, 13);
  gd_options o;
  o.tolerance = 1e-10;
  std::vector<fusekit::fit_progress> seen;
  o.progress = [&](const fusekit::fit_progress& now) { seen.push_back(now); };
  std::vector<double> W;
  auto const cublas = gpu_fit(p, W, o, 2);
  ASSERT_FALSE(seen.empty());
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].iteration, static_cast<std::int64_t>(64 * (k + 1)));
  }
  EXPECT_EQ(seen.back().running, 0);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>((cublas.most_iterations() + 63) / 64));
  seen.clear();
  auto const single = gpu_fit(p, W, o, 1);
  ASSERT_EQ(seen.size(), 1u);  // one launch: reported once, at the end
  EXPECT_EQ(seen[0].iteration, single.most_iterations());
  EXPECT_EQ(seen[0].running, 0);
}

TEST(GpuFit, ConjugateGradientWithJacobiOnBothPathsMatchesTheCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = fusekit::test::make_raw_problem<double>(300, 12, 3, 31, 0.1);
  auto const W_star = fusekit::test::least_squares_reference(p);
  gd_options o;
  o.method = gd_method::conjugate_gradient;
  o.preconditioner = fusekit::gd_preconditioner::jacobi;
  o.relative_tolerance = 1e-13;
  o.tolerance = 1e-300;
  o.max_iterations = 10000;
  o.formulation = gd_formulation::gram;
  std::vector<double> Wc, Ws, Wb;
  auto const cpu = cpu_fit(p, Wc, o);
  ASSERT_TRUE(cpu.all_converged());
  for (int path : {1, 2}) {
    std::vector<double>& W = path == 1 ? Ws : Wb;
    auto const gpu = gpu_fit(p, W, o, path);
    for (std::size_t n = 0; n < gpu.outputs.size(); ++n) {
      EXPECT_EQ(gpu.outputs[n].status, fit_status::converged) << path;
      EXPECT_EQ(gpu.outputs[n].rule, fusekit::stop_rule::relative_tolerance) << path;
      EXPECT_LE(gpu.outputs[n].iterations, 4 * p.L) << path;
    }
    EXPECT_LE(fusekit::test::relative_error(W, W_star), 1e-8) << path;
    std::vector<long double> const cpu_w(Wc.begin(), Wc.end());
    EXPECT_LE(fusekit::test::relative_error(W, cpu_w), 1e-8) << path;
  }
  o.formulation = gd_formulation::direct;  // CGLS on the cuBLAS path: X·d and Xᵀρ, the same bodies
  auto const cgls = gpu_fit(p, Wb, o, 2);
  EXPECT_STREQ(fusekit::to_string(cgls.path), "cublas");
  EXPECT_TRUE(cgls.all_converged());
  EXPECT_LE(fusekit::test::relative_error(Wb, W_star), 1e-8);
}

// Refinement on the GPU (the steps of detail/train/refinement.hpp): the
// residual by cuBLAS from X itself, the correction on the kept path. Wide raw
// data, where the fit alone misses 1e-8 (train_cpu_test, Refinement), on the
// cuBLAS path, on the single launch (narrow data), and from host memory
// (the streamed system).
TEST(GpuFit, RefinementReachesTheTargetOnEveryPath) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const wide = fusekit::test::make_raw_problem<double>(2000, 256, 4, 31, 0.1);
  auto const W_star = fusekit::test::least_squares_reference(wide);
  gd_options o = gd_options::recommended();
  o.formulation = gd_formulation::gram;
  std::vector<double> W;
  auto const r = gpu_fit(wide, W, o, 2);
  EXPECT_TRUE(r.all_converged());
  EXPECT_LE(fusekit::test::relative_error(W, W_star), 1e-8);
  std::vector<double> Wh(static_cast<std::size_t>(wide.N * wide.L), 0.0);  // host memory: streamed
  auto const rh = fusekit::fit(fusekit::cuda_staged{}, cmatrix<double>(wide.X.data(), wide.K, wide.L),
                               cmatrix<double>(wide.Y.data(), wide.K, wide.N),
                               fusekit::matrix<double>(Wh.data(), wide.N, wide.L), o);
  EXPECT_TRUE(rh.all_converged());
  EXPECT_LE(fusekit::test::relative_error(Wh, W_star), 1e-8);
  auto const narrow = fusekit::test::make_raw_problem<double>(300, 12, 3, 36, 0.1);
  auto const narrow_star = fusekit::test::least_squares_reference(narrow);
  auto const rs = gpu_fit(narrow, W, o, 1);
  EXPECT_STREQ(fusekit::to_string(rs.path), "single_launch");
  EXPECT_TRUE(rs.all_converged());
  EXPECT_LE(fusekit::test::relative_error(W, narrow_star), 1e-8);
}

// Scaled gradient descent on the GPU: the same iterates as the CPU's.
TEST(GpuFit, JacobiPlainAndNesterovMatchTheCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = fusekit::test::make_raw_problem<double>(200, 8, 2, 32, 0.1);
  for (auto m : {gd_method::plain, gd_method::nesterov}) {
    gd_options o;
    o.method = m;
    o.preconditioner = fusekit::gd_preconditioner::jacobi;
    o.tolerance = 1e-300;
    o.max_iterations = 300;
    o.formulation = gd_formulation::gram;
    std::vector<double> Wc, Wg;
    auto const cpu = cpu_fit(p, Wc, o);
    for (int path : {1, 2}) {
      auto const gpu = gpu_fit(p, Wg, o, path);
      expect_same_fit(gpu, Wg, cpu, Wc, 1e-9 * 1e3);  // W's entries reach 10^3 (units of 10^-3)
    }
  }
}

}  // namespace
