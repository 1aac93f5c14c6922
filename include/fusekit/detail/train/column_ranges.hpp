// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The ranges of X's and Y's columns that the data's preparation reads
/// (detail/train/prepare.hpp: whether a column is in extreme units, whether it
/// is constant): every column's largest x, −x and |y|. One element's value
/// on every backend (column_range_value); the CPU takes the rows in order
/// (column_ranges), the GPU a slice of rows per thread (column_range_thread,
/// the body of detail/train/cuda_prepare.cuh's kernel). Maxima are exact, so
/// both give the same ranges.

#include <fusekit/config.hpp>
#include <fusekit/train_types.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// The value whose maximum over X's rows column_exponents reads for a
/// column of X (x, for the largest), its negation (−x, for the smallest), or
/// a column of Y (|y|).
struct range_of {
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE static double x(T v) {
    return static_cast<double>(v);
  }
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE static double minus_x(T v) {
    return -static_cast<double>(v);
  }
  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE static double abs_y(T v) {
    double const y = static_cast<double>(v);
    return y < 0 ? -y : y;
  }
};

/// One value of range column c of 2L + N at row k: range_of::x of x_kl
/// (c = l < L), range_of::minus_x of x_kl (c = L + l), then range_of::abs_y
/// of y_kn (c = 2L + n). Maxima are exact, so the order of the rows does not
/// matter: the CPU takes them row by row (column_ranges), the GPU a slice of
/// rows per thread (column_range_slice, detail/train/cuda_prepare.cuh).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE double column_range_value(const T* X, const T* Y, std::int64_t L, std::int64_t N,
                                                         std::int64_t k, std::int64_t c) {
  if (c < L) { return range_of::x(X[k * L + c]); }
  if (c < 2 * L) { return range_of::minus_x(X[k * L + c - L]); }
  return range_of::abs_y(Y[k * N + c - 2 * L]);
}

/// The largest column_range_value of column c over rows [slice·rows, (slice + 1)·rows)
/// of K (−HUGE_VAL for none): one thread of the GPU's range kernel.
template <class T>
FUSEKIT_HD double column_range_slice(const T* X, const T* Y, std::int64_t K, std::int64_t L, std::int64_t N,
                                     std::int64_t rows, std::int64_t slice, std::int64_t c) {
  double r = -HUGE_VAL;
  std::int64_t const last = (slice + 1) * rows < K ? (slice + 1) * rows : K;
  for (std::int64_t k = slice * rows; k < last; ++k) {
    double const v = column_range_value(X, Y, L, N, k, c);
    r = v > r ? v : r;
  }
  return r;
}

/// Threads of a block of the GPU's range kernel: one per range column.
inline constexpr int column_range_threads = 256;

/// Rows per slice of the GPU's range kernel for K rows and C range columns:
/// at least 64 rows a thread, and at most 2^20 partial values in all.
inline std::int64_t column_range_rows(std::int64_t K, std::int64_t C) {
  std::int64_t const most_slices = std::max<std::int64_t>(1, (std::int64_t{1} << 20) / C);
  return std::max<std::int64_t>((K + most_slices - 1) / most_slices, 64);
}

/// Thread `thread` of block `block` of the GPU's range kernel: range columns
/// [(block mod column_blocks)·256, +256) over slice block / column_blocks of
/// `rows` rows, into partial[slice·(2L + N) + c].
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE void column_range_thread(const T* X, const T* Y, std::int64_t K, std::int64_t L,
                                                        std::int64_t N, std::int64_t rows, std::int64_t column_blocks,
                                                        std::int64_t block, std::int64_t thread, double* partial) {
  std::int64_t const C = 2 * L + N;
  std::int64_t const slice = block / column_blocks;
  std::int64_t const c = block % column_blocks * column_range_threads + thread;
  if (c < C) { partial[slice * C + c] = column_range_slice(X, Y, K, L, N, rows, slice, c); }
}

/// The ranges from the range kernel's `slices` × C partial values: each column's largest.
inline std::vector<double> merge_column_ranges(const std::vector<double>& partial, std::int64_t slices,
                                               std::int64_t C) {
  std::vector<double> range(static_cast<std::size_t>(C), -HUGE_VAL);
  for (std::int64_t s = 0; s < slices; ++s) {
    for (std::int64_t c = 0; c < C; ++c) {
      double const v = partial[s * C + c];
      range[c] = v > range[c] ? v : range[c];
    }
  }
  return range;
}

/// Every range column_exponents reads (2L + N values, see
/// column_range_value) over this process's rows, row by row.
template <class T>
std::vector<double> column_ranges(matrix<const T> X, matrix<const T> Y) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  std::vector<double> range(static_cast<std::size_t>(2 * L + N), -HUGE_VAL);
  auto const take = [&](std::int64_t c, double v) { range[c] = v > range[c] ? v : range[c]; };
  for (std::int64_t k = 0; k < K; ++k) {  // column_range_value's three parts, each over its columns
    for (std::int64_t l = 0; l < L; ++l) {
      take(l, range_of::x(X(k, l)));
      take(L + l, range_of::minus_x(X(k, l)));
    }
    for (std::int64_t n = 0; n < N; ++n) { take(2 * L + n, range_of::abs_y(Y(k, n))); }
  }
  return range;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
