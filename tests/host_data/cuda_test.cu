// SPDX-License-Identifier: Apache-2.0
// fusekit::cuda_staged on host-resident data (detail/host_data/cuda_pipeline.cuh): pinned, pageable
// and managed memory, and mixes of them with device memory, give what the
// device-resident call gives, bit for bit, at sizes around the chunk and tile
// boundaries. A small chunk (tuning.pipeline.chunk_bytes) makes every size
// here take many chunks. Skipped without a CUDA device.
#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include "../common/device_buffer.cuh"
#include "../common/test_support.hpp"
#include "../common/train_problem.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <cstring>
#include <string>
#include <limits>
#include <random>
#include <vector>

namespace {

using fusekit::test::device_buffer;

#define FUSEKIT_REQUIRE_DEVICE()                                                     \
  do {                                                                               \
    if (!fusekit::test::cuda_device_present()) { GTEST_SKIP() << "no CUDA device"; } \
  } while (0)

// Host memory of one kind, holding a copy of `values`.
template <class T>
class host_memory {
 public:
  enum kind { pageable, pinned, managed };
  host_memory(kind k, const std::vector<T>& values) : kind_(k), n_(values.size()) {
    std::size_t const bytes = (n_ > 0 ? n_ : 1) * sizeof(T);
    if (k == pageable) {
      storage_.resize(n_ > 0 ? n_ : 1);
      data_ = storage_.data();
    } else if (k == pinned) {
      FUSEKIT_CUDA_TRY(cudaMallocHost(&data_, bytes));
    } else {
      FUSEKIT_CUDA_TRY(cudaMallocManaged(&data_, bytes));
    }
    if (n_ > 0) { std::memcpy(data_, values.data(), n_ * sizeof(T)); }
  }
  host_memory(const host_memory&) = delete;
  host_memory& operator=(const host_memory&) = delete;
  ~host_memory() {
    if (kind_ == pinned) { FUSEKIT_CUDA_TRY_NO_THROW(cudaFreeHost(data_)); }
    if (kind_ == managed) { FUSEKIT_CUDA_TRY_NO_THROW(cudaFree(data_)); }
  }
  ::cuda::std::span<T> view() { return {data_, n_}; }
  ::cuda::std::span<const T> cview() const { return {data_, n_}; }
  std::vector<T> values() const { return std::vector<T>(data_, data_ + n_); }

 private:
  kind kind_;
  std::size_t n_;
  std::vector<T> storage_;
  T* data_ = nullptr;
};

using kind = host_memory<float>::kind;
constexpr kind all_kinds[] = {kind::pageable, kind::pinned, kind::managed};

// A policy whose pipeline cuts every call here into many chunks.
fusekit::cuda_staged small_chunks(cudaStream_t stream = nullptr, int depth = 3) {
  fusekit::tuning t = fusekit::tuning_for(9, 0);
  t.pipeline.chunk_bytes = 3 * 8192 * 4;  // 3 tiles of floats
  t.pipeline.depth = depth;
  return fusekit::cuda_staged{stream}.with(t);
}

std::vector<std::uint8_t> greys(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) { x = static_cast<std::uint8_t>(rng() & 0xff); }
  return v;
}

std::vector<float> floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) { x = u(rng); }
  return v;
}

const std::size_t sizes[] = {0, 1, 63, 64, 8191, 8192, 8193, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1, 100000, 1000003};

// The reference of a host-data call is the same call on device memory: the
// same kernel, so the same bits. The GPU's tanh is not the CPU's bit for bit
// (nvcc contracts it into FMAs; a host build without FMA rounds differently),
// so against the exact tanh the reference is held to the documented bound only.
std::vector<float> device_tanh(const std::vector<float>& x) {
  device_buffer<float> dx(x), dy(x.size());
  fusekit::transform(fusekit::cuda_staged{}, dy.view(), fusekit::tanh_activate{}, dx.cview());
  std::vector<float> y = dy.to_host();
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(fusekit::test::ulp_error(y[i], tanhl(static_cast<long double>(x[i]))), fusekit::tanh_float_max_ulp)
        << "x = " << x[i];
  }
  return y;
}

std::vector<float> device_layer(const std::vector<std::uint8_t>& g, const std::vector<float>& w) {
  device_buffer<std::uint8_t> dg(g);
  device_buffer<float> dw(w), dout(w.size());
  fusekit::hidden_layer(fusekit::cuda_staged{}, dg.cview(), dw.cview(), dout.view());
  return dout.to_host();
}

TEST(HostData, MemorySpacesAreTold) {
  FUSEKIT_REQUIRE_DEVICE();
  std::vector<float> const v(16, 1.0f);
  host_memory<float> pageable(kind::pageable, v), pinned(kind::pinned, v), managed(kind::managed, v);
  device_buffer<float> device(v);
  using fusekit::detail::memory_space;
  EXPECT_EQ(fusekit::detail::memory_space_of(pageable.view().data()), memory_space::pageable);
  EXPECT_EQ(fusekit::detail::memory_space_of(pinned.view().data()), memory_space::pinned);
  EXPECT_EQ(fusekit::detail::memory_space_of(managed.view().data()), memory_space::device);
  EXPECT_EQ(fusekit::detail::memory_space_of(device.data()), memory_space::device);
}

TEST(HostData, HiddenLayerOnEveryKindMatchesTheDeviceCallBitForBit) {
  FUSEKIT_REQUIRE_DEVICE();
  for (std::size_t n : sizes) {
    auto const g = greys(n, 1);
    auto const w = floats(n, 2);
    device_buffer<std::uint8_t> dg(g);
    std::vector<float> const expected = device_layer(g, w);
    for (kind in_kind : all_kinds) {
      for (kind out_kind : all_kinds) {
        for (int depth : {1, 3}) {
          SCOPED_TRACE("n " + std::to_string(n) + ", in " + std::to_string(in_kind) + ", out " +
                       std::to_string(out_kind) + ", depth " + std::to_string(depth));
          host_memory<std::uint8_t> hg(static_cast<host_memory<std::uint8_t>::kind>(in_kind), g);
          host_memory<float> hw(in_kind, w), hout(out_kind, std::vector<float>(n, -7.0f));
          fusekit::hidden_layer(small_chunks(nullptr, depth), hg.cview(), hw.cview(), hout.view());
          FUSEKIT_CUDA_TRY(cudaDeviceSynchronize());
          ASSERT_EQ(hout.values(), expected);
        }
      }
    }
    // Mixed: greys on the device, weights pageable, output pinned.
    host_memory<float> hw(kind::pageable, w), hout(kind::pinned, std::vector<float>(n, -7.0f));
    fusekit::hidden_layer(small_chunks(), dg.cview(), hw.cview(), hout.view());
    FUSEKIT_CUDA_TRY(cudaDeviceSynchronize());
    ASSERT_EQ(hout.values(), expected) << "n " << n;
  }
}

TEST(HostData, TransformTakesStdVectorsInPlace) {
  FUSEKIT_REQUIRE_DEVICE();
  std::vector<float> x = floats(200000, 3);
  std::vector<float> const expected = device_tanh(x);
  fusekit::transform(small_chunks(), x, fusekit::tanh_activate{}, x);  // in place, pageable
  EXPECT_EQ(x, expected);
}

TEST(HostData, DeterministicSumOverHostDataHasTheDeviceAndCpuBits) {
  FUSEKIT_REQUIRE_DEVICE();
  for (std::size_t n : sizes) {
    auto const x = floats(n, 4);
    device_buffer<float> dx(x);
    float const on_device = fusekit::sum(fusekit::cuda_staged{}, dx.cview(), fusekit::reduce_algorithm::deterministic);
    float const on_cpu = fusekit::sum(fusekit::cpu{}, x, fusekit::reduce_algorithm::deterministic);
    ASSERT_EQ(fusekit::detail::bit_cast<std::uint32_t>(on_device), fusekit::detail::bit_cast<std::uint32_t>(on_cpu));
    for (kind k : all_kinds) {
      for (int depth : {1, 2, 4}) {
        host_memory<float> hx(k, x);
        float const on_host =
            fusekit::sum(small_chunks(nullptr, depth), hx.cview(), fusekit::reduce_algorithm::deterministic);
        ASSERT_EQ(fusekit::detail::bit_cast<std::uint32_t>(on_host),
                  fusekit::detail::bit_cast<std::uint32_t>(on_device))
            << "n " << n << ", kind " << k << ", depth " << depth;
      }
    }
  }
}

TEST(HostData, EveryAlgorithmSumsHostDataWithinItsBound) {
  FUSEKIT_REQUIRE_DEVICE();
  auto const x = floats(1000003, 5);
  long double const exact = fusekit::test::exact_sum(x);
  long double abs_sum = 0;
  for (float v : x) { abs_sum += v < 0 ? -v : v; }
  for (fusekit::reduce_algorithm a : fusekit::all_reduce_algorithms) {
    for (kind k : all_kinds) {
      host_memory<float> hx(k, x);
      double const s = fusekit::sum(small_chunks(), hx.cview(), a, fusekit::accumulate_in<double>{});
      EXPECT_LE(std::abs(static_cast<long double>(s) - exact), 1e-9L * abs_sum)
          << fusekit::to_string(a) << ", kind " << k;
    }
  }
}

TEST(HostData, ReduceWritesAResultInHostMemory) {
  FUSEKIT_REQUIRE_DEVICE();
  auto const x = floats(50000, 6);
  device_buffer<float> dx(x);
  float lo_ref = x[0];
  for (float v : x) { lo_ref = v < lo_ref ? v : lo_ref; }
  float lo = 0.0f;  // pageable result, device input
  fusekit::reduce(fusekit::cuda_staged{}, dx.cview(), &lo, fusekit::minimum{}, 1e30f);
  EXPECT_EQ(lo, lo_ref);
  host_memory<float> hx(kind::pinned, x);
  float lo2 = 0.0f;  // pageable result, pinned input
  fusekit::reduce(small_chunks(), hx.cview(), &lo2, fusekit::minimum{}, 1e30f, fusekit::reduce_algorithm::run_to_run);
  EXPECT_EQ(lo2, lo_ref);
}

TEST(HostData, TransformReduceOverHostVectors) {
  FUSEKIT_REQUIRE_DEVICE();
  auto const a = floats(300001, 7);
  auto const b = floats(300001, 8);
  double const on_cpu = fusekit::transform_reduce(fusekit::cpu{}, fusekit::reduce_algorithm::deterministic,
                                                  fusekit::accumulate_in<double>{}, fusekit::weigh{}, a, b);
  double const on_gpu = fusekit::transform_reduce(small_chunks(), fusekit::reduce_algorithm::deterministic,
                                                  fusekit::accumulate_in<double>{}, fusekit::weigh{}, a, b);
  EXPECT_EQ(fusekit::detail::bit_cast<std::uint64_t>(on_gpu), fusekit::detail::bit_cast<std::uint64_t>(on_cpu));
}

TEST(HostData, WorkspaceCallsRefuseHostMemory) {
  FUSEKIT_REQUIRE_DEVICE();
  std::vector<float> x(1000, 1.0f);
  device_buffer<std::byte> ws(1 << 20);
  device_buffer<float> out(1);
  EXPECT_THROW(fusekit::reduce_sum(fusekit::cuda_staged{}, ::cuda::std::span<const float>(x), out.data(),
                                   fusekit::reduce_algorithm::deterministic, ws.view()),
               fusekit::invalid_argument);
}

// fusekit::cuda reads device memory only: a host view is rejected before
// anything runs, and the message names the policy that stages it (one
// pointer query per view). The same calls on fusekit::cuda_staged succeed.
template <class Call>
void expect_staging_named(const Call& call, const char* what) {
  try {
    call();
    ADD_FAILURE() << what << ": host memory accepted by fusekit::cuda";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fusekit::cuda_staged"), std::string::npos) << what << ": " << e.what();
  }
}

TEST(HostData, TheDevicePolicyNamesTheStagedOneForHostMemory) {
  FUSEKIT_REQUIRE_DEVICE();
  std::vector<float> x(1000, 0.5f), y(1000);
  device_buffer<float> dx(x), dy(1000), dsum(1);
  ::cuda::std::span<const float> const hx(x);
  expect_staging_named([&] { (void)fusekit::sum(fusekit::cuda{}, hx); }, "sum of host memory");
  expect_staging_named([&] { fusekit::reduce_sum(fusekit::cuda{}, dx.cview(), &y[0]); }, "a result in host memory");
  expect_staging_named([&] { fusekit::transform(fusekit::cuda{}, dy.view(), fusekit::tanh_activate{}, hx); },
                       "transform of host memory");
  expect_staging_named(
      [&] { fusekit::transform(fusekit::cuda{}, ::cuda::std::span<float>(y), fusekit::tanh_activate{}, dx.cview()); },
      "transform into host memory");
  std::vector<double> X(40, 1.0), Y(20, 1.0), W(2, 0.0);
  expect_staging_named(
      [&] {
        (void)fusekit::fit(fusekit::cuda{}, fusekit::matrix<const double>(X.data(), 20, 2),
                           fusekit::matrix<const double>(Y.data(), 20, 1), fusekit::matrix<double>(W.data(), 1, 2));
      },
      "fit on host memory");
  EXPECT_EQ(fusekit::sum(fusekit::cuda_staged{}, hx), fusekit::sum(fusekit::cuda{}, dx.cview()));
}

// A pinned resource of the caller's: every staging buffer comes from it, and goes back.
struct counting_pinned_resource {
  int allocations = 0, deallocations = 0;
  void* allocate(std::size_t bytes, std::size_t) {
    ++allocations;
    void* p = nullptr;
    FUSEKIT_CUDA_TRY(cudaMallocHost(&p, bytes));
    return p;
  }
  void deallocate(void* p, std::size_t, std::size_t) {
    ++deallocations;
    FUSEKIT_CUDA_TRY_NO_THROW(cudaFreeHost(p));
  }
};

TEST(HostData, PinnedStagingComesFromThePolicysResource) {
  FUSEKIT_REQUIRE_DEVICE();
  counting_pinned_resource pinned;
  std::vector<float> x = floats(100000, 9), y(x.size());
  fusekit::cuda_staged const policy = fusekit::cuda_staged{nullptr, {}, pinned}.with(small_chunks().tune);
  fusekit::transform(policy, y, fusekit::tanh_activate{}, x);
  EXPECT_EQ(y, device_tanh(x));
  EXPECT_EQ(pinned.allocations, 1);
  EXPECT_EQ(pinned.deallocations, 1);
}

// Repeated calls keep their device memory mapped: the default resource is a
// pool of fusekit's own whose release threshold (default_pool_keep_bytes) keeps
// what calls need across synchronizations, and the device's default pool is not
// touched. What is asserted is what fusekit sets and what CUDA documents for a
// pool's release threshold ("the allocator will try to release memory back to
// the OS on the next synchronize" only "when more than the release threshold
// bytes" are held: CUDA Runtime API, cudaMemPoolAttrReleaseThreshold). How much
// the driver maps for a request is its own: the reservation may grow, it never
// shrinks under the threshold, and every temporary is back in the pool after
// each call.
TEST(HostData, RepeatedCallsKeepTheirMemoryMapped) {
  FUSEKIT_REQUIRE_DEVICE();
  std::size_t const n = std::size_t{1} << 22;
  auto const g = greys(n, 12);
  auto const w = floats(n, 13);
  std::vector<float> out(n);
  cudaMemPool_t ours = nullptr;
  ASSERT_EQ(fusekit::detail::find_default_device_pool(ours), cudaSuccess);
  cudaMemPool_t device_pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&device_pool, 0), cudaSuccess);
  std::uint64_t zero = 0;
  ASSERT_EQ(cudaMemPoolSetAttribute(device_pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  auto const attribute = [&](cudaMemPoolAttr a) {
    std::uint64_t r = 0;
    EXPECT_EQ(cudaMemPoolGetAttribute(ours, a, &r), cudaSuccess);
    return r;
  };
  EXPECT_EQ(attribute(cudaMemPoolAttrReleaseThreshold), fusekit::detail::default_pool_keep_bytes);
  fusekit::hidden_layer(fusekit::cuda_staged{}, g, w, out);
  FUSEKIT_CUDA_TRY(cudaDeviceSynchronize());
  std::uint64_t last = attribute(cudaMemPoolAttrReservedMemCurrent);
  EXPECT_GT(last, 0u) << "the slots were unmapped at the synchronize";
  EXPECT_EQ(attribute(cudaMemPoolAttrUsedMemCurrent), 0u) << "a temporary of the first call was not freed";
  for (int k = 0; k < 3; ++k) {
    fusekit::hidden_layer(fusekit::cuda_staged{}, g, w, out);
    (void)fusekit::sum(fusekit::cuda_staged{}, w);  // a synchronizing call with small temporaries
    FUSEKIT_CUDA_TRY(cudaDeviceSynchronize());
    std::uint64_t const now = attribute(cudaMemPoolAttrReservedMemCurrent);
    if (last <= fusekit::detail::default_pool_keep_bytes) {
      EXPECT_GE(now, last) << "call " << k + 2 << " unmapped memory under the release threshold";
    }
    EXPECT_EQ(attribute(cudaMemPoolAttrUsedMemCurrent), 0u) << "a temporary of call " << k + 2 << " was not freed";
    last = now;
  }
  std::uint64_t high = 1;
  ASSERT_EQ(cudaMemPoolGetAttribute(device_pool, cudaMemPoolAttrUsedMemHigh, &high), cudaSuccess);
  EXPECT_EQ(high, 0u) << "the device's default pool was used";
  EXPECT_EQ(out, device_layer(g, w));
}

// ---- the trainer on host data --------------------------------------------------

template <class T>
void expect_streamed_gram_within_bound() {
  std::int64_t const K = 20000, L = 9, N = 3;
  auto const p = fusekit::test::make_problem<T>(K, L, N, 21, false, 0.01);
  device_buffer<T> dX(p.X), dY(p.Y), A1(L * L), B1(N * L), A2(L * L), B2(N * L), A3(L * L), B3(N * L);
  std::size_t const ws_bytes = std::size_t{4} << 20;
  device_buffer<std::byte> ws(ws_bytes);
  fusekit::detail::cublas_context const cublas{fusekit::detail::cublas_handle(), ws.data(), ws_bytes};
  using cm = fusekit::matrix<const T>;
  fusekit::detail::gram_matrices<T>(cublas.on(nullptr), cm(dX.data(), K, L), cm(dY.data(), K, N), A1.data(), B1.data());
  fusekit::tuning t = fusekit::tuning_for(9, 0);
  t.pipeline.chunk_bytes = 4096;  // 56 rows of X per chunk: 358 chunks
  fusekit::cuda_staged const policy = fusekit::cuda_staged{}.with(t);
  for (auto* out : {&A2, &A3}) {
    device_buffer<T>& B = out == &A2 ? B2 : B3;
    fusekit::detail::streamed_gram_matrices<T>(policy, cublas, cm(p.X.data(), K, L), cm(p.Y.data(), K, N), out->data(),
                                               B.data());
  }
  FUSEKIT_CUDA_TRY(cudaDeviceSynchronize());
  // The same bits from run to run.
  EXPECT_EQ(A2.to_host(), A3.to_host());
  EXPECT_EQ(B2.to_host(), B3.to_host());
  // Within 2 K u Σ_k |x_ki x_kj| of the one-shot GEMM (and of YᵀX likewise).
  double const u = std::numeric_limits<T>::epsilon() / 2;
  auto const a1 = A1.to_host(), a2 = A2.to_host(), b1 = B1.to_host(), b2 = B2.to_host();
  for (std::int64_t i = 0; i < L; ++i) {
    for (std::int64_t j = 0; j < L; ++j) {
      double abs_sum = 0;
      for (std::int64_t k = 0; k < K; ++k) { abs_sum += std::abs(double(p.X[k * L + i]) * double(p.X[k * L + j])); }
      EXPECT_LE(std::abs(double(a2[j * L + i]) - double(a1[j * L + i])), 2 * K * u * abs_sum) << i << "," << j;
    }
    for (std::int64_t n = 0; n < N; ++n) {
      double abs_sum = 0;
      for (std::int64_t k = 0; k < K; ++k) { abs_sum += std::abs(double(p.X[k * L + i]) * double(p.Y[k * N + n])); }
      EXPECT_LE(std::abs(double(b2[n * L + i]) - double(b1[n * L + i])), 2 * K * u * abs_sum) << i << "," << n;
    }
  }
}

TEST(HostData, StreamedGramIsWithinItsBoundAndRepeatsBitForBit) {
  FUSEKIT_REQUIRE_DEVICE();
  expect_streamed_gram_within_bound<float>();
  expect_streamed_gram_within_bound<double>();
}

TEST(HostData, FitAndPredictOnHostDataMatchTheDeviceCalls) {
  FUSEKIT_REQUIRE_DEVICE();
  std::int64_t const K = 5000, L = 12, N = 4;
  auto const p = fusekit::test::make_problem<double>(K, L, N, 22, false, 0.0);
  using cm = fusekit::matrix<const double>;
  using m = fusekit::matrix<double>;
  fusekit::gd_options o;
  o.tolerance = 1e-9;
  o.max_iterations = 20000;
  for (fusekit::gd_formulation f : {fusekit::gd_formulation::gram, fusekit::gd_formulation::direct}) {
    o.formulation = f;
    device_buffer<double> dX(p.X), dY(p.Y), dW(N * L);
    FUSEKIT_CUDA_TRY(cudaMemset(dW.data(), 0, N * L * sizeof(double)));
    fusekit::fit_report const on_device =
        fusekit::fit(fusekit::cuda_staged{}, cm(dX.data(), K, L), cm(dY.data(), K, N), m(dW.data(), N, L), o);
    std::vector<double> W(N * L, 0.0);  // pageable X, Y and W
    fusekit::fit_report const on_host =
        fusekit::fit(small_chunks(), cm(p.X.data(), K, L), cm(p.Y.data(), K, N), m(W.data(), N, L), o);
    ASSERT_EQ(on_host.outputs.size(), on_device.outputs.size());
    for (std::size_t n = 0; n < on_host.outputs.size(); ++n) {
      EXPECT_EQ(on_host.outputs[n].status, on_device.outputs[n].status);
    }
    auto const w_device = dW.to_host();
    for (std::size_t i = 0; i < W.size(); ++i) {
      EXPECT_NEAR(W[i], p.W_true[i], 1e-6);
      EXPECT_NEAR(W[i], w_device[i], 1e-6);
    }
    // predict: host X and Ŷ, device W; then everything on the device; same bits.
    std::vector<double> Y_hat(K * N);
    device_buffer<double> dY_hat(K * N);
    fusekit::predict(small_chunks(), cm(p.X.data(), K, L), cm(dW.data(), N, L), m(Y_hat.data(), K, N));
    fusekit::predict(fusekit::cuda_staged{}, cm(dX.data(), K, L), cm(dW.data(), N, L), m(dY_hat.data(), K, N));
    EXPECT_EQ(Y_hat, dY_hat.to_host());
  }
}

// One short case through every op of the pipeline, for compute-sanitizer
// (scripts/gpu/check.sh): pageable in, pinned in, pageable and pinned out,
// and a sum, with chunks of three tiles.
TEST(HostData, ShortPipelineForTheSanitizers) {
  FUSEKIT_REQUIRE_DEVICE();
  std::size_t const n = 100000;
  auto const g = greys(n, 10);
  auto const w = floats(n, 11);
  std::vector<float> const expected = device_layer(g, w);
  host_memory<float> pinned_w(kind::pinned, w), pinned_out(kind::pinned, std::vector<float>(n, 0.0f));
  std::vector<float> out(n);
  fusekit::hidden_layer(small_chunks(), g, pinned_w.cview(), out);
  fusekit::hidden_layer(small_chunks(), g, w, pinned_out.view());
  FUSEKIT_CUDA_TRY(cudaDeviceSynchronize());
  float const on_cpu = fusekit::sum(fusekit::cpu{}, w, fusekit::reduce_algorithm::deterministic);
  float const on_gpu = fusekit::sum(small_chunks(), w, fusekit::reduce_algorithm::deterministic);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(pinned_out.values(), expected);
  EXPECT_EQ(fusekit::detail::bit_cast<std::uint32_t>(on_gpu), fusekit::detail::bit_cast<std::uint32_t>(on_cpu));
}

}  // namespace
