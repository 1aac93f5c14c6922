// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `fit` and `predict` with both backends (include from nvcc and link
/// `fusekit::train`, which adds cuBLAS), and the entry points only the GPU has:
/// a `fit` whose temporaries come from a caller's workspace.
///
///     std::size_t bytes = fusekit::fit_workspace_bytes<float>(K, L, N, options);
///     // ... bytes of device memory in `ws`, allocated once ...
///     fusekit::fit_report r = fusekit::fit(fusekit::cuda{stream}, X, Y, W, options, ws);

#include <fusekit/detail/train/cuda.cuh>
#include <fusekit/train.hpp>

#include <cuda/std/span>

#include <cstddef>
#include <cstdint>

namespace fusekit {

/// Bytes of device workspace `fit` needs for X of K × L, N outputs and these
/// options, whichever GPU path it takes, cuBLAS's workspace included
/// (`train_tuning::cublas_workspace_bytes`: pass the policy's tuning when it
/// changes that; the default is enough on every device). Asks no device. It
/// covers the prepared copy in double that a fit with ridge, an intercept,
/// sample weights or a column in extreme units fits ((K + L) × (L + N) + N × L
/// doubles with a ridge, K × (L + N) + N × L without) and that fit's own
/// buffers in double: which fits need it is known only from the values.
template <class T>
std::size_t fit_workspace_bytes(std::int64_t K, std::int64_t L, std::int64_t N, const gd_options& options = {},
                                const tuning& t = tuning{}) {
  detail::check_train_type<T>();
  return detail::fit_workspace_bytes_for<T>(K, L, N, options, t);
}

/// `fit` on the GPU allocating no device memory through the policy's
/// resource: every device temporary comes from `workspace` (at least
/// `fit_workspace_bytes<T>(K, L, N, options)` bytes of device memory, sharing
/// no byte with X, Y, W or the extras), cuBLAS's workspace too (set on the
/// handle after every bind to a stream). The same algorithm as the `fit`s
/// without a workspace: ridge, an intercept and sample weights (`extras`, in
/// device memory) and the rescaling of columns in extreme units included.
/// The fit reads the stream's results on the host between its steps, as
/// every fit does, so it is not captured in a CUDA graph.
template <class T>
fit_report fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& options,
               const fit_extras<T>& extras, ::cuda::std::span<std::byte> workspace) {
  detail::check_train_type<T>();
  return detail::cuda_workspace_fit(policy, X, Y, W, options, extras, workspace);
}

/// ... without extras.
template <class T>
fit_report fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& options,
               ::cuda::std::span<std::byte> workspace) {
  return fusekit::fit(policy, X, Y, W, options, fit_extras<T>{}, workspace);
}

}  // namespace fusekit
