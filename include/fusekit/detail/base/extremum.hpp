// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The extremum of two values, IEEE 754-2019's minimum and maximum on the bits of floating values (what
/// fusekit::minimum and fusekit::maximum compute; the CPU team's vector loops
/// use the same bit order).

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>

#include <cuda/std/limits>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace base {
/// A floating type's bits as the signed integer of its width: what the
/// extrema compute on (integer operations, so -ffast-math cannot fold them).
template <class T>
struct float_bits {
  using type = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
  static constexpr type magnitude = ::cuda::std::numeric_limits<type>::max();  ///< all but the sign
  static constexpr type inf = sizeof(T) == 8 ? type(0x7ff0000000000000ll) : type(0x7f800000);
  static constexpr type quiet_nan = sizeof(T) == 8 ? type(0x7ff8000000000000ll) : type(0x7fc00000);

  // b is bits, or a host vector of them (by reference: a 32-byte vector by
  // value changes the ABI in code not built for AVX).

  /// b in the order of the values, a bijection: negative values below
  /// positive ones, −0 just below +0.
  template <class B>
  FUSEKIT_HD FUSEKIT_FORCEINLINE static void order(B& b) {
    b ^= (b >> (8 * static_cast<int>(sizeof(type)) - 1)) & magnitude;
  }
  /// Whether b (each lane of b: −1 or 0) is a NaN's bits.
  template <class B, class M>
  FUSEKIT_HD FUSEKIT_FORCEINLINE static void nan_mask(const B& b, M& is_nan) {
    is_nan = (b & magnitude) > inf;
  }
};

/// IEEE 754-2019's minimum (or maximum, `larger`) of floating x and y: NaN if
/// either is NaN (the canonical quiet NaN, whichever it was), −0 below +0.
template <bool larger, class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T ieee_extremum(T x, T y) {
  using F = float_bits<T>;
  auto kx = bit_cast<typename F::type>(x), ky = bit_cast<typename F::type>(y);
  bool nan_x = false, nan_y = false;
  F::nan_mask(kx, nan_x);
  F::nan_mask(ky, nan_y);
  if (nan_x || nan_y) {
    typename F::type const nan = F::quiet_nan;  // a copy: bit_cast takes a reference
    return bit_cast<T>(nan);
  }
  F::order(kx);
  F::order(ky);
  return (larger ? kx < ky : ky < kx) ? y : x;
}
}  // namespace base
}  // namespace detail
}  // namespace fusekit
