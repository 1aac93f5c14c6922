// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The one lookup behind every public `to_string` of an enum: the names in
/// the enumerators' order, and "unknown" for a value outside them (a value
/// cast from an integer, or read from a file). An enum named this way keeps
/// its enumerators at 0, 1, 2, …, in the order of the table.

#include <cstddef>

namespace fusekit {
namespace detail {
inline namespace base {

/// names[value], or "unknown" when value is not one of 0 .. M − 1.
template <class E, std::size_t M>
constexpr const char* enum_name(const char* const (&names)[M], E value) {
  auto const i = static_cast<long long>(value);
  return i >= 0 && i < static_cast<long long>(M) ? names[i] : "unknown";
}

}  // namespace base
}  // namespace detail
}  // namespace fusekit
