// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Iterative refinement of a fit (gd_options::refinement_steps), the rules
/// every backend follows. One step:
///
///     r_n = y_n − X w_n              for every output that converged or stalled (0 for the others)
///     d_n from 0, by the fit's own method, preconditioner and rules, on
///         XᵀX d = Xᵀ r_n             (the relative rule against ‖Xᵀ r_n‖_D)
///     w_n ← w_n + d_n                when `add_correction` accepts d_n
///
/// Why it helps: the fit's gradient b − A w is computed from A = XᵀX and
/// b = Xᵀy, so rounding in A and b bounds how close w gets; Xᵀ(y − X w),
/// taken from X itself, is the gradient of w with X's rounding only, and the
/// correction solves for what remains. The backends differ only in what they
/// keep between the solves: the CPU keeps A and forms Xᵀr alone; the GPU
/// forms both again with its GEMMs (the same values: the same GEMM on the
/// same X).

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/train_types.hpp>

#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// Whether output `fit` is refined: a converged one, and a stalled one (at
/// the rounding floor of A's rounding, which the correction, from X, gets
/// below). One that ran out of iterations or diverged keeps the iterate it
/// stopped at, and its status says why.
inline bool refines(const output_report& fit) {
  return fit.status == fit_status::converged || fit.status == fit_status::stalled;
}

/// The outputs a step refines (1 or 0 each), and the budget of its solve:
/// half the most iterations a refined output has used (the correction's
/// system is the fit's, and half its iterations take the error of W from
/// 1.2e-7 to 1e-11 at L = 256 in raw units, a quarter only to 7e-8; docs/trainer.md,
/// Trainer), and at most `max_iterations` less that most, so that no
/// output's count passes `max_iterations`. 0: nothing to refine.
struct refinement_plan {
  std::vector<char> outputs;
  std::int64_t budget = 0;
};

inline refinement_plan plan_refinement(const fit_report& report, std::int64_t max_iterations) {
  refinement_plan plan;
  std::int64_t used = -1;
  for (const output_report& out : report.outputs) {
    plan.outputs.push_back(refines(out) ? 1 : 0);
    if (refines(out) && out.iterations > used) { used = out.iterations; }
  }
  std::int64_t const left = max_iterations - used, half = (used + 1) / 2;
  plan.budget = used < 0 ? 0 : (half < left ? half : left);
  return plan;
}

/// The options of a correction's solve: the fit's, from d = 0, within `budget`
/// iterations, not refined again. Its progress is the fit's, seen from the
/// fit: the iteration goes on from the fit's (a correction's updates count in
/// the output's iterations), and an output ends with the fit's status (the
/// outputs a correction still runs are converged or stalled ones: counted
/// off the converged first).
inline gd_options correction_options(const gd_options& o, std::int64_t budget, const fit_report& fit) {
  gd_options c = o;
  c.init = gd_init::zeros;
  c.max_iterations = budget;
  c.refinement_steps = 0;
  if (o.progress) {
    fit_progress before;
    for (const output_report& out : fit.outputs) { before.add(out, false); }
    c.progress = [progress = o.progress, before](const fit_progress& now) {
      fit_progress seen = before;
      seen.iteration = before.iteration + now.iteration;
      seen.running = now.running;
      seen.worst_grad_norm2 = now.worst_grad_norm2;
      std::int64_t& converged = seen.ended[static_cast<int>(fit_status::converged)];
      std::int64_t const off = now.running < converged ? now.running : converged;
      converged -= off;
      seen.ended[static_cast<int>(fit_status::stalled)] -= now.running - off;
      progress(seen);
    };
  }
  return c;
}

/// w ← w + d (L values) when the correction is worth taking: the output is
/// refined, its correction did not diverge, ends with a gradient no larger
/// than the one it started from (`start_norm2` = ‖Xᵀr‖², the gradient of
/// d = 0 in the correction's system: the solve made progress), and w + d is
/// finite. Then the report counts the correction's updates and its last
/// gradient; status and rule stay the fit's. Returns whether w changed.
/// (Not against the fit's own last gradient: both are gradients of A's
/// rounded system, which at its floor are noise, and refinement is there to
/// get below that floor.)
template <class T>
bool add_correction(T* w, const T* d, std::int64_t L, output_report& fit, const output_report& correction,
                    double start_norm2) {
  if (!refines(fit) || correction.status == fit_status::diverged || !(correction.grad_norm2 <= start_norm2)) {
    return false;
  }
  for (std::int64_t l = 0; l < L; ++l) {
    if (!is_finite(static_cast<T>(w[l] + d[l]))) { return false; }
  }
  for (std::int64_t l = 0; l < L; ++l) { w[l] = w[l] + d[l]; }
  fit.iterations += correction.iterations;
  fit.grad_norm2 = correction.grad_norm2;
  return true;
}

/// ‖b‖² of L values in double: a correction's starting gradient.
template <class T>
double squared_norm(const T* b, std::int64_t L) {
  double s = 0;
  for (std::int64_t l = 0; l < L; ++l) { s += static_cast<double>(b[l]) * static_cast<double>(b[l]); }
  return s;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
