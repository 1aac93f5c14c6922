// SPDX-License-Identifier: Apache-2.0
// The package's reductions on fusekit::cuda (calls.hpp): the result stays in
// device memory, on the caller's stream.
#include <fusekit/fusekit.cuh>

#include "calls.hpp"

namespace fusekit_python {
FUSEKIT_PYTHON_REDUCE(fusekit::cuda);
}  // namespace fusekit_python
