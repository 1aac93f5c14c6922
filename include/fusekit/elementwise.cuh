// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The elementwise layer with both backends, `transform` and the layers: include from nvcc.
#include <fusekit/detail/elementwise/cuda.cuh>
#include <fusekit/elementwise.hpp>
