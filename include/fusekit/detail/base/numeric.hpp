// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Numeric types: the element types and the compute type.
///
/// fusekit reads elements of any supported type and does its arithmetic in a
/// *compute type*:
///
/// | inputs                                             | compute type |
/// |----------------------------------------------------|--------------|
/// | float, `__half`, `__nv_bfloat16`, integers ≤ 16 bit | float        |
/// | any double, or any integer wider than 16 bits      | double       |
///
/// Integers of up to 16 bits are exact in float; wider ones are exact in double
/// up to 2^53. Results are converted to the output type with round-to-nearest.

#include <fusekit/config.hpp>

#include <cuda/std/limits>
#if FUSEKIT_HAS_CUDA_HEADERS
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace base {

#if FUSEKIT_HAS_CUDA_HEADERS
using half_t = __half;
using bfloat16_t = __nv_bfloat16;
#else
// Without the CUDA toolkit's headers (a host compiler given CCCL's alone) there
// are no half types: these incomplete stand-ins match no element type.
struct half_unavailable;
struct bfloat16_unavailable;
using half_t = half_unavailable;
using bfloat16_t = bfloat16_unavailable;
#endif

template <class T>
inline constexpr bool is_half_type_v =
    std::is_same_v<std::remove_cv_t<T>, half_t> || std::is_same_v<std::remove_cv_t<T>, bfloat16_t>;

template <class T>
inline constexpr bool is_integer_element_v =
    std::is_integral_v<std::remove_cv_t<T>> && !std::is_same_v<std::remove_cv_t<T>, bool>;

/// The element types fusekit reads and writes.
template <class T>
inline constexpr bool is_supported_element_v =
    std::is_same_v<std::remove_cv_t<T>, float> || std::is_same_v<std::remove_cv_t<T>, double> || is_half_type_v<T> ||
    is_integer_element_v<T>;

template <class T>
inline constexpr bool needs_double_v = std::is_same_v<std::remove_cv_t<T>, double> ||
                                       (is_integer_element_v<T> && sizeof(T) > 2);

template <class... Ts>
struct compute_type {
  static_assert((is_supported_element_v<Ts> && ...),
                "fusekit: unsupported element type. Use float, double, __half, __nv_bfloat16 or an integer "
                "type (not bool); convert other types (long double, complex, user types) first.");
  using type = std::conditional_t<(needs_double_v<Ts> || ...), double, float>;
};

}  // namespace base
}  // namespace detail

namespace detail {
inline namespace base {

/// double → float, rounded once; beyond float's range ±inf, as IEEE rounding
/// gives it (C++ leaves the conversion of an out-of-range double undefined).
FUSEKIT_HD FUSEKIT_FORCEINLINE float double_to_float(double x) {
  constexpr double overflow = 0x1.ffffffp+127;  // FLT_MAX + half an ulp: rounds to inf (ties to even)
  constexpr float inf = ::cuda::std::numeric_limits<float>::infinity();
  if (x >= overflow) { return inf; }
  if (x <= -overflow) { return -inf; }
  return static_cast<float>(x);
}

/// x as `__half` or `__nv_bfloat16`, rounded once to nearest-even, from any
/// supported type: float and double directly, integers exactly (through
/// float first, 1 + 2^-11 + 2^-40 would round to 1 instead of 1 + 2^-10).
template <class H, class F>
FUSEKIT_HD FUSEKIT_FORCEINLINE H to_half_type(F x) {
  constexpr bool half = std::is_same_v<H, half_t>;
  if constexpr (std::is_same_v<F, float>) {
    if constexpr (half) {
      return __float2half_rn(x);
    } else {
      return __float2bfloat16_rn(x);
    }
  } else if constexpr (std::is_same_v<F, double>) {
    if constexpr (half) {
      return __double2half(x);
    } else {
      return __double2bfloat16(x);
    }
  } else if constexpr (std::is_signed_v<F> && sizeof(F) <= sizeof(int)) {
    if constexpr (half) {
      return __int2half_rn(x);
    } else {
      return __int2bfloat16_rn(x);
    }
  } else if constexpr (std::is_signed_v<F>) {
    if constexpr (half) {
      return __ll2half_rn(x);
    } else {
      return __ll2bfloat16_rn(x);
    }
  } else if constexpr (sizeof(F) <= sizeof(unsigned)) {
    if constexpr (half) {
      return __uint2half_rn(x);
    } else {
      return __uint2bfloat16_rn(x);
    }
  } else {
    if constexpr (half) {
      return __ull2half_rn(x);
    } else {
      return __ull2bfloat16_rn(x);
    }
  }
}

/// Converts between element types and compute types, rounding once to
/// nearest-even: `__half` and `__nv_bfloat16` widen exactly through float, and
/// narrow from any type in one rounding (to_half_type).
template <class To, class From>
FUSEKIT_HD FUSEKIT_FORCEINLINE To convert(From x) {
  using F = std::remove_cv_t<From>;
  if constexpr (std::is_same_v<F, To>) {
    return x;
  } else if constexpr (std::is_same_v<F, half_t>) {
    return convert<To>(__half2float(x));
  } else if constexpr (std::is_same_v<F, bfloat16_t>) {
    return convert<To>(__bfloat162float(x));
  } else if constexpr (is_half_type_v<To>) {
    return to_half_type<To>(x);
  } else if constexpr (std::is_same_v<To, float> && std::is_same_v<F, double>) {
    return double_to_float(x);
  } else {
    return static_cast<To>(x);
  }
}

/// Bit copy between same-sized types (std::bit_cast is C++20).
template <class To, class From>
FUSEKIT_HD FUSEKIT_FORCEINLINE To bit_cast(const From& x) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  To y;
  std::memcpy(&y, &x, sizeof(To));
  return y;
}

/// Whether x is finite (neither NaN nor ±inf), decided on its bits: compilers
/// fold `std::isfinite(x)` and `x - x == x - x` to true under `-ffast-math`
/// (`-ffinite-math-only`), and a check that cannot fail would let a NaN pass.
/// Integers are always finite.
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE bool is_finite(T x) {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) {
    return (bit_cast<std::uint32_t>(x) & 0x7f800000u) != 0x7f800000u;
  } else if constexpr (std::is_same_v<U, double>) {
    return (bit_cast<std::uint64_t>(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
  } else if constexpr (std::is_same_v<U, half_t>) {
    return (bit_cast<std::uint16_t>(x) & 0x7c00u) != 0x7c00u;
  } else if constexpr (std::is_same_v<U, bfloat16_t>) {
    return (bit_cast<std::uint16_t>(x) & 0x7f80u) != 0x7f80u;
  } else {
    static_assert(std::is_integral_v<U>, "fusekit::detail::is_finite: float, double, half types or integers");
    return true;
  }
}

/// Whether x is NaN, decided on its bits (see is_finite).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE bool is_nan(T x) {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) {
    return (bit_cast<std::uint32_t>(x) & 0x7fffffffu) > 0x7f800000u;
  } else if constexpr (std::is_same_v<U, double>) {
    return (bit_cast<std::uint64_t>(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
  } else if constexpr (is_half_type_v<U>) {
    return is_nan(convert<float>(x));
  } else {
    return false;
  }
}

}  // namespace base
}  // namespace detail
}  // namespace fusekit
