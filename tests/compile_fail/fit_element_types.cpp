// SPDX-License-Identifier: Apache-2.0
// Must not compile: X in double, Y and W in float. The error names X and says
// what the rule is.
#include <fusekit/fusekit.hpp>

fusekit::fit_report mixed(const double* x, const float* y, float* w) {
  return fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(x, 4, 2), fusekit::matrix<const float>(y, 4, 3),
                      fusekit::matrix<float>(w, 3, 2));
}
