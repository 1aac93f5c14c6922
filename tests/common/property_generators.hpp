// SPDX-License-Identifier: Apache-2.0
// The generators and comparisons the property tests share
// (tests/reduce/property_test.cpp, tests/train/property_test.cpp): lengths at
// the tree's tile edges, floats with every special value, bit equality and
// IEEE 754-2019's minimum as references.
#pragma once

#include <fusekit/fusekit.hpp>

#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace fusekit::test {

inline std::int64_t const tile = fusekit::detail::tree_tile;

/// A length: mostly small, often an edge of the tree's tile (± 1), sometimes 0 or 1.
inline rc::Gen<std::int64_t> lengths() {
  return rc::gen::weightedOneOf<std::int64_t>(
      {{4, rc::gen::inRange<std::int64_t>(0, 300)},
       {2, rc::gen::element<std::int64_t>(0, 1, 2, 255, 256, 257, tile - 1, tile, tile + 1, 2 * tile + 1)},
       {1, rc::gen::inRange<std::int64_t>(0, 3 * tile + 2)}});
}

/// A float: ordinary values, and the special ones a user's data holds (the
/// type's extremes too, unless `extremes` is false: a sum of them overflows).
inline rc::Gen<float> floats(bool extremes = true) {
  std::vector<float> specials = {0.0f,
                                 -0.0f,
                                 INFINITY,
                                 -INFINITY,
                                 NAN,
                                 std::numeric_limits<float>::denorm_min(),
                                 -std::numeric_limits<float>::min() / 2};
  if (extremes) {
    specials.push_back(std::numeric_limits<float>::max());
    specials.push_back(-std::numeric_limits<float>::max());
  }
  return rc::gen::weightedOneOf<float>(
      {{12, rc::gen::map(rc::gen::inRange(-1000000, 1000000), [](int v) { return static_cast<float>(v) / 1024.0f; })},
       {1, rc::gen::elementOf(specials)}});
}

/// Same bits, NaN payloads aside (every NaN the same).
inline bool same_value(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) { return std::isnan(a) && std::isnan(b); }
  std::uint32_t x = 0, y = 0;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

/// IEEE 754-2019 minimum: NaN if either is; −0 below +0.
inline float ieee_minimum(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) { return NAN; }
  if (a == b) { return std::signbit(a) ? a : b; }
  return a < b ? a : b;
}

}  // namespace fusekit::test
