// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Umbrella header for host compilers (g++ alone): functors, policies, errors
/// and the CPU backend. It needs CCCL's headers; the CUDA toolkit's include
/// directory adds the half types (config.hpp, FUSEKIT_HAS_CUDA_HEADERS).
/// Include `fusekit/fusekit.cuh` from nvcc for the GPU algorithms too. The CPU
/// backend's threads are fusekit's own (threads.hpp sets their default count).

#include <fusekit/config.hpp>
#include <fusekit/elementwise.hpp>
#include <fusekit/error.hpp>
#include <fusekit/functors.hpp>
#include <fusekit/linear_association.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/reduce.hpp>
#include <fusekit/threads.hpp>
#include <fusekit/train.hpp>
