// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Division by a float fixed before the loop, with the bits of IEEE division.
///
/// For a divisor y known in advance, z = RN(1/y) is computed once; then
///
///     q  = RN(x · z)          one product
///     r  = RN(x − q · y)      one FMA (exact)
///     q' = RN(q + r · z)      one FMA
///
/// is RN(x / y), the correctly rounded quotient: the one-multiplication,
/// two-FMA division by a divisor known in advance (N. Brisebarre,
/// J.-M. Muller, S. K. Raina, "Accelerating correctly rounded floating-point
/// division when the divisor is known in advance", IEEE Transactions on
/// Computers 53(8), 2004, which builds on Markstein's theorem). It holds while
/// nothing underflows or overflows, which each element checks on q:
///
///     q_min ≤ |q| ≤ 2^126,   q_min = max(2^-125, 2^-75 · |z|)
///
/// |q| ≥ 2^-125 keeps q and q' normal; |q| ≥ 2^-75·|z| means |x| > 2^-76, so
/// that x − q·y, a multiple of 2^(e(x) − 47), is zero or normal: nothing is
/// flushed under `--use_fast_math` either. Elsewhere (zeros, infinities, NaN,
/// subnormal or huge quotients, a divisor whose reciprocal is not normal,
/// where q_min is +inf) the element takes the IEEE division itself.
///
/// Inside that range, scaling x or y by a power of two scales every step
/// exactly, so the claim for every pair (x, y) is the claim for every pair of
/// significands. tests/elementwise/divisor_test.cpp checks every significand
/// of x against divisors of every kind (255, powers of two and their
/// neighbours, the extreme exponents, random ones), every edge above, and
/// bits against x / y in each case; its disabled test checks every float x
/// for a few divisors (255 among them).

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/base/rounding.hpp>

#include <cmath>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace elementwise {

/// 1/y rounded once (IEEE, also under `--use_fast_math`).
FUSEKIT_HD FUSEKIT_FORCEINLINE float reciprocal_rn(float y) {
#if FUSEKIT_DEVICE_PASS
  return __frcp_rn(y);
#else
  return 1.0f / y;
#endif
}

/// x / y, not inlined: the rare elements a float_divisor does not take keep
/// the division's code out of the caller's loop.
FUSEKIT_HD __attribute__((noinline)) inline float divide_rn(float x, float y) { return x / y; }

/// x / y for one y and many x, with the bits of x / y (see the file comment).
class float_divisor {
 public:
  FUSEKIT_HD explicit float_divisor(float y) : y_(y), z_(reciprocal_rn(y)) {
    float const z = z_ < 0.0f ? -z_ : z_;
    bool const normal = z >= 0x1p-125f && z <= 0x1p125f;  // false for NaN
    float const from_x = z * 0x1p-75f;
    q_min_ = !normal ? INFINITY : (from_x > 0x1p-125f ? from_x : 0x1p-125f);
  }

  FUSEKIT_HD FUSEKIT_FORCEINLINE float operator()(float x) const {
    float const q = mul_rn(x, z_);
#if FUSEKIT_DEVICE_PASS
    float const a = ::fabsf(q);  // an operand modifier of the comparisons
#else
    float const a = std::fabs(q);
#endif
    if (a >= q_min_ && a <= 0x1p126f) {
      float const r = fma_rn(-q, y_, x);
      return fma_rn(r, z_, q);
    }
    return divide_rn(x, y_);
  }

  FUSEKIT_HD float divisor() const { return y_; }

 private:
  float y_, z_, q_min_ = 0.0f;
};

/// `normalize{scale}` (float scale) as the GPU kernel runs it
/// (`normalize::prepare`): float quotients by a float_divisor, with the bits
/// of x / scale; double quotients divide.
struct normalize_by_divisor {
  static constexpr int arity = 1;
  float_divisor divide;

  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE typename compute_type<T, float>::type operator()(T x) const {
    using C = typename compute_type<T, float>::type;
    if constexpr (std::is_same_v<C, float>) {
      return divide(convert<float>(x));
    } else {
      return convert<C>(x) / static_cast<C>(divide.divisor());
    }
  }
};

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
