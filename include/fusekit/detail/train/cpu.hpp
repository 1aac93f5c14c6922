// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of the trainer (contract in train.hpp). Outputs train in
/// parallel (fusekit's threads); within an output every sum runs in a fixed order, so a
/// result does not depend on the thread count. The descent step and the power
/// iteration are the very code the GPU runs (detail/train/descent.hpp,
/// detail/train/power_iteration.hpp), here on a `serial_team`, and so is the
/// direction of conjugate gradients (detail/train/conjugate_gradient.hpp), whose
/// direct form, CGLS, keeps its residual of the rows here.

#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/train/checks.hpp>
#include <fusekit/detail/train/cpu_best_iterate.hpp>
#include <fusekit/detail/train/cpu_iterations.hpp>
#include <fusekit/detail/train/prepare.hpp>
#include <fusekit/detail/train/cpu_refinement.hpp>
#include <fusekit/detail/train/cpu_system.hpp>
#include <fusekit/detail/train/predict.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/train_types.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {

// This file is the CPU backend of fit and predict (see detail/core/dispatch.hpp).
template <>
struct backend_available<fit_tag, cpu> : std::true_type {};
template <>
struct backend_available<predict_tag, cpu> : std::true_type {};

inline namespace train {

/// A CPU fit after its checks, on this process's rows: `total_rows` is K over
/// every process, and `sum(values, count)` sums over the processes (nothing
/// for one): A and B, or each direct gradient, CGLS's qᵀq and r.
template <class T, class SumOverProcesses>
fit_report cpu_fit_checked(const cpu& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                           std::int64_t total_rows, const SumOverProcesses& sum, bool parallel_direct) {
  using C = cpu_compute_t;
  std::int64_t const L = X.extent(1), N = Y.extent(1), K = X.extent(0);
  fit_report report;
  report.formulation = resolve_formulation(o.formulation, total_rows, L);
  cpu_system<C> sys =
      make_cpu_system<C>(cpu_thread_count(policy), report.formulation == gd_formulation::gram, X, Y, total_rows, sum);
  sys.factor_if_asked(o, L);
  if (sys.cholesky) { report.preconditioner = gd_preconditioner::cholesky; }
  if (sys.leaves_gram(o)) {
    sys.to_direct(total_rows, L);
    report.formulation = gd_formulation::direct;
  }
  bool const gram = sys.gram;
  report.learning_rate =
      cpu_learning_rate(o, sys, L, [&](const double* scale) { return cpu_direct_power_iteration(X, scale, sum); });
  descent_params<C> p = make_descent_params<C>(o, report.learning_rate, sys.floor_multiplier);
  p.jacobi = p.jacobi && !sys.cholesky;
  // Outputs on helpers only when one iteration over all of them is work enough
  // for a helper to join before the caller is done.
  bool const parallel = (gram || parallel_direct) && N * L * (gram ? L : K) >= cpu_train_parallel_from;
  compute_weights<C, T> weights(W);
  std::int64_t const rows_size = gram ? 0 : X.extent(0);
  try {
    std::vector<candidates<C>> kept;
    cpu_descend<C>(policy, weights.view, o, p, cpu_all_output_terms(sys, p, Y, sum), rows_size, parallel,
                   cpu_iterate_of<C>(sys, p, X, Y, sum), report, &kept);
    keep_best_iterate(X, Y, weights.view, kept, report, sum, cpu_thread_count(policy), cpu_train_parallel_from);
    if (o.refinement_steps > 0 && sys.gram) {
      std::vector<C> const before(weights.view.data_handle(), weights.view.data_handle() + N * L);
      std::vector<output_report> const reported = report.outputs;
      cpu_refine<C>(policy, X, Y, weights.view, o, sys, report.learning_rate, rows_size, parallel, sum, report);
      keep_refinement_if_better(X, Y, weights.view, before, reported, report, sum, cpu_thread_count(policy),
                                cpu_train_parallel_from);
    }
  } catch (...) {  // a progress callback that throws stops the fit with W at the iterate reached, in every T
    weights.write(W);
    throw;
  }
  weights.finish(W, {}, report);
  return report;
}

/// A checked fit on this process's rows, with its extras (prepare.hpp):
/// the plain fit, or the fit on the prepared copy. `total_rows`, `sum` and
/// `max` over the processes; `ridge_rows`: this process adds the ridge's rows.
template <class T, class SumOverProcesses, class MaxOverProcesses>
fit_report cpu_fit_with_extras(const cpu& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W,
                               const gd_options& o, const fit_extras<T>& e, bool weighted, std::int64_t total_rows,
                               const SumOverProcesses& sum, const MaxOverProcesses& max, bool ridge_rows,
                               bool parallel_direct) {
  std::vector<double> high, low, y_largest;
  std::vector<int> const exponents = column_exponents(X, Y, o, max, high, low, y_largest);
  if (!needs_preparation(weighted, o, exponents)) {
    for (T& b : e.intercept) { b = T(0); }  // no intercept: b = 0, as documented
    return cpu_fit_checked(policy, X, Y, W, o, total_rows, sum, parallel_direct);
  }
  return prepare_and_fit(X, Y, W, o, e, weighted, total_rows, {high, low, y_largest}, ridge_rows, sum, max,
                         [&](auto Xp, auto Yp, auto Wp, const gd_options& fit_options, std::int64_t rows) {
                           return cpu_fit_checked(policy, Xp, Yp, Wp, fit_options, rows, sum, parallel_direct);
                         });
}

template <class T>
fit_report run_fit(fit_tag, const cpu& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                   const fit_extras<T>& extras = {}) {
  (void)cpu_thread_count(policy);  // a negative count is rejected first, on every fit
  check_fit(X, Y, W, o, non_finite_counter<cpu>{policy}, false, extras);
  check_fit_extras(extras, o, X.extent(0), Y.extent(1), non_finite_counter<cpu>{policy});
  fit_report report = cpu_fit_with_extras(policy, X, Y, W, o, extras, !extras.sample_weight.empty(), X.extent(0),
                                          no_processes{}, no_processes{}, true, true);
  report.path = fusekit::fit_path::cpu;
  return report;
}

template <class T>
void run_predict(predict_tag, const cpu& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat,
                 ::cuda::std::span<const T> b = {}) {
  check_predict(X, W, Y_hat, b);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
  cpu_for_chunks(policy, cpu_split(K, cpu_train_row_grain(N * L)), K * N * L, cpu_train_parallel_from,
                 [&](std::int64_t, std::int64_t first, std::int64_t last) {
                   for (std::int64_t k = first; k < last; ++k) {
                     for (std::int64_t n = 0; n < N; ++n) {
                       Y_hat(k, n) = plus_intercept(predict_at(X.data_handle(), W.data_handle(), L, k, n),
                                                    b.empty() ? nullptr : b.data(), n);
                     }
                   }
                 });
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
