// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The descent step: ONE definition of gradient descent (plain and Nesterov
/// with adaptive restart) and its four stopping rules, run by the CPU backend
/// (serial_team) and by both GPU paths (block_team): the single-launch kernel
/// and the cuBLAS path's update kernel. Only the gradient differs between the
/// callers; everything from gradᵀgrad to the status is this file.
///
/// One output's iteration, given the gradient g at the point p (p = w for plain):
///
///     g2 = gᵀg;  stop if g2 is non-finite, 10^12 × its first value, or stalled
///     plain:     w ← p − lr·g;  p ← w
///     nesterov:  w_new = p − lr·g;  restart (j ← 0) if gᵀ(w_new − w) > 0, else j ← j + 1
///                previous ← w;  w ← w_new;  p ← w + j/(j+3)·(w − previous)
///     stop as converged if g2 < tolerance, as max_iterations at the budget
///     a stop other than diverged with a non-finite w is diverged

#include <fusekit/config.hpp>
#include <fusekit/detail/numeric.hpp>
#include <fusekit/detail/random.hpp>
#include <fusekit/train_types.hpp>

#include <cstdint>

namespace fusekit {
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

/// Watches gradᵀgrad, iteration by iteration, for divergence and stalls.
template <class T>
struct gd_monitor {
  T tolerance;
  std::int64_t stall_window;
  T first = T(-1);
  T best = T(0);
  T best_at_window_start = T(0);
  std::int64_t window_start = 0;

  /// After the gradient of iteration `it` (0-based): -1 to go on, else the
  /// status to stop with (diverged or stalled). Convergence is decided after
  /// the update, as in the user's loop.
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

/// Nesterov's momentum with adaptive restart (O'Donoghue and Candès, 2015): the
/// coefficient j/(j+3) grows with the steps since the last restart, j, and
/// drops to 0 when a step went uphill.
struct nesterov_state {
  std::int64_t j = 0;
  template <class T>
  FUSEKIT_HD T coefficient() const {
    return static_cast<T>(j) / static_cast<T>(j + 3);
  }
  FUSEKIT_HD void advance(bool uphill) { j = uphill ? 0 : j + 1; }
};

/// What the step needs of gd_options, by value (kernels take it as an argument).
template <class T>
struct descent_params {
  T learning_rate;  ///< given, or 1/λmax (checked on the host first)
  T tolerance;
  std::int64_t max_iterations;
  std::int64_t stall_window;
  std::uint64_t seed;
  gd_init init;
  bool nesterov;
};

template <class T>
descent_params<T> make_descent_params(const gd_options& o, double learning_rate) {
  return {static_cast<T>(learning_rate), static_cast<T>(o.tolerance), o.max_iterations, o.stall_window, o.seed,
          o.init, o.method == gd_method::nesterov};
}

/// One output's descent between steps. On the GPU every member of the block
/// holds the same copy (every member computes the same values).
template <class T>
struct descent_state {
  gd_monitor<T> monitor;
  nesterov_state momentum;
  output_report report;  ///< iterations, the last gradᵀgrad and the status
  bool running;

  FUSEKIT_HD static descent_state start(const descent_params<T>& p) {
    return {gd_monitor<T>{p.tolerance, p.stall_window}, nesterov_state{},
            output_report{0, 0.0, fit_status::max_iterations}, true};
  }
};

/// Initial weight l of row n (of length L) as `init` asks; `current` is W's value on entry.
template <class T>
FUSEKIT_HD inline T initial_weight(gd_init init, std::uint64_t seed, std::int64_t n, std::int64_t l, std::int64_t L,
                                   T current) {
  if (init == gd_init::zeros) { return T(0); }
  if (init == gd_init::uniform) { return uniform01<T>(static_cast<std::uint64_t>(n * L + l), seed); }
  return current;
}

/// Output n's start: w (row n of W, in place), previous and point.
template <class T, class Team>
FUSEKIT_HD void descent_begin(const Team& team, const descent_params<T>& p, std::int64_t n, std::int64_t L, T* w,
                              T* previous, T* point) {
  team.for_each(L, [&](std::int64_t i) {
    T const v = initial_weight<T>(p.init, p.seed, n, i, L, w[i]);
    w[i] = v;
    previous[i] = v;
    point[i] = v;
  });
  team.sync();
}

/// The Gram formulation's gradient: g = A·point − b, A symmetric L × L, each
/// g_i summed over j in order (A's row j serves as its column j).
template <class T, class Team>
FUSEKIT_HD void gram_gradient(const Team& team, const T* A, const T* b, std::int64_t L, const T* point, T* g) {
  team.template column_sums<T>(L, L, g, [&](std::int64_t j, std::int64_t i) { return A[j * L + i] * point[j]; });
  team.for_each(L, [&](std::int64_t i) { g[i] = g[i] - b[i]; });
}

/// One iteration of one output, after the gradient at `point` is known as
/// `grad(i)`: gradᵀgrad, the stopping rules, the update of w, previous and
/// point (see the file comment). Returns whether the output goes on.
template <class T, class Team, class Grad>
FUSEKIT_HD bool descent_step(const Team& team, const descent_params<T>& p, descent_state<T>& s, std::int64_t L, T* w,
                             T* previous, T* point, const Grad& grad) {
  T const g2 = team.template sum<T>(L, [&](std::int64_t i) {
    T const g = grad(i);
    return g * g;
  });
  std::int64_t const it = s.report.iterations;
  s.report.grad_norm2 = static_cast<double>(g2);
  int stop = s.monitor.check(g2, it);  // diverged and stalled stop before the update: iterations stays `it`
  if (stop < 0) {
    T const lr = p.learning_rate;
    if (p.nesterov) {
      T const uphill = team.template sum<T>(L, [&](std::int64_t i) {
        T const g = grad(i);
        T const next = point[i] - lr * g;
        T const up = g * (next - w[i]);
        previous[i] = w[i];
        w[i] = next;
        return up;
      });
      s.momentum.advance(uphill > T(0));
      T const mu = s.momentum.template coefficient<T>();
      team.for_each(L, [&](std::int64_t i) { point[i] = w[i] + mu * (w[i] - previous[i]); });
    } else {
      team.for_each(L, [&](std::int64_t i) {
        w[i] = point[i] - lr * grad(i);
        point[i] = w[i];
      });
    }
    s.report.iterations = it + 1;
    if (g2 < p.tolerance) {
      stop = int(fit_status::converged);
    } else if (it + 1 >= p.max_iterations) {
      stop = int(fit_status::max_iterations);
    }
  }
  if (stop >= 0) {
    s.running = false;
    s.report.status = static_cast<fit_status>(stop);
    // Success means finite weights: the last update can overflow where its gradient did not.
    if (stop != int(fit_status::diverged) &&
        team.template sum<int>(L, [&](std::int64_t i) { return is_finite(w[i]) ? 0 : 1; }) != 0) {
      s.report.status = fit_status::diverged;
    }
  }
  team.sync();
  return s.running;
}

}  // namespace detail
}  // namespace fusekit
