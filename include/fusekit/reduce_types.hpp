// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions' vocabulary: the algorithms, the accumulator rules and the
/// operations `reduce` takes (see reduce.hpp for the functions and their error
/// bounds).

#include <fusekit/config.hpp>
#include <fusekit/detail/numeric.hpp>
#include <fusekit/detail/rounding.hpp>

#include <cuda/std/limits>

#include <cstdint>
#include <type_traits>

namespace fusekit {

/// How a reduction combines its values (reduce.hpp has the costs and bounds).
enum class reduce_algorithm {
  naive_atomic,   ///< one atomic per element: the teaching baseline
  block_atomic,   ///< a sum per thread and per block, then one atomic per block
  cub,            ///< cub::DeviceReduce: two passes, temporary storage
  deterministic,  ///< a fixed tree over 8192-value tiles: the same bits on every GPU and the CPU
};

/// Every algorithm, in the order of the tables: for comparing them side by side.
inline constexpr reduce_algorithm all_reduce_algorithms[] = {reduce_algorithm::naive_atomic,
                                                             reduce_algorithm::block_atomic, reduce_algorithm::cub,
                                                             reduce_algorithm::deterministic};

/// Name of an algorithm, for tables and messages.
constexpr const char* to_string(reduce_algorithm a) {
  switch (a) {
    case reduce_algorithm::naive_atomic:
      return "naive_atomic";
    case reduce_algorithm::block_atomic:
      return "block_atomic";
    case reduce_algorithm::cub:
      return "cub";
    case reduce_algorithm::deterministic:
      return "deterministic";
  }
  return "unknown";
}

namespace detail {
/// The accumulator a sum of T uses unless asked otherwise: float for float and
/// the half types (and rejected element types, after the message), double for
/// double, the 64-bit integer of T's signedness for integers.
template <class T, class = void>
struct default_accumulator {
  static_assert(is_supported_element_v<T>,
                "fusekit: unsupported element type for a sum. Use float, double, __half, __nv_bfloat16 or an "
                "integer type");
  using type = float;
};
template <>
struct default_accumulator<double> {
  using type = double;
};
template <class T>
struct default_accumulator<T, std::enable_if_t<is_integer_element_v<T>>> {
  using type = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
};
}  // namespace detail

/// The accumulator a sum of T uses by default (see the file comment).
template <class T>
using accumulator_t = typename detail::default_accumulator<std::remove_cv_t<T>>::type;

/// Asks `sum`/`transform_reduce` for a particular accumulator: `accumulate_in<double>{}`.
/// A tag: it carries the type, no value. The rules of reduce.hpp's table say
/// which accumulators each input type may use; any other is a compile error.
template <class Acc>
struct accumulate_in {
  using type = Acc;
};

/// x + y, one IEEE rounding (`add_rn`: never fused with a product). The sum's operation.
struct plus {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(T x, T y) const {
    return detail::add_rn(x, y);
  }
};

namespace detail {
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
}  // namespace detail

/// The smaller of x and y. Floating point: IEEE 754-2019's `minimum`, so a
/// NaN anywhere gives NaN (the canonical quiet NaN), wherever it sits, and −0
/// is below +0. Decided on the bits, so it holds under -ffast-math. The op is
/// then commutative and associative to the bit, and every algorithm, backend
/// and grouping gives the left fold's result. Exact.
struct minimum {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      return detail::ieee_extremum<false>(x, y);
    } else {
      return y < x ? y : x;
    }
  }
};

/// The larger of x and y: IEEE 754-2019's `maximum` for floating point (NaN
/// anywhere gives NaN, +0 above −0), as `minimum` describes. Exact.
struct maximum {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      return detail::ieee_extremum<true>(x, y);
    } else {
      return x < y ? y : x;
    }
  }
};

}  // namespace fusekit
