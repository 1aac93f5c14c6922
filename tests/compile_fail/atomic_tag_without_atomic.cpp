// SPDX-License-Identifier: Apache-2.0
// Must not compile: block_atomic needs an atomic for op on the accumulator,
// and floating point has no atomic minimum. A tag is checked at compile time
// (a reduce_algorithm value throws at run time instead, on every backend).
#include <fusekit/reduce.hpp>

#include <vector>

float smallest(const std::vector<float>& x) {
  float lo = 0.0f;
  fusekit::reduce(fusekit::cpu{}, x, &lo, fusekit::minimum{}, 1e30f, fusekit::block_atomic{});
  return lo;
}
