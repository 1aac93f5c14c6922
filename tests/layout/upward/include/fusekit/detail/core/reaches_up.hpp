// SPDX-License-Identifier: Apache-2.0
// Headers that reach back up (layout.an_upward_include_fails): machinery that
// includes a public algorithm and an algorithm's folder, and one that includes
// a folder beside it on its layer.
#pragma once
#include <fusekit/reduce.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>
