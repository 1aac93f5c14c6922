// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The elementwise layer's vocabulary: the names of a fuse stage and of a
/// composition (defined in functors.hpp), and the arity a functor declares.
/// The argument checks of `transform` (detail/) read these, not the functors,
/// so that they sit below the functors in the layers (docs/architecture.md).

#include <type_traits>

namespace fusekit {

/// A callable with its arity and result type declared (`unary`, `binary`;
/// functors.hpp).
template <int Arity, class F, class R = void>
struct stage;

/// Stages composed left to right (`fuse`; functors.hpp).
template <class... Stages>
class fused;

namespace detail {

/// The arity a functor declares (`static constexpr int arity`), or 0.
template <class S, class = void>
struct declared_arity : std::integral_constant<int, 0> {};
template <class S>
struct declared_arity<S, std::void_t<decltype(S::arity)>> : std::integral_constant<int, int{S::arity}> {};

}  // namespace detail
}  // namespace fusekit
