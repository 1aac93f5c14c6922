// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The fixed order of `reduce_algorithm::deterministic`: ONE definition of the
/// tile reduction, run by the CPU backend (serial_team, detail/team/cpu_team.hpp) and by the
/// GPU tree kernel (block_team). The order depends on n only — never on the
/// grid, the GPU or the thread count — so every backend gives the same bits.
///
///   level:  n values → ceil(n / 8192) tile sums, until one value is left
///   tile:   256 lanes; lane l combines elements l, l+256, ..., l+31·256 of the
///           tile in that order (missing elements of the last tile are skipped)
///           then lane[l] ⊕= lane[l + s] for s = 128, 64, ..., 1 (empty lanes skipped)
///   end:    init ⊕ the one value left (for a sum, init = +0: the total is never −0)
///
/// For a sum each ⊕ is one IEEE round-to-nearest add in the accumulator type
/// (`add_rn`: never fused with a product the source computes), on both sides,
/// so results are bit-identical; for min and max, and every exact operation,
/// too. These constants define the bits: they are not tuning, and changing one
/// changes every deterministic sum.
///
/// The GPU runs one tile per block, so a level of `tiles` tiles wants `tiles`
/// blocks, capped at the blocks resident at once (`tree_level_grid`); the grid
/// never changes the order.

#include <fusekit/config.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/detail/core/grid_size.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/detail/base/rounding.hpp>

#include <cstdint>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace reduce {

/// The tree's shape: 256 lanes of 32 values per tile. It defines the order of
/// every addition, and with it the bits of every deterministic result on every
/// backend: fixed, not a tuning (tests/reduce/pinned_sums_test.cpp pins them).
inline constexpr int tree_lanes = 256;
inline constexpr int tree_per_lane = 32;
inline constexpr std::int64_t tree_tile = std::int64_t{tree_lanes} * tree_per_lane;  // 8192

/// Values left after one level of the tree over n values.
FUSEKIT_HD constexpr std::int64_t tree_level_size(std::int64_t n) { return (n + tree_tile - 1) / tree_tile; }

/// Blocks for one level of the tree over n values on a device with `sm_count`
/// multiprocessors holding `blocks_per_sm` tree blocks each: one block per tile,
/// at most the resident blocks (the kernel's tile loop strides over the rest).
constexpr int tree_level_grid(std::int64_t n, int sm_count, int blocks_per_sm) {
  return grid_size(tree_level_size(n), 1, sm_count, blocks_per_sm);
}

/// Levels until one value is left (0 for n ≤ 1).
FUSEKIT_HD constexpr int tree_levels(std::int64_t n) {
  int levels = 0;
  while (n > 1) {
    n = tree_level_size(n);
    ++levels;
  }
  return levels;
}

/// The reduction of tile `tile` of the n values `src(i)` with `op`, in the
/// tree's order, by a team (detail/team/team.hpp); `lane` is 256 accumulators the
/// team shares. Missing elements of the last tile are skipped, as are the lanes
/// they leave empty. The result is the leader's; the team may reuse `lane`
/// once this returns.
template <class Acc, class Team, class Src, class Op>
FUSEKIT_HD FUSEKIT_FORCEINLINE Acc tree_tile_reduce(const Team& team, Acc* lane, const Src& src, const Op& op,
                                                    std::int64_t tile, std::int64_t n) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  std::int64_t const base = tile * tree_tile;
  auto const value = [&](int row, std::int64_t l) { return src(base + std::int64_t{row} * tree_lanes + l); };
  tile_access<Src> const access{src, base, n};
  if (base + tree_tile <= n) {
    team.template column_reduce<tree_per_lane>(
        lane, [](int) { return std::int64_t{tree_lanes}; }, value, op, access);
  } else {
    auto const count = [&](int row) {
      std::int64_t const left = n - base - std::int64_t{row} * tree_lanes;
      return left < 0 ? std::int64_t{0} : (left < tree_lanes ? left : std::int64_t{tree_lanes});
    };
    team.template column_reduce<tree_per_lane>(lane, count, value, op, access);
  }
  team.sync();
  std::int64_t const filled = n - base < tree_lanes ? n - base : std::int64_t{tree_lanes};
  for (int s = tree_lanes / 2; s >= 1; s /= 2) {
    // lane[l] ⊕= lane[l + s] for the l < s whose partner is filled: l < min(s, filled − s).
    std::int64_t const pairs = filled - s < s ? filled - s : s;
    team.combine_pairs(lane, pairs > 0 ? pairs : 0, s, op);
    team.sync();
  }
  Acc const total = lane[0];
  team.sync();
  return total;
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
