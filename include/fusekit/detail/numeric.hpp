// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Element types and the compute type.
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

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace fusekit {
namespace detail {

template <class T>
inline constexpr bool is_half_type_v =
    std::is_same_v<std::remove_cv_t<T>, __half> || std::is_same_v<std::remove_cv_t<T>, __nv_bfloat16>;

template <class T>
inline constexpr bool is_integer_element_v =
    std::is_integral_v<std::remove_cv_t<T>> && !std::is_same_v<std::remove_cv_t<T>, bool>;

/// The element types fusekit reads and writes.
template <class T>
inline constexpr bool is_supported_element_v =
    std::is_same_v<std::remove_cv_t<T>, float> || std::is_same_v<std::remove_cv_t<T>, double> ||
    is_half_type_v<T> || is_integer_element_v<T>;

template <class T>
inline constexpr bool needs_double_v =
    std::is_same_v<std::remove_cv_t<T>, double> || (is_integer_element_v<T> && sizeof(T) > 2);

template <class... Ts>
struct compute_type {
  static_assert((is_supported_element_v<Ts> && ...),
                "fusekit: unsupported element type. Use float, double, __half, __nv_bfloat16 or an integer "
                "type (not bool); convert other types (long double, complex, user types) first.");
  using type = std::conditional_t<(needs_double_v<Ts> || ...), double, float>;
};

}  // namespace detail

/// The type fusekit computes in for elements of types `Ts...` (see the table above).
template <class... Ts>
using compute_t = typename detail::compute_type<Ts...>::type;

namespace detail {

/// Converts between element types and compute types: `__half` and
/// `__nv_bfloat16` go through float with round-to-nearest-even.
template <class To, class From>
FUSEKIT_HD FUSEKIT_FORCEINLINE To convert(From x) {
  using F = std::remove_cv_t<From>;
  if constexpr (std::is_same_v<F, To>) {
    return x;
  } else if constexpr (std::is_same_v<F, __half>) {
    return convert<To>(__half2float(x));
  } else if constexpr (std::is_same_v<F, __nv_bfloat16>) {
    return convert<To>(__bfloat162float(x));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(x));
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

}  // namespace detail
}  // namespace fusekit
