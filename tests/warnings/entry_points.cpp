// SPDX-License-Identifier: Apache-2.0
// The CPU backend's entry points under g++ alone (see entry_points.hpp).
#include "entry_points.hpp"

void cpu_entry_points(float* f, double* d, std::uint8_t* u8, __half* h, std::int32_t* i32, std::size_t n) {
  fusekit::test::entry_points(fusekit::cpu{}, f, d, u8, h, i32, n);
}
