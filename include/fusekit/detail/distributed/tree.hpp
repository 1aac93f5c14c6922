// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The deterministic tree over data split across ranks, as plain C++: which
/// values move where, and what each rank computes. The transport (MPI, NCCL)
/// only carries what this plans, so the CPU tests check the whole algorithm
/// with the ranks simulated in one process.
///
/// The tree's order depends on n alone (detail/reduce/tree.hpp): level one sums
/// tiles of 8192 consecutive values. A tile belongs to the rank that holds its
/// first value. A rank whose shard does not start on a tile boundary sends its
/// *head* — the values before its first boundary, all of them when it holds
/// none — to the owner of the tile they belong to, which appends the heads it
/// receives, in the order of the senders' offsets, as the *tail* of its last
/// tile. Each owner then sums its tiles exactly as one process would; only the
/// tile sums travel after that, and every rank finishes the upper levels over
/// all of them. The result has the bits of the single-process sum, on every
/// rank, for any number of ranks and any split.

#include <fusekit/config.hpp>
#include <fusekit/detail/reduce/tree.hpp>
#include <fusekit/error.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace distributed {

/// One rank's part of the data: global indices [offset, offset + size).
struct shard {
  std::int64_t offset = 0;
  std::int64_t size = 0;
};

/// Ranks in the order of their shards' offsets (empty shards by rank).
inline std::vector<int> ranks_by_offset(const std::vector<shard>& layout) {
  std::vector<int> order(layout.size());
  std::iota(order.begin(), order.end(), 0);
  auto const offset = [&](int r) { return layout[static_cast<std::size_t>(r)].offset; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return offset(a) < offset(b); });
  return order;
}

/// The total n; throws `invalid_argument` (the same on every rank: every rank
/// checks the same layout) unless the non-empty shards tile [0, n) exactly.
inline std::int64_t check_layout(const char* function, const std::vector<shard>& layout) {
  std::int64_t next = 0;
  for (int r : ranks_by_offset(layout)) {
    const shard& s = layout[static_cast<std::size_t>(r)];
    FUSEKIT_EXPECTS(s.size >= 0, std::string(function) + ": rank " + std::to_string(r) + " has a shard of " +
                                     std::to_string(s.size) + " values");
    if (s.size == 0) { continue; }
    FUSEKIT_EXPECTS(s.offset == next, std::string(function) + ": rank " + std::to_string(r) + "'s shard starts at " +
                                          std::to_string(s.offset) + " but the shards before it end at " +
                                          std::to_string(next) +
                                          "; the shards must tile [0, n) without gaps or overlaps");
    next += s.size;
  }
  return next;
}

/// The layout from every rank's (offset, size), gathered in rank order; an
/// offset of −1 means "after the lower ranks' shards".
/// Throws `invalid_argument` naming the rank (the same on every rank: each
/// checks the same numbers) for an offset below −1, and for a shard whose end
/// passes INT64_MAX.
inline std::vector<shard> layout_from(const std::string& function, const std::vector<std::int64_t>& offset_size_pairs) {
  std::vector<shard> layout(offset_size_pairs.size() / 2);
  std::int64_t next = 0;
  for (std::size_t r = 0; r < layout.size(); ++r) {
    std::int64_t const offset = offset_size_pairs[2 * r], size = offset_size_pairs[2 * r + 1];
    std::string const rank = function + ": rank " + std::to_string(r);
    FUSEKIT_EXPECTS(offset >= -1, rank + "'s offset is " + std::to_string(offset) +
                                      "; it must be -1 (after the lower ranks' shards) or a global index >= 0");
    layout[r] = {offset >= 0 ? offset : next, size};
    FUSEKIT_EXPECTS(!__builtin_add_overflow(layout[r].offset, size, &next),
                    rank + "'s shard of " + std::to_string(size) + " values at " + std::to_string(layout[r].offset) +
                        " ends past 2^63 - 1");
  }
  return layout;
}

/// K in all, from every rank's (K, L, N) of a fit, gathered in rank order.
/// Throws `invalid_argument` (the same on every rank: each checks the same
/// numbers) unless every rank has the same L and N, and some rank has a row.
inline std::int64_t rows_in_all(const std::string& function, const std::vector<std::int64_t>& shapes) {
  std::int64_t K = 0;
  for (std::size_t r = 0; 3 * r < shapes.size(); ++r) {
    std::int64_t const L = shapes[3 * r + 1], N = shapes[3 * r + 2];
    K += shapes[3 * r];
    FUSEKIT_EXPECTS(L == shapes[1] && N == shapes[2],
                    function + ": rank " + std::to_string(r) + " has L = " + std::to_string(L) +
                        ", N = " + std::to_string(N) + " but rank 0 has L = " + std::to_string(shapes[1]) +
                        ", N = " + std::to_string(shapes[2]) + "; every rank needs the same");
  }
  FUSEKIT_EXPECTS(K > 0, function + ": no rank has a row of X; K must be at least 1");
  return K;
}

/// What one rank sends, receives and sums (see the file comment).
struct tree_exchange {
  std::int64_t n = 0;           ///< values in all shards
  std::int64_t first_tile = 0;  ///< tiles [first_tile, end_tile) are this rank's
  std::int64_t end_tile = 0;
  std::int64_t head = 0;                  ///< leading values this rank sends away
  int head_owner = -1;                    ///< the rank they go to (−1: none)
  std::vector<std::int64_t> recv_counts;  ///< values received from each rank (its head)
  std::vector<int> recv_order;            ///< the senders, by offset: the order of the tail
  std::int64_t tail = 0;                  ///< values received in all
};

/// The rank whose shard holds global index i (i < n).
inline int owner_of(const std::vector<shard>& layout, std::int64_t i) {
  for (std::size_t r = 0; r < layout.size(); ++r) {
    if (layout[r].size > 0 && layout[r].offset <= i && i < layout[r].offset + layout[r].size) {
      return static_cast<int>(r);
    }
  }
  return -1;
}

/// Rank `rank`'s part of the exchange, for a layout that check_layout accepted.
inline tree_exchange plan_tree_exchange(const std::vector<shard>& layout, int rank) {
  tree_exchange x;
  for (const shard& s : layout) { x.n += s.size; }
  x.recv_counts.assign(layout.size(), 0);
  // Every rank's head and its owner; this rank receives the heads it owns.
  for (std::size_t r = 0; r < layout.size(); ++r) {
    const shard& s = layout[r];
    if (s.size == 0) { continue; }
    std::int64_t const boundary = (s.offset + tree_tile - 1) / tree_tile * tree_tile;
    std::int64_t const head = std::min(s.size, boundary - s.offset);
    if (head == 0) { continue; }
    int const owner = owner_of(layout, s.offset / tree_tile * tree_tile);
    if (static_cast<int>(r) == rank) {
      x.head = head;
      x.head_owner = owner;
    }
    if (owner == rank) { x.recv_counts[r] = head; }
  }
  for (int r : ranks_by_offset(layout)) {
    if (x.recv_counts[static_cast<std::size_t>(r)] > 0) {
      x.recv_order.push_back(r);
      x.tail += x.recv_counts[static_cast<std::size_t>(r)];
    }
  }
  const shard& me = layout[static_cast<std::size_t>(rank)];
  if (me.size > 0) {
    x.first_tile = (me.offset + tree_tile - 1) / tree_tile;
    x.end_tile = (me.offset + me.size + tree_tile - 1) / tree_tile;
    if (x.end_tile < x.first_tile) { x.end_tile = x.first_tile; }
  }
  return x;
}

/// Global index i of this rank's tiles: its own values, then the tail.
template <class Acc, class Src>
struct stitched_source {
  Src local;  ///< local(i − offset) for this rank's values
  std::int64_t offset;
  std::int64_t size;
  const Acc* tail;  ///< the values after this rank's last one, to its last tile's end
  FUSEKIT_HD FUSEKIT_FORCEINLINE Acc operator()(std::int64_t i) const {
    std::int64_t const j = i - offset;
    return j < size ? local(j) : tail[j - size];
  }
};

/// src(i + shift): a source seen from a later start (a rank's first tile).
template <class Src>
struct shifted_source {
  Src inner;
  std::int64_t shift;
  FUSEKIT_HD FUSEKIT_FORCEINLINE auto operator()(std::int64_t i) const { return inner(i + shift); }
};

}  // namespace distributed
}  // namespace detail
}  // namespace fusekit
