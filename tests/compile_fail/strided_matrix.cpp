// SPDX-License-Identifier: Apache-2.0
// Must not compile: fusekit reads matrices as row-major and contiguous, so a
// strided view (here every other column of a 3 x 4 array) is rejected with a
// message, rather than read as if it were contiguous.
#include <fusekit/fusekit.hpp>

#include <cuda/std/array>
#include <cstdint>

void fit_a_strided_view() {
  using extents = ::cuda::std::dextents<std::int64_t, 2>;
  static float x[12], y[6], w[4];
  ::cuda::std::layout_stride::mapping<extents> const every_other_column(extents(3, 2),
                                                                        ::cuda::std::array<std::int64_t, 2>{4, 2});
  ::cuda::std::mdspan<const float, extents, ::cuda::std::layout_stride> const X(x, every_other_column);
  fusekit::fit(fusekit::cpu{}, X, fusekit::matrix<const float>(y, 3, 2), fusekit::matrix<float>(w, 2, 2));
}
