// SPDX-License-Identifier: Apache-2.0
// The benches' data cache (bench/common/lazy_cache.hpp): an entry is built once
// and kept; with keep_one, asking for another key destroys the old entry before
// the new one is built, and the entry returned is the live one.
#include "../bench/common/arguments.hpp"
#include "../bench/common/lazy_cache.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

struct tracked {
  static inline int live = 0;
  static inline int peak = 0;
  std::int64_t value;
  explicit tracked(std::int64_t v) : value(v) {
    ++live;
    peak = live > peak ? live : peak;
  }
  ~tracked() { --live; }
  tracked(const tracked&) = delete;
  tracked& operator=(const tracked&) = delete;
};

template <class Cache>
tracked& get(Cache& cache, std::int64_t key, int* built) {
  return cache.get(key, [&] {
    ++*built;
    return std::make_unique<tracked>(key * 10);
  });
}

TEST(BenchLazyCache, KeepOneHoldsOnlyTheLatestEntry) {
  tracked::live = tracked::peak = 0;
  int built = 0;
  {
    fusekit::bench::lazy_cache<std::int64_t, tracked> cache(/*keep_one=*/true);
    tracked& a = get(cache, 1, &built);
    EXPECT_EQ(a.value, 10);
    EXPECT_EQ(&get(cache, 1, &built), &a);  // built once, then found
    EXPECT_EQ(built, 1);
    tracked& b = get(cache, 2, &built);  // the old entry goes first
    EXPECT_EQ(b.value, 20);
    EXPECT_EQ(tracked::live, 1);
    EXPECT_EQ(tracked::peak, 1);  // never two at once
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_EQ(get(cache, 2, &built).value, 20);
    EXPECT_EQ(get(cache, 1, &built).value, 10);  // rebuilt
    EXPECT_EQ(built, 3);
  }
  EXPECT_EQ(tracked::live, 0);
}

TEST(BenchLazyCache, KeepAllBuildsEachKeyOnce) {
  tracked::live = tracked::peak = 0;
  int built = 0;
  fusekit::bench::lazy_cache<std::int64_t, tracked> cache(/*keep_one=*/false);
  tracked& a = get(cache, 1, &built);
  tracked& b = get(cache, 2, &built);
  EXPECT_EQ(&get(cache, 1, &built), &a);
  EXPECT_EQ(&get(cache, 2, &built), &b);
  EXPECT_EQ(built, 2);
  EXPECT_EQ(tracked::live, 2);
}

// A bench's own default min time goes first, so the command line's overrides it.
TEST(BenchArguments, DefaultFlagYieldsToTheCommandLine) {
  using v = std::vector<std::string>;
  using fusekit::bench::with_default_flag;
  EXPECT_EQ(with_default_flag(v{"b"}, "benchmark_min_time", "0.2"), (v{"b", "--benchmark_min_time=0.2"}));
  EXPECT_EQ(with_default_flag(v{"b", "--benchmark_filter=gpu"}, "benchmark_min_time", "0.2"),
            (v{"b", "--benchmark_min_time=0.2", "--benchmark_filter=gpu"}));
  EXPECT_EQ(with_default_flag(v{"b", "--benchmark_min_time=0.05"}, "benchmark_min_time", "0.2"),
            (v{"b", "--benchmark_min_time=0.05"}));
  EXPECT_EQ(with_default_flag(v{"b", "--benchmark_min_time"}, "benchmark_min_time", "0.2"),
            (v{"b", "--benchmark_min_time"}));
  EXPECT_EQ(with_default_flag(v{"b", "--benchmark_min_time_x=1"}, "benchmark_min_time", "0.2"),
            (v{"b", "--benchmark_min_time=0.2", "--benchmark_min_time_x=1"}));
}

}  // namespace
