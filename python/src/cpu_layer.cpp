// SPDX-License-Identifier: Apache-2.0
// The package's elementwise calls on fusekit::cpu (calls.hpp).
#include "calls.hpp"

namespace fusekit_python {
FUSEKIT_PYTHON_ELEMENTWISE(fusekit::cpu);
}  // namespace fusekit_python
