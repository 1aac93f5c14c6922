// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions (layout.a_name_that_says_nothing_fails): a public header
/// well documented, and well named.
