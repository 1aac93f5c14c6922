// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `predict`'s one algorithm, on every backend: Y_hat[k, n] = Σ_l X[k, l]·W[n, l]
/// with l in order (predict_at), then + b[n] where intercepts are given
/// (plus_intercept); the GPU runs it over rows of X staged in shared memory
/// by a thread block (predict_rows_body), the CPU row by row.

#include <fusekit/config.hpp>
#include <fusekit/detail/team/team.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// Σ_l x[l]·w[l] for l = 0, ..., L − 1 in order.
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T dot_in_order(const T* x, const T* w, std::int64_t L) {
  T s = T(0);
  for (std::int64_t l = 0; l < L; ++l) { s = s + x[l] * w[l]; }
  return s;
}

/// Y_hat[k, n] = Σ_l X[k, l]·W[n, l], l in order: one element of `predict`, on every backend.
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T predict_at(const T* X, const T* W, std::int64_t L, std::int64_t k, std::int64_t n) {
  return dot_in_order(X + k * L, W + n * L, L);
}

/// v + b[n], or v where there are no intercepts (b null: -0 stays -0).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T plus_intercept(T v, const T* b, std::int64_t n) {
  return b == nullptr ? v : v + b[n];
}

/// Values of X's rows a predict tile holds apart: L + 1, so that the members
/// reading rows r, r + 1, ... at one column meet different shared-memory banks.
FUSEKIT_HD constexpr std::int64_t predict_tile_stride(std::int64_t L) { return L + 1; }

/// Rows k0, ..., k0 + rows − 1 of `predict` by a team: the rows of X (one
/// contiguous range) are first copied into `x_tile` (rows · (L + 1) values,
/// row r at r · (L + 1)) in consecutive addresses, then each element is the
/// dot product over the copy, and Y_hat's rows (again one range) are written
/// in consecutive addresses. The same arithmetic in the same order as
/// predict_at over X, and plus_intercept (b null: none): the same bits.
template <class T, class Team>
FUSEKIT_HD void predict_rows_body(const Team& team, std::int64_t k0, std::int64_t rows, const T* X, const T* W,
                                  const T* b, T* Y_hat, std::int64_t L, std::int64_t N, T* x_tile) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  const T* const x = X + k0 * L;
  std::int64_t const stride = predict_tile_stride(L);
  team.for_each(rows * L, [&](std::int64_t i) { x_tile[i / L * stride + i % L] = x[i]; });
  team.sync();
  T* const y = Y_hat + k0 * N;
  team.for_each(rows * N, [&](std::int64_t e) {
    y[e] = plus_intercept(dot_in_order(x_tile + e / N * stride, W + e % N * L, L), b, e % N);
  });
  team.sync();  // the tile serves the next rows
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
