// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Execution policies. Every fusekit algorithm takes one as its first argument.
///
/// * `fusekit::cuda{stream}` — runs on the current CUDA device, asynchronously on
///   `stream` (default: the legacy default stream). A call never synchronizes
///   unless it returns a host value and says so.
/// * `fusekit::cpu{threads}` — runs on the host with OpenMP (`threads == 0`: the
///   OpenMP default; without OpenMP, one thread). Synchronous. A negative count
///   throws `fusekit::invalid_argument`; more than 4 threads per processor are
///   clamped to 4 per processor. Small calls run on the calling thread alone.

#include <fusekit/config.hpp>
#include <fusekit/error.hpp>

#include <cuda_runtime_api.h>

namespace fusekit {

/// Run on the current CUDA device, in stream order on `stream`.
struct cuda {
  cudaStream_t stream = nullptr;
};

/// Run on the host. `threads == 0` lets OpenMP choose; see the file comment for the limits.
struct cpu {
  int threads = 0;
};

/// Number of CUDA devices usable by this process; 0 when there is none or no
/// driver (`cudaGetDeviceCount` fails and leaves its output unwritten then).
inline int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

/// Whether a CUDA device is present (the examples pick their policy with it).
inline bool has_cuda_device() noexcept { return cuda_device_count() > 0; }

}  // namespace fusekit
