// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions' vocabulary: the algorithms, the accumulator rules and the
/// operations `reduce` takes (see reduce.hpp for the functions and their error
/// bounds).

#include <fusekit/config.hpp>
#include <fusekit/detail/numeric.hpp>
#include <fusekit/detail/rounding.hpp>

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
inline constexpr reduce_algorithm all_reduce_algorithms[] = {reduce_algorithm::naive_atomic, reduce_algorithm::block_atomic,
                                                              reduce_algorithm::cub, reduce_algorithm::deterministic};

/// Name of an algorithm, for tables and messages.
constexpr const char* to_string(reduce_algorithm a) {
  switch (a) {
    case reduce_algorithm::naive_atomic: return "naive_atomic";
    case reduce_algorithm::block_atomic: return "block_atomic";
    case reduce_algorithm::cub: return "cub";
    case reduce_algorithm::deterministic: return "deterministic";
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

/// The smaller of x and y (x when they compare equal or unordered). Exact.
struct minimum {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(T x, T y) const {
    return y < x ? y : x;
  }
};

/// The larger of x and y (x when they compare equal or unordered). Exact.
struct maximum {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(T x, T y) const {
    return x < y ? y : x;
  }
};


}  // namespace fusekit
