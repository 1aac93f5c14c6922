// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `fit` and `predict` with both backends: include from nvcc and link `fusekit::train`.
#include <fusekit/cuda/train.cuh>
#include <fusekit/train.hpp>
