// SPDX-License-Identifier: Apache-2.0
// The floor that stands on the vocabulary above it (layout.an_upward_include_fails).
#pragma once
#include <fusekit/config.hpp>
#include <fusekit/policy.hpp>
