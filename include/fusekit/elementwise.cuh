// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The elementwise layer on the GPU, `fusekit::cuda` (include from nvcc):
/// `transform` and the layers of elementwise_api.hpp with the GPU's backend,
/// one kernel per call. The CPU's backend is elementwise.hpp's; include both
/// to call both (<fusekit/fusekit.cuh> includes everything).

#include <fusekit/detail/elementwise/cuda.cuh>
#include <fusekit/elementwise_api.hpp>
