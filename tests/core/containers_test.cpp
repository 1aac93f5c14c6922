// SPDX-License-Identifier: Apache-2.0
// Containers as arguments: std::vector, std::array, thrust::host_vector and
// spans, mixed, give what the span calls give, bit for bit.
#include <fusekit/fusekit.hpp>

#include "common/data.hpp"

#include <thrust/host_vector.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using ::cuda::std::span;

TEST(Containers, TransformAndTheLayerTakeVectorsArraysAndHostVectors) {
  std::size_t const n = 50001;
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(n, 1);
  auto const w = fusekit::test::make_weights<float>(n, 2);
  std::vector<float> want(n), out(n), out2(n);
  fusekit::hidden_layer(fusekit::cpu{}, span<const std::uint8_t>(grey), span<const float>(w), span<float>(want));
  fusekit::hidden_layer(fusekit::cpu{}, grey, w, out);  // std::vector throughout
  EXPECT_EQ(out, want);
  thrust::host_vector<float> const hw(w.begin(), w.end());
  fusekit::transform(fusekit::cpu{}, span<float>(out2), fusekit::make_hidden_layer(), grey, hw);  // mixed
  EXPECT_EQ(out2, want);
  std::array<double, 5> a{1.5, -2.0, 0.25, 8.0, -1.0};
  std::array<double, 5> doubled{};
  fusekit::transform(fusekit::cpu{}, doubled, fusekit::weigh{}, a, std::array<double, 5>{2, 2, 2, 2, 2});
  for (std::size_t i = 0; i < a.size(); ++i) { EXPECT_EQ(doubled[i], 2 * a[i]); }
}

TEST(Containers, SumsTakeContainers) {
  auto const x = fusekit::test::signed_values<float>(100003, 3);
  float const want = fusekit::sum(fusekit::cpu{}, span<const float>(x));
  EXPECT_EQ(fusekit::sum(fusekit::cpu{}, x), want);
  thrust::host_vector<float> const hx(x.begin(), x.end());
  EXPECT_EQ(fusekit::sum(fusekit::cpu{}, hx), want);
  double in_double = 0;
  fusekit::reduce_sum(fusekit::cpu{}, x, &in_double);
  EXPECT_EQ(in_double, fusekit::sum(fusekit::cpu{}, span<const float>(x), fusekit::reduce_algorithm::deterministic,
                                    fusekit::accumulate_in<double>{}));
  std::array<std::int32_t, 4> const ints{1, -2, 3, 1 << 30};
  EXPECT_EQ(fusekit::sum(fusekit::cpu{}, ints), std::int64_t{2} + (std::int64_t{1} << 30));
}

TEST(Containers, TransformReduceTakesContainers) {
  auto const a = fusekit::test::signed_values<double>(30001, 5);
  auto const b = fusekit::test::signed_values<double>(30001, 6);
  double const want =
      fusekit::transform_reduce(fusekit::cpu{}, fusekit::weigh{}, span<const double>(a), span<const double>(b));
  EXPECT_EQ(fusekit::transform_reduce(fusekit::cpu{}, fusekit::weigh{}, a, b), want);
  EXPECT_EQ(fusekit::transform_reduce(fusekit::cpu{}, fusekit::reduce_algorithm::deterministic,
                                      fusekit::accumulate_in<double>{}, fusekit::weigh{}, a, span<const double>(b)),
            want);
}

// Every entry point that takes a 1-D range takes containers: reduce (any op),
// transform_reduce_sum and the unfused layer, against references computed
// another way.
TEST(Containers, ReduceTransformReduceSumAndTheUnfusedLayerTakeContainers) {
  std::vector<std::int32_t> ints(70001);
  std::uint32_t state = 7u;
  for (auto& v : ints) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<std::int32_t>(state >> 1) - (1 << 30);
  }
  std::int32_t lo = 0;
  fusekit::reduce(fusekit::cpu{}, ints, &lo, fusekit::minimum{}, std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(lo, *std::min_element(ints.begin(), ints.end()));
  // xor: associative and commutative, not idempotent (a value combined twice cancels).
  auto const xor_op = [](std::int64_t a, std::int64_t b) { return a ^ b; };
  std::int64_t want_xor = 0x5a5a;
  for (std::int32_t v : ints) { want_xor ^= v; }
  for (fusekit::reduce_algorithm a :
       {fusekit::reduce_algorithm::run_to_run, fusekit::reduce_algorithm::deterministic}) {
    std::int64_t got = 0;
    fusekit::reduce(fusekit::cpu{}, ints, &got, xor_op, std::int64_t{0x5a5a}, a);
    EXPECT_EQ(got, want_xor) << fusekit::to_string(a);
  }
  // Small integers in double: every product and partial sum exact.
  std::vector<double> a(30011), b(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>(i % 17) - 8.0;
    b[i] = static_cast<double>(i % 5) + 1.0;
  }
  double want_dot = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) { want_dot += a[i] * b[i]; }
  double dot = 1.0;
  fusekit::transform_reduce_sum(fusekit::cpu{}, &dot, fusekit::reduce_algorithm::deterministic, fusekit::weigh{}, a, b);
  EXPECT_EQ(dot, want_dot);
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(4099, 9);
  auto const w = fusekit::test::make_weights<float>(grey.size(), 10);
  std::vector<float> want(grey.size()), out(grey.size());
  fusekit::hidden_layer_unfused(fusekit::cpu{}, span<const std::uint8_t>(grey), span<const float>(w),
                                span<float>(want));
  fusekit::hidden_layer_unfused(fusekit::cpu{}, grey, w, out);
  EXPECT_EQ(out, want);
  for (std::size_t i = 0; i < grey.size(); ++i) { EXPECT_NEAR(out[i], std::tanh(grey[i] / 255.0 * w[i]), 1e-6) << i; }
}

// Empty containers: no data() is asked of them (thrust's is &front(), which
// UBSan flags on an empty vector), and the calls see empty views.
TEST(Containers, EmptyHostVectorsAreEmptyViews) {
  thrust::host_vector<float> const empty;
  thrust::host_vector<float> out;
  EXPECT_EQ(fusekit::sum(fusekit::cpu{}, empty), 0.0f);
  EXPECT_EQ(fusekit::transform_reduce(fusekit::cpu{}, fusekit::weigh{}, empty, empty), 0.0f);
  fusekit::transform(fusekit::cpu{}, out, fusekit::tanh_activate{}, empty);
  EXPECT_EQ(fusekit::detail::view_of(out).data(), nullptr);
  EXPECT_EQ(fusekit::detail::const_view_of(empty).size(), 0u);
}

}  // namespace
