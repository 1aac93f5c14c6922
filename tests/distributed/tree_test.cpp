// SPDX-License-Identifier: Apache-2.0
// The distributed deterministic sum (detail/distributed/tree.hpp) with the
// ranks simulated in one process: for random rank counts and splits (empty
// shards, shards of one value, shards inside one tile, shards given in any
// rank order), moving the heads as planned, summing each rank's tiles and
// finishing the tree over all tile sums gives the single-process sum's bits.
#include <fusekit/detail/distributed/cpu.hpp>
#include <fusekit/fusekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using fusekit::detail::shard;

// Random shard sizes summing to n, some empty, some of one value, in a random rank order.
std::vector<shard> random_layout(std::int64_t n, int ranks, std::mt19937& rng) {
  std::vector<std::int64_t> cuts{0, n};
  for (int r = 1; r < ranks; ++r) {
    switch (rng() % 4) {
      case 0:
        cuts.push_back(cuts[rng() % cuts.size()]);
        break;  // an empty shard
      case 1:
        cuts.push_back(std::min<std::int64_t>(n, cuts[rng() % cuts.size()] + 1));
        break;  // one value
      default:
        cuts.push_back(n > 0 ? static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1)) : 0);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<shard> pieces;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) { pieces.push_back({cuts[k], cuts[k + 1] - cuts[k]}); }
  std::shuffle(pieces.begin(), pieces.end(), rng);  // rank r holds any piece
  return pieces;
}

// The distributed algorithm, every rank in turn, data moved by hand.
template <class Acc, class T>
Acc simulated_sum(const std::vector<T>& data, const std::vector<shard>& layout) {
  fusekit::cpu const policy{1};
  std::int64_t const n = fusekit::detail::check_layout("simulated", layout);
  int const ranks = static_cast<int>(layout.size());
  std::vector<fusekit::detail::tree_exchange> plans;
  for (int r = 0; r < ranks; ++r) { plans.push_back(fusekit::detail::plan_tree_exchange(layout, r)); }
  // Heads to their owners, tails assembled in the senders' offset order.
  std::vector<std::vector<Acc>> tails(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    for (int from : plans[static_cast<std::size_t>(r)].recv_order) {
      const shard& s = layout[static_cast<std::size_t>(from)];
      const auto& sender = plans[static_cast<std::size_t>(from)];
      EXPECT_EQ(sender.head_owner, r);
      EXPECT_EQ(sender.head, plans[static_cast<std::size_t>(r)].recv_counts[static_cast<std::size_t>(from)]);
      for (std::int64_t i = 0; i < sender.head; ++i) {
        tails[static_cast<std::size_t>(r)].push_back(static_cast<Acc>(data[static_cast<std::size_t>(s.offset + i)]));
      }
    }
  }
  // Each rank's tiles; every tile of the level exactly once.
  std::vector<Acc> level(static_cast<std::size_t>(fusekit::detail::tree_level_size(n)));
  std::vector<std::int64_t> covered(level.size(), 0);
  for (int r = 0; r < ranks; ++r) {
    const shard& me = layout[static_cast<std::size_t>(r)];
    const auto& x = plans[static_cast<std::size_t>(r)];
    EXPECT_EQ(x.tail, static_cast<std::int64_t>(tails[static_cast<std::size_t>(r)].size()));
    fusekit::detail::array_source<Acc, T> const local{data.data() + me.offset};
    auto const tiles = fusekit::detail::owned_tile_results<Acc>(
        policy, local, me, tails[static_cast<std::size_t>(r)].data(), x, fusekit::plus{});
    for (std::int64_t t = x.first_tile; t < x.end_tile; ++t) {
      level[static_cast<std::size_t>(t)] = tiles[static_cast<std::size_t>(t - x.first_tile)];
      ++covered[static_cast<std::size_t>(t)];
    }
  }
  for (std::int64_t c : covered) { EXPECT_EQ(c, 1); }
  if (n == 0) { return Acc(0); }
  return fusekit::plus{}(Acc(0), fusekit::detail::cpu_tree_upper(policy, level, fusekit::plus{}));
}

template <class T>
std::vector<T> random_values(std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) { x = static_cast<T>(u(rng) * (rng() % 7 == 0 ? 1e6 : 1.0)); }  // mixed scales: order shows
  return v;
}

TEST(DistributedTree, AnySplitGivesTheSingleProcessBits) {
  std::mt19937 rng(99);
  std::int64_t const tile = fusekit::detail::tree_tile;
  for (int trial = 0; trial < 300; ++trial) {
    int const ranks = 1 + static_cast<int>(rng() % 7);
    auto const random_n = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(5 * tile + 40));
    std::int64_t const n = trial < 40 ? trial : random_n;
    auto const data = random_values<float>(n, rng);
    auto const layout = random_layout(n, ranks, rng);
    float const expected = fusekit::sum(fusekit::cpu{1}, data, fusekit::reduce_algorithm::deterministic);
    float const got = simulated_sum<float>(data, layout);
    ASSERT_EQ(std::memcmp(&got, &expected, sizeof got), 0) << "n " << n << ", ranks " << ranks << ", trial " << trial;
  }
}

TEST(DistributedTree, ShardsOnTileBoundariesAndInsideOneTile) {
  std::mt19937 rng(7);
  std::int64_t const tile = fusekit::detail::tree_tile;
  auto const data = random_values<double>(3 * tile + 5, rng);
  double const expected = fusekit::sum(fusekit::cpu{}, data, fusekit::reduce_algorithm::deterministic);
  std::vector<std::vector<shard>> layouts = {
      {{0, tile}, {tile, tile}, {2 * tile, tile + 5}},        // on the boundaries
      {{0, 1}, {1, 1}, {2, tile}, {tile + 2, 2 * tile + 3}},  // one value each, then across
      {{0, 10}, {10, 20}, {30, 40}, {70, 3 * tile - 65}},     // three inside the first tile
      {{2 * tile, tile + 5}, {0, 0}, {0, 2 * tile}},          // any rank order, an empty shard
  };
  for (const auto& layout : layouts) {
    double const got = simulated_sum<double>(data, layout);
    EXPECT_EQ(std::memcmp(&got, &expected, sizeof got), 0);
  }
}

TEST(DistributedTree, LayoutsWithGapsOrOverlapsAreRejected) {
  EXPECT_THROW(fusekit::detail::check_layout("f", {{0, 10}, {11, 5}}), fusekit::invalid_argument);
  EXPECT_THROW(fusekit::detail::check_layout("f", {{0, 10}, {9, 5}}), fusekit::invalid_argument);
  EXPECT_THROW(fusekit::detail::check_layout("f", {{1, 10}}), fusekit::invalid_argument);
  EXPECT_THROW(fusekit::detail::check_layout("f", {{0, -1}}), fusekit::invalid_argument);
  EXPECT_EQ(fusekit::detail::check_layout("f", {{5, 5}, {0, 0}, {0, 5}}), 10);
}

// owner_of(layout, i): the rank whose shard [offset, offset + size) holds i,
// −1 past every shard; an empty shard owns nothing. On the layout of a tile,
// 5 values, then two tiles, and on random layouts against a plain search.
TEST(DistributedTree, OwnerOfIsTheRankWhoseHalfOpenShardHoldsTheIndex) {
  using fusekit::detail::owner_of;
  std::int64_t const tile = fusekit::detail::tree_tile;
  std::vector<shard> const layout = {{0, tile}, {tile, 5}, {tile + 5, 2 * tile}};
  EXPECT_EQ(owner_of(layout, 0), 0);
  EXPECT_EQ(owner_of(layout, tile - 1), 0);
  EXPECT_EQ(owner_of(layout, tile), 1);
  EXPECT_EQ(owner_of(layout, tile + 4), 1);
  EXPECT_EQ(owner_of(layout, tile + 5), 2);
  EXPECT_EQ(owner_of(layout, 3 * tile + 4), 2);
  EXPECT_EQ(owner_of(layout, 3 * tile + 5), -1);
  std::mt19937 rng(31);
  for (int trial = 0; trial < 200; ++trial) {
    std::int64_t const n = 1 + static_cast<std::int64_t>(rng() % (3 * tile));
    auto const random = random_layout(n, 1 + static_cast<int>(rng() % 6), rng);
    for (std::int64_t i = 0; i <= n; i += 1 + static_cast<std::int64_t>(rng() % 97)) {
      int want = -1;
      for (std::size_t r = 0; r < random.size(); ++r) {
        if (random[r].offset <= i && i - random[r].offset < random[r].size) { want = static_cast<int>(r); }
      }
      ASSERT_EQ(owner_of(random, i), want) << "trial " << trial << " index " << i;
    }
  }
}

// rows_in_all(shapes): K summed over the ranks, (K, L, N) per rank; every
// rank needs rank 0's L and N (the NCCL fit relies on this check alone), and
// some rank needs a row.
TEST(DistributedTree, RowsInAllSumsKAndRejectsAnotherLOrN) {
  using fusekit::detail::rows_in_all;
  EXPECT_EQ(rows_in_all("f", {3, 4, 2, 0, 4, 2, 5, 4, 2}), 8);
  auto const rejected = [](const std::vector<std::int64_t>& shapes, const std::string& needle) {
    try {
      (void)rows_in_all("f", shapes);
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  rejected({3, 4, 2, 1, 4, 3}, "rank 1 has L = 4, N = 3 but rank 0 has L = 4, N = 2");
  rejected({3, 4, 2, 1, 4, 2, 2, 5, 2}, "rank 2 has L = 5, N = 2");
  rejected({0, 4, 2, 0, 4, 2}, "no rank has a row of X");
}

}  // namespace
