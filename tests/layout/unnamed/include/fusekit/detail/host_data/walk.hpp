// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The memory router (layout.a_name_that_says_nothing_fails): a name that
/// hides what the file holds.
