// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Where memory lives: the one enum every layer uses. A container's type can
/// say it at compile time (detail/core/ranges.hpp: a thrust::device_vector is
/// device memory, a std::vector pageable host memory, a span or a raw pointer
/// `unknown`); `fusekit::cuda` asks the driver at run time
/// (detail/host_data/cuda_driver.cuh's memory_space_of: device, pinned or
/// pageable, never unknown), and the host-data pipeline moves a view by it.

#include <cstdint>

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

}  // namespace core
}  // namespace detail
}  // namespace fusekit
