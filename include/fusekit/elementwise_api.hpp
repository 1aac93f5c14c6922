// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The elementwise layer, `transform`: out[i] = op(ins[i]...) for 1 to 4 inputs, in one pass.
/// This file holds the calls and their contracts, with no backend: include
/// <fusekit/elementwise.hpp> for `fusekit::cpu` (any C++17 compiler),
/// <fusekit/elementwise.cuh> for `fusekit::cuda` (nvcc), or both.
///
///     auto layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}, fusekit::tanh_activate{});
///     fusekit::transform(fusekit::cuda{stream}, out, layer, grey, weights);  // one kernel (fusekit.cuh)
///     fusekit::transform(fusekit::cpu{},        out, layer, grey, weights);  // threads + SIMD
///
/// * Views are `cuda::std::span` of caller memory: device memory for
///   `fusekit::cuda`, host memory for `fusekit::cpu`. Every input has out's size.
/// * `op` gets one element of each input, as stored (uint8_t, `__half`, ...); its
///   result is converted to out's element type (float, double, `__half` or
///   `__nv_bfloat16`) with round-to-nearest. On the GPU `op` must be callable on
///   the device (`FUSEKIT_HD` functors, `__device__` lambdas).
/// * In place: `out` may be the very view of an input of its element type.
///   Any other overlap is rejected, as are null views with elements and size
///   mismatches (`fusekit::invalid_argument`, before anything runs).
/// * `fusekit::cuda`: one kernel, asynchronous on the policy's stream, no
///   allocation and no synchronization, so it can be captured in a CUDA graph.
///   16-byte vector loads and stores when the pointers allow it, scalar head and
///   tail otherwise; 64-bit indices, so n may exceed 2^31.
///
/// `hidden_layer(policy, grey, w, out)` is the fused layer tanh((grey/255)·w);
/// `hidden_layer_unfused` runs the same functors as three passes (three kernels
/// on the GPU), the shape the fused layer replaces, kept for benchmarks.

#include <fusekit/config.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/elementwise/checks.hpp>
#include <fusekit/detail/core/ranges.hpp>
#include <fusekit/error.hpp>
#include <fusekit/functors.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>

namespace fusekit {

/// out[i] = op(ins[i]...) for every i, in one pass (see the file comment).
///
/// \param policy `fusekit::cpu{}` (host memory, synchronous) or `fusekit::cuda{stream}`
///               (device memory, one asynchronous kernel; include <fusekit/elementwise.cuh>)
/// \param out    float, double, `__half` or `__nv_bfloat16`; may be the very view of an
///               input of its element type (in place), else shares no byte with one
/// \param op     called with one element of each input, in order; a `fuse(...)` of
///               stages, a functor, or a lambda (`__host__ __device__` for both backends).
///               It must not throw: it runs on helper threads and in SIMD loops on the
///               CPU (kernels on the GPU), so a throw calls `std::terminate`, at every
///               size, as with `std::execution::par`
/// \param ins    1 to 4 views of out's size, of float, double, the half types or integers
/// \throws fusekit::invalid_argument for a null, misaligned, mis-sized or overlapping view,
///         before anything runs
template <class Policy, class Out, class Op, class... Ins>
void transform(const Policy& policy, ::cuda::std::span<Out> out, Op op, ::cuda::std::span<Ins>... ins) {
  if constexpr (detail::policy_usable<detail::transform_tag, Policy>()) {
    if constexpr (detail::transform_usable<Out, Op, Ins...>()) {
      run_transform(detail::transform_tag{}, policy, detail::transform_site, out, op, ins...);
    }
  }
}

/// `transform` over containers as well as spans: `std::vector`, `std::array`,
/// `thrust::host_vector`, `thrust::device_vector`, mixed with spans. A container
/// that holds the other kind of memory than the policy reads (a
/// `thrust::device_vector` with `fusekit::cpu`, a `std::vector` with
/// `fusekit::cuda`) is a compile error that says what to use.
///
///     std::vector<float> out(n);
///     fusekit::transform(fusekit::cpu{}, out, fusekit::make_hidden_layer(), grey, w);   // grey, w: std::vector
template <class Policy, class OutR, class Op, class... InR,
          std::enable_if_t<(detail::is_container_v<OutR> || (detail::is_container_v<InR> || ...)), int> = 0>
void transform(const Policy& policy, OutR&& out, Op op, InR&&... ins) {
  if constexpr (detail::memory_usable<Policy, OutR, InR...>()) {
    transform(policy, detail::view_of(out), op, detail::const_view_of(ins)...);
  }
}

/// The fused hidden layer: out[i] = tanh((grey[i] / scale) · w[i]), one pass
/// (within `tanh_float_max_ulp` + 1 ulp of the exact layer in float, without fast-math).
///
/// \param grey  greyscales: uint8_t, an integer type, float, double or a half type
/// \param w     weights, one per greyscale
/// \param out   the activations; in place over `w` is allowed when the types match
/// \param scale the greyscale's full range (255 for 8-bit images)
template <class Policy, class G, class W, class Out>
void hidden_layer(const Policy& policy, ::cuda::std::span<G> grey, ::cuda::std::span<W> w, ::cuda::std::span<Out> out,
                  float scale = 255.0f) {
  constexpr detail::call_site site{"fusekit::hidden_layer", {"out", "grey", "w", "", ""}};
  if constexpr (detail::policy_usable<detail::transform_tag, Policy>()) {
    run_transform(detail::transform_tag{}, policy, site, out, make_hidden_layer(scale), grey, w);
  }
}

/// `hidden_layer` over containers as well as spans (see the container `transform`).
template <
    class Policy, class GR, class WR, class OutR,
    std::enable_if_t<detail::is_container_v<GR> || detail::is_container_v<WR> || detail::is_container_v<OutR>, int> = 0>
void hidden_layer(const Policy& policy, GR&& grey, WR&& w, OutR&& out, float scale = 255.0f) {
  if constexpr (detail::memory_usable<Policy, GR, WR, OutR>()) {
    hidden_layer(policy, detail::const_view_of(grey), detail::const_view_of(w), detail::view_of(out), scale);
  }
}

/// The same layer as three passes: out = grey/scale; out = out·w; out = tanh(out).
/// Reads and writes device memory three times; for comparison only (the
/// benchmarks' baseline). Same parameters as `hidden_layer`, but `out` must not
/// overlap `grey` or `w`. Gives the fused layer's bits unless the compiler
/// contracts differently (fast-math).
template <class Policy, class G, class W, class Out>
void hidden_layer_unfused(const Policy& policy, ::cuda::std::span<G> grey, ::cuda::std::span<W> w,
                          ::cuda::std::span<Out> out, float scale = 255.0f) {
  constexpr detail::call_site site{"fusekit::hidden_layer_unfused", {"out", "grey", "w", "out", ""}};
  if constexpr (detail::policy_usable<detail::transform_tag, Policy>()) {
    detail::check_transform<Out, weigh>(site, out, grey, w);
    detail::expect_apart(site.function, {detail::describe("out", out)},
                         {detail::describe("grey", grey), detail::describe("w", w)});
    ::cuda::std::span<const Out> const running(out.data(), out.size());
    run_transform(detail::transform_tag{}, policy, site, out, normalize<float>{scale}, grey);
    run_transform(detail::transform_tag{}, policy, site, out, weigh{}, running, w);
    run_transform(detail::transform_tag{}, policy, site, out, tanh_activate{}, running);
  }
}

/// `hidden_layer_unfused` over containers as well as spans (see the container `transform`).
template <
    class Policy, class GR, class WR, class OutR,
    std::enable_if_t<detail::is_container_v<GR> || detail::is_container_v<WR> || detail::is_container_v<OutR>, int> = 0>
void hidden_layer_unfused(const Policy& policy, GR&& grey, WR&& w, OutR&& out, float scale = 255.0f) {
  if constexpr (detail::memory_usable<Policy, GR, WR, OutR>()) {
    hidden_layer_unfused(policy, detail::const_view_of(grey), detail::const_view_of(w), detail::view_of(out), scale);
  }
}

}  // namespace fusekit
