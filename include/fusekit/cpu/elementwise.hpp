// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of `transform`: one OpenMP `parallel for simd` loop. The
/// functors are branch-free, so gcc vectorizes the whole fused op (tanh
/// included) without -ffast-math.
///
/// On x86-64 with gcc or clang the loop is compiled twice, for the baseline ISA
/// and for AVX2+FMA, and the second runs when the CPU has them: a header-only
/// library cannot count on its users' -march, and 8-wide vectors are what keep
/// the fused layer near the memory bandwidth (about 3.5× the SSE2 loop).

#include <fusekit/config.hpp>
#include <fusekit/detail/numeric.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#include <cstdint>
#include <string>

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

#if FUSEKIT_HAS_OPENMP
#define FUSEKIT_OMP_PARALLEL_FOR_SIMD(threads, n) \
  _Pragma("omp parallel for simd num_threads(threads) schedule(static) if (n >= ::fusekit::detail::cpu_parallel_threshold)")
#else
#define FUSEKIT_OMP_PARALLEL_FOR_SIMD(threads, n)
#endif

namespace fusekit {
namespace detail {

/// `cpu{threads}` above this many threads per processor is clamped to it.
inline constexpr int cpu_thread_limit_per_processor = 4;

/// Below this many elements a loop runs on the calling thread: starting a
/// thread team costs more than the work.
inline constexpr std::int64_t cpu_parallel_threshold = 1 << 15;

/// The threads a CPU call uses: OpenMP's default for 0, else `threads` up to 4
/// per processor (more only adds contention, and a huge team exhausts memory:
/// `cpu{INT_MAX}` used to end the process). A negative count is rejected.
inline int cpu_thread_count(const cpu& policy) {
  FUSEKIT_EXPECTS(policy.threads >= 0, "fusekit::cpu: threads is " + std::to_string(policy.threads) +
                                           "; it must be 0 (OpenMP's default) or a positive count");
#if FUSEKIT_HAS_OPENMP
  if (policy.threads == 0) { return omp_get_max_threads(); }
  int const most = cpu_thread_limit_per_processor * omp_get_num_procs();
  return policy.threads < most ? policy.threads : most;
#else
  return 1;
#endif
}

/// Whether this CPU runs the AVX2+FMA clones.
inline bool cpu_has_avx2_fma() {
#if FUSEKIT_CPU_DISPATCH
  static bool const has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

template <class Out, class Op, class... Ins>
void cpu_transform_loop(int threads, std::int64_t n, const Op& op, Out* out, const Ins*... ins) {
  (void)threads;
  FUSEKIT_OMP_PARALLEL_FOR_SIMD(threads, n)
  for (std::int64_t i = 0; i < n; ++i) { out[i] = convert<Out>(op(ins[i]...)); }
}

#if FUSEKIT_CPU_DISPATCH
template <class Out, class Op, class... Ins>
FUSEKIT_TARGET_AVX2 void cpu_transform_loop_avx2(int threads, std::int64_t n, const Op& op, Out* out,
                                                 const Ins*... ins) {
  (void)threads;
  FUSEKIT_OMP_PARALLEL_FOR_SIMD(threads, n)
  for (std::int64_t i = 0; i < n; ++i) { out[i] = convert<Out>(op(ins[i]...)); }
}
#endif

template <class Out, class Op, class... Ins>
void cpu_transform(const cpu& policy, std::int64_t n, const Op& op, Out* out, const Ins*... ins) {
  int const threads = cpu_thread_count(policy);
#if FUSEKIT_CPU_DISPATCH
  if (cpu_has_avx2_fma()) {
    cpu_transform_loop_avx2(threads, n, op, out, ins...);
    return;
  }
#endif
  cpu_transform_loop(threads, n, op, out, ins...);
}

}  // namespace detail
}  // namespace fusekit
