// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `transform` and the layers with both backends: include from nvcc.
#include <fusekit/detail/elementwise/cuda.cuh>
#include <fusekit/elementwise.hpp>
