// SPDX-License-Identifier: Apache-2.0
// A detail header that includes a public one: layout.an_upward_include_fails.
#pragma once
#include <fusekit/reduce.hpp>
#include <fusekit/config.hpp>
#include <fusekit/detail/core/numeric.hpp>
