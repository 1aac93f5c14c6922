// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Sum reductions, side by side: what each costs and what each guarantees.
///
///     fusekit::reduce_sum(fusekit::cuda{stream}, in, d_sum, fusekit::reduce_algorithm::block_atomic);
///     float s = fusekit::sum(fusekit::cpu{}, h_in);                     // host value
///     double d = fusekit::sum(fusekit::cuda{stream}, in, fusekit::reduce_algorithm::cub,
///                             fusekit::accumulate_in<double>{});        // synchronizes
///
/// | algorithm      | GPU                                               | run to run | across GPUs and the CPU |
/// |----------------|---------------------------------------------------|------------|-------------------------|
/// | `naive_atomic` | one atomicAdd per element (the teaching baseline; slow: every add serializes on one address) | differs | differs |
/// | `block_atomic` | grid-stride sums per thread, cub::BlockReduce, one atomicAdd per block | differs (floating point) | differs |
/// | `cub`          | cub::DeviceReduce (two passes, temporary storage) | same on one GPU | differs |
/// | `deterministic`| fixed-order tree over 8192-value tiles (detail/reduce_tree.hpp) | same | same bits, CPU included |
///
/// On the CPU, `deterministic` is the same tree (bit-identical to the GPU); the
/// other three are one OpenMP parallel sum, carried in double (the atomics and
/// CUB are GPU devices).
///
/// **Accumulators.** float for float, `__half` and `__nv_bfloat16`; double for
/// double; `int64_t` for signed and `uint64_t` for unsigned integers. Float input
/// sums in double on request (an output of type double, or `accumulate_in<double>`).
///
/// **Error bounds** (u = 2^-24 for a float accumulator, 2^-53 for double;
/// S = Σ|x_i|; the bounds are the classical worst case for the order each
/// algorithm uses, rounded up; typical errors are far smaller, about u·√(terms)):
///
/// | algorithm      | |computed − exact| ≤                                   |
/// |----------------|--------------------------------------------------------|
/// | `naive_atomic` | (n − 1)·u·S — any order, so the sequential worst case   |
/// | `block_atomic` | (n/T + 10 + B)·u·S, T threads, B ≤ 2·SMs blocks         |
/// | `cub`          | (n/T + log2 n)·u·S                                      |
/// | `deterministic`| (40·L)·u·S, L = levels of the tree = ⌈log_8192 n⌉ (1 to 3 in practice) |
/// | CPU parallel   | u·|S_exact| + (4096/8 + 8 + n/4096)·2^-53·S (summed in double, rounded once) |
/// | integers       | exact (64-bit wrap-around on overflow)                  |
///
/// Sizes: n = 0 gives 0; n above 2^31 works (64-bit indices); NaN and ±inf
/// propagate as IEEE addition says (inf + −inf = NaN).
///
/// **Same bits with an op (`transform_reduce`, `deterministic`).** The tree's
/// additions are the same on every backend, and never fused with a product the
/// op returns (they are `add_rn`), so `op = a·b` (`weigh`) sums to the same bits
/// on the GPU and the CPU. The values op(ins[i]...) themselves are the same bits
/// when the two compilers emit the same IEEE operations for op. nvcc fuses a
/// multiply feeding an add *inside* op into one `fma` by default (`--fmad=true`);
/// the host compiler does so only for a target with FMA instructions (`-mfma`,
/// `-march=haswell` or later, AArch64) under contraction (gcc's default in GNU
/// modes). So an op such as `a * b + c` may differ in its last bit, and with it
/// the sum. To keep the bits equal, write the multiply-add as
/// `fusekit::add_rn(fusekit::mul_rn(a, b), c)` (two roundings everywhere), or
/// build the device code with `--fmad=false`. Library math functions differ
/// between the CUDA math library and the host's libm; fusekit's own functors
/// (`normalize`, `weigh`, `tanh_activate`) run the same code on both sides.

#include <fusekit/config.hpp>
#include <fusekit/cpu/reduce.hpp>
#include <fusekit/detail/numeric.hpp>
#include <fusekit/detail/reduce_source.hpp>
#include <fusekit/detail/validate.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>
#include <cuda/std/tuple>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fusekit {

enum class reduce_algorithm { naive_atomic, block_atomic, cub, deterministic };

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
template <class Acc>
struct accumulate_in {
  using type = Acc;
};

namespace detail {

/// First argument of the backend entry points, so that calls from the public
/// templates find the overload for each policy by argument-dependent lookup,
/// including those declared later (the GPU ones, in reduce.cuh).
struct reduce_tag {};

/// Which accumulators a sum of T may use.
template <class T, class Acc>
constexpr void check_accumulator() {
  using U = std::remove_cv_t<T>;
  if constexpr (is_integer_element_v<U>) {
    static_assert(std::is_same_v<Acc, accumulator_t<U>>,
                  "fusekit: integers sum in a 64-bit integer: int64_t for signed, uint64_t for unsigned inputs");
  } else if constexpr (std::is_same_v<U, double>) {
    static_assert(std::is_same_v<Acc, double>, "fusekit: double input sums in double");
  } else {
    static_assert(std::is_same_v<Acc, float> || std::is_same_v<Acc, double>,
                  "fusekit: float, __half and __nv_bfloat16 inputs sum in float (default) or double");
  }
}

/// The views of a sum: 1 to 4 inputs (`in`, or `ins[0]` ... for transform_reduce).
struct sum_views {
  named_range ranges[4];
  std::size_t count;
};

template <class T>
sum_views reduce_input(::cuda::std::span<T> in) {
  return {{describe("in", in)}, 1};
}

template <class... Ins>
sum_views transform_reduce_inputs(::cuda::std::span<Ins>... ins) {
  static_assert(sizeof...(Ins) >= 1 && sizeof...(Ins) <= 4, "fusekit::transform_reduce takes 1 to 4 inputs");
  static_assert((is_supported_element_v<Ins> && ...),
                "fusekit::transform_reduce: unsupported input element type. Use float, double, __half, "
                "__nv_bfloat16 or an integer type");
  const char* const names[] = {"ins[0]", "ins[1]", "ins[2]", "ins[3]"};
  std::size_t k = 0;
  return {{describe(names[k++], ins)...}, sizeof...(Ins)};
}

/// One validation for every sum: the inputs non-null, aligned and of one size.
/// Returns the number of values.
inline std::int64_t check_sum_inputs(const char* function, const sum_views& v) {
  for (std::size_t k = 0; k < v.count; ++k) {
    expect_not_null(function, v.ranges[k]);
    expect_aligned(function, v.ranges[k]);
    expect_same_size(function, v.ranges[k], v.ranges[0]);
  }
  return static_cast<std::int64_t>(v.ranges[0].size);
}

/// ... and for a sum written to `out`: out non-null, aligned and sharing no
/// byte with any input.
template <class Acc>
std::int64_t check_sum_views(const char* function, const Acc* out, const sum_views& v) {
  std::int64_t const n = check_sum_inputs(function, v);
  named_range const o{"out", reinterpret_cast<std::uintptr_t>(out), 1, sizeof(Acc)};
  FUSEKIT_EXPECTS(out != nullptr, std::string(function) + ": out is null; it must point to one " +
                                      std::to_string(sizeof(Acc)) + "-byte accumulator");
  expect_aligned(function, o);
  for (std::size_t k = 0; k < v.count; ++k) { expect_disjoint(function, o, v.ranges[k]); }
  return n;
}

template <class T, class Acc>
void check_reduce(const char* function, ::cuda::std::span<T> in, const Acc* out) {
  check_accumulator<T, Acc>();
  check_sum_views(function, out, reduce_input(in));
}

/// Accumulators of a transform_reduce: float, double or a 64-bit integer.
template <class Acc>
constexpr void check_transform_accumulator() {
  static_assert(std::is_same_v<Acc, float> || std::is_same_v<Acc, double> || std::is_same_v<Acc, std::int64_t> ||
                    std::is_same_v<Acc, std::uint64_t>,
                "fusekit::transform_reduce: the accumulator is float, double, int64_t or uint64_t (narrower "
                "integers would wrap long before a sum of many values ends)");
}

/// Checks a transform_reduce written to `out`; returns the number of values.
template <class Acc, class... Ins>
std::int64_t check_transform_reduce(const char* function, const Acc* out, ::cuda::std::span<Ins>... ins) {
  check_transform_accumulator<Acc>();
  return check_sum_views(function, out, transform_reduce_inputs(ins...));
}

/// The CPU backend: the tree for `deterministic`, the parallel sum otherwise.
template <class Acc, class Src>
Acc cpu_reduce(const cpu& policy, const Src& src, std::int64_t n, reduce_algorithm algorithm) {
  return algorithm == reduce_algorithm::deterministic ? cpu_tree_sum<Acc>(policy, src, n)
                                                      : cpu_parallel_sum<Acc>(policy, src, n);
}

template <class T, class Acc>
void run_reduce_sum(reduce_tag, const cpu& policy, ::cuda::std::span<T> in, Acc* out, reduce_algorithm algorithm) {
  check_reduce("fusekit::reduce_sum", in, out);
  *out = cpu_reduce<Acc>(policy, array_source<Acc, std::remove_cv_t<T>>{in.data()},
                         static_cast<std::int64_t>(in.size()), algorithm);
}

template <class Acc, class Op, class... Ins>
transform_source<Acc, Op, std::remove_cv_t<Ins>...> make_transform_source(const Op& op, ::cuda::std::span<Ins>... ins) {
  return {op, ::cuda::std::tuple<const std::remove_cv_t<Ins>*...>(ins.data()...)};
}

template <class Acc, class Op, class... Ins>
void run_transform_reduce_sum(reduce_tag, const cpu& policy, Acc* out, reduce_algorithm algorithm, const Op& op,
                              ::cuda::std::span<Ins>... ins) {
  std::int64_t const n = check_transform_reduce("fusekit::transform_reduce_sum", out, ins...);
  *out = cpu_reduce<Acc>(policy, make_transform_source<Acc>(op, ins...), n, algorithm);
}

template <class Acc, class T>
Acc run_sum(reduce_tag tag, accumulate_in<Acc>, const cpu& policy, ::cuda::std::span<T> in,
            reduce_algorithm algorithm) {
  Acc result{};
  run_reduce_sum(tag, policy, in, &result, algorithm);
  return result;
}

template <class Acc, class Op, class... Ins>
Acc run_transform_reduce(reduce_tag tag, accumulate_in<Acc>, const cpu& policy, reduce_algorithm algorithm,
                         const Op& op, ::cuda::std::span<Ins>... ins) {
  Acc result{};
  run_transform_reduce_sum(tag, policy, &result, algorithm, op, ins...);
  return result;
}

}  // namespace detail

/// Writes Σ in[i] to *out (device memory for `fusekit::cuda`, asynchronously on
/// its stream; host memory for `fusekit::cpu`). The accumulator is out's type.
template <class Policy, class T, class Acc>
void reduce_sum(const Policy& policy, ::cuda::std::span<T> in, Acc* out,
                reduce_algorithm algorithm = reduce_algorithm::deterministic) {
  run_reduce_sum(detail::reduce_tag{}, policy, in, out, algorithm);
}

/// Σ in[i] as a host value. With `fusekit::cuda` this synchronizes the stream.
template <class Policy, class T, class Acc = accumulator_t<T>>
Acc sum(const Policy& policy, ::cuda::std::span<T> in, reduce_algorithm algorithm = reduce_algorithm::deterministic,
        accumulate_in<Acc> = {}) {
  return run_sum(detail::reduce_tag{}, accumulate_in<Acc>{}, policy, in, algorithm);
}

/// Writes Σ op(ins[i]...) to *out in one pass (no intermediate array), with the
/// same algorithms and accumulators as `reduce_sum`.
template <class Policy, class Acc, class Op, class... Ins>
void transform_reduce_sum(const Policy& policy, Acc* out, reduce_algorithm algorithm, Op op,
                          ::cuda::std::span<Ins>... ins) {
  detail::check_transform_accumulator<Acc>();
  run_transform_reduce_sum(detail::reduce_tag{}, policy, out, algorithm, op, ins...);
}

/// Σ op(ins[i]...) as a host value, by the deterministic tree; the accumulator
/// is that of op's result type unless given. With `fusekit::cuda` this synchronizes.
template <class Policy, class Op, class... Ins>
auto transform_reduce(const Policy& policy, Op op, ::cuda::std::span<Ins>... ins) {
  using R = std::decay_t<decltype(op(std::declval<std::remove_cv_t<Ins>&>()...))>;
  return run_transform_reduce(detail::reduce_tag{}, accumulate_in<accumulator_t<R>>{}, policy,
                              reduce_algorithm::deterministic, op, ins...);
}

template <class Policy, class Acc, class Op, class... Ins>
Acc transform_reduce(const Policy& policy, reduce_algorithm algorithm, accumulate_in<Acc>, Op op,
                     ::cuda::std::span<Ins>... ins) {
  return run_transform_reduce(detail::reduce_tag{}, accumulate_in<Acc>{}, policy, algorithm, op, ins...);
}

}  // namespace fusekit
