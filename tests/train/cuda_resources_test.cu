// SPDX-License-Identifier: Apache-2.0
// The trainer's resources on the GPU: every temporary from the policy's
// memory resource, the policy's tuning, the caller's workspace and its size.
#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include "common/cuda_fit.cuh"
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

using fusekit::gd_formulation;
using fusekit::gd_options;
using fusekit::test::device_buffer;
using fusekit::test::gpu_fit;
using fusekit::test::make_problem;
template <class T>
using cmatrix = fusekit::matrix<const T>;

// ---- resources carried by the policy -----------------------------------------

// A stream-ordered resource with the cuda::mr async interface, drawing from a
// private memory pool and counting what it hands out.
class counting_pool {
 public:
  counting_pool() {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    EXPECT_EQ(cudaMemPoolCreate(&pool_, &props), cudaSuccess);
  }
  ~counting_pool() { (void)cudaMemPoolDestroy(pool_); }
  void* allocate_async(std::size_t bytes, std::size_t, cuda::stream_ref s) {
    void* p = nullptr;
    if (cudaMallocFromPoolAsync(&p, bytes, pool_, s.get()) != cudaSuccess) { throw std::bad_alloc(); }
    ++allocations;
    live += bytes;
    return p;
  }
  void deallocate_async(void* p, std::size_t bytes, std::size_t, cuda::stream_ref s) {
    (void)cudaFreeAsync(p, s.get());
    ++deallocations;
    live -= bytes;
  }
  int allocations = 0;
  int deallocations = 0;
  std::size_t live = 0;

 private:
  cudaMemPool_t pool_ = nullptr;
};

// Bytes the device's default pool (cudaMallocAsync's) has handed out at most since the last reset.
std::uint64_t default_pool_high_and_reset() {
  cudaMemPool_t pool = nullptr;
  EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  std::uint64_t high = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high), cudaSuccess);
  std::uint64_t zero = 0;
  EXPECT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  return high;
}

// What fusekit promises is that its own allocations go through the policy's
// resource; cuBLAS's are cuBLAS's. fusekit gives every handle a workspace from
// the resource (cublasSetWorkspace after each cublasSetStream, which resets it),
// and cuBLAS's documentation says a handle with a user workspace takes its
// workspace from there ("cuBLAS Library User Guide", cublasSetWorkspace()). Whether
// cuBLAS also allocates elsewhere for its own use is not fusekit's to promise:
// after a call that ran cuBLAS, the default pool's use is recorded, not asserted.
void expect_default_pool_untouched(bool cublas_ran, const char* what) {
  std::uint64_t const high = default_pool_high_and_reset();
  if (cublas_ran) {
    ::testing::Test::RecordProperty(std::string("default_pool_bytes_after_cublas_") + what, std::to_string(high));
    return;
  }
  EXPECT_EQ(high, 0u) << what << " allocated through cudaMallocAsync, not the policy's resource";
}

// Bytes fusekit's own pool (the default resource's) has handed out at most since the last reset.
std::uint64_t fusekit_pool_high_and_reset() {
  cudaMemPool_t pool = nullptr;
  EXPECT_EQ(fusekit::detail::find_default_device_pool(pool), cudaSuccess);
  std::uint64_t high = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high), cudaSuccess);
  std::uint64_t zero = 0;
  EXPECT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  return high;
}

// The workspace arithmetic (no device needed): a fit's workspace holds cuBLAS's
// workspace of the tuning in use on top of the fit's own buffers, whichever
// path and formulation, and the device-free default covers every device's tuning.
TEST(FitWorkspace, HoldsCublasWorkspaceOfTheTuning) {
  for (auto f : {gd_formulation::gram, gd_formulation::direct}) {
    for (bool automatic : {true, false}) {
      gd_options o;
      o.formulation = f;
      if (!automatic) { o.learning_rate = 1e-3; }
      for (auto [K, L, N] : {std::array<std::int64_t, 3>{1000, 9, 9}, {100000, 300, 16}, {50, 2, 1}}) {
        fusekit::tuning none = fusekit::tuning_for(9, 0);
        none.train.cublas_workspace_bytes = 0;
        std::size_t const base = fusekit::fit_workspace_bytes<float>(K, L, N, o, none);
        for (int major : {7, 8, 9, 10}) {
          fusekit::tuning const t = fusekit::tuning_for(major, 0);
          auto const cublas = static_cast<std::size_t>(t.train.cublas_workspace_bytes);
          std::size_t const with = fusekit::fit_workspace_bytes<float>(K, L, N, o, t);
          // The workspace is the first piece (256-byte aligned, a multiple of 256 bytes),
          // the rest follows it; the non-finite checks before it may need more.
          EXPECT_GE(with, base + cublas) << K << " " << L << " " << N << ", sm_" << major << "0";
          EXPECT_LE(with, base + cublas + 256) << K << " " << L << " " << N;
          EXPECT_LE(with, fusekit::fit_workspace_bytes<float>(K, L, N, o)) << "the default covers sm_" << major << "0";
        }
        EXPECT_GE(fusekit::fit_workspace_bytes<double>(K, L, N, o), std::size_t{32} << 20);
      }
    }
  }
}

TEST(CudaResources, EveryTemporaryComesFromThePolicysResource) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<float>(300, 24, 3, 7);
  device_buffer<float> X(p.X), Y(p.Y), W(static_cast<std::size_t>(p.N * p.L));
  counting_pool pool;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  fusekit::cuda const policy{cuda::stream_ref(stream), pool};
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  (void)default_pool_high_and_reset();
  (void)fusekit_pool_high_and_reset();

  ::cuda::std::span<const float> const x(X.data(), static_cast<std::size_t>(p.K * p.L));
  float const tree = fusekit::sum(policy, x);                                        // tree partials + scalar
  float const cub = fusekit::sum(policy, x, fusekit::reduce_algorithm::run_to_run);  // CUB's temporary storage
  gd_options o;
  o.max_iterations = 200;
  auto const single = fusekit::fit(policy, cmatrix<float>(X.data(), p.K, p.L), cmatrix<float>(Y.data(), p.K, p.N),
                                   fusekit::matrix<float>(W.data(), p.N, p.L), o);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(fusekit::to_string(single.path), std::string("single_launch"));
  expect_default_pool_untouched(false, "the sums and the single-launch fit");
  int const before_cublas = pool.allocations;
  auto const direct =
      fusekit::detail::cuda_fit(policy, cmatrix<float>(X.data(), p.K, p.L), cmatrix<float>(Y.data(), p.K, p.N),
                                fusekit::matrix<float>(W.data(), p.N, p.L), o, fusekit::detail::fixed_path{false});
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  expect_default_pool_untouched(true, "the cuBLAS fit");
  // fusekit's side of the cuBLAS path: its temporaries and cuBLAS's workspace from the policy's resource.
  EXPECT_GT(pool.allocations, before_cublas) << "the cuBLAS path took nothing from the policy's resource";

  EXPECT_EQ(fusekit_pool_high_and_reset(), 0u) << "a call allocated from the default resource, not the policy's";
  EXPECT_GE(pool.allocations, 6);
  EXPECT_EQ(pool.allocations, pool.deallocations);
  EXPECT_EQ(pool.live, 0u);
  EXPECT_EQ(fusekit::to_string(direct.path), std::string("cublas"));
  // The same answers as with the default resource.
  EXPECT_EQ(tree, fusekit::sum(fusekit::cuda{stream}, x));
  EXPECT_NEAR(cub, tree, 1e-4f * std::fabs(tree));
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(CudaResources, TuningFromThePolicyChangesLaunchesNotResults) {
  // L = 100 takes 128 threads per output by default, so a cap of 64 changes every launch.
  fusekit::tuning t = fusekit::tuning_for(9, 0);
  t.train.batch_iterations = 7;
  t.train.max_block_threads = 64;
  std::int64_t const L = 100;
  ASSERT_EQ(fusekit::detail::train_block_size(L, fusekit::tuning_for(9, 0).train.max_block_threads), 128);
  ASSERT_EQ(fusekit::detail::train_block_size(L, t.train.max_block_threads), 64);
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<double>(400, L, 4, 3);
  std::vector<double> W_default, W_tuned;
  gd_options o;
  o.max_iterations = 150;
  auto const r0 = gpu_fit(p, W_default, o, 2);
  device_buffer<double> X(p.X), Y(p.Y), dW(static_cast<std::size_t>(p.N * p.L));
  auto const r1 = fusekit::detail::cuda_fit(
      fusekit::cuda{}.with(t), cmatrix<double>(X.data(), p.K, p.L), cmatrix<double>(Y.data(), p.K, p.N),
      fusekit::matrix<double>(dW.data(), p.N, p.L), o, fusekit::detail::fixed_path{false});
  W_tuned = dW.to_host();
  ASSERT_EQ(r0.outputs.size(), r1.outputs.size());
  for (std::size_t n = 0; n < r0.outputs.size(); ++n) {
    EXPECT_EQ(r0.outputs[n].iterations, r1.outputs[n].iterations);
    EXPECT_EQ(r0.outputs[n].status, r1.outputs[n].status);
  }
  for (std::size_t i = 0; i < W_default.size(); ++i) {
    EXPECT_NEAR(W_default[i], W_tuned[i], 1e-9 * (1 + std::fabs(W_default[i])));
  }
}

TEST(CudaResources, WorkspaceOverloadsAllocateNothing) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto const p = make_problem<float>(500, 20, 3, 9);
  device_buffer<float> X(p.X), Y(p.Y), W(static_cast<std::size_t>(p.N * p.L)), out(1);
  counting_pool pool;
  fusekit::cuda const policy{nullptr, pool};
  ::cuda::std::span<const float> const x(X.data(), static_cast<std::size_t>(p.K * p.L));
  gd_options o;
  o.max_iterations = 300;
  std::size_t const bytes =
      std::max({fusekit::fit_workspace_bytes<float>(p.K, p.L, p.N, o),
                fusekit::sum_workspace_bytes<float>(x.size(), fusekit::reduce_algorithm::run_to_run),
                fusekit::transform_reduce_workspace_bytes<double>(fusekit::reduce_algorithm::deterministic,
                                                                  fusekit::weigh{}, x, x)});
  device_buffer<std::byte> ws(bytes);
  ::cuda::std::span<std::byte> const workspace(ws.data(), bytes);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  (void)default_pool_high_and_reset();

  float const s =
      fusekit::sum(policy, x, fusekit::reduce_algorithm::run_to_run, fusekit::accumulate_in<float>{}, workspace);
  double const dot = fusekit::transform_reduce(policy, fusekit::reduce_algorithm::deterministic,
                                               fusekit::accumulate_in<double>{}, fusekit::weigh{}, workspace, x, x);
  fusekit::transform_reduce_sum(policy, out.data(), fusekit::reduce_algorithm::deterministic, fusekit::weigh{},
                                workspace, x, x);
  auto const r = fusekit::fit(policy, cmatrix<float>(X.data(), p.K, p.L), cmatrix<float>(Y.data(), p.K, p.N),
                              fusekit::matrix<float>(W.data(), p.N, p.L), o, workspace);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  EXPECT_EQ(pool.allocations, 0) << "a workspace call allocated through the policy's resource";
  expect_default_pool_untouched(fusekit::to_string(r.path) == std::string("cublas"), "a workspace call");
  // The same answers as without a workspace.
  EXPECT_EQ(s, fusekit::sum(fusekit::cuda{}, x, fusekit::reduce_algorithm::run_to_run));
  EXPECT_EQ(dot, fusekit::transform_reduce(fusekit::cuda{}, fusekit::reduce_algorithm::deterministic,
                                           fusekit::accumulate_in<double>{}, fusekit::weigh{}, x, x));
  EXPECT_EQ(out.to_host()[0], fusekit::transform_reduce(fusekit::cuda{}, fusekit::reduce_algorithm::deterministic,
                                                        fusekit::accumulate_in<float>{}, fusekit::weigh{}, x, x));
  std::vector<float> W_plain;
  auto const plain = gpu_fit(p, W_plain, o, 0);
  ASSERT_EQ(plain.outputs.size(), r.outputs.size());
  for (std::size_t n = 0; n < r.outputs.size(); ++n) {
    EXPECT_EQ(plain.outputs[n].iterations, r.outputs[n].iterations);
  }
  EXPECT_EQ(W.to_host(), W_plain);
}

// The workspace form runs the same algorithm as the allocating fit: ridge, an
// intercept, sample weights and a column in extreme units (rescaled) give the
// same W and b, bit for bit, with nothing allocated through the policy.
TEST(CudaResources, WorkspaceFitTakesExtrasAndRescalesAsTheAllocatingFit) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  auto p = make_problem<double>(400, 12, 3, 21);
  for (std::int64_t k = 0; k < p.K; ++k) { p.X[static_cast<std::size_t>(k * p.L + 5)] *= 1e-80; }  // extreme units
  std::vector<double> weights(static_cast<std::size_t>(p.K));
  for (std::size_t k = 0; k < weights.size(); ++k) { weights[k] = static_cast<double>(1 + k % 7); }
  for (int kind = 0; kind < 2; ++kind) {  // 0: ridge, intercept and weights; 1: only the extreme column
    gd_options o = gd_options::recommended();
    o.ridge = kind == 0 ? 0.25 : 0.0;
    o.fit_intercept = kind == 0;
    device_buffer<double> X(p.X), Y(p.Y), w(weights), W0(static_cast<std::size_t>(p.N * p.L)),
        W1(static_cast<std::size_t>(p.N * p.L)), b0(static_cast<std::size_t>(p.N)), b1(static_cast<std::size_t>(p.N));
    ::cuda::std::span<const double> const s =
        kind == 0 ? ::cuda::std::span<const double>(w.data(), weights.size()) : ::cuda::std::span<const double>();
    cmatrix<double> const Xv(X.data(), p.K, p.L), Yv(Y.data(), p.K, p.N);
    auto const allocating =
        fusekit::fit(fusekit::cuda{}, Xv, Yv, fusekit::matrix<double>(W0.data(), p.N, p.L), o,
                     fusekit::fit_extras<double>{s, ::cuda::std::span<double>(b0.data(), b0.size())});
    std::size_t const bytes = fusekit::fit_workspace_bytes<double>(p.K, p.L, p.N, o);
    device_buffer<std::byte> ws(bytes);
    counting_pool pool;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto const from_workspace =
        fusekit::fit(fusekit::cuda{nullptr, pool}, Xv, Yv, fusekit::matrix<double>(W1.data(), p.N, p.L), o,
                     fusekit::fit_extras<double>{s, ::cuda::std::span<double>(b1.data(), b1.size())},
                     ::cuda::std::span<std::byte>(ws.data(), bytes));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(pool.allocations, 0) << "kind " << kind << ": the workspace fit allocated through the policy";
    ASSERT_EQ(allocating.outputs.size(), from_workspace.outputs.size());
    for (std::size_t n = 0; n < allocating.outputs.size(); ++n) {
      EXPECT_EQ(allocating.outputs[n].status, from_workspace.outputs[n].status) << "kind " << kind;
      EXPECT_EQ(allocating.outputs[n].iterations, from_workspace.outputs[n].iterations) << "kind " << kind;
    }
    EXPECT_EQ(W0.to_host(), W1.to_host()) << "kind " << kind;
    EXPECT_EQ(b0.to_host(), b1.to_host()) << "kind " << kind;
  }
}

TEST(CudaResources, FitWorkspaceSizeNeedsNoDeviceAndTooSmallIsRejectedFirst) {
  // No device: the size is arithmetic, and the check runs before any CUDA call.
  gd_options o;
  std::size_t const direct = fusekit::fit_workspace_bytes<double>(50, 100, 4, o);  // K < L: direct
  std::size_t const gram = fusekit::fit_workspace_bytes<double>(5000, 100, 4, o);  // K > L: gram
  EXPECT_GE(direct, sizeof(double) * (100 * 100 + 3 * 4 * 100 + 50 * 4));          // A, iterates and gradients, D
  EXPECT_GE(gram, sizeof(double) * (100 * 100 + 4 * 100 + 2 * 100 + 1));           // A, B, the power iteration
  o.learning_rate = 1e-3;
  EXPECT_LT(fusekit::fit_workspace_bytes<double>(50, 100, 4, o), direct);  // no power iteration, and no A for direct
  // The prepared copy in double (with a ridge, L more rows) and that fit's A and B in double.
  std::int64_t const K = 5000, L = 100, N = 4;
  gd_options ridge = o;
  ridge.ridge = 0.5;
  EXPECT_GE(fusekit::fit_workspace_bytes<float>(K, L, N, ridge),
            sizeof(double) * ((K + L) * (L + N) + N * L + L * L + N * L));
  EXPECT_GE(fusekit::fit_workspace_bytes<float>(K, L, N, o), sizeof(double) * (K * (L + N) + N * L + L * L + N * L));
  EXPECT_GT(fusekit::fit_workspace_bytes<float>(K, L, N, ridge), fusekit::fit_workspace_bytes<float>(K, L, N, o));
  alignas(256) static std::byte small[512];
  static std::vector<double> x(5000 * 100, 1.0), y(5000 * 4, 1.0), w(4 * 100);
  try {
    (void)fusekit::fit(fusekit::cuda{}, cmatrix<double>(x.data(), 5000, 100), cmatrix<double>(y.data(), 5000, 4),
                       fusekit::matrix<double>(w.data(), 4, 100), o, ::cuda::std::span<std::byte>(small, sizeof small));
    ADD_FAILURE() << "a 512-byte workspace was accepted";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("workspace has 512 bytes but needs"), std::string::npos) << e.what();
  }
  // With extras too: the workspace is checked before any CUDA call.
  static std::vector<double> b(4), s(5000, 1.0);
  try {
    (void)fusekit::fit(fusekit::cuda{}, cmatrix<double>(x.data(), 5000, 100), cmatrix<double>(y.data(), 5000, 4),
                       fusekit::matrix<double>(w.data(), 4, 100), ridge,
                       fusekit::fit_extras<double>{::cuda::std::span<const double>(s.data(), s.size()),
                                                   ::cuda::std::span<double>(b.data(), b.size())},
                       ::cuda::std::span<std::byte>(small, sizeof small));
    ADD_FAILURE() << "a 512-byte workspace was accepted with extras";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("workspace has 512 bytes but needs"), std::string::npos) << e.what();
  }
}

// Extents whose element count wraps int64 would size a workspace too small
// for the buffers the fit then writes: rejected, naming the matrix. A host
// function: no device needed.
TEST(FitWorkspace, ExtentsThatWrapAreRejected) {
  std::int64_t const huge = std::int64_t{1} << 62;
  try {
    (void)fusekit::fit_workspace_bytes<float>(huge, 4, 1);
    ADD_FAILURE() << "accepted";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("X (K x L) is"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)fusekit::fit_workspace_bytes<double>(8, std::int64_t{1} << 32, std::int64_t{1} << 32),
               fusekit::invalid_argument);
}

}  // namespace
