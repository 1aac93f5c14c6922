// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// How the CPU backend runs a loop in parallel: OpenMP threads over contiguous ranges, and
/// inside a range one SIMD loop compiled for the baseline ISA and, on x86-64
/// with gcc or clang, for AVX2+FMA, picked at run time. A header-only library
/// cannot count on its users' -march, and 8-wide vectors are what keep the
/// fused layer near the memory bandwidth (about 3.5× the SSE2 loop).
///
/// The AVX2 code is not a second copy of any loop: `isa_dispatch(f)` calls f
/// from a function compiled with `target("avx2,fma")` and `flatten`, into
/// which f and the loop in it are inlined and vectorized (in .cpp and .cu
/// files alike).
/// OpenMP regions stay outside f: GCC outlines a region in the function that
/// holds the pragma, before any inlining.

#include <fusekit/config.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/reduce_types.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#if FUSEKIT_HAS_OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(FUSEKIT_NO_CPU_DISPATCH)
#define FUSEKIT_CPU_DISPATCH 1
#define FUSEKIT_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define FUSEKIT_CPU_DISPATCH 0
#define FUSEKIT_TARGET_AVX2
#endif

#if defined(__GNUC__) || defined(__clang__)
#define FUSEKIT_LAMBDA_INLINE __attribute__((always_inline))
#else
#define FUSEKIT_LAMBDA_INLINE
#endif

namespace fusekit {
namespace detail {
inline namespace core {

/// `cpu{threads}` above this many threads per processor is clamped to it.
inline constexpr int cpu_thread_limit_per_processor = 4;

/// Below this many elements a loop runs on the calling thread: starting a
/// thread team costs more than the work.
inline constexpr std::int64_t cpu_parallel_threshold = 1 << 15;

/// A conjugate-gradient fit of less work than this in all (K·L·(L + N) for
/// the Gram matrix and N·L³ for the iterations: a few milliseconds) runs on
/// the calling thread: a team saves nothing there, and with a busy process
/// beside it one descheduled thread stalls the whole call (detail/train/cpu.hpp;
/// the measurement is in docs/performance.md).
inline constexpr std::int64_t cpu_small_fit_work = std::int64_t{1} << 22;

/// The threads a CPU call uses: OpenMP's default for 0, else `threads` up to 4
/// per processor (more only adds contention, and a huge team exhausts memory:
/// `cpu{INT_MAX}` used to end the process). A negative count is rejected.
inline int cpu_thread_count(const cpu& policy) {
  FUSEKIT_EXPECTS(policy.threads >= 0, "fusekit::cpu: threads is " + std::to_string(policy.threads) +
                                           "; it must be 0 (OpenMP's default) or a positive count");
#if FUSEKIT_HAS_OPENMP
  if (policy.threads == 0) { return omp_get_max_threads(); }
  // At most 4 threads are never clamped (every machine has a processor), so
  // they ask OpenMP nothing; the processors are counted once, not per call
  // (omp_get_num_procs reads the affinity mask: about 0.4 µs a call).
  if (policy.threads <= cpu_thread_limit_per_processor) { return policy.threads; }
  static int const most = cpu_thread_limit_per_processor * omp_get_num_procs();
  return policy.threads < most ? policy.threads : most;
#else
  return 1;
#endif
}

/// Whether this CPU runs the AVX2+FMA code.
inline bool cpu_has_avx2_fma() {
#if FUSEKIT_CPU_DISPATCH
  static bool const has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

#if FUSEKIT_CPU_DISPATCH
// `flatten`: f, and all it calls, inlined here, so compiled for AVX2. Its own
// always_inline is not enough: nvcc's front end drops attributes on lambdas,
// and in a .cu file a loop past gcc's inlining limits would be compiled out of
// line for the baseline ISA (codegen.cpu_dispatch_inlined checks it is not).
template <class F>
FUSEKIT_TARGET_AVX2 __attribute__((flatten)) auto call_avx2(const F& f) {
  return f();
}
#endif

#if FUSEKIT_CPU_DISPATCH
/// f() compiled for AVX2 without FMA: vectors twice as wide as the baseline's,
/// and no fused multiply-add to contract into, so `a + x·y` keeps its two
/// roundings and the baseline's bits.
template <class F>
__attribute__((target("avx2"), flatten)) auto call_avx2_without_fma(const F& f) {
  return f();
}
#endif

/// f(), compiled for AVX2 (without FMA) when this CPU has it: for loops whose
/// bits must not depend on the CPU.
template <class F>
auto isa_dispatch_same_bits(const F& f) {
#if FUSEKIT_CPU_DISPATCH
  if (cpu_has_avx2_fma()) { return call_avx2_without_fma(f); }
#endif
  return f();
}

/// f(), compiled for AVX2+FMA when this CPU has them (see the file comment).
template <class F>
auto isa_dispatch(const F& f) {
#if FUSEKIT_CPU_DISPATCH
  if (cpu_has_avx2_fma()) { return call_avx2(f); }
#endif
  return f();
}

/// f(vector_bytes), vector_bytes a std::integral_constant<int, B>: B = 32 when
/// this CPU has AVX2+FMA, else 16. Code written in host vectors of B bytes
/// (detail/team/cpu_columns.hpp) takes its width from it, and compiles its 32-byte
/// part for AVX2 itself.
template <class F>
auto isa_dispatch_vectors(const F& f) {
#if FUSEKIT_CPU_DISPATCH
  if (cpu_has_avx2_fma()) { return f(std::integral_constant<int, 32>{}); }
#endif
  return f(std::integral_constant<int, 16>{});
}

/// op called through a noexcept operator(): an exception from the caller's op
/// calls std::terminate wherever the op runs: on the calling thread, in an
/// OpenMP region (where GCC terminates anyway) or in a SIMD loop. One
/// behaviour for every algorithm and size, as std::execution::par has it.
template <class Op>
struct nothrow_op {
  Op op;
  template <class... A>
  FUSEKIT_HD FUSEKIT_FORCEINLINE auto operator()(const A&... a) const noexcept -> decltype(op(a...)) {
    return op(a...);
  }
};

/// The caller's op for a CPU loop: fusekit's reduce ops as they are (the
/// algorithms recognize them, and they cannot throw), any other op through
/// nothrow_op.
template <class Op>
auto no_throw(const Op& op) {
  if constexpr (std::is_same_v<Op, plus> || std::is_same_v<Op, minimum> || std::is_same_v<Op, maximum>) {
    return op;
  } else {
    return nothrow_op<Op>{op};
  }
}

/// body(part, begin, end) over contiguous ranges that cover [0, count), part
/// = 0, 1, ... one per thread; returns how many parts there may be (the thread
/// count). `work` (default: count) is what the loop costs in elements: below
/// cpu_parallel_threshold everything runs as part 0 on the calling thread.
template <class Body>
int cpu_for_ranges(const cpu& policy, std::int64_t count, const Body& body, std::int64_t work = -1) {
  int const threads = cpu_thread_count(policy);
  if ((work < 0 ? count : work) < cpu_parallel_threshold || threads <= 1 || count <= 1) {
    body(0, std::int64_t{0}, count);
    return 1;
  }
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel num_threads(threads)
  {
    std::int64_t const team = omp_get_num_threads(), t = omp_get_thread_num();
    std::int64_t const share = count / team, extra = count % team;
    body(static_cast<int>(t), share * t + (t < extra ? t : extra), share * (t + 1) + (t + 1 < extra ? t + 1 : extra));
  }
  return threads;
#else
  body(0, std::int64_t{0}, count);
  return 1;
#endif
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
