// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// How `fuse` (functors.hpp) walks its stages at compile time: the running
/// value's type after each stage, each stage's arity (declared, or detected
/// from what it can be called with, with a message when it is ambiguous), and
/// the number of inputs the stages after one take.

#include <fusekit/config.hpp>
#include <fusekit/elementwise_types.hpp>

#include <cuda/std/tuple>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace elementwise {

/// The running value after stage S, from V (and the next input, for a binary stage).
template <class S, class V, class... A>
struct stage_result {
  using type = std::invoke_result_t<const S&, A...>;
};
template <int N, class F, class R, class V, class... A>
struct stage_result<stage<N, F, R>, V, A...> {
  template <class G, class = void>
  struct asked {
    using type = V;  // the host cannot call G (a __device__ lambda): same type as the running value
  };
  template <class G>
  struct asked<G, std::enable_if_t<std::is_invocable_v<const G&, A...>>> {
    using type = std::invoke_result_t<const G&, A...>;
  };
  using type = std::conditional_t<std::is_void_v<R>, typename asked<F>::type, R>;
};

/// Arity of stage S when the running value has type V: declared, else detected.
template <class S, class V>
FUSEKIT_HD constexpr int stage_arity() {
  if constexpr (declared_arity<S>::value != 0) {
    static_assert(declared_arity<S>::value == 1 || declared_arity<S>::value == 2,
                  "fusekit::fuse: a stage's arity must be 1 (unary) or 2 (binary)");
    return declared_arity<S>::value;
  } else {
    constexpr bool unary = std::is_invocable_v<const S&, V>;
    constexpr bool binary = std::is_invocable_v<const S&, V, V>;
    static_assert(unary || binary,
                  "fusekit::fuse: a stage must be callable with the running value (unary) or with the "
                  "running value and the next input (binary); a __device__ lambda, which the host cannot "
                  "call to find out, goes in fusekit::unary([] __device__ (float x) { ... }) or "
                  "fusekit::binary([] __device__ (float x, float y) { ... })");
    static_assert(!(unary && binary),
                  "fusekit::fuse: this stage is callable with one and with two arguments; declare "
                  "`static constexpr int arity = 1;` or `= 2;` in it");
    return unary ? 1 : 2;
  }
}

/// Number of inputs consumed by stages I.. when the running value has type V.
template <class Stages, std::size_t I, class V>
FUSEKIT_HD constexpr std::size_t inputs_after() {
  if constexpr (I == ::cuda::std::tuple_size<Stages>::value) {
    return 0;
  } else {
    using S = ::cuda::std::tuple_element_t<I, Stages>;
    if constexpr (stage_arity<S, V>() == 1) {
      return inputs_after<Stages, I + 1, typename stage_result<S, V, V>::type>();
    } else {
      return 1 + inputs_after<Stages, I + 1, typename stage_result<S, V, V, V>::type>();
    }
  }
}

template <class S, class = void>
struct has_prepare : std::false_type {};
template <class S>
struct has_prepare<S, std::void_t<decltype(std::declval<const S&>().prepare())>> : std::true_type {};

/// The form of a stage the GPU kernel runs: `s.prepare()` where the stage
/// declares one (its per-call constants computed once per thread, before the
/// loop, with the same results), else s itself.
template <class S>
FUSEKIT_HD FUSEKIT_FORCEINLINE auto prepared_stage(const S& s) {
  if constexpr (has_prepare<S>::value) {
    return s.prepare();
  } else {
    return s;
  }
}

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
