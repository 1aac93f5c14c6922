// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Umbrella header for nvcc: everything in fusekit.hpp plus the GPU
/// algorithms, the trainer's too (train.cuh: `fit` and `predict` with
/// `fusekit::cuda` call cuBLAS, so a program that calls them links
/// `fusekit::train`; one that does not links `fusekit::fusekit` alone).

#include <fusekit/elementwise.cuh>
#include <fusekit/fusekit.hpp>
#include <fusekit/host_data.cuh>
#include <fusekit/reduce.cuh>
#include <fusekit/run_to_run.cuh>
#include <fusekit/train.cuh>
