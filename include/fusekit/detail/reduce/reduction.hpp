// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// One reduction, as every public form states it, and the one hook each
/// backend implements for it. `sum`, `reduce_sum`, `reduce`,
/// `transform_reduce` and `transform_reduce_sum` each build a `reduction`
/// (a source of values, the op, init, and where the result goes) and call
///
///     run_reduce(reduce_tag{}, policy, reduction, algorithm_tag)
///
/// once, as Thrust writes its generic `transform_reduce` over `reduce`. So a
/// backend that implements `run_reduce` has every form, and a form cannot be
/// missing on one backend. The algorithm arrives as a tag type (reduce_types.hpp):
/// a call compiles only the algorithm it names; a run-time `reduce_algorithm`
/// is turned into a tag here (`visit_algorithm`), which compiles all four.

#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/reduce/atomics.hpp>
#include <fusekit/detail/reduce/checks.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/error.hpp>
#include <fusekit/reduce_types.hpp>

#include <cuda/std/span>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace reduce {

template <class A>
inline constexpr bool is_algorithm_tag_v = std::is_same_v<A, naive_atomic> || std::is_same_v<A, block_atomic> ||
                                           std::is_same_v<A, run_to_run> || std::is_same_v<A, deterministic>;

/// What a reduction's `algorithm` argument may be: a tag, or a run-time value.
template <class A>
inline constexpr bool is_algorithm_v = is_algorithm_tag_v<A> || std::is_same_v<A, reduce_algorithm>;

template <class A>
inline constexpr bool is_atomic_algorithm_v = std::is_same_v<A, naive_atomic> || std::is_same_v<A, block_atomic>;

/// Whether algorithm A can reduce with op on Acc: the atomic ones need an
/// atomic for it (`plus`, and `minimum`/`maximum` on 32- and 64-bit integers).
template <class A, class Op, class Acc>
inline constexpr bool algorithm_takes_v = !is_atomic_algorithm_v<A> || atomic_op<Op, Acc>::exists;

/// A run-time algorithm that cannot run this call: an atomic one for an op
/// without an atomic, or a value outside the enum. `check_reduction` throws
/// for it inside the backend's checks (on every rank alike), and no backend
/// compiles any work for it.
struct rejected_algorithm {
  reduce_algorithm id;
};

/// One reduction: init ⊕ src(0) ⊕ ... ⊕ src(n − 1), grouped as the algorithm
/// does it, to `*out` or (`Value`) returned as a host value.
template <class Acc, class Src, class Op, bool Value>
struct reduction {
  using accumulator = Acc;
  using source = Src;
  using op_type = Op;
  static constexpr bool returns_value = Value;
  const char* function;  ///< the public name, for messages: "fusekit::sum"
  Src src;               ///< element i of an array, or op(ins[i]...) (source.hpp)
  sum_views views;       ///< the inputs, named for the checks
  Op op;
  Acc init;
  Acc* out = nullptr;                           ///< where the result goes (null when Value)
  ::cuda::std::span<std::byte> workspace = {};  ///< the caller's temporaries (the CUDA workspace forms)
};

/// The reduction `sum`/`reduce_sum`/`reduce` state for an array.
template <bool Value, class Acc, class T, class Op>
reduction<Acc, array_source<Acc, std::remove_cv_t<T>>, Op, Value> array_reduction(const char* function,
                                                                                  ::cuda::std::span<T> in, Op op,
                                                                                  Acc init, Acc* out) {
  return {function, {in.data()}, reduce_input(in), op, init, out};
}

/// The reduction `transform_reduce(_sum)` state: Σ f(ins[i]...).
template <bool Value, class Acc, class F, class... Ins>
reduction<Acc, transform_source<Acc, F, std::remove_cv_t<Ins>...>, plus, Value> transform_reduction(
    const char* function, const F& f, Acc* out, ::cuda::std::span<Ins>... ins) {
  return {function, make_transform_source<Acc>(f, ins...), transform_reduce_inputs(ins...), plus{}, Acc(0), out};
}

/// The run-time id of an algorithm tag.
template <class A>
constexpr reduce_algorithm algorithm_id(A a) {
  if constexpr (std::is_same_v<A, rejected_algorithm>) {
    return a.id;
  } else {
    return A::id;
  }
}

/// Throws for a rejected run-time algorithm (what `visit_algorithm` could not
/// turn into a tag), naming `function`; a tag passes.
template <class A>
void check_algorithm(const char* function, A algorithm) {
  if constexpr (std::is_same_v<A, rejected_algorithm>) {
    auto const id = algorithm.id;
    bool const atomic = id == reduce_algorithm::naive_atomic || id == reduce_algorithm::block_atomic;
    FUSEKIT_EXPECTS(!atomic, std::string(function) + ": reduce_algorithm::" + to_string(id) +
                                 " needs an atomic for op on the accumulator type; atomics exist for fusekit::plus, "
                                 "and for fusekit::minimum and fusekit::maximum on 32- and 64-bit integers. Use "
                                 "run_to_run or deterministic");
    FUSEKIT_EXPECTS(false, std::string(function) + ": algorithm is " + std::to_string(static_cast<int>(id)) +
                               ", not a reduce_algorithm");
  }
}

/// The checks every backend runs first (inside its collective check on
/// fusekit::mpi and fusekit::nccl): the views, then the algorithm. Returns n.
template <class R, class A>
std::int64_t check_reduction(const R& r, A algorithm) {
  std::int64_t const n =
      R::returns_value ? check_sum_inputs(r.function, r.views) : check_sum_views(r.function, r.out, r.views);
  check_algorithm(r.function, algorithm);
  return n;
}

/// f(tag) for the run-time algorithm `a`: every algorithm that can take Op on
/// Acc is compiled; any other value becomes `rejected_algorithm`.
template <class Op, class Acc, class F>
decltype(auto) visit_algorithm(reduce_algorithm a, const F& f) {
  switch (a) {
    case reduce_algorithm::naive_atomic:
      if constexpr (atomic_op<Op, Acc>::exists) { return f(naive_atomic{}); }
      break;
    case reduce_algorithm::block_atomic:
      if constexpr (atomic_op<Op, Acc>::exists) { return f(block_atomic{}); }
      break;
    case reduce_algorithm::run_to_run:
      return f(run_to_run{});
    case reduce_algorithm::deterministic:
      return f(deterministic{});
  }
  return f(rejected_algorithm{a});
}

/// The one call of every public reduction: the backend's `run_reduce` with the
/// algorithm's tag. A tag is checked against the op at compile time.
template <class Policy, class R, class A>
decltype(auto) reduce_on(const Policy& policy, const R& r, A algorithm) {
  static_assert(is_algorithm_v<A>,
                "fusekit: the algorithm is a tag (fusekit::deterministic{}, run_to_run{}, block_atomic{}, "
                "naive_atomic{}) or a fusekit::reduce_algorithm value");
  using Acc = typename R::accumulator;
  using Op = typename R::op_type;
  if constexpr (std::is_same_v<A, reduce_algorithm>) {
    return visit_algorithm<Op, Acc>(algorithm, [&](auto tag) { return run_reduce(reduce_tag{}, policy, r, tag); });
  } else {
    static_assert(algorithm_takes_v<A, Op, Acc>,
                  "fusekit: naive_atomic and block_atomic need an atomic for op on the accumulator type: "
                  "fusekit::plus, or fusekit::minimum and fusekit::maximum on 32- and 64-bit integers. Use "
                  "run_to_run or deterministic");
    return run_reduce(reduce_tag{}, policy, r, algorithm);
  }
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
