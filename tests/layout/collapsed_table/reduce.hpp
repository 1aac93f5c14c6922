// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// A planted header for layout.a_collapsed_table_fails: its table is the one
/// clang-format once made of reduce.hpp's, a long row reflowed into the lines
/// below it.
///
/// | algorithm      | GPU                                  | CPU (`fusekit::cpu`)                        | run to run |
/// across GPUs and the CPU |
/// |----------------|--------------------------------------|---------------------------------------------|------------|-------------------------|
/// | `naive_atomic` | one atomicAdd per element (the teaching baseline; every add serializes on one address) | one host
/// atomic per element (cuda::atomic_ref) from every thread: the slowest, for the same reason | differs | differs | |
/// | `deterministic`| the tree | the same tree | same | same bits |
