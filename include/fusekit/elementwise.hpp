// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `transform`: out[i] = op(ins[i]...) for 1 to 4 inputs, in one pass.
///
///     auto layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}, fusekit::tanh_activate{});
///     fusekit::transform(fusekit::cuda{stream}, out, layer, grey, weights);  // one kernel (fusekit.cuh)
///     fusekit::transform(fusekit::cpu{},        out, layer, grey, weights);  // OpenMP + SIMD
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
#include <fusekit/cpu/elementwise.hpp>
#include <fusekit/detail/numeric.hpp>
#include <fusekit/detail/validate.hpp>
#include <fusekit/error.hpp>
#include <fusekit/functors.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {

/// Who is calling and what its views are called, for error messages.
struct call_site {
  const char* function;
  const char* names[5];  ///< out, then the inputs
};

template <class T>
inline constexpr bool is_output_element_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || is_half_type_v<T>;

/// nvcc's extended `__device__` lambdas: callable on the device only, so the
/// host cannot check their signature.
#if defined(__CUDACC_EXTENDED_LAMBDA__)
template <class Op>
inline constexpr bool is_device_lambda_v = __nv_is_extended_device_lambda_closure_type(Op);
#else
template <class Op>
inline constexpr bool is_device_lambda_v = false;
#endif

template <class Out, class Op, class... Ins>
void check_transform(const call_site& site, ::cuda::std::span<Out> out, ::cuda::std::span<Ins>... ins) {
  static_assert(sizeof...(Ins) >= 1 && sizeof...(Ins) <= 4, "fusekit::transform takes 1 to 4 inputs");
  static_assert(!std::is_const_v<Out>, "fusekit::transform: out must be a view of writable memory");
  static_assert(is_output_element_v<Out>,
                "fusekit::transform writes float, double, __half or __nv_bfloat16; convert integer results "
                "yourself");
  static_assert((is_supported_element_v<Ins> && ...),
                "fusekit::transform: unsupported input element type. Use float, double, __half, "
                "__nv_bfloat16 or an integer type");
  static_assert(is_device_lambda_v<Op> || std::is_invocable_v<const Op&, Ins&...>,
                "fusekit::transform: op must be callable with one element of each input, in order");
  named_range const o = describe(site.names[0], out);
  expect_not_null(site.function, o);
  expect_aligned(site.function, o);
  std::size_t k = 1;
  named_range const in_ranges[] = {describe(site.names[k++], ins)...};
  for (const auto& in : in_ranges) {
    expect_not_null(site.function, in);
    expect_aligned(site.function, in);
    expect_same_size(site.function, in, o);
    expect_in_place_or_disjoint(site.function, o, in);
  }
}

template <class Out, class Op, class... Ins>
void run_transform(const call_site& site, const cpu& policy, ::cuda::std::span<Out> out, const Op& op,
                   ::cuda::std::span<Ins>... ins) {
  static_assert(!is_device_lambda_v<Op>,
                "fusekit::transform: a __device__ lambda cannot run on the CPU; make it __host__ __device__");
  check_transform<Out, Op>(site, out, ins...);
  cpu_transform(policy, static_cast<std::int64_t>(out.size()), op, out.data(), ins.data()...);
}

inline constexpr call_site transform_site{"fusekit::transform", {"out", "ins[0]", "ins[1]", "ins[2]", "ins[3]"}};

}  // namespace detail

/// out[i] = op(ins[i]...) for every i, in one pass (see the file comment).
template <class Policy, class Out, class Op, class... Ins>
void transform(const Policy& policy, ::cuda::std::span<Out> out, Op op, ::cuda::std::span<Ins>... ins) {
  run_transform(detail::transform_site, policy, out, op, ins...);
}

/// The fused hidden layer: out[i] = tanh((grey[i] / scale) · w[i]), one pass.
template <class Policy, class G, class W, class Out>
void hidden_layer(const Policy& policy, ::cuda::std::span<G> grey, ::cuda::std::span<W> w, ::cuda::std::span<Out> out,
                  float scale = 255.0f) {
  constexpr detail::call_site site{"fusekit::hidden_layer", {"out", "grey", "w", "", ""}};
  run_transform(site, policy, out, make_hidden_layer(scale), grey, w);
}

/// The same layer as three passes: out = grey/scale; out = out·w; out = tanh(out).
/// Reads and writes device memory three times; for comparison only. `out` must
/// not overlap `grey` or `w`.
template <class Policy, class G, class W, class Out>
void hidden_layer_unfused(const Policy& policy, ::cuda::std::span<G> grey, ::cuda::std::span<W> w,
                          ::cuda::std::span<Out> out, float scale = 255.0f) {
  constexpr detail::call_site site{"fusekit::hidden_layer_unfused", {"out", "grey", "w", "out", ""}};
  detail::check_transform<Out, weigh>(site, out, grey, w);
  detail::expect_disjoint(site.function, detail::describe("out", out), detail::describe("grey", grey));
  detail::expect_disjoint(site.function, detail::describe("out", out), detail::describe("w", w));
  ::cuda::std::span<const Out> const running(out.data(), out.size());
  run_transform(site, policy, out, normalize<float>{scale}, grey);
  run_transform(site, policy, out, weigh{}, running, w);
  run_transform(site, policy, out, tanh_activate{}, running);
}

}  // namespace fusekit
