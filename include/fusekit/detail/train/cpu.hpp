// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of the trainer (contract in train.hpp). Outputs train in
/// parallel (OpenMP); within an output every sum runs in a fixed order, so a
/// result does not depend on the thread count. The descent step and the power
/// iteration are the very code the GPU runs (detail/train/descent.hpp,
/// detail/train/power_iteration.hpp), here on a `serial_team`, and so is the
/// direction of conjugate gradients (detail/train/conjugate_gradient.hpp), whose
/// direct form, CGLS, keeps its residual of the rows here.

#include <fusekit/detail/train/cpu_system.hpp>  // and with it the descent step, CG, the power iteration, the checks

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// One output's iterations on the CPU, advanced in budgets of updates: its
/// buffers and state live between the calls to `advance`. For CG, `previous`
/// holds the residual r and `point` the direction d; CGLS also keeps the
/// rows' residual ρ (`rows`), and `delta` holds X d.
template <class C>
struct cpu_output {
  std::vector<C> g, previous, point, delta, rows;
  descent_state<C> state;

  cpu_output(const descent_params<C>& p, std::int64_t n, std::int64_t L, std::int64_t K, C* w, output_terms terms)
      : g(static_cast<std::size_t>(L)),
        previous(g.size()),
        point(g.size()),
        delta(static_cast<std::size_t>(K)),
        rows(p.method == gd_method::conjugate_gradient ? static_cast<std::size_t>(K) : 0),
        state(descent_state<C>::start(p, terms)) {
    cg = p.method == gd_method::conjugate_gradient;
    descent_begin(serial_team{}, p, n, L, w, previous.data(), point.data());
  }

  /// Up to `budget` more updates; `iterate(*this, w)` is one call of the
  /// method and returns whether the output goes on. CG's calls that update
  /// nothing (its start, and the check of b − A w after the recurrence met a
  /// tolerance) are not counted: a pending one always runs.
  template <class Iterate>
  void advance(std::int64_t budget, C* w, const Iterate& iterate) {
    std::int64_t const until = state.report.iterations + budget;
    while (state.running && (state.report.iterations < until || (cg && !state.started))) { iterate(*this, w); }
  }
  bool cg = false;
};

/// One CGLS call of output n (detail/train/conjugate_gradient.hpp): q = X d, the
/// shared update of the rows' residual, r = Xᵀρ and the shared direction.
/// Across processes (`sum`, as in make_cpu_system), qᵀq and r are summed over
/// them, in rank order: every process then takes the same step.
template <class C, class T, class M, class SumOverProcesses>
bool cgls_step(matrix<const T> X, matrix<const T> Y, std::int64_t n, const descent_params<C>& p, cpu_output<C>& o, C* w,
               const M& m, const SumOverProcesses& sum) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  serial_team const team;
  C* const rho = o.rows.data();
  C* const q = o.delta.data();
  C* const d = o.point.data();
  rows_times(X, static_cast<const C*>(d), q);
  cgls_rows(team, o.state, K, L, w, d, element_of<C>{q}, column_of<T, C>{Y.data_handle() + n, N}, reference_of<C>{rho},
            sum);
  columns_times(X, static_cast<const C*>(rho), o.previous.data());
  sum(o.previous.data(), L);
  return cg_direction(team, p, o.state, L, w, o.previous.data(), d, m);
}

/// The iterations of every output of W (N × L, in C) from the parameters `p`:
/// `iterate_of(n)` gives output n's call, which takes (cpu_output&, w).
/// Outputs run in parallel when `parallel`. Fills report.outputs; calls
/// `o.progress`.
template <class C, class IterateOf>
void cpu_descend(const cpu& policy, matrix<C> W, const gd_options& o, const descent_params<C>& p,
                 const std::vector<output_terms>& terms, std::int64_t rows_size, bool parallel,
                 const IterateOf& iterate_of, fit_report& report) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  int const threads = cpu_thread_count(policy);
  (void)threads;
  (void)parallel;
  report.outputs.resize(static_cast<std::size_t>(N));
  std::vector<cpu_output<C>> outputs;
  outputs.reserve(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) {
    outputs.emplace_back(p, n, L, rows_size, W.data_handle() + n * L, terms[static_cast<std::size_t>(n)]);
  }
  // Without a progress callback one budget covers the whole fit; with one, the
  // outputs advance together `progress_every` updates at a time.
  std::int64_t const budget = o.progress ? o.progress_every : o.max_iterations;
  for (std::int64_t done = 0; done < o.max_iterations;) {
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (parallel)
#endif
    for (std::int64_t n = 0; n < N; ++n) {
      outputs[static_cast<std::size_t>(n)].advance(budget, W.data_handle() + n * L, iterate_of(n));
    }
    done += budget;
    fit_progress now;
    now.iteration = done < o.max_iterations ? done : o.max_iterations;
    for (const auto& out : outputs) {
      if (out.state.running) {
        ++now.running;
        now.worst_grad_norm2 =
            out.state.report.grad_norm2 > now.worst_grad_norm2 ? out.state.report.grad_norm2 : now.worst_grad_norm2;
      }
    }
    if (o.progress) { o.progress(now); }
    if (now.running == 0) { break; }
  }
  for (std::int64_t n = 0; n < N; ++n) { report.outputs[n] = outputs[static_cast<std::size_t>(n)].state.report; }
}

/// For cpu_descend: output n's call of the method, on A and B (Gram) or on X
/// and Y (direct; its sums over the rows are then summed over the processes
/// by `sum(values, count)`, as in make_cpu_system).
template <class C, class T, class SumOverProcesses>
auto cpu_iterate_of(const cpu_system<C>& sys, const descent_params<C>& p, matrix<const T> X, matrix<const T> Y,
                    const SumOverProcesses& sum) {
  std::int64_t const L = X.extent(1);
  const C* const a = sys.A.data();
  const C* const b = sys.B.data();
  bool const gram = sys.gram;
  auto const m = sys.scaling(p, L);
  return [=](std::int64_t n) {
    return [=](cpu_output<C>& o, C* w) {
      serial_team const team;
      if (p.method == gd_method::conjugate_gradient) {
        if (!gram) { return cgls_step(X, Y, n, p, o, w, m, sum); }
        gram_product(team, a, L, o.point.data(), o.g.data());
        return cg_step(team, p, o.state, L, w, o.previous.data(), o.point.data(), element_of<C>{o.g.data()},
                       element_of<C>{b + n * L}, m);
      }
      if (gram) {
        gram_gradient(team, a, b + n * L, L, o.point.data(), o.g.data());
      } else {
        direct_gradient(X, Y, n, static_cast<const C*>(o.point.data()), o.delta.data(), o.g.data());
        sum(o.g.data(), L);
      }
      return descent_step(team, p, o.state, L, w, o.previous.data(), o.point.data(), element_of<C>{o.g.data()}, m);
    };
  };
}

/// Every output's terms of the stopping rules (descent.hpp); direct: ‖y_n‖
/// over this process's rows, then `sum(values, count)` over the processes.
template <class C, class T, class SumOverProcesses>
std::vector<output_terms> cpu_all_output_terms(const cpu_system<C>& sys, const descent_params<C>& p, matrix<const T> Y,
                                               const SumOverProcesses& sum) {
  std::int64_t const K = Y.extent(0), N = Y.extent(1);
  std::int64_t const L = static_cast<std::int64_t>(sys.B.size()) / N;
  auto const m = sys.scaling(p, L);
  serial_team const team;
  std::vector<output_terms> terms;
  if (sys.gram) {
    for (std::int64_t n = 0; n < N; ++n) {
      terms.push_back(gram_terms(team, L, element_of<C>{sys.A.data()}, element_of<C>{sys.B.data() + n * L}, m));
    }
    return terms;
  }
  std::vector<C> y2(static_cast<std::size_t>(N), C(0));
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      C const y = static_cast<C>(Y(k, n));
      y2[n] = y2[n] + y * y;
    }
  }
  sum(y2.data(), N);
  for (std::int64_t n = 0; n < N; ++n) {
    terms.push_back(direct_terms(team, L, element_of<C>{sys.B.data() + n * L}, m, static_cast<double>(y2[n])));
  }
  return terms;
}

/// W's rows in C: W itself when T is C, else a copy (rounded back by `finish`).
template <class C, class T>
struct compute_weights {
  std::vector<C> copy;
  matrix<C> view;
  explicit compute_weights(matrix<T> W) : view(nullptr, 0, 0) {
    if constexpr (std::is_same_v<C, T>) {
      view = W;
    } else {
      copy.assign(W.data_handle(), W.data_handle() + W.extent(0) * W.extent(1));
      view = matrix<C>(copy.data(), W.extent(0), W.extent(1));
    }
  }
  /// W rounded from the copy; an output whose weights do not fit in T (finite
  /// in C, ±inf in T) is not a success: diverged, by the rule non_finite.
  void finish(matrix<T> W, fit_report& report) const {
    if constexpr (!std::is_same_v<C, T>) {
      std::int64_t const N = W.extent(0), L = W.extent(1);
      for (std::int64_t n = 0; n < N; ++n) {
        bool finite = true;
        for (std::int64_t l = 0; l < L; ++l) {
          T const v = static_cast<T>(copy[static_cast<std::size_t>(n * L + l)]);
          W.data_handle()[n * L + l] = v;
          finite = finite && is_finite(v);
        }
        auto& out = report.outputs[static_cast<std::size_t>(n)];
        if (!finite && out.status != fit_status::diverged) {
          out.status = fit_status::diverged;
          out.rule = stop_rule::non_finite;
        }
      }
    } else {
      (void)W;
      (void)report;
    }
  }
};

/// The policy a fit runs on: a small CG fit on the calling thread alone. Its
/// work is a few milliseconds, which a team did not speed up, and on a busy
/// machine each parallel region (the checks, the Gram matrix, the outputs)
/// waited a scheduler slice for a descheduled thread (README, "Under load").
/// CG ends in about L iterations, so its work is known: the Gram matrix,
/// then N·L³. Threads change no bit of a fit.
inline cpu fit_policy(const cpu& given, const gd_options& o, std::int64_t K, std::int64_t L, std::int64_t N) {
  double const k = static_cast<double>(K), l = static_cast<double>(L), n = static_cast<double>(N);
  double const work = k * l * (l + n) + n * l * l * l;  // in double: it may pass 2^63
  bool const small_cg = o.method == gd_method::conjugate_gradient && work < static_cast<double>(cpu_small_fit_work);
  return small_cg ? cpu{1} : given;
}

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
  bool const gram = report.formulation == gd_formulation::gram;
  cpu_system<C> const sys = make_cpu_system<C>(cpu_thread_count(policy), gram, X, Y, total_rows, sum);
  report.learning_rate =
      cpu_learning_rate(o, sys, L, [&](const double* scale) { return cpu_direct_power_iteration(X, scale, sum); });
  descent_params<C> const p = make_descent_params<C>(o, report.learning_rate, sys.floor_multiplier);
  // Outputs in parallel only when one iteration over all of them is work enough:
  // a team for a small fit costs more than it saves, and on a busy machine one
  // descheduled thread stalls the whole call (a (9, 9, 9) fit took 24 ms instead of 0.65).
  bool const parallel = (gram || parallel_direct) && N * L * (gram ? L : K) >= cpu_parallel_threshold;
  compute_weights<C, T> weights(W);
  cpu_descend<C>(policy, weights.view, o, p, cpu_all_output_terms(sys, p, Y, sum), gram ? 0 : X.extent(0), parallel,
                 cpu_iterate_of<C>(sys, p, X, Y, sum), report);
  weights.finish(W, report);
  return report;
}

template <class T>
fit_report run(fit_tag, const cpu& given, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o) {
  // check_fit's non_finite_counter (a reduction) needs the policy by reference: a local.
  cpu const policy = fit_policy(given, o, X.extent(0), X.extent(1), Y.extent(1));
  check_fit(X, Y, W, o, non_finite_counter<cpu>{policy});
  fit_report report = cpu_fit_checked(policy, X, Y, W, o, X.extent(0), no_processes{}, true);
  report.path = fusekit::fit_path::cpu;
  return report;
}

template <class T>
void run(predict_tag, const cpu& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  check_predict(X, W, Y_hat);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
  int const threads = cpu_thread_count(policy);
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (K * N * L >= cpu_parallel_threshold)
#endif
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) { Y_hat(k, n) = predict_at(X.data_handle(), W.data_handle(), L, k, n); }
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
