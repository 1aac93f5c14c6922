// SPDX-License-Identifier: Apache-2.0
// One half of an include cycle inside a folder (layout.an_upward_include_fails).
#pragma once
#include <fusekit/detail/core/loop_b.hpp>
