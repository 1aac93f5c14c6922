// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's parts (layout.a_name_that_says_nothing_fails): a name
/// that says nothing, however the paragraph reads.
