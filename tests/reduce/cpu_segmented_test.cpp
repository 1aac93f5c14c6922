// SPDX-License-Identifier: Apache-2.0
// The sums per segment and per row on fusekit::cpu (segmented_api.hpp): each
// segment against the tree's order written out independently
// (common/reference_tree.hpp) and against the single sum of its span, bit for
// bit, on 1 to 4 threads; against a long-double sum within the documented
// bound; integers exactly; the checks, before anything is written.
#include <fusekit/fusekit.hpp>

#include "common/reference_tree.hpp"
#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::test::exact_sum;
using fusekit::test::reference_tree;
using fusekit::test::signed_values;

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Segment layouts: empty segments, one long segment (past the 2^17 values
/// from which a segment gets every thread) among short ones, and many of 1–8.
std::vector<std::vector<std::int64_t>> layouts() {
  std::vector<std::vector<std::int64_t>> out;
  out.push_back({0});                             // no segment
  out.push_back({0, 0, 0});                       // two empty ones
  out.push_back({5, 6, 6, 262, 8192 + 262});      // a first offset past 0, lengths 1, 0, 256, 8192
  out.push_back({0, 3, 200003, 200004, 200011});  // a long one among short ones
  std::mt19937 g(7);
  std::vector<std::int64_t> many{0};
  for (int s = 0; s < 20000; ++s) { many.push_back(many.back() + static_cast<std::int64_t>(g() % 9)); }  // 0–8
  out.push_back(many);
  std::vector<std::int64_t> mixed{0};
  for (int s = 0; s < 300; ++s) {
    std::int64_t const lengths[] = {1, 255, 256, 257, 8191, 8192, 8193, 20000};
    mixed.push_back(mixed.back() + lengths[g() % 8]);
  }
  out.push_back(mixed);
  return out;
}

template <class T, class Acc>
void check_segments(std::uint32_t seed) {
  for (const auto& offsets : layouts()) {
    auto const x = signed_values<T>(static_cast<std::size_t>(offsets.back()) + 3, seed);
    std::size_t const S = offsets.size() - 1;
    for (int threads : {1, 2, 3, 4}) {
      std::vector<Acc> out(S, Acc(-7));
      fusekit::segmented_sum(fusekit::cpu{threads}, span<const T>(x), span<const std::int64_t>(offsets),
                             span<Acc>(out));
      for (std::size_t s = 0; s < S; ++s) {
        std::vector<T> const seg(x.begin() + offsets[s], x.begin() + offsets[s + 1]);
        Acc const ref = reference_tree<Acc>(seg);
        Acc const single = fusekit::sum(fusekit::cpu{threads}, span<const T>(seg), fusekit::deterministic{},
                                        fusekit::accumulate_in<Acc>{});
        ASSERT_TRUE(same_bits(out[s], ref)) << "segment " << s << " of " << S << ", " << seg.size()
                                            << " values, threads " << threads << ": " << out[s] << " " << ref;
        ASSERT_TRUE(same_bits(out[s], single)) << "segment " << s << ", threads " << threads;
        if (threads == 1) {  // the documented bound, against long double
          long double abs_sum = 0;
          long double const exact = exact_sum(seg, &abs_sum);
          long double const u = std::ldexp(1.0L, -std::numeric_limits<Acc>::digits);
          int const levels = fusekit::detail::tree_levels(static_cast<std::int64_t>(seg.size()));
          EXPECT_LE(fabsl(static_cast<long double>(out[s]) - exact), 40.0L * (levels + 1) * u * abs_sum)
              << "segment " << s << ", " << seg.size() << " values";
        }
      }
    }
  }
}

TEST(CpuSegmentedSum, EachSegmentIsTheTreeOverItAloneOnAnyThreadCount) {
  check_segments<float, float>(1);
  check_segments<float, double>(2);
  check_segments<double, double>(3);
  check_segments<__half, float>(4);
  check_segments<__nv_bfloat16, float>(5);
}

TEST(CpuSegmentedSum, IntegersAreExact) {
  std::vector<std::int64_t> const offsets{0, 1, 1, 9, 300000, 300001};
  std::vector<std::int32_t> x(300001);
  std::mt19937 g(3);
  for (auto& v : x) { v = static_cast<std::int32_t>(g()); }
  std::vector<std::uint8_t> bytes(300001);
  for (auto& v : bytes) { v = static_cast<std::uint8_t>(g()); }
  std::vector<std::int64_t> out(5);
  std::vector<std::uint64_t> uout(5);
  fusekit::segmented_sum(fusekit::cpu{}, span<const std::int32_t>(x), span<const std::int64_t>(offsets),
                         span<std::int64_t>(out));
  fusekit::segmented_sum(fusekit::cpu{}, span<const std::uint8_t>(bytes), span<const std::int64_t>(offsets),
                         span<std::uint64_t>(uout));
  for (std::size_t s = 0; s < 5; ++s) {
    std::int64_t exact = 0;
    std::uint64_t uexact = 0;
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) {
      exact += x[static_cast<std::size_t>(i)];
      uexact += bytes[static_cast<std::size_t>(i)];
    }
    EXPECT_EQ(out[s], exact) << s;
    EXPECT_EQ(uout[s], uexact) << s;
  }
}

// Rows of every length around the short path's limit (256) and the tile
// (8192), with row counts around the short path's blocks of rows.
template <class T, class Acc>
void check_rows(std::uint32_t seed) {
  for (std::int64_t L : {0, 1, 2, 3, 7, 8, 9, 16, 100, 255, 256, 257, 1000, 8193}) {
    for (std::int64_t K : {0, 1, 15, 16, 17, 37}) {
      auto const x = signed_values<T>(static_cast<std::size_t>(K * L), seed + static_cast<std::uint32_t>(L));
      fusekit::matrix<const T> X(x.data(), K, L);
      for (int threads : {1, 2}) {
        std::vector<Acc> out(static_cast<std::size_t>(K), Acc(-7));
        fusekit::row_sums(fusekit::cpu{threads}, X, span<Acc>(out));
        for (std::int64_t r = 0; r < K; ++r) {
          std::vector<T> const row(x.begin() + r * L, x.begin() + (r + 1) * L);
          ASSERT_TRUE(same_bits(out[static_cast<std::size_t>(r)], reference_tree<Acc>(row)))
              << "row " << r << " of " << K << " x " << L << ", threads " << threads;
        }
      }
    }
  }
}

TEST(CpuRowSums, EachRowIsTheTreeOverIt) {
  check_rows<float, float>(11);
  check_rows<float, double>(12);
  check_rows<double, double>(13);
  check_rows<__half, float>(14);
}

TEST(CpuSegmentedSum, TransformFormsSumTheOpPerSegmentAndRow) {
  auto const a = signed_values<float>(40000, 21);
  auto const b = signed_values<float>(40000, 22);
  std::vector<std::int64_t> const offsets{0, 5, 5, 300, 9000, 40000};
  std::vector<float> out(5);
  fusekit::transform_segmented_sum(fusekit::cpu{}, span<float>(out), span<const std::int64_t>(offsets),
                                   fusekit::weigh{}, span<const float>(a), span<const float>(b));
  for (std::size_t s = 0; s < 5; ++s) {
    std::vector<float> product;
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) {
      product.push_back(fusekit::weigh{}(a[static_cast<std::size_t>(i)], b[static_cast<std::size_t>(i)]));
    }
    EXPECT_TRUE(same_bits(out[s], reference_tree<float>(product))) << s;
  }
  fusekit::matrix<const float> A(a.data(), 400, 100), B(b.data(), 400, 100);
  std::vector<double> rows(400);
  fusekit::transform_row_sums(fusekit::cpu{}, span<double>(rows), fusekit::weigh{}, A, B);
  for (std::size_t r = 0; r < 400; ++r) {
    std::vector<double> product;
    for (std::size_t l = 0; l < 100; ++l) {
      product.push_back(static_cast<double>(fusekit::weigh{}(a[r * 100 + l], b[r * 100 + l])));
    }
    EXPECT_TRUE(same_bits(rows[r], reference_tree<double>(product))) << r;
  }
}

// As the single sum: +0 for an empty segment and for one of −0s (the tree
// starts from +0), NaN and ±inf as IEEE addition gives them.
TEST(CpuSegmentedSum, SignedZerosInfinitiesAndNaN) {
  float const inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{-0.0f, -0.0f, -0.0f, inf, 1.0f, inf, -inf, std::nanf(""), 2.0f};
  x.resize(9 + 300, -0.0f);  // a long run of −0s: one segment of 300
  std::vector<std::int64_t> const offsets{0, 1, 3, 3, 5, 7, 9, 309};
  std::vector<float> out(7, -7.0f);
  fusekit::segmented_sum(fusekit::cpu{}, span<const float>(x), span<const std::int64_t>(offsets), span<float>(out));
  float const want[] = {0.0f, 0.0f, 0.0f, inf, std::nanf(""), std::nanf(""), 0.0f};
  for (std::size_t s = 0; s < 7; ++s) {
    EXPECT_TRUE(same_bits(out[s], want[s]) || (fusekit::test::is_nan(out[s]) && fusekit::test::is_nan(want[s])))
        << s << ": " << out[s];
  }
  fusekit::matrix<const float> Z(x.data() + 9, 30, 10);  // rows of −0s, by the short path's blocks
  std::vector<float> rows(30, -7.0f);
  fusekit::row_sums(fusekit::cpu{}, Z, span<float>(rows));
  for (float r : rows) { EXPECT_TRUE(same_bits(r, 0.0f)) << r; }
}

TEST(CpuSegmentedSum, ContainersAsWellAsSpans) {
  std::vector<double> const x{1.5, 2.5, -1.0, 4.0};
  std::vector<int> const offsets{0, 2, 4};
  std::vector<double> out(2);
  fusekit::segmented_sum(fusekit::cpu{}, x, offsets, out);
  EXPECT_EQ(out[0], 4.0);
  EXPECT_EQ(out[1], 3.0);
}

void expect_invalid(const std::function<void()>& call, std::initializer_list<const char*> needles) {
  try {
    call();
    ADD_FAILURE() << "no fusekit::invalid_argument";
  } catch (const fusekit::invalid_argument& e) {
    for (const auto* needle : needles) { EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); }
  }
}

TEST(CpuSegmentedSumArguments, RejectedBeforeAnythingIsWritten) {
  std::vector<float> x(64, 1.0f);
  std::vector<float> out(3, -7.0f);
  auto const segments = [&](std::vector<std::int64_t> o) {
    return [&x, &out, o] {
      fusekit::segmented_sum(fusekit::cpu{}, span<const float>(x), span<const std::int64_t>(o), span<float>(out));
    };
  };
  expect_invalid(segments({}), {"segmented_sum", "offsets is empty"});
  expect_invalid(segments({-1, 2, 3, 4}), {"offsets[0] is -1"});
  expect_invalid(segments({0, 5, 4, 6}), {"offsets[2] = 4 is less than offsets[1] = 5"});
  expect_invalid(segments({0, 5, 6, 65}), {"offsets[3] = 65 is past the end of the 64 values"});
  expect_invalid(segments({0, 5, 6}), {"out has 3 elements for 2 segments"});
  std::vector<std::int64_t> const good{0, 1, 2, 3};
  expect_invalid(
      [&] {
        fusekit::segmented_sum(fusekit::cpu{}, span<const float>(x), span<const std::int64_t>(good),
                               span<float>(x.data() + 10, 3));
      },
      {"out overlaps values"});
  expect_invalid(
      [&] {
        fusekit::segmented_sum(fusekit::cpu{}, span<const float>(static_cast<const float*>(nullptr), 4),
                               span<const std::int64_t>(good), span<float>(out));
      },
      {"values is null"});
  fusekit::matrix<const float> X(x.data(), 8, 8);
  expect_invalid([&] { fusekit::row_sums(fusekit::cpu{}, X, span<float>(out)); },
                 {"row_sums", "out has 3 elements for 8 segments"});
  std::vector<float> rows(8);
  fusekit::matrix<const float> Y(x.data(), 4, 16);
  expect_invalid([&] { fusekit::transform_row_sums(fusekit::cpu{}, span<float>(rows), fusekit::weigh{}, X, Y); },
                 {"transform_row_sums", "different shapes"});
  for (float v : out) { EXPECT_EQ(v, -7.0f); }
}

}  // namespace
