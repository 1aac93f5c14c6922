// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the trainer (contract in train.hpp). Link `fusekit::train`
/// (fusekit plus cuBLAS) to use it.
///
/// Both paths build A = XᵀX (and, for the Gram formulation, B = YᵀX) once with
/// cuBLAS, and find the automatic learning rate once: the power iteration of
/// detail/train/power_iteration.hpp in one block (λ is checked on the host before
/// anything writes W). Then every iteration is the descent step of
/// detail/train/descent.hpp on a `block_team`, the code the CPU tests run:
///
/// * single launch: when A and one output's state fit in shared memory (about
///   L ≤ 160 in double, L ≤ 230 in float on an H100/H200), ONE kernel runs every
///   iteration of every output: block n copies A and b_n into its shared memory
///   and iterates output n to the end.
/// * cuBLAS: otherwise, per iteration one GEMM for all outputs' gradients (two
///   for `direct`) and one launch of the step for every output, which keeps
///   each output's state on the device. Iterations run in batches of
///   `train_tuning::batch_iterations` — the first launched one by one, the
///   others replayed from a CUDA graph — and the host reads how many outputs
///   still run after each batch's last step only. Conjugate gradients run
///   the same way: Gram CG with one GEMM (A·d) per iteration, CGLS with two
///   (X·d, then Xᵀρ) around the update of the rows' residual.
///
/// A refinement (gd_options::refinement_steps, Gram fits) takes R = Y − X Wᵀ
/// and B = RᵀX by two GEMMs per step and runs the same path again on the
/// kept A (detail/train/cuda_refinement.cuh).
///
/// `fit` returns a host report, so it synchronizes the policy's stream.
///
/// Device memory only (one pointer query each for X, Y and W, and for
/// predict's X, W and Ŷ); `fusekit::cuda_staged` takes host memory
/// (detail/train/cuda_staged.cuh).

#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/reduce/cuda.cuh>
#include <fusekit/detail/train/checks.hpp>
#include <fusekit/detail/train/cuda_buffers.cuh>
#include <fusekit/detail/train/cuda_iterations.cuh>
#include <fusekit/detail/train/cuda_prepare.cuh>
#include <fusekit/detail/train/cuda_refinement.cuh>
#include <fusekit/detail/train/cuda_system.cuh>
#include <fusekit/detail/train/power_iteration.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fusekit {
namespace detail {

// This file is the GPU backend of these algorithms (see detail/core/dispatch.hpp).
template <>
struct backend_available<fit_tag, cuda> : std::true_type {};
template <>
struct backend_available<predict_tag, cuda> : std::true_type {};

inline namespace train {

template <class T>
first_non_finite<T> device_first_non_finite(const cuda& policy, ::cuda::std::span<const T> values) {
  constexpr std::size_t slice = std::size_t{1} << 16;
  std::vector<T> host(values.size() < slice ? values.size() : slice);
  for (std::size_t at = 0; at < values.size(); at += slice) {
    std::size_t const n = values.size() - at < slice ? values.size() - at : slice;
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(host.data(), values.data() + at, n * sizeof(T), cudaMemcpyDefault, policy.stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
    first_non_finite<T> const first = cpu_first_non_finite(host.data(), n);
    if (first.index >= 0) { return {static_cast<std::int64_t>(at) + first.index, first.value}; }
  }
  return {};
}

/// Counts non-finite values on the GPU with the temporaries in `arena`, giving
/// them back after each count (the fit's own buffers come later).
struct arena_non_finite_counter {
  const cuda& policy;
  workspace_arena* arena;
  template <class T>
  first_non_finite<T> locate(::cuda::std::span<const T> values) const {
    return device_first_non_finite(policy, values);
  }
  template <class T>
  std::int64_t operator()(::cuda::std::span<const T> values) const {
    std::size_t const mark = arena->mark();
    std::int64_t const bad = device_scalar_result<std::int64_t>(
        policy,
        [&](std::int64_t* out) {
          cuda_reduce(policy, make_transform_source<std::int64_t>(count_non_finite{}, values),
                      static_cast<std::int64_t>(values.size()), out, deterministic{}, plus{}, std::int64_t{0}, arena);
        },
        arena);
    arena->release(mark);
    return bad;
  }
};

/// Takes from `arena`, and gives back, the buffers of each path a fit of K
/// rows in T may take (on device data, whose X a fit may leave A for).
template <class T>
void measure_fit_buffers(workspace_arena& arena, std::int64_t K, std::int64_t L, std::int64_t N, const gd_options& o,
                         const tuning& t) {
  std::size_t const mark = arena.mark();
  bool const gram = resolve_formulation(o.formulation, K, L) == gd_formulation::gram;
  for (bool single : {false, gram}) {
    gpu_fit_plan const plan = plan_gpu_fit<T>(K, L, o, true, fixed_path{single});
    fit_buffers<T> const measured(cuda{}, &arena, K, L, N, plan, !o.learning_rate, t.train.cublas_workspace_bytes,
                                  K * N);  // the refinement's R, as device_system takes it
    arena.release(mark);
  }
}

/// Bytes of workspace a fit of these sizes and options needs on the GPU,
/// whichever path it takes, cuBLAS's workspace included (no device is
/// asked): the checks' counts, then the columns' ranges, then the larger of
/// the fit of the data as given and the fit of the prepared copy in double
/// (ridge, an intercept, weights or a column in extreme units:
/// detail/train/cuda_prepare.cuh), in the order `cuda_workspace_fit` takes them.
template <class T>
std::size_t fit_workspace_bytes_for(std::int64_t K, std::int64_t L, std::int64_t N, const gd_options& o,
                                    const tuning& t = tuning{}) {
  const char* const f = "fusekit::fit_workspace_bytes";
  std::int64_t const counts[] = {checked_elements(f, "X (K x L)", K, L, sizeof(T)),
                                 checked_elements(f, "Y (K x N)", K, N, sizeof(T)),
                                 checked_elements(f, "W (N x L)", N, L, sizeof(T))};
  std::int64_t const rows = K + (has_ridge(o) ? L : 0);  // the prepared copy's, with the ridge's L rows
  std::int64_t const copy[] = {checked_elements(f, "the prepared copy of X", rows, L, sizeof(double)),
                               checked_elements(f, "the prepared copy of Y", rows, N, sizeof(double)), N * L};
  workspace_arena arena = workspace_arena::measure();
  for (std::int64_t values : counts) {  // as arena_non_finite_counter takes them, for X, Y and W
    std::size_t const mark = arena.mark();
    arena.take(sizeof(std::int64_t));
    arena.take(tree_temp_bytes<std::int64_t>(values));
    arena.release(mark);
  }
  std::int64_t const C = 2 * L + N, slices = K > 0 ? (K + column_range_rows(K, C) - 1) / column_range_rows(K, C) : 0;
  arena.take(static_cast<std::size_t>(slices * C) * sizeof(double));  // device_column_ranges' partial ranges
  arena.release(0);
  measure_fit_buffers<T>(arena, K, L, N, o, t);
  for (std::int64_t values : copy) { arena.take(static_cast<std::size_t>(values) * sizeof(double)); }
  measure_fit_buffers<double>(arena, rows, L, N, o, t);
  return arena.bytes_needed();
}

template <class T, class System, class Path>
fit_report cuda_fit_checked(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                            workspace_arena* from, const System& system, const Path& path);

/// The plain `fit` over device memory (checked: one pointer query each for
/// X, Y and W; no extras, no rescaling), on the path `path` chooses: tests
/// and the benchmark run one path with it.
template <class T, class Path = automatic_path>
fit_report cuda_fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                    const Path& path = {}) {
  const char* const f = "fusekit::fit";
  check_fit_arguments(X, Y, W, o);
  expect_device_memory(f, "X", X.data_handle());
  expect_device_memory(f, "Y", Y.data_handle());
  expect_device_memory(f, "W", W.data_handle());
  check_fit_values(X, Y, W, o, non_finite_counter<cuda>{policy});
  return cuda_fit_checked(policy, X, Y, W, o, nullptr, device_system<T>{X, Y, policy.stream}, path);
}

/// `fit` on fusekit::cuda with every device temporary from a caller's
/// workspace, extras and rescaling included (`run_fit`'s algorithm): the
/// workspace is checked against fit_workspace_bytes_for before any CUDA call.
template <class T>
fit_report cuda_workspace_fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W,
                              const gd_options& o, const fit_extras<T>& e, ::cuda::std::span<std::byte> workspace) {
  const char* const f = "fusekit::fit";
  check_fit_arguments(X, Y, W, o, false, e);
  // Sized without asking the device: the policy's tuning, or the default, which no device's tuning_for exceeds.
  std::size_t const needed =
      fit_workspace_bytes_for<T>(X.extent(0), X.extent(1), Y.extent(1), o, policy.tuned ? policy.tune : tuning{});
  FUSEKIT_EXPECTS(workspace.data() != nullptr && workspace.size() >= needed,
                  std::string(f) + ": workspace has " + std::to_string(workspace.size()) + " bytes but needs " +
                      std::to_string(needed) + " (ask fit_workspace_bytes)");
  expect_apart(
      f, {describe("workspace", workspace), describe_matrix(f, "W", W), describe_values("intercept", e.intercept)},
      {describe_matrix(f, "X", X), describe_matrix(f, "Y", Y), describe_values("sample_weight", e.sample_weight)});
  workspace_arena arena(workspace, f);
  return gpu_fit_with_extras(
      policy, X, Y, W, o, e,
      [&] {
        return cuda_fit_checked(policy, X, Y, W, o, &arena, device_system<T>{X, Y, policy.stream}, automatic_path{});
      },
      [&](matrix<const double> Xd, matrix<const double> Yd, matrix<double> Wd, const gd_options& options) {
        return cuda_fit_checked(policy, Xd, Yd, Wd, options, &arena, device_system<double>{Xd, Yd, policy.stream},
                                automatic_path{});
      },
      arena_non_finite_counter{policy, &arena}, &arena);
}

/// The fit after its checks, with A and B, and a refinement's B, made by
/// `system` (detail/train/cuda_refinement.cuh); W, and X and Y where the direct
/// formulation reads them, are device memory.
template <class T, class System, class Path>
fit_report cuda_fit_checked(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                            workspace_arena* from, const System& system, const Path& path) {
  std::int64_t const L = X.extent(1), N = Y.extent(1);
  cudaStream_t const stream = policy.stream;
  train_tuning const tuning = tuning_of(policy).train;
  FUSEKIT_EXPECTS(tuning.cublas_workspace_bytes >= 0, "fusekit::fit: tuning.train.cublas_workspace_bytes must be >= 0");
  gpu_fit_plan plan = plan_gpu_fit<T>(system.total_rows(), L, o, system.rows_on_device(), path);
  plan.ranks = System::ranks;
  bool const single = plan.single;
  if (single) {
    FUSEKIT_EXPECTS(single_launch_fits<T>(L),
                    "fusekit::fit: the single-launch path needs A = XᵀX in shared memory; L = " + std::to_string(L) +
                        " is too large on this device");
  }
  fit_buffers<T> const buf(policy, from, X.extent(0), L, N, plan, !o.learning_rate, tuning.cublas_workspace_bytes,
                           system.residual_scratch());

  cublas_context const cublas{cublas_handle(), buf.cublas_workspace.get(),
                              static_cast<std::size_t>(tuning.cublas_workspace_bytes)};
  system.gram(cublas, buf.A.get(), buf.B.get());
  // The Cholesky factor of A on the device (one block: detail/train/cholesky.hpp);
  // as on the CPU (cpu_system::leaves_gram), a shifted or tiny-pivot factor
  // sends an automatic formulation from A to CGLS on X, preconditioned by it.
  bool gram = plan.gram;
  if (plan.cholesky) {
    double* const f = buf.factor.get();
    launch(cholesky_factor_kernel<T>, 1, train_block_size(L, tuning.power_iteration_max_threads), 0, stream,
           static_cast<const T*>(buf.A.get()), L, f, f + L * L, f + L * L + L);
    double outcome[2] = {0, 0};
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(outcome, f + L * L + L, sizeof(outcome), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    gram = !(plan.may_leave && (outcome[0] != 0 || outcome[1] < gram_pivot_limit));
  }
  bool const refine = plan.refine && gram;
  // The rows CGLS reads, on the device (on host data, copied there now).
  std::array<matrix<const T>, 2> const rows = gram ? std::array<matrix<const T>, 2>{X, Y} : system.device_rows();
  // The automatic rate: λmax on the device, checked here before anything writes W.
  double learning_rate = o.learning_rate ? *o.learning_rate : 0.0;
  if (!o.learning_rate && o.method != gd_method::conjugate_gradient) {
    double* const power = buf.power.get();
    launch(power_iteration_kernel<T>, 1, train_block_size(L, tuning.power_iteration_max_threads), 0, stream,
           static_cast<const T*>(buf.A.get()), L, power, power + L, power + 2 * L,
           o.preconditioner != gd_preconditioner::none);
    double lambda = 0;
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&lambda, power + 2 * L, sizeof(double), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    learning_rate = automatic_learning_rate<T>(lambda);
  }
  double const floor_multiplier =
      gram ? static_cast<double>(L + 1) : 2.0 * static_cast<double>(system.total_rows() + L);

  fit_report report;
  if (plan.cholesky) { report.preconditioner = gd_preconditioner::cholesky; }
  report.learning_rate = learning_rate;
  report.formulation = gram ? gd_formulation::gram : gd_formulation::direct;
  report.path = single ? fusekit::fit_path::single_launch : fusekit::fit_path::cublas;
  // Every output's iterations from W_on's start, on the path taken (synchronizes);
  // `track`: each output's start and best iterate kept for the best-iterate rule.
  using progress_fn = std::function<void(const fit_progress&)>;
  auto const iterate = [&](matrix<T> W_on, descent_params<T> p, const progress_fn& progress, bool track = false) {
    p.jacobi = p.jacobi && !plan.cholesky;  // the factor in Jacobi's place, as on the CPU
    std::vector<output_report> outputs(static_cast<std::size_t>(N));
    if (single) {
      std::size_t const shared = single_launch_shared_bytes<T>(L);
      auto const kernel = fit_single_launch_kernel<T>;
      FUSEKIT_CUDA_TRY(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
      launch(kernel, N, train_block_size(L, tuning.max_block_threads), shared, stream,
             static_cast<const T*>(buf.A.get()), static_cast<const T*>(buf.B.get()), W_on.data_handle(), L, p,
             buf.reports.get(), buf.cholesky(L), buf.kept(track));
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(outputs.data(), buf.reports.get(), outputs.size() * sizeof(output_report),
                                       cudaMemcpyDeviceToHost, stream));
    } else {
      auto const states =
          cublas_iterations<T>(policy, tuning, cublas, rows[0], rows[1], W_on, buf, gram, p, progress, track, system);
      for (std::size_t n = 0; n < states.size(); ++n) { outputs[n] = states[n].report; }
    }
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    if (single && progress) {  // one launch: the only host check is the end
      fit_progress end;
      for (const output_report& out : outputs) { end.add(out, false); }
      progress(end);
    }
    return outputs;
  };
  report.outputs = iterate(W, make_descent_params<T>(o, learning_rate, floor_multiplier), o.progress, true);
  // Never worse than the best iterate (gd_options; detail/train/cuda_best_iterate.cuh).
  gpu_keep_best_iterate(policy, system, buf, W, report);
  if (refine) {
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(buf.before.get(), W.data_handle(), static_cast<std::size_t>(N * L) * sizeof(T),
                                     cudaMemcpyDeviceToDevice, stream));
    std::vector<output_report> const reported = report.outputs;
    cuda_refine(policy, cublas, system, buf, W, o, learning_rate, floor_multiplier, iterate, report);
    gpu_keep_refinement_if_better(policy, system, buf, W, reported, report);
  }
  return report;
}

/// The GPU's fit hook, on `fusekit::cuda` (device memory) and
/// `fusekit::cuda_staged` (X, Y and W anywhere: `staged_fit`,
/// detail/train/cuda_staged.cuh), with ridge, an intercept, sample weights
/// and the rescaling of extreme units (detail/train/cuda_prepare.cuh).
template <class P, class T, std::enable_if_t<is_gpu_policy_v<P>, int> = 0>
fit_report run_fit(fit_tag, const P& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                   const fit_extras<T>& e = {}) {
  auto const prepared = [&](matrix<const double> Xd, matrix<const double> Yd, matrix<double> Wd,
                            const gd_options& options) {
    return cuda_fit_checked(static_cast<const cuda&>(policy), Xd, Yd, Wd, options, nullptr,
                            device_system<double>{Xd, Yd, policy.stream}, automatic_path{});
  };
  non_finite_counter<P> const count{policy};
  if constexpr (std::is_same_v<P, cuda_staged>) {
    return gpu_fit_with_extras(
        policy, X, Y, W, o, e, [&] { return staged_fit(fit_tag{}, policy, X, Y, W, o); }, prepared, count);
  } else {
    return gpu_fit_with_extras(
        policy, X, Y, W, o, e,
        [&] {
          return cuda_fit_checked(policy, X, Y, W, o, nullptr, device_system<T>{X, Y, policy.stream}, automatic_path{});
        },
        prepared, count);
  }
}

/// The GPU's predict hook, as `run_fit` (cuda_staged: `staged_predict`);
/// `b`: the intercepts, device memory on fusekit::cuda (empty: none).
template <class P, class T, std::enable_if_t<is_gpu_policy_v<P>, int> = 0>
void run_predict(predict_tag, const P& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat,
                 ::cuda::std::span<const T> b = {}) {
  if constexpr (std::is_same_v<P, cuda_staged>) {
    staged_predict(predict_tag{}, policy, X, W, Y_hat, b);
  } else {
    const char* const f = "fusekit::predict";
    check_predict(X, W, Y_hat, b);
    std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
    if (K * N == 0) { return; }  // nothing to write: nothing is launched or asked of the device
    expect_device_memory(f, "X", X.data_handle());
    expect_device_memory(f, "W", W.data_handle());
    expect_device_memory(f, "Y_hat", Y_hat.data_handle());
    if (!b.empty()) { expect_device_memory(f, "intercept", b.data()); }
    launch_predict(policy.stream, tuning_of(policy).elementwise.block_threads, X.data_handle(), W.data_handle(),
                   b.empty() ? nullptr : b.data(), Y_hat.data_handle(), K, L, N);
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
