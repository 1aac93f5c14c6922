// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Where memory lives: the one enum every layer uses. A container's type can
/// say it at compile time (detail/core/ranges.hpp: a thrust::device_vector is
/// device memory, a std::vector pageable host memory, a span or a raw pointer
/// `unknown`); `fusekit::cuda` asks the CUDA runtime (`memory_space_of`
/// here: device, pinned or pageable, never unknown), and the host-data
/// pipeline moves a view by it.

#include <fusekit/config.hpp>

#if FUSEKIT_HAS_CUDA_HEADERS
#include <fusekit/error.hpp>

#include <cuda_runtime_api.h>
#endif

#include <cstdint>
#include <string>

namespace fusekit {
namespace detail {
inline namespace core {

/// Where a view's memory lives, as a call must treat it.
enum class memory_space : std::uint8_t {
  device,    ///< device or managed memory: kernels read and write it in place
  pinned,    ///< page-locked host memory: copied by DMA
  pageable,  ///< ordinary host memory: staged through pinned buffers
  unknown,   ///< not known from a type alone (a span, a raw pointer)
};

#if FUSEKIT_HAS_CUDA_HEADERS
/// The memory space of `p` (null, for an empty view: device).
inline memory_space memory_space_of(const void* p) {
  if (p == nullptr) { return memory_space::device; }
  cudaPointerAttributes a{};
  FUSEKIT_CUDA_TRY(cudaPointerGetAttributes(&a, p));
  switch (a.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      return memory_space::device;
    case cudaMemoryTypeHost:
      return memory_space::pinned;
    default:
      return memory_space::pageable;
  }
}

/// The device path's check of where a view lives (`fusekit::cuda` takes
/// device memory only): one cudaPointerGetAttributes for `p`, a host call
/// that does not synchronize. Host memory is rejected naming the policy that
/// stages it.
inline void expect_device_memory(const char* function, const char* name, const void* p) {
  FUSEKIT_EXPECTS(memory_space_of(p) == memory_space::device,
                  std::string(function) + ": " + name +
                      " is host memory, and fusekit::cuda reads device memory only: use "
                      "fusekit::cuda_staged{stream} (<fusekit/host_data.cuh>), which copies host memory in pipelined "
                      "chunks, or copy it to the device first");
}
#endif

}  // namespace core
}  // namespace detail
}  // namespace fusekit
