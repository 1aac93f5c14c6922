// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Grid sizes for kernels that grid-stride with 64-bit indices. Plain C++: the
/// deterministic tree sizes its levels with it on every backend. The device
/// attributes the grids are sized from are queried in detail/core/cuda_launch.cuh.

#include <fusekit/config.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace core {

/// Blocks for `items` work items of which one block takes `items_per_block`
/// per pass (its thread count when each thread takes one item, 1 when each
/// block takes a whole tile): enough to cover them, capped at the blocks the
/// device holds at once (`sm_count · blocks_per_sm`); the kernel's grid-stride
/// loop covers the rest. 0 items: 0 blocks, and `launch` launches nothing.
constexpr int grid_size(std::int64_t items, std::int64_t items_per_block, int sm_count, int blocks_per_sm) {
  if (items <= 0) { return 0; }
  std::int64_t const per_block = items_per_block > 0 ? items_per_block : 1;
  std::int64_t const needed = (items + per_block - 1) / per_block;
  std::int64_t const resident =
      static_cast<std::int64_t>(sm_count > 0 ? sm_count : 1) * (blocks_per_sm > 0 ? blocks_per_sm : 1);
  return static_cast<int>(needed < resident ? needed : resident);
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
