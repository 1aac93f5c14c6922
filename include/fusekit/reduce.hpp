// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions on the CPU, `fusekit::cpu` (any C++17 compiler): the calls,
/// contracts, algorithms and error bounds are in reduce_api.hpp, and those of
/// the sums per segment and per row in segmented_api.hpp; this header adds the
/// CPU's backends (detail/reduce/cpu.hpp, detail/reduce/cpu_segmented.hpp).
/// The GPU's is in reduce.cuh; include both to call both.
///
///     float s = fusekit::sum(fusekit::cpu{}, h_in);   // deterministic, the same bits as the GPU's

#include <fusekit/detail/reduce/cpu.hpp>
#include <fusekit/detail/reduce/cpu_segmented.hpp>
#include <fusekit/reduce_api.hpp>
#include <fusekit/segmented_api.hpp>
