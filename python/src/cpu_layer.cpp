// SPDX-License-Identifier: Apache-2.0
// The package's hidden layer on fusekit::cpu (calls.hpp).
#include "calls.hpp"

namespace fusekit_python {
FUSEKIT_PYTHON_LAYER(fusekit::cpu);
}  // namespace fusekit_python
