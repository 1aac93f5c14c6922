// SPDX-License-Identifier: Apache-2.0
// transform and the hidden layer on the GPU, against long-double references
// and the CPU backend. Cases that need a device skip without one; argument
// validation for the cuda policy runs everywhere (it happens before any launch).
#include <fusekit/fusekit.cuh>

#include "common/device_buffer.cuh"
#include "common/test_support.hpp"

#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::test::device_buffer;
using fusekit::test::ulp_error;

template <class G>
void check_fused_on_device(std::size_t n, std::size_t offset) {
  auto grey = fusekit::test::make_greyscales<G>(n + offset, 21);
  auto w = fusekit::test::make_weights<float>(n + offset, 22);
  device_buffer<G> d_grey(grey);
  device_buffer<float> d_w(w);
  device_buffer<float> d_out(n + offset);
  // Offsets shift each view by `offset` elements: unaligned heads and tails.
  fusekit::hidden_layer(fusekit::cuda{}, d_grey.cview(offset), d_w.cview(offset), d_out.view(offset));
  FUSEKIT_CUDA_TRY(cudaDeviceSynchronize());
  auto const out = d_out.to_host(offset);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float const x = (fusekit::detail::convert<float>(grey[offset + i]) / 255.0f) * w[offset + i];
    worst = std::max(worst, ulp_error(out[i], tanhl(static_cast<long double>(x))));
  }
  EXPECT_LE(worst, fusekit::tanh_float_max_ulp) << "n=" << n << " offset=" << offset;
}

TEST(GpuTransform, FusedLayerMatchesReferenceForEveryTypeSizeAndOffset) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  for (std::size_t n : {1, 3, 15, 16, 17, 1000, (1 << 20) + 7}) {
    for (std::size_t offset : {0, 1, 3, 8}) {
      check_fused_on_device<std::uint8_t>(n, offset);
      check_fused_on_device<float>(n, offset);
      check_fused_on_device<__half>(n, offset);
      check_fused_on_device<__nv_bfloat16>(n, offset);
    }
  }
}

TEST(GpuTransform, DoubleLayerMatchesCpuBackend) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 300001;
  auto const grey = fusekit::test::make_greyscales<double>(n, 1);
  auto const w = fusekit::test::make_weights<double>(n, 2);
  std::vector<double> cpu_out(n);
  fusekit::hidden_layer(fusekit::cpu{}, span<const double>(grey), span<const double>(w), span<double>(cpu_out));
  device_buffer<double> d_grey(grey), d_w(w), d_out(n);
  fusekit::hidden_layer(fusekit::cuda{}, d_grey.cview(), d_w.cview(), d_out.view());
  auto const gpu_out = d_out.to_host();
  for (std::size_t i = 0; i < n; ++i) { ASSERT_LE(ulp_error(gpu_out[i], cpu_out[i]), 4.0) << i; }
}

TEST(GpuTransform, FusedEqualsUnfusedBitForBit) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = (1 << 22) + 5;
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(n, 3);
  auto const w = fusekit::test::make_weights<float>(n, 4);
  device_buffer<std::uint8_t> d_grey(grey);
  device_buffer<float> d_w(w), d_fused(n), d_unfused(n);
  fusekit::hidden_layer(fusekit::cuda{}, d_grey.cview(), d_w.cview(), d_fused.view());
  fusekit::hidden_layer_unfused(fusekit::cuda{}, d_grey.cview(), d_w.cview(), d_unfused.view());
  auto const a = d_fused.to_host();
  auto const b = d_unfused.to_host();
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), n * sizeof(float)));
}

// tanh_activate on the device over every 257th bit pattern (16.7 million floats).
TEST(GpuTransform, TanhOnDeviceWithinBoundAcrossFloatRange) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = (std::size_t{1} << 32) / 257;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto const bits = static_cast<std::uint32_t>(i * 257);
    std::memcpy(&x[i], &bits, sizeof bits);
  }
  device_buffer<float> d_x(x), d_y(n), d_fast(n);
  fusekit::transform(fusekit::cuda{}, d_y.view(), fusekit::tanh_activate{}, d_x.cview());
  fusekit::transform(fusekit::cuda{}, d_fast.view(), fusekit::fast_tanh_activate{}, d_x.cview());
  auto const y = d_y.to_host();
  auto const fast = d_fast.to_host();
  double worst = 0;
  double worst_fast = 0;
  for (std::size_t i = 0; i < n; ++i) {
    long double const ref = tanhl(static_cast<long double>(x[i]));
    if (fusekit::test::is_finite(x[i])) { ASSERT_FALSE(fusekit::test::is_nan(y[i])) << x[i]; }
    worst = std::max(worst, ulp_error(y[i], ref));
    if (fusekit::test::is_finite(x[i]) && std::fabs(x[i]) >= 1e-30f) {
      worst_fast = std::max(worst_fast, static_cast<double>(fabsl((fast[i] - ref) / ref)));
    }
  }
  EXPECT_LE(worst, fusekit::tanh_float_max_ulp);
  EXPECT_LE(worst_fast, fusekit::fast_tanh_activate::max_relative_error);
}

// The activations computed in double (detail/elementwise/activations.hpp)
// give the CPU's bits on the device: every 257th float, and doubles across
// the ranges where each changes form.
template <class F, class T>
void expect_device_bits_equal_cpu(const F& f, const std::vector<T>& x, const char* name) {
  std::vector<T> cpu(x.size());
  fusekit::transform(fusekit::cpu{}, span<T>(cpu), f, span<const T>(x));
  device_buffer<T> d_x(x), d_y(x.size());
  fusekit::transform(fusekit::cuda{}, d_y.view(), f, d_x.cview());
  auto const gpu = d_y.to_host();
  std::size_t differ = 0;
  std::size_t first = x.size();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::memcmp(&gpu[i], &cpu[i], sizeof(T)) != 0) {
      if (differ++ == 0) { first = i; }
    }
  }
  EXPECT_EQ(differ, 0u) << name << ": first at x = " << (first < x.size() ? static_cast<double>(x[first]) : 0.0)
                        << ", cpu " << (first < x.size() ? static_cast<double>(cpu[first]) : 0.0) << ", gpu "
                        << (first < x.size() ? static_cast<double>(gpu[first]) : 0.0);
}

template <class T>
void expect_activations_bits_equal_cpu(const std::vector<T>& x) {
  expect_device_bits_equal_cpu(fusekit::sigmoid{}, x, "sigmoid");
  expect_device_bits_equal_cpu(fusekit::silu{}, x, "silu");
  expect_device_bits_equal_cpu(fusekit::softplus{}, x, "softplus");
  expect_device_bits_equal_cpu(fusekit::gelu_tanh{}, x, "gelu_tanh");
  expect_device_bits_equal_cpu(fusekit::gelu_erf{}, x, "gelu_erf");
  expect_device_bits_equal_cpu(fusekit::relu{}, x, "relu");
  expect_device_bits_equal_cpu(fusekit::leaky_relu{T(0.01)}, x, "leaky_relu");
}

TEST(GpuTransform, ActivationsGiveTheCpuBits) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = (std::size_t{1} << 32) / 257;
  std::vector<float> xf(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto const bits = static_cast<std::uint32_t>(i * 257);
    std::memcpy(&xf[i], &bits, sizeof bits);
  }
  expect_activations_bits_equal_cpu(xf);
  std::vector<double> xd;
  std::uint64_t seed = 11;
  for (double range : {1.0, 40.0, 800.0}) {
    for (int i = 0; i < 1000000; ++i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      xd.push_back(range * (2.0 * static_cast<double>(seed >> 11) * 0x1p-53 - 1.0));
    }
  }
  expect_activations_bits_equal_cpu(xd);
}

// A __device__ lambda, made outside a TEST body (nvcc needs a public enclosing function).
void sum_scale_subtract(span<double> out, span<const double> a, span<const double> b, span<const double> c,
                        span<const double> d) {
  fusekit::transform(
      fusekit::cuda{}, out, [] __device__(double x, double y, double z, double q) { return (x + y) * q - z; }, a, b, c,
      d);
}

TEST(GpuTransform, FourInputsWithADeviceLambdaInPlace) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 100003;
  std::vector<double> a(n), b(n), c(n), d(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.5 * static_cast<double>(i);
    b[i] = 3.0 - static_cast<double>(i % 7);
    c[i] = static_cast<double>(i % 11);
    d[i] = 0.25;
  }
  device_buffer<double> da(a), db(b), dc(c), dd(d);
  // out is a's own view: in place.
  sum_scale_subtract(da.view(), da.cview(), db.cview(), dc.cview(), dd.cview());
  auto const out = da.to_host();
  for (std::size_t i = 0; i < n; ++i) { ASSERT_EQ(out[i], (a[i] + b[i]) * d[i] - c[i]) << i; }
}

// __device__ lambdas as fuse stages, through unary and binary (the host cannot ask their arity).
void layer_with_device_stages(span<float> out, span<const std::uint8_t> grey, span<const float> w,
                              span<const float> b) {
  auto const layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{},
                                   fusekit::binary([] __device__(float x, float bias) { return x + bias; }),
                                   fusekit::unary([] __device__(float x) { return x > 0.0f ? x : 0.0f; }));
  static_assert(decltype(layer)::arity<std::uint8_t> == 3, "grey, w and the bias");
  fusekit::transform(fusekit::cuda{}, out, layer, grey, w, b);
}

TEST(GpuTransform, DeviceLambdasAsFuseStages) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 100001;
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(n, 31);
  auto const w = fusekit::test::make_weights<float>(n, 32);
  auto const b = fusekit::test::make_weights<float>(n, 33);
  device_buffer<std::uint8_t> d_grey(grey);
  device_buffer<float> d_w(w), d_b(b), d_out(n);
  layer_with_device_stages(d_out.view(), d_grey.cview(), d_w.cview(), d_b.cview());
  auto const out = d_out.to_host();
  for (std::size_t i = 0; i < n; ++i) {
    // nvcc may fuse weigh's product with the lambda's add (one rounding less): within 2 ulp.
    double const x = static_cast<double>(static_cast<float>(grey[i]) / 255.0f) * w[i] + b[i];
    double const want = x > 0.0 ? x : 0.0;
    ASSERT_NEAR(out[i], want, 2 * 0x1p-24 * (std::fabs(x) + std::fabs(b[i]))) << i;
  }
}

TEST(GpuTransform, ThrustDeviceVectorsAsArguments) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 70001;
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(n, 41);
  auto const w = fusekit::test::make_weights<float>(n, 42);
  thrust::device_vector<std::uint8_t> const d_grey(grey.begin(), grey.end());
  thrust::device_vector<float> const d_w(w.begin(), w.end());
  thrust::device_vector<float> d_out(n);
  fusekit::hidden_layer(fusekit::cuda{}, d_grey, d_w, d_out);
  std::vector<float> want(n);
  fusekit::hidden_layer(fusekit::cpu{}, grey, w, want);
  std::vector<float> got(n);
  thrust::copy(d_out.begin(), d_out.end(), got.begin());
  for (std::size_t i = 0; i < n; ++i) { ASSERT_NEAR(got[i], want[i], 4e-7f * (1.0f + std::fabs(want[i]))) << i; }
  // The deterministic sum of the device vector: the CPU's bits for the same values.
  EXPECT_EQ(fusekit::sum(fusekit::cuda{}, d_out), fusekit::sum(fusekit::cpu{}, got));
}

TEST(GpuTransform, GraphCapturedCallReplays) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 1 << 20;
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(n, 5);
  auto const w = fusekit::test::make_weights<float>(n, 6);
  device_buffer<std::uint8_t> d_grey(grey);
  device_buffer<float> d_w(w), d_out(n);
  cudaStream_t stream = nullptr;
  FUSEKIT_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  FUSEKIT_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  fusekit::hidden_layer(fusekit::cuda{stream}, d_grey.cview(), d_w.cview(), d_out.view());
  FUSEKIT_CUDA_TRY(cudaStreamEndCapture(stream, &graph));
  FUSEKIT_CUDA_TRY(cudaGraphInstantiate(&exec, graph, 0));
  FUSEKIT_CUDA_TRY(cudaMemsetAsync(d_out.data(), 0xff, n * sizeof(float), stream));  // NaN
  FUSEKIT_CUDA_TRY(cudaGraphLaunch(exec, stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<float> expected(n);
  fusekit::hidden_layer(fusekit::cpu{}, span<const std::uint8_t>(grey), span<const float>(w), span<float>(expected));
  auto const out = d_out.to_host();
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_LE(ulp_error(out[i], expected[i]), 2 * fusekit::tanh_float_max_ulp) << i;
  }
  FUSEKIT_CUDA_TRY(cudaGraphExecDestroy(exec));
  FUSEKIT_CUDA_TRY(cudaGraphDestroy(graph));
  FUSEKIT_CUDA_TRY(cudaStreamDestroy(stream));
}

__global__ void fill_large(std::uint8_t* grey, float* w, std::int64_t n) {
  for (std::int64_t i = fusekit::detail::global_thread_id(); i < n; i += fusekit::detail::grid_stride()) {
    grey[i] = static_cast<std::uint8_t>(i % 251);
    w[i] = 0.25f + 0.125f * static_cast<float>(i % 7);
  }
}

// More than 2^31 elements: 64-bit indices end to end (about 19 GB of device memory).
TEST(GpuTransform, MoreThanTwoToThe31ElementsOfUint8) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::int64_t const n = (std::int64_t{1} << 31) + 123;
  std::size_t free_bytes = 0, total = 0;
  FUSEKIT_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < static_cast<std::size_t>(n) * 9 + (std::size_t{1} << 30)) {
    GTEST_SKIP() << "needs 20 GB of device memory";
  }
  device_buffer<std::uint8_t> d_grey(n);
  device_buffer<float> d_w(n), d_out(n);
  fill_large<<<1024, 256>>>(d_grey.data(), d_w.data(), n);
  FUSEKIT_CHECK_LAUNCH();
  FUSEKIT_CUDA_TRY(cudaMemset(d_out.data(), 0xff, n * sizeof(float)));
  fusekit::hidden_layer(fusekit::cuda{}, d_grey.cview(), d_w.cview(), d_out.view());
  auto const layer = fusekit::make_hidden_layer();
  for (std::int64_t start : {std::int64_t{0}, (std::int64_t{1} << 31) - 4096, n - 8192}) {
    auto const out = d_out.to_host(static_cast<std::size_t>(start), 8192);
    for (std::int64_t k = 0; k < 8192; ++k) {
      std::int64_t const i = start + k;
      float const expected = layer(static_cast<std::uint8_t>(i % 251), 0.25f + 0.125f * static_cast<float>(i % 7));
      ASSERT_LE(ulp_error(out[k], expected), 2 * fusekit::tanh_float_max_ulp) << "i=" << i;
    }
  }
}

// Validation needs no device: the cuda policy rejects before launching.
TEST(CudaPolicyArguments, RejectedBeforeAnyLaunch) {
  std::vector<float> host(16);
  span<float> const o(host);
  span<const float> const in(host.data(), 8);
  try {
    fusekit::transform(fusekit::cuda{}, o, fusekit::tanh_activate{}, in);
    ADD_FAILURE() << "size mismatch not rejected";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ins[0] has 8 elements"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fusekit::hidden_layer(fusekit::cuda{}, span<const float>(static_cast<const float*>(nullptr), 16),
                                     span<const float>(host), o),
               fusekit::invalid_argument);
  // Empty views launch nothing, device or not.
  EXPECT_NO_THROW(fusekit::transform(fusekit::cuda{}, span<float>(), fusekit::tanh_activate{}, span<const float>()));
}

}  // namespace
