// SPDX-License-Identifier: Apache-2.0
// The package's hidden layer on fusekit::cuda (calls.hpp): one kernel (three
// for the unfused comparison) on the caller's stream, no synchronization.
#include <fusekit/fusekit.cuh>

#include "calls.hpp"

namespace fusekit_python {
FUSEKIT_PYTHON_LAYER(fusekit::cuda);
}  // namespace fusekit_python
