// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// How the CPU backend runs a loop in parallel: chunks of contiguous ranges on
/// the calling thread and the helpers of fusekit's pool that are running
/// (detail/core/cpu_pool.hpp), and inside a range one SIMD loop compiled for
/// the baseline ISA and, on x86-64 with gcc or clang, for AVX2+FMA (and for
/// AVX-512 where an elementwise loop's lanes are independent), picked at run
/// time. A header-only library cannot count on its users' -march, and 8-wide
/// vectors are what keep the fused layer near the memory bandwidth (about 3.5×
/// the SSE2 loop; 16-wide ones take the in-cache layer about 1.3× further).
///
/// The AVX2 code is not a second copy of any loop: `isa_dispatch(f)` calls f
/// from a function compiled with `target("avx2,fma")` and `flatten`, into
/// which f and the loop in it are inlined and vectorized (in .cpp and .cu
/// files alike).

#include <fusekit/config.hpp>
#include <fusekit/detail/core/cpu_pool.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/reduce_types.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <type_traits>

#if defined(__linux__) && defined(__GLIBC__)
#include <sched.h>
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

/// The processors this process may run on (its affinity mask), counted once.
inline int cpu_processors() {
  static int const count = [] {
#if defined(__linux__) && defined(__GLIBC__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) { return CPU_COUNT(&set); }
#endif
    unsigned const n = std::thread::hardware_concurrency();
    return n > 0 ? static_cast<int>(n) : 1;
  }();
  return count;
}

/// The count `cpu{}` uses when none is set: FUSEKIT_NUM_THREADS, else
/// OMP_NUM_THREADS (its first number), else the processors; read once.
inline int cpu_environment_threads() {
  static int const count = [] {
    for (const char* name : {"FUSEKIT_NUM_THREADS", "OMP_NUM_THREADS"}) {
      const char* const text = std::getenv(name);
      if (text == nullptr) { continue; }
      char* end = nullptr;
      long const n = std::strtol(text, &end, 10);
      if (end != text && n > 0) { return n < 1L << 20 ? static_cast<int>(n) : 1 << 20; }
    }
    return cpu_processors();
  }();
  return count;
}

/// The process-wide count set by fusekit::set_default_threads (0: none set).
inline std::atomic<int>& cpu_default_threads_setting() {
  static std::atomic<int> count{0};
  return count;
}

/// The threads a CPU call uses: the default count for 0 (above), else
/// `threads` up to 4 per processor (more only adds contention). A negative
/// count is rejected, before anything runs.
inline int cpu_thread_count(const cpu& policy) {
  FUSEKIT_EXPECTS(policy.threads >= 0, "fusekit::cpu: threads is " + std::to_string(policy.threads) +
                                           "; it must be 0 (the default count) or a positive count");
  int threads = policy.threads;
  if (threads == 0) {
    int const set = cpu_default_threads_setting().load(std::memory_order_relaxed);
    threads = set > 0 ? set : cpu_environment_threads();
  }
  // At most 4 threads are never clamped (every machine has a processor).
  if (threads <= cpu_thread_limit_per_processor) { return threads; }
  static int const most = cpu_thread_limit_per_processor * cpu_processors();
  return threads < most ? threads : most;
}

/// How a CPU loop is cut and when helper threads join it. The chunks are a
/// function of the loop's size alone, so a result built from per-chunk parts
/// has the same bits for every thread count. `parallel_from` is the work (in
/// the loop's own unit, elements for the elementwise and sum loops) below
/// which a helper cannot arrive and finish a chunk before the caller is done
/// (docs/performance.md, "Under load"): such a loop runs on the caller.
struct cpu_loop {
  std::int64_t grain;          ///< items per chunk
  std::int64_t parallel_from;  ///< least work at which helpers are woken
};

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

/// Whether this CPU runs the AVX-512 code of isa_dispatch_wide (F, VL, BW and
/// DQ, with FMA).
inline bool cpu_has_avx512() {
#if FUSEKIT_CPU_DISPATCH
  static bool const has = cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512dq");
  return has;
#else
  return false;
#endif
}

#if FUSEKIT_CPU_DISPATCH
/// f() compiled for AVX-512 with FMA, inlined whole as call_avx2's f is.
template <class F>
__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"), flatten)) auto call_avx512(const F& f) {
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

/// f(), compiled for AVX-512 with FMA where this CPU has it, else as
/// isa_dispatch: for elementwise loops, whose lanes are independent. It
/// contracts the same products into FMAs as the AVX2+FMA code (the same
/// source, the same contraction), so it gives its bits in vectors twice as
/// wide (tests/elementwise/cpu_test.cpp compares them on every uint8 value;
/// under -ffast-math, which lets the compiler regroup by vector width, the
/// two keep the layer's bound, not each other's bits).
template <class F>
auto isa_dispatch_wide(const F& f) {
#if FUSEKIT_CPU_DISPATCH
  if (cpu_has_avx512()) { return call_avx512(f); }
#endif
  return isa_dispatch(f);
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

/// f(vector_bytes) with isa_dispatch_same_bits' code: compiled for AVX2
/// without FMA with vector_bytes 32 when this CPU has AVX2+FMA, else on the
/// baseline with the baseline's width (32 bytes where it has AVX, else 16):
/// code in host vectors of doubles takes its width from it, the same lanes
/// of the same operations either way.
template <class F>
auto isa_dispatch_same_bits_vectors(const F& f) {
#if FUSEKIT_CPU_DISPATCH
  if (cpu_has_avx2_fma()) {
    return call_avx2_without_fma([&]() FUSEKIT_LAMBDA_INLINE { return f(std::integral_constant<int, 32>{}); });
  }
#endif
#if defined(__AVX__)
  return f(std::integral_constant<int, 32>{});
#else
  return f(std::integral_constant<int, 16>{});
#endif
}

/// op called through a noexcept operator(): an exception from the caller's op
/// calls std::terminate wherever the op runs: on the calling thread, in an
/// helper thread or in a SIMD loop. One
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

/// body(chunk, begin, end) for every chunk of `split` (begin < end unless
/// the loop is empty), on the calling thread and on up to threads − 1 helpers
/// that are running, when `work` reaches `parallel_from` (detail/core/cpu_pool.hpp).
/// `threads` is a count cpu_thread_count gave.
template <class Body>
void cpu_for_chunks(int threads, const cpu_chunks& split, std::int64_t work, std::int64_t parallel_from,
                    const Body& body) {
  std::int64_t helpers = work >= parallel_from ? threads - 1 : 0;
  if (helpers > split.chunks - 1) { helpers = split.chunks - 1; }
  cpu_run_chunks(split, static_cast<int>(helpers), body);
}

/// As above, with the policy's thread count.
template <class Body>
void cpu_for_chunks(const cpu& policy, const cpu_chunks& split, std::int64_t work, std::int64_t parallel_from,
                    const Body& body) {
  cpu_for_chunks(cpu_thread_count(policy), split, work, parallel_from, body);
}

/// body(chunk, begin, end) over [0, count) cut by `loop`; its work is count.
template <class Body>
void cpu_for_chunks(const cpu& policy, std::int64_t count, const cpu_loop& loop, const Body& body) {
  cpu_for_chunks(policy, cpu_split(count, loop.grain), count, loop.parallel_from, body);
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
