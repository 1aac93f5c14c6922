// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The accumulator a sum of T takes by default (fusekit::accumulator_t,
/// reduce_types.hpp).

#include <fusekit/detail/base/numeric.hpp>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace base {
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
}  // namespace base
}  // namespace detail
}  // namespace fusekit
