// SPDX-License-Identifier: Apache-2.0
#pragma once
// The deterministic tree's order (include/fusekit/detail/reduce/tree.hpp),
// written out plainly and independently of fusekit's code: the tests'
// reference for the bits of every deterministic sum.

#include <fusekit/detail/base/numeric.hpp>

#include <cstddef>
#include <vector>

namespace fusekit::test {

// The documented order, written out plainly: 256 lanes per 8192-value tile,
// lane l adds elements l + 256k for k = 0..31, then pairs at distance
// 128, 64, ..., 1; levels repeat until one value is left.
template <class Acc, class T>
Acc reference_tree(const std::vector<T>& x) {
  if (x.empty()) { return Acc(0); }
  std::vector<Acc> level(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) { level[i] = static_cast<Acc>(fusekit::detail::convert<Acc>(x[i])); }
  bool first = true;
  while (first || level.size() > 1) {
    first = false;
    std::vector<Acc> next;
    for (std::size_t base = 0; base < level.size(); base += 8192) {
      Acc lanes[256];
      for (int l = 0; l < 256; ++l) {
        lanes[l] = Acc(0);
        for (int k = 0; k < 32; ++k) {
          std::size_t const i = base + static_cast<std::size_t>(l) + 256u * static_cast<std::size_t>(k);
          if (i < level.size()) { lanes[l] = lanes[l] + level[i]; }
        }
      }
      for (int s = 128; s >= 1; s /= 2) {
        for (int l = 0; l < s; ++l) { lanes[l] = lanes[l] + lanes[l + s]; }
      }
      next.push_back(lanes[0]);
    }
    level.swap(next);
  }
  return level[0];
}

}  // namespace fusekit::test
