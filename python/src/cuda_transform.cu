// SPDX-License-Identifier: Apache-2.0
// The package's compositions (transform) on fusekit::cuda (calls.hpp): one
// kernel on the caller's stream, no synchronization.
#include <fusekit/fusekit.cuh>

#include "calls.hpp"

namespace fusekit_python {
FUSEKIT_PYTHON_TRANSFORM(fusekit::cuda);
}  // namespace fusekit_python
