// SPDX-License-Identifier: Apache-2.0
// The package's compositions (transform) on fusekit::cpu (calls.hpp): a TU
// of their own, compiled beside the others.
#include "calls.hpp"

namespace fusekit_python {
FUSEKIT_PYTHON_TRANSFORM(fusekit::cpu);
}  // namespace fusekit_python
