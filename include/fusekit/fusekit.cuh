// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Umbrella header for nvcc: everything in fusekit.hpp plus the GPU algorithms.

#include <fusekit/elementwise.cuh>
#include <fusekit/fusekit.hpp>
#include <fusekit/reduce.cuh>
