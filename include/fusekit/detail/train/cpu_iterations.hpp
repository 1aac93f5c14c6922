// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU trainer's iterations (detail/train/cpu.hpp runs them): every
/// output's state between budgets of updates, the loop that advances them
/// (outputs in parallel, on fusekit's threads), and each method's call on the system of
/// detail/train/cpu_system.hpp. The steps are the very code the GPU runs
/// (descent.hpp, conjugate_gradient.hpp), here on a `serial_team`; CGLS keeps
/// its residual of the rows here. The iterate an output ends on is the
/// best-iterate rule's (detail/train/cpu_best_iterate.hpp). Y may be in another type than X: a
/// refinement's residual (cpu_refinement.hpp) is in the compute type.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/team/cpu_team.hpp>
#include <fusekit/detail/train/cholesky.hpp>
#include <fusekit/detail/train/conjugate_gradient.hpp>
#include <fusekit/detail/train/cpu_best_iterate.hpp>
#include <fusekit/detail/train/cpu_system.hpp>
#include <fusekit/detail/train/descent.hpp>

#include <algorithm>
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
  std::vector<C> g, previous, point, delta, rows, z;  ///< z: a full preconditioner's M r
  std::vector<double> t;                              ///< the Cholesky solve's scratch
  descent_state<C> state;
  std::vector<C> start, best;  ///< w at the start, and at the smallest gradᵀgrad seen
  double best_g2 = -1;         ///< that gradᵀgrad (-1: none yet)

  cpu_output(const descent_params<C>& p, std::int64_t n, std::int64_t L, std::int64_t K, C* w, output_terms terms)
      : g(static_cast<std::size_t>(L)),
        previous(g.size()),
        point(g.size()),
        delta(static_cast<std::size_t>(K)),
        rows(p.method == gd_method::conjugate_gradient ? static_cast<std::size_t>(K) : 0),
        z(g.size()),
        t(g.size()),
        state(descent_state<C>::start(p, terms)) {
    cg = p.method == gd_method::conjugate_gradient;
    descent_begin(serial_team{}, p, n, L, w, previous.data(), point.data());
    start.assign(w, w + L);
    best = start;
  }

  /// Up to `budget` more updates; `iterate(*this, w)` is one call of the
  /// method and returns whether the output goes on. CG's calls that update
  /// nothing (its start, and the check of b − A w after the recurrence met a
  /// tolerance) are not counted: a pending one always runs.
  template <class Iterate>
  void advance(std::int64_t budget, C* w, const Iterate& iterate) {
    std::int64_t const until = state.report.iterations + budget;
    while (state.running && (state.report.iterations < until || (cg && !state.started))) {
      iterate(*this, w);
      double const g2 = state.report.grad_norm2;
      if (g2 < best_g2 || best_g2 < 0) {
        best_g2 = g2;
        best.assign(w, w + best.size());
      }
    }
  }
  bool cg = false;
};

/// One CGLS call of output n (detail/train/conjugate_gradient.hpp): q = X d, the
/// shared update of the rows' residual, r = Xᵀρ and the shared direction.
/// Across processes (`sum`, as in make_cpu_system), qᵀq and r are summed over
/// them, in rank order: every process then takes the same step.
template <class C, class T, class U, class M, class SumOverProcesses>
bool cgls_step(matrix<const T> X, matrix<const U> Y, std::int64_t n, const descent_params<C>& p, cpu_output<C>& o, C* w,
               const M& m, const SumOverProcesses& sum, const cholesky_factor* factor) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  serial_team const team;
  C* const rho = o.rows.data();
  C* const q = o.delta.data();
  C* const d = o.point.data();
  rows_times(X, static_cast<const C*>(d), q);
  cgls_rows(team, o.state, K, L, w, d, element_of<C>{q}, column_of<U, C>{Y.data_handle() + n, N}, reference_of<C>{rho},
            sum);
  columns_times(X, static_cast<const C*>(rho), o.previous.data());
  sum(o.previous.data(), L);
  if (factor != nullptr) {
    return cg_direction(team, p, o.state, L, w, o.previous.data(), d, m, factor->with_scratch(o.t.data()), o.z.data());
  }
  return cg_direction(team, p, o.state, L, w, o.previous.data(), d, m);
}

/// The iterations of every output of W (N × L, in C) from the parameters `p`:
/// `iterate_of(n)` gives output n's call, which takes (cpu_output&, w).
/// Outputs run in parallel when `parallel`. Fills report.outputs; calls
/// `o.progress`.
template <class C, class IterateOf>
void cpu_descend(const cpu& policy, matrix<C> W, const gd_options& o, const descent_params<C>& p,
                 const std::vector<output_terms>& terms, std::int64_t rows_size, bool parallel,
                 const IterateOf& iterate_of, fit_report& report, std::vector<candidates<C>>* kept = nullptr) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  int const helpers = parallel ? cpu_thread_count(policy) - 1 : 0;
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
    // An output a chunk: claimed one at a time, as they finish unevenly.
    cpu_run_chunks(cpu_chunks{N, N}, helpers, [&](std::int64_t n, std::int64_t, std::int64_t) {
      outputs[static_cast<std::size_t>(n)].advance(budget, W.data_handle() + n * L, iterate_of(n));
    });
    done += budget;
    fit_progress now;
    for (const auto& out : outputs) { now.add(out.state.report, out.state.running); }
    if (o.progress) { o.progress(now); }
    if (now.running == 0) { break; }
  }
  for (std::int64_t n = 0; n < N; ++n) { report.outputs[n] = outputs[static_cast<std::size_t>(n)].state.report; }
  for (std::size_t n = 0; kept != nullptr && n < outputs.size(); ++n) {
    kept->push_back({std::move(outputs[n].start), std::move(outputs[n].best)});
  }
}

/// For cpu_descend: output n's call of the method, on A and B (Gram) or on X
/// and Y (direct; its sums over the rows are then summed over the processes
/// by `sum(values, count)`, as in make_cpu_system).
template <class C, class T, class U, class SumOverProcesses>
auto cpu_iterate_of(const cpu_system<C>& sys, const descent_params<C>& p, matrix<const T> X, matrix<const U> Y,
                    const SumOverProcesses& sum) {
  std::int64_t const L = X.extent(1);
  const C* const a = sys.A.data();
  const C* const b = sys.B.data();
  bool const gram = sys.gram;
  auto const m = sys.scaling(p, L);
  const cholesky_factor* const factor = sys.cholesky ? &sys.factor : nullptr;
  return [=](std::int64_t n) {
    return [=](cpu_output<C>& o, C* w) {
      serial_team const team;
      if (p.method == gd_method::conjugate_gradient) {
        if (!gram) { return cgls_step(X, Y, n, p, o, w, m, sum, factor); }
        gram_product(team, a, L, o.point.data(), o.g.data());
        if (factor != nullptr) {
          return cg_step(team, p, o.state, L, w, o.previous.data(), o.point.data(), element_of<C>{o.g.data()},
                         element_of<C>{b + n * L}, m, factor->with_scratch(o.t.data()), o.z.data());
        }
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
template <class C, class U, class SumOverProcesses>
std::vector<output_terms> cpu_all_output_terms(const cpu_system<C>& sys, const descent_params<C>& p, matrix<const U> Y,
                                               const SumOverProcesses& sum) {
  std::int64_t const K = Y.extent(0), N = Y.extent(1);
  std::int64_t const L = static_cast<std::int64_t>(sys.B.size()) / N;
  auto const m = sys.scaling(p, L);
  serial_team const team;
  std::vector<output_terms> terms;
  if (sys.gram) {  // A's norm once: gram_terms' value for every output
    double const operator_norm = gram_operator_norm(team, L, element_of<C>{sys.A.data()}, m);
    for (std::int64_t n = 0; n < N; ++n) {
      terms.push_back(gram_terms_with(team, L, operator_norm, element_of<C>{sys.B.data() + n * L}, m));
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

}  // namespace train
}  // namespace detail
}  // namespace fusekit
