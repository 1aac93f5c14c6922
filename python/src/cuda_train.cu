// SPDX-License-Identifier: Apache-2.0
// The package's trainer on fusekit::cuda (calls.hpp; cuBLAS for large
// problems). fit returns a report, so it synchronizes the stream.
#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include "calls.hpp"

namespace fusekit_python {
FUSEKIT_PYTHON_TRAIN(fusekit::cuda);
}  // namespace fusekit_python
