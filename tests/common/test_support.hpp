// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by fusekit's tests: the CUDA-device check, ulp distances against
// long-double references, and reproducible data.

#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/policy.hpp>

#include "data.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace fusekit::test {

/// Whether a CUDA device is present; GPU tests skip without one.
inline bool cuda_device_present() { return fusekit::cuda_device_count() > 0; }

/// NaN and finiteness by the bits: the tests also run built with -ffast-math,
/// where std::isnan and std::isfinite fold to constants.
template <class T>
bool is_nan(T x) {
  return fusekit::detail::is_nan(x);
}
template <class T>
bool is_finite(T x) {
  return fusekit::detail::is_finite(x);
}
inline bool is_nan(long double x) { return fusekit::detail::is_nan(static_cast<double>(x)); }
inline bool is_finite(long double x) {
  return fusekit::detail::is_finite(static_cast<double>(x)) && fabsl(x) <= LDBL_MAX;
}

/// Distance of `y` from the exact value `ref`, in units of the spacing of T
/// at |ref| (an ulp of the exact result). NaN matches NaN only.
template <class T>
double ulp_error(T y, long double ref) {
  if (is_nan(ref) || is_nan(y)) { return is_nan(ref) && is_nan(y) ? 0.0 : 1e30; }
  if (!is_finite(ref) || !is_finite(y)) { return y == ref ? 0.0 : 1e30; }
  constexpr int digits = std::numeric_limits<T>::digits;
  constexpr int min_exp = std::numeric_limits<T>::min_exponent;
  int e = 0;
  (void)std::frexp(std::fabs(ref), &e);
  int const ulp_exp = (e < min_exp ? min_exp : e) - digits;
  return static_cast<double>(std::fabs(static_cast<long double>(y) - ref) / std::ldexp(1.0L, ulp_exp));
}

/// Σ x in long double (each value converted as fusekit converts it), and Σ|x| into *abs_sum.
template <class T>
long double exact_sum(const std::vector<T>& x, long double* abs_sum = nullptr) {
  long double s = 0;
  long double a = 0;
  for (const T& v : x) {
    auto const d = static_cast<long double>(fusekit::detail::convert<double>(v));
    s += d;
    a += fabsl(d);
  }
  if (abs_sum != nullptr) { *abs_sum = a; }
  return s;
}

}  // namespace fusekit::test

/// First statement of a GPU test.
#define FUSEKIT_REQUIRE_CUDA_DEVICE()                                                  \
  do {                                                                                 \
    if (!::fusekit::test::cuda_device_present()) { GTEST_SKIP() << "no CUDA device"; } \
  } while (0)
