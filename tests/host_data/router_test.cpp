// SPDX-License-Identifier: Apache-2.0
// The memory router (detail/host_data/router.hpp) over views that only say
// where they live: which path a call takes for every mix of memory spaces.
#include <fusekit/detail/host_data/router.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <string>

namespace {

using fusekit::detail::memory_space;
using fusekit::detail::pipeline_view;

// The one memory router of the GPU backends: the device path exactly when
// every input and output is device memory, with the inputs' pointers in order.
TEST(RouteByMemory, DevicePathOnlyWhenEverythingIsDeviceMemory) {
  std::array<std::byte, 3> bytes{};
  auto const view = [&](int k, memory_space s) { return pipeline_view{&bytes[static_cast<std::size_t>(k)], 4, s}; };
  auto const route = [&](memory_space in0, memory_space in1, memory_space out) {
    std::array<pipeline_view, 2> const ins{view(0, in0), view(1, in1)};
    return fusekit::detail::route_by_memory(
        ins, std::array<memory_space, 1>{out},
        [&](const std::array<const std::byte*, 2>& p) {
          EXPECT_EQ(p[0], &bytes[0]);
          EXPECT_EQ(p[1], &bytes[1]);
          return std::string("device");
        },
        [] { return std::string("host"); });
  };
  constexpr memory_space d = memory_space::device, pinned = memory_space::pinned, pageable = memory_space::pageable;
  EXPECT_EQ(route(d, d, d), "device");
  for (memory_space other : {pinned, pageable, memory_space::unknown}) {
    EXPECT_EQ(route(other, d, d), "host");
    EXPECT_EQ(route(d, other, d), "host");
    EXPECT_EQ(route(d, d, other), "host");
  }
  // No outputs (a reduction's result, a fit's W: handled by on_device): the
  // inputs decide; a device path that takes no pointers is called without them.
  std::array<pipeline_view, 1> const one{view(2, d)};
  EXPECT_TRUE(fusekit::detail::route_by_memory(
      one, std::array<memory_space, 0>{}, [] { return true; }, [] { return false; }));
  std::array<pipeline_view, 1> const host{view(2, pinned)};
  EXPECT_FALSE(fusekit::detail::route_by_memory(
      host, std::array<memory_space, 0>{}, [] { return true; }, [] { return false; }));
}

}  // namespace
