// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reproducible data shaped like the user's: for tests, benchmarks and examples.

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace fusekit::test {

/// Greyscales as the user has them: whole numbers in [0, 255).
template <class T>
std::vector<T> make_greyscales(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(0, 254);
  std::vector<T> v(n);
  for (auto& x : v) { x = static_cast<T>(dist(gen)); }
  return v;
}

/// Weights as the user has them: N(0.5, 0.1).
template <class T>
std::vector<T> make_weights(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.5, 0.1);
  std::vector<T> v(n);
  for (auto& x : v) { x = static_cast<T>(dist(gen)); }
  return v;
}

}  // namespace fusekit::test
