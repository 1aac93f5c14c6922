// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The power iteration that gives the trainer's automatic learning rate 1/λ:
/// ONE definition, run by the CPU backend (serial_team) and on the GPU by one
/// thread block (block_team), in double whatever T is.

#include <fusekit/config.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/detail/train/descent.hpp>

#include <cmath>
#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// Steps at most; the loop ends earlier once λ changes by ≤ 1e-10 relatively.
inline constexpr int power_iteration_max_steps = 1000;
inline constexpr double power_iteration_tolerance = 1e-10;

/// λ of a symmetric positive semi-definite operator of size L: the Rayleigh
/// quotient vᵀ(Av) of the last unit vector v, so λ ≤ λmax. `apply(v, u)` writes
/// u = A·v, each team member its own share of u (the indices `for_each` gives
/// it); v and u are L doubles of scratch the whole team can read.
template <class Team, class Apply>
FUSEKIT_HD double power_iteration(const Team& team, std::int64_t L, double* v, double* u, const Apply& apply) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  double const start = 1.0 / ::sqrt(static_cast<double>(L));
  team.for_each(L, [&](std::int64_t i) { v[i] = start; });
  team.sync();
  double lambda = 0;
  // A start with A v = 0 (orthogonal to every eigenvector of λ > 0: one row
  // of ±1 in equal numbers, say) gives way to e_0, e_1, ... in turn: A ≠ 0
  // moves one of them (A is positive semidefinite: A e_i = 0 only for a zero
  // column). So λ = 0 means A = 0. At most L restarts and max_steps steps.
  std::int64_t restarts = 0;
  for (int it = 0; it < power_iteration_max_steps;) {
    apply(v, u);
    double const dot = team.template sum<double>(L, [&](std::int64_t i) { return v[i] * u[i]; });
    double const norm2 = team.template sum<double>(L, [&](std::int64_t i) { return u[i] * u[i]; });
    if (!(norm2 > 0) && it == 0 && restarts < L) {
      std::int64_t const basis = restarts++;
      team.sync();
      team.for_each(L, [&](std::int64_t i) { v[i] = i == basis ? 1.0 : 0.0; });
      team.sync();
      continue;
    }
    double const previous = lambda;
    lambda = dot;
    if (!(norm2 > 0)) { break; }
    double const inv = 1.0 / ::sqrt(norm2);
    team.for_each(L, [&](std::int64_t i) { v[i] = u[i] * inv; });
    team.sync();
    if (it > 0 && ::fabs(lambda - previous) <= power_iteration_tolerance * lambda) { break; }
    ++it;
  }
  return lambda;
}

/// λ of a symmetric L × L matrix A (XᵀX), by `power_iteration`; with `jacobi`,
/// of M^½ A M^½, M = diag(A)⁻¹ (0 for a zero diagonal entry): the matrix that
/// scaled gradient descent sees.
template <class T, class Team>
FUSEKIT_HD double symmetric_power_iteration(const Team& team, const T* A, std::int64_t L, double* v, double* u,
                                            bool jacobi = false) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  auto const scale = [&](std::int64_t i) {
    return jacobi ? ::sqrt(static_cast<double>(jacobi_entry(A[i * L + i]))) : 1.0;
  };
  return power_iteration(team, L, v, u, [&](const double* x, double* y) {
    team.template column_sums<double>(
        L, L, y, [&](std::int64_t j, std::int64_t i) { return static_cast<double>(A[j * L + i]) * (scale(j) * x[j]); });
    if (jacobi) {
      team.for_each(L, [&](std::int64_t i) { y[i] = scale(i) * y[i]; });
    }
  });
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
