// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The best-iterate rule on the CPU ("never worse than W = 0", gd_options):
/// what an output keeps as it iterates (`candidates`: its start and its best
/// iterate), the residual ‖y_n − X w‖² from X itself and its rounding, and the
/// two decisions made from them: `keep_best_iterate` after the iterations and
/// `keep_refinement_if_better` after a refinement. Over several processes the
/// residuals are summed by the caller's `sum`, so every process decides alike.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/team/cpu_team.hpp>
#include <fusekit/detail/train/best_iterate.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/train_types.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// Where an output started and its best iterate, kept for keep_best_iterate.
template <class C>
struct candidates {
  std::vector<C> start, best;
};

/// ‖y_n − X w‖² over this process's rows, in C, the sum in k order (w null: W = 0).
template <class C, class T, class U>
C rows_residual2(matrix<const T> X, matrix<const U> Y, std::int64_t n, const C* w) {
  return residual2_sum(serial_team{}, X.data_handle(), Y.data_handle(), X.extent(0), X.extent(1), Y.extent(1), n, w);
}

/// How far rounding can move ‖y_n − X w‖² as rows_residual2 computes it:
/// 2(L + 2)·u·Σ_k |r_k|·(|y_k| + Σ_l |x_kl w_l|), over this process's rows.
template <class C, class T, class U>
C residual2_rounding(matrix<const T> X, matrix<const U> Y, std::int64_t n, const C* w) {
  std::int64_t const L = X.extent(1);
  C const s =
      residual2_rounding_sum(serial_team{}, X.data_handle(), Y.data_handle(), X.extent(0), L, Y.extent(1), n, w);
  return s * static_cast<C>(residual2_rounding_factor<C>(L));
}

/// Never worse than the best iterate (gd_options, "W on every status"): an
/// output that did not converge ends at whichever of the best iterate seen
/// (smallest gradᵀgrad), the iterate reached, its start and W = 0 has the
/// smallest residual ‖y_n − X w‖², taken from X itself (summed over the
/// processes by `sum`); residuals within their rounding, 2(K + L)·u
/// relatively, are ties, which keep the earlier of that order (there the
/// smaller gradient is the finer measure).
template <class C, class T, class SumOverProcesses>
void keep_best_iterate(matrix<const T> X, matrix<const T> Y, matrix<C> W, std::vector<candidates<C>>& kept,
                       const fit_report& report, const SumOverProcesses& sum) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  std::vector<C> const zero(static_cast<std::size_t>(L), C(0));
  for (std::int64_t n = 0; n < N; ++n) {
    if (report.outputs[static_cast<std::size_t>(n)].status == fit_status::converged) { continue; }
    C* const w = W.data_handle() + n * L;
    const C* const choice[4] = {kept[n].best.data(), w, kept[n].start.data(), zero.data()};
    C r2[5];  // and K over every process, for the band: every process picks the same
    for (int c = 0; c < 4; ++c) { r2[c] = rows_residual2(X, Y, n, choice[c]); }
    r2[4] = static_cast<C>(X.extent(0));
    sum(r2, 5);
    int const pick = best_candidate(r2, static_cast<double>(r2[4]), L);
    if (pick >= 0 && pick != 1) { std::copy(choice[pick], choice[pick] + L, w); }
  }
}

/// The best-iterate rule's last word, after refinement (a correction is
/// accepted by its gradient in A's rounded system, which at the floor of a
/// nearly singular A can point far off): an output whose refinement changed
/// w keeps the refined w only if its residual ‖y_n − X w‖², from X, is no
/// larger than that of `before` (w before refinement) beyond the band of
/// keep_best_iterate and both residuals' rounding (residual2_rounding), where
/// the refined w wins; else it returns to `before` and its report to
/// `reported` (the report before refinement).
template <class C, class T, class SumOverProcesses>
void keep_refinement_if_better(matrix<const T> X, matrix<const T> Y, matrix<C> W, const std::vector<C>& before,
                               const std::vector<output_report>& reported, fit_report& report,
                               const SumOverProcesses& sum, int threads, std::int64_t parallel_from) {
  std::int64_t const N = W.extent(0), L = W.extent(1), K = X.extent(0);
  // Each changed output's four sums on this process's rows (rows_residual2
  // and residual2_rounding of w and of `before`), outputs side by side on the
  // pool: each sum is the serial one, so the bits do not depend on the
  // threads; then the sums over the processes, in output order.
  std::vector<C> terms(static_cast<std::size_t>(4 * N), C(0));
  std::vector<char> changed(static_cast<std::size_t>(N), 0);
  for (std::int64_t n = 0; n < N; ++n) {  // W is the same on every process: so is this test
    changed[static_cast<std::size_t>(n)] =
        std::equal(W.data_handle() + n * L, W.data_handle() + (n + 1) * L, before.data() + n * L) ? 0 : 1;
  }
  cpu_for_chunks(threads, cpu_split(N, 1), 4 * N * K * L, parallel_from,
                 [&](std::int64_t, std::int64_t first, std::int64_t last) {
                   for (std::int64_t n = first; n < last; ++n) {
                     if (changed[static_cast<std::size_t>(n)] == 0) { continue; }
                     const C* const w = W.data_handle() + n * L;
                     const C* const b = before.data() + n * L;
                     C* const t = terms.data() + 4 * n;
                     t[0] = rows_residual2(X, Y, n, w);
                     t[1] = rows_residual2(X, Y, n, b);
                     t[2] = residual2_rounding(X, Y, n, w);
                     t[3] = residual2_rounding(X, Y, n, b);
                   }
                 });
  for (std::int64_t n = 0; n < N; ++n) {
    if (changed[static_cast<std::size_t>(n)] == 0) { continue; }
    const C* const t = terms.data() + 4 * n;
    C r2[5] = {t[0], t[1], t[2], t[3], static_cast<C>(K)};
    sum(r2, 5);
    // Worse by more than the residuals' own rounding (large opposite weights
    // on dependent columns make that far larger than the band): the refined
    // w loses. Within it the refined w, the more accurate one, wins.
    if (!refinement_wins(r2[0], r2[1], r2[2], r2[3], static_cast<double>(r2[4]), L)) {
      const C* const b = before.data() + n * L;
      std::copy(b, b + L, W.data_handle() + n * L);
      report.outputs[static_cast<std::size_t>(n)] = reported[static_cast<std::size_t>(n)];
    }
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
