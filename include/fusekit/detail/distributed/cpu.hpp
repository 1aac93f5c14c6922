// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU's part of the distributed tree (detail/distributed/tree.hpp): the
/// tile results a rank computes over its own values and the tail it received,
/// with the single-process tree's tile code (detail/reduce/cpu.hpp).

#include <fusekit/detail/reduce/cpu.hpp>
#include <fusekit/detail/distributed/tree.hpp>

#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace distributed {

/// This rank's tile results over its values (`local`, indexed from 0) and the
/// tail it received: what one process computes for tiles [first_tile, end_tile).
template <class Acc, class Src, class Op>
std::vector<Acc> owned_tile_results(const cpu& policy, const Src& local, const shard& me, const Acc* tail,
                                    const tree_exchange& x, const Op& op) {
  std::vector<Acc> tiles(static_cast<std::size_t>(x.end_tile - x.first_tile));
  if (!tiles.empty()) {
    cpu_tree_tiles(policy, stitched_source<Acc, Src>{local, me.offset, me.size, tail}, op, x.n, x.first_tile,
                   x.end_tile, tiles.data());
  }
  return tiles;
}

}  // namespace distributed
}  // namespace detail
}  // namespace fusekit
