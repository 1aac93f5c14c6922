// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The pieces of gradient descent shared by the CPU backend and the GPU
/// kernels: the stopping rules and the momentum schedule.

#include <fusekit/config.hpp>
#include <fusekit/detail/numeric.hpp>

#include <cstdint>

namespace fusekit {

/// How one output's training ended.
enum class fit_status : int {
  converged = 0,       ///< gradᵀgrad < tolerance
  max_iterations = 1,  ///< the iteration budget ran out first
  diverged = 2,        ///< the gradient became non-finite or grew far past its start
  stalled = 3,         ///< no progress for `stall_window` iterations while above tolerance
};

constexpr const char* to_string(fit_status s) {
  switch (s) {
    case fit_status::converged: return "converged";
    case fit_status::max_iterations: return "max_iterations";
    case fit_status::diverged: return "diverged";
    case fit_status::stalled: return "stalled";
  }
  return "unknown";
}

namespace detail {

/// Divergence: gradᵀgrad non-finite, or above `divergence_growth` times its
/// value at the start. With lr = c/λmax, c > 2, the component along the top
/// eigenvector grows by (c − 1)² per iteration, so this triggers within
/// log((c−1)²)(growth / share of that component) iterations (about 40 for
/// c = 3 and a start with a 10^-6 share).
inline constexpr double divergence_growth = 1e12;

/// Stall: the best gradᵀgrad of a window of `stall_window` iterations is not
/// at least `stall_progress` (relatively) below the best before it.
inline constexpr double stall_progress = 1e-3;

/// Watches gradᵀgrad, iteration by iteration, for the stopping rules.
template <class T>
struct gd_monitor {
  T tolerance;
  std::int64_t stall_window;
  T first = T(-1);
  T best = T(0);
  T best_at_window_start = T(0);
  std::int64_t window_start = 0;

  /// After the gradient of iteration `it` (0-based): -1 to go on, else the
  /// status to stop with. Convergence is decided after the update, as in the
  /// user's loop; this only reports divergence and stalls.
  FUSEKIT_HD int check(T g2, std::int64_t it) {
    if (!is_finite(g2)) { return int(fit_status::diverged); }  // NaN or inf, by the bits (-ffast-math safe)
    if (first < T(0)) {
      first = g2;
      best = g2;
      best_at_window_start = g2;
      window_start = it;
      return -1;
    }
    if (static_cast<double>(g2) > divergence_growth * static_cast<double>(first)) { return int(fit_status::diverged); }
    if (g2 < best) { best = g2; }
    if (it - window_start >= stall_window) {
      if (!(static_cast<double>(best) < (1.0 - stall_progress) * static_cast<double>(best_at_window_start))) {
        return int(fit_status::stalled);
      }
      best_at_window_start = best;
      window_start = it;
    }
    return -1;
  }
};

/// Nesterov's momentum with adaptive restart: the coefficient j/(j+3) grows
/// with the steps since the last restart, j, and drops to 0 when a step went
/// uphill.
struct nesterov_state {
  std::int64_t j = 0;
  template <class T>
  FUSEKIT_HD T coefficient() const {
    return static_cast<T>(j) / static_cast<T>(j + 3);
  }
  FUSEKIT_HD void advance(bool uphill) { j = uphill ? 0 : j + 1; }
};

}  // namespace detail
}  // namespace fusekit
