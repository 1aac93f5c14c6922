// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Sum reductions, side by side: what each costs and what each guarantees.
/// This file holds the calls and their contracts, with no backend: include
/// <fusekit/reduce.hpp> for `fusekit::cpu` (any C++17 compiler),
/// <fusekit/reduce.cuh> for `fusekit::cuda` (nvcc), or both; `run_to_run` on
/// the GPU is CUB's and comes with <fusekit/run_to_run.cuh>.
/// <fusekit/fusekit.cuh> includes them all.
///
///     float s = fusekit::sum(fusekit::cpu{}, h_in);                     // host value, deterministic
///     fusekit::reduce_sum(fusekit::cuda{stream}, in, d_sum, fusekit::block_atomic{});
///     double d = fusekit::sum(fusekit::cuda{stream}, in, fusekit::run_to_run{},
///                             fusekit::accumulate_in<double>{});        // synchronizes
///
/// An algorithm is named by a tag type (`naive_atomic{}`, `block_atomic{}`,
/// `run_to_run{}`, `deterministic{}`, the default): a call compiles that one
/// algorithm and nothing else. A run-time `reduce_algorithm` value is taken
/// too, for a caller that chooses at run time (a bench, the Python module):
/// that call compiles all four.
///
/// | algorithm      | GPU | CPU (`fusekit::cpu`) | run to run | across GPUs and the CPU |
/// |----------------|-----|----------------------|------------|-------------------------|
/// | `naive_atomic` | one atomicAdd per element (the teaching baseline; every add serializes on one address) | one host atomic per element (cuda::atomic_ref) from every thread: the slowest, for the same reason | differs | differs |
/// | `block_atomic` | grid-stride sums per thread, cub::BlockReduce, one atomicAdd per block | a sum per chunk of 2^15 values in the accumulator type (8 SIMD lanes), one atomic per chunk | differs (floating point) | differs |
/// | `run_to_run`   | cub::DeviceReduce (two passes, temporary storage) | blocks of 4096 summed in double, rounded once (no atomics) | same (the blocks depend on n alone) | differs |
/// | `deterministic`| fixed-order tree over 8192-value tiles (detail/reduce/tree.hpp) | the same tree, the same function | same | same bits, CPU included |
///
/// Each name runs its algorithm on both backends, so a laptop shows what an
/// H200 does: atomics in float lose digits and change run to run (with more
/// than one thread), the tree never does. On the CPU `naive_atomic` costs
/// hundreds of times `run_to_run` (every add waits for the cache line); each
/// algorithm's measured cost is in docs/performance.md.
///
/// **Accumulators.** float for float, `__half` and `__nv_bfloat16`; double for
/// double; `int64_t` for signed and `uint64_t` for unsigned integers. Float input
/// sums in double on request (an output of type double, or `accumulate_in<double>`).
///
/// **Error bounds** (u = 2^-24 for a float accumulator, 2^-53 for double;
/// S = Σ|x_i|; the bounds are the classical worst case for the order each
/// algorithm uses, rounded up; typical errors are far smaller, about u·√(terms)):
///
/// | algorithm      | \|computed − exact\| ≤ |
/// |----------------|--------------------------|
/// | `naive_atomic` | (n − 1)·u·S — any order, so the sequential worst case (GPU and CPU) |
/// | `block_atomic` | GPU: (n/T + 10 + B)·u·S, T threads, B ≤ 2·SMs blocks; CPU: (n/(8P) + 8 + P)·u·S, P = ⌈n/2^15⌉ chunks |
/// | `run_to_run`   | GPU: (n/T + log2 n)·u·S; CPU: u·\|S_exact\| + (4096/8 + 8 + n/4096)·2^-53·S (summed in double, rounded once) |
/// | `deterministic`| (40·L)·u·S, L = levels of the tree = ⌈log_8192 n⌉ (1 to 3 in practice) |
/// | integers       | exact (64-bit wrap-around on overflow) |
///
/// Sizes: n = 0 gives 0; n above 2^31 works (64-bit indices); NaN and ±inf
/// propagate as IEEE addition says (inf + −inf = NaN). An op passed to
/// `transform_reduce` must not throw (see `reduce`: std::terminate).
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
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/core/ranges.hpp>
#include <fusekit/detail/reduce/checks.hpp>
#include <fusekit/detail/reduce/reduction.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/reduce_types.hpp>

#include <cuda/std/span>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace fusekit {

/// Writes Σ in[i] to *out.
///
/// \param policy    `fusekit::cpu{}` (host memory, synchronous) or `fusekit::cuda{stream}`
///                  (device memory, asynchronous on the stream; include <fusekit/reduce.cuh>)
/// \param in        the values; any size, 0 included (the sum is then 0)
/// \param out       one accumulator, of the type the sum runs in (see the file comment);
///                  shares no byte with `in`
/// \param algorithm a tag (`deterministic{}` by default) or a `reduce_algorithm` value;
///                  see the tables above
/// \throws fusekit::invalid_argument for a null, misaligned or overlapping view, before anything runs
template <class Policy, class T, class Acc, class Algorithm = deterministic>
void reduce_sum(const Policy& policy, ::cuda::std::span<T> in, Acc* out, Algorithm algorithm = {}) {
  detail::check_accumulator<T, Acc>();
  if constexpr (detail::policy_usable<detail::reduce_tag, Policy>()) {
    detail::reduce_on(policy, detail::array_reduction<false>("fusekit::reduce_sum", in, plus{}, Acc(0), out),
                      algorithm);
  }
}

/// *out = init ⊕ in[0] ⊕ in[1] ⊕ ... for an associative and commutative
/// operation ⊕ (`op`), grouped and ordered as `algorithm` does it. The sum is
/// one instance: `reduce(policy, in, out, fusekit::plus{}, 0.0f)` is
/// `reduce_sum(policy, in, out)`.
///
///     fusekit::reduce(fusekit::cuda{stream}, in, d_min, fusekit::minimum{}, INFINITY);
///
/// **The op's contract.** Every algorithm regroups *and reorders* the operands:
/// the tree's lane l combines l, l + 256, l + 512, ...; threads and blocks
/// combine their partials in the order they finish. So op must be
/// commutative as well as associative; an op that is only associative (say
/// "the last non-zero") gives a wrong result, silently. op must not throw:
/// it runs on helper threads and in SIMD loops on the CPU and in kernels on
/// the GPU, so an exception calls `std::terminate`, on every algorithm and
/// size (as with `std::execution::par`). `minimum` and `maximum` propagate
/// NaN (IEEE 754-2019 minimum and maximum): a NaN anywhere in `in` or `init`
/// gives NaN, on every algorithm and backend.
///
/// \param op        `fusekit::plus`, `fusekit::minimum`, `fusekit::maximum`, or the
///                  caller's associative and commutative `Acc op(Acc, Acc)`, which
///                  does not throw (on the GPU: callable on the device)
/// \param init      combined once, first: the result for an empty `in`
/// \param algorithm `run_to_run` and `deterministic` take any op; `naive_atomic` and
///                  `block_atomic` only an op with a CUDA atomic: `plus`, and
///                  `minimum`/`maximum` on 32- and 64-bit integers (a compile error
///                  for a tag; a `reduce_algorithm` value throws
///                  `fusekit::invalid_argument`, on every backend). `deterministic`
///                  gives the same bits on every GPU and the CPU for every op, and
///                  for an exact op (min and max, NaN included, integer plus)
///                  every algorithm does.
/// \param out       one Acc: float, double or a 32- or 64-bit integer (integer inputs only)
template <class Policy, class T, class Acc, class Op, class Algorithm = deterministic>
void reduce(const Policy& policy, ::cuda::std::span<T> in, Acc* out, Op op, Acc init, Algorithm algorithm = {}) {
  detail::check_reduce_accumulator<T, Acc>();
  if constexpr (detail::policy_usable<detail::reduce_tag, Policy>()) {
    detail::reduce_on(policy, detail::array_reduction<false>("fusekit::reduce", in, op, init, out), algorithm);
  }
}

/// Σ in[i] as a host value, in `Acc` (`accumulate_in<double>{}` for a float
/// input summed in double). With `fusekit::cuda` this synchronizes the stream.
template <class Policy, class T, class Algorithm = deterministic, class Acc = accumulator_t<T>,
          std::enable_if_t<detail::is_algorithm_v<Algorithm>, int> = 0>
Acc sum(const Policy& policy, ::cuda::std::span<T> in, Algorithm algorithm = {}, accumulate_in<Acc> = {}) {
  detail::check_accumulator<T, Acc>();
  if constexpr (detail::policy_usable<detail::reduce_tag, Policy>()) {
    return detail::reduce_on(
        policy, detail::array_reduction<true>("fusekit::sum", in, plus{}, Acc(0), static_cast<Acc*>(nullptr)),
        algorithm);
  } else {
    return Acc{};
  }
}

/// `reduce_sum` and `sum` over containers as well as spans: `std::vector`,
/// `std::array`, `thrust::host_vector`, `thrust::device_vector` (see the
/// container `transform` for the memory rule).
///
///     std::vector<float> x(n);
///     float s = fusekit::sum(fusekit::cpu{}, x);
template <class Policy, class R, class Acc, class Algorithm = deterministic,
          std::enable_if_t<detail::is_container_v<R>, int> = 0>
void reduce_sum(const Policy& policy, R&& in, Acc* out, Algorithm algorithm = {}) {
  if constexpr (detail::memory_usable<Policy, R>()) { reduce_sum(policy, detail::const_view_of(in), out, algorithm); }
}

template <class Policy, class R, class Algorithm = deterministic, class Acc = accumulator_t<detail::range_value_t<R>>,
          std::enable_if_t<detail::is_container_v<R> && detail::is_algorithm_v<Algorithm>, int> = 0>
Acc sum(const Policy& policy, R&& in, Algorithm algorithm = {}, accumulate_in<Acc> = {}) {
  if constexpr (detail::memory_usable<Policy, R>()) {
    return sum(policy, detail::const_view_of(in), algorithm, accumulate_in<Acc>{});
  } else {
    return Acc{};
  }
}

/// `reduce` over containers as well as spans (see the container `transform`
/// for the memory rule).
///
///     std::vector<float> x(n);
///     float lo;
///     fusekit::reduce(fusekit::cpu{}, x, &lo, fusekit::minimum{}, INFINITY);
template <class Policy, class R, class Acc, class Op, class Algorithm = deterministic,
          std::enable_if_t<detail::is_container_v<R>, int> = 0>
void reduce(const Policy& policy, R&& in, Acc* out, Op op, Acc init, Algorithm algorithm = {}) {
  if constexpr (detail::memory_usable<Policy, R>()) {
    reduce(policy, detail::const_view_of(in), out, op, init, algorithm);
  }
}

/// Writes Σ op(ins[i]...) to *out in one pass (no intermediate array), with the
/// same algorithms as `reduce_sum`.
///
/// \param out  a float, double, int64_t or uint64_t accumulator
/// \param op   called with one element of each input, in order; on the GPU it
///             must be callable on the device
/// \param ins  1 to 4 views of one size
template <class Policy, class Acc, class Algorithm, class Op, class... Ins,
          std::enable_if_t<detail::is_algorithm_v<Algorithm>, int> = 0>
void transform_reduce_sum(const Policy& policy, Acc* out, Algorithm algorithm, Op op, ::cuda::std::span<Ins>... ins) {
  detail::check_transform_accumulator<Acc>();
  if constexpr (detail::policy_usable<detail::reduce_tag, Policy>()) {
    detail::reduce_on(policy, detail::transform_reduction<false>("fusekit::transform_reduce_sum", op, out, ins...),
                      algorithm);
  }
}

/// `transform_reduce_sum` over containers as well as spans (see the container
/// `transform` for the memory rule).
template <
    class Policy, class Acc, class Algorithm, class Op, class... InR,
    std::enable_if_t<detail::is_algorithm_v<Algorithm> && (sizeof...(InR) >= 1) && (detail::is_container_v<InR> || ...),
                     int> = 0>
void transform_reduce_sum(const Policy& policy, Acc* out, Algorithm algorithm, Op op, InR&&... ins) {
  if constexpr (detail::memory_usable<Policy, InR...>()) {
    transform_reduce_sum(policy, out, algorithm, op, detail::const_view_of(ins)...);
  }
}

/// Σ op(ins[i]...) as a host value with `algorithm`, in Acc. With
/// `fusekit::cuda` this synchronizes.
template <class Policy, class Algorithm, class Acc, class Op, class... Ins,
          std::enable_if_t<detail::is_algorithm_v<Algorithm>, int> = 0>
Acc transform_reduce(const Policy& policy, Algorithm algorithm, accumulate_in<Acc>, Op op,
                     ::cuda::std::span<Ins>... ins) {
  detail::check_transform_accumulator<Acc>();
  if constexpr (detail::policy_usable<detail::reduce_tag, Policy>()) {
    return detail::reduce_on(
        policy, detail::transform_reduction<true>("fusekit::transform_reduce", op, static_cast<Acc*>(nullptr), ins...),
        algorithm);
  } else {
    return Acc{};
  }
}

/// `transform_reduce` over containers as well as spans (see the container
/// `transform` for the memory rule): `transform_reduce(policy, algorithm,
/// accumulate_in<Acc>{}, op, a, b)` with `a`, `b` vectors or device vectors.
template <
    class Policy, class Algorithm, class Acc, class Op, class... InR,
    std::enable_if_t<detail::is_algorithm_v<Algorithm> && (sizeof...(InR) >= 1) && (detail::is_container_v<InR> || ...),
                     int> = 0>
Acc transform_reduce(const Policy& policy, Algorithm algorithm, accumulate_in<Acc>, Op op, InR&&... ins) {
  if constexpr (detail::memory_usable<Policy, InR...>()) {
    return transform_reduce(policy, algorithm, accumulate_in<Acc>{}, op, detail::const_view_of(ins)...);
  } else {
    return Acc{};
  }
}

/// Σ op(ins[i]...) as a host value by the deterministic tree, in the
/// accumulator of op's result type. With `fusekit::cuda` this synchronizes.
template <class Policy, class Op, class... Ins, std::enable_if_t<!detail::is_algorithm_v<Op>, int> = 0>
auto transform_reduce(const Policy& policy, Op op, ::cuda::std::span<Ins>... ins) {
  using R = std::decay_t<decltype(op(std::declval<std::remove_cv_t<Ins>&>()...))>;
  return transform_reduce(policy, deterministic{}, accumulate_in<accumulator_t<R>>{}, op, ins...);
}

/// ... over containers as well as spans.
template <class Policy, class Op, class... InR,
          std::enable_if_t<!detail::is_algorithm_v<Op> && (sizeof...(InR) >= 1) && (detail::is_container_v<InR> || ...),
                           int> = 0>
auto transform_reduce(const Policy& policy, Op op, InR&&... ins) {
  return transform_reduce(policy, op, detail::const_view_of(ins)...);
}

}  // namespace fusekit
