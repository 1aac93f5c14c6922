// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The sum reductions with both backends: include from nvcc.
#include <fusekit/cuda/reduce.cuh>
#include <fusekit/reduce.hpp>
