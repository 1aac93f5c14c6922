// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The elementwise layer on the CPU, `fusekit::cpu` (any C++17 compiler):
/// the calls and their contracts are in elementwise_api.hpp; this header adds
/// the CPU's backend (threads and SIMD, detail/elementwise/cpu.hpp). The GPU's
/// is in elementwise.cuh; include both to call both.
///
///     fusekit::transform(fusekit::cpu{}, out, fusekit::tanh_activate{}, in);

#include <fusekit/detail/elementwise/cpu.hpp>
#include <fusekit/elementwise_api.hpp>
