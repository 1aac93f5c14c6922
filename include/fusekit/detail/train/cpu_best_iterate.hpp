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
#include <fusekit/detail/team/cpu_simd.hpp>
#include <fusekit/detail/team/cpu_team.hpp>
#include <fusekit/detail/train/best_iterate.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/train_types.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
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

/// Candidates a pass of residual_terms takes side by side: a row's r and
/// |y| + Σ|x w| in two AVX2 vectors each (four SSE2 ones).
inline constexpr std::int64_t residual_group = 8;

/// M candidate w's, each on one output, whose residuals residual_terms takes
/// in one pass over X: candidate m is column m of `wt` (L × `columns`,
/// `columns` M rounded up to residual_group, the padding 0) on output
/// `output[m]`.
template <class C>
struct residual_set {
  std::int64_t L = 0, columns = 0;
  std::vector<C> wt;
  std::vector<std::int64_t> output;

  explicit residual_set(std::int64_t columns_of_x) : L(columns_of_x) {}
  /// Adds w (L values; null: W = 0) on output n.
  void add(const C* w, std::int64_t n) { pending.push_back({w, n}); }
  /// Lays out what `add` gave.
  void lay_out() {
    std::int64_t const M = static_cast<std::int64_t>(pending.size());
    columns = (M + residual_group - 1) / residual_group * residual_group;
    wt.assign(static_cast<std::size_t>(L * columns), C(0));
    output.assign(static_cast<std::size_t>(columns), 0);
    for (std::int64_t m = 0; m < M; ++m) {
      output[m] = pending[m].n;
      for (std::int64_t l = 0; l < L && pending[m].w != nullptr; ++l) { wt[l * columns + m] = pending[m].w[l]; }
    }
  }

 private:
  struct entry {
    const C* w;
    std::int64_t n;
  };
  std::vector<entry> pending;
};

/// Candidates m0 .. m0 + residual_group of `set` (residual_terms): s2 = Σ_k r²
/// and sa = Σ_k |r|(|y| + Σ_l |x w|), lane by lane. In host vectors of
/// `Bytes` (0: none) where the compiler has them, two rows of X at a time
/// (twice the chains of additions in flight; each row's terms join the sums
/// in k order), else in a loop over the lanes; one operation per lane
/// either way, with no contraction (the code around it has no FMA). |v| as
/// the bits: a zero's sign changes no sum here (the sums start at +0).
template <int Bytes, class C, class T, class U>
FUSEKIT_FORCEINLINE void residual_group_terms(matrix<const T> X, matrix<const U> Y, const residual_set<C>& set,
                                              std::int64_t m0, C* s2, C* sa) {
  std::int64_t const K = X.extent(0), L = X.extent(1), M = set.columns;
  const std::int64_t* const out = set.output.data() + m0;
#if FUSEKIT_SIMD_VECTORS
  if constexpr (Bytes > 0 && std::is_same_v<C, double>) {
    using V = typename simd_vector<double, Bytes>::type;
    using I = typename simd_vector<std::int64_t, Bytes>::type;
    constexpr int lanes = Bytes / 8, G = static_cast<int>(residual_group) / lanes;
    I magnitude;
    for (int i = 0; i < lanes; ++i) { magnitude[i] = INT64_MAX; }
#define FUSEKIT_FABS_V(v) ((V)((I)(v)&magnitude))  // |v| lane by lane, as the bits (no vector returned)
    V q[G], a[G];
    for (int g = 0; g < G; ++g) {
      q[g] = V{};
      a[g] = V{};
    }
    // `rows` rows from k: r and |y| + Σ|x w| start at y and |y|.
    auto const rows_from = [&](std::int64_t k, auto rows) FUSEKIT_LAMBDA_INLINE {
      constexpr int H = decltype(rows)::value;
      V r[H][G], b[H][G];
      for (int h = 0; h < H; ++h) {
        double y[residual_group];
        for (std::int64_t i = 0; i < residual_group; ++i) { y[i] = static_cast<double>(Y(k + h, out[i])); }
        for (int g = 0; g < G; ++g) {
          load_doubles<Bytes>(y + g * lanes, r[h][g]);
          b[h][g] = FUSEKIT_FABS_V(r[h][g]);
        }
      }
      const T* const x_row = X.data_handle() + k * L;
      for (std::int64_t l = 0; l < L; ++l) {
        V wv[G];
        for (int g = 0; g < G; ++g) { load_doubles<Bytes>(set.wt.data() + l * M + m0 + g * lanes, wv[g]); }
        for (int h = 0; h < H; ++h) {
          double const x = static_cast<double>(x_row[h * L + l]);
          for (int g = 0; g < G; ++g) {
            V const t = x * wv[g];
            r[h][g] = r[h][g] - t;
            b[h][g] = b[h][g] + FUSEKIT_FABS_V(t);
          }
        }
      }
      for (int h = 0; h < H; ++h) {
        for (int g = 0; g < G; ++g) {
          q[g] = q[g] + r[h][g] * r[h][g];
          a[g] = a[g] + FUSEKIT_FABS_V(r[h][g]) * b[h][g];
        }
      }
    };
    std::int64_t k = 0;
    for (; k + 2 <= K; k += 2) { rows_from(k, std::integral_constant<int, 2>{}); }
    if (k < K) { rows_from(k, std::integral_constant<int, 1>{}); }
#undef FUSEKIT_FABS_V
    for (int g = 0; g < G; ++g) {
      store_doubles<Bytes>(s2 + m0 + g * lanes, q[g]);
      store_doubles<Bytes>(sa + m0 + g * lanes, a[g]);
    }
    return;
  }
#endif
  C q[residual_group] = {}, a[residual_group] = {};
  for (std::int64_t k = 0; k < K; ++k) {
    C r[residual_group], abs[residual_group];
    for (std::int64_t j = 0; j < residual_group; ++j) {
      r[j] = static_cast<C>(Y(k, out[j]));
      abs[j] = std::fabs(r[j]);
    }
    for (std::int64_t l = 0; l < L; ++l) {
      C const x = static_cast<C>(X(k, l));
      const C* const w = set.wt.data() + l * M + m0;
      for (std::int64_t j = 0; j < residual_group; ++j) {
        C const t = x * w[j];
        r[j] = r[j] - t;
        abs[j] = abs[j] + std::fabs(t);
      }
    }
    for (std::int64_t j = 0; j < residual_group; ++j) {
      q[j] = q[j] + r[j] * r[j];
      a[j] = a[j] + std::fabs(r[j]) * abs[j];
    }
  }
  for (std::int64_t j = 0; j < residual_group; ++j) {
    s2[m0 + j] = q[j];
    sa[m0 + j] = a[j];
  }
}

/// For every candidate m of `set`, r2[m] = rows_residual2 and rounding[m] =
/// residual2_rounding, with the same bits: each row's r and |y| + Σ|x w| are
/// row_residual's operations in its order (l from 0), each sum over the rows
/// in k order from C(0), the product by the factor last; residual_group
/// candidates side by side in one pass over this process's rows (lanes of
/// the same operations, compiled without FMA contraction:
/// isa_dispatch_same_bits), the groups on the pool. W = 0 as zeros: y − x·0
/// and |y| + |x·0| are y and |y| for finite X.
template <class C, class T, class U>
void residual_terms(int threads, std::int64_t parallel_from, matrix<const T> X, matrix<const U> Y,
                    const residual_set<C>& set, C* r2, C* rounding) {
  std::int64_t const K = X.extent(0), L = X.extent(1), M = set.columns;
  std::int64_t const groups = M / residual_group;
  C const factor = static_cast<C>(residual2_rounding_factor<C>(L));
  std::vector<C> s2(static_cast<std::size_t>(M), C(0)), sa(static_cast<std::size_t>(M), C(0));
  cpu_for_chunks(threads, cpu_split(groups, 1), groups * K * L * residual_group, parallel_from,
                 [&](std::int64_t, std::int64_t first, std::int64_t last) {
                   isa_dispatch_same_bits_vectors([&](auto bytes) FUSEKIT_LAMBDA_INLINE {
                     for (std::int64_t g = first; g < last; ++g) {
                       residual_group_terms<decltype(bytes)::value>(X, Y, set, g * residual_group, s2.data(),
                                                                    sa.data());
                     }
                   });
                 });
  for (std::int64_t m = 0; m < static_cast<std::int64_t>(set.output.size()); ++m) {
    r2[m] = s2[m];
    if (rounding != nullptr) { rounding[m] = sa[m] * factor; }
  }
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
                       const fit_report& report, const SumOverProcesses& sum, int threads, std::int64_t parallel_from) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  std::vector<C> const zero(static_cast<std::size_t>(L), C(0));
  residual_set<C> set(L);
  std::vector<std::int64_t> ended;  // the outputs that did not converge
  for (std::int64_t n = 0; n < N; ++n) {
    if (report.outputs[static_cast<std::size_t>(n)].status == fit_status::converged) { continue; }
    ended.push_back(n);
    set.add(kept[n].best.data(), n);
    set.add(W.data_handle() + n * L, n);
    set.add(kept[n].start.data(), n);
    set.add(nullptr, n);
  }
  if (ended.empty()) { return; }
  set.lay_out();
  std::vector<C> terms(static_cast<std::size_t>(set.columns), C(0));
  residual_terms(threads, parallel_from, X, Y, set, terms.data(), static_cast<C*>(nullptr));
  for (std::size_t i = 0; i < ended.size(); ++i) {
    std::int64_t const n = ended[i];
    C* const w = W.data_handle() + n * L;
    const C* const choice[4] = {kept[n].best.data(), w, kept[n].start.data(), zero.data()};
    C r2[5];  // and K over every process, for the band: every process picks the same
    for (int c = 0; c < 4; ++c) { r2[c] = terms[4 * i + static_cast<std::size_t>(c)]; }
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
  // Each changed output's residual and rounding of w and of `before` on this
  // process's rows (rows_residual2 and residual2_rounding, their bits), in
  // one pass (residual_terms); then the sums over the processes, in output
  // order.
  std::vector<char> changed(static_cast<std::size_t>(N), 0);
  residual_set<C> set(L);
  for (std::int64_t n = 0; n < N; ++n) {  // W is the same on every process: so is this test
    changed[static_cast<std::size_t>(n)] =
        std::equal(W.data_handle() + n * L, W.data_handle() + (n + 1) * L, before.data() + n * L) ? 0 : 1;
    if (changed[static_cast<std::size_t>(n)] != 0) {
      set.add(W.data_handle() + n * L, n);
      set.add(before.data() + n * L, n);
    }
  }
  set.lay_out();
  std::vector<C> residual(static_cast<std::size_t>(set.columns), C(0)), rounding(residual.size(), C(0)),
      terms(static_cast<std::size_t>(4 * N), C(0));
  residual_terms(threads, parallel_from, X, Y, set, residual.data(), rounding.data());
  for (std::int64_t n = 0, m = 0; n < N; ++n) {
    if (changed[static_cast<std::size_t>(n)] == 0) { continue; }
    C* const t = terms.data() + 4 * n;
    t[0] = residual[m];
    t[1] = residual[m + 1];
    t[2] = rounding[m];
    t[3] = rounding[m + 1];
    m += 2;
  }
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
