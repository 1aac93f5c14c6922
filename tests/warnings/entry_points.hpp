// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every public entry point, instantiated for a policy: compiled with
// -Wall -Wextra -Wconversion and warnings as errors (ctest: warnings.*).
#include <fusekit/fusekit.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fusekit::test {

template <class Policy, class T>
void train_entry_points(const Policy& policy, T* x, T* y, T* w) {
  fusekit::gd_options o;
  (void)fusekit::fit(policy, fusekit::matrix<const T>(x, 4, 2), fusekit::matrix<const T>(y, 4, 3),
                     fusekit::matrix<T>(w, 3, 2), o);
  fusekit::predict(policy, fusekit::matrix<const T>(x, 4, 2), fusekit::matrix<const T>(w, 3, 2),
                   fusekit::matrix<T>(y, 4, 3));
  if constexpr (std::is_same_v<Policy, fusekit::cpu>) {  // ridge, an intercept and sample weights: the CPU's
    T weights[4] = {T(1), T(2), T(1), T(0.5)};
    T intercept[3] = {};
    fusekit::gd_options r = fusekit::gd_options::recommended();
    r.fit_intercept = true;
    r.ridge = 0.5;
    (void)fusekit::fit(
        policy, fusekit::matrix<const T>(x, 4, 2), fusekit::matrix<const T>(y, 4, 3), fusekit::matrix<T>(w, 3, 2), r,
        fusekit::fit_extras<T>{::cuda::std::span<const T>(weights, 4), ::cuda::std::span<T>(intercept, 3)});
    fusekit::predict(policy, fusekit::matrix<const T>(x, 4, 2), fusekit::matrix<const T>(w, 3, 2), intercept,
                     fusekit::matrix<T>(y, 4, 3));
  }
}

template <class Policy>
void entry_points(const Policy& policy, float* f, double* d, std::uint8_t* u8, __half* h, std::int32_t* i32,
                  std::size_t n) {
  using ::cuda::std::span;
  span<const float> const cf(f, n);
  span<const double> const cd(d, n);
  span<const std::uint8_t> const cu8(u8, n);
  span<const __half> const ch(h, n);
  span<const std::int32_t> const ci(i32, n);
  span<float> const out(f + n, n);
  span<double> const dout(d + n, n);

  fusekit::transform(policy, out, fusekit::tanh_activate{}, cf);
  fusekit::transform(policy, dout, fusekit::weigh{}, cd, cf);
  fusekit::transform(policy, out, fusekit::make_hidden_layer(), cu8, cf);
  fusekit::transform(policy, out, fusekit::fuse(fusekit::weigh{}, fusekit::weigh{}, fusekit::fast_tanh_activate{}), ch,
                     cf, ci);
  fusekit::transform(
      policy, out,
      fusekit::fuse(fusekit::sigmoid{}, fusekit::silu{}, fusekit::softplus{}, fusekit::gelu_tanh{}, fusekit::relu{}),
      cf);
  fusekit::transform(policy, dout, fusekit::fuse(fusekit::leaky_relu{0.01}, fusekit::gelu_tanh{}, fusekit::gelu_erf{}),
                     cd);
  fusekit::transform(policy, out, fusekit::gelu_erf{}, cf);
  fusekit::hidden_layer(policy, cu8, cf, out);
  fusekit::hidden_layer_unfused(policy, cu8, cf, out);

  for (auto a : {fusekit::reduce_algorithm::naive_atomic, fusekit::reduce_algorithm::block_atomic,
                 fusekit::reduce_algorithm::run_to_run, fusekit::reduce_algorithm::deterministic}) {
    fusekit::reduce_sum(policy, cf, f + 2 * n, a);
    fusekit::reduce_sum(policy, cf, d + 2 * n, a);
    fusekit::reduce_sum(policy, ci, reinterpret_cast<std::int64_t*>(d + 2 * n), a);
    (void)fusekit::sum(policy, ch, a);
    (void)fusekit::sum(policy, cu8, a);
    (void)fusekit::sum(policy, cf, a, fusekit::accumulate_in<double>{});
    fusekit::transform_reduce_sum(policy, d + 2 * n, a, fusekit::weigh{}, cd, cf);
    (void)fusekit::transform_reduce(policy, a, fusekit::accumulate_in<double>{}, fusekit::make_hidden_layer(), cu8, cf);
    fusekit::reduce(policy, cf, f + 2 * n, fusekit::plus{}, 0.0f, a);
    fusekit::reduce(policy, ci, i32 + 2 * n, fusekit::minimum{}, std::int32_t{0}, a);
    fusekit::reduce(policy, ci, reinterpret_cast<std::int64_t*>(d + 2 * n), fusekit::maximum{}, std::int64_t{0}, a);
  }
  fusekit::reduce(policy, cd, d + 2 * n, fusekit::minimum{}, 0.0, fusekit::reduce_algorithm::run_to_run);
  (void)fusekit::transform_reduce(policy, fusekit::weigh{}, cf, cf);
  if constexpr (std::is_same_v<Policy, fusekit::cpu>) {  // the sums per segment and per row: the CPU's so far
    span<const std::int32_t> const offsets(i32, 3);
    std::size_t const rows = n / 4;
    fusekit::segmented_sum(policy, cf, offsets, span<float>(f + 2 * n, 2));
    fusekit::segmented_sum(policy, ch, offsets, span<double>(d + 2 * n, 2));
    fusekit::segmented_sum(policy, cu8, offsets, span<std::uint64_t>(reinterpret_cast<std::uint64_t*>(d + 2 * n), 2));
    fusekit::row_sums(policy, fusekit::matrix<const float>(f, static_cast<std::int64_t>(rows), 4),
                      span<float>(f + 2 * n, rows));
    fusekit::transform_segmented_sum(policy, span<double>(d + 2 * n, 2), offsets, fusekit::weigh{}, cd, cf);
    fusekit::transform_row_sums(policy, span<float>(f + 2 * n, rows), fusekit::weigh{},
                                fusekit::matrix<const float>(f, static_cast<std::int64_t>(rows), 4),
                                fusekit::matrix<const float>(f, static_cast<std::int64_t>(rows), 4));
  }
  train_entry_points(policy, f, f + 8, f + 20);
  train_entry_points(policy, d, d + 8, d + 20);
}

}  // namespace fusekit::test
