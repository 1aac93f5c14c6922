// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The kernel body, the per-thread work of the fused elementwise kernel, written as a
/// `FUSEKIT_HD` function of (thread index, thread count) so that host tests can
/// run it for every thread index of a launch and check that each element is
/// written exactly once.
///
/// Layout of the work, for n elements:
///
///     [0, head)                      scalar head, until every array is 16-byte aligned
///     [head, head + vectors·W)       W elements per step: 16-byte loads and stores
///     [head + vectors·W, n)          scalar tail
///
/// W is 16 bytes' worth of the smallest element type (16 for uint8_t, 4 for
/// float), so the smallest type moves in one 16-byte access and wider types in
/// several. Indices are 64-bit throughout.

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <cuda/std/tuple>

#if defined(__CUDACC__)
#include <vector_types.h>
#endif

namespace fusekit {
namespace detail {
inline namespace elementwise {

inline constexpr std::size_t vector_bytes = 16;

template <class... Ts>
constexpr std::size_t smallest_size() {
  std::size_t s = 16;
  ((s = sizeof(Ts) < s ? sizeof(Ts) : s), ...);
  return s;
}

/// Elements per vector step for these element types.
template <class Out, class... Ins>
inline constexpr std::int64_t vector_width_v = static_cast<std::int64_t>(vector_bytes / smallest_size<Out, Ins...>());

/// How n elements split into scalar head, vector steps and scalar tail.
struct elementwise_plan {
  std::int64_t n = 0;
  std::int64_t head = 0;     ///< scalar elements before the first vector
  std::int64_t vectors = 0;  ///< vector steps of W elements
  std::int64_t width = 1;    ///< W

  [[nodiscard]] FUSEKIT_HD std::int64_t tail_begin() const { return head + vectors * width; }
  /// Elements handled one at a time (head + tail).
  [[nodiscard]] FUSEKIT_HD std::int64_t scalars() const { return head + (n - tail_begin()); }
  /// Work items for a grid: the larger of the two loops.
  [[nodiscard]] FUSEKIT_HD std::int64_t items() const { return vectors > scalars() ? vectors : scalars(); }
};

/// Plans n elements over arrays at `addresses` with element sizes `sizes`. The
/// vector loop needs an offset h < W after which every array is 16-byte
/// aligned; without one (e.g. a float at an odd address) all work is scalar.
template <std::size_t K>
elementwise_plan make_elementwise_plan(std::int64_t n, std::int64_t width, const std::uintptr_t (&addresses)[K],
                                       const std::size_t (&sizes)[K]) {
  elementwise_plan p;
  p.n = n;
  p.width = width;
  p.head = n;
  for (std::int64_t h = 0; h < width && h < n; ++h) {
    bool aligned = true;
    for (std::size_t k = 0; k < K; ++k) {
      aligned = aligned && (addresses[k] + static_cast<std::uintptr_t>(h) * sizes[k]) % vector_bytes == 0;
    }
    if (aligned) {
      p.head = h;
      p.vectors = (n - h) / width;
      break;
    }
  }
  return p;
}

template <class T, class... Ins>
elementwise_plan plan_for(std::int64_t n, T* out, const Ins*... ins) {
  constexpr std::size_t k = 1 + sizeof...(Ins);
  std::uintptr_t const addresses[k] = {reinterpret_cast<std::uintptr_t>(out), reinterpret_cast<std::uintptr_t>(ins)...};
  std::size_t const sizes[k] = {sizeof(T), sizeof(Ins)...};
  return make_elementwise_plan(n, vector_width_v<T, Ins...>, addresses, sizes);
}

/// W elements held in registers.
template <class T, std::int64_t W>
struct vec {
  T v[W];
};

/// W elements at p (16-byte aligned on the device): 16-byte loads on the device,
/// element copies on the host.
template <std::int64_t W, class T>
FUSEKIT_HD inline vec<std::remove_cv_t<T>, W> load_vector(const T* p) {
  vec<std::remove_cv_t<T>, W> r;
#if FUSEKIT_DEVICE_PASS
  constexpr std::size_t chunks = W * sizeof(T) / vector_bytes;
  static_assert(chunks * vector_bytes == W * sizeof(T), "a vector step is a whole number of 16-byte chunks");
  const uint4* q = reinterpret_cast<const uint4*>(p);
  uint4 c[chunks];
#pragma unroll
  for (std::size_t i = 0; i < chunks; ++i) { c[i] = q[i]; }
  std::memcpy(&r, c, sizeof(c));
#else
  for (std::int64_t i = 0; i < W; ++i) { r.v[i] = p[i]; }
#endif
  return r;
}

template <std::int64_t W, class T>
FUSEKIT_HD inline void store_vector(T* p, const vec<T, W>& r) {
#if FUSEKIT_DEVICE_PASS
  constexpr std::size_t chunks = W * sizeof(T) / vector_bytes;
  uint4 c[chunks];
  std::memcpy(c, &r, sizeof(c));
  uint4* q = reinterpret_cast<uint4*>(p);
#pragma unroll
  for (std::size_t i = 0; i < chunks; ++i) { q[i] = c[i]; }
#else
  for (std::int64_t i = 0; i < W; ++i) { p[i] = r.v[i]; }
#endif
}

/// out[i] = op(ins[i]...), converted to Out.
template <class Out, class Op, class... Ins>
FUSEKIT_HD inline void apply_scalar(std::int64_t i, const Op& op, Out* out, const Ins*... ins) {
  out[i] = convert<Out>(op(ins[i]...));
}

template <std::int64_t W, class Out, class Op, class... Ins, std::size_t... I>
FUSEKIT_HD inline void apply_vector(std::index_sequence<I...>, std::int64_t base, const Op& op, Out* out,
                                    const Ins*... ins) {
  ::cuda::std::tuple<vec<std::remove_cv_t<Ins>, W>...> const in(load_vector<W>(ins + base)...);
  vec<Out, W> r;
#if FUSEKIT_DEVICE_PASS
#pragma unroll
#endif
  for (std::int64_t j = 0; j < W; ++j) { r.v[j] = convert<Out>(op(::cuda::std::get<I>(in).v[j]...)); }
  store_vector<W>(out + base, r);
}

/// The work of thread `thread` out of `threads`: grid-stride over the vector
/// steps, then over the scalar head and tail.
template <class Out, class Op, class... Ins>
FUSEKIT_HD inline void elementwise_thread(std::int64_t thread, std::int64_t threads, const elementwise_plan& p,
                                          const Op& op, Out* out, const Ins*... ins) {
  constexpr std::int64_t W = vector_width_v<Out, Ins...>;
  for (std::int64_t v = thread; v < p.vectors; v += threads) {
    apply_vector<W>(std::index_sequence_for<Ins...>{}, p.head + v * W, op, out, ins...);
  }
  std::int64_t const tail_begin = p.tail_begin();
  std::int64_t const scalars = p.scalars();
  for (std::int64_t s = thread; s < scalars; s += threads) {
    apply_scalar(s < p.head ? s : tail_begin + (s - p.head), op, out, ins...);
  }
}

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
