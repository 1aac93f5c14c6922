// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions' vocabulary: the algorithms, the accumulator rules and the
/// operations `reduce` takes (see reduce_api.hpp for the functions and their error
/// bounds).

#include <fusekit/config.hpp>
#include <fusekit/detail/base/enum_name.hpp>
#include <fusekit/detail/base/extremum.hpp>
#include <fusekit/detail/base/rounding.hpp>
#include <fusekit/detail/base/accumulator.hpp>

#include <cstdint>
#include <type_traits>

namespace fusekit {

/// How a reduction combines its values (reduce_api.hpp has the costs and bounds),
/// as a run-time value: for a caller that picks at run time (a bench, the
/// Python module). A call that takes one compiles every algorithm; the tag
/// types below compile only the one they name.
///
/// Two names are mechanisms, kept public because comparing them is the point
/// (one atomic per element, one per block: no guarantee from run to run); two
/// name the guarantee, as CUB's `cuda::execution::determinism` does:
/// `run_to_run` gives the same bits on one machine from call to call, and
/// `deterministic` the same bits on every GPU, the CPU and any rank count.
/// The name means one algorithm on every backend: the CPU runs each one too
/// (the same tree, host atomics per element or per chunk, a fixed split into
/// blocks for `run_to_run`), so a program that compares them on a laptop
/// learns what it would learn on a GPU. `deterministic` is the default of
/// `sum`, `reduce_sum` and `reduce`.
enum class reduce_algorithm {
  naive_atomic,   ///< one atomic per element: the teaching baseline
  block_atomic,   ///< a sum per thread and per block, then one atomic per block
  run_to_run,     ///< two passes, no atomics: cub::DeviceReduce on the GPU, fixed blocks in double on the CPU
  deterministic,  ///< a fixed tree over 8192-value tiles: the same bits on every GPU and the CPU
  cub [[deprecated("reduce_algorithm::run_to_run is now reduce_algorithm::run_to_run (the CPU runs no CUB)")]] =
      run_to_run,
};

/// The algorithms as types. A call that names one compiles that one and
/// nothing else:
///
///     float s = fusekit::sum(fusekit::cuda{stream}, x);                       // deterministic
///     fusekit::reduce_sum(fusekit::cuda{stream}, x, d_sum, fusekit::block_atomic{});
///
/// `naive_atomic` and `block_atomic` take only an op with an atomic (a
/// compile error otherwise; `reduce_algorithm` values throw instead).
struct naive_atomic {
  static constexpr reduce_algorithm id = reduce_algorithm::naive_atomic;
};
/// See `naive_atomic`.
struct block_atomic {
  static constexpr reduce_algorithm id = reduce_algorithm::block_atomic;
};
/// See `naive_atomic`.
struct run_to_run {
  static constexpr reduce_algorithm id = reduce_algorithm::run_to_run;
};
/// See `naive_atomic`.
struct deterministic {
  static constexpr reduce_algorithm id = reduce_algorithm::deterministic;
};

/// Every algorithm, in the order of the tables: for comparing them side by side,
///
///     for (fusekit::reduce_algorithm a : fusekit::all_reduce_algorithms) {
///       std::printf("%s %.9g\n", fusekit::to_string(a), fusekit::sum(policy, x, a));
///     }
inline constexpr reduce_algorithm all_reduce_algorithms[] = {
    reduce_algorithm::naive_atomic, reduce_algorithm::block_atomic, reduce_algorithm::run_to_run,
    reduce_algorithm::deterministic};

/// Name of an algorithm, for tables and messages: the enumerator's own
/// spelling ("naive_atomic", "block_atomic", "run_to_run", "deterministic").
constexpr const char* to_string(reduce_algorithm a) {
  constexpr const char* names[] = {"naive_atomic", "block_atomic", "run_to_run", "deterministic"};
  return detail::enum_name(names, a);
}

/// The accumulator a sum of T uses by default: float for float and the half
/// types, double for double, std::int64_t for signed and std::uint64_t for
/// unsigned integers (so a sum of int32 values does not overflow at 2^31).
/// `accumulate_in<Acc>` asks for another one; reduce_api.hpp's table says which
/// each input type may take.
template <class T>
using accumulator_t = typename detail::default_accumulator<std::remove_cv_t<T>>::type;

/// Asks `sum`/`transform_reduce` for a particular accumulator: `accumulate_in<double>{}`.
/// A float sum in double, for instance, costs no more while the sum is
/// memory-bound and leaves an error of about n·2^-53 instead of n·2^-24.
/// A tag: it carries the type, no value. The rules of reduce_api.hpp's table say
/// which accumulators each input type may use; any other is a compile error.
template <class Acc>
struct accumulate_in {
  using type = Acc;
};

/// x + y, one IEEE rounding (`add_rn`: never fused with a product). The sum's operation.
/// Integers add in the accumulator's type with two's-complement wrap-around,
/// for a signed accumulator too (computed unsigned: overflow is never
/// undefined behaviour, and the 64-bit default accumulators make it rare).
struct plus {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(T x, T y) const {
    return detail::add_rn(x, y);
  }
};

/// The smaller of x and y, for `reduce`. On integers of 32 and 64 bits every
/// algorithm takes it (the atomic ones through CUDA's atomicMin); floating
/// point has no atomic minimum, so only `run_to_run` and `deterministic` do.
/// Floating point: IEEE 754-2019's `minimum`, so a
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
/// Integers: the larger value. `reduce(policy, x, out, maximum{}, init)`, with
/// init the type's lowest value, writes the maximum of x (init for an empty x).
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
