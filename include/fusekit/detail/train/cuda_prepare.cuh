// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Ridge, an intercept, sample weights and the rescaling of columns in
/// extreme units on the GPU backends (`fusekit::cuda`, `fusekit::cuda_staged`,
/// and each rank of `fusekit::nccl`, detail/distributed/nccl.cuh): the CPU's
/// preparation (detail/train/prepare.hpp), then the GPU's fit over it.
///
/// * Every fit takes its columns' ranges first: on the device for device data
///   (column_range_kernel, one thread per range column and slice of rows,
///   whose body `column_range_thread` the CPU tests run over every block and
///   thread; 2L + N values per slice come back), on the host for host data.
///   Maxima are exact: the ranges, and so the decision below, are the CPU's.
/// * A fit with no ridge, no intercept, no weights and no column in extreme
///   units is the plain GPU fit, in T, on the data as given.
/// * Otherwise X, Y and the weights are read back to the host and prepared
///   there as on the CPU, in double: the same copy, bit for bit. The copy
///   (K rows, and L more for a ridge) goes to the device and the fit runs on
///   it in double, as the CPU's runs in double; W and the intercepts are
///   scaled back and written from it. The cost over a plain fit: X and Y
///   copied each way (the copy in double) and one pass over them on the host.

#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/core/memory_space.hpp>
#include <fusekit/detail/train/checks.hpp>
#include <fusekit/detail/train/conjugate_gradient.hpp>
#include <fusekit/detail/train/prepare.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/train_types.hpp>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// The range kernel: column_range_thread (column_ranges.hpp) for each thread.
template <class T>
__global__ void column_range_kernel(const T* X, const T* Y, std::int64_t K, std::int64_t L, std::int64_t N,
                                    std::int64_t rows, std::int64_t column_blocks, double* partial) {
  column_range_thread(X, Y, K, L, N, rows, column_blocks, blockIdx.x, threadIdx.x, partial);
}

/// column_ranges (column_ranges.hpp) of device X and Y, on the policy's stream
/// (synchronizes); the partial ranges from `arena` when one is given, given back after.
template <class T>
std::vector<double> device_column_ranges(const cuda& policy, matrix<const T> X, matrix<const T> Y,
                                         workspace_arena* arena = nullptr) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1), C = 2 * L + N;
  std::int64_t const rows = column_range_rows(K, C), slices = (K + rows - 1) / rows;
  std::int64_t const column_blocks = (C + column_range_threads - 1) / column_range_threads;
  if (slices == 0) { return std::vector<double>(static_cast<std::size_t>(C), -HUGE_VAL); }
  std::size_t const mark = arena != nullptr ? arena->mark() : 0;
  stream_buffer<double> const partial(policy, slices * C, arena);
  launch(column_range_kernel<T>, slices * column_blocks, column_range_threads, 0, policy.stream, X.data_handle(),
         Y.data_handle(), K, L, N, rows, column_blocks, partial.get());
  std::vector<double> host(static_cast<std::size_t>(slices * C));
  FUSEKIT_CUDA_TRY(
      cudaMemcpyAsync(host.data(), partial.get(), host.size() * sizeof(double), cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  if (arena != nullptr) { arena->release(mark); }
  return merge_column_ranges(host, slices, C);
}

/// n values at `from` (device or host memory) in host memory: a copy on the
/// policy's stream (synchronizes) where `from` is on the device.
template <class T>
std::vector<T> host_copy(const cuda& policy, const T* from, std::int64_t n) {
  std::vector<T> to(static_cast<std::size_t>(n));
  if (n > 0) {
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(to.data(), from, to.size() * sizeof(T), cudaMemcpyDefault, policy.stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  }
  return to;
}

/// n host values into `to` (device or host memory), on the policy's stream (synchronizes).
template <class T>
void copy_from_host(const cuda& policy, T* to, const T* from, std::int64_t n) {
  if (n > 0) {
    FUSEKIT_CUDA_TRY(
        cudaMemcpyAsync(to, from, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyDefault, policy.stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  }
}

/// Counts and locates non-finite values in host memory, one by one (the
/// weights, read back for their checks).
struct host_non_finite_counter {
  template <class T>
  std::int64_t operator()(::cuda::std::span<const T> values) const {
    std::int64_t bad = 0;
    for (const T v : values) { bad += is_finite(v) ? 0 : 1; }
    return bad;
  }
  template <class T>
  first_non_finite<T> locate(::cuda::std::span<const T> values) const {
    return cpu_first_non_finite(values.data(), values.size());
  }
};

/// A fit's extras in host memory: the weights read back (their checks and
/// the preparation read them one by one) and the intercepts, zero until the
/// fit writes them.
template <class T>
struct host_extras {
  std::vector<T> weights, intercept;
  void read(const cuda& policy, const fit_extras<T>& e) {
    weights = host_copy(policy, e.sample_weight.data(), static_cast<std::int64_t>(e.sample_weight.size()));
    intercept.assign(e.intercept.size(), T(0));
  }
  [[nodiscard]] fit_extras<T> view() {
    return {::cuda::std::span<const T>(weights.data(), weights.size()),
            ::cuda::std::span<T>(intercept.data(), intercept.size())};
  }
};

/// The GPU's fit of the prepared copy (host memory, in double): the copy on
/// the device, the plain fit on it (`fit_on_device(Xd, Yd, Wd, options)`),
/// and Wp read back, also when the fit throws. The copy's device buffers come
/// from `arena` when one is given (a caller's workspace).
template <class FitOnDevice>
fit_report fit_prepared_on_device(const cuda& policy, matrix<const double> Xp, matrix<const double> Yp,
                                  matrix<double> Wp, const gd_options& options, const FitOnDevice& fit_on_device,
                                  workspace_arena* arena = nullptr) {
  std::int64_t const rows = Xp.extent(0), L = Xp.extent(1), N = Yp.extent(1);
  stream_buffer<double> const x(policy, rows * L, arena), y(policy, rows * N, arena), w(policy, N * L, arena);
  copy_from_host(policy, x.get(), Xp.data_handle(), rows * L);
  copy_from_host(policy, y.get(), Yp.data_handle(), rows * N);
  copy_from_host(policy, w.get(), Wp.data_handle(), N * L);
  matrix<const double> const Xd(x.get(), rows, L), Yd(y.get(), rows, N);
  matrix<double> const Wd(w.get(), N, L);
  auto const read_back = [&] {
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(Wp.data_handle(), w.get(), static_cast<std::size_t>(N * L) * sizeof(double),
                                     cudaMemcpyDeviceToHost, policy.stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  };
  fit_report report;
  try {
    report = fit_on_device(Xd, Yd, Wd, options);
  } catch (...) {  // a progress callback that throws: W at the iterate reached
    read_back();
    throw;
  }
  read_back();
  return report;
}

/// X and Y (device or host memory) in host memory, copied where they are on the device.
template <class T>
struct host_rows {
  std::vector<T> copy;
  matrix<const T> view;
  host_rows(const cuda& policy, matrix<const T> M) : view(M) {
    if (M.data_handle() != nullptr && memory_space_of(M.data_handle()) == memory_space::device) {
      copy = host_copy(policy, M.data_handle(), M.extent(0) * M.extent(1));
      view = matrix<const T>(copy.data(), M.extent(0), M.extent(1));
    }
  }
};

/// The exponents of the preparation (exponents_from_ranges) of X and Y,
/// device or host memory: the ranges on the device where both are there
/// (device_column_ranges, its partial ranges from `arena` when one is
/// given), else on the host; `max` takes them over the processes.
template <class T, class MaxOverProcesses>
std::vector<int> gpu_column_exponents(const cuda& policy, matrix<const T> X, matrix<const T> Y, const gd_options& o,
                                      const MaxOverProcesses& max, std::vector<double>& high, std::vector<double>& low,
                                      std::vector<double>& y_largest, workspace_arena* arena = nullptr) {
  auto const on_device = [](const void* p) { return memory_space_of(p) == memory_space::device; };
  std::vector<double> range;
  if (on_device(X.data_handle()) && on_device(Y.data_handle())) {
    range = device_column_ranges(policy, X, Y, arena);
  } else {
    range = column_ranges(host_rows<T>(policy, X).view, host_rows<T>(policy, Y).view);
  }
  max(range.data(), static_cast<std::int64_t>(range.size()));
  return exponents_from_ranges(range, X.extent(1), o, high, low, y_largest);
}

/// A GPU fit through the prepared copy (prepare_and_fit), X, Y and W in
/// device or host memory: X, Y and W read back where they are on the device;
/// `fit_on_device(Xd, Yd, Wd, options)` fits the copy on the device; W and
/// the intercepts are written back (into `intercept` from host_extras'),
/// also when the fit throws. `sum`, `max`, `total_rows` and `ridge_rows` as
/// prepare_and_fit takes them; the copy's device buffers from `arena` when
/// one is given.
template <class T, class SumOverProcesses, class MaxOverProcesses, class FitOnDevice>
fit_report gpu_prepared_fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                            const fit_extras<T>& host_extras, ::cuda::std::span<T> intercept, bool weighted,
                            std::int64_t total_rows, const column_bounds& bounds, bool ridge_rows,
                            const SumOverProcesses& sum, const MaxOverProcesses& max, const FitOnDevice& fit_on_device,
                            workspace_arena* arena = nullptr) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  host_rows<T> const Xh(policy, X), Yh(policy, Y);
  std::vector<T> w = host_copy(policy, static_cast<const T*>(W.data_handle()), N * L);  // a warm start's W
  matrix<T> const Wh(w.data(), N, L);
  auto const write = [&] {
    copy_from_host(policy, W.data_handle(), w.data(), N * L);
    copy_from_host(policy, intercept.data(), host_extras.intercept.data(),
                   static_cast<std::int64_t>(host_extras.intercept.size()));
  };
  fit_report report;
  try {
    report = prepare_and_fit(Xh.view, Yh.view, Wh, o, host_extras, weighted, total_rows, bounds, ridge_rows, sum, max,
                             [&](auto Xp, auto Yp, auto Wp, const gd_options& options, std::int64_t) {
                               return fit_prepared_on_device(policy, Xp, Yp, Wp, options, fit_on_device, arena);
                             });
  } catch (...) {
    write();  // W at the iterate reached, as prepare_and_fit left it
    throw;
  }
  write();
  return report;
}

/// `fit` with its extras on a GPU policy P (fusekit::cuda: every view in
/// device memory; fusekit::cuda_staged: anywhere). Checks every argument, then
/// takes the columns' ranges; without a preparation (see the file comment)
/// `plain()` fits the data as given, else the prepared copy is fitted by
/// `fit_on_device(Xd, Yd, Wd, options)`, the GPU's plain fit over device
/// data in double. `count` counts X's, Y's and W's non-finite values
/// (checks.hpp); `arena`, when given, holds the ranges' and the copy's device
/// buffers (a caller's workspace).
template <class P, class T, class PlainFit, class FitOnDevice, class Count>
fit_report gpu_fit_with_extras(const P& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                               const fit_extras<T>& e, const PlainFit& plain, const FitOnDevice& fit_on_device,
                               const Count& count, workspace_arena* arena = nullptr) {
  const char* const f = "fusekit::fit";
  std::int64_t const K = X.extent(0), N = Y.extent(1);
  check_fit_arguments(X, Y, W, o, false, e);
  check_fit_extras_sizes(e, o, K, N);  // every check that reads no value, before any CUDA call
  if constexpr (!std::is_same_v<P, cuda_staged>) {
    expect_device_memory(f, "X", X.data_handle());
    expect_device_memory(f, "Y", Y.data_handle());
    expect_device_memory(f, "W", W.data_handle());
    if (!e.sample_weight.empty()) { expect_device_memory(f, "sample_weight", e.sample_weight.data()); }
    if (!e.intercept.empty()) { expect_device_memory(f, "intercept", e.intercept.data()); }
  }
  host_extras<T> on_host;  // the weights' checks read them one by one: on the host
  on_host.read(policy, e);
  check_fit_extras(on_host.view(), o, K, N, host_non_finite_counter{});
  check_fit_values(X, Y, W, o, count);

  std::vector<double> high, low, y_largest;
  std::vector<int> const exponents = gpu_column_exponents(policy, X, Y, o, no_processes{}, high, low, y_largest, arena);
  bool const weighted = !e.sample_weight.empty();
  if (!needs_preparation(weighted, o, exponents)) {
    copy_from_host(policy, e.intercept.data(), on_host.intercept.data(),
                   static_cast<std::int64_t>(on_host.intercept.size()));
    return plain();  // no intercept: b = 0, as documented
  }
  return gpu_prepared_fit(policy, X, Y, W, o, on_host.view(), e.intercept, weighted, K, {high, low, y_largest}, true,
                          no_processes{}, no_processes{}, fit_on_device, arena);
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
