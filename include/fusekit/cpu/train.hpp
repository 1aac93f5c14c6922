// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of the trainer (contract in train.hpp). Outputs train in
/// parallel (OpenMP); within an output every sum runs in a fixed order, so a
/// result does not depend on the thread count. The descent step and the power
/// iteration are the very code the GPU runs (detail/descent.hpp,
/// detail/power_iteration.hpp), here on a `serial_team`, and so is the
/// direction of conjugate gradients (detail/conjugate_gradient.hpp), whose
/// direct form, CGLS, keeps its residual of the rows here.

#include <fusekit/cpu/parallel.hpp>
#include <fusekit/cpu/reduce.hpp>
#include <fusekit/detail/conjugate_gradient.hpp>
#include <fusekit/detail/descent.hpp>
#include <fusekit/detail/dispatch.hpp>
#include <fusekit/detail/power_iteration.hpp>
#include <fusekit/detail/team.hpp>
#include <fusekit/detail/train_checks.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/train_types.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {

/// The type a CPU fit computes in: double, for float data too. X and Y stay
/// as given (each value read is converted exactly); A, B, the iterates and
/// every sum are double, and a float W is rounded once at the end. So a float
/// fit is not limited by float sums (A = XᵀX formed in float is only about
/// κ(XᵀX)·2^-24 accurate).
using cpu_compute_t = double;

/// Rows of X taken at a time while A = XᵀX is formed (they stay in cache
/// while every row of A passes over them).
inline constexpr std::int64_t gram_rows_per_block = 64;

/// A = XᵀX (L × L) and B = YᵀX (N × L, row n is b_n = Xᵀ y_n) in C, every entry
/// summed over k in order from C(0), whatever the blocking and the thread
/// count: rows of X are taken `gram_rows_per_block` at a time, each thread owns
/// rows of A, and within a block each entry adds its terms in k order. The
/// upper triangle is summed and mirrored (x_ki·x_kj = x_kj·x_ki exactly).
template <class C, class T>
void cpu_gram(int threads, matrix<const T> X, matrix<const T> Y, std::vector<C>& A, std::vector<C>& B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  A.assign(static_cast<std::size_t>(L * L), C(0));
  B.assign(static_cast<std::size_t>(N * L), C(0));
  const T* const x = X.data_handle();
  const T* const y = Y.data_handle();
  C* const a = A.data();
  C* const bm = B.data();
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel num_threads(threads) if (K * L * (L + N) >= cpu_parallel_threshold)
#endif
  {
    for (std::int64_t k0 = 0; k0 < K; k0 += gram_rows_per_block) {
      std::int64_t const k1 = k0 + gram_rows_per_block < K ? k0 + gram_rows_per_block : K;
#if FUSEKIT_HAS_OPENMP
#pragma omp for schedule(static, 1) nowait
#endif
      for (std::int64_t r = 0; r < L + N; ++r) {
        // Rows r < L are A's (from column r on), the rest B's: b_n = Σ_k y_kn x_k.
        bool const is_a = r < L;
        std::int64_t const from = is_a ? r : 0;
        C* const out = is_a ? a + r * L : bm + (r - L) * L;
        auto const weight = [&](std::int64_t k) { return static_cast<C>(is_a ? x[k * L + r] : y[k * N + (r - L)]); };
        isa_dispatch_same_bits([&]() FUSEKIT_LAMBDA_INLINE {
          std::int64_t k = k0;
          // Four rows per pass over out: the same additions in the same order,
          // out[j] kept in a register between them.
          for (; k + 4 <= k1; k += 4) {
            C const s0 = weight(k), s1 = weight(k + 1), s2 = weight(k + 2), s3 = weight(k + 3);
            const T* const x0 = x + k * L;
            const T* const x1 = x0 + L;
            const T* const x2 = x1 + L;
            const T* const x3 = x2 + L;
            for (std::int64_t j = from; j < L; ++j) {
              C v = out[j] + s0 * static_cast<C>(x0[j]);
              v = v + s1 * static_cast<C>(x1[j]);
              v = v + s2 * static_cast<C>(x2[j]);
              out[j] = v + s3 * static_cast<C>(x3[j]);
            }
          }
          for (; k < k1; ++k) {
            C const sk = weight(k);
            const T* const xk = x + k * L;
            for (std::int64_t j = from; j < L; ++j) { out[j] = out[j] + sk * static_cast<C>(xk[j]); }
          }
        });
      }
      // Each row of A and B is one thread's for every block (static schedule,
      // same count): no barrier is needed between blocks.
    }
  }
  for (std::int64_t i = 0; i < L; ++i) {
    for (std::int64_t j = 0; j < i; ++j) { a[i * L + j] = a[j * L + i]; }
  }
}

/// b_n = Xᵀy_n for every n (B: N × L) in C, sums over k in order.
template <class C, class T>
void cpu_rhs(int threads, matrix<const T> X, matrix<const T> Y, std::vector<C>& B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  B.assign(static_cast<std::size_t>(N * L), C(0));
  const T* const x = X.data_handle();
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (K * L * N >= cpu_parallel_threshold)
#endif
  for (std::int64_t n = 0; n < N; ++n) {
    C* const out = B.data() + n * L;
    for (std::int64_t k = 0; k < K; ++k) {
      C const yk = static_cast<C>(Y.data_handle()[k * N + n]);
      for (std::int64_t l = 0; l < L; ++l) { out[l] = out[l] + yk * static_cast<C>(x[k * L + l]); }
    }
  }
}

/// out = X·v (K values) in C, each row summed over l in order.
template <class C, class T>
void rows_times(matrix<const T> X, const C* v, C* out) {
  std::int64_t const K = X.extent(0), L = X.extent(1);
  const T* const x = X.data_handle();
  for (std::int64_t k = 0; k < K; ++k) {
    C s = C(0);
    for (std::int64_t l = 0; l < L; ++l) { s = s + static_cast<C>(x[k * L + l]) * v[l]; }
    out[k] = s;
  }
}

/// out = Xᵀ·v (L values) in C, each summed over k in order.
template <class C, class T>
void columns_times(matrix<const T> X, const C* v, C* out) {
  std::int64_t const K = X.extent(0), L = X.extent(1);
  const T* const x = X.data_handle();
  for (std::int64_t l = 0; l < L; ++l) { out[l] = C(0); }
  for (std::int64_t k = 0; k < K; ++k) {
    C const d = v[k];
    for (std::int64_t l = 0; l < L; ++l) { out[l] = out[l] + static_cast<C>(x[k * L + l]) * d; }
  }
}

/// The direct formulation's gradient, the user's two products: delta = X·point − y_n,
/// g = Xᵀ·delta, sums in index order.
template <class C, class T>
void direct_gradient(matrix<const T> X, matrix<const T> Y, std::int64_t n, const C* point, C* delta, C* g) {
  std::int64_t const K = X.extent(0), N = Y.extent(1);
  rows_times(X, point, delta);
  for (std::int64_t k = 0; k < K; ++k) { delta[k] = delta[k] - static_cast<C>(Y.data_handle()[k * N + n]); }
  columns_times(X, delta, g);
}

/// u = S Xᵀ(X S v) in double, XᵀX applied without forming it (the direct
/// formulation's operator for the power iteration); S = diag(scale), or I when
/// scale is null; t holds K doubles and sv L. `sum(u, L)` follows XᵀX's
/// product (a sum over MPI ranks; `no_processes` for one).
template <class T, class Sum>
struct normal_operator {
  matrix<const T> X;
  double* t;
  double* sv;
  const double* scale;
  Sum sum;
  FUSEKIT_HD void operator()(const double* v, double* u) const {
    std::int64_t const K = X.extent(0), L = X.extent(1);
    for (std::int64_t l = 0; l < L; ++l) { sv[l] = scale != nullptr ? scale[l] * v[l] : v[l]; }
    for (std::int64_t k = 0; k < K; ++k) {
      double s = 0;
      for (std::int64_t l = 0; l < L; ++l) { s += static_cast<double>(X(k, l)) * sv[l]; }
      t[k] = s;
    }
    for (std::int64_t l = 0; l < L; ++l) { u[l] = 0; }
    for (std::int64_t k = 0; k < K; ++k) {
      for (std::int64_t l = 0; l < L; ++l) { u[l] += static_cast<double>(X(k, l)) * t[k]; }
    }
    sum(u, L);
    if (scale != nullptr) {
      for (std::int64_t l = 0; l < L; ++l) { u[l] = scale[l] * u[l]; }
    }
  }
};

/// One process: nothing to sum over processes.
struct no_processes {
  template <class V>
  FUSEKIT_HD void operator()(V*, std::int64_t) const {}
};

/// λ of XᵀX without forming it (the direct formulation); with `scale` (L
/// values, or null), of S XᵀX S. `sum` as in normal_operator.
template <class T, class Sum>
double cpu_direct_power_iteration(matrix<const T> X, const double* scale, const Sum& sum) {
  std::int64_t const L = X.extent(1);
  std::vector<double> v(static_cast<std::size_t>(L)), u(v.size()), t(static_cast<std::size_t>(X.extent(0))),
      sv(v.size());
  return power_iteration(serial_team{}, L, v.data(), u.data(),
                         normal_operator<T, Sum>{X, t.data(), sv.data(), scale, sum});
}

/// y_n's values, k < K, in C (column n of Y, K × N).
template <class T, class C>
struct column_of {
  const T* data;
  std::int64_t stride;
  FUSEKIT_HD FUSEKIT_FORCEINLINE C operator()(std::int64_t k) const { return static_cast<C>(data[k * stride]); }
};

/// A reference to element k.
template <class C>
struct reference_of {
  C* data;
  FUSEKIT_HD FUSEKIT_FORCEINLINE C& operator()(std::int64_t k) const { return data[k]; }
};

/// What every output's iterations read, in C: A and B (B = YᵀX, row n is b_n,
/// made for every formulation: the stopping rules need b_n), the diagonal of
/// XᵀX (direct), and c of the rounding floor (descent.hpp).
template <class C>
struct cpu_system {
  bool gram = false;
  std::vector<C> A, B, diagonal;
  double floor_multiplier = 0;  ///< L + 1 (Gram) or 2(K + L) (direct)

  /// XᵀX's diagonal as the steps read it (the preconditioner and the metric).
  [[nodiscard]] diagonal_scaling<C> scaling(const descent_params<C>& p, std::int64_t L) const {
    return gram ? make_scaling(p, A.data(), L + 1) : make_scaling(p, diagonal.data(), 1);
  }
};

/// The system of a fit on this process's rows. `sum(values, count)` sums C
/// values over the processes (MPI; nothing for one), and `total_rows` is K over
/// all of them.
template <class C, class T, class SumOverProcesses>
cpu_system<C> make_cpu_system(int threads, bool gram, matrix<const T> X, matrix<const T> Y, std::int64_t total_rows,
                              const SumOverProcesses& sum) {
  std::int64_t const L = X.extent(1), N = Y.extent(1);
  cpu_system<C> sys;
  sys.gram = gram;
  if (gram) {
    cpu_gram(threads, X, Y, sys.A, sys.B);
    sum(sys.A.data(), L * L);
    sum(sys.B.data(), N * L);
    sys.floor_multiplier = static_cast<double>(L + 1);
    return sys;
  }
  cpu_rhs(threads, X, Y, sys.B);
  sum(sys.B.data(), N * L);
  std::int64_t const K = X.extent(0);
  sys.diagonal.assign(static_cast<std::size_t>(L), C(0));
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t l = 0; l < L; ++l) {
      C const v = static_cast<C>(X(k, l));
      sys.diagonal[l] = sys.diagonal[l] + v * v;
    }
  }
  sum(sys.diagonal.data(), L);
  sys.floor_multiplier = 2.0 * static_cast<double>(total_rows + L);
  return sys;
}

/// The learning rate of a fit: the caller's, unused by CG, else 1/λmax of
/// XᵀX (of M^½ XᵀX M^½ with Jacobi), a positive finite C, by the power
/// iteration on A (Gram) or by `direct_lambda(scale)` (direct: scale is M^½'s
/// diagonal, or null).
template <class C, class DirectLambda>
double cpu_learning_rate(const gd_options& o, const cpu_system<C>& sys, std::int64_t L,
                         const DirectLambda& direct_lambda) {
  if (o.learning_rate) { return *o.learning_rate; }
  if (o.method == gd_method::conjugate_gradient) { return 0.0; }
  bool const jacobi = o.preconditioner == gd_preconditioner::jacobi;
  if (sys.gram) {
    std::vector<double> v(static_cast<std::size_t>(L)), u(v.size());
    return automatic_learning_rate<C>(
        symmetric_power_iteration(serial_team{}, sys.A.data(), L, v.data(), u.data(), jacobi));
  }
  std::vector<double> scale;
  if (jacobi) {
    for (const C d : sys.diagonal) { scale.push_back(std::sqrt(static_cast<double>(jacobi_entry(d)))); }
  }
  return automatic_learning_rate<C>(direct_lambda(jacobi ? scale.data() : nullptr));
}

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

/// A sum over this process's rows turned into the sum over every process's
/// (`sum(values, count)`, nothing for one process).
template <class Sum>
struct total_over_processes {
  Sum sum;
  template <class C>
  FUSEKIT_HD C operator()(C value) const {
    sum(&value, 1);
    return value;
  }
};

/// One CGLS call of output n (detail/conjugate_gradient.hpp): q = X d, the
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
            total_over_processes<SumOverProcesses>{sum});
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
  report.path = "cpu";
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

}  // namespace detail
}  // namespace fusekit
