// SPDX-License-Identifier: Apache-2.0
// The other half of the cycle.
#pragma once
#include <fusekit/detail/core/loop_a.hpp>
