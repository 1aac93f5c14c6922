// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reproducible data shaped like the user's: for tests, benchmarks and examples.

#include <cmath>
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

/// Mixed signs and magnitudes over six decades: sums whose value depends on
/// the order of the additions.
template <class T>
std::vector<T> signed_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-3, 3);
  std::vector<T> v(n);
  for (auto& x : v) { x = static_cast<T>(mantissa(gen) * std::pow(10.0, exponent(gen))); }
  return v;
}

/// Uniform in [0, 1).
template <class T>
std::vector<T> uniform01(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<T> v(n);
  for (auto& x : v) { x = static_cast<T>(u(gen)); }
  return v;
}

}  // namespace fusekit::test
