// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU trainer's iterative refinement (the steps of
/// detail/train/refinement.hpp): the residual of the rows from X itself, in
/// the compute type, then the same iterations on the kept A with B = RᵀX.
/// Across processes each holds its rows of R; RᵀX is summed over them like B.

#include <fusekit/detail/team/cpu_simd.hpp>
#include <fusekit/detail/train/cpu_iterations.hpp>
#include <fusekit/detail/train/cpu_system.hpp>
#include <fusekit/detail/train/refinement.hpp>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// Outputs whose residuals cpu_residual takes side by side (in two host
/// vectors of 4 doubles, where the compiler has them).
inline constexpr std::int64_t residual_lanes = 8;

/// Σ_l x_kl w_nl of `rows` (1 or 2) rows from xk (row-major, L columns) for
/// the residual_lanes outputs of `wt` (L rows of `stride` values), in l order
/// from C(0), into s (row after row). In host vectors of `Bytes` (0: none),
/// two rows side by side: twice the chains of additions in flight.
template <int Bytes, class C, class T>
FUSEKIT_FORCEINLINE void row_products(const T* xk, std::int64_t rows, std::int64_t L, const C* wt, std::int64_t stride,
                                      C* s) {
#if FUSEKIT_SIMD_VECTORS
  if constexpr (Bytes > 0 && std::is_same_v<C, double>) {
    using V = typename simd_vector<double, Bytes>::type;
    constexpr int lanes = Bytes / 8, G = static_cast<int>(residual_lanes) / lanes;
    V r[2][G];
    for (int h = 0; h < 2; ++h) {
      for (int g = 0; g < G; ++g) { r[h][g] = V{}; }
    }
    const T* const xz = rows > 1 ? xk + L : xk;  // one row: the second lanes repeat it, unused
    for (std::int64_t l = 0; l < L; ++l) {
      double const x = static_cast<double>(xk[l]), z = static_cast<double>(xz[l]);
      for (int g = 0; g < G; ++g) {
        V w;
        load_doubles<Bytes>(wt + l * stride + g * lanes, w);
        r[0][g] = r[0][g] + x * w;
        r[1][g] = r[1][g] + z * w;
      }
    }
    for (int h = 0; h < rows; ++h) {
      for (int g = 0; g < G; ++g) { store_doubles<Bytes>(s + h * residual_lanes + g * lanes, r[h][g]); }
    }
    return;
  }
#endif
  for (std::int64_t i = 0; i < rows; ++i) {
    C* const si = s + i * residual_lanes;
    for (std::int64_t j = 0; j < residual_lanes; ++j) { si[j] = C(0); }
    for (std::int64_t l = 0; l < L; ++l) {
      C const x = static_cast<C>(xk[i * L + l]);
      FUSEKIT_SIMD_LOOP
      for (std::int64_t j = 0; j < residual_lanes; ++j) { si[j] = si[j] + x * wt[l * stride + j]; }
    }
  }
}

/// R = Y − X Wᵀ (K × N, in C) for the outputs `refined` names, 0 for the
/// others; each entry y_kn − Σ_l x_kl w_nl, the sum in l order from 0
/// (residual_lanes outputs of a row side by side, over Wᵀ padded with zeros;
/// lanes of the same operations, compiled without FMA: isa_dispatch_same_bits).
template <class C, class T>
std::vector<C> cpu_residual(int threads, matrix<const T> X, matrix<const T> Y, matrix<const C> W,
                            const std::vector<char>& refined) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  std::int64_t const stride = (N + residual_lanes - 1) / residual_lanes * residual_lanes;
  std::vector<C> R(static_cast<std::size_t>(K * N), C(0)), Wt(static_cast<std::size_t>(L * stride), C(0));
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t l = 0; l < L && refined[static_cast<std::size_t>(n)] != 0; ++l) { Wt[l * stride + n] = W(n, l); }
  }
  cpu_for_chunks(threads, cpu_split(K, cpu_train_row_grain(L * N)), K * L * N, cpu_train_parallel_from,
                 [&](std::int64_t, std::int64_t first, std::int64_t last) {
                   isa_dispatch_same_bits_vectors([&](auto bytes) FUSEKIT_LAMBDA_INLINE {
                     C s[2 * residual_lanes];
                     for (std::int64_t k = first; k < last; k += 2) {
                       std::int64_t const rows = last - k < 2 ? last - k : 2;
                       for (std::int64_t n0 = 0; n0 < N; n0 += residual_lanes) {
                         row_products<decltype(bytes)::value>(X.data_handle() + k * L, rows, L, Wt.data() + n0, stride,
                                                              s);
                         for (std::int64_t i = 0; i < rows; ++i) {
                           for (std::int64_t n = n0; n < N && n < n0 + residual_lanes; ++n) {
                             R[(k + i) * N + n] = refined[static_cast<std::size_t>(n)] != 0
                                                      ? static_cast<C>(Y(k + i, n)) - s[i * residual_lanes + n - n0]
                                                      : C(0);
                           }
                         }
                       }
                     }
                   });
                 });
  return R;
}

/// `o.refinement_steps` steps of refinement of W (N × L, in C) on this
/// process's rows: `sys` is the fit's system (its B is replaced by RᵀX), and
/// the rest are cpu_descend's arguments. Stops early when no output is left
/// to refine, no budget is left, or a step changed no output's w by more than
/// 2^-20 of its norm (what is left is about the square of that).
template <class C, class T, class SumOverProcesses>
void cpu_refine(const cpu& policy, matrix<const T> X, matrix<const T> Y, matrix<C> W, const gd_options& o,
                cpu_system<C>& sys, double learning_rate, std::int64_t rows_size, bool parallel,
                const SumOverProcesses& sum, fit_report& report) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  int const threads = cpu_thread_count(policy);
  for (std::int64_t step = 0; step < o.refinement_steps && sys.gram; ++step) {
    refinement_plan const plan = plan_refinement(report, o.max_iterations);
    if (plan.budget < 1) { return; }
    gd_options const c = correction_options(o, plan.budget, report);
    std::vector<C> const R = cpu_residual(threads, X, Y, matrix<const C>(W.data_handle(), N, L), plan.outputs);
    matrix<const C> const Rv(R.data(), K, N);
    cpu_gram<C>(threads, X, Rv, nullptr, sys.B);
    sum(sys.B.data(), N * L);
    descent_params<C> p = make_descent_params<C>(c, learning_rate, sys.floor_multiplier);
    p.jacobi = p.jacobi && !sys.cholesky;
    std::vector<C> D(static_cast<std::size_t>(N * L), C(0));
    fit_report correction;
    cpu_descend<C>(policy, matrix<C>(D.data(), N, L), c, p, cpu_all_output_terms(sys, p, Rv, sum), rows_size, parallel,
                   cpu_iterate_of<C>(sys, p, X, Rv, sum), correction);
    // Every correction below 2^-20 of its w: refinement contracts the error
    // about quadratically here (the fit's error is κ(A')·u-relative, and so is
    // each step's factor), so what is left is about its square, 10^-12.
    bool negligible = true;
    for (std::int64_t n = 0; n < N; ++n) {
      C* const w = W.data_handle() + n * L;
      const C* const d = D.data() + n * L;
      double w2 = 0, d2 = 0;
      for (std::int64_t l = 0; l < L; ++l) {
        w2 += static_cast<double>(w[l]) * static_cast<double>(w[l]);
        d2 += static_cast<double>(d[l]) * static_cast<double>(d[l]);
      }
      bool const added =
          add_correction(w, d, L, report.outputs[static_cast<std::size_t>(n)],
                         correction.outputs[static_cast<std::size_t>(n)], squared_norm(sys.B.data() + n * L, L));
      negligible = negligible && (!added || d2 <= 0x1p-40 * w2);
    }
    if (negligible) { return; }
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
