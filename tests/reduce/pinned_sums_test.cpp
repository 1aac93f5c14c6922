// SPDX-License-Identifier: Apache-2.0
// The pinned bits of the deterministic CPU sums (tests/common/pinned_sums.hpp)
// under the flags users choose that the larger test files are not built with:
// -march=native, -march=native -ffast-math and -O1 (CMakeLists.txt builds this
// file once per set).
#include <fusekit/fusekit.hpp>

#include "common/pinned_sums.hpp"

#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

namespace {

TEST(PinnedSums, PinnedBitsUnderTheseFlags) {
  std::vector<std::string> const got = fusekit::test::pinned::results();
  ASSERT_EQ(got.size(), std::size(fusekit::test::pinned::recorded));
  for (std::size_t k = 0; k < got.size(); ++k) { EXPECT_EQ(got[k], fusekit::test::pinned::recorded[k]); }
}

}  // namespace
