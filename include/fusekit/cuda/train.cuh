// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the trainer (contract in train.hpp). Link `fusekit::train`
/// (fusekit plus cuBLAS) to use it.
///
/// Both paths build A = XᵀX (and, for the Gram formulation, B = YᵀX) once with
/// cuBLAS, and find the automatic learning rate once: the power iteration of
/// detail/power_iteration.hpp in one block (λ is checked on the host before
/// anything writes W). Then every iteration is the descent step of
/// detail/descent.hpp on a `block_team`, the code the CPU tests run:
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
/// `fit` returns a host report, so it synchronizes the policy's stream.
///
/// Host-resident data (cuda/pipeline.cuh). With the Gram formulation, `fit`
/// streams X and Y through the GPU in chunks of rows and accumulates A = XᵀX
/// and B = YᵀX chunk by chunk (one GEMM each, β = 1 after the first), so K can
/// exceed the GPU's memory; the iterations then run on the L × L system on the
/// device. The chunks depend on K, L, N and the tuning only, so the result has
/// the same bits from run to run; it differs from the one-shot GEMM by the
/// order of the additions, within |ΔA_ij| ≤ 2 K u Σ_k |x_ki x_kj| (u: the unit
/// roundoff of T). The direct formulation reads X at every step: on host data
/// it copies X and Y to the device once. W in host memory is copied in and
/// back. `predict` streams X and Ŷ by rows.

#include <fusekit/cuda/buffer.cuh>
#include <fusekit/cuda/cublas.cuh>
#include <fusekit/cuda/graph.cuh>
#include <fusekit/cuda/launch.cuh>
#include <fusekit/cuda/pipeline.cuh>
#include <fusekit/cuda/reduce.cuh>
#include <fusekit/cuda/team.cuh>
#include <fusekit/cuda/train_kernels.cuh>
#include <fusekit/detail/descent.hpp>
#include <fusekit/detail/dispatch.hpp>
#include <fusekit/detail/power_iteration.hpp>
#include <fusekit/detail/train_checks.hpp>
#include <fusekit/tuning.hpp>

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fusekit {
namespace detail {

// This file is the GPU backend of these algorithms (see detail/dispatch.hpp).
template <>
struct backend_available<fit_tag, cuda> : std::true_type {};
template <>
struct backend_available<predict_tag, cuda> : std::true_type {};

/// A = XᵀX (L × L) and, when B is not null, B = YᵀX (N × L: row n is b_n = Xᵀ y_n).
/// Every fit makes both: the stopping rules read ‖A‖, diag(A) and b_n.
/// Row-major X (K × L) is column-major Xᶜ (L × K), so A = Xᶜ Xᶜᵀ and Bᶜ (L × N) = Xᶜ Yᶜᵀ.
template <class T>
void gram_matrices(cublasHandle_t h, matrix<const T> X, matrix<const T> Y, T* A, T* B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, L, K, T(1), X.data_handle(), L, X.data_handle(), L, T(0), A, L);
  if (B != nullptr) {
    gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), X.data_handle(), L, Y.data_handle(), N, T(0), B, L);
  }
}

/// A and B as `gram_matrices` makes them, for X and Y anywhere: the rows go
/// through the host-data pipeline and each chunk adds its GEMMs to A and B.
template <class T>
void streamed_gram_matrices(const cuda& policy, const cublas_context& cublas, matrix<const T> X, matrix<const T> Y,
                            T* A, T* B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  std::array<pipeline_view, 2> const rows{
      pipeline_view{reinterpret_cast<const std::byte*>(X.data_handle()), static_cast<std::size_t>(L) * sizeof(T),
                    memory_space_of(X.data_handle())},
      pipeline_view{reinterpret_cast<const std::byte*>(Y.data_handle()), static_cast<std::size_t>(N) * sizeof(T),
                    memory_space_of(Y.data_handle())}};
  cublasHandle_t const h = cublas.on(policy.stream);
  run_pipeline(policy, K, 1, rows, pipeline_view{},
               [&](cudaStream_t, std::int64_t chunk, std::int64_t, std::int64_t count,
                   const std::array<const std::byte*, 2>& in, std::byte*) {
                 auto const x = reinterpret_cast<const T*>(in[0]);
                 auto const y = reinterpret_cast<const T*>(in[1]);
                 T const beta = chunk == 0 ? T(0) : T(1);
                 gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, L, count, T(1), x, L, x, L, beta, A, L);
                 if (B != nullptr) { gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, count, T(1), x, L, y, N, beta, B, L); }
               });
}

/// Every device temporary of a fit, taken in one fixed order from the
/// policy's resource or from a caller's workspace (`arena`); with a measuring
/// arena, what a workspace must hold. A null size is a buffer the path does not use.
template <class T>
struct fit_buffers {
  stream_buffer<std::byte> cublas_workspace;  ///< cuBLAS's (train_tuning::cublas_workspace_bytes)
  stream_buffer<T> A, B;                      ///< XᵀX; YᵀX
  stream_buffer<double> power;                ///< the power iteration's two vectors and λ
  stream_buffer<output_report> reports;       ///< single launch
  stream_buffer<T> D, previous, point, G;     ///< cuBLAS path: residual (direct), iterates, gradients
  stream_buffer<T> Q;                         ///< cuBLAS path, CGLS: X·Pᵀ (K × N)
  stream_buffer<descent_state<T>> states;     ///< cuBLAS path
  stream_buffer<int> running;                 ///< cuBLAS path

  fit_buffers(const cuda& policy, workspace_arena* arena, std::int64_t K, std::int64_t L, std::int64_t N, bool gram,
              bool automatic_rate, bool single, std::int64_t cublas_bytes, bool cgls = false)
      : cublas_workspace(policy, cublas_bytes, arena),
        A(policy, L * L, arena),
        B(policy, N * L, arena),
        power(policy, automatic_rate ? 2 * L + 1 : 0, arena),
        reports(policy, single ? N : 0, arena),
        D(policy, single || gram ? 0 : K * N, arena),
        previous(policy, single ? 0 : N * L, arena),
        point(policy, single ? 0 : N * L, arena),
        G(policy, single ? 0 : N * L, arena),
        Q(policy, cgls ? K * N : 0, arena),
        states(policy, single ? 0 : N, arena),
        running(policy, single ? 0 : 1, arena) {}
};

/// The outputs' states, copied to the host (synchronizes).
template <class T>
std::vector<descent_state<T>> read_states(const cuda& policy, const fit_buffers<T>& buf, std::int64_t N) {
  std::vector<descent_state<T>> states(static_cast<std::size_t>(N));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(states.data(), buf.states.get(), states.size() * sizeof(descent_state<T>),
                                   cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  return states;
}

/// Where the outputs stand after `done` iterations, for `gd_options::progress`.
template <class T>
fit_progress progress_of(const std::vector<descent_state<T>>& states, std::int64_t done) {
  fit_progress now;
  now.iteration = done;
  for (const auto& s : states) {
    if (s.running) {
      ++now.running;
      now.worst_grad_norm2 = s.report.grad_norm2 > now.worst_grad_norm2 ? s.report.grad_norm2 : now.worst_grad_norm2;
    }
  }
  return now;
}

/// Every iteration of the cuBLAS path; returns each output's state.
template <class T>
std::vector<descent_state<T>> cublas_iterations(const cuda& policy, const train_tuning& tuning,
                                                const cublas_context& cublas, matrix<const T> X, matrix<const T> Y,
                                                matrix<T> W, const fit_buffers<T>& buf, bool gram,
                                                const descent_params<T>& p,
                                                const std::function<void(const fit_progress&)>& progress) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  cudaStream_t const stream = policy.stream;
  const T* const A = buf.A.get();
  const T* const B = buf.B.get();
  int const block = train_block_size(L, tuning.max_block_threads);
  launch(begin_outputs_kernel<T>, N, block, 0, stream, buf.states.get(), W.data_handle(), buf.previous.get(),
         buf.point.get(), A, B, Y.data_handle(), K, N, L, gram, p);

  // One batch: `iterations` steps; only the last counts the outputs still running.
  bool const cgls = !gram && p.method == gd_method::conjugate_gradient;
  auto const enqueue_batch = [&](cudaStream_t s, std::int64_t iterations) {
    cublasHandle_t const h = cublas.on(s);
    FUSEKIT_CUDA_TRY(cudaMemsetAsync(buf.running.get(), 0, sizeof(int), s));
    const T* x = X.data_handle();
    for (std::int64_t b = 0; b < iterations; ++b) {
      if (cgls) {
        // Q = X Pᵀ (K × N) as Qᶜ = Pᶜᵀ Xᶜ; the rows' residual ρ (in D); Gᶜ (L × N) = Xᶜ ρᶜᵀ: r = Xᵀρ.
        gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, N, K, L, T(1), buf.point.get(), L, x, L, T(0), buf.Q.get(), N);
        launch(cgls_rows_kernel<T>, N, block, 0, s, buf.states.get(), W.data_handle(),
               static_cast<const T*>(buf.point.get()), static_cast<const T*>(buf.Q.get()), buf.D.get(), Y.data_handle(),
               K, N, L);
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), x, L, buf.D.get(), N, T(0), buf.G.get(), L);
      } else if (gram) {
        // Gᶜ (L × N) = Aᶜ Pᶜ, A symmetric; the step subtracts b_n.
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, L, N, L, T(1), A, L, buf.point.get(), L, T(0), buf.G.get(), L);
      } else {
        // D = X Pᵀ − Y (K × N), as Dᶜ = Pᶜᵀ Xᶜ − Yᶜ (N × K); then Gᶜ = Xᶜ Dᶜᵀ (L × N).
        FUSEKIT_CUDA_TRY(cudaMemcpyAsync(buf.D.get(), Y.data_handle(), static_cast<std::size_t>(K * N) * sizeof(T),
                                         cudaMemcpyDeviceToDevice, s));
        gemm<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, N, K, L, T(1), buf.point.get(), L, x, L, T(-1), buf.D.get(), N);
        gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, L, N, K, T(1), x, L, buf.D.get(), N, T(0), buf.G.get(), L);
      }
      launch(step_outputs_kernel<T>, N, block, 0, s, buf.states.get(), W.data_handle(), buf.previous.get(),
             buf.point.get(), static_cast<const T*>(buf.G.get()), A, B, gram, L, p,
             b + 1 == iterations ? buf.running.get() : nullptr);
    }
  };

  std::int64_t const check_every = tuning.batch_iterations;
  // CG's calls that update nothing (its start, and the check of b − A w that
  // follows an update meeting a tolerance; detail/conjugate_gradient.hpp) come
  // on top of the updates: at most one per update, and one more.
  std::int64_t const calls = p.method == gd_method::conjugate_gradient ? 2 * p.max_iterations + 1 : p.max_iterations;
  captured_graph full_batch;
  int running_host = 1;
  for (std::int64_t done = 0; done < calls && running_host > 0;) {
    std::int64_t const batch = calls - done < check_every ? calls - done : check_every;
    if (batch == check_every && done > 0) {  // the first batch also warms cuBLAS up before a capture
      if (full_batch.empty()) {
        full_batch.capture([&](cudaStream_t s) { enqueue_batch(s, check_every); });
      }
      full_batch.launch(stream);
    } else {
      enqueue_batch(stream, batch);
    }
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&running_host, buf.running.get(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    done += batch;
    if (progress) { progress(progress_of(read_states(policy, buf, N), done)); }
  }
  (void)cublas.on(stream);  // off the capture's side stream, which is gone
  return read_states(policy, buf, N);
}

/// Whether the single-launch path fits: A and one output's state, beside the
/// kernel's static shared memory, in what a block may opt in to on the current device.
template <class T>
bool single_launch_fits(std::int64_t L) {
  cudaFuncAttributes a{};
  FUSEKIT_CUDA_TRY(cudaFuncGetAttributes(&a, fit_single_launch_kernel<T>));
  return single_launch_shared_bytes<T>(L) + a.sharedSizeBytes <=
         static_cast<std::size_t>(attributes_of(current_device()).max_shared_per_block_optin);
}

/// The path `fit` takes; tests and benchmarks force one.
enum class fit_path { automatic, single_launch, cublas };

/// Counts non-finite values on the GPU with the temporaries in `arena`, giving
/// them back after each count (the fit's own buffers come later).
struct arena_non_finite_counter {
  const cuda& policy;
  workspace_arena* arena;
  template <class T>
  std::int64_t operator()(::cuda::std::span<const T> values) const {
    std::size_t const mark = arena->mark();
    std::int64_t const bad = device_scalar_result<std::int64_t>(
        policy,
        [&](std::int64_t* out) {
          gpu_reduce(policy, make_transform_source<std::int64_t>(count_non_finite{}, values),
                     static_cast<std::int64_t>(values.size()), out, reduce_algorithm::deterministic, plus{},
                     std::int64_t{0}, arena);
        },
        arena);
    arena->release(mark);
    return bad;
  }
};

/// Bytes of workspace a fit of these sizes and options needs on the GPU,
/// whichever path it takes, cuBLAS's workspace included (no device is asked).
template <class T>
std::size_t fit_workspace_bytes_for(std::int64_t K, std::int64_t L, std::int64_t N, const gd_options& o,
                                    const tuning& t = tuning{}) {
  const char* const f = "fusekit::fit_workspace_bytes";
  std::int64_t const counts[] = {checked_elements(f, "X (K x L)", K, L, sizeof(T)),
                                 checked_elements(f, "Y (K x N)", K, N, sizeof(T)),
                                 checked_elements(f, "W (N x L)", N, L, sizeof(T))};
  workspace_arena arena = workspace_arena::measure();
  for (std::int64_t values : counts) {  // as arena_non_finite_counter takes them, for X, Y and W
    std::size_t const mark = arena.mark();
    arena.take(sizeof(std::int64_t));
    arena.take(tree_temp_bytes<std::int64_t>(values));
    arena.release(mark);
  }
  bool const gram = resolve_formulation(o.formulation, K, L) == gd_formulation::gram;
  for (bool single : {false, gram}) {
    fit_buffers<T> const measured(cuda{}, &arena, K, L, N, gram, !o.learning_rate, single,
                                  t.train.cublas_workspace_bytes, !gram && o.method == gd_method::conjugate_gradient);
    arena.release(0);
  }
  return arena.bytes_needed();
}

template <class T, class MakeGram>
fit_report gpu_fit_checked(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                           fit_path forced, workspace_arena* from, const MakeGram& make_gram);

template <class T>
fit_report gpu_fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                   fit_path forced, ::cuda::std::span<std::byte> workspace = {}) {
  const char* const f = "fusekit::fit";
  workspace_arena arena(workspace, f);
  workspace_arena* const from = workspace.data() != nullptr ? &arena : nullptr;
  if (from != nullptr) {
    // Sized without asking the device (the check comes before any CUDA call): the
    // policy's tuning, or the default, which no device's tuning_for exceeds.
    std::size_t const needed =
        fit_workspace_bytes_for<T>(X.extent(0), X.extent(1), Y.extent(1), o, policy.tuned ? policy.tune : tuning{});
    FUSEKIT_EXPECTS(workspace.size() >= needed, std::string(f) + ": workspace has " + std::to_string(workspace.size()) +
                                                    " bytes but needs " + std::to_string(needed) +
                                                    " (ask fit_workspace_bytes)");
    named_range const w = describe("workspace", workspace);
    for (const auto& m : {describe_matrix(f, "X", X), describe_matrix(f, "Y", Y), describe_matrix(f, "W", W)}) {
      expect_disjoint(f, w, m);
    }
    check_fit(X, Y, W, o, arena_non_finite_counter{policy, &arena});
  } else {
    check_fit(X, Y, W, o, non_finite_counter<cuda>{policy});
  }
  return gpu_fit_checked(policy, X, Y, W, o, forced, from, [&](const cublas_context& cublas, T* A, T* B) {
    gram_matrices<T>(cublas.on(policy.stream), X, Y, A, B);
  });
}

/// The fit after its checks, with A (and B) made by `make_gram(cublas, A, B)`;
/// W, and X and Y where the direct formulation reads them, are device memory.
template <class T, class MakeGram>
fit_report gpu_fit_checked(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                           fit_path forced, workspace_arena* from, const MakeGram& make_gram) {
  std::int64_t const L = X.extent(1), N = Y.extent(1);
  cudaStream_t const stream = policy.stream;
  train_tuning const tuning = tuning_of(policy).train;
  FUSEKIT_EXPECTS(tuning.cublas_workspace_bytes >= 0, "fusekit::fit: tuning.train.cublas_workspace_bytes must be >= 0");
  gd_formulation const formulation = resolve_formulation(o.formulation, X.extent(0), L);
  bool const single =
      forced == fit_path::single_launch ||
      (forced == fit_path::automatic && formulation == gd_formulation::gram && single_launch_fits<T>(L));
  if (single) {
    FUSEKIT_EXPECTS(single_launch_fits<T>(L),
                    "fusekit::fit: the single-launch path needs A = XᵀX in shared memory; L = " + std::to_string(L) +
                        " is too large on this device");
  }
  bool const gram = single || formulation == gd_formulation::gram;
  bool const cgls = !gram && o.method == gd_method::conjugate_gradient;
  fit_buffers<T> const buf(policy, from, X.extent(0), L, N, gram, !o.learning_rate, single,
                           tuning.cublas_workspace_bytes, cgls);

  cublas_context const cublas{cublas_handle(), buf.cublas_workspace.get(),
                              static_cast<std::size_t>(tuning.cublas_workspace_bytes)};
  make_gram(cublas, buf.A.get(), buf.B.get());
  // The automatic rate: λmax on the device, checked here before anything writes W.
  double learning_rate = o.learning_rate ? *o.learning_rate : 0.0;
  if (!o.learning_rate && o.method != gd_method::conjugate_gradient) {
    double* const power = buf.power.get();
    launch(power_iteration_kernel<T>, 1, train_block_size(L, tuning.power_iteration_max_threads), 0, stream,
           static_cast<const T*>(buf.A.get()), L, power, power + L, power + 2 * L,
           o.preconditioner == gd_preconditioner::jacobi);
    double lambda = 0;
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&lambda, power + 2 * L, sizeof(double), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    learning_rate = automatic_learning_rate<T>(lambda);
  }
  descent_params<T> const p = make_descent_params<T>(
      o, learning_rate, gram ? static_cast<double>(L + 1) : 2.0 * static_cast<double>(X.extent(0) + L));

  fit_report report;
  report.learning_rate = learning_rate;
  report.formulation = gram ? gd_formulation::gram : gd_formulation::direct;
  report.path = single ? "single_launch" : "cublas";
  report.outputs.resize(static_cast<std::size_t>(N));
  if (single) {
    std::size_t const shared = single_launch_shared_bytes<T>(L);
    auto const kernel = fit_single_launch_kernel<T>;
    FUSEKIT_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
    launch(kernel, N, train_block_size(L, tuning.max_block_threads), shared, stream, static_cast<const T*>(buf.A.get()),
           static_cast<const T*>(buf.B.get()), W.data_handle(), L, p, buf.reports.get());
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(report.outputs.data(), buf.reports.get(),
                                     report.outputs.size() * sizeof(output_report), cudaMemcpyDeviceToHost, stream));
  } else {
    auto const states = cublas_iterations<T>(policy, tuning, cublas, X, Y, W, buf, gram, p, o.progress);
    for (std::size_t n = 0; n < states.size(); ++n) { report.outputs[n] = states[n].report; }
  }
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  if (single && o.progress) {  // one launch: the only host check is the end
    fit_progress end;
    end.iteration = report.most_iterations();
    o.progress(end);
  }
  return report;
}

/// n values of T copied to the device in stream order (a view of `from` itself when it is device memory).
template <class T>
struct on_device {
  on_device(const cuda& policy, T* from, std::int64_t n, memory_space space)
      : copy(policy, space == memory_space::device ? 0 : n), data(space == memory_space::device ? from : copy.get()) {
    if (space != memory_space::device && n > 0) {
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(copy.get(), from, static_cast<std::size_t>(n) * sizeof(T),
                                       cudaMemcpyHostToDevice, policy.stream));
    }
  }
  stream_buffer<std::remove_const_t<T>> copy;
  T* data;
};

/// `fit` with X, Y and W anywhere (see the file comment for host memory).
template <class T>
fit_report gpu_fit_anywhere(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                            fit_path forced = fit_path::automatic) {
  // Shapes and options first (no device asked), then X, Y and W finite, wherever they are.
  check_fit(X, Y, W, o, non_finite_counter<cuda>{policy});
  memory_space const xs = memory_space_of(X.data_handle()), ys = memory_space_of(Y.data_handle()),
                     ws = memory_space_of(W.data_handle());
  if (xs == memory_space::device && ys == memory_space::device && ws == memory_space::device) {
    return gpu_fit_checked(policy, X, Y, W, o, forced, nullptr, [&](const cublas_context& cublas, T* A, T* B) {
      gram_matrices<T>(cublas.on(policy.stream), X, Y, A, B);
    });
  }
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  on_device<T> const w(policy, W.data_handle(), N * L, ws);
  matrix<T> const Wd(w.data, N, L);
  fit_report report;
  bool const streamed = (xs != memory_space::device || ys != memory_space::device) &&
                        resolve_formulation(o.formulation, K, L) == gd_formulation::gram;
  if (streamed) {
    report = gpu_fit_checked(policy, X, Y, Wd, o, forced, nullptr, [&](const cublas_context& cublas, T* A, T* B) {
      streamed_gram_matrices<T>(policy, cublas, X, Y, A, B);
    });
  } else {  // direct: X and Y on the device once
    on_device<const T> const x(policy, X.data_handle(), K * L, xs);
    on_device<const T> const y(policy, Y.data_handle(), K * N, ys);
    matrix<const T> const Xd(x.data, K, L), Yd(y.data, K, N);
    report = gpu_fit_checked(policy, Xd, Yd, Wd, o, forced, nullptr, [&](const cublas_context& cublas, T* A, T* B) {
      gram_matrices<T>(cublas.on(policy.stream), Xd, Yd, A, B);
    });
  }
  if (ws != memory_space::device) {
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(W.data_handle(), Wd.data_handle(), static_cast<std::size_t>(N * L) * sizeof(T),
                                     cudaMemcpyDeviceToHost, policy.stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  }
  return report;
}

template <class T>
fit_report run(fit_tag, const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o) {
  return gpu_fit_anywhere(policy, X, Y, W, o);
}

template <class T>
void run(predict_tag, const cuda& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  check_predict(X, W, Y_hat);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
  if (K * N == 0) { return; }  // nothing to write: nothing is launched or asked of the device
  auto const kernel = predict_kernel<T>;
  int const block = tuning_of(policy).elementwise.block_threads;
  pipeline_view const x{reinterpret_cast<const std::byte*>(X.data_handle()), static_cast<std::size_t>(L) * sizeof(T),
                        memory_space_of(X.data_handle())};
  pipeline_view const y{reinterpret_cast<const std::byte*>(Y_hat.data_handle()),
                        static_cast<std::size_t>(N) * sizeof(T), memory_space_of(Y_hat.data_handle())};
  memory_space const ws = memory_space_of(W.data_handle());
  if (x.space == memory_space::device && y.space == memory_space::device && ws == memory_space::device) {
    launch(kernel, resident_grid(kernel, K * N, block), block, 0, policy.stream, X.data_handle(), W.data_handle(),
           Y_hat.data_handle(), K, L, N);
    return;
  }
  on_device<const T> const w(policy, W.data_handle(), N * L, ws);
  run_pipeline(policy, K, 1, std::array<pipeline_view, 1>{x}, y,
               [&](cudaStream_t s, std::int64_t, std::int64_t, std::int64_t rows,
                   const std::array<const std::byte*, 1>& in, std::byte* out) {
                 launch(kernel, resident_grid(kernel, rows * N, block), block, 0, s, reinterpret_cast<const T*>(in[0]),
                        w.data, reinterpret_cast<T*>(out), rows, L, N);
               });
}

}  // namespace detail
}  // namespace fusekit
