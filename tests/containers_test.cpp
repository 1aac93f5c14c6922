// SPDX-License-Identifier: Apache-2.0
// Containers as arguments: std::vector, std::array, thrust::host_vector and
// spans, mixed, give what the span calls give, bit for bit.
#include <fusekit/fusekit.hpp>

#include "common/data.hpp"

#include <thrust/host_vector.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
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
