// SPDX-License-Identifier: Apache-2.0
// fusekit::nccl on one GPU with a one-rank communicator (scripts/gpu/check.sh
// runs it; several GPUs wait for a machine that has them). The deterministic
// sum and transform_reduce over NCCL give the single-GPU bits, for the
// implicit split and an explicit offset; the other algorithms are within their
// bound; reduce takes every op; fit gives the single-GPU fit's W and statuses.
// Skipped without a device.
#include <fusekit/nccl.cuh>

#include "../common/device_buffer.cuh"
#include "../common/test_support.hpp"
#include "../common/train_problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

using fusekit::test::device_buffer;

class OneRank : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fusekit::test::cuda_device_present()) { GTEST_SKIP() << "no CUDA device"; }
    int const devices[1] = {0};
    ASSERT_EQ(ncclCommInitAll(&comm_, 1, devices), ncclSuccess);
  }
  void TearDown() override {
    if (comm_ != nullptr) { (void)ncclCommDestroy(comm_); }
  }
  ncclComm_t comm_ = nullptr;
};

std::vector<float> values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) { x = u(rng) * (rng() % 5 == 0 ? 1e5f : 1.0f); }
  return v;
}

TEST_F(OneRank, DeterministicSumHasTheSingleGpuBits) {
  fusekit::nccl const gpus{comm_};
  for (std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{8191}, std::size_t{8192}, std::size_t{8193}, std::size_t{100003}}) {
    auto const x = values(n, static_cast<unsigned>(n) + 1);
    device_buffer<float> d(x);
    float const single = fusekit::sum(fusekit::cuda{}, d.cview(), fusekit::reduce_algorithm::deterministic);
    float const on_cpu = fusekit::sum(fusekit::cpu{}, x, fusekit::reduce_algorithm::deterministic);
    float const over_nccl = fusekit::sum(gpus, d.cview(), fusekit::reduce_algorithm::deterministic);
    float const at_zero = fusekit::sum(gpus.at(0), d.cview(), fusekit::reduce_algorithm::deterministic);
    EXPECT_EQ(std::memcmp(&over_nccl, &single, sizeof single), 0) << n;
    EXPECT_EQ(std::memcmp(&over_nccl, &on_cpu, sizeof single), 0) << n;
    EXPECT_EQ(std::memcmp(&at_zero, &single, sizeof single), 0) << n;
    double const dot =
        fusekit::transform_reduce(gpus, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<double>{},
                                  fusekit::weigh{}, d.cview(), d.cview());
    double const dot1 =
        fusekit::transform_reduce(fusekit::cuda{}, fusekit::reduce_algorithm::deterministic,
                                  fusekit::accumulate_in<double>{}, fusekit::weigh{}, d.cview(), d.cview());
    EXPECT_EQ(std::memcmp(&dot, &dot1, sizeof dot), 0) << n;
  }
}

TEST_F(OneRank, OtherAlgorithmsWithinTheirBound) {
  auto const x = values(200001, 3);
  device_buffer<float> d(x);
  long double abs_sum = 0;
  long double const exact = fusekit::test::exact_sum(x, &abs_sum);
  for (auto a : {fusekit::reduce_algorithm::naive_atomic, fusekit::reduce_algorithm::block_atomic,
                 fusekit::reduce_algorithm::run_to_run}) {
    double const s = fusekit::sum(fusekit::nccl{comm_}, d.cview(), a, fusekit::accumulate_in<double>{});
    EXPECT_LE(std::fabs(static_cast<long double>(s) - exact), 1e-9L * abs_sum) << fusekit::to_string(a);
  }
}

// The larger magnitude (the first on a tie of |a| = |b| with a ≠ b: the
// positive one): associative and commutative, with no identity fusekit knows,
// so fusekit::nccl's run_to_run reduces a shard from its first value.
struct larger_magnitude {
  __host__ __device__ float operator()(float a, float b) const {
    float const ma = a < 0 ? -a : a, mb = b < 0 ? -b : b;
    if (ma != mb) { return ma > mb ? a : b; }
    return a > b ? a : b;
  }
};

// fusekit::reduce on nccl: every op, the tags and the run-time values alike;
// exact ops give the single GPU's bits on every algorithm that takes them.
TEST_F(OneRank, ReduceTakesEveryOp) {
  fusekit::nccl const gpus{comm_};
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{100003}}) {
    auto const x = values(n, static_cast<unsigned>(n) + 7);
    device_buffer<float> d(x), out(2);
    float expected_min = INFINITY, expected_big = 0.0f;
    for (float v : x) {
      expected_min = v < expected_min ? v : expected_min;
      expected_big = larger_magnitude{}(expected_big, v);
    }
    fusekit::reduce(gpus, d.cview(), out.data(), fusekit::minimum{}, INFINITY);
    fusekit::reduce(gpus, d.cview(), out.data() + 1, larger_magnitude{}, 0.0f, fusekit::run_to_run{});
    auto got = out.to_host();
    EXPECT_EQ(got[0], expected_min) << n;
    EXPECT_EQ(got[1], expected_big) << n;
    for (auto a : {fusekit::reduce_algorithm::run_to_run, fusekit::reduce_algorithm::deterministic}) {
      fusekit::reduce(gpus, d.cview(), out.data(), fusekit::maximum{}, -INFINITY, a);
      fusekit::reduce(gpus, d.cview(), out.data() + 1, larger_magnitude{}, 0.0f, a);
      got = out.to_host();
      float expected_max = -INFINITY;
      for (float v : x) { expected_max = v > expected_max ? v : expected_max; }
      EXPECT_EQ(got[0], expected_max) << n << " " << fusekit::to_string(a);
      EXPECT_EQ(got[1], expected_big) << n << " " << fusekit::to_string(a);
    }
  }
}

TEST_F(OneRank, FitGivesTheSingleGpuFit) {
  std::int64_t const K = 4000, L = 8, N = 3;
  auto const p = fusekit::test::make_problem<double>(K, L, N, 5, false, 0.01);
  device_buffer<double> X(p.X), Y(p.Y), W1(N * L), W2(N * L);
  FUSEKIT_CUDA_TRY(cudaMemset(W1.data(), 0, N * L * sizeof(double)));
  FUSEKIT_CUDA_TRY(cudaMemset(W2.data(), 0, N * L * sizeof(double)));
  using cm = fusekit::matrix<const double>;
  using m = fusekit::matrix<double>;
  fusekit::gd_options o;
  o.formulation = fusekit::gd_formulation::gram;
  o.tolerance = 1e-14;
  auto const r1 = fusekit::fit(fusekit::cuda{}, cm(X.data(), K, L), cm(Y.data(), K, N), m(W1.data(), N, L), o);
  auto const r2 = fusekit::fit(fusekit::nccl{comm_}, cm(X.data(), K, L), cm(Y.data(), K, N), m(W2.data(), N, L), o);
  ASSERT_EQ(r1.outputs.size(), r2.outputs.size());
  for (std::size_t n = 0; n < r1.outputs.size(); ++n) { EXPECT_EQ(r1.outputs[n].status, r2.outputs[n].status); }
  EXPECT_EQ(W1.to_host(), W2.to_host());  // one rank: the allreduce leaves A and B as they are
}

// The direct formulation (plain descent and CGLS) and CGLS where the Cholesky
// factor leaves A: on one rank the allreduced sums (yᵀy, qᵀq, Xᵀ(…)) are the
// single GPU's, so W and the reports are its bits.
TEST_F(OneRank, FitOnXGivesTheSingleGpuFit) {
  std::int64_t const K = 600, L = 8, N = 2;
  auto p = fusekit::test::make_problem<double>(K, L, N, 7, false, 0.01);
  using cm = fusekit::matrix<const double>;
  using m = fusekit::matrix<double>;
  for (int kind = 0; kind < 3; ++kind) {  // plain direct, CGLS, recommended() on a near-dependent column
    fusekit::gd_options o = fusekit::gd_options::recommended();
    if (kind < 2) {
      o.formulation = fusekit::gd_formulation::direct;
      o.method = kind == 0 ? fusekit::gd_method::plain : fusekit::gd_method::conjugate_gradient;
      o.preconditioner = fusekit::gd_preconditioner::jacobi;
      o.max_iterations = 3000;
    } else {  // column 7 = column 6 + 1e-9 noise: κ(A) past what the factor holds
      for (std::int64_t k = 0; k < K; ++k) {
        p.X[k * L + 7] = p.X[k * L + 6] + 1e-9 * static_cast<double>((k * 7919) % 13 - 6);
      }
    }
    device_buffer<double> X(p.X), Y(p.Y), W1(N * L), W2(N * L);
    FUSEKIT_CUDA_TRY(cudaMemset(W1.data(), 0, N * L * sizeof(double)));
    FUSEKIT_CUDA_TRY(cudaMemset(W2.data(), 0, N * L * sizeof(double)));
    auto const r1 = fusekit::fit(fusekit::cuda{}, cm(X.data(), K, L), cm(Y.data(), K, N), m(W1.data(), N, L), o);
    auto const r2 = fusekit::fit(fusekit::nccl{comm_}, cm(X.data(), K, L), cm(Y.data(), K, N), m(W2.data(), N, L), o);
    EXPECT_EQ(r1.formulation, fusekit::gd_formulation::direct) << "kind " << kind << ": " << r1.summary();
    EXPECT_EQ(r2.formulation, r1.formulation) << "kind " << kind;
    ASSERT_EQ(r1.outputs.size(), r2.outputs.size());
    for (std::size_t n = 0; n < r1.outputs.size(); ++n) {
      EXPECT_EQ(r1.outputs[n].status, r2.outputs[n].status) << "kind " << kind;
      EXPECT_EQ(r1.outputs[n].iterations, r2.outputs[n].iterations) << "kind " << kind;
    }
    EXPECT_EQ(W1.to_host(), W2.to_host()) << "kind " << kind;
  }
}

// Ridge, an intercept and sample weights on one rank: the single GPU's fit
// of the same prepared copy, bit for bit (one rank: the rank-order sums and
// the allreduce leave every value as it is).
TEST_F(OneRank, FitWithRidgeInterceptAndWeightsGivesTheSingleGpuFit) {
  std::int64_t const K = 2000, L = 6, N = 2;
  auto const p = fusekit::test::make_raw_problem<double>(K, L, N, 9, 0.1);
  std::vector<double> s(static_cast<std::size_t>(K));
  for (std::int64_t k = 0; k < K; ++k) { s[k] = static_cast<double>(k % 4); }  // zeros included
  device_buffer<double> X(p.X), Y(p.Y), ds(s), W1(N * L), W2(N * L), b1(N), b2(N);
  using cm = fusekit::matrix<const double>;
  using m = fusekit::matrix<double>;
  fusekit::gd_options o = fusekit::gd_options::recommended();
  o.preconditioner = fusekit::gd_preconditioner::jacobi;
  o.fit_intercept = true;
  o.ridge = 0.5;
  auto const r1 = fusekit::fit(fusekit::cuda{}, cm(X.data(), K, L), cm(Y.data(), K, N), m(W1.data(), N, L), o,
                               fusekit::fit_extras<double>{ds.cview(), b1.view()});
  auto const r2 = fusekit::fit(fusekit::nccl{comm_}, cm(X.data(), K, L), cm(Y.data(), K, N), m(W2.data(), N, L), o,
                               fusekit::fit_extras<double>{ds.cview(), b2.view()});
  EXPECT_TRUE(r1.all_converged()) << r1.summary();
  ASSERT_EQ(r1.outputs.size(), r2.outputs.size());
  for (std::size_t n = 0; n < r1.outputs.size(); ++n) { EXPECT_EQ(r1.outputs[n].status, r2.outputs[n].status); }
  EXPECT_EQ(W1.to_host(), W2.to_host());
  EXPECT_EQ(b1.to_host(), b2.to_host());
}

// The header's snippet (tests/snippets/check_snippets.py finds it in nccl.cuh).
TEST_F(OneRank, DocumentationSnippet) {
  std::int64_t const K = 64, L = 3, N = 2;
  auto const p = fusekit::test::make_problem<double>(K, L, N, 4, false, 0.0);
  device_buffer<float> shard(std::vector<float>(1000, 0.5f));
  device_buffer<double> dX(p.X), dY(p.Y), dW(N * L);
  FUSEKIT_CUDA_TRY(cudaMemset(dW.data(), 0, N * L * sizeof(double)));
  fusekit::matrix<const double> const my_X_rows(dX.data(), K, L), my_Y_rows(dY.data(), K, N);
  fusekit::matrix<double> const W(dW.data(), N, L);
  ::cuda::std::span<const float> const my_shard = shard.cview();
  fusekit::gd_options options;
  options.formulation = fusekit::gd_formulation::gram;
  ncclComm_t const comm = comm_;
  cudaStream_t const stream = nullptr;
  // clang-format off
  // snippet: include/fusekit/nccl.cuh
  fusekit::nccl const gpus{comm, fusekit::cuda{stream}};   // ncclComm_t, this rank's stream
  float s = fusekit::sum(gpus, my_shard, fusekit::reduce_algorithm::deterministic);
  fusekit::fit_report r = fusekit::fit(gpus, my_X_rows, my_Y_rows, W, options);
  // end snippet
  // clang-format on
  EXPECT_EQ(s, 500.0f);
  EXPECT_TRUE(r.all_converged());
}

}  // namespace
