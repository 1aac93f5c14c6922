// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Sums per segment and per row, reproducible: each result has the bits of
/// the single deterministic sum over its own values.
///
///     std::vector<float> values = ...;
///     std::vector<std::int64_t> offsets = {0, 3, 3, 10};     // 3 segments: 3, 0 and 7 values
///     std::vector<float> out(3);
///     fusekit::segmented_sum(fusekit::cpu{}, values, offsets, out);
///     // out[s] == fusekit::sum(fusekit::cpu{}, span(values).subspan(offsets[s], offsets[s + 1] - offsets[s]))
///
///     fusekit::row_sums(fusekit::cpu{}, X, out);              // X: K × L row-major; out: K sums
///
/// **The promise.** out[s] is `sum(policy, segment s)` bit for bit (the
/// deterministic tree over that segment alone, detail/reduce/tree.hpp), on
/// any thread count; an empty segment gives +0. The error bound per segment is
/// the single sum's for its n_s values: |computed − exact| ≤ 40·L_s·u·S_s, L_s
/// = ⌈log_8192 n_s⌉ levels, S_s = Σ|x_i| over the segment, u = 2^-24 in float
/// and 2^-53 in double; integers into 64 bits are exact (wrapping on overflow).
///
/// **Accumulators**, as the single sum's: float for float, `__half` and
/// `__nv_bfloat16` (or double, by out's type); double for double; `int64_t`
/// for signed and `uint64_t` for unsigned integers.
///
/// **Backends.** `fusekit::cpu` (<fusekit/reduce.hpp>) and `fusekit::mpi`
/// (<fusekit/mpi.hpp>): rows sharded, each rank passes its own segments and
/// gets their sums, computed on its CPU policy with no communication, so each
/// has the bits above on any rank count. The GPU backend is not written yet:
/// a call with `fusekit::cuda` or `fusekit::nccl` is a compile error that
/// says so.
///
/// **How it runs on the CPU** (detail/reduce/cpu_segmented.hpp): a segment
/// of 2^17 values or more gets every thread, as the single sum does; the others
/// are cut into chunks of whole segments on the pool, one segment per thread;
/// float rows of up to 256 values go 16 side by side (8 in double), one row a
/// vector lane. None of this changes a bit: a segment's sum depends on its
/// values alone. docs/guide.md gives the measured times against NumPy.
///
/// **Python:** `fk.segmented_sum(values, offsets)` and `fk.sum(X, axis=1)`,
/// the same calls on NumPy arrays, with the same bits.
///
/// **Checks**, before anything is written: offsets (an integer type) are S + 1
/// values, the first ≥ 0, none decreasing, the last within `values`; out has
/// S elements and shares no byte with an input; views non-null and aligned.

#include <fusekit/config.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/core/ranges.hpp>
#include <fusekit/detail/reduce/checks.hpp>
#include <fusekit/detail/reduce/segments.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/reduce_types.hpp>

#include <cuda/std/mdspan>
#include <cuda/std/span>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace fusekit {

/// out[s] = Σ values[i] over offsets[s] ≤ i < offsets[s + 1], for s < S =
/// offsets.size() − 1 (see the file comment for the promise and the checks).
///
/// \param values  the values the segments lie in (host memory for fusekit::cpu)
/// \param offsets S + 1 integer offsets into values
/// \param out     S accumulators, sharing no byte with values or offsets
/// \throws fusekit::invalid_argument for offsets out of order or past the values, an out
///         of another size, or an overlap, before anything is written
template <class Policy, class T, class Offset, class Acc>
void segmented_sum(const Policy& policy, ::cuda::std::span<T> values, ::cuda::std::span<Offset> offsets,
                   ::cuda::std::span<Acc> out) {
  detail::check_accumulator<T, Acc>();
  detail::check_offset_type<Offset>();
  if constexpr (detail::segmented_usable<Policy>()) {
    const char* const function = "fusekit::segmented_sum";
    detail::named_range const in[] = {detail::describe("values", values), detail::describe("offsets", offsets)};
    detail::expect_not_null(function, in[0]);
    detail::expect_aligned(function, in[0]);
    std::int64_t const count = detail::check_host_offsets(function, offsets, static_cast<std::int64_t>(values.size()));
    detail::check_segment_out(function, out, count, in, 2);
    using U = std::remove_cv_t<T>;
    run_segmented(
        detail::segmented_tag{}, policy,
        detail::segmented_reduction<Acc, detail::array_source<Acc, U>,
                                    detail::offset_segments<std::remove_cv_t<Offset>>>{
            function, {values.data()}, {offsets.data()}, count, static_cast<std::int64_t>(values.size()), out.data()});
  }
}

/// out[r] = Σ_l X(r, l) for every row r of a row-major matrix X (fusekit::matrix,
/// or any rank-2 layout_right mdspan): `segmented_sum` over rows of X.extent(1) values.
///
/// \param X    K × L, row-major (host memory for fusekit::cpu); L = 0 gives +0 per row
/// \param out  K accumulators, sharing no byte with X
/// \throws fusekit::invalid_argument for a null or misaligned X, or an out of another
///         size or overlapping X, before anything is written
template <class Policy, class T, class Extents, class Acc>
void row_sums(const Policy& policy, ::cuda::std::mdspan<T, Extents, ::cuda::std::layout_right> X,
              ::cuda::std::span<Acc> out) {
  static_assert(Extents::rank() == 2, "fusekit::row_sums: X is a matrix (rank 2)");
  detail::check_accumulator<T, Acc>();
  if constexpr (detail::segmented_usable<Policy>()) {
    const char* const function = "fusekit::row_sums";
    auto const rows = static_cast<std::int64_t>(X.extent(0)), columns = static_cast<std::int64_t>(X.extent(1));
    detail::named_range const in[] = {
        {"X", reinterpret_cast<std::uintptr_t>(X.data_handle()), static_cast<std::size_t>(rows * columns), sizeof(T)}};
    detail::expect_not_null(function, in[0]);
    detail::expect_aligned(function, in[0]);
    detail::check_segment_out(function, out, rows, in, 1);
    using U = std::remove_cv_t<T>;
    run_segmented(detail::segmented_tag{}, policy,
                  detail::segmented_reduction<Acc, detail::array_source<Acc, U>, detail::row_segments>{
                      function, {X.data_handle()}, {columns}, rows, rows * columns, out.data()});
  }
}

/// out[s] = Σ op(ins[i]...) over segment s (offsets as in `segmented_sum`), in
/// one pass: the layer and its sums per segment without an intermediate
/// array. Acc: float, double, int64_t or uint64_t, as `transform_reduce_sum`.
///
/// \param out     S accumulators, sharing no byte with values or offsets
/// \throws fusekit::invalid_argument for offsets out of order or past the values, an out
///         of another size, or an overlap, before anything is written, sharing no byte with an input or the offsets
/// \param offsets S + 1 integer offsets into the inputs (checked as in `segmented_sum`)
/// \param op      called with one element of each input; must not throw
/// \param ins     1 to 4 views of one size
template <class Policy, class Acc, class Offset, class Op, class... Ins>
void transform_segmented_sum(const Policy& policy, ::cuda::std::span<Acc> out, ::cuda::std::span<Offset> offsets, Op op,
                             ::cuda::std::span<Ins>... ins) {
  detail::check_transform_accumulator<Acc>();
  detail::check_offset_type<Offset>();
  if constexpr (detail::segmented_usable<Policy>()) {
    const char* const function = "fusekit::transform_segmented_sum";
    detail::sum_views const v = detail::transform_reduce_inputs(ins...);
    std::int64_t const n = detail::check_sum_inputs(function, v);
    std::int64_t const count = detail::check_host_offsets(function, offsets, n);
    detail::named_range in[5];
    for (std::size_t k = 0; k < v.count; ++k) { in[k] = v.ranges[k]; }
    in[v.count] = detail::describe("offsets", offsets);
    detail::check_segment_out(function, out, count, in, v.count + 1);
    run_segmented(
        detail::segmented_tag{}, policy,
        detail::segmented_reduction<Acc, decltype(detail::make_transform_source<Acc>(op, ins...)),
                                    detail::offset_segments<std::remove_cv_t<Offset>>>{
            function, detail::make_transform_source<Acc>(op, ins...), {offsets.data()}, count, n, out.data()});
  }
}

/// out[r] = Σ_l op(X0(r, l), X1(r, l), ...) for every row r of 1 to 4 row-major
/// matrices of one shape, in one pass (see `transform_segmented_sum`).
///
/// \param out  K accumulators, sharing no byte with an input
/// \param op   called with one element of each matrix; must not throw
/// \param X    1 to 4 row-major K × L matrices (a different shape throws
///             fusekit::invalid_argument, naming both, before anything is written)
template <class Policy, class Acc, class Op, class... T, class... Extents>
void transform_row_sums(const Policy& policy, ::cuda::std::span<Acc> out, Op op,
                        ::cuda::std::mdspan<T, Extents, ::cuda::std::layout_right>... X) {
  static_assert(((Extents::rank() == 2) && ...), "fusekit::transform_row_sums: each X is a matrix (rank 2)");
  detail::check_transform_accumulator<Acc>();
  if constexpr (detail::segmented_usable<Policy>()) {
    const char* const function = "fusekit::transform_row_sums";
    auto const first = std::get<0>(std::forward_as_tuple(X...));
    auto const rows = static_cast<std::int64_t>(first.extent(0)), columns = static_cast<std::int64_t>(first.extent(1));
    FUSEKIT_EXPECTS(
        ((static_cast<std::int64_t>(X.extent(0)) == rows && static_cast<std::int64_t>(X.extent(1)) == columns) && ...),
        std::string(function) + ": the matrices have different shapes; they must all be " + std::to_string(rows) +
            " x " + std::to_string(columns));
    detail::sum_views const v = detail::transform_reduce_inputs(
        ::cuda::std::span<T>(X.data_handle(), static_cast<std::size_t>(rows * columns))...);
    detail::check_sum_inputs(function, v);
    detail::check_segment_out(function, out, rows, v.ranges, v.count);
    auto const src = detail::make_transform_source<Acc>(
        op, ::cuda::std::span<T>(X.data_handle(), static_cast<std::size_t>(rows * columns))...);
    run_segmented(detail::segmented_tag{}, policy,
                  detail::segmented_reduction<Acc, decltype(src), detail::row_segments>{
                      function, src, {columns}, rows, rows * columns, out.data()});
  }
}

/// The calls over containers as well as spans (std::vector, std::array, ...).
template <class Policy, class R, class OffsetR, class OutR,
          std::enable_if_t<detail::is_container_v<R> && detail::is_container_v<OffsetR> && detail::is_container_v<OutR>,
                           int> = 0>
void segmented_sum(const Policy& policy, R&& values, OffsetR&& offsets, OutR&& out) {
  if constexpr (detail::memory_usable<Policy, R, OffsetR, OutR>()) {
    segmented_sum(policy, detail::const_view_of(values), detail::const_view_of(offsets), detail::view_of(out));
  }
}

}  // namespace fusekit
