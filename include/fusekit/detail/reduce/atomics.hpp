// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Which reduce operations have a CUDA atomic (and so run the atomic
/// algorithms), and their identities.

#include <fusekit/config.hpp>
#include <fusekit/reduce_types.hpp>

#include <cuda/std/limits>

#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace reduce {
/// What the atomic algorithms need of an operation: a CUDA atomic for it on Acc
/// (`exists`) and its identity (the start of a thread's or block's partial).
template <class Op, class Acc, class = void>
struct atomic_op {
  static constexpr bool exists = false;
};
template <class Acc>
struct atomic_op<plus, Acc,
                 std::enable_if_t<std::is_floating_point_v<Acc> || (std::is_integral_v<Acc> && sizeof(Acc) >= 4)>> {
  static constexpr bool exists = true;
  FUSEKIT_HD static constexpr Acc identity() { return Acc(0); }
};
template <class Acc>
struct atomic_op<minimum, Acc, std::enable_if_t<std::is_integral_v<Acc> && sizeof(Acc) >= 4>> {
  static constexpr bool exists = true;
  FUSEKIT_HD static constexpr Acc identity() { return ::cuda::std::numeric_limits<Acc>::max(); }
};
template <class Acc>
struct atomic_op<maximum, Acc, std::enable_if_t<std::is_integral_v<Acc> && sizeof(Acc) >= 4>> {
  static constexpr bool exists = true;
  FUSEKIT_HD static constexpr Acc identity() { return ::cuda::std::numeric_limits<Acc>::lowest(); }
};
}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
