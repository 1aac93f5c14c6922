// SPDX-License-Identifier: Apache-2.0
// The host-data pipeline's threaded host copy (detail/host_data/host_copy.hpp),
// with the thread count as a parameter, so that its threads run on any
// machine: every byte for every thread count and size, its helpers started
// once, and concurrent callers each with their own bytes.
#include <fusekit/detail/host_data/host_copy.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <thread>
#include <vector>

namespace {

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) { b = static_cast<std::byte>(rng() & 0xff); }
  return v;
}

TEST(HostCopy, EveryThreadCountCopiesEveryByte) {
  std::size_t const mib = std::size_t{1} << 20;
  for (int threads : {0, 1, 2, 3, 4, 7}) {
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, mib - 1, mib, 2 * mib + 1, 3 * mib + 17, 9 * mib + 5}) {
      auto const src = random_bytes(bytes, static_cast<unsigned>(bytes + threads));
      std::vector<std::byte> dst(bytes + 1, std::byte{0x5a});
      fusekit::detail::host_copy(dst.data(), src.data(), bytes, threads);
      ASSERT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << threads << " threads, " << bytes << " bytes";
      ASSERT_EQ(dst[bytes], std::byte{0x5a}) << "wrote past the end";
    }
  }
  // The helpers are started once, as many as the largest copy asked for, and reused.
  std::size_t const started = fusekit::detail::host_copy_pool::instance().threads_started();
  EXPECT_GE(started, 2u);  // the 3-thread copies ran on helpers, even on a machine of 2 processors
  EXPECT_LE(started, 6u);
  auto const src = random_bytes(4 * mib, 1);
  std::vector<std::byte> dst(src.size());
  for (int k = 0; k < 50; ++k) { fusekit::detail::host_copy(dst.data(), src.data(), src.size(), 4); }
  EXPECT_EQ(fusekit::detail::host_copy_pool::instance().threads_started(), started);
  EXPECT_EQ(dst, src);
}

TEST(HostCopy, ConcurrentCallersEachGetTheirBytes) {
  std::size_t const bytes = (std::size_t{5} << 20) + 3;
  std::vector<std::thread> callers;
  std::vector<int> good(4, 0);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      auto const src = random_bytes(bytes, static_cast<unsigned>(100 + c));
      std::vector<std::byte> dst(bytes);
      for (int k = 0; k < 10; ++k) {
        std::fill(dst.begin(), dst.end(), std::byte{0});
        fusekit::detail::host_copy(dst.data(), src.data(), bytes, 3);
        good[static_cast<std::size_t>(c)] += dst == src ? 1 : 0;
      }
    });
  }
  for (auto& t : callers) { t.join(); }
  EXPECT_EQ(good, std::vector<int>(4, 10));
}

}  // namespace
